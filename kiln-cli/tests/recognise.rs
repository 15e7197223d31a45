//! The command line knows a file the way `kiln inspect` does: framing and
//! the conversion message types from the frame (flags still override),
//! type text as a person types it (printed back canonical), whether each
//! payload can be viewed in place, and one shape for every command's error
//! line (docs/cli.md, "Errors").

mod common;
use common::{kiln, Out, ROOT};

const BATCH: &str = "struct{id:i64,name:str,batch:tensors,}";

fn sample(name: &str) -> String {
    format!("{ROOT}/samples/{name}")
}

struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(what: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("kiln-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn converted_files_need_no_flags() {
    let scratch = Scratch::new("recognise");
    for source in ["tiny.gguf", "tiny.safetensors"] {
        let converted = scratch.file(&format!("{source}.kiln"));
        let out = kiln(&["convert", "-q", &sample(source), &converted], b"");
        assert_eq!(out.status, 0, "{}", out.stderr);
        let out = kiln(&["check", &converted], b"");
        assert_eq!(
            (out.status, out.text().as_str()),
            (0, "ok\n"),
            "{source}: {}",
            out.stderr
        );
        let out = kiln(&["decode", "--compact", &converted], b"");
        assert_eq!(out.status, 0, "{source}: {}", out.stderr);
        // Whatever the message's layout, its tensors are in the JSON form.
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(json.to_string().contains("\"hex\":\""), "{json}");
        // A flag still overrides: read bare, the frame is not a directory.
        let out = kiln(&["check", "--bare", &converted], b"");
        assert_eq!(out.status, 1, "{source}: {}", out.stderr);
        assert!(out.stderr.contains(": FRAME: "), "{}", out.stderr);
    }
}

#[test]
fn a_frame_of_another_type_needs_its_type_and_then_needs_no_framed_flag() {
    let file = sample("batch.kiln");
    let out = kiln(&["check", &file], b"");
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(&format!("error: {file}: SCHEMA: ")),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--type"), "{}", out.stderr);
    assert!(out.stderr.contains("0x6ba705042278936a"), "{}", out.stderr);
    // The frame is seen without --framed.
    let out = kiln(&["check", "--type", BATCH, &file], b"");
    assert_eq!(
        (out.status, out.text().as_str()),
        (0, "ok\n"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr, "", "canonical text is not echoed");
}

#[test]
fn type_text_as_typed_is_read_and_printed_back_canonical() {
    let file = sample("batch.kiln");
    let typed = "struct{ id: i64, name: str, batch: tensors }";
    for command in ["check", "decode", "inspect"] {
        let out = kiln(&[command, "--type", typed, &file], b"");
        assert_eq!(out.status, 0, "{command}: {}", out.stderr);
        assert_eq!(
            out.stderr,
            format!("kiln: type text read as {BATCH}\n"),
            "{command}"
        );
    }
    // encode too: the same value back from its JSON.
    let json = kiln(&["decode", "--type", BATCH, &file], b"").stdout;
    let out = kiln(&["encode", "--framed", "--type", typed], &json);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(out.stdout, std::fs::read(&file).unwrap());
    assert_eq!(out.stderr, format!("kiln: type text read as {BATCH}\n"));
    let out = kiln(&["inspect", "--json", "--type", typed, &file], b"");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["kiln"]["type"], BATCH);
    assert_eq!(report["kiln"]["hash"], "0x6ba705042278936a");
    let out = kiln(&["check", "--type", "struct{na me:u8}", &file], b"");
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("a space inside a name"),
        "{}",
        out.stderr
    );
}

#[test]
fn inspect_says_which_payloads_are_viewed_in_place() {
    let out = kiln(
        &["inspect", "--json", "--type", BATCH, &sample("batch.kiln")],
        b"",
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tensors = report["tensors"].as_array().unwrap();
    let little = cfg!(target_endian = "little");
    for t in tensors {
        let offset = t["offset"].as_u64().unwrap();
        let width = match t["dtype"].as_str() {
            Some("f64" | "i64" | "u64") => 8,
            Some("f32" | "i32" | "u32") => 4,
            Some("f16" | "bf16" | "i16" | "u16") => 2,
            _ => 1,
        };
        let expected = if width > 1 && !little {
            Some("big-endian host")
        } else if offset % width != 0 {
            Some("misaligned")
        } else {
            None
        };
        assert_eq!(t["in_place"], expected.is_none(), "{t}");
        assert_eq!(t["not_in_place"].as_str(), expected, "{t}");
    }
    // The sample has both kinds: a misaligned f32 and bytes in place.
    assert!(tensors.iter().any(|t| t["in_place"] == false));
    assert!(tensors.iter().any(|t| t["in_place"] == true));
    let text = kiln(&["inspect", "--type", BATCH, &sample("batch.kiln")], b"").text();
    assert!(text.contains(" view "), "{text}");
    assert!(text.contains("is not a multiple of 4"), "{text}");
}

/// `error: FILE: CODE: detail`, one line, exit status 1, from every
/// command that reads a Kiln value; FILE is `standard input` for `-`.
#[test]
fn every_error_line_has_one_shape() {
    let file = sample("batch-truncated.kiln");
    let bytes = std::fs::read(&file).unwrap();
    let runs: [(&[&str], &[u8], &str); 6] = [
        (&["check", "--type", BATCH, &file], b"", &file),
        (&["decode", "--type", BATCH, &file], b"", &file),
        (&["inspect", "--type", BATCH, &file], b"", &file),
        (&["check", "--type", BATCH, "-"], &bytes, "standard input"),
        (&["decode", "--type", BATCH, "-"], &bytes, "standard input"),
        (&["inspect", "--type", BATCH, "-"], &bytes, "standard input"),
    ];
    for (args, input, name) in runs {
        let Out { status, stderr, .. } = kiln(args, input);
        assert_eq!(status, 1, "{args:?}: {stderr}");
        let line = stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_else(|| panic!("{args:?}: {stderr}"));
        assert_eq!(stderr.lines().filter(|l| l.starts_with("error")).count(), 1);
        let rest = line
            .strip_prefix(&format!("error: {name}: "))
            .unwrap_or_else(|| panic!("{args:?}: {line}"));
        let (code, detail) = rest.split_once(": ").unwrap();
        assert_eq!(code, "EOF", "{args:?}: {line}");
        assert!(detail.contains("at byte "), "{args:?}: {line}");
    }
}
