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
use kiln_nostd::stream::{check_at, scratch_bound, scratch_for, Checker, Need, ReadAt, Report};
use kiln_nostd::{
    check, Code, CompiledType, Detail, Directory, Error, Kind, Limits, Options, Refusal,
    TensorSpec, WIRE_MAX,
};

#[global_allocator]
static GLOBAL: Counting = Counting;

const NODES: usize = 512;

#[path = "support/cases.rs"]
mod golden_cases;
use golden_cases::cases;

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
    let checker = if known {
        Checker::with_len(ty, options, scratch, bytes.len() as u64)
    } else {
        Checker::new(ty, options, scratch)
    };
    drive(checker, bytes, cuts)
}

/// Feeds `bytes` cut at `cuts` to `checker`, then ends the input.
fn drive<const N: usize, const D: usize>(
    mut checker: Checker<'_, '_, '_, N, D>,
    bytes: &[u8],
    cuts: &[usize],
) -> (Result<(), Error>, Report) {
    let mut from = 0;
    for &cut in cuts.iter().chain([bytes.len()].iter()) {
        let piece = &bytes[from..cut.max(from)];
        from = cut.max(from);
        match checker.feed(piece) {
            Ok(n) if n < piece.len() => {
                // Done before the bytes ran out: only with a known length,
                // which then equals the bytes given.
                assert!(matches!(checker.need(), Ok(Need::Done)));
                break;
            }
            Ok(_) => {}
            Err(e) => return (Err(e), checker.report()),
        }
    }
    let result = loop {
        match checker.need() {
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

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

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

/// The verdict of a check of `bytes` in `scratch`, keeping the record
/// image (as `decode_from` does) or not, the length known or not.
fn sized<const N: usize>(
    ty: &CompiledType<'_, N>,
    bytes: &[u8],
    options: Options,
    record: bool,
    known: bool,
    scratch: &mut [u8],
) -> Result<(), Error> {
    let len = known.then_some(bytes.len() as u64);
    let checker = Checker::with_depth::<64>(ty, options, scratch, len);
    let checker = if record {
        checker.keeping_record()
    } else {
        checker
    };
    drive(checker, bytes, &[]).0
}

#[test]
fn the_scratch_scratch_for_names_is_exact_for_every_golden_case() {
    let mut roomy = vec![0u8; 1 << 16];
    let (mut checked, mut refused_short) = (0, 0);
    for case in cases() {
        let ty = CompiledType::<NODES>::parse(&case.type_text).unwrap();
        let want = seen(check(&case.type_text, &case.bytes, case.options));
        let need = scratch_for(&ty, &case.bytes, case.options);
        for (record, figure) in [(false, need.check), (true, need.decode)] {
            // The figure is the report of a check with room to spare.
            let (got, report) = {
                let len = Some(case.bytes.len() as u64);
                let checker = Checker::with_depth::<64>(&ty, case.options, &mut roomy, len);
                let checker = if record {
                    checker.keeping_record()
                } else {
                    checker
                };
                drive(checker, &case.bytes, &[])
            };
            assert_eq!(seen(got), want, "{}", case.name);
            assert_eq!(
                report.scratch_needed, figure,
                "{}: record {record}",
                case.name
            );
            // An invalid message's figure is the length known's: without
            // the length, a fault may wait for the end, which a refusal
            // does too.
            for known in [true, false].into_iter().filter(|&k| k || want.is_ok()) {
                let what = format!("{}: record {record}, known {known}", case.name);
                let mut exact = vec![0u8; figure];
                let got = sized(&ty, &case.bytes, case.options, record, known, &mut exact);
                assert_eq!(seen(got), want, "{what}: scratch of {figure}");
                checked += 1;
                if figure == 0 {
                    continue;
                }
                let mut short = vec![0u8; figure - 1];
                let got = sized(&ty, &case.bytes, case.options, record, known, &mut short);
                let refused = got.unwrap_err();
                assert_eq!(refused.refusal(), Some(Refusal::Capacity), "{what}");
                match refused.detail() {
                    Detail::Cap { claimed, cap } => {
                        assert_eq!(cap, figure as u64 - 1, "{what}");
                        assert!(claimed > cap && claimed <= figure as u64, "{what}");
                    }
                    // Feature no-error-text keeps no numbers.
                    other => assert_eq!(other, Detail::None, "{what}"),
                }
                refused_short += 1;
            }
        }
    }
    println!("{checked} checks with the exact figure, {refused_short} refused one byte short");
    assert!(refused_short > 400, "{refused_short}");
}

#[test]
fn the_bound_from_the_type_covers_every_golden_case() {
    // Under the case's caps, and under small ones, where the bound is
    // close: a message within them never needs more (one past them never
    // gets far enough to).
    let (mut covered, mut within, mut exact) = (0, 0, 0);
    for case in cases() {
        let ty = CompiledType::<NODES>::parse(&case.type_text).unwrap();
        let small = [0, 1, 2, 3, 4, 8, 16, 64, 256, 4096].map(Limits::uniform);
        for limits in [case.options.limits].into_iter().chain(small) {
            let options = case.options.with_limits(limits);
            let need = scratch_for(&ty, &case.bytes, options);
            let bound = scratch_bound(&ty, options);
            let what = format!("{} under {limits:?}: {need:?}, bound {bound:?}", case.name);
            assert!(need.check <= bound.check, "{what}");
            assert!(need.decode <= bound.decode, "{what}");
            covered += 1;
            if check(&case.type_text, &case.bytes, options).is_ok() {
                within += 1;
                exact += usize::from(need == bound);
            }
        }
    }
    println!("{covered} cases and caps within the type's bound; of {within} valid, {exact} at it");
    assert!(exact > 100, "{exact}");

    // Fixed-size values all hold the same: the bound is the figure.
    let ty = CompiledType::<8>::parse("struct{id:u32,at:f64,flags:u8,}").unwrap();
    let message = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 7];
    for options in [Options::BARE, Options::FRAMED] {
        let mut bytes = Vec::new();
        if options.is_framed() {
            bytes.extend_from_slice(b"KLN0\0\0\0\0");
            bytes.extend_from_slice(&ty.hash().to_le_bytes());
        }
        bytes.extend_from_slice(&message);
        assert!(check(&ty.to_string(), &bytes, options).is_ok());
        assert_eq!(
            scratch_for(&ty, &bytes, options),
            scratch_bound(&ty, options)
        );
    }
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
        if let Need::Done = checker.need()? {
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
    fn size(&self) -> kiln_nostd::Result<u64> {
        self.inner.size()
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> kiln_nostd::Result<()> {
        self.ranges.push((offset, buf.len()));
        self.inner.read_at(offset, buf)
    }
}

#[cfg(all(feature = "std", unix))]
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

// ---------------------------------------------------------------------------
// Over embedded-io: blocking and async readers

/// A reader that gives a seeded number of bytes per read (1 to 17).
#[cfg(feature = "embedded-io")]
struct Uart<'a> {
    bytes: &'a [u8],
    given: usize,
    rng: Rng,
}

#[cfg(feature = "embedded-io")]
impl<'a> Uart<'a> {
    fn new(bytes: &'a [u8], seed: u64) -> Self {
        Uart {
            bytes,
            given: 0,
            rng: Rng(seed | 1),
        }
    }

    fn give(&mut self, buf: &mut [u8]) -> usize {
        let size = 1 + (self.rng.next() % 17) as usize;
        let n = buf.len().min(self.bytes.len() - self.given).min(size);
        buf[..n].copy_from_slice(&self.bytes[self.given..self.given + n]);
        self.given += n;
        n
    }
}

#[cfg(feature = "embedded-io")]
impl embedded_io::ErrorType for Uart<'_> {
    type Error = core::convert::Infallible;
}

#[cfg(feature = "embedded-io")]
impl embedded_io::Read for Uart<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        Ok(self.give(buf))
    }
}

