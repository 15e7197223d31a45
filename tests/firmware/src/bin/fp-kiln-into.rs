//! Footprint: Kiln decodes `struct{id:i64,name:str,readings:list<f32>,flags:opt<u32>,}`
//! into storage the firmware already has (`from_bytes_into`), as a firmware
//! that reads every message into the same record does: each field is read
//! where it lies, and the 144-byte record is never moved.

#![no_std]
#![no_main]

use core::hint::black_box;
use cortex_m_rt::entry;
use kiln_firmware::footprint;
use kiln_nostd::{from_bytes_into, heapless, Frozen};

#[derive(Frozen)]
struct Record<'a> {
    id: i64,
    name: &'a str,
    readings: heapless::Vec<f32, 32>,
    flags: Option<u32>,
}

#[inline(never)]
fn decode<'a>(bytes: &'a [u8], record: &mut Record<'a>) -> bool {
    match from_bytes_into(bytes, record) {
        Ok(()) => {
            black_box((record.id, record.name, &record.readings, record.flags));
            record.id == 7 && record.readings.len() == 2
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
    let mut record = Record {
        id: 0,
        name: "",
        readings: heapless::Vec::new(),
        flags: None,
    };
    let ok = decode(black_box(footprint::kiln_record()), &mut record);
    footprint::finish(ok)
}
