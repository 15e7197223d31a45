//! Every command on truncated, corrupt and wrong-format input of each kind
//! (Kiln, safetensors, GGUF, JSON, JSON Schema): one `error:` line on
//! stderr (what, and the byte offset), nothing on stdout, exit status 1;
//! never a panic. Usage errors exit 2. And `--help` works for every
//! command and shows an example.

use std::path::{Path, PathBuf};

mod common;
use common::{kiln, Out, ROOT};

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(format!("{ROOT}/samples/{name}")).unwrap()
}

/// A scratch directory of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("kiln-errors-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

/// Exit status 1 and exactly one `error:` line that names a byte offset.
#[track_caller]
fn assert_invalid(out: &Out, what: &str) {
    assert_eq!(
        out.status, 1,
        "{what}: status {}: {}",
        out.status, out.stderr
    );
    assert_one_line(out, what);
    assert!(out.stderr.starts_with("error: "), "{what}: {}", out.stderr);
    assert!(
        out.stderr.contains("byte "),
        "{what}: no offset: {}",
        out.stderr
    );
}

#[track_caller]
fn assert_one_line(out: &Out, what: &str) {
    assert!(!out.stderr.contains("panicked"), "{what}: {}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{what}: {}", out.stderr);
    assert!(out.stdout.is_empty(), "{what}: printed to stdout");
}

/// Accepted, or refused as [`assert_invalid`] says.
#[track_caller]
fn assert_clean(out: &Out, what: &str) {
    assert!(!out.stderr.contains("panicked"), "{what}: {}", out.stderr);
    if out.status != 0 {
        assert_invalid(out, what);
    }
}

/// Cut lengths: all of a small file, else a spread including the edges.
fn cuts(len: usize) -> Vec<usize> {
    let step = (len / 120).max(1);
    let mut cuts: Vec<usize> = (0..len).step_by(step).collect();
    cuts.extend(len.saturating_sub(3)..len);
    cuts
}

const BATCH: &str = "struct{id:i64,name:str,batch:tensors,}";

#[test]
fn kiln_messages_and_directories() {
    let dir = Scratch::new("kiln");
    for (name, ty, framed) in [
        ("batch.kiln", BATCH, true),
        ("shard.kiln", "tensors", false),
    ] {
        let bytes = sample(name);
        let mut flags = vec!["--type", ty];
        if framed {
            flags.push("--framed");
        }
        for cut in cuts(bytes.len()) {
            let path = write(&dir, "cut.kiln", &bytes[..cut]);
            let what = format!("{name} cut at {cut}");
            for command in ["check", "decode"] {
                let mut args = vec![command];
                args.extend(&flags);
                args.push(&path);
                assert_invalid(&kiln(&args, b""), &format!("{command} {what}"));
            }
            assert_invalid(
                &kiln(&["inspect", "--type", ty, &path], b""),
                &format!("inspect {what}"),
            );
            // Without --type: a directory by its magic; a whole frame of
            // a type the tool does not know is invalid input, SCHEMA at the
            // hash, asking for the type (the hash does not say it).
            let out = kiln(&["inspect", &path], b"");
            assert_invalid(&out, &what);
            if framed && cut >= 16 {
                assert!(out.stderr.contains(": SCHEMA: "), "{what}: {}", out.stderr);
                assert!(out.stderr.contains("--type"), "{what}: {}", out.stderr);
                assert!(
                    out.stderr.ends_with(" at byte 8\n"),
                    "{what}: {}",
                    out.stderr
                );
            }
        }
        for at in (0..bytes.len()).step_by(7) {
            let mut bad = bytes.clone();
            bad[at] ^= 0xA5;
            let path = write(&dir, "flip.kiln", &bad);
            let what = format!("{name} flipped at {at}");
            let mut args = vec!["decode"];
            args.extend(&flags);
            args.push(&path);
            assert_clean(&kiln(&args, b""), &what);
            assert_clean(&kiln(&["inspect", "--type", ty, &path], b""), &what);
        }
    }
    // Read as another type: SCHEMA, at the hash's offset.
    let out = kiln(
        &[
            "decode",
            "--framed",
            "--type",
            "struct{id:i64,}",
            &format!("{ROOT}/samples/batch.kiln"),
        ],
        b"",
    );
    assert_invalid(&out, "wrong type");
    assert!(out.stderr.contains("SCHEMA"), "{}", out.stderr);
}

