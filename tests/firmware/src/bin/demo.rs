//! Decodes golden messages embedded in flash into stack storage with the
//! typed API, checks the values, reports them as plain text over
//! semihosting, and exits through semihosting: status 0 when every check
//! holds.

#![no_std]
#![no_main]

use kiln_firmware::{entry, exit_failure, exit_success, report, stack};
use kiln_nostd::{from_bytes, from_frame, Directory, Frozen};

/// `struct{id:i64,batch:tensors,}`, everything borrowed from the message.
#[derive(Frozen)]
struct Batch<'a> {
    id: i64,
    batch: Directory<'a>,
}

// The golden messages, written by build.rs from spec/kiln-v2-cases.json.
static IN_STRUCT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cases/kiln-v2-in-struct.bin"));
static FRAMED_IN_STRUCT: &[u8] = include_bytes!(concat!(
    env!("OUT_DIR"),
    "/cases/kiln-x-framed-in-struct.bin"
));

fn check_batch(label: &str, batch: &Batch<'_>, id: i64) -> bool {
    let mut ok = batch.id == id;
    report!(
        "{}: id = {}, {} tensor(s)",
        label,
        batch.id,
        batch.batch.len()
    );
    let Some(tensor) = batch.batch.get(0) else {
        report!("{}: no tensor 0", label);
        return false;
    };
    let mut values = [0f32; 2];
    match tensor.copy_into(&mut values) {
        Ok(count) => {
            report!(
                "{}: tensor 0 dtype {:?} shape {:?} -> {} f32 {:?}",
                label,
                tensor.dtype(),
                tensor.shape(),
                count,
                values
            );
            ok &= count == 2 && values == [1.0, -2.0] && tensor.shape() == [2];
        }
        Err(e) => {
            report!("{}: copy_into: {}", label, e);
            ok = false;
        }
    }
    // Zero-copy view: allowed on this little-endian MCU when the payload is
    // 4-byte aligned in flash, refused (never wrong) otherwise.
    match tensor.as_slice::<f32>() {
        Ok(view) => {
            report!("{}: zero-copy view {:?}", label, view);
            ok &= view == [1.0, -2.0];
        }
        Err(e) => report!("{}: zero-copy view refused: {}", label, e),
    }
    ok
}

#[entry]
fn main() -> ! {
    stack::paint();
    let mut ok = true;

    match from_bytes::<Batch>(IN_STRUCT) {
        Ok(batch) => ok &= check_batch("kiln-v2-in-struct", &batch, 7),
        Err(e) => {
            report!("kiln-v2-in-struct: {}", e);
            ok = false;
        }
    }
    match from_frame::<Batch>(FRAMED_IN_STRUCT) {
        Ok(batch) => ok &= check_batch("kiln-x-framed-in-struct", &batch, -1),
        Err(e) => {
            report!("kiln-x-framed-in-struct: {}", e);
            ok = false;
        }
    }
    // A cut message is an error value, not a panic.
    match from_bytes::<Batch>(&IN_STRUCT[..IN_STRUCT.len() - 1]) {
        Ok(_) => {
            report!("cut message accepted");
            ok = false;
        }
        Err(e) => {
            report!("cut message refused: {}", e);
            ok &= e.code() == Some(kiln_nostd::Code::Eof);
        }
    }

    report!(
        "stack high-water mark: {} of {} bytes",
        stack::high_water(),
        stack::size()
    );
    if ok {
        report!("demo: all checks passed");
        exit_success()
    } else {
        report!("demo: FAILED");
        exit_failure()
    }
}
