//! Footprint: the record of `fp-kiln` decoded by the streaming decoder
//! (`kiln_nostd::stream::decode_from`: the incremental checker over an
//! `embedded-io` reader, the record decoded from the bytes it kept), as a
//! firmware reads a message from a UART without a buffer for the whole
//! message. Against the plain decode, `fp-kiln`.

#![no_std]
#![no_main]

use core::hint::black_box;
use cortex_m_rt::entry;
use kiln_firmware::footprint;
use kiln_nostd::stream::{decode_from, Discard};
use kiln_nostd::{heapless, CompiledType, Frozen, Options};

#[derive(Frozen)]
struct Record<'a> {
    id: i64,
    name: &'a str,
    readings: heapless::Vec<f32, 32>,
    flags: Option<u32>,
}

/// The record's type, compiled at build time.
const RECORD: CompiledType<'static, 8> = CompiledType::from_schema(&Record::SCHEMA);

#[inline(never)]
fn decode(bytes: &[u8], scratch: &mut [u8]) -> bool {
    let mut record = Record {
        id: 0,
        name: "",
        readings: heapless::Vec::new(),
        flags: None,
    };
    // `&[u8]` is an embedded-io reader; the decoder asks it for each
    // piece the rules read, as it would a UART.
    match decode_from(
        &RECORD,
        Options::BARE,
        bytes,
        scratch,
        &mut Discard,
        &mut record,
    ) {
        Ok(report) => {
            black_box((
                record.id,
                record.name,
                &record.readings,
                record.flags,
                report,
            ));
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
    // The record's bytes are kept for the decode: 34 bytes and a few more.
    let mut scratch = [0u8; 64];
    let ok = decode(black_box(footprint::kiln_record()), &mut scratch);
    footprint::finish(ok)
}