#[test]
fn safetensors_and_gguf_files() {
    let dir = Scratch::new("models");
    for (name, ext) in [("tiny.safetensors", "safetensors"), ("tiny.gguf", "gguf")] {
        let bytes = sample(name);
        let file = format!("in.{ext}");
        let out_kiln = dir
            .join(format!("out-{ext}.kiln"))
            .to_string_lossy()
            .into_owned();
        for cut in cuts(bytes.len()) {
            let path = write(&dir, &file, &bytes[..cut]);
            let what = format!("{name} cut at {cut}");
            let inspect = kiln(&["inspect", &path], b"");
            let convert = kiln(&["convert", "-q", &path, &out_kiln], b"");
            // A GGUF file may end right after its last tensor (the final
            // padding is optional); anything shorter is refused.
            let padding_only = ext == "gguf" && cut >= bytes.len() - 16;
            if padding_only {
                assert_clean(&inspect, &what);
                assert_clean(&convert, &what);
            } else {
                assert_invalid(&inspect, &format!("inspect {what}"));
                assert_invalid(&convert, &format!("convert {what}"));
                assert!(
                    !Path::new(&out_kiln).exists(),
                    "{what}: convert left output"
                );
            }
            // Not Kiln: check and decode say so with a wire code.
            assert_invalid(&kiln(&["check", &path], b""), &format!("check {what}"));
            assert_invalid(&kiln(&["decode", &path], b""), &format!("decode {what}"));
        }
        for at in (0..bytes.len()).step_by(3) {
            let mut bad = bytes.clone();
            bad[at] ^= 0xA5;
            let path = write(&dir, &file, &bad);
            let what = format!("{name} flipped at {at}");
            assert_clean(&kiln(&["inspect", &path], b""), &what);
            let out = kiln(&["convert", "-q", &path, &out_kiln], b"");
            assert_clean(&out, &what);
            let _ = std::fs::remove_file(&out_kiln);
        }
    }
    // Wrong format: a GGUF file named .safetensors is read by its content;
    // bytes of no known format are refused by their extension's reader.
    let path = write(&dir, "gguf.safetensors", &sample("tiny.gguf"));
    assert_eq!(kiln(&["inspect", &path], b"").status, 0);
    let path = write(
        &dir,
        "junk.safetensors",
        b"\x10\0\0\0\0\0\0\0not json at all!",
    );
    assert_invalid(&kiln(&["inspect", &path], b""), "junk safetensors");
    let path = write(&dir, "junk.gguf", b"GGUG\x03\0\0\0");
    assert_invalid(&kiln(&["inspect", &path], b""), "junk gguf");
    let path = write(&dir, "junk.bin", b"hello");
    assert_invalid(&kiln(&["inspect", &path], b""), "junk");
    // A converted model inspects without --type, and its truncation is
    // refused with the wire code.
    let st = write(&dir, "model.safetensors", &sample("tiny.safetensors"));
    let converted = dir.join("model.kiln").to_string_lossy().into_owned();
    assert_eq!(kiln(&["convert", "-q", &st, &converted], b"").status, 0);
    let bytes = std::fs::read(&converted).unwrap();
    assert_eq!(kiln(&["inspect", &converted], b"").status, 0);
    for cut in cuts(bytes.len()).into_iter().filter(|&c| c >= 16) {
        let path = write(&dir, "cut-model.kiln", &bytes[..cut]);
        assert_invalid(
            &kiln(&["inspect", &path], b""),
            &format!("converted cut at {cut}"),
        );
        assert_invalid(
            &kiln(&["decode", &path], b""),
            &format!("decode converted cut at {cut}"),
        );
    }
}

