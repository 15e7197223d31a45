//! The incremental checker against `check`, over every type of
//! `fuzz/types.txt`: split points drawn from the flags byte and the bytes;
//! the length known and not, byte by byte, read by ranges and through an
//! embedded-io reader, each must give `check`'s very error. By ranges it
//! reads only what it reports and never past the buffer; an accepted input
//! passes with exactly the scratch the report names and is refused with a
//! byte less.
#![no_main]

use kiln_fuzz::{split, Ty};
use kiln_nostd::stream::{
    check_at, check_from, scratch_bound, scratch_for, Checker, Discard, Need, ReadAt, ReadError,
};
use kiln_nostd::{Error, Refusal};
use libfuzzer_sys::fuzz_target;

/// An error without the hint that bare bytes look framed.
fn key(result: Result<(), Error>) -> Result<(), String> {
    result.map_err(|e| {
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

fn fed(
    ty: &Ty<'_>,
    bytes: &[u8],
    input: &kiln_fuzz::Input<'_>,
    known: bool,
    cuts: &[usize],
    scratch: &mut [u8],
) -> Result<(), Error> {
    let mut checker = if known {
        Checker::with_len(ty, input.options, scratch, bytes.len() as u64)
    } else {
        Checker::new(ty, input.options, scratch)
    };
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        let piece = &bytes[from..cut.clamp(from, bytes.len())];
        from = cut.clamp(from, bytes.len());
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

/// A source that checks each range lies inside the buffer and counts.
struct Ranges<'a> {
    bytes: &'a [u8],
    read: u64,
}

impl ReadAt for &mut Ranges<'_> {
    fn size(&self) -> kiln_nostd::Result<u64> {
        Ok(self.bytes.len() as u64)
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> kiln_nostd::Result<()> {
        let end = offset as usize + buf.len();
        assert!(
            end <= self.bytes.len(),
            "read {offset}..{end} past {}",
            self.bytes.len()
        );
        buf.copy_from_slice(&self.bytes[offset as usize..end]);
        self.read += buf.len() as u64;
        Ok(())
    }
}

/// An embedded-io reader giving 1 to 16 bytes a read.
struct Uart<'a> {
    bytes: &'a [u8],
    at: usize,
    step: u64,
}

impl embedded_io::ErrorType for Uart<'_> {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for Uart<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        self.step = self
            .step
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let n = buf
            .len()
            .min(self.bytes.len() - self.at)
            .min(1 + (self.step >> 60) as usize);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = split(data) else { return };
    let bytes = input.bytes;
    let ty = Ty::parse(input.type_text).expect("types.txt parses");
    let want = key(ty.check(bytes, input.options));

    let mut h = bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64 ^ u64::from(data[1]), |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    let mut cuts: Vec<usize> = (0..(data[1] >> 1) % 8)
        .map(|_| {
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
            (h % (bytes.len() as u64 + 1)) as usize
        })
        .collect();
    cuts.sort_unstable();
    let every: Vec<usize> = (1..bytes.len()).collect();

    let mut scratch = vec![0u8; bytes.len() + 64];
    for known in [true, false] {
        assert_eq!(
            key(fed(&ty, bytes, &input, known, &cuts, &mut scratch)),
            want,
            "known {known}, cuts {cuts:?}"
        );
    }
    if bytes.len() < 512 {
        assert_eq!(
            key(fed(&ty, bytes, &input, false, &every, &mut scratch)),
            want,
            "byte by byte"
        );
    }
    let mut ranges = Ranges { bytes, read: 0 };
    let report = check_at(&ty, &mut ranges, input.options, &mut scratch);
    if let Ok(report) = &report {
        assert_eq!(report.read, ranges.read);
        assert_eq!(report.read + report.payload, bytes.len() as u64);
    }
    assert_eq!(key(report.map(|_| ())), want, "by ranges");
    let uart = Uart {
        bytes,
        at: 0,
        step: h,
    };
    let through =
        check_from(&ty, input.options, uart, &mut scratch, &mut Discard).map_err(|e| match e {
            ReadError::Kiln(e) => e,
            ReadError::Io(e) => match e {},
        });
    assert_eq!(key(through.map(|_| ())), want, "embedded-io");

    if want.is_ok() {
        let needed = fed_report(&ty, bytes, &input, &mut scratch);
        assert_eq!(
            scratch_for(&ty, bytes, input.options).check,
            needed,
            "scratch_for"
        );
        assert!(
            needed <= scratch_bound(&ty, input.options).check,
            "scratch_bound"
        );
        let mut exact = vec![0u8; needed];
        assert_eq!(
            key(fed(&ty, bytes, &input, false, &cuts, &mut exact)),
            want,
            "scratch {needed}"
        );
        if needed > 0 {
            let mut short = vec![0u8; needed - 1];
            let refused = fed(&ty, bytes, &input, false, &cuts, &mut short).unwrap_err();
            assert_eq!(refused.refusal(), Some(Refusal::Capacity));
        }
    }
});

/// The scratch an accepted input needs.
fn fed_report(
    ty: &Ty<'_>,
    bytes: &[u8],
    input: &kiln_fuzz::Input<'_>,
    scratch: &mut [u8],
) -> usize {
    let mut checker = Checker::new(ty, input.options, scratch);
    checker.feed(bytes).expect("accepted");
    checker.end().expect("accepted");
    checker.report().scratch_needed
}
