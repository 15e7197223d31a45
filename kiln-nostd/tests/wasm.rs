//! kiln-nostd compiled to wasm32-unknown-unknown, run in node by
//! wasm-bindgen-test-runner (the `runner` of .cargo/config.toml):
//!
//!     cargo test -p kiln-nostd --target wasm32-unknown-unknown --features derive
//!
//! The runner only runs `#[wasm_bindgen_test]` functions (plain `#[test]`
//! functions are compiled but report "no tests to run!"). The golden cases
//! run on wasm32 from tests/golden.rs, which embeds them; this file holds
//! what only matters in the browser's machine: a typed round trip with
//! tensors and the byte-order facts of a little-endian 32-bit host.

#![cfg(target_arch = "wasm32")]

use kiln_nostd::{
    check, from_bytes, order, to_slice, Code, Directory, Frozen, Options, Refusal, TensorSpec,
};
use wasm_bindgen_test::wasm_bindgen_test;

#[derive(Frozen)]
struct Message<'a> {
    id: i64,
    name: &'a str,
    batch: Directory<'a>,
}

#[wasm_bindgen_test]
fn typed_round_trip_with_tensors() {
    let weights = [1.0f32, -2.0, 0.5];
    let counts = [1u16, 0xfffe];
    let specs = [
        TensorSpec::from_host(&[3], &weights).named("w"),
        TensorSpec::from_host(&[2], &counts).named("n"),
    ];
    let mut block = [0u8; 1024];
    let batch = Directory::build(&specs, &mut block).expect("build");
    let mut buf = [0u8; 1024];
    let message = to_slice(
        &Message {
            id: -7,
            name: "probe",
            batch,
        },
        &mut buf,
    )
    .expect("encode");
    let message: &[u8] = message;
    assert_eq!(
        check(
            "struct{id:i64,name:str,batch:tensors,}",
            message,
            Options::BARE
        ),
        Ok(())
    );

    let decoded: Message = from_bytes(message).expect("decode");
    assert_eq!(decoded.id, -7);
    assert_eq!(decoded.name, "probe");
    let w = decoded.batch.by_name("w").expect("tensor w");
    assert_eq!(w.shape(), &[3]);
    let mut values = [0f32; 3];
    assert_eq!(w.copy_into(&mut values), Ok(3));
    assert_eq!(values, weights);
    // wasm32 is little-endian: the payload bytes are the wire bytes.
    assert_eq!(w.bytes(), &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0x3f]);
    let n = decoded.batch.by_name("n").expect("tensor n");
    let mut out = [0u16; 2];
    assert_eq!(n.copy_into(&mut out), Ok(2));
    assert_eq!(out, counts);

    // A cut message is an error, not a trap.
    let err = from_bytes::<Message>(&message[..message.len() - 1])
        .err()
        .expect("refused");
    assert_eq!(err.code(), Some(Code::Eof));
}

#[wasm_bindgen_test]
fn byte_order_on_a_little_endian_host() {
    assert!(order::HOST_IS_LITTLE_ENDIAN);
    let payload = [0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0];
    let mut out = [0f32; 2];
    assert_eq!(order::copy_into(&payload, &mut out), Ok(2));
    assert_eq!(out, [1.0, -2.0]);
    assert_eq!(order::copy_per_element(&payload, &mut out), Ok(2));
    assert_eq!(out, [1.0, -2.0]);
    let short = order::copy_into::<f32>(&payload[..6], &mut out)
        .err()
        .expect("refused");
    assert_eq!(
        short.kind(),
        kiln_nostd::Kind::Refused(Refusal::WrongElementType)
    );
}
