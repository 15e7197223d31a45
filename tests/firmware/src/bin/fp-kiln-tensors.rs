//! Footprint: `fp-kiln` plus one `tensors` field (the directory parse) and
//! one `copy_into` of its tensor: what a firmware pays for the arrays.

#![no_std]
#![no_main]

use core::hint::black_box;
use cortex_m_rt::entry;
use kiln_firmware::footprint;
use kiln_nostd::{from_bytes, heapless, Directory, Frozen};

#[derive(Frozen)]
struct Record<'a> {
    id: i64,
    name: &'a str,
    readings: heapless::Vec<f32, 32>,
    flags: Option<u32>,
    batch: Directory<'a>,
}

/// The golden case kiln-v2-f32: one unnamed f32 vector [1.0, -2.0].
const BLOCK: &[u8; 200] = include_bytes!(concat!(env!("OUT_DIR"), "/cases/kiln-v2-f32.bin"));

/// The record's fields, then the block.
static MESSAGE: [u8; 234] = {
    let mut out = [0u8; 234];
    let mut i = 0;
    while i < 34 {
        out[i] = footprint::KILN_RECORD[i];
        i += 1;
    }
    while i < 234 {
        out[i] = BLOCK[i - 34];
        i += 1;
    }
    out
};

#[inline(never)]
fn decode(bytes: &[u8]) -> bool {
    match from_bytes::<Record>(bytes) {
        Ok(r) => {
            black_box((r.id, r.name, &r.readings, r.flags));
            let mut values = [0f32; 4];
            let copied = match r.batch.get(0) {
                Some(t) => t.copy_into(&mut values),
                None => return false,
            };
            black_box(&values);
            // Compared as bits: a float compare would link a helper that
            // is the test's, not the directory's.
            copied == Ok(2)
                && values[0].to_bits() == 0x3F80_0000
                && values[1].to_bits() == 0xC000_0000
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
    let ok = decode(black_box(&MESSAGE[..]));
    footprint::finish(ok)
}
