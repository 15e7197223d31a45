//! Hostile counts in a GGUF file allocate nothing sized by the count: a
//! counting global allocator watches the reader. One test in this file, so
//! nothing else allocates meanwhile.

mod common;

#[path = "../../kiln-nostd/tests/support/counting.rs"]
mod counting;

use common::*;
use counting::{allocated_by, Counting};
use kiln_convert::gguf::Gguf;

// Counts per thread: the harness's other threads cannot change a figure.
#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn hostile_gguf_counts_allocate_nothing_sized_by_them() {
    let small = GgufBuilder::new().kv("k", 4, &[0; 4]).build();
    let patched = |at: usize, bytes: &[u8]| {
        let mut v = small.clone();
        v[at..at + bytes.len()].copy_from_slice(bytes);
        v
    };
    let cases = [
        // 2^40 tensors, 2^40 metadata pairs, a key of 2^62 bytes.
        patched(8, &(1u64 << 40).to_le_bytes()),
        patched(16, &(1u64 << 40).to_le_bytes()),
        patched(24, &(1u64 << 62).to_le_bytes()),
        // Arrays of 2^40 u64s, strings and arrays.
        GgufBuilder::new()
            .kv("a", 9, &array(10, 1 << 40, &[]))
            .build(),
        GgufBuilder::new()
            .kv("a", 9, &array(8, 1 << 40, &[]))
            .build(),
        GgufBuilder::new()
            .kv("a", 9, &array(9, 1 << 40, &[]))
            .build(),
        // A tensor with 2^32 - 1 dimensions.
        {
            let mut t = GgufBuilder::new().tensor("t", &[1], 0, &[0; 4]).build();
            t[24 + 9..24 + 13].copy_from_slice(&u32::MAX.to_le_bytes());
            t
        },
    ];
    for (i, input) in cases.iter().enumerate() {
        let mut result = None;
        let bytes = allocated_by(|| result = Some(Gguf::parse(input).map(drop)));
        let err = result.unwrap().unwrap_err();
        // The error message itself is the only allocation of any size.
        assert!(bytes < 4096, "case {i}: {bytes} bytes allocated for {err}");
    }
}

/// Converting a file allocates a small multiple of its length: the output
/// buffer (`BUFFER_LEN`), the metadata as Kiln values, the tensor table.
#[test]
fn conversions_allocate_a_small_multiple_of_the_input() {
    use kiln_convert::{convert, Format, BUFFER_LEN};
    const PER_BYTE: u64 = 8;
    let gguf = sample_gguf();
    let safetensors = sample_safetensors(Some(&[("format", "pt"), ("k", "v")]));
    let mut kiln_of_gguf = Vec::new();
    convert(Format::Gguf, Format::Kiln, &gguf, &mut kiln_of_gguf).unwrap();
    let mut kiln_of_safetensors = Vec::new();
    convert(
        Format::Safetensors,
        Format::Kiln,
        &safetensors,
        &mut kiln_of_safetensors,
    )
    .unwrap();
    for (from, to, input) in [
        (Format::Gguf, Format::Kiln, &gguf),
        (Format::Safetensors, Format::Kiln, &safetensors),
        (Format::Kiln, Format::Gguf, &kiln_of_gguf),
        (Format::Kiln, Format::Safetensors, &kiln_of_safetensors),
    ] {
        let (result, allocated) = counting::measure(|| convert(from, to, input, std::io::sink()));
        result.unwrap();
        let len = input.len() as u64;
        let beyond_buffer = allocated.peak.saturating_sub(BUFFER_LEN as u64);
        println!(
            "{} to {}: {len} bytes in, peak {} bytes ({} beyond the output buffer = {:.1} x the input)",
            from.title(),
            to.title(),
            allocated.peak,
            beyond_buffer,
            beyond_buffer as f64 / len as f64
        );
        assert!(
            beyond_buffer <= PER_BYTE * len + 16 * 1024,
            "{} to {}: {allocated:?} for {len} bytes",
            from.title(),
            to.title()
        );
    }
}
