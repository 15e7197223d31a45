//! The command line's one error contract (docs/cli.md, "Errors"), as one
//! table: every fault class through every command that reads input.
//!
//! - Invalid input: exit status 1 and one line `error: FILE: CODE:
//!   sentence at byte N`, CODE a wire code or the format's own code, N
//!   where the fault is (in the file the line names);
//! - usage and I/O: exit status 2 and one line `kiln: FILE: reason`;
//! - the same fault gives the same status, code and offset from every
//!   command; nothing on standard output; no output file and no temporary
//!   file left behind; no temporary file named.
//!
//! Fixtures are built from samples/ and www/samples/shards/ in a scratch
//! folder. Where a fault's offset is not a fixed place of the format, the
//! expected N is the libraries' own verdict on the same bytes (the core's
//! checker, kiln-convert's readers), so the command line is held to what
//! the readers say.

mod common;
use common::ROOT;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kiln_convert::MessageType;
use kiln_nostd::Options;

/// A scratch folder of one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("kiln-contract-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }

    fn write(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.path(name);
        if let Some(parent) = Path::new(&path).parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// What one row expects.
#[derive(Clone, Debug)]
enum Expect {
    /// Exit status 1, `error: FILE: CODE: sentence[ at byte N]`.
    Invalid {
        file: String,
        code: &'static str,
        at: Option<u64>,
    },
    /// Exit status 2, `kiln: FILE: reason`.
    Io { file: String },
}

/// One command run on one faulty input.
struct Row {
    fault: &'static str,
    args: Vec<String>,
    stdin: Vec<u8>,
    expect: Expect,
    /// Words the line must hold.
    says: Vec<String>,
    /// A file the command would have written.
    output: Option<String>,
    /// Standard output is `/dev/full`.
    stdout_full: bool,
}

impl Row {
    fn new(fault: &'static str, args: &[&str], expect: Expect) -> Row {
        Row {
            fault,
            args: args.iter().map(|a| a.to_string()).collect(),
            stdin: Vec::new(),
            expect,
            says: Vec::new(),
            output: None,
            stdout_full: false,
        }
    }

    fn says(mut self, words: &[&str]) -> Row {
        self.says.extend(words.iter().map(|w| w.to_string()));
        self
    }

    fn stdin(mut self, bytes: &[u8]) -> Row {
        self.stdin = bytes.to_vec();
        self
    }

    fn output(mut self, path: &str) -> Row {
        self.output = Some(path.to_string());
        self
    }

    fn stdout_full(mut self) -> Row {
        self.stdout_full = true;
        self
    }
}

fn invalid(file: &str, code: &'static str, at: Option<u64>) -> Expect {
    Expect::Invalid {
        file: file.to_string(),
        code,
        at,
    }
}

fn io(file: &str) -> Expect {
    Expect::Io {
        file: file.to_string(),
    }
}

/// The offset a line ends with (` at byte N`), if it ends with one.
fn trailing_offset(line: &str) -> Option<u64> {
    let (_, n) = line.rsplit_once(" at byte ")?;
    n.parse().ok()
}

/// The code of an invalid-input line, read the way docs/cli.md's `sed`
/// recipe reads it: after `error: FILE: `, up to the first `: `, with no
/// `:` inside.
fn code_of<'a>(line: &'a str, file: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(&format!("error: {file}: "))?;
    let (code, _) = rest.split_once(": ")?;
    (!code.contains(':')).then_some(code)
}

/// Every file under `dir` whose name says it is a temporary file.
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(temporaries(&path));
        } else if path.to_string_lossy().ends_with(".partial") {
            found.push(path);
        }
    }
    found
}

