//! Every golden case through the run-time `check`, the walker, dynamic
//! values, and the typed API wherever the case's type has a Rust type here.
//! Accepted cases must also re-encode to the same bytes (canonical form),
//! and every accepted directory must be what the builder writes from its
//! views. The cases are embedded, so the same tests run on every target
//! (host, big-endian under qemu, wasm32 in node).

// wasm-bindgen-test-runner runs only #[wasm_bindgen_test] functions.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use kiln_nostd::{
    check, from_bytes_with, from_frame_with, to_frame_slice, to_slice, Code, CompiledType, Decode,
    Directory, Encode, Error, Refusal, ScalarValue, Span, Visitor,
};

#[path = "support/cases.rs"]
mod golden_cases;
use golden_cases::{cases, Case};

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
        let got = verdict(check(&case.type_text, &case.bytes, case.options));
        let want = case.want();
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
    let value: T = if case.framed() {
        from_frame_with(bytes, case.limits())
    } else {
        from_bytes_with(bytes, case.limits())
    }
    .map_err(|e| e.code())?;
    // Accepted: writing the value again gives the same bytes.
    let mut out = vec![0u8; bytes.len() + 64];
    let written = if case.framed() {
        to_frame_slice(&value, &mut out)
    } else {
        to_slice(&value, &mut out)
    }
    .unwrap_or_else(|e| panic!("{}: re-encode failed: {e}", case.name));
    assert_eq!(written, &bytes[..], "{}: not canonical", case.name);
    #[cfg(all(feature = "embedded-io", feature = "embedded-io-async"))]
    streamed::same_bytes(&value, case.framed(), written, &case.name);
    Ok(())
}

/// The streaming encoders (kiln_nostd::io_write) give the bytes of
/// `to_slice`: a blocking writer taking 3 bytes per call, and the async
/// encoder through staging buffers of 1, 7 and 64 bytes.
#[cfg(all(feature = "embedded-io", feature = "embedded-io-async"))]
#[path = "support/writers.rs"]
mod writers;

#[cfg(all(feature = "embedded-io", feature = "embedded-io-async"))]
mod streamed {
    use super::writers::{block_on, ShortWriter};
    use kiln_nostd::io_write::{
        to_async_writer, to_frame_async_writer, to_frame_writer, to_writer,
    };
    use kiln_nostd::Encode;

    pub fn same_bytes<T: Encode>(value: &T, framed: bool, want: &[u8], name: &str) {
        let mut w = ShortWriter::new(3);
        let n = if framed {
            to_frame_writer(value, &mut w)
        } else {
            to_writer(value, &mut w)
        }
        .unwrap_or_else(|e| panic!("{name}: streaming encode failed: {e}"));
        assert_eq!((n, &w.bytes[..]), (want.len(), want), "{name}: to_writer");
        for staging in [1usize, 7, 64] {
            let mut w = ShortWriter::new(5);
            let mut chunk = vec![0u8; staging];
            let n = block_on(async {
                if framed {
                    to_frame_async_writer(value, &mut w, &mut chunk).await
                } else {
                    to_async_writer(value, &mut w, &mut chunk).await
                }
            })
            .unwrap_or_else(|e| panic!("{name}: async encode failed: {e}"));
            assert_eq!(
                (n, &w.bytes[..]),
                (want.len(), want),
                "{name}: async, {staging}-byte staging"
            );
        }
    }
}

include!("support/golden_types.rs");

/// The typed verdict, or `None` when no Rust type here has that type text.
fn typed_verdict(case: &Case) -> Option<Result<(), Option<Code>>> {
    with_golden_type!(case.type_text.as_str(), typed(case))
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
        let want = case.want();
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
        assert_eq!(got, case.want(), "{}", case.name);
    }
}

/// The typed verdict with the refusal kept: `Err(Ok(code))` for a wire
/// fault, `Err(Err(refusal))` for a refusal.
fn typed_small<'a, T: Decode<'a>>(case: &'a Case) -> Result<(), Result<Code, Refusal>> {
    let result: Result<T, Error> = if case.framed() {
        from_frame_with(&case.bytes, case.limits())
    } else {
        from_bytes_with(&case.bytes, case.limits())
    };
    result
        .map(drop)
        .map_err(|e| e.code().ok_or_else(|| e.refusal().unwrap()))
}

