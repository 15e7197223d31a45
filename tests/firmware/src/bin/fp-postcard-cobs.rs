//! Footprint: the record of `fp-postcard` received through postcard's COBS
//! and CRC flavors (the `cobs` crate's in-place decode, then
//! `from_bytes_crc32` with the same CRC-32C as `fp-kiln-envelope`).

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

static CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

/// The first 18 bytes of `footprint::POSTCARD_RECORD`, then their
/// CRC-32C, COBS-encoded and delimited (what `to_slice_crc32` then COBS
/// write).
static FRAME: [u8; 24] = [
    9, 14, 5, 112, 114, 111, 98, 101, 2, 1, 3, 128, 63, 1, 1, 8, 64, 1, 5, 88, 72, 115, 13, 0,
];

#[inline(never)]
fn receive(frame: &[u8], buf: &mut [u8]) -> bool {
    let Some(buf) = buf.get_mut(..frame.len()) else {
        return false;
    };
    buf.copy_from_slice(frame);
    let Ok(len) = cobs::decode_in_place(buf) else {
        return false;
    };
    let message = buf.get(..len).unwrap_or_default();
    match postcard::from_bytes_crc32::<Record>(message, CRC32C.digest()) {
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
    let mut buf = [0u8; 64];
    let ok = receive(black_box(&FRAME), &mut buf);
    footprint::finish(ok)
}
