//! Every golden case through the run-time `check`, and through the typed
//! API wherever the case's type has a Rust type here. Accepted cases must
//! also re-encode to the same bytes (canonical form). The file system is
//! not there on wasm32; `tests/wasm.rs` embeds the cases instead.
#![cfg(not(target_arch = "wasm32"))]

use kiln_nostd::frame::from_frame;
use kiln_nostd::{
    check, from_bytes_with, to_frame_slice, to_slice, Code, Decode, DictView, Directory, Empty,
    Encode, Error, Frozen, Int, Limits, ListView, PodList, Uint,
};

pub struct Case {
    pub name: String,
    pub type_text: String,
    pub framed: bool,
    pub bytes: Vec<u8>,
    pub expect: Option<Code>,
    pub limits: Limits,
}

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/kiln-v2-cases.json");
    let text = std::fs::read_to_string(path).expect("golden cases file");
    let json: Vec<serde_json::Value> = serde_json::from_str(&text).expect("JSON");
    json.iter()
        .map(|c| {
            let hex = c["hex"].as_str().unwrap();
            Case {
                name: c["name"].as_str().unwrap().into(),
                type_text: c["type"].as_str().unwrap().into(),
                framed: c["framed"].as_bool().unwrap(),
                bytes: (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect(),
                expect: match c["expect"].as_str().unwrap() {
                    "accept" => None,
                    code => Some(Code::from_name(code).expect("known code")),
                },
                limits: c
                    .get("cap")
                    .and_then(|c| c.as_u64())
                    .map_or(Limits::DEFAULT, |cap| Limits::uniform_checked(cap).unwrap()),
            }
        })
        .collect()
}

fn verdict(result: Result<(), Error>) -> Result<(), Option<Code>> {
    result.map_err(|e| e.code())
}

const NAMED: [(&str, &str); 46] = [
    ("kiln-v2-empty", "accept"),
    ("kiln-v2-f32", "accept"),
    ("kiln-v2-f32-scalar", "accept"),
    ("kiln-v2-f32-negzero", "accept"),
    ("kiln-v2-f64-nan", "accept"),
    ("kiln-v2-f16-named", "accept"),
    ("kiln-v2-bf16", "accept"),
    ("kiln-v2-i8", "accept"),
    ("kiln-v2-bool", "accept"),
    ("kiln-v2-u4", "accept"),
    ("kiln-v2-f8-pair", "accept"),
    ("kiln-v2-scales", "accept"),
    ("kiln-v2-scales-outer", "accept"),
    ("kiln-v2-opaque", "accept"),
    ("kiln-v2-in-struct", "accept"),
    ("kiln-v2-framed", "accept"),
    ("kiln-pod-list-f32", "accept"),
    ("kiln-v2-bad-magic", "FRAME"),
    ("kiln-v2-bad-version", "FRAME"),
    ("kiln-v2-empty-name-flag", "TYPE"),
    ("kiln-v2-le-clear", "FRAME"),
    ("kiln-v2-unknown-flag", "FRAME"),
    ("kiln-v2-reserved", "FRAME"),
    ("kiln-v2-directory-eof", "EOF"),
    ("kiln-v2-count-cap", "LIMIT"),
    ("kiln-v2-directory-mismatch", "TYPE"),
    ("kiln-v2-shape-overflow", "LIMIT"),
    ("kiln-v2-length-mismatch", "TYPE"),
    ("kiln-v2-overlap", "TYPE"),
    ("kiln-v2-unaligned", "TYPE"),
    ("kiln-v2-nonzero-pad", "TYPE"),
    ("kiln-v2-duplicate-name", "TYPE"),
    ("kiln-v2-bad-utf8", "UTF8"),
    ("kiln-v2-bool-byte", "TYPE"),
    ("kiln-v2-scale-count", "TYPE"),
    ("kiln-v2-opaque-no-layout", "TYPE"),
    ("kiln-v2-trailing", "TRAILING"),
    ("kiln-v2-high-nibble", "TYPE"),
    ("kiln-v2-shape-tail", "TYPE"),
    ("kiln-v2-dtype-zero", "TYPE"),
    ("kiln-v2-dtype-reserved", "TYPE"),
    ("kiln-v2-payload-overflow", "LIMIT"),
    ("kiln-list-struct-hostile", "EOF"),
    ("kiln-list-struct-short", "EOF"),
    ("kiln-list-str-short", "EOF"),
    ("kiln-pod-list-short", "EOF"),
];

#[test]
fn the_46_named_cases_are_present_with_their_outcomes() {
    let cases = cases();
    for (name, expect) in NAMED {
        let case = cases
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        let recorded = case.expect.map_or("accept", Code::as_str);
        assert_eq!(recorded, expect, "{name}");
    }
    assert!(cases.len() >= 46 + 60, "{} cases", cases.len());
}