#[test]
fn storage_smaller_than_the_wire_count_is_a_refusal_never_a_wire_code() {
    // With capacity 2, a list or string the wire allows but the storage
    // cannot hold is refused (Capacity); the wire's own faults up to and
    // including the count claim keep their codes.
    let mut refusals = 0;
    for case in cases() {
        let got = match case.type_text.as_str() {
            "list<i32>" => typed_small::<heapless::Vec<i32, 2>>(&case),
            "list<str>" => typed_small::<heapless::Vec<&str, 2>>(&case),
            "str" => typed_small::<heapless::String<2>>(&case),
            _ => continue,
        };
        let start = if case.framed() { 16 } else { 0 };
        let claimed = case
            .bytes
            .get(start..start + 4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()));
        match got {
            Err(Err(refusal)) => {
                assert_eq!(refusal, Refusal::Capacity, "{}", case.name);
                assert!(claimed.unwrap() > 2, "{}", case.name);
                // The frame and the count's own rules came first.
                assert!(
                    !matches!(case.want(), Err(Some(Code::Frame | Code::Schema))),
                    "{}",
                    case.name
                );
                refusals += 1;
            }
            Err(Ok(code)) => assert_eq!(Err(Some(code)), case.want(), "{}", case.name),
            Ok(()) => assert_eq!(Ok(()), case.want(), "{}", case.name),
        }
    }
    assert!(refusals >= 3, "only {refusals} capacity refusals seen");
}

// ---------------------------------------------------------------------------
// The walker

/// Records what the walker reports and checks, on the way, that every
/// absolute position it gives points at the bytes it describes.
struct Recorder<'de> {
    buf: &'de [u8],
    events: usize,
    directories: Vec<Directory<'de>>,
    open: Vec<char>,
    problems: Vec<String>,
}

impl<'de> Recorder<'de> {
    fn expect_bytes(&mut self, what: &str, span: &Span, bytes: &[u8]) {
        if self.buf.get(span.clone()) != Some(bytes) {
            self.problems
                .push(format!("{what} at {span:?} is not where the walker says"));
        }
    }
}

impl<'de> Visitor<'de> for Recorder<'de> {
    fn scalar(&mut self, at: usize, value: ScalarValue) -> kiln_nostd::Result<()> {
        self.events += 1;
        let width = match value {
            ScalarValue::Bool(_) | ScalarValue::I8(_) | ScalarValue::U8(_) => 1,
            ScalarValue::I16(_) | ScalarValue::U16(_) => 2,
            ScalarValue::I32(_) | ScalarValue::U32(_) | ScalarValue::F32(_) => 4,
            _ => 8,
        };
        if at + width > self.buf.len() {
            self.problems
                .push(format!("scalar at {at} runs past the buffer"));
        }
        Ok(())
    }
    fn str(&mut self, span: Span, value: &'de str) -> kiln_nostd::Result<()> {
        self.events += 1;
        self.expect_bytes("str", &span, value.as_bytes());
        Ok(())
    }
    fn bytes(&mut self, span: Span, value: &'de [u8]) -> kiln_nostd::Result<()> {
        self.events += 1;
        self.expect_bytes("bytes", &span, value);
        Ok(())
    }
    fn key(&mut self, span: Span, key: &'de str) -> kiln_nostd::Result<()> {
        self.expect_bytes("key", &span, key.as_bytes());
        Ok(())
    }
    fn begin_list(&mut self, _: usize, _: u32) -> kiln_nostd::Result<()> {
        self.open.push('l');
        Ok(())
    }
    fn end_list(&mut self) -> kiln_nostd::Result<()> {
        self.close('l');
        Ok(())
    }
    fn begin_opt(&mut self, _: usize, _: bool) -> kiln_nostd::Result<()> {
        self.open.push('o');
        Ok(())
    }
    fn end_opt(&mut self) -> kiln_nostd::Result<()> {
        self.close('o');
        Ok(())
    }
    fn begin_dict(&mut self, _: usize, _: u32) -> kiln_nostd::Result<()> {
        self.open.push('d');
        Ok(())
    }
    fn end_dict(&mut self) -> kiln_nostd::Result<()> {
        self.close('d');
        Ok(())
    }
    fn begin_struct(&mut self, _: usize, _: usize) -> kiln_nostd::Result<()> {
        self.open.push('s');
        Ok(())
    }
    fn end_struct(&mut self) -> kiln_nostd::Result<()> {
        self.close('s');
        Ok(())
    }
    fn tensors(&mut self, directory: Directory<'de>) -> kiln_nostd::Result<()> {
        self.events += 1;
        self.expect_bytes("directory", &directory.byte_range(), directory.as_bytes());
        for tensor in &directory {
            self.expect_bytes("payload", &tensor.byte_range(), tensor.bytes());
        }
        self.directories.push(directory);
        Ok(())
    }
}

