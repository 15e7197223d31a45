//! Hostile counts allocate nothing. A counting global allocator watches the
//! decoders; it counts per thread (`support/counting.rs`), so the harness's
//! other threads and other tests cannot change a figure.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/counting.rs"]
mod counting;

use counting::{allocated_by, measure, Counting};
use kiln_nostd::{check, from_bytes, Code, CompiledType, Directory, Frozen, ListView, Options};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Debug, Frozen)]
struct AB<'a> {
    a: i64,
    b: &'a str,
}

fn hostile_list(count: u32) -> Vec<u8> {
    count.to_le_bytes().to_vec()
}

fn hostile_directory(count: u32) -> Vec<u8> {
    let mut block = vec![0u8; 64];
    block[..6].copy_from_slice(b"KLNT\x02\x02");
    block[8..12].copy_from_slice(&count.to_le_bytes());
    block[24..32].copy_from_slice(&(u64::from(count) * 128).to_le_bytes());
    block
}

#[test]
fn hostile_counts_allocate_nothing() {
    let list = hostile_list(16_777_216);
    let directory = hostile_directory(16_777_216);
    let capped = hostile_directory(16_777_217);

    let bytes = allocated_by(|| {
        // Borrowed views and the run-time check: no allocation at all.
        let r = from_bytes::<ListView<AB>>(&list);
        assert_eq!(r.unwrap_err().code(), Some(Code::Eof));
        let r = check("list<struct{a:i64,b:str,}>", &list, Options::BARE);
        assert_eq!(r.unwrap_err().code(), Some(Code::Eof));
        assert_eq!(
            Directory::parse(&directory).unwrap_err().code(),
            Some(Code::Eof)
        );
        assert_eq!(
            Directory::parse(&capped).unwrap_err().code(),
            Some(Code::Limit)
        );
        let r = check("list<tensors>", &list, Options::BARE);
        assert_eq!(r.unwrap_err().code(), Some(Code::Eof));
    });
    assert_eq!(bytes, 0, "views and check allocated {bytes} bytes");

    // Owned containers (alloc feature): the count is refused before any
    // storage is reserved for it.
    #[cfg(feature = "alloc")]
    {
        let bytes = allocated_by(|| {
            let r = from_bytes::<Vec<AB>>(&list);
            assert_eq!(r.unwrap_err().code(), Some(Code::Eof));
            let r = from_bytes::<Vec<u64>>(&hostile_list(u32::MAX));
            assert_eq!(r.unwrap_err().code(), Some(Code::Limit));
        });
        // Only the test's own `hostile_list` vector (4 bytes) is allocated.
        assert!(bytes <= 4, "owned decode allocated {bytes} bytes");
    }

    // Sanity: the allocator really counts.
    let bytes = allocated_by(|| drop(std::hint::black_box(vec![0u8; 1000])));
    assert!(bytes >= 1000);
}

// ---------------------------------------------------------------------------
// Every golden case and the hostile inputs

#[path = "support/cases.rs"]
mod golden_cases;

/// One input: type text, framing and caps, bytes.
struct Input {
    type_text: String,
    options: Options,
    bytes: Vec<u8>,
}

fn inputs() -> Vec<Input> {
    let mut out: Vec<Input> = golden_cases::cases()
        .into_iter()
        .map(|c| Input {
            type_text: c.type_text,
            options: c.options,
            bytes: c.bytes,
        })
        .collect();
    let bare = |type_text: &str, bytes: Vec<u8>| Input {
        type_text: type_text.into(),
        options: Options::BARE,
        bytes,
    };
    // The hostile inputs: 1 KiB of zero-size lists, huge counts with no
    // elements, and the value trees that cost the most per input byte (one
    // Value per byte; a struct and its field name per byte).
    let mut one_kib = 255u32.to_le_bytes().to_vec();
    for _ in 0..255 {
        one_kib.extend_from_slice(&16_777_216u32.to_le_bytes());
    }
    out.push(bare("list<list<struct{}>>", one_kib));
    out.push(bare("list<struct{}>", hostile_list(16_777_216)));
    out.push(bare("list<struct{a:i64,b:str,}>", hostile_list(16_777_216)));
    out.push(bare("list<tensors>", hostile_list(16_777_216)));
    out.push(bare("tensors", hostile_directory(16_777_216)));
    let mut bools = 4096u32.to_le_bytes().to_vec();
    bools.extend(std::iter::repeat_n(1u8, 4096));
    out.push(bare("list<bool>", bools.clone()));
    out.push(bare("list<struct{a:bool,}>", bools.clone()));
    out.push(bare("list<opt<struct{}>>", bools));
    out
}