/// Every payload byte, at its place in its block, as a flash writer would
/// store it, and each head at the block's start.
#[cfg(feature = "embedded-io")]
#[derive(Default)]
struct Flash {
    blocks: Vec<Vec<u8>>,
    runs: usize,
}

#[cfg(feature = "embedded-io")]
impl kiln_nostd::stream::PayloadSink for Flash {
    fn head(&mut self, block: u32, head: &[u8]) -> kiln_nostd::Result<()> {
        assert_eq!(
            block as usize,
            self.blocks.len(),
            "heads in order, once each"
        );
        self.blocks.push(head.to_vec());
        Ok(())
    }

    fn payload(&mut self, part: kiln_nostd::stream::Part, bytes: &[u8]) -> kiln_nostd::Result<()> {
        let block = &mut self.blocks[part.block as usize];
        let end = part.block_offset as usize + bytes.len();
        if block.len() < end {
            block.resize(end, 0);
        }
        block[part.block_offset as usize..end].copy_from_slice(bytes);
        self.runs += 1;
        Ok(())
    }
}

#[cfg(feature = "embedded-io")]
fn kiln_error<E: core::fmt::Debug>(e: kiln_nostd::stream::ReadError<E>) -> Error {
    match e {
        kiln_nostd::stream::ReadError::Kiln(e) => e,
        kiln_nostd::stream::ReadError::Io(e) => panic!("reader failed: {e:?}"),
    }
}

