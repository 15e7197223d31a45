//! Prints the Rust readers' verdict for many inputs, one line each:
//! `accept` or the error code. The differential test
//! (`tests/differential/run.py`) compares these lines with the Python
//! reference's.
//!
//! ```sh
//! cargo run -q -p kiln-nostd --features alloc,derive --example verdicts -- CASES.json
//! cargo run -q --release -p kiln-nostd --features alloc,derive --example verdicts -- --lines < INPUTS
//! ```
//!
//! The first form reads a JSON case file (the golden-case format). The
//! second reads lines `TYPE<tab>FRAMED<tab>CAP<tab>HEX` (FRAMED 0 or 1, CAP
//! 0 for the default caps) from standard input, for a million inputs in
//! one process.
//!
//! Every input goes through five readers, which must agree with each
//! other: `check`; the walker with a visitor that records events; dynamic
//! values (`decode_value`), whose accepted values must encode to the same
//! bytes; the typed decoder wherever the type has a Rust type here, whose
//! accepted values must also encode to the same bytes (a typed decoder's
//! refusal for lack of storage is not a verdict and is skipped); and the
//! incremental checker (`stream::Checker`), fed in one piece with the
//! length known, at split points drawn from the input's hash with the
//! length not known, and read by ranges (`stream::check_at`), which must
//! give `check`'s very error: code, offset, tensor, sentence and numbers.
//! A disagreement prints `DISAGREE` with the details on that input's line
//! and makes the exit status 1.

use std::collections::HashMap;
use std::io::{BufRead, BufWriter, Write};

use kiln_nostd::stream::{check_at, Checker, Need};
use kiln_nostd::{
    from_bytes_with, from_frame_with, to_frame_vec, to_vec, Code, CompiledType, Decode, DictView,
    Directory, Empty, Encode, Error, Framing, Frozen, Int, Limits, ListView, Options, PodList,
    ScalarValue, Span, Uint, Visitor,
};

/// Nodes a type may compile to (the deepest golden type has 200).
const NODES: usize = 512;

/// One reader's answer: accepted, a wire code, or a refusal (not a verdict).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Verdict {
    Accept,
    Wire(Code),
    Refused,
}

impl Verdict {
    fn of<T>(result: &Result<T, Error>) -> Verdict {
        match result {
            Ok(_) => Verdict::Accept,
            Err(e) => e.code().map_or(Verdict::Refused, Verdict::Wire),
        }
    }

    fn text(self) -> String {
        match self {
            Verdict::Accept => "accept".into(),
            Verdict::Wire(code) => code.to_string(),
            Verdict::Refused => "refused".into(),
        }
    }
}

/// A visitor that does a little work per event, so the walker is run with
/// something other than the no-op visitor `check` uses.
#[derive(Default)]
struct Events(u64);