/// `check`, the walker and `Directory::parse` allocate nothing, except
/// that with the `alloc` feature a directory with names keeps a hash table
/// of its tensor indices for lookups by name (the one a directory whose
/// names are not in order finds repeats in): a power of two of at least
/// twice the tensor count and at least 8, 8 bytes a slot, so at most 32
/// bytes per tensor, a quarter of its 128-byte descriptor, or 64 bytes in
/// all, behind a shared pointer (two counts and the table's vector, 48
/// bytes); names that collide too much sort the indices in a vector
/// instead.
#[test]
fn borrowed_paths_allocate_nothing_for_any_input() {
    for input in inputs() {
        let ty = CompiledType::<256>::parse(&input.type_text).unwrap();
        let (_, allocated) = measure(|| {
            let _ = ty.check(&input.bytes, input.options);
            let _ = ty.walk(&input.bytes, input.options, &mut kiln_nostd::Ignore);
            if input.type_text == "tensors" {
                let _ = Directory::parse_with(&input.bytes, input.options.limits);
                let _ = Directory::parse_trusted(&input.bytes, input.options.limits);
            }
        });
        // Four readers of the block above, each sorting once.
        let len = input.bytes.len() as u64;
        let (peak, total) = if cfg!(feature = "alloc") {
            (len / 4 + 128, 4 * (len / 4 + 128))
        } else {
            (0, 0)
        };
        assert!(
            allocated.peak <= peak && allocated.bytes <= total,
            "{} ({} bytes): {allocated:?}",
            input.type_text,
            input.bytes.len()
        );
    }
}

/// Dynamic values (`decode_value`, then `encode_value` of what it gave):
/// the most bytes live at once, and in all, per input byte.
#[cfg(feature = "alloc")]
#[test]
fn owned_values_allocate_a_small_multiple_of_the_input() {
    // The bounds: per input byte, at most one Value (32 bytes) plus, per
    // struct field visited, the (String, Value) pair and its name; a
    // constant for the boxed type table (TOOL_NODES nodes, 131 KB on a
    // 64-bit host, compiled once to decode and once to encode).
    const PEAK_PER_BYTE: u64 = 128;
    const TOTAL_PER_BYTE: u64 = 192;
    const SLACK: u64 = 2 * (kiln_nostd::TOOL_NODES as u64) * 32 + 32 * 1024;
    let (mut worst_peak, mut worst_total) = (0.0f64, 0.0f64);
    for input in inputs() {
        let len = input.bytes.len() as u64;
        let (decoded, allocated) = measure(|| {
            let value = kiln_nostd::decode_value(&input.type_text, &input.bytes, input.options);
            if let Ok(value) = &value {
                let again = kiln_nostd::encode_value(&input.type_text, value, input.options);
                assert_eq!(again.unwrap(), input.bytes);
            }
            value.is_ok()
        });
        let per = |n: u64| n as f64 / len.max(1) as f64;
        if len >= 1024 {
            worst_peak = worst_peak.max(per(allocated.peak));
            worst_total = worst_total.max(per(allocated.bytes));
        }
        assert!(
            allocated.peak <= PEAK_PER_BYTE * len + SLACK
                && allocated.bytes <= TOTAL_PER_BYTE * len + SLACK,
            "{} ({len} bytes, accepted {decoded}): {allocated:?}",
            input.type_text
        );
    }
    println!(
        "decode_value + encode_value, inputs of 1 KiB and more: peak at most {worst_peak:.1} x \
         the input, {worst_total:.1} x in all"
    );
}