/// Runs `row` and checks every clause of the contract on what it gave.
fn run(row: &Row, scratch: &Scratch) {
    use std::io::Write;
    let what = format!("{} | kiln {}", row.fault, row.args.join(" "));
    let stdout = if row.stdout_full {
        Stdio::from(std::fs::File::create("/dev/full").unwrap())
    } else {
        Stdio::piped()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(&row.args)
        .env_remove("COLUMNS")
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kiln binary starts");
    let _ = child.stdin.take().expect("piped").write_all(&row.stdin);
    let out = child.wait_with_output().expect("kiln runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let status = out.status.code().unwrap_or(-1);

    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{what}: not one line: {stderr}");
    assert!(stderr.ends_with('\n'), "{what}: {stderr:?}");
    let line = stderr.trim_end_matches('\n');
    assert!(out.stdout.is_empty(), "{what}: wrote to standard output");
    assert!(
        !line.contains(".partial"),
        "{what}: names a temporary file: {line}"
    );
    match &row.expect {
        Expect::Invalid { file, code, at } => {
            assert_eq!(status, 1, "{what}: {line}");
            let prefix = format!("error: {file}: {code}: ");
            assert!(
                line.starts_with(&prefix),
                "{what}: expected {prefix:?}: {line}"
            );
            assert_eq!(code_of(line, file), Some(*code), "{what}: {line}");
            assert_eq!(trailing_offset(line), *at, "{what}: the offset: {line}");
            let sentence = &line[prefix.len()..];
            assert!(
                sentence.len() > " at byte 0".len() + 8,
                "{what}: no sentence: {line}"
            );
        }
        Expect::Io { file } => {
            assert_eq!(status, 2, "{what}: {line}");
            let prefix = format!("kiln: {file}: ");
            assert!(
                line.starts_with(&prefix),
                "{what}: expected {prefix:?}: {line}"
            );
            assert!(line.len() > prefix.len() + 8, "{what}: no reason: {line}");
        }
    }
    for word in &row.says {
        assert!(line.contains(word.as_str()), "{what}: no {word:?}: {line}");
    }
    if let Some(output) = &row.output {
        assert!(!Path::new(output).exists(), "{what}: left {output}");
    }
    let left = temporaries(&scratch.0);
    assert!(left.is_empty(), "{what}: left {left:?}");
}

/// The core's verdict on a converted safetensors file's bytes: the
/// offset every command must report for them.
fn core_offset(bytes: &[u8]) -> u64 {
    let options = Options::FRAMED.with_limits(kiln_convert::LIMITS);
    let e = kiln_nostd::check(MessageType::Safetensors.type_text(), bytes, options)
        .expect_err("the fixture is faulty");
    e.offset().expect("a wire fault has an offset")
}

fn safetensors_offset(bytes: &[u8]) -> u64 {
    let e = kiln_convert::read_safetensors(bytes).expect_err("the fixture is faulty");
    e.offset().expect("the fault has an offset")
}

fn gguf_offset(bytes: &[u8]) -> u64 {
    let e = kiln_convert::gguf::Gguf::parse(bytes).expect_err("the fixture is faulty");
    e.offset().expect("the fault has an offset")
}

/// Converts `source` to `target` with `kiln convert`, for a fixture.
fn convert(source: &str, target: &str) {
    let out = common::kiln(&["convert", "-q", source, target], b"");
    assert_eq!(out.status, 0, "{source}: {}", out.stderr);
}

/// Copies the shard sets of www/samples/shards/ into `dir`.
fn copy_sets(scratch: &Scratch, dir: &str) -> String {
    let from = format!("{ROOT}/www/samples/shards");
    for entry in std::fs::read_dir(&from).unwrap().flatten() {
        if entry.path().is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            scratch.write(
                &format!("{dir}/{name}"),
                &read(&entry.path().to_string_lossy()),
            );
        }
    }
    scratch.path(dir)
}

#[test]
fn every_fault_class_through_every_command() {
    let s = Scratch::new("table");
    let sample = |name: &str| read(&format!("{ROOT}/samples/{name}"));
    let st = s.write("tiny.safetensors", &sample("tiny.safetensors"));
    let gguf = s.write("tiny.gguf", &sample("tiny.gguf"));
    let model = s.path("model.kiln");
    convert(&st, &model);
    let gguf_model = s.path("gguf-model.kiln");
    convert(&gguf, &gguf_model);
    let m = read(&model);
    let out_st = s.path("out.safetensors");
    let out_kiln = s.path("out.kiln");
    let mut rows: Vec<Row> = Vec::new();

    // Kiln input: the same fault, the same code and offset from check,
    // decode, inspect (no flags: the frame names the type) and convert.
    let dir_at = m
        .windows(4)
        .position(|w| w == kiln_nostd::DIRECTORY_MAGIC)
        .expect("a directory") as u64;
    let mut faults: Vec<(&'static str, Vec<u8>, &'static str, u64)> = Vec::new();
    let mut magic = m.clone();
    magic[0] ^= 0xA5;
    faults.push(("bad frame magic", magic, "FRAME", 0));
    let mut hash = m.clone();
    hash[9] ^= 0xA5;
    faults.push(("unknown frame hash", hash, "SCHEMA", 8));
    let cut = m[..m.len() - 10].to_vec();
    let at = core_offset(&cut);
    faults.push(("truncation", cut, "EOF", at));
    let cut = m[..10].to_vec();
    let at = core_offset(&cut);
    faults.push(("truncation inside the frame", cut, "EOF", at));
    let mut rank = m.clone();
    // Descriptor 0 starts 64 bytes into the directory; its rank is byte 2.
    let rank_at = dir_at + 64 + 2;
    rank[rank_at as usize] = 9;
    faults.push(("a rule broken in a directory", rank, "TYPE", rank_at));
    for (i, (fault, bytes, code, at)) in faults.into_iter().enumerate() {
        assert_eq!(core_offset(&bytes), at, "{fault}: the fixture");
        let file = s.write(&format!("fault-{i}.kiln"), &bytes);
        let expect = invalid(&file, code, Some(at));
        for command in ["check", "decode", "inspect"] {
            rows.push(Row::new(fault, &[command, &file], expect.clone()));
        }
        rows.push(
            Row::new(fault, &["convert", "-q", &file, &out_st], expect.clone()).output(&out_st),
        );
        let from_stdin = invalid("standard input", code, Some(at));
        for command in ["check", "decode", "inspect"] {
            rows.push(Row::new(fault, &[command, "-"], from_stdin.clone()).stdin(&bytes));
        }
    }
    // The hash names no type the tool knows: the line says what to do.
    for row in rows.iter_mut().filter(|r| r.fault == "unknown frame hash") {
        if row.args[0] == "convert" {
            row.says.push("safetensors conversion message".into());
        } else {
            row.says.push("--type TYPE".into());
        }
    }

    // A foreign file given to a Kiln-only command: FRAME at byte 0 (the
    // core's verdict on those bytes), naming the format and what to use.
    let foreign = "a foreign file given to a Kiln-only command";
    for (file, format) in [(&st, "safetensors"), (&gguf, "GGUF")] {
        for command in ["check", "decode"] {
            rows.push(
                Row::new(foreign, &[command, file], invalid(file, "FRAME", Some(0))).says(&[
                    format,
                    "kiln inspect",
                    "kiln convert",
                ]),
            );
        }
        rows.push(
            Row::new(
                foreign,
                &["check", "-"],
                invalid("standard input", "FRAME", Some(0)),
            )
            .stdin(&read(file))
            .says(&[format]),
        );
    }
    let short = s.write("short.safetensors", b"\x10\0\0");
    rows.push(
        Row::new(
            foreign,
            &["check", &short],
            invalid(&short, "FRAME", Some(0)),
        )
        .says(&["named as a safetensors file"]),
    );
    let disguised = s.write("disguised.kiln", &read(&gguf));
    rows.push(
        Row::new(
            foreign,
            &["convert", "-q", &disguised, &out_st],
            invalid(&disguised, "FRAME", Some(0)),
        )
        .says(&["GGUF", ".gguf"])
        .output(&out_st),
    );

    // safetensors and GGUF input: the format's own code, the reader's
    // offset, the same from inspect and convert.
    let st_bytes = read(&st);
    let mut broken = st_bytes.clone();
    broken[9] = b'x';
    let g = read(&gguf);
    let mut bad_magic = g.clone();
    bad_magic[0] ^= 0xA5;
    let foreign_faults: [(&'static str, &str, Vec<u8>, &'static str, u64); 4] = [
        (
            "truncation",
            "cut.safetensors",
            st_bytes[..st_bytes.len() - 5].to_vec(),
            "safetensors",
            safetensors_offset(&st_bytes[..st_bytes.len() - 5]),
        ),
        (
            "a rule broken in a header",
            "broken.safetensors",
            broken.clone(),
            "safetensors",
            safetensors_offset(&broken),
        ),
        ("bad magic", "magic.gguf", bad_magic, "GGUF", 0),
        (
            "truncation",
            "cut.gguf",
            g[..300].to_vec(),
            "GGUF",
            gguf_offset(&g[..300]),
        ),
    ];
    for (fault, name, bytes, code, at) in foreign_faults {
        let file = s.write(name, &bytes);
        let expect = invalid(&file, code, Some(at));
        rows.push(Row::new(fault, &["inspect", &file], expect.clone()));
        rows.push(Row::new(fault, &["convert", "-q", &file, &out_kiln], expect).output(&out_kiln));
        // Not Kiln either: check names the format.
        rows.push(Row::new(
            foreign,
            &["check", &file],
            invalid(&file, "FRAME", Some(0)),
        ));
    }
    let junk = s.write("junk.bin", b"hello, not a model at all");
    // Read as Kiln, its first broken rule is the magic: FRAME at byte 0
    // from every command, the line naming the formats tried.
    rows.push(
        Row::new(
            "a file of no known format",
            &["inspect", &junk],
            invalid(&junk, "FRAME", Some(0)),
        )
        .says(&["GGUF", "safetensors"]),
    );
    for command in ["check", "decode"] {
        rows.push(Row::new(
            "a file of no known format",
            &[command, &junk],
            invalid(&junk, "FRAME", Some(0)),
        ));
    }

    // Sets: a fault in a shard names the shard and its offset; a missing
    // shard is an I/O error naming it; a disagreement between the files
    // names the tensor and has no one byte.
    let missing = copy_sets(&s, "missing");
    let index = format!("{missing}/model.safetensors.index.json");
    let first = format!("{missing}/tiny-00001-of-00003.gguf");
    let gone = format!("{missing}/model-00002-of-00003.safetensors");
    let gone_gguf = format!("{missing}/tiny-00002-of-00003.gguf");
    std::fs::remove_file(&gone).unwrap();
    std::fs::remove_file(&gone_gguf).unwrap();
    for (set, shard) in [(&index, &gone), (&first, &gone_gguf)] {
        rows.push(
            Row::new(
                "a missing shard",
                &["convert", "-q", set, &out_kiln],
                io(shard),
            )
            .says(&["cannot read"])
            .output(&out_kiln),
        );
        rows.push(Row::new("a missing shard", &["inspect", set], io(shard)).says(&["cannot read"]));
    }
    let cut = copy_sets(&s, "cut");
    let index = format!("{cut}/model.safetensors.index.json");
    let first = format!("{cut}/tiny-00001-of-00003.gguf");
    let shard = format!("{cut}/model-00002-of-00003.safetensors");
    let shard_bytes = read(&shard)[..1000].to_vec();
    std::fs::write(&shard, &shard_bytes).unwrap();
    let split = format!("{cut}/tiny-00002-of-00003.gguf");
    let split_bytes = read(&split)[..400].to_vec();
    std::fs::write(&split, &split_bytes).unwrap();
    for (set, file, code, at) in [
        (
            &index,
            &shard,
            "safetensors",
            safetensors_offset(&shard_bytes),
        ),
        (&first, &split, "GGUF", gguf_offset(&split_bytes)),
    ] {
        let expect = invalid(file, code, Some(at));
        rows.push(
            Row::new(
                "truncation of a shard",
                &["convert", "-q", set, &out_kiln],
                expect.clone(),
            )
            .output(&out_kiln),
        );
        rows.push(Row::new("truncation of a shard", &["inspect", set], expect));
    }
    let sets = copy_sets(&s, "sets");
    let bad_index = s.write(
        "sets/bad.safetensors.index.json",
        &read(&format!(
            "{ROOT}/www/samples/shards/bad/model.safetensors.index.json"
        )),
    );
    let expect = invalid(&bad_index, "safetensors", None);
    let says = ["model.layers.0.attn.k.weight", "weight_map"];
    rows.push(
        Row::new(
            "a rule broken between the files of a set",
            &["convert", "-q", &bad_index, &out_kiln],
            expect.clone(),
        )
        .says(&says)
        .output(&out_kiln),
    );
    rows.push(
        Row::new(
            "a rule broken between the files of a set",
            &["inspect", &bad_index],
            expect,
        )
        .says(&says),
    );

    // JSON input: code JSON at the byte of the document.
    let json = s.write("bad.json", b"[1,2,x]");
    let out_json = s.path("json.kiln");
    rows.push(
        Row::new(
            "a rule broken in a document",
            &["encode", "--type", "list<u32>", &json, "-o", &out_json],
            invalid(&json, "JSON", Some(5)),
        )
        .output(&out_json),
    );
    rows.push(
        Row::new(
            "a rule broken in a document",
            &["encode", "--type", "list<u32>", "-o", &out_json],
            invalid("standard input", "JSON", Some(5)),
        )
        .stdin(b"[1,2,x]")
        .output(&out_json),
    );
    let doc = r#"{"type":"object","properties":{"a":{"type":"string","enum":["x"]}}}"#;
    let schema = s.write("enum.json", doc.as_bytes());
    let enum_at = doc.find(r#"["x"]"#).unwrap() as u64;
    let not_utf8 = s.write("latin1.json", b"{\"title\":\"caf\xe9\"}");
    for command in ["type", "gen"] {
        rows.push(
            Row::new(
                "a rule broken in a document",
                &[command, &schema],
                invalid(&schema, "JSON", Some(enum_at)),
            )
            .says(&["#/properties/a/enum"]),
        );
        rows.push(Row::new(
            "a rule broken in a document",
            &[command, &not_utf8],
            invalid(&not_utf8, "JSON", Some(13)),
        ));
    }

    // A missing input, to every command that reads one.
    let gone = s.path("missing/nothing");
    let missing_input = |ext: &str| format!("{gone}.{ext}");
    let kiln_in = missing_input("kiln");
    for command in ["check", "decode", "inspect"] {
        rows.push(
            Row::new("a missing input", &[command, &kiln_in], io(&kiln_in)).says(&["cannot read"]),
        );
    }
    for (input, output) in [
        (missing_input("kiln"), &out_st),
        (missing_input("safetensors"), &out_kiln),
        (missing_input("gguf"), &out_kiln),
        (missing_input("safetensors.index.json"), &out_kiln),
    ] {
        rows.push(
            Row::new(
                "a missing input",
                &["convert", "-q", &input, output],
                io(&input),
            )
            .says(&["cannot read"])
            .output(output),
        );
    }
    let json_in = missing_input("json");
    rows.push(
        Row::new(
            "a missing input",
            &["encode", "--type", "u8", &json_in, "-o", &out_json],
            io(&json_in),
        )
        .says(&["cannot read"])
        .output(&out_json),
    );
    for command in ["type", "gen"] {
        rows.push(
            Row::new("a missing input", &[command, &json_in], io(&json_in)).says(&["cannot read"]),
        );
    }

    // An unwritable output: named as given, never the temporary file.
    let nowhere = |name: &str| s.path(&format!("no-such-folder/{name}"));
    let set_model = s.path("set.kiln");
    convert(&format!("{sets}/model.safetensors.index.json"), &set_model);
    for (input, output) in [
        (&model, nowhere("out.safetensors")),
        (&gguf_model, nowhere("out.gguf")),
        (&st, nowhere("out.kiln")),
        (&gguf, nowhere("out.kiln")),
        (
            &format!("{sets}/model.safetensors.index.json"),
            nowhere("out.kiln"),
        ),
        (
            &format!("{sets}/tiny-00001-of-00003.gguf"),
            nowhere("out.kiln"),
        ),
    ] {
        rows.push(
            Row::new(
                "an unwritable output",
                &["convert", "-q", input, &output],
                io(&output),
            )
            .says(&["cannot write"])
            .output(&output),
        );
    }
    let a_file = s.write("a-file", b"");
    let folder = format!("{a_file}/shards");
    rows.push(
        Row::new(
            "an unwritable output",
            &["convert", "-q", &set_model, &folder, "--shards"],
            io(&folder),
        )
        .says(&["cannot write"]),
    );
    let good_json = s.write("good.json", b"[1,2]");
    let output = nowhere("out.kiln");
    rows.push(
        Row::new(
            "an unwritable output",
            &["encode", "--type", "list<u32>", &good_json, "-o", &output],
            io(&output),
        )
        .says(&["cannot write"])
        .output(&output),
    );
    if Path::new("/dev/full").exists() {
        let reading = s.write(
            "reading.json",
            &read(&format!("{ROOT}/kiln-cli/tests/gen/reading.json")),
        );
        for args in [
            vec!["check", model.as_str()],
            vec!["decode", model.as_str()],
            vec!["inspect", model.as_str()],
            vec!["type", reading.as_str()],
            vec!["gen", reading.as_str()],
        ] {
            rows.push(
                Row::new("an unwritable output", &args, io("standard output"))
                    .says(&["cannot write"])
                    .stdout_full(),
            );
        }
    }

    for row in &rows {
        run(row, &s);
    }
    // Every class reached every command it applies to.
    let commands = |fault: &str| -> Vec<String> {
        let mut seen: Vec<String> = rows
            .iter()
            .filter(|r| r.fault == fault)
            .map(|r| r.args[0].clone())
            .collect();
        seen.sort();
        seen.dedup();
        seen
    };
    let every_reader = [
        "check", "convert", "decode", "encode", "gen", "inspect", "type",
    ];
    assert_eq!(commands("a missing input"), every_reader);
    assert_eq!(
        commands("an unwritable output"),
        if Path::new("/dev/full").exists() {
            &every_reader[..]
        } else {
            &["convert", "encode"][..]
        }
    );
    for fault in [
        "bad frame magic",
        "unknown frame hash",
        "a rule broken in a directory",
    ] {
        assert_eq!(commands(fault), ["check", "convert", "decode", "inspect"]);
    }
}

/// A usage error is the one exception to one line: the reason, then the
/// usage line, exit status 2.
#[test]
fn a_usage_error_is_the_reason_and_the_usage_line() {
    for command in [
        "check", "convert", "inspect", "decode", "encode", "gen", "type",
    ] {
        let out = common::kiln(&[command, "--bogus", "x"], b"");
        assert_eq!(out.status, 2, "{command}: {}", out.stderr);
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{command}: {}", out.stderr);
        assert!(lines[0].starts_with("kiln: "), "{command}: {}", out.stderr);
        assert!(
            lines[1].starts_with("usage: kiln "),
            "{command}: {}",
            out.stderr
        );
        assert!(out.stdout.is_empty(), "{command}");
    }
}

/// The commands share one cap on type nodes: a schema `kiln check --type`
/// takes, `kiln type` and `kiln gen` take; one past the cap, all refuse.
#[test]
fn one_type_node_cap_everywhere() {
    let s = Scratch::new("cap");
    let schema = |fields: usize| -> String {
        let properties: Vec<String> = (0..fields)
            .map(|i| format!(r#""f{i}":{{"type":"integer","format":"uint8"}}"#))
            .collect();
        format!(
            r#"{{"type":"object","properties":{{{}}}}}"#,
            properties.join(",")
        )
    };
    // A struct of F fields is 1 + F nodes; 200 fields are past the core's
    // no_std default of 128.
    let fields = 200;
    let file = s.write("wide.json", schema(fields).as_bytes());
    let out = common::kiln(&["type", &file], b"");
    assert_eq!(out.status, 0, "{}", out.stderr);
    let text = out.text();
    let (type_text, hash) = text.trim_end().split_once('\n').unwrap();
    assert_eq!(type_text.matches(":u8,").count(), fields);
    let out = common::kiln(&["gen", &file], b"");
    assert_eq!(out.status, 0, "{}", out.stderr);
    // The same type in a frame: check takes it with --type, and its frame
    // carries the hash `kiln type` printed.
    let values: Vec<String> = (0..fields)
        .map(|i| format!(r#""f{i}":{}"#, i % 256))
        .collect();
    let json = format!("{{{}}}", values.join(","));
    let framed = s.path("wide.kiln");
    let out = common::kiln(
        &["encode", "--framed", "--type", type_text, "-o", &framed],
        json.as_bytes(),
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    let out = common::kiln(&["check", "--type", type_text, &framed], b"");
    assert_eq!(
        (out.status, out.text().as_str()),
        (0, "ok\n"),
        "{}",
        out.stderr
    );
    let bytes = read(&framed);
    let info = kiln_nostd::frame::peek(&bytes).unwrap();
    assert_eq!(format!("{:#018x}", info.hash), hash);

    let past = kiln_nostd::TOOL_NODES;
    let file = s.write("too-wide.json", schema(past).as_bytes());
    for command in ["type", "gen"] {
        let out = common::kiln(&[command, &file], b"");
        assert_eq!(out.status, 1, "{command}: {}", out.stderr);
        assert!(
            out.stderr.starts_with(&format!("error: {file}: JSON: ")),
            "{command}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(&past.to_string()), "{}", out.stderr);
        assert!(out.stdout.is_empty(), "{command}");
    }
    let text = (0..past).map(|i| format!("f{i}:u8,")).collect::<String>();
    let out = common::kiln(&["check", "--type", &format!("struct{{{text}}}"), "-"], b"");
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert!(out.stderr.contains("bad type text"), "{}", out.stderr);
}