#[cfg(feature = "embedded-io")]
#[test]
fn embedded_io_reads_give_checks_error_and_every_payload_byte() {
    use kiln_nostd::stream::check_from;
    let mut scratch = vec![0u8; 1 << 16];
    for (k, case) in cases().into_iter().enumerate() {
        let ty = CompiledType::<NODES>::parse(&case.type_text).unwrap();
        let want = check(&case.type_text, &case.bytes, case.options);
        let mut flash = Flash::default();
        let uart = Uart::new(&case.bytes, k as u64);
        let got = check_from(&ty, case.options, uart, &mut scratch, &mut flash).map_err(kiln_error);
        assert_eq!(seen(got.map(|_| ())), seen(want), "{}", case.name);
        if want.is_ok() && case.type_text == "tensors" && !case.options.is_framed() {
            // The stored block is the message's, byte for byte.
            assert_eq!(flash.blocks.len(), 1);
            let mut stored = flash.blocks[0].clone();
            stored.resize(case.bytes.len(), 0);
            assert_eq!(stored, case.bytes, "{}", case.name);
        }
    }
}

/// An async reader that is pending before every read (waking itself), so
/// the decoder's future is really suspended and resumed.
#[cfg(feature = "embedded-io-async")]
struct AsyncUart<'a> {
    inner: Uart<'a>,
    pendings: u64,
}

#[cfg(feature = "embedded-io-async")]
impl embedded_io::ErrorType for AsyncUart<'_> {
    type Error = core::convert::Infallible;
}

#[cfg(feature = "embedded-io-async")]
impl embedded_io_async::Read for AsyncUart<'_> {
    async fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let mut yielded = false;
        core::future::poll_fn(|cx| {
            if yielded {
                core::task::Poll::Ready(())
            } else {
                yielded = true;
                cx.waker().wake_by_ref();
                core::task::Poll::Pending
            }
        })
        .await;
        self.pendings += 1;
        Ok(self.inner.give(buf))
    }
}

/// Polls `future` to completion with a waker that does nothing (the
/// reader wakes itself): a minimal executor.
#[cfg(feature = "embedded-io-async")]
fn block_on<F: core::future::Future>(future: F) -> (F::Output, u64) {
    let mut future = core::pin::pin!(future);
    let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
    let mut polls = 0;
    loop {
        polls += 1;
        if let core::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return (out, polls);
        }
    }
}

