//! `kiln check` agrees with every golden case: verdict, code, exit status.

use std::io::Write;
use std::process::{Command, Stdio};

fn cases() -> Vec<serde_json::Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/kiln-v2-cases.json");
    let text = std::fs::read_to_string(path).expect("golden cases file");
    serde_json::from_str(&text).expect("golden cases JSON")
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn run(args: &[String], input: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
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
        let (status, stdout, stderr) = run(&args, &hex(case["hex"].as_str().unwrap()));
        match case["expect"].as_str().unwrap() {
            "accept" => {
                assert_eq!((status, stdout.as_str()), (0, "ok\n"), "{name}: {stderr}");
            }
            code => {
                assert_eq!(status, 1, "{name}: {stdout}{stderr}");
                let prefix = format!("error: {code}: ");
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
    let (status, _, stderr) = run(&["check".into()], b"");
    assert_eq!(status, 2, "{stderr}");
    let (status, _, _) = run(&["check".into(), "/nonexistent/kiln".into()], b"");
    assert_eq!(status, 2);
    let (status, _, _) = run(
        &["check".into(), "--type".into(), "list<".into(), "-".into()],
        b"",
    );
    assert_eq!(status, 2);
}