#[test]
fn run_time_check_agrees_with_every_case() {
    let mut failures = Vec::new();
    for case in cases() {
        let got = verdict(check(
            &case.type_text,
            &case.bytes,
            case.framed,
            case.limits,
        ));
        let want = case.expect.map_or(Ok(()), |code| Err(Some(code)));
        if got != want {
            failures.push(format!("{}: want {want:?}, got {got:?}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------
// Typed API

fn typed<'a, T: Decode<'a> + Encode>(case: &'a Case) -> Result<(), Option<Code>> {
    let bytes = &case.bytes;
    let value: T = if case.framed {
        from_frame(bytes, case.limits)
    } else {
        from_bytes_with(bytes, case.limits)
    }
    .map_err(|e| e.code())?;
    // Accepted: writing the value again gives the same bytes.
    let mut out = vec![0u8; bytes.len() + 64];
    let written = if case.framed {
        to_frame_slice(&value, &mut out)
    } else {
        to_slice(&value, &mut out)
    }
    .unwrap_or_else(|e| panic!("{}: re-encode failed: {e}", case.name));
    assert_eq!(written, &bytes[..], "{}: not canonical", case.name);
    Ok(())
}

#[derive(Frozen)]
struct IdBatch<'a> {
    id: i64,
    batch: Directory<'a>,
}

#[derive(Frozen)]
struct BatchTail<'a> {
    batch: Directory<'a>,
    tail: u32,
}

#[derive(Frozen)]
struct AB<'a> {
    a: i64,
    b: &'a str,
}

#[derive(Frozen)]
struct Inner<'a> {
    b: u8,
    c: Option<&'a str>,
}

#[derive(Frozen)]
struct Outer<'a> {
    a: Inner<'a>,
    d: ListView<'a, bool>,
    e: f64,
}

/// The typed verdict, or `None` when no Rust type here has that type text.
fn typed_verdict(case: &Case) -> Option<Result<(), Option<Code>>> {
    Some(match case.type_text.as_str() {
        "tensors" => typed::<Directory>(case),
        "struct{id:i64,batch:tensors,}" => typed::<IdBatch>(case),
        "struct{batch:tensors,tail:u32,}" => typed::<BatchTail>(case),
        "struct{a:struct{b:u8,c:opt<str>,},d:list<bool>,e:f64,}" => typed::<Outer>(case),
        "struct{}" => typed::<Empty>(case),
        "list<f32>" => typed::<PodList<f32>>(case),
        "list<f64>" => typed::<PodList<f64>>(case),
        "list<i32>" => typed::<PodList<i32>>(case),
        "list<u8>" => typed::<&[u8]>(case),
        "list<str>" => typed::<ListView<&str>>(case),
        "list<struct{a:i64,b:str,}>" => typed::<ListView<AB>>(case),
        "list<struct{}>" => typed::<ListView<Empty>>(case),
        "list<tensors>" => typed::<ListView<Directory>>(case),
        "list<list<u16>>" => typed::<ListView<PodList<u16>>>(case),
        "dict<str,u32>" => typed::<DictView<u32>>(case),
        "dict<str,i64>" => typed::<DictView<i64>>(case),
        "dict<str,tensors>" => typed::<DictView<Directory>>(case),
        "opt<u32>" => typed::<Option<u32>>(case),
        "opt<opt<u8>>" => typed::<Option<Option<u8>>>(case),
        "opt<tensors>" => typed::<Option<Directory>>(case),
        "str" => typed::<&str>(case),
        "bool" => typed::<bool>(case),
        "u8" => typed::<u8>(case),
        "i8" => typed::<i8>(case),
        "u16" => typed::<u16>(case),
        "i16" => typed::<i16>(case),
        "u32" => typed::<u32>(case),
        "i32" => typed::<i32>(case),
        "u64" => typed::<u64>(case),
        "i64" => typed::<i64>(case),
        "int" => typed::<Int>(case),
        "uint" => typed::<Uint>(case),
        "f32" => typed::<f32>(case),
        "f64" => typed::<f64>(case),
        _ => return None,
    })
}

#[test]
fn typed_api_agrees_with_every_case_it_can_express() {
    let mut failures = Vec::new();
    let mut covered = 0;
    let all = cases();
    for case in &all {
        let Some(got) = typed_verdict(case) else {
            // Only the deeply nested DEPTH probes lack a Rust type here.
            assert!(
                case.type_text.matches('<').count() >= 63,
                "no typed test for {}",
                case.type_text
            );
            continue;
        };
        covered += 1;
        let want = case.expect.map_or(Ok(()), |code| Err(Some(code)));
        if got != want {
            failures.push(format!("{}: want {want:?}, got {got:?}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        covered * 10 >= all.len() * 9,
        "typed coverage {covered} of {}",
        all.len()
    );
}

#[test]
fn heapless_storage_agrees_where_capacity_suffices() {
    // Bounded storage gives the same verdicts as borrowed views when its
    // capacity is at least the count on the wire.
    for case in cases() {
        let got = match case.type_text.as_str() {
            "list<i32>" => typed::<heapless::Vec<i32, 64>>(&case),
            "list<str>" => typed::<heapless::Vec<&str, 64>>(&case),
            "str" => typed::<heapless::String<256>>(&case),
            _ => continue,
        };
        let want = case.expect.map_or(Ok(()), |code| Err(Some(code)));
        // A count beyond the storage is LIMIT, where the view would say EOF.
        if got == Err(Some(Code::Limit)) && want == Err(Some(Code::Eof)) {
            continue;
        }
        assert_eq!(got, want, "{}", case.name);
    }
}
