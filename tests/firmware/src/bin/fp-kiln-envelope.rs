//! Footprint: the record of `fp-kiln` received through the link envelope
//! (kiln_nostd::envelope: COBS, CRC-32C): the enveloped bytes fed to the
//! stream decoder as a UART delivers them, then the message decoded.
//! Against `fp-postcard-cobs`.

#![no_std]
#![no_main]

use core::hint::black_box;
use cortex_m_rt::entry;
use kiln_firmware::footprint;
use kiln_nostd::envelope::Decoder;
use kiln_nostd::{from_bytes, heapless, Frozen};

#[derive(Frozen)]
struct Record<'a> {
    id: i64,
    name: &'a str,
    readings: heapless::Vec<f32, 32>,
    flags: Option<u32>,
}

/// `footprint::kiln_record()` sealed: 0x00, COBS(record, CRC-32C), 0x00.
static FRAME: [u8; 41] = [
    0, 2, 7, 1, 1, 1, 1, 1, 1, 2, 5, 1, 1, 7, 112, 114, 111, 98, 101, 2, 1, 1, 1, 1, 3, 128, 63, 1,
    1, 4, 64, 1, 5, 1, 1, 5, 123, 138, 108, 178, 0,
];

#[inline(never)]
fn receive(stream: &[u8], buf: &mut [u8]) -> bool {
    let mut decoder = Decoder::new(buf);
    let mut ok = false;
    // Eight bytes at a time, as a UART's FIFO hands them over.
    for mut chunk in stream.chunks(8) {
        while !chunk.is_empty() {
            let (used, event) = decoder.feed(chunk);
            if let Some(Ok(message)) = event {
                ok |= match from_bytes::<Record>(message) {
                    Ok(r) => {
                        black_box((r.id, r.name, &r.readings, r.flags));
                        r.id == 7 && r.readings.len() == 2
                    }
                    Err(e) => {
                        black_box(e);
                        false
                    }
                };
            }
            chunk = chunk.get(used..).unwrap_or_default();
        }
    }
    ok
}

#[entry]
fn main() -> ! {
    footprint::start();
    let mut buf = [0u8; 64];
    let ok = receive(black_box(&FRAME), &mut buf);
    footprint::finish(ok)
}
