//! The telemetry record a microcontroller sends: an id, a sensor name, a
//! few readings, optional flags and a small tensor, written into a stack
//! buffer with no allocator and read back on the other side from the same
//! struct. Everything here also compiles for `#![no_std]` firmware (the
//! firmware in `tests/firmware` does the same on a Cortex-M3).
//!
//! ```sh
//! cargo run -p kiln-nostd --features derive --example telemetry
//! ```

use kiln_nostd::heapless;
use kiln_nostd::{framed_len, from_frame, to_frame_slice, Directory, Frozen, PodList, TensorSpec};

/// One record. The same type writes and reads: the schema (and the frame's
/// hash) comes from these field types.
#[derive(Frozen, Debug)]
struct Telemetry<'a> {
    id: u32,
    sensor: heapless::String<16>,
    readings: PodList<'a, f32>,
    flags: Option<u16>,
    /// A 2x3 calibration matrix as a tensor.
    calibration: Directory<'a>,
}

fn main() {
    // --- on the device ---------------------------------------------------
    let readings = [20.5f32, 21.0, 21.25, 20.75];
    let matrix = [1.0f32, 0.0, 0.5, 0.0, 1.0, -0.5];
    let specs = [TensorSpec::from_host(&[2, 3], &matrix).named("cal")];
    // The builder's own length, from running it into a counting sink: what
    // the stack buffer for the block must hold (a firmware fixes its array
    // at this size, or at a larger capacity it checks against).
    let needed = Directory::encoded_len(&specs).expect("a tensor the builder takes");
    let mut storage = [0u8; 512];
    let block = storage
        .get_mut(..needed)
        .expect("the block fits the storage");
    // One byte less is refused with both numbers.
    let short = Directory::build(&specs, &mut [0u8; 512][..needed - 1]).unwrap_err();
    println!("block of {needed} bytes; one byte less: {short}");
    let calibration = Directory::build(&specs, block).expect("the block fits its own length");
    let record = Telemetry {
        id: 7,
        sensor: heapless::String::try_from("probe-1").expect("fits 16 bytes"),
        readings: PodList::from_slice(&readings),
        flags: Some(0b101),
        calibration,
    };
    let mut radio = [0u8; 512];
    let sent = to_frame_slice(&record, &mut radio).expect("the record fits 512 bytes");
    assert_eq!(sent.len(), framed_len(&record).unwrap());
    println!(
        "sent {} bytes for {}",
        sent.len(),
        <Telemetry as Frozen>::SCHEMA
    );

    // --- on the receiver --------------------------------------------------
    let got: Telemetry = from_frame(sent).expect("a valid record");
    let mut scratch = [0f32; 8];
    let values = got.readings.view_or_copy(&mut scratch).unwrap();
    println!(
        "id {} sensor {} readings {values:?} flags {:?}",
        got.id, got.sensor, got.flags
    );
    let cal = got
        .calibration
        .by_name("cal")
        .expect("the calibration tensor");
    let mut cal_values = [0f32; 6];
    let cal_read = cal.view_or_copy(&mut cal_values).unwrap();
    println!("calibration {:?} {cal_read:?}", cal.shape());
    assert_eq!(values, readings);
    assert_eq!(cal_read, matrix);

    // A record for another type is refused before any field is read.
    let err = from_frame::<u32>(sent).unwrap_err();
    println!("read as u32: {err}");
    assert_eq!(err.code(), Some(kiln_nostd::Code::Schema));
}
