//! The incremental checker against the whole-buffer `check`: every golden
//! case fed in one piece, one byte at a time and at random split points,
//! with the length known and not, and read by ranges, gives the same
//! error (code, offset, tensor, sentence, numbers). Hostile counts read
//! no further than the bytes that arrive and allocate nothing; a stream
//! that ends early is EOF; a reader by ranges reads only what it claims;
//! the scratch the report names is exactly the smallest that works.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/counting.rs"]
mod counting;

use counting::{allocated_by, Counting};
use kiln_nostd::stream::{check_at, Checker, Need, ReadAt, Report};
use kiln_nostd::{
    check, Code, CompiledType, Detail, Directory, Error, Framing, Kind, Limits, Options, Refusal,
    TensorSpec, WIRE_MAX,
};

#[global_allocator]
static GLOBAL: Counting = Counting;

const NODES: usize = 512;

struct Case {
    name: String,
    type_text: String,
    bytes: Vec<u8>,
    options: Options,
}

fn cases() -> Vec<Case> {
    let text = include_str!("../../spec/kiln-v2-cases.json");
    let json: Vec<serde_json::Value> = serde_json::from_str(text).expect("JSON");
    json.iter()
        .map(|c| {
            let hex = c["hex"].as_str().unwrap();
            let limits = c
                .get("cap")
                .and_then(|c| c.as_u64())
                .map_or(Limits::DEFAULT, |cap| Limits::uniform_checked(cap).unwrap());
            let framing = if c["framed"].as_bool().unwrap() {
                Framing::Framed
            } else {
                Framing::Bare
            };
            Case {
                name: c["name"].as_str().unwrap().into(),
                type_text: c["type"].as_str().unwrap().into(),
                bytes: (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect(),
                options: Options { framing, limits },
            }
        })
        .collect()
}

/// An error without the framed hint (which the checker gives only once it
/// has seen the first four bytes): everything else must match.
type Seen = (Kind, Option<u64>, Option<u32>, Detail, &'static str);

fn seen(result: Result<(), Error>) -> Result<(), Seen> {
    result.map_err(|e| (e.kind(), e.offset(), e.tensor(), e.detail(), e.fault()))
}

/// Feeds `pieces` in order, then ends the input.
fn fed<const N: usize>(
    ty: &CompiledType<'_, N>,
    bytes: &[u8],
    options: Options,
    known: bool,
    cuts: &[usize],
    scratch: &mut [u8],
) -> (Result<(), Error>, Report) {
    let mut checker = if known {
        Checker::with_len(ty, options, scratch, bytes.len() as u64)
    } else {
        Checker::new(ty, options, scratch)
    };
    let mut from = 0;
    for &cut in cuts.iter().chain([bytes.len()].iter()) {
        let piece = &bytes[from..cut.max(from)];
        from = cut.max(from);
        match checker.feed(piece) {
            Ok(n) if n < piece.len() => {
                // Done before the bytes ran out: only with a known length,
                // which then equals the bytes given.
                assert!(matches!(checker.next(), Ok(Need::Done)));
                break;
            }
            Ok(_) => {}
            Err(e) => return (Err(e), checker.report()),
        }
    }
    let result = loop {
        match checker.next() {
            Ok(Need::Done) => break Ok(()),
            Ok(_) => {
                if let Err(e) = checker.end() {
                    break Err(e);
                }
            }
            Err(e) => break Err(e),
        }
    };
    (result, checker.report())
}

/// A small seeded generator (xorshift64*), so that split points are the
/// same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn cuts(&mut self, len: usize) -> Vec<usize> {
        let mut cuts: Vec<usize> = (0..self.next() % 6)
            .map(|_| (self.next() % (len as u64 + 1)) as usize)
            .collect();
        cuts.sort_unstable();
        cuts
    }
}