#[test]
fn json_input_of_encode() {
    let ty = "struct{id:i64,tags:dict<str,f32>,raw:list<u8>,batch:tensors,}";
    let good = br#"{"id":"7","tags":{"b":-0.0,"a":"NaN"},"raw":"00ff","batch":[{"name":"w","dtype":"f32","shape":[2],"layout":null,"block_size":0,"quant":null,"hex":"0000803f000000c0"}]}"#;
    let out = kiln(&["encode", "--type", ty], good);
    assert_eq!(out.status, 0, "{}", out.stderr);
    // Every truncation of the JSON is refused, with the byte offset.
    for cut in 0..good.len() {
        let out = kiln(&["encode", "--type", ty], &good[..cut]);
        assert_invalid(&out, &format!("JSON cut at {cut}"));
    }
    let bad: &[(&[u8], &str)] = &[
        (b"\xff\xfe", "not UTF-8"),
        (b"{\"id\":7,", "not JSON"),
        (br#"{"id":"7","tags":{},"raw":"0","batch":[]}"#, "odd hex"),
        (br#"{"id":"x","tags":{},"raw":"","batch":[]}"#, "not an integer"),
        (br#"{"id":9223372036854775808,"tags":{},"raw":"","batch":[]}"#, "unsafe number"),
        (br#"{"id":"9223372036854775808","tags":{},"raw":"","batch":[]}"#, "out of range"),
        (br#"{"id":"7","tags":{"a":1,"a":2},"raw":"","batch":[]}"#, "repeated key"),
        (br#"{"id":"7","tags":{},"raw":"","batch":[],"more":1}"#, "unknown member"),
        (br#"{"id":"7","tags":{"a":1e39},"raw":"","batch":[]}"#, "f32 overflow"),
        (br#"{"id":"7","tags":{},"raw":"","batch":[{"name":"w","dtype":"f32","shape":[3],"layout":null,"block_size":0,"quant":null,"hex":"00"}]}"#, "payload length"),
        (br#"{"id":"7","tags":{},"raw":"","batch":[{"name":"w","dtype":"f32","shape":[2],"layout":null,"block_size":0,"quant":null,"bytes":8,"preview":[1.0,2.0]}]}"#, "preview"),
        (br#"{"id":"7","tags":{},"raw":"","batch":[{"name":"w","dtype":"f99","shape":[],"layout":null,"block_size":0,"quant":null,"hex":""}]}"#, "dtype"),
        (b"[]", "wrong shape"),
    ];
    for (json, what) in bad {
        assert_invalid(&kiln(&["encode", "--type", ty], json), what);
    }
    // A value above the cap: refused, not written.
    let out = kiln(
        &["encode", "--type", "list<u8>", "--cap", "1"],
        br#""0000""#,
    );
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_one_line(&out, "cap");
}

#[test]
fn json_schemas_of_gen_and_type() {
    let dir = Scratch::new("schemas");
    let schema = std::fs::read(format!(
        "{}/tests/gen/reading.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    for cut in (0..schema.len()).step_by(13) {
        let path = write(&dir, "cut.json", &schema[..cut]);
        for command in ["gen", "type"] {
            assert_invalid(
                &kiln(&[command, &path], b""),
                &format!("{command} cut at {cut}"),
            );
        }
    }
    let outside: &[(&str, &str)] = &[
        (
            r##"{"type":"object","properties":{"a":{"type":"string","enum":["x"]}}}"##,
            "#/properties/a/enum",
        ),
        (
            r##"{"type":"object","properties":{"a":{"type":["string","null"]}}}"##,
            "#/properties/a/type",
        ),
        (
            r##"{"type":"object","properties":{"a":{"type":"integer","format":"int128"}}}"##,
            "#/properties/a/format",
        ),
        (
            r##"{"type":"object","properties":{"a":{"type":"string","format":"date-time"}}}"##,
            "#/properties/a/format",
        ),
        (
            r##"{"type":"object","properties":{"a":{"type":"array"}}}"##,
            "#/properties/a",
        ),
        (
            r##"{"type":"object","properties":{"a":{"$ref":"#/definitions/X"}}}"##,
            "#/properties/a/$ref",
        ),
        (
            r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/X"}},"$defs":{"X":{"type":"object","properties":{"x":{"$ref":"#/$defs/X"}}}}}"##,
            "#/$defs/X/properties/x/$ref",
        ),
        (
            r##"{"type":"object","properties":{"a":{"type":"null"}}}"##,
            "#/properties/a/type",
        ),
        (
            r##"{"type":"object","properties":{"a-b":{"type":"string"}}}"##,
            "#/properties/a-b",
        ),
        (
            r##"{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}"##,
            "#/additionalProperties",
        ),
        (
            r##"{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}"##,
            "#/required/0",
        ),
        (r##"{"type":"object","oneOf":[]}"##, "#/oneOf"),
        (r##"[1]"##, "#"),
    ];
    for (doc, pointer) in outside {
        let path = write(&dir, "bad.json", doc.as_bytes());
        for command in ["gen", "type"] {
            let out = kiln(&[command, &path], b"");
            assert_invalid(&out, doc);
            assert!(
                out.stderr.contains(&format!("{pointer}:")),
                "{doc}: {}",
                out.stderr
            );
        }
    }
    // A root that is not an object has a type but no struct to generate.
    let path = write(
        &dir,
        "list.json",
        br#"{"type":"array","items":{"type":"integer","format":"uint8"}}"#,
    );
    let out = kiln(&["type", &path], b"");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().lines().next(),
        Some("list<u8>")
    );
    assert_eq!(kiln(&["gen", &path], b"").status, 1);
}

#[test]
fn usage_errors_exit_2_and_help_has_an_example() {
    let commands = [
        "check", "convert", "inspect", "decode", "encode", "gen", "type",
    ];
    for command in commands {
        let out = kiln(&[command, "--help"], b"");
        assert_eq!(out.status, 0, "{command}");
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(help.contains("usage: kiln"), "{command}: {help}");
        assert!(help.contains("example"), "{command}: {help}");
        let out = kiln(&[command, "--no-such-option"], b"");
        assert_eq!(out.status, 2, "{command}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"));
    }
    for args in [
        &["inspect", "/nonexistent/file.kiln"][..],
        &["decode", "/nonexistent/file.kiln"],
        &["gen", "/nonexistent/schema.json"],
        &["type"],
        &["decode", "--type", "list<", "-"],
        &["encode", "--type", "struct{a:u8,a:u8,}"],
        &["frobnicate"],
        &[],
    ] {
        let out = kiln(args, b"");
        assert_eq!(out.status, 2, "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{args:?}");
    }
    let out = kiln(&["--help"], b"");
    let help = String::from_utf8(out.stdout).unwrap();
    for command in commands {
        assert!(
            help.contains(&format!("  {command} ")),
            "{command} not in: {help}"
        );
    }
}