#[cfg(feature = "embedded-io-async")]
#[test]
fn embedded_io_async_reads_give_checks_error() {
    use kiln_nostd::stream::{check_from_async, Discard};
    let mut scratch = vec![0u8; 1 << 16];
    let mut suspended = 0;
    for (k, case) in cases().into_iter().enumerate() {
        let ty = CompiledType::<NODES>::parse(&case.type_text).unwrap();
        let want = check(&case.type_text, &case.bytes, case.options);
        let mut uart = AsyncUart {
            inner: Uart::new(&case.bytes, 7 * k as u64),
            pendings: 0,
        };
        let (got, polls) = block_on(check_from_async(
            &ty,
            case.options,
            &mut uart,
            &mut scratch,
            &mut Discard,
        ));
        assert_eq!(
            seen(got.map(|_| ()).map_err(kiln_error)),
            seen(want),
            "{}",
            case.name
        );
        assert!(polls > uart.pendings, "{}: polled {polls} times", case.name);
        suspended += uart.pendings;
    }
    assert!(suspended > 1000, "{suspended}");
}

#[cfg(all(feature = "embedded-io", feature = "derive"))]
mod record {
    use super::*;
    use kiln_nostd::stream::decode_from;
    use kiln_nostd::{to_frame_slice, Dtype, Frozen, PodList};