#[test]
fn every_golden_case_in_any_pieces_gives_checks_error() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut scratch = vec![0u8; 1 << 16];
    let mut runs = 0;
    for case in cases() {
        let ty = CompiledType::<NODES>::parse(&case.type_text).unwrap();
        let want = seen(check(&case.type_text, &case.bytes, case.options));
        let n = case.bytes.len();
        let mut splits = vec![vec![], (1..n).collect::<Vec<_>>()];
        splits.extend((0..8).map(|_| rng.cuts(n)));
        for cuts in &splits {
            for known in [true, false] {
                let (got, _) = fed(&ty, &case.bytes, case.options, known, cuts, &mut scratch);
                assert_eq!(
                    seen(got),
                    want,
                    "{}: known length {known}, cuts {cuts:?}",
                    case.name
                );
                runs += 1;
            }
        }
        let by_ranges = check_at(&ty, case.bytes.as_slice(), case.options, &mut scratch);
        assert_eq!(
            seen(by_ranges.map(|_| ())),
            want,
            "{}: by ranges",
            case.name
        );
    }
    assert!(runs > 4000, "{runs}");
}

#[test]
fn the_scratch_the_report_names_is_the_smallest_that_works() {
    let mut roomy = vec![0u8; 1 << 16];
    let mut checked = 0;
    for case in cases() {
        let ty = CompiledType::<NODES>::parse(&case.type_text).unwrap();
        let want = seen(check(&case.type_text, &case.bytes, case.options));
        for known in [true, false] {
            let (got, report) = fed(&ty, &case.bytes, case.options, known, &[], &mut roomy);
            assert_eq!(seen(got), want, "{}", case.name);
            if want.is_err() || report.scratch_needed == 0 {
                continue;
            }
            let needed = report.scratch_needed;
            let mut exact = vec![0u8; needed];
            let (got, _) = fed(&ty, &case.bytes, case.options, known, &[], &mut exact);
            assert_eq!(seen(got), want, "{}: scratch of {needed}", case.name);
            let mut short = vec![0u8; needed - 1];
            let (got, _) = fed(&ty, &case.bytes, case.options, known, &[], &mut short);
            let refused = got.unwrap_err();
            assert_eq!(refused.refusal(), Some(Refusal::Capacity), "{}", case.name);
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

/// A directory of one tensor whose header claims `count` u32 elements
/// (the payload not there).
fn claiming_directory(count: u64) -> Vec<u8> {
    let mut block = vec![0u8; 1024];
    let dir = Directory::build(
        &[TensorSpec::from_host(&[1], &[7u32]).named("big")],
        &mut block,
    )
    .unwrap();
    let payload_base = dir.payload_offset();
    let mut head = dir.as_bytes()[..payload_base].to_vec();
    head[16..24].copy_from_slice(&(count * 4).to_le_bytes()); // payload_bytes
    head[64 + 40..64 + 48].copy_from_slice(&(count * 4).to_le_bytes()); // byte_length
    head[64 + 48..64 + 56].copy_from_slice(&count.to_le_bytes()); // shape[0]
    head
}

/// A reader that counts the bytes it hands out.
struct Counted<'a> {
    bytes: &'a [u8],
    given: usize,
}

impl Counted<'_> {
    /// Up to `buf.len()` bytes, as a UART driver gives them.
    fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.bytes.len() - self.given).min(3);
        buf[..n].copy_from_slice(&self.bytes[self.given..self.given + n]);
        self.given += n;
        n
    }
}

/// Drives a checker from a reader that ends: what a streaming decoder does.
fn pull<const N: usize>(
    ty: &CompiledType<'_, N>,
    reader: &mut Counted<'_>,
    options: Options,
    scratch: &mut [u8],
) -> Result<Report, Error> {
    let mut checker = Checker::new(ty, options, scratch);
    loop {
        if let Need::Done = checker.next()? {
            return Ok(checker.report());
        }
        let buf = checker.unfilled();
        let n = reader.read(buf);
        if n == 0 {
            checker.end()?;
        } else {
            checker.filled(n)?;
        }
    }
}