impl<'de> Visitor<'de> for Events {
    fn scalar(&mut self, _: usize, _: ScalarValue) -> kiln_nostd::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn str(&mut self, _: Span, _: &'de str) -> kiln_nostd::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn begin_list(&mut self, _: usize, _: u32) -> kiln_nostd::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn begin_struct(&mut self, _: usize, _: usize) -> kiln_nostd::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn tensors(&mut self, _: Directory<'de>) -> kiln_nostd::Result<()> {
        self.0 += 1;
        Ok(())
    }
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
struct Inner {
    b: u8,
    c: Option<String>,
}

#[derive(Frozen)]
struct Outer {
    a: Inner,
    d: Vec<bool>,
    e: f64,
}

/// The typed decoder's verdict; an accepted value must write `bytes` again.
fn typed<'a, T: Decode<'a> + Encode>(bytes: &'a [u8], options: Options) -> Verdict {
    let result: kiln_nostd::Result<T> = if options.is_framed() {
        from_frame_with(bytes, options.limits)
    } else {
        from_bytes_with(bytes, options.limits)
    };
    if let Ok(value) = &result {
        let again = if options.is_framed() {
            to_frame_vec(value)
        } else {
            to_vec(value)
        };
        if again.as_deref().ok() != Some(bytes) {
            // Reported as a disagreement by the caller.
            return Verdict::Refused;
        }
    }
    Verdict::of(&result)
}

/// The typed verdict, or `None` when no Rust type here has that type text.
/// Where a type has both, this table reads it into owned storage (`Vec`,
/// `String`) and `tests/golden.rs` reads it through borrowed views, so the
/// two tables differ on purpose: between them both decoders meet every
/// input.
fn typed_verdict(type_text: &str, bytes: &[u8], options: Options) -> Option<Verdict> {
    Some(match type_text {
        "tensors" => typed::<Directory>(bytes, options),
        "struct{id:i64,batch:tensors,}" => typed::<IdBatch>(bytes, options),
        "struct{batch:tensors,tail:u32,}" => typed::<BatchTail>(bytes, options),
        "struct{a:struct{b:u8,c:opt<str>,},d:list<bool>,e:f64,}" => typed::<Outer>(bytes, options),
        "struct{}" => typed::<Empty>(bytes, options),
        "list<f32>" => typed::<PodList<f32>>(bytes, options),
        "list<f64>" => typed::<Vec<f64>>(bytes, options),
        "list<i32>" => typed::<PodList<i32>>(bytes, options),
        "list<u8>" => typed::<&[u8]>(bytes, options),
        "list<str>" => typed::<Vec<String>>(bytes, options),
        "list<struct{a:i64,b:str,}>" => typed::<ListView<AB>>(bytes, options),
        "list<struct{}>" => typed::<Vec<Empty>>(bytes, options),
        "list<tensors>" => typed::<ListView<Directory>>(bytes, options),
        "list<list<u16>>" => typed::<Vec<Vec<u16>>>(bytes, options),
        "dict<str,u32>" => typed::<DictView<u32>>(bytes, options),
        "dict<str,i64>" => typed::<DictView<i64>>(bytes, options),
        "dict<str,tensors>" => typed::<DictView<Directory>>(bytes, options),
        "opt<u32>" => typed::<Option<u32>>(bytes, options),
        "opt<opt<u8>>" => typed::<Option<Option<u8>>>(bytes, options),
        "opt<tensors>" => typed::<Option<Directory>>(bytes, options),
        "str" => typed::<String>(bytes, options),
        "bool" => typed::<bool>(bytes, options),
        "u8" => typed::<u8>(bytes, options),
        "i8" => typed::<i8>(bytes, options),
        "u16" => typed::<u16>(bytes, options),
        "i16" => typed::<i16>(bytes, options),
        "u32" => typed::<u32>(bytes, options),
        "i32" => typed::<i32>(bytes, options),
        "u64" => typed::<u64>(bytes, options),
        "i64" => typed::<i64>(bytes, options),
        "int" => typed::<Int>(bytes, options),
        "uint" => typed::<Uint>(bytes, options),
        "f32" => typed::<f32>(bytes, options),
        "f64" => typed::<f64>(bytes, options),
        _ => return None,
    })
}

/// An error as the incremental checker must repeat it: all but the hint
/// that bare bytes look framed (given once it has seen four bytes).
fn error_key(result: &Result<(), Error>) -> Option<String> {
    result.as_ref().err().map(|e| {
        format!(
            "{:?} at {:?} tensor {:?} {:?}: {}",
            e.kind(),
            e.offset(),
            e.tensor(),
            e.detail(),
            e.fault()
        )
    })
}

/// The incremental checker over `bytes` cut at `cuts`, the length known or
/// not.
fn streamed(
    ty: &CompiledType<'_, NODES>,
    bytes: &[u8],
    options: Options,
    known: bool,
    cuts: &[usize],
) -> Result<(), Error> {
    // The whole message always fits: heads and keys are inside it.
    let mut scratch = vec![0u8; bytes.len() + 64];
    let mut checker = if known {
        Checker::with_len(ty, options, &mut scratch, bytes.len() as u64)
    } else {
        Checker::new(ty, options, &mut scratch)
    };
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        let piece = &bytes[from..cut.max(from)];
        from = cut.max(from);
        if checker.feed(piece)? < piece.len() {
            break;
        }
    }
    loop {
        match checker.need()? {
            Need::Done => return Ok(()),
            _ => checker.end()?,
        }
    }
}

/// Split points drawn from the bytes' FNV-1a hash: the same on every run.
fn cuts_of(bytes: &[u8]) -> Vec<usize> {
    let mut h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let mut cuts: Vec<usize> = (0..1 + h % 5)
        .map(|_| {
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
            (h % (bytes.len() as u64 + 1)) as usize
        })
        .collect();
    cuts.sort_unstable();
    cuts
}

