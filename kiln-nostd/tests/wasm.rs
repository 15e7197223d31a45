//! kiln-nostd compiled to wasm32-unknown-unknown, run in node by
//! wasm-bindgen-test-runner (the `runner` of .cargo/config.toml):
//!
//!     cargo test -p kiln-nostd --target wasm32-unknown-unknown --features derive
//!
//! The runner only runs `#[wasm_bindgen_test]` functions (plain `#[test]`
//! functions are compiled but report "no tests to run!"), and wasm32 has no
//! file system, so the golden cases are embedded with `include_str!`
//! instead of read at run time as tests/golden.rs does.

#![cfg(target_arch = "wasm32")]

use kiln_nostd::{
    check, from_bytes, frozen_struct, order, to_slice, Code, Directory, Frozen, Limits, Refusal,
    TensorSpec, Tensors,
};
use wasm_bindgen_test::wasm_bindgen_test;

const CASES: &str = include_str!("../../spec/kiln-v2-cases.json");

struct Case {
    name: String,
    ty: String,
    framed: bool,
    bytes: Vec<u8>,
    expect: Option<Code>,
    limits: Limits,
}

fn cases() -> Vec<Case> {
    let json: Vec<serde_json::Value> = serde_json::from_str(CASES).expect("golden cases are JSON");
    json.iter()
        .map(|c| {
            let hex = c["hex"].as_str().expect("hex");
            Case {
                name: c["name"].as_str().expect("name").to_owned(),
                ty: c["type"].as_str().expect("type").to_owned(),
                framed: c["framed"].as_bool().expect("framed"),
                bytes: (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit"))
                    .collect(),
                expect: match c["expect"].as_str().expect("expect") {
                    "accept" => None,
                    code => Some(Code::from_name(code).expect("one of the eight codes")),
                },
                limits: c
                    .get("cap")
                    .and_then(|cap| cap.as_u64())
                    .map_or(Limits::DEFAULT, |cap| {
                        Limits::uniform_checked(cap).expect("cap fits")
                    }),
            }
        })
        .collect()
}

#[wasm_bindgen_test]
fn every_golden_case_gives_its_verdict() {
    let cases = cases();
    assert!(cases.len() >= 200, "only {} golden cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let got = check(&case.ty, &case.bytes, case.framed, case.limits).map_err(|e| e.code());
        let want = match case.expect {
            None => Ok(()),
            Some(code) => Err(Some(code)),
        };
        if got != want {
            failures.push(format!("{}: expected {:?}, got {:?}", case.name, want, got));
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

struct Out<'a> {
    id: i64,
    name: &'a str,
    batch: Tensors<'a>,
}
frozen_struct!(write Out<'a> { id: i64, name: &'a str, batch: Tensors<'a> });

#[derive(Frozen)]
struct In<'a> {
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
    let mut buf = [0u8; 1024];
    let message = to_slice(
        &Out {
            id: -7,
            name: "probe",
            batch: Tensors(&specs),
        },
        &mut buf,
    )
    .expect("encode");
    let message: &[u8] = message;
    assert_eq!(
        check(
            "struct{id:i64,name:str,batch:tensors,}",
            message,
            false,
            Limits::DEFAULT
        ),
        Ok(())
    );

    let decoded: In = from_bytes(message).expect("decode");
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
    let err = from_bytes::<In>(&message[..message.len() - 1])
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
