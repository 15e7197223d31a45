//! `kiln decode` then `kiln encode` gives back every accepted golden case's
//! bytes, tensors included, in both layouts; and `--preview` output is
//! refused by `kiln encode` with a reason. (The byte-for-byte comparison
//! with the Python reference's JSON is tests/cli/test_json.py.)

mod common;
use common::{hex, kiln, Out};

fn cases() -> Vec<serde_json::Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/kiln-v2-cases.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_accepted_case_decodes_and_encodes_back() {
    let mut seen = 0;
    for case in cases().iter().filter(|c| c["expect"] == "accept") {
        let name = case["name"].as_str().unwrap();
        let mut args = vec!["--type".to_string(), case["type"].as_str().unwrap().into()];
        if case["framed"].as_bool().unwrap() {
            args.push("--framed".into());
        }
        if let Some(cap) = case.get("cap").and_then(|c| c.as_u64()) {
            args.extend(["--cap".into(), cap.to_string()]);
        }
        let bytes = hex(case["hex"].as_str().unwrap());
        for layout in [None, Some("--compact")] {
            let mut decode = vec!["decode".to_string()];
            decode.extend(layout.map(String::from));
            decode.extend(args.iter().cloned());
            decode.push("-".into());
            let Out {
                status,
                stdout: json,
                stderr: err,
            } = kiln(&decode, &bytes);
            assert_eq!(status, 0, "{name}: {err}");
            let mut encode = vec!["encode".to_string()];
            encode.extend(args.iter().cloned());
            let Out {
                status,
                stdout: back,
                stderr: err,
            } = kiln(&encode, &json);
            assert_eq!(status, 0, "{name}: {err}");
            assert_eq!(back, bytes, "{name}");
        }
        seen += 1;
    }
    assert!(seen >= 17);
}

#[test]
fn a_preview_is_for_reading_only() {
    let case = cases()
        .into_iter()
        .find(|c| c["name"] == "kiln-v2-f32")
        .unwrap();
    let bytes = hex(case["hex"].as_str().unwrap());
    let Out {
        status,
        stdout: json,
        ..
    } = kiln(&["decode", "--preview", "-"], &bytes);
    assert_eq!(status, 0);
    let text = String::from_utf8(json.clone()).unwrap();
    assert!(
        text.contains("\"preview\": [\n      1.0,\n      -2.0\n    ]"),
        "{text}"
    );
    let Out {
        status,
        stderr: err,
        ..
    } = kiln(&["encode"], &json);
    assert_eq!(status, 1);
    assert!(err.contains("--preview"), "{err}");
}
