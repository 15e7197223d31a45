//! `kiln check` agrees with every golden case: verdict, code, exit status.

mod common;
use common::{hex, kiln, Out};

fn cases() -> Vec<serde_json::Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/kiln-v2-cases.json");
    let text = std::fs::read_to_string(path).expect("golden cases file");
    serde_json::from_str(&text).expect("golden cases JSON")
}

#[test]
fn every_golden_case() {
    let cases = cases();
    assert!(cases.len() >= 46);
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let mut args = vec![
            "check".to_string(),
            "--type".into(),
            case["type"].as_str().unwrap().into(),
        ];
        if case["framed"].as_bool().unwrap() {
            args.push("--framed".into());
        }
        if let Some(cap) = case.get("cap").and_then(|c| c.as_u64()) {
            args.push("--cap".into());
            args.push(cap.to_string());
        }
        args.push("-".into());
        let out = kiln(&args, &hex(case["hex"].as_str().unwrap()));
        let (status, stdout, stderr) = (out.status, out.text(), out.stderr);
        match case["expect"].as_str().unwrap() {
            "accept" => {
                assert_eq!((status, stdout.as_str()), (0, "ok\n"), "{name}: {stderr}");
            }
            code => {
                assert_eq!(status, 1, "{name}: {stdout}{stderr}");
                let prefix = format!("error: standard input: {code}: ");
                assert!(
                    stderr.starts_with(&prefix),
                    "{name}: expected {code}, got {stderr}"
                );
            }
        }
    }
}

#[test]
fn usage_and_io_errors_exit_2() {
    let Out { status, stderr, .. } = kiln(&["check"], b"");
    assert_eq!(status, 2, "{stderr}");
    let Out { status, .. } = kiln(&["check", "/nonexistent/kiln"], b"");
    assert_eq!(status, 2);
    let Out { status, .. } = kiln(&["check", "--type", "list<", "-"], b"");
    assert_eq!(status, 2);
}