impl Recorder<'_> {
    fn close(&mut self, kind: char) {
        if self.open.pop() != Some(kind) {
            self.problems
                .push(format!("end of '{kind}' without its begin"));
        }
    }
}

fn walk_case(case: &Case) -> (Result<(), Option<Code>>, Recorder<'_>) {
    let mut recorder = Recorder {
        buf: &case.bytes,
        events: 0,
        directories: Vec::new(),
        open: Vec::new(),
        problems: Vec::new(),
    };
    let ty = CompiledType::<128>::parse(&case.type_text).expect("golden type text");
    let got = verdict(ty.walk(&case.bytes, case.options, &mut recorder));
    (got, recorder)
}

#[test]
fn the_walker_agrees_with_every_case_and_its_positions_are_absolute() {
    let mut failures = Vec::new();
    let mut events = 0;
    for case in cases() {
        let (got, recorder) = walk_case(&case);
        if got != case.want() {
            failures.push(format!(
                "{}: want {:?}, got {got:?}",
                case.name,
                case.want()
            ));
        }
        if got.is_ok() && !recorder.open.is_empty() {
            failures.push(format!("{}: containers left open", case.name));
        }
        failures.extend(
            recorder
                .problems
                .iter()
                .map(|p| format!("{}: {p}", case.name)),
        );
        events += recorder.events;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(events > 100, "the walker reported only {events} values");
}

/// Rebuilds a directory from its views through the builder. A block the
/// parser accepts must be exactly what the builder writes for its tensors:
/// this is what makes "accepted implies canonical" a test that can fail.
fn rebuilt(dir: &Directory<'_>) -> Vec<u8> {
    use kiln_nostd::{TensorSpec, Tensors};
    let views: Vec<_> = dir.iter().collect();
    let shapes: Vec<_> = views.iter().map(|v| v.shape()).collect();
    let specs: Vec<TensorSpec<'_>> = views
        .iter()
        .zip(&shapes)
        .map(|(v, shape)| v.to_spec(shape))
        .collect();
    let len = kiln_nostd::encoded_len(&Tensors(&specs)).expect("the builder accepts it");
    let mut out = vec![0u8; len];
    to_slice(&Tensors(&specs), &mut out).expect("the builder writes what the parser accepted");
    out
}

#[test]
fn every_accepted_directory_is_what_the_builder_writes() {
    let mut rebuilt_count = 0;
    for case in cases().iter().filter(|c| c.expect.is_none()) {
        let (_, recorder) = walk_case(case);
        for dir in &recorder.directories {
            assert_eq!(rebuilt(dir), dir.as_bytes(), "{}: not canonical", case.name);
            rebuilt_count += 1;
        }
    }
    assert!(
        rebuilt_count >= 30,
        "only {rebuilt_count} directories rebuilt"
    );
}

#[test]
fn a_block_that_is_not_canonical_is_caught_by_the_rebuild() {
    // The rebuild compares bytes, so it can fail: a block whose payload
    // region holds one more zero byte than the builder writes is refused
    // by the parser (step 10), and a rebuild from its views is shorter.
    let values = [1.0f32, -2.0];
    let specs = [kiln_nostd::TensorSpec::from_host(&[2], &values)];
    let mut good = vec![0u8; 200];
    to_slice(&kiln_nostd::Tensors(&specs), &mut good).unwrap();
    let dir = Directory::parse(&good).unwrap();
    let mut longer = rebuilt(&dir);
    longer.push(0);
    assert_ne!(longer, good);
    let mut bad = good.clone();
    bad[16] += 1; // payload_bytes one more than the last payload's end
    bad.push(0);
    assert_eq!(Directory::parse(&bad).unwrap_err().code(), Some(Code::Type));
}

// ---------------------------------------------------------------------------
// Dynamic values

#[cfg(feature = "alloc")]
#[test]
fn dynamic_values_agree_with_every_case_and_re_encode_to_the_same_bytes() {
    let mut failures = Vec::new();
    for case in cases() {
        let got = kiln_nostd::decode_value(&case.type_text, &case.bytes, case.options);
        match (&got, case.want()) {
            (Ok(value), Ok(())) => {
                let again = kiln_nostd::encode_value(&case.type_text, value, case.options)
                    .unwrap_or_else(|e| panic!("{}: re-encode refused: {e}", case.name));
                if again != case.bytes {
                    failures.push(format!("{}: re-encoded bytes differ", case.name));
                }
            }
            (Err(e), want) if Err(e.code()) == want => {}
            (got, want) => failures.push(format!(
                "{}: want {want:?}, got {:?}",
                case.name,
                got.as_ref().map(drop).map_err(|e| e.code())
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
