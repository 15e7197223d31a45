//! The no-panic proof. Built with
//! `cargo build --release --no-default-features --features nopanic --bin nopanic`:
//! its panic handler calls a symbol that is defined nowhere, so the link
//! fails if any panic path survives optimization (opt-level "s", fat LTO,
//! one codegen unit, panic = abort). The messages and type texts pass
//! through `black_box`, so the optimizer cannot evaluate the decoder at
//! compile time and must keep every path the bytes could take.
//!
//! It also runs: the exit status is 0 when every verdict is the expected
//! one.

#![no_std]
#![no_main]

use core::hint::black_box;
use kiln_firmware::golden::{by_name, CASES};
use kiln_firmware::{entry, exit_failure, exit_success};
use kiln_nostd::{
    check, from_bytes, from_frame, to_slice, Code, Directory, Frozen, Options, TensorSpec,
};

#[derive(Frozen)]
struct Batch<'a> {
    id: i64,
    batch: Directory<'a>,
}

/// Bytes and type text the optimizer cannot see through.
fn opaque<T: ?Sized>(value: &T) -> &T {
    black_box(value)
}

fn typed(bytes: &[u8], framed: bool) -> Option<(i64, [f32; 2])> {
    let batch: Batch = if framed {
        from_frame(opaque(bytes)).ok()?
    } else {
        from_bytes(opaque(bytes)).ok()?
    };
    let tensor = batch
        .batch
        .by_name(opaque("w"))
        .or_else(|| batch.batch.get(0))?;
    let mut values = [0f32; 2];
    tensor.copy_into(&mut values).ok()?;
    let _ = black_box(tensor.as_slice::<f32>());
    let _ = black_box((
        tensor.dtype(),
        tensor.shape(),
        tensor.name(),
        tensor.quant(),
    ));
    Some((batch.id, values))
}

#[entry]
fn main() -> ! {
    let mut ok = true;

    // check() over every golden case: all types of the golden table,
    // tensors included, framed and not, with and without caps.
    for case in opaque(CASES) {
        let verdict =
            check(opaque(case.ty), opaque(case.bytes), case.options()).map_err(|e| e.code());
        ok &= match case.expect {
            None => verdict.is_ok(),
            Some(code) => verdict == Err(Some(code)),
        };
    }

    // The typed path: struct{id:i64,batch:tensors,} through Directory.
    for (name, framed, id) in [
        ("kiln-v2-in-struct", false, 7),
        ("kiln-x-framed-in-struct", true, -1),
    ] {
        ok &= match by_name(name) {
            Some(case) => typed(case.bytes, framed) == Some((id, [1.0, -2.0])),
            None => false,
        };
    }
    // A directory on its own.
    if let Some(case) = by_name("kiln-v2-f32") {
        ok &= Directory::parse(opaque(case.bytes)).is_ok();
    }
    ok &= check(
        opaque("list<u8>"),
        opaque(&[3, 0, 0, 0, 1, 0][..]),
        Options::BARE,
    )
    .map_err(|e| e.code())
        == Err(Some(Code::Eof));

    // The encode path too: a tensors struct written into a stack buffer,
    // then read back.
    let weights = *opaque(&[1.0f32, -2.0]);
    let shape = *opaque(&[2u64]);
    let specs = [TensorSpec::from_host(&shape, &weights).named(opaque("w"))];
    let mut block = [0u8; 512];
    let mut buf = [0u8; 512];
    let id = *opaque(&7i64);
    ok &= match Directory::build(&specs, black_box(&mut block[..])) {
        Ok(batch) => match to_slice(&Batch { id, batch }, black_box(&mut buf[..])) {
            Ok(message) => typed(message, false) == Some((7, [1.0, -2.0])),
            Err(_) => false,
        },
        Err(_) => false,
    };

    if black_box(ok) {
        exit_success()
    } else {
        exit_failure()
    }
}
