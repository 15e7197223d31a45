//! Prints what the display conversions (`kiln_nostd::widen`, through
//! `element_to_f32`, which the command line and the browser use) give for
//! every bit pattern of each small format, one line each:
//! `FORMAT PATTERN F32BITS` (hex). `tests/oracles/test_widen.py` compares
//! them with the `ml_dtypes` package and a plain reference for i4 and u4.
//!
//! ```sh
//! cargo run -q -p kiln-nostd --example widen_table > table.txt
//! ```
//!
//! Packed formats are read at both nibble positions, and the two must agree.

use std::io::{BufWriter, Write};

use kiln_nostd::widen::element_to_f32;
use kiln_nostd::Dtype;

fn main() {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for (name, dtype) in [("f16", Dtype::F16), ("bf16", Dtype::Bf16)] {
        for bits in 0..=u16::MAX {
            let value = element_to_f32(dtype, &bits.to_le_bytes(), 0).expect("two bytes");
            writeln!(out, "{name} {bits:04x} {:08x}", value.to_bits()).expect("stdout");
        }
    }
    for (name, dtype) in [
        ("f8e4m3", Dtype::F8E4M3),
        ("f8e5m2", Dtype::F8E5M2),
        ("e8m0", Dtype::E8M0),
    ] {
        for byte in 0..=u8::MAX {
            let value = element_to_f32(dtype, &[byte], 0).expect("one byte");
            writeln!(out, "{name} {byte:02x} {:08x}", value.to_bits()).expect("stdout");
        }
    }
    for (name, dtype) in [("e2m1", Dtype::E2M1), ("i4", Dtype::I4), ("u4", Dtype::U4)] {
        for nibble in 0..16u8 {
            let low = element_to_f32(dtype, &[nibble], 0).expect("low nibble");
            let high = element_to_f32(dtype, &[nibble << 4], 1).expect("high nibble");
            assert_eq!(low.to_bits(), high.to_bits(), "{name} {nibble:x}");
            writeln!(out, "{name} {nibble:x} {:08x}", low.to_bits()).expect("stdout");
        }
    }
    out.flush().expect("stdout");
}
