//! Footprint: postcard decodes the struct of `fp-kiln`, the same Rust
//! types (serde's derive), from its own encoding of the same values.

#![no_std]
#![no_main]

use core::hint::black_box;
use cortex_m_rt::entry;
use kiln_firmware::footprint;

#[derive(serde::Deserialize)]
struct Record<'a> {
    id: i64,
    name: &'a str,
    readings: heapless::Vec<f32, 32>,
    flags: Option<u32>,
}

#[inline(never)]
fn decode(bytes: &[u8]) -> bool {
    match postcard::from_bytes::<Record>(bytes) {
        Ok(r) => {
            black_box((r.id, r.name, &r.readings, r.flags));
            r.id == 7 && r.readings.len() == 2
        }
        Err(e) => {
            black_box(e);
            false
        }
    }
}

#[entry]
fn main() -> ! {
    footprint::start();
    let ok = decode(black_box(footprint::POSTCARD_RECORD.split_at(18).0));
    footprint::finish(ok)
}
