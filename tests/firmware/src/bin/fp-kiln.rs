//! Footprint: Kiln decodes `struct{id:i64,name:str,readings:list<f32>,flags:opt<u32>,}`
//! into the same Rust struct postcard decodes in `fp-postcard`.

#![no_std]
#![no_main]

use core::hint::black_box;
use cortex_m_rt::entry;
use kiln_firmware::footprint;
use kiln_nostd::{from_bytes, heapless, Frozen};

#[derive(Frozen)]
struct Record<'a> {
    id: i64,
    name: &'a str,
    readings: heapless::Vec<f32, 32>,
    flags: Option<u32>,
}

#[inline(never)]
fn decode(bytes: &[u8]) -> bool {
    match from_bytes::<Record>(bytes) {
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
    let ok = decode(black_box(footprint::kiln_record()));
    footprint::finish(ok)
}
