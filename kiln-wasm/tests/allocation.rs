#![cfg(not(target_arch = "wasm32"))]
//! What `open_read_at` (under every `KilnFile.open` from JavaScript)
//! allocates: the checker's scratch (the record image and a head: for a
//! small file, its length and a constant), the compiled type table, and
//! the facts of every tensor. Measured with a per-thread counting allocator on every
//! golden case and the hostile inputs.

#[path = "../../kiln-nostd/tests/support/counting.rs"]
mod counting;

use counting::{measure, Counting};
use kiln_nostd::inspect::open_read_at;
use kiln_nostd::{Framing, Limits};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

#[test]
fn open_allocates_a_small_multiple_of_the_file() {
    // Per file byte: the scratch (1), the image (1) and the value tree: for
    // `list<struct{a:bool,}>` one struct per byte, each with its field
    // name as a `String` (about 266 bytes per input byte, the worst case
    // here); a constant for the boxed type table (TOOL_NODES nodes, about
    // 131 KB on a 64-bit host) and the facts' vectors.
    const PEAK_PER_BYTE: u64 = 320;
    const TOTAL_PER_BYTE: u64 = 400;
    const SLACK: u64 = (kiln_nostd::TOOL_NODES as u64) * 32 + 96 * 1024;
    let json: Vec<serde_json::Value> =
        serde_json::from_str(include_str!("../../spec/kiln-v2-cases.json")).unwrap();
    let mut inputs: Vec<(String, bool, Limits, Vec<u8>)> = json
        .iter()
        .map(|c| {
            let limits = c
                .get("cap")
                .and_then(|c| c.as_u64())
                .map_or(Limits::DEFAULT, |cap| Limits::uniform_checked(cap).unwrap());
            (
                c["type"].as_str().unwrap().to_string(),
                c["framed"].as_bool().unwrap(),
                limits,
                unhex(c["hex"].as_str().unwrap()),
            )
        })
        .collect();
    let mut one_kib = 255u32.to_le_bytes().to_vec();
    for _ in 0..255 {
        one_kib.extend_from_slice(&16_777_216u32.to_le_bytes());
    }
    inputs.push((
        "list<list<struct{}>>".into(),
        false,
        Limits::DEFAULT,
        one_kib,
    ));
    inputs.push((
        "list<struct{}>".into(),
        false,
        Limits::DEFAULT,
        16_777_216u32.to_le_bytes().to_vec(),
    ));
    let mut bools = 4096u32.to_le_bytes().to_vec();
    bools.extend(std::iter::repeat_n(1u8, 4096));
    inputs.push(("list<bool>".into(), false, Limits::DEFAULT, bools.clone()));
    inputs.push((
        "list<struct{a:bool,}>".into(),
        false,
        Limits::DEFAULT,
        bools,
    ));
    let mut worst = (0.0f64, 0.0f64);
    for (type_text, framed, limits, bytes) in &inputs {
        let framing = if *framed {
            Framing::Framed
        } else {
            Framing::Bare
        };
        let len = bytes.len() as u64;
        let framed = Some(framing == Framing::Framed);
        let (result, allocated) = measure(|| {
            open_read_at("f", &mut &bytes[..], Some(type_text), framed, Some(*limits)).is_ok()
        });
        if len >= 1024 {
            worst.0 = worst.0.max(allocated.peak as f64 / len as f64);
            worst.1 = worst.1.max(allocated.bytes as f64 / len as f64);
        }
        assert!(
            allocated.peak <= PEAK_PER_BYTE * len + SLACK
                && allocated.bytes <= TOTAL_PER_BYTE * len + SLACK,
            "{type_text} ({len} bytes, opened {result}): {allocated:?}"
        );
    }
    println!(
        "kiln-wasm open, inputs of 1 KiB and more: peak at most {:.1} x the input, {:.1} x in all",
        worst.0, worst.1
    );
}
