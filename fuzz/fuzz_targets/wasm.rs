//! The opens under every `KilnFile` call from JavaScript, and kiln-wasm's
//! element ranges: the core's sans-I/O opener driven by ranges (the path
//! of `openReader`: every read given after it is asked, the checker paused
//! and resumed between them, reads planned ahead) and `open_read_at` (the
//! path of `open` over bytes in memory), for a bare directory, a framed
//! or a plain message of any type of `types.txt`; the metadata read from
//! the record image; then for every tensor `element_bytes` and
//! `widen_range` with element ranges from the input (including huge and
//! overflowing ones, as `widen(index, first, count)` passes them from JS
//! numbers).
//!
//! Oracles: both opens give `check`'s verdict, code and offset on the
//! same bytes, and the same model; every read asked for lies inside the
//! file; every directory and tensor range reported lies inside the file;
//! an element range lies inside its tensor's payload.
//!
//! Input: `[type][flags][cap u32][first u64][count u64][bytes]` (see
//! `kiln_fuzz::split` for the first six bytes). Flag bit 1 opens the bytes
//! followed by zeros up to past 3 MiB, so the path of a large file
//! (payload interiors skipped, reads ahead, the scratch grown) runs too.
#![no_main]

use kiln_fuzz::{split, verdict, Verdict};
use kiln_nostd::inspect::{open_read_at, KilnOpener};
use kiln_nostd::{Framing, Options};
use kiln_wasm::open::{element_bytes, widen_range};
use libfuzzer_sys::fuzz_target;

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
            v.resize((3 << 20) + usize::from(data[0]) * 64, 0);
            v
        };
        &padded
    } else {
        bytes
    };
    let limits = input.options.limits;
    let framed = Some(framing == Framing::Framed);
    let in_memory = open_read_at(
        "f",
        &mut &file[..],
        Some(input.type_text),
        framed,
        Some(limits),
    );
    let by_ranges = (|| {
        let mut opener = KilnOpener::recognising(
            "f",
            file.len() as u64,
            Some(input.type_text),
            framed,
            Some(limits),
        )?;
        while let Some(r) = opener.next_read()? {
            assert!(r.start <= r.end && r.end <= file.len() as u64, "read {r:?}");
            opener.give(r.start, &file[r.start as usize..r.end as usize])?;
        }
        opener.finish()
    })();
    let options = Options { framing, limits };
    let checked = kiln_nostd::check(input.type_text, file, options);
    let compiled = kiln_fuzz::Ty::parse(input.type_text)
        .expect("types.txt parses")
        .check(file, options);
    assert_eq!(
        verdict(&checked, file.len()),
        verdict(&compiled, file.len())
    );
    for opened in [&in_memory, &by_ranges] {
        match opened {
            Ok(_) => assert_eq!(verdict(&compiled, file.len()), Verdict::Accept),
            Err(failed) => {
                let e = compiled
                    .as_ref()
                    .expect_err("open refused what check accepts");
                assert_eq!(
                    (failed.code(), failed.offset()),
                    (e.code(), e.offset()),
                    "open and check disagree: {failed} / {e}"
                );
            }
        }
    }
    let (Ok((mut model, stats)), Ok((ranged, _))) = (in_memory, by_ranges) else {
        return;
    };
    assert_eq!(model, ranged, "the two opens give one model");
    assert!(stats.skipped <= file.len() as u64);
    model
        .read_metadata()
        .expect("an accepted file's metadata reads");
    for m in &model.metadata {
        let _ = m.json();
    }
    let _ = model.json().expect("the JSON form is written");
    for d in &model.directories {
        assert!(d.offset + d.length <= file.len() as u64);
    }
    for t in &model.tensors {
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