    /// A model update: metadata fields around a tensors field.
    #[derive(Frozen, Debug)]
    struct Update<'a> {
        version: u32,
        name: &'a str,
        weights: Directory<'a>,
        scale: PodList<'a, f32>,
        crc: u32,
    }

    const UPDATE: CompiledType<'static, 16> = CompiledType::from_schema(&Update::SCHEMA);

    #[test]
    fn a_record_with_a_tensors_field_streams_its_fields_and_its_tensors() {
        let w: Vec<f32> = (0..300).map(|i| i as f32 * 0.5).collect();
        let mask = [1u8, 0, 1];
        let mut block = vec![0u8; 4096];
        let dir = Directory::build(
            &[
                TensorSpec::new(Dtype::Bool, &[3], &mask).named("mask"),
                TensorSpec::from_host(&[300], &w).named("w"),
            ],
            &mut block,
        )
        .unwrap();
        let sent = Update {
            version: 42,
            name: "encoder",
            weights: dir.clone(),
            scale: PodList::from_slice(&[0.5, 2.0]),
            crc: 0xDEAD_BEEF,
        };
        let mut buf = vec![0u8; 8192];
        let message = to_frame_slice(&sent, &mut buf).unwrap().to_vec();

        let mut scratch = vec![0u8; 1024];
        let mut flash = Flash::default();
        let mut place = Update {
            version: 0,
            name: "",
            weights: Directory::EMPTY,
            scale: PodList::from_slice(&[]),
            crc: 0,
        };
        let report = decode_from(
            &UPDATE,
            Options::FRAMED,
            Uart::new(&message, 3),
            &mut scratch,
            &mut flash,
            &mut place,
        )
        .map_err(kiln_error)
        .unwrap();
        assert_eq!(
            (place.version, place.name, place.crc),
            (42, "encoder", 0xDEAD_BEEF)
        );
        assert_eq!(place.scale.iter().collect::<Vec<_>>(), [0.5, 2.0]);
        assert_eq!(place.weights.as_bytes(), Directory::EMPTY.as_bytes());
        // The tensors went to the sink: the stored block parses in place.
        let stored = Directory::parse(&flash.blocks[0]).unwrap();
        assert_eq!(stored.as_bytes(), dir.as_bytes());
        let mut out = [0f32; 300];
        assert_eq!(
            stored.by_name("w").unwrap().view_or_copy(&mut out).unwrap(),
            &w[..]
        );
        // The 1,200 payload bytes of `w` passed through, never held.
        assert_eq!(report.payload, 1200);
        assert!(report.scratch_needed < message.len(), "{report:?}");
        println!(
            "record of {} bytes: scratch {} bytes, {} payload runs",
            message.len(),
            report.scratch_needed,
            flash.runs
        );

        // The scratch the message needs, from its bytes: exactly what the
        // decode used, and one byte fewer is refused, naming a lower bound.
        let need = scratch_for(&UPDATE, &message, Options::FRAMED);
        assert_eq!(need.decode, report.scratch_needed);
        assert!(need.check < need.decode, "{need:?}");
        for (size, works) in [(need.decode, true), (need.decode - 1, false), (64, false)] {
            let mut scratch = vec![0u8; size];
            let mut place = Update {
                version: 0,
                name: "",
                weights: Directory::EMPTY,
                scale: PodList::from_slice(&[]),
                crc: 0,
            };
            let got = decode_from(
                &UPDATE,
                Options::FRAMED,
                Uart::new(&message, 7),
                &mut scratch,
                &mut Flash::default(),
                &mut place,
            )
            .map_err(kiln_error);
            if works {
                assert_eq!(got.unwrap().scratch_needed, need.decode);
                continue;
            }
            let refused = got.unwrap_err();
            assert_eq!(refused.refusal(), Some(Refusal::Capacity), "{size}");
            if let Detail::Cap { claimed, cap } = refused.detail() {
                assert_eq!(cap, size as u64);
                assert!(claimed > cap && claimed <= need.decode as u64, "{refused}");
                assert!(refused.to_string().contains("at least"), "{refused}");
            }
        }
        let mut scratch = vec![0u8; need.check];
        let checked = kiln_nostd::stream::check_from(
            &UPDATE,
            Options::FRAMED,
            Uart::new(&message, 7),
            &mut scratch,
            &mut Flash::default(),
        )
        .map_err(kiln_error)
        .unwrap();
        assert_eq!(checked.scratch_needed, need.check);

        // A flipped bit in a bool payload byte: TYPE, as check says.
        let mask_at = message.len() - 4 - 12 - 1200 - 64;
        let mut bad = message.clone();
        assert_eq!(bad[mask_at + 1], 0);
        bad[mask_at + 1] = 2;
        let want = check(&UPDATE.to_string(), &bad, Options::FRAMED).unwrap_err();
        let (mut scratch, mut place) = (vec![0u8; 1024], Update { name: "", ..place });
        let got = decode_from(
            &UPDATE,
            Options::FRAMED,
            Uart::new(&bad, 5),
            &mut scratch,
            &mut Flash::default(),
            &mut place,
        )
        .map_err(kiln_error)
        .unwrap_err();
        assert_eq!(got, want);
        assert_eq!(got.code(), Some(Code::Type));

        // Another record's type is refused before a byte is read.
        let other = CompiledType::<16>::parse("struct{version:u32,}").unwrap();
        let (mut scratch, mut place) = (vec![0u8; 1024], Update { name: "", ..place });
        let refused = decode_from(
            &other,
            Options::FRAMED,
            Uart::new(&message, 3),
            &mut scratch,
            &mut Flash::default(),
            &mut place,
        )
        .map_err(kiln_error)
        .unwrap_err();
        assert_eq!(refused.refusal(), Some(Refusal::WrongValue));
    }
}

/// The verdict of a checker that follows at most `D` containers, fed in
/// one piece and one byte at a time, the length known and not.
fn at_depth<const D: usize>(
    case: &golden_cases::Case,
    scratch: &mut [u8],
) -> Vec<Result<(), Seen>> {
    let ty = CompiledType::<NODES>::parse(&case.type_text).unwrap();
    let n = case.bytes.len();
    let bytewise: Vec<usize> = (1..n).collect();
    let mut out = Vec::new();
    for cuts in [&[][..], &bytewise[..]] {
        for known in [true, false] {
            let len = known.then_some(n as u64);
            let checker = Checker::with_depth::<D>(&ty, case.options, scratch, len);
            out.push(seen(drive(checker, &case.bytes, cuts).0));
        }
    }
    out
}

