//! `kiln gen` and `kiln type`: the generated modules compile (build.rs
//! writes them from `tests/gen/*.json` with the generator's own code), the
//! `kiln` binary prints exactly those modules, `kiln type` prints each root
//! struct's `SCHEMA` and `HASH`, and values round-trip through the structs,
//! including bytes written by `kiln encode` from JSON.

use kiln_nostd::{from_bytes, to_vec, Frozen, Int};

mod common;
use common::{kiln, Out};

mod reading {
    include!(concat!(env!("OUT_DIR"), "/gen/reading.rs"));
}
mod catalog {
    include!(concat!(env!("OUT_DIR"), "/gen/catalog.rs"));
}

fn kiln_type(schema: &str) -> (String, u64) {
    let Out {
        status,
        stdout: out,
        stderr: err,
    } = kiln(&["type", schema], b"");
    assert_eq!(status, 0, "{err}");
    let text = String::from_utf8(out).unwrap();
    let (ty, hash) = text.trim_end().split_once('\n').unwrap();
    (
        ty.to_string(),
        u64::from_str_radix(hash.trim_start_matches("0x"), 16).unwrap(),
    )
}

#[test]
fn the_binary_prints_the_compiled_modules() {
    for name in ["reading", "catalog"] {
        let source = format!("tests/gen/{name}.json");
        let Out {
            status,
            stdout: out,
            stderr: err,
        } = kiln(&["gen", &source], b"");
        assert_eq!(status, 0, "{err}");
        let compiled =
            std::fs::read_to_string(format!("{}/gen/{name}.rs", env!("OUT_DIR"))).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), compiled, "{name}");
    }
}

#[test]
fn kiln_type_is_the_structs_schema_and_hash() {
    let (ty, hash) = kiln_type("tests/gen/reading.json");
    assert_eq!(ty, reading::Reading::SCHEMA.to_string());
    assert_eq!(hash, reading::Reading::HASH);
    let (ty, hash) = kiln_type("tests/gen/catalog.json");
    assert_eq!(ty, catalog::Catalog::SCHEMA.to_string());
    assert_eq!(hash, catalog::Catalog::HASH);
    assert_eq!(
        reading::Place::SCHEMA.to_string(),
        "struct{lat:f64,lon:f64,label:opt<str>,}"
    );
}

fn sample() -> reading::Reading {
    let place = |lat: f64, label: Option<&str>| reading::Place {
        lat,
        lon: -lat,
        label: label.map(String::from),
    };
    reading::Reading {
        id: -7,
        seq: Int(i64::MAX),
        count: u64::MAX,
        small: -128,
        port: 8080,
        gain: f32::from_bits(0x7fc0_0001),
        value: -0.0,
        ok: true,
        name: "probé".into(),
        raw: vec![0, 255, 7],
        samples: vec![1.0, -2.5],
        r#type: "t".into(),
        place: place(1.5, Some("a")),
        history: vec![place(2.0, None), place(3.0, Some("c"))],
        note: None,
        limits: reading::ReadingLimits { lo: -1.0, hi: 1.0 },
    }
}

#[test]
fn values_round_trip_through_the_generated_structs() {
    let value = sample();
    let bytes = to_vec(&value).unwrap();
    let back: reading::Reading = from_bytes(&bytes).unwrap();
    assert_eq!(to_vec(&back).unwrap(), bytes);
    assert_eq!(back.gain.to_bits(), 0x7fc0_0001);
    assert!(back.value.is_sign_negative());
    assert_eq!(back.history[1].label.as_deref(), Some("c"));

    // The same bytes through the JSON form and back.
    let ty = reading::Reading::SCHEMA.to_string();
    let Out {
        status,
        stdout: json,
        stderr: err,
    } = kiln(&["decode", "--type", &ty, "-"], &bytes);
    assert_eq!(status, 0, "{err}");
    let Out {
        status,
        stdout: again,
        stderr: err,
    } = kiln(&["encode", "--type", &ty, "-"], &json);
    assert_eq!(status, 0, "{err}");
    assert_eq!(again, bytes);
}

#[test]
fn json_written_by_hand_decodes_into_the_generated_structs() {
    let json = br#"{
        "version": 3,
        "labels": {"z": "last", "a": "first"},
        "entries": [
            {"key": "w", "weights": {"b": 0.5, "a": -1.0}, "tags": ["x", "y"]},
            {"key": "v", "weights": {}, "tags": []}
        ],
        "maybe": null
    }"#;
    let ty = catalog::Catalog::SCHEMA.to_string();
    let Out {
        status,
        stdout: bytes,
        stderr: err,
    } = kiln(&["encode", "--type", &ty, "--framed"], json);
    assert_eq!(status, 0, "{err}");
    let value: catalog::Catalog = kiln_nostd::from_frame(&bytes).unwrap();
    assert_eq!(value.version, 3);
    let labels: Vec<(&str, &str)> = value
        .labels
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(labels, [("a", "first"), ("z", "last")]);
    assert_eq!(value.entries[0].weights.get("a"), Some(&-1.0));
    assert_eq!(value.entries[0].tags, ["x", "y"]);
    assert_eq!(value.maybe, None);
    assert_eq!(kiln_nostd::to_frame_vec(&value).unwrap(), bytes);
    // Owned types: a value is built from scratch and written.
    let mut built = value.clone();
    built.labels.insert("m".into(), "middle".into());
    let again: catalog::Catalog =
        kiln_nostd::from_frame(&kiln_nostd::to_frame_vec(&built).unwrap()).unwrap();
    assert_eq!(again, built);
}