#[test]
fn hostile_counts_read_only_what_arrives_and_allocate_nothing() {
    let everything = Options::BARE.with_limits(Limits::uniform(WIRE_MAX));
    // 2^32 - 1 elements claimed, 8 bytes sent.
    let mut list = u32::MAX.to_le_bytes().to_vec();
    list.extend([1, 2, 3, 4]);
    let list_ty = CompiledType::<4>::parse("list<u32>").unwrap();
    let bools_ty = CompiledType::<4>::parse("list<bool>").unwrap();
    let strs_ty = CompiledType::<4>::parse("list<str>").unwrap();
    let dir = claiming_directory(1 << 32);
    let dir_ty = CompiledType::<4>::parse("tensors").unwrap();
    let mut scratch = [0u8; 1024];
    let bytes = allocated_by(|| {
        for ty in [&list_ty, &bools_ty, &strs_ty] {
            let mut reader = Counted {
                bytes: &list,
                given: 0,
            };
            let err = pull(ty, &mut reader, everything, &mut scratch).unwrap_err();
            assert_eq!(err.code(), Some(Code::Eof));
            assert_eq!(err.offset(), Some(0));
            assert_eq!(reader.given, list.len(), "read past what arrived");
            assert_eq!(
                seen(Err(err)),
                seen(ty.check(&list, everything)),
                "the whole-buffer check's error"
            );
        }
        let mut reader = Counted {
            bytes: &dir,
            given: 0,
        };
        let err = pull(&dir_ty, &mut reader, everything, &mut scratch).unwrap_err();
        assert_eq!(seen(Err(err)), seen(dir_ty.check(&dir, everything)));
        assert_eq!(err.code(), Some(Code::Eof));
        assert_eq!(reader.given, dir.len());
    });
    assert_eq!(bytes, 0, "the checker allocated {bytes} bytes");
}

#[test]
fn a_stream_that_ends_early_is_eof() {
    let mut block = vec![0u8; 4096];
    let values = [1.5f32, 2.5, -3.0];
    let dir = Directory::build(
        &[TensorSpec::from_host(&[3], &values).named("w")],
        &mut block,
    )
    .unwrap();
    let mut message = vec![9u8, 0, 0, 0, b'm', b'o', b'd', b'e', b'l'];
    message.truncate(4 + 1);
    message[0] = 5;
    message.extend(b"odel");
    message.extend(dir.as_bytes());
    let ty = CompiledType::<8>::parse("struct{name:str,w:tensors,}").unwrap();
    assert!(ty.check(&message, Options::BARE).is_ok());
    let mut scratch = [0u8; 512];
    for cut in 0..message.len() {
        let short = &message[..cut];
        let mut reader = Counted {
            bytes: short,
            given: 0,
        };
        let err = pull(&ty, &mut reader, Options::BARE, &mut scratch).unwrap_err();
        assert_eq!(err.code(), Some(Code::Eof), "cut at {cut}");
        assert_eq!(seen(Err(err)), seen(ty.check(short, Options::BARE)));
    }
    let mut reader = Counted {
        bytes: &message,
        given: 0,
    };
    let report = pull(&ty, &mut reader, Options::BARE, &mut scratch).unwrap();
    assert_eq!(report.payload, 12);
    assert_eq!(report.read + report.payload, message.len() as u64);
}

/// A source that records every range it is asked for.
struct Logged<R> {
    inner: R,
    ranges: Vec<(u64, usize)>,
}

impl<R: ReadAt> ReadAt for &mut Logged<R> {
    fn len(&self) -> kiln_nostd::Result<u64> {
        self.inner.len()
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> kiln_nostd::Result<()> {
        self.ranges.push((offset, buf.len()));
        self.inner.read_at(offset, buf)
    }
}

#[test]
fn by_ranges_a_256_mib_payload_costs_its_head() {
    let count: u64 = 64 << 20; // u32 elements: 256 MiB
    let head = claiming_directory(count);
    let path = std::env::temp_dir().join(format!("kiln-stream-sparse-{}.kiln", std::process::id()));
    {
        let file = std::fs::File::create(&path).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&file, &head, 0).unwrap();
        file.set_len(head.len() as u64 + count * 4).unwrap();
    }
    let ty = CompiledType::<4>::parse("tensors").unwrap();
    let mut logged = Logged {
        inner: std::fs::File::open(&path).unwrap(),
        ranges: Vec::new(),
    };
    let mut scratch = [0u8; 1024];
    let checked = check_at(&ty, &mut logged, Options::BARE, &mut scratch);
    std::fs::remove_file(&path).unwrap();
    let report = checked.unwrap();
    let read: usize = logged.ranges.iter().map(|r| r.1).sum();
    println!(
        "256 MiB payload: {read} bytes read in {} ranges, {} skipped",
        logged.ranges.len(),
        report.payload
    );
    assert!(read < 1 << 20, "read {read} bytes");
    assert_eq!(read as u64, report.read);
    assert_eq!(report.payload, count * 4);
    // Each range once, in order, inside the file.
    for pair in logged.ranges.windows(2) {
        assert!(pair[0].0 + pair[0].1 as u64 <= pair[1].0);
    }
}