#[test]
fn a_shallower_checker_gives_the_same_verdict_or_refuses_never_another() {
    let mut scratch = vec![0u8; 1 << 16];
    let mut refused = std::collections::BTreeMap::<usize, usize>::new();
    let mut deep = 0;
    for case in cases() {
        let want = seen(check(&case.type_text, &case.bytes, case.options));
        let runs = [
            (0, at_depth::<0>(&case, &mut scratch)),
            (1, at_depth::<1>(&case, &mut scratch)),
            (2, at_depth::<2>(&case, &mut scratch)),
            (3, at_depth::<3>(&case, &mut scratch)),
            (8, at_depth::<8>(&case, &mut scratch)),
            (63, at_depth::<63>(&case, &mut scratch)),
            (64, at_depth::<64>(&case, &mut scratch)),
            (100, at_depth::<100>(&case, &mut scratch)),
        ];
        for (depth, got) in &runs {
            for got in got {
                if *got == want {
                    continue;
                }
                // Anything else is the refusal, at the container past the
                // checker's depth, and only below the format's 64.
                let Err((kind, _, _, detail, fault)) = got else {
                    panic!("{}: depth {depth}: accepted, want {want:?}", case.name);
                };
                assert!(*depth < 64, "{}: depth {depth}: {got:?}", case.name);
                assert_eq!(*kind, Kind::Refused(Refusal::Capacity), "{}", case.name);
                // The sentence and the numbers, unless no-error-text drops
                // them.
                if !cfg!(feature = "no-error-text") {
                    assert_eq!(*fault, "nested deeper than the checker's depth");
                    assert_eq!(
                        *detail,
                        Detail::Cap {
                            claimed: *depth as u64 + 1,
                            cap: *depth as u64
                        },
                        "{}",
                        case.name
                    );
                }
                *refused.entry(*depth).or_default() += 1;
            }
        }
        // Once a depth gives the verdict, every larger one does.
        let gives = |got: &Vec<Result<(), Seen>>| got.iter().all(|g| *g == want);
        let first = runs.iter().position(|(_, got)| gives(got)).unwrap();
        assert!(
            runs[first..].iter().all(|(_, got)| gives(got)),
            "{}",
            case.name
        );
        if runs[first].0 > 8 {
            deep += 1;
        }
    }
    // Refusals at every depth tried below 64, and the DEPTH probes, nested
    // 64 deep or more, need the format's depth.
    println!("refusals by the checker's depth: {refused:?}");
    assert_eq!(
        refused.keys().copied().collect::<Vec<_>>(),
        [0, 1, 2, 3, 8, 63]
    );
    assert!(deep >= 5, "{deep}");
}

#[test]
fn a_shallow_checker_is_small() {
    let full = core::mem::size_of::<Checker<'_, '_, '_, 16>>();
    let four = core::mem::size_of::<Checker<'_, '_, '_, 16, 4>>();
    println!("Checker state: {full} bytes for 64 containers, {four} for 4");
    assert!(four * 4 < full, "{four} of {full}");
}

#[test]
fn the_checker_state_is_small() {
    let size = core::mem::size_of::<Checker<'_, '_, '_, 16>>();
    println!("Checker state: {size} bytes");
    assert!(size < 4096, "{size}");
}

