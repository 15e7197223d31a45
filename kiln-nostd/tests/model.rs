//! The inspection model of Kiln files: opened by ranges (the sans-I/O
//! opener, each read given after it was asked) and in memory, every golden
//! case gives the same model, and the verdict, code and offset of the
//! whole-buffer `check`. Reads stay within the file and never repeat a
//! byte in order; payload interiors are never read.
#![cfg(all(feature = "alloc", not(target_arch = "wasm32")))]

use kiln_nostd::inspect::{open_bytes, recognise, InPlace, Inspection, KilnOpener, Reading};
use kiln_nostd::{CompiledType, Directory, Options, TensorSpec};

#[path = "support/cases.rs"]
mod golden_cases;
use golden_cases::cases;

fn reading_of(type_text: &str, options: Options) -> Reading {
    let mut reading = recognise(&[], Some(type_text), Some(options.is_framed()), None).unwrap();
    reading.limits = options.limits;
    reading
}

/// Opens `bytes` by ranges, giving each read when asked; also returns the
/// ranges read.
fn by_ranges(
    bytes: &[u8],
    reading: &Reading,
) -> (
    Result<Inspection, kiln_nostd::Error>,
    Vec<std::ops::Range<u64>>,
) {
    let mut reads = Vec::new();
    let mut opener = match KilnOpener::new("f", bytes.len() as u64, reading.clone()) {
        Ok(o) => o,
        Err(e) => return (Err(e), reads),
    };
    loop {
        match opener.next_read() {
            Ok(Some(r)) => {
                assert!(r.start < r.end && r.end <= bytes.len() as u64, "{r:?}");
                reads.push(r.clone());
                opener
                    .give(r.start, &bytes[r.start as usize..r.end as usize])
                    .unwrap();
            }
            Ok(None) => break,
            Err(e) => return (Err(e), reads),
        }
    }
    let (mut model, stats) = opener.finish().unwrap();
    assert_eq!(stats.requests as usize, reads.len());
    model.read_metadata().unwrap();
    (Ok(model), reads)
}

#[test]
fn every_golden_case_opens_as_check_says_by_ranges_and_in_memory() {
    let mut accepted = 0;
    for case in cases() {
        let ty = CompiledType::<512>::parse(&case.type_text).unwrap();
        let want = ty.check(&case.bytes, case.options);
        let reading = reading_of(&case.type_text, case.options);
        let in_memory = open_bytes("f", &case.bytes, &reading).and_then(|(mut m, _)| {
            m.read_metadata()?;
            Ok(m)
        });
        let (ranged, _) = by_ranges(&case.bytes, &reading);
        match want {
            Ok(()) => {
                let m = in_memory.unwrap_or_else(|e| panic!("{}: {e}", case.name));
                assert_eq!(Ok(&m), ranged.as_ref(), "{}", case.name);
                accepted += 1;
            }
            Err(e) => {
                let key = |r: Result<Inspection, kiln_nostd::Error>| {
                    r.map(|_| ())
                        .map_err(|e| (e.code(), e.offset(), e.tensor()))
                };
                let want = Err((e.code(), e.offset(), e.tensor()));
                assert_eq!(key(in_memory), want, "{} in memory", case.name);
                assert_eq!(key(ranged), want, "{} by ranges", case.name);
            }
        }
    }
    assert!(accepted > 20, "{accepted}");
}

/// A message of many directories far apart: each head is read where it
/// is, payloads are skipped, and the reads follow each other.
#[test]
fn payloads_are_never_read_and_bytes_are_read_once() {
    let big = vec![0x5au8; 3 << 20];
    let mut block = vec![0u8; (3 << 20) + 4096];
    let dir = Directory::build(
        &[TensorSpec::from_host(&[big.len() as u64], &big[..]).named("big")],
        &mut block,
    )
    .unwrap();
    let block = dir.as_bytes().to_vec();
    // list<tensors> of three such blocks.
    let mut file = 3u32.to_le_bytes().to_vec();
    for _ in 0..3 {
        file.extend_from_slice(&block);
    }
    let reading = reading_of("list<tensors>", Options::BARE);
    let (model, reads) = by_ranges(&file, &reading);
    let model = model.unwrap();
    assert_eq!(model.tensors.len(), 3);
    for (t, d) in model.tensors.iter().zip(&model.directories) {
        assert_eq!(t.offset, d.payload_offset);
        assert_eq!(t.in_place, InPlace::Yes);
    }
    let read: u64 = reads.iter().map(|r| r.end - r.start).sum();
    // The first read (2 MiB) holds the first head; each later head is a
    // small read: far less than the 9 MiB of payloads.
    assert!(
        read < (2 << 20) + 4 * (1 << 20),
        "{read} bytes in {reads:?}"
    );
    for pair in reads.windows(2) {
        assert!(pair[1].start >= pair[0].end, "overlap: {reads:?}");
    }
    // The payload interiors past the first read are never read: a read
    // ahead after a head reaches at most 64 KiB into its payload.
    for t in &model.tensors[1..] {
        let inside = t.offset + (64 << 10)..t.offset + t.length;
        assert!(
            reads
                .iter()
                .all(|r| r.end <= inside.start || r.start >= inside.end),
            "{reads:?} reads inside {inside:?}"
        );
    }
}

#[test]
fn a_read_of_other_bytes_than_asked_is_refused() {
    let file = Directory::EMPTY.as_bytes();
    let reading = reading_of("tensors", Options::BARE);
    let mut opener = KilnOpener::new("f", file.len() as u64, reading).unwrap();
    let r = opener.next_read().unwrap().unwrap();
    assert!(opener.give(r.start, &file[..1]).is_err());
    assert_eq!(opener.next_read().unwrap(), Some(r.clone()));
    opener.give(r.start, file).unwrap();
    assert_eq!(opener.next_read().unwrap(), None);
}

/// An opener that lets the first read decide the type: the same model as
/// recognising the bytes first, and one read fewer than reading twice.
#[test]
fn the_first_read_decides_how_the_file_is_read() {
    for case in cases().into_iter().filter(|c| c.expect.is_none()) {
        let given_type =
            (case.type_text != "tensors" || case.framed()).then_some(case.type_text.as_str());
        let mut opener = KilnOpener::recognising(
            "f",
            case.bytes.len() as u64,
            given_type,
            Some(case.framed()),
            Some(case.limits()),
        )
        .unwrap();
        let mut first = None;
        while let Some(r) = opener.next_read().unwrap() {
            first.get_or_insert(r.clone());
            opener
                .give(r.start, &case.bytes[r.start as usize..r.end as usize])
                .unwrap();
        }
        assert_eq!(
            first.map(|r| r.start),
            (!case.bytes.is_empty()).then_some(0)
        );
        let (model, _) = opener.finish().unwrap();
        let reading = reading_of(&case.type_text, case.options);
        let (want, _) = open_bytes("f", &case.bytes, &reading).unwrap();
        assert_eq!(model, want, "{}", case.name);
    }
    // A framed value of a hash no known type has, with no type given: the
    // first read's verdict is SCHEMA at the hash.
    let mut frame = b"KLN0\0\0\0\0".to_vec();
    frame.extend(0x1234u64.to_le_bytes());
    let mut opener = KilnOpener::recognising("f", 16, None, None, None).unwrap();
    let r = opener.next_read().unwrap().unwrap();
    let e = opener.give(r.start, &frame).unwrap_err();
    assert_eq!(
        (e.code(), e.offset()),
        (Some(kiln_nostd::Code::Schema), Some(8))
    );
}