/// Every reader's verdict on one input: the verdict, or `DISAGREE ...`.
fn judge(ty: &CompiledType<'_, NODES>, type_text: &str, bytes: &[u8], options: Options) -> String {
    let full = ty.check(bytes, options);
    let checked = Verdict::of(&full);
    let mut faults = Vec::new();
    let want = error_key(&full);
    for (how, got) in [
        ("in one piece", streamed(ty, bytes, options, true, &[])),
        (
            "in pieces",
            streamed(ty, bytes, options, false, &cuts_of(bytes)),
        ),
        ("by ranges", {
            let mut scratch = vec![0u8; bytes.len() + 64];
            check_at(ty, bytes, options, &mut scratch).map(|_| ())
        }),
    ] {
        let got = error_key(&got);
        if got != want {
            faults.push(format!("stream checker {how}: {got:?}, check {want:?}"));
        }
    }
    let walked = Verdict::of(&ty.walk(bytes, options, &mut Events::default()));
    if walked != checked {
        faults.push(format!("walker {}", walked.text()));
    }
    let value = ty.decode_value(bytes, options);
    let valued = Verdict::of(&value);
    if valued != checked {
        faults.push(format!("decode_value {}", valued.text()));
    }
    if let Ok(value) = &value {
        if ty.encode_value(value, options).ok().as_deref() != Some(bytes) {
            faults.push("encode_value gives other bytes".into());
        }
    }
    match typed_verdict(type_text, bytes, options) {
        Some(Verdict::Refused) | None => {}
        Some(v) if v != checked => faults.push(format!("typed {}", v.text())),
        Some(_) => {}
    }
    if checked == Verdict::Refused {
        faults.push("check refused".into());
    }
    if faults.is_empty() {
        checked.text()
    } else {
        format!("DISAGREE check {}: {}", checked.text(), faults.join(", "))
    }
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex digits"))
        .collect()
}

/// Compiled types by their text; each text is compiled once.
#[derive(Default)]
struct Types(HashMap<String, Box<CompiledType<'static, NODES>>>);

impl Types {
    fn get(&mut self, text: &str) -> &CompiledType<'static, NODES> {
        if !self.0.contains_key(text) {
            let owned: &'static str = Box::leak(text.to_string().into_boxed_str());
            let ty = CompiledType::parse(owned).unwrap_or_else(|e| panic!("type {text}: {e}"));
            self.0.insert(text.to_string(), Box::new(ty));
        }
        &self.0[text]
    }
}

fn options(framed: bool, cap: u64) -> Options {
    let limits = match cap {
        0 => Limits::DEFAULT,
        cap => Limits::uniform_checked(cap).expect("cap"),
    };
    let framing = if framed {
        Framing::Framed
    } else {
        Framing::Bare
    };
    Options { framing, limits }
}

fn main() {
    let arg = std::env::args()
        .nth(1)
        .expect("usage: verdicts CASES.json | verdicts --lines < INPUTS");
    let mut types = Types::default();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut disagreements = 0u64;
    let mut emit = |line: String, out: &mut BufWriter<_>| {
        if line.starts_with("DISAGREE") {
            disagreements += 1;
        }
        writeln!(out, "{line}").expect("stdout");
    };
    if arg == "--lines" {
        for line in std::io::stdin().lock().lines() {
            let line = line.expect("stdin");
            let mut parts = line.split('\t');
            let (Some(type_text), Some(framed), Some(cap), Some(data)) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                panic!("not TYPE<tab>FRAMED<tab>CAP<tab>HEX: {line}");
            };
            let options = options(framed == "1", cap.parse().expect("cap"));
            let ty = types.get(type_text);
            emit(judge(ty, type_text, &hex(data), options), &mut out);
        }
    } else {
        let text = std::fs::read_to_string(&arg).expect("readable case file");
        let cases: Vec<serde_json::Value> = serde_json::from_str(&text).expect("a JSON array");
        for case in cases {
            let type_text = case["type"].as_str().expect("type");
            let framed = case["framed"].as_bool().expect("framed");
            let cap = case.get("cap").and_then(|c| c.as_u64()).unwrap_or(0);
            let bytes = hex(case["hex"].as_str().expect("hex"));
            let ty = types.get(type_text);
            emit(judge(ty, type_text, &bytes, options(framed, cap)), &mut out);
        }
    }
    out.flush().expect("stdout");
    drop(out);
    if disagreements > 0 {
        eprintln!("verdicts: the Rust readers disagree on {disagreements} inputs");
        std::process::exit(1);
    }
}
