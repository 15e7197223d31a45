//! kiln-wasm's host-buildable entry points, the Rust under every
//! `KilnFile` call from JavaScript: `open` (the check by ranges, through
//! the core's incremental checker, for a bare directory, a framed or a
//! plain message of any type of `types.txt`), then for every tensor
//! `element_bytes` and `widen_range`
//! with element ranges from the input (including huge and overflowing
//! ones, as `widen(index, first, count)` passes them from JS numbers).
//!
//! Oracles: `open` gives `check`'s verdict, code and offset on the same
//! bytes; every directory and tensor range it reports lies inside the
//! file; an element range lies inside its tensor's payload.
//!
//! Input: `[type][flags][cap u32][first u64][count u64][bytes]` (see
//! `kiln_fuzz::split` for the first six bytes). Flag bit 1 opens the bytes
//! followed by zeros up to past 1 MiB through a `ReadAt` that is not a
//! slice and refuses any read outside the file, so the path of a large
//! file (payload interiors skipped, the scratch grown) runs too.
#![no_main]

use kiln_fuzz::{split, verdict, Verdict};
use kiln_nostd::{Framing, Options};
use kiln_wasm::open::{element_bytes, widen_range, ReadAt, FIRST_SCRATCH};
use libfuzzer_sys::fuzz_target;

/// The input's bytes followed by zeros: a file larger than the first
/// scratch.
struct Padded<'a> {
    head: &'a [u8],
    len: usize,
}

impl ReadAt for Padded<'_> {
    fn size(&self) -> kiln_nostd::Result<u64> {
        Ok(self.len as u64)
    }
    fn read_at(&mut self, at: u64, out: &mut [u8]) -> kiln_nostd::Result<()> {
        let at = at as usize;
        assert!(at + out.len() <= self.len, "read outside the file");
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = self.head.get(at + i).copied().unwrap_or(0);
        }
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = split(data) else { return };
    let Some((ranges, bytes)) = input.bytes.split_first_chunk::<16>() else {
        return;
    };
    let first = u64::from_le_bytes(ranges[..8].try_into().unwrap());
    let count = u64::from_le_bytes(ranges[8..].try_into().unwrap());
    let framing = if input.options.is_framed() {
        Framing::Framed
    } else {
        Framing::Bare
    };
    let large = data[1] & 2 == 2;
    let padded;
    let file: &[u8] = if large {
        padded = {
            let mut v = bytes.to_vec();
            v.resize(FIRST_SCRATCH + 4096 + usize::from(data[0]) * 64, 0);
            v
        };
        &padded
    } else {
        bytes
    };
    let limits = input.options.limits;
    let opened = if large {
        let source = Padded {
            head: bytes,
            len: file.len(),
        };
        kiln_wasm::open(source, input.type_text, framing, limits)
    } else {
        kiln_wasm::open(file, input.type_text, framing, limits)
    };
    let options = Options { framing, limits };
    let checked = kiln_nostd::check(input.type_text, file, options);
    let compiled = kiln_fuzz::Ty::parse(input.type_text)
        .expect("types.txt parses")
        .check(file, options);
    assert_eq!(
        verdict(&checked, file.len()),
        verdict(&compiled, file.len())
    );
    match &opened {
        Ok(_) => assert_eq!(verdict(&compiled, file.len()), Verdict::Accept),
        Err(failed) => {
            let e = compiled.expect_err("open refused what check accepts");
            assert_eq!(
                (failed.error.code(), failed.error.offset()),
                (e.code(), e.offset()),
                "open and check disagree: {} / {e}",
                failed.error
            );
        }
    }
    let Ok(opened) = opened else { return };
    assert_eq!(opened.len, file.len() as u64);
    assert!(opened.skipped <= file.len() as u64);
    for d in &opened.directories {
        assert!(d.offset + d.length <= file.len() as u64);
    }
    for t in &opened.tensors {
        let whole = t.range();
        assert!(whole.start <= whole.end && whole.end <= file.len() as u64);
        for (f, c) in [(first, count), (0, count), (first, 16), (0, u64::MAX)] {
            if let Ok((range, skip, total)) = element_bytes(t, f, c) {
                assert!(range.start >= whole.start && range.end <= whole.end);
                assert!(skip <= total);
                let bytes = &file[range.start as usize..range.end as usize];
                let values = widen_range(t, bytes, f, c).expect("widen its own range");
                assert!(values.len() as u64 <= c);
            }
        }
    }
});