/// The path of each head the checker gives, as text, with the record
/// image kept or not.
#[cfg(feature = "inspect")]
fn head_paths(
    ty: &CompiledType<'_, NODES>,
    bytes: &[u8],
    options: Options,
    keep: bool,
) -> Vec<String> {
    use kiln_nostd::inspect::{Path, Seg};
    use kiln_nostd::stream::Step;
    let mut scratch = vec![0u8; bytes.len() + 256];
    let checker = Checker::with_len(ty, options, &mut scratch, bytes.len() as u64);
    let mut checker = if keep {
        checker.keeping_record()
    } else {
        checker
    };
    let mut paths = Vec::new();
    loop {
        match checker.need().unwrap() {
            Need::Bytes { at, len, .. } => {
                checker
                    .feed(&bytes[at as usize..at as usize + len])
                    .unwrap();
            }
            Need::Payload { len, .. } => checker.skip(len).unwrap(),
            Need::End => checker.end().unwrap(),
            Need::Done => return paths,
        }
        if checker.take_head().is_some() {
            let mut path = Path::root();
            for step in checker.path() {
                path.push(match step {
                    Step::Field(name) => Seg::Field(name.into()),
                    Step::Index(i) => Seg::Index(i),
                    Step::Key(key) => Seg::Key(key.into()),
                });
            }
            paths.push(path.text());
        }
    }
}

#[cfg(feature = "inspect")]
#[test]
fn each_head_has_the_path_the_walk_gives_its_directory() {
    // The model's directories: the checker's heads, which its metadata
    // read checks against the walk of the record image (same paths, same
    // places), so an open that succeeds has the walk's paths.
    use kiln_nostd::inspect::{open_bytes, Reading};
    let walked = |ty: &CompiledType<'_, NODES>, bytes: &[u8], options: Options| {
        let reading = Reading {
            type_text: ty.to_string(),
            framed: options.is_framed(),
            limits: options.limits,
            known: None,
        };
        let (mut model, _) = open_bytes("case", bytes, &reading).unwrap();
        model.read_metadata().unwrap();
        let paths: Vec<String> = model
            .directories
            .iter()
            .map(|d| d.path.as_ref().unwrap().text())
            .collect();
        paths
    };
    let mut compared = 0;
    for case in cases().iter().filter(|c| c.expect.is_none()) {
        let ty = CompiledType::<NODES>::parse(&case.type_text).unwrap();
        let want = walked(&ty, &case.bytes, case.options);
        for keep in [false, true] {
            let got = head_paths(&ty, &case.bytes, case.options, keep);
            assert_eq!(got, want, "{}: keep {keep}", case.name);
        }
        compared += want.len();
    }
    assert!(compared > 10, "{compared} directories in the golden cases");

    // Every kind of step: dict keys (escaped in the text), an opt (no
    // step), list elements, struct fields, nested.
    let text = "struct{m:dict<str,opt<tensors>>,l:list<struct{a:u8,t:tensors,}>,e:tensors,}";
    let ty = CompiledType::<NODES>::parse(text).unwrap();
    let empty = Directory::EMPTY.as_bytes();
    let mut bytes = 3u32.to_le_bytes().to_vec();
    for (key, present) in [("a\"b", true), ("m", false), ("z\n", true)] {
        bytes.extend_from_slice(&(key.len() as u32).to_le_bytes());
        bytes.extend_from_slice(key.as_bytes());
        bytes.push(u8::from(present));
        if present {
            bytes.extend_from_slice(empty);
        }
    }
    bytes.extend_from_slice(&3u32.to_le_bytes());
    for a in 0..3u8 {
        bytes.push(a);
        bytes.extend_from_slice(empty);
    }
    bytes.extend_from_slice(empty);
    let want = walked(&ty, &bytes, Options::BARE);
    assert_eq!(
        want,
        [
            r#"m["a\"b"]"#,
            r#"m["z\n"]"#,
            "l[0].t",
            "l[1].t",
            "l[2].t",
            "e"
        ]
    );
    for keep in [false, true] {
        assert_eq!(head_paths(&ty, &bytes, Options::BARE, keep), want);
    }
}
