#![cfg(not(target_arch = "wasm32"))]
//! Host tests of the Rust logic under the JS layer: every golden case
//! gives the verdict, code and offset of `kiln_nostd::check`; payload
//! interiors of large files are never read, and skipping them never
//! changes a verdict.

use kiln_nostd::inspect::{open_read_at, Inspection, QuantLink, ReadStats};
use kiln_nostd::Dtype;
use kiln_nostd::{
    check, to_vec, CompiledType, Directory, Framing, Frozen, Limits, Options, QuantSpec,
    TensorSpec, Tensors,
};
use kiln_wasm::open::{element_bytes, widen_range};

/// What an open by ranges gives: the model and what was read.
struct Opened {
    model: Inspection,
    stats: ReadStats,
}

/// Opens `bytes` as the core module's `open` does: each range the checker
/// names read alone (in memory, a copy of just it).
fn open(
    bytes: &[u8],
    ty: &str,
    framing: Framing,
    limits: Limits,
) -> Result<Opened, kiln_nostd::Error> {
    let framed = Some(framing == Framing::Framed);
    let (model, stats) = open_read_at("f", &mut &bytes[..], Some(ty), framed, Some(limits))?;
    Ok(Opened { model, stats })
}

/// Byte range of a file as `usize` (the test files are in memory).
fn us(r: std::ops::Range<u64>) -> std::ops::Range<usize> {
    r.start as usize..r.end as usize
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn verdict(bytes: &[u8], ty: &str, framing: Framing, limits: Limits) -> (String, Option<u64>) {
    match open(bytes, ty, framing, limits) {
        Ok(_) => ("accept".into(), None),
        Err(e) => (e.kind_name().into(), e.offset()),
    }
}

fn reference(bytes: &[u8], ty: &str, framing: Framing, limits: Limits) -> (String, Option<u64>) {
    let ty = Box::new(CompiledType::<{ kiln_nostd::TOOL_NODES }>::parse(ty).unwrap());
    match ty.check(bytes, Options { framing, limits }) {
        Ok(()) => ("accept".into(), None),
        Err(e) => (e.kind_name().into(), e.offset()),
    }
}

#[test]
fn every_golden_case() {
    let text = include_str!("../../spec/kiln-v2-cases.json");
    let cases: serde_json::Value = serde_json::from_str(text).unwrap();
    let cases = cases.as_array().unwrap();
    assert_eq!(cases.len(), 256);
    for case in cases {
        let bytes = unhex(case["hex"].as_str().unwrap());
        let ty = case["type"].as_str().unwrap();
        let framing = if case["framed"].as_bool().unwrap() {
            Framing::Framed
        } else {
            Framing::Bare
        };
        let limits = case["cap"]
            .as_u64()
            .map_or(Limits::DEFAULT, |c| Limits::uniform(c as u32));
        let got = verdict(&bytes, ty, framing, limits);
        assert_eq!(got.0, case["expect"].as_str().unwrap(), "{}", case["name"]);
        assert_eq!(
            got,
            reference(&bytes, ty, framing, limits),
            "{}",
            case["name"]
        );
    }
}

/// A bare directory with a large f32 payload, a bool tensor, an odd u4
/// tensor and a large f16 tensor (gaps between them).
fn big_directory() -> Vec<u8> {
    let big: Vec<f32> = (0..600_000).map(|i| i as f32 * 0.5).collect();
    let half: Vec<u16> = (0..300_001).map(|i| i as u16).collect();
    let flags = [1u8, 0, 1];
    let nibbles = [0x21u8, 0x03];
    let specs = [
        TensorSpec::from_host(&[600, 1000], &big).named("big"),
        TensorSpec::new(Dtype::Bool, &[3], &flags).named("flags"),
        TensorSpec::new(Dtype::U4, &[3], &nibbles).named("nibbles"),
        TensorSpec::new(Dtype::F16, &[300_001], bytemuck_u16(&half)).named("half"),
    ];
    to_vec(&Tensors(&specs)).unwrap()
}

fn bytemuck_u16(v: &[u16]) -> &'static [u8] {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    Box::leak(bytes.into_boxed_slice())
}

#[test]
fn a_large_directory_reads_only_what_is_checked() {
    let file = big_directory();
    assert!(file.len() > 2 << 20);
    let opened = open(&file[..], "tensors", Framing::Bare, Limits::DEFAULT).unwrap();
    // The head (header, 4 descriptors, names), the gaps, the bool payload
    // and the packed tail: nothing of the two large payloads.
    assert!(opened.stats.bytes < 1024, "read {}", opened.stats.bytes);
    assert_eq!(opened.stats.bytes + opened.stats.skipped, file.len() as u64);
    assert_eq!(opened.model.tensors.len(), 4);
    let big = &opened.model.tensors[0];
    assert_eq!(
        (big.shape.as_slice(), big.elements),
        (&[600u64, 1000][..], Some(600_000))
    );
    let dir = Directory::parse(&file).unwrap();
    assert_eq!(us(big.range()), dir.get(0).unwrap().byte_range());
    assert!(opened.model.directories[0].path.as_ref().unwrap().is_root());
    // Display conversions read only the bytes of the range asked for.
    let (range, _, _) = element_bytes(big, 10, 3).unwrap();
    let values = widen_range(big, &file[us(range)], 10, 3).unwrap();
    assert_eq!(values, [5.0, 5.5, 6.0]);
    let nib = &opened.model.tensors[2];
    let (range, _, _) = element_bytes(nib, 1, 5).unwrap();
    assert_eq!(
        widen_range(nib, &file[us(range)], 1, 5).unwrap(),
        [2.0, 3.0]
    );
}

#[test]
fn element_ranges_from_any_js_number_are_refused_not_overflowed() {
    // `widen(index, first, count)` turns JS numbers into u64s, so `first`
    // can be anything up to u64::MAX; `first * width` overflowed (a panic
    // with overflow checks: the wasm fuzz target's find).
    let file = big_directory();
    let opened = open(&file[..], "tensors", Framing::Bare, Limits::DEFAULT).unwrap();
    for t in &opened.model.tensors {
        for (first, count) in [(1 << 62, 1 << 63), (u64::MAX, 0), (u64::MAX, u64::MAX)] {
            assert!(element_bytes(t, first, count).is_err(), "{first} {count}");
            assert!(
                widen_range(t, &[], first, count).is_err(),
                "{first} {count}"
            );
        }
        // The whole tensor, asked for with an oversized count, is fine.
        let (range, _, total) = element_bytes(t, 0, u64::MAX).unwrap_or((0..0, 0, 0));
        assert!(range.end - range.start <= t.length && Some(total) <= t.elements);
    }
}

#[test]
fn faults_in_checked_payload_bytes_are_found_in_large_files() {
    let file = big_directory();
    let dir = Directory::parse(&file).unwrap();
    let flags = dir.get(1).unwrap().byte_range();
    let nibbles = dir.get(2).unwrap().byte_range();
    let big = dir.get(0).unwrap().byte_range();
    let mut mutations = vec![
        (flags.start + 1, 2u8),    // bool byte 2
        (nibbles.end - 1, 0x13),   // odd packed tail
        (big.end, 1),              // alignment gap after "big"
        (big.start + 12345, 0xff), // inside a payload: still valid
        (file.len() - 1, 0x7c),    // last byte of the last payload
        (100, 1),                  // a descriptor's reserved byte
    ];
    mutations.push((dir.payload_offset() - 1, 1)); // padding before payloads
    for (at, byte) in mutations {
        let mut bad = file.clone();
        bad[at] = byte;
        let got = verdict(&bad, "tensors", Framing::Bare, Limits::DEFAULT);
        let want = reference(&bad, "tensors", Framing::Bare, Limits::DEFAULT);
        assert_eq!(got, want, "byte {at} = {byte:#x}");
    }
    // Truncated anywhere: the same EOF.
    for cut in [10, 64, 700, (1 << 20) + 7, file.len() - 1] {
        let bad = &file[..cut];
        assert_eq!(
            verdict(bad, "tensors", Framing::Bare, Limits::DEFAULT),
            reference(bad, "tensors", Framing::Bare, Limits::DEFAULT),
            "cut at {cut}"
        );
    }
    // Trailing bytes.
    let mut long = file.clone();
    long.extend_from_slice(&[0; 5]);
    assert_eq!(
        verdict(&long, "tensors", Framing::Bare, Limits::DEFAULT).0,
        "TRAILING"
    );
}

#[derive(Frozen)]
struct Layer<'a> {
    name: &'a str,
    w: Directory<'a>,
}

#[derive(Frozen)]
struct Model<'a> {
    id: i64,
    name: &'a str,
    layers: Vec<Layer<'a>>,
    meta: Vec<u8>,
    batch: Directory<'a>,
}

#[test]
fn a_large_message_with_several_directories() {
    let big: Vec<f32> = (0..400_000).map(|i| i as f32).collect();
    let small = [1.0f32, 2.0, 3.0];
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    for specs in [
        vec![TensorSpec::from_host(&[400_000], &big).named("w")],
        vec![TensorSpec::from_host(&[3], &small).named("w")],
        vec![TensorSpec::from_host(&[400_000], &big)],
    ] {
        blocks.push(to_vec(&Tensors(&specs)).unwrap());
    }
    fn dir(b: &[u8]) -> Directory<'_> {
        Directory::parse(b).unwrap()
    }
    let model = Model {
        id: -5,
        name: "abc", // the blocks after it are misaligned for f32
        layers: vec![
            Layer {
                name: "l0",
                w: dir(&blocks[0]),
            },
            Layer {
                name: "l1",
                w: dir(&blocks[1]),
            },
        ],
        meta: vec![9, 8, 7],
        batch: dir(&blocks[2]),
    };
    let ty = Model::SCHEMA.to_string();
    let file = kiln_nostd::to_frame_vec(&model).unwrap();
    let opened = open(&file[..], &ty, Framing::Framed, Limits::DEFAULT).unwrap();
    assert!(opened.stats.bytes < 2048, "read {}", opened.stats.bytes);
    let mut model = opened.model;
    let paths: Vec<String> = model
        .directories
        .iter()
        .map(|d| d.path.as_ref().unwrap().text())
        .collect();
    assert_eq!(paths, ["layers[0].w", "layers[1].w", "batch"]);
    assert_eq!(model.tensors.len(), 3);
    assert_eq!(model.tensors[2].directory, 2);
    assert!(!model.tensors[1].offset.is_multiple_of(4));
    // The metadata, from the record image: small values, byte runs by
    // their bytes, each keyed by its path.
    model.read_metadata().unwrap();
    let entries: Vec<(&str, &str, String)> = model
        .metadata
        .iter()
        .map(|m| (m.key.as_str(), m.type_text.as_str(), m.json().unwrap()))
        .collect();
    assert_eq!(
        entries,
        [
            ("id", "i64", "\"-5\"".to_string()),
            ("name", "str", "\"abc\"".to_string()),
            ("layers[0].name", "str", "\"l0\"".to_string()),
            ("layers[1].name", "str", "\"l1\"".to_string()),
            ("meta", "list<u8>", "\"090807\"".to_string()),
        ]
    );
    // The directories where they are in the file.
    let batch = &model.directories[2];
    assert_eq!(batch.offset + batch.length, file.len() as u64);
    assert_eq!(
        &file[batch.offset as usize..batch.offset as usize + 4],
        b"KLNT"
    );
    // Every truncation and a few flipped bytes: the reference's verdict.
    let hole_byte = model.tensors[0].offset as usize + 1000;
    for at in [
        20,
        40,
        200,
        hole_byte,
        model.tensors[2].offset as usize - 1,
        file.len() - 1,
    ] {
        let mut bad = file.clone();
        bad[at] ^= 0x41;
        assert_eq!(
            verdict(&bad, &ty, Framing::Framed, Limits::DEFAULT),
            reference(&bad, &ty, Framing::Framed, Limits::DEFAULT),
            "flip {at}"
        );
    }
    for cut in [
        17,
        100,
        70_000,
        model.tensors[2].offset as usize + 5,
        file.len() - 3,
    ] {
        assert_eq!(
            verdict(&file[..cut], &ty, Framing::Framed, Limits::DEFAULT),
            reference(&file[..cut], &ty, Framing::Framed, Limits::DEFAULT),
            "cut {cut}"
        );
    }
}

#[test]
fn bytes_that_only_look_like_a_block_are_not_taken_for_one() {
    // struct{head:list<u8>,tail:list<u8>,}: tail's length word is "KLNT"
    // and what follows looks like a header with a large payload; the
    // walker's EOF (the length is 1.4 GB, under a cap that allows it)
    // must come out unchanged.
    let limits = Limits::uniform(u32::MAX);
    let ty = "struct{head:list<u8>,tail:list<u8>,}";
    let mut file = Vec::new();
    let head_len = 70_000u32;
    file.extend_from_slice(&head_len.to_le_bytes());
    file.extend(std::iter::repeat_n(0u8, head_len as usize));
    let block = {
        let big = vec![0u8; 1 << 21];
        to_vec(&Tensors(&[TensorSpec::new(Dtype::U8, &[1 << 21], &big)])).unwrap()
    };
    file.extend_from_slice(&block);
    assert_eq!(
        verdict(&file, ty, Framing::Bare, limits),
        reference(&file, ty, Framing::Bare, limits)
    );
    assert_eq!(verdict(&file, ty, Framing::Bare, limits).0, "EOF");
}

#[test]
fn quantization_facts_and_opaque_layouts() {
    let data = [0u8; 32];
    let scales = [127u8, 128];
    let q4k = [0u8; 288];
    let specs = [
        TensorSpec::new(Dtype::E2M1, &[64], &data)
            .named("w")
            .quantized(QuantSpec::Scales {
                axis: 0,
                group_size: 32,
                scales: 1,
            }),
        TensorSpec::new(Dtype::E8M0, &[2], &scales).named("w.scales"),
        TensorSpec::opaque(4108, "Q4_K", 144, &[512], &q4k).named("blk"),
    ];
    let file = to_vec(&Tensors(&specs)).unwrap();
    let opened = open(&file[..], "tensors", Framing::Bare, Limits::DEFAULT).unwrap();
    let w = &opened.model.tensors[0];
    assert_eq!(
        w.quant,
        QuantLink::Scales {
            axis: 0,
            group_size: 32,
            scales: 1
        }
    );
    assert_eq!(w.quant.name(), "scales");
    let blk = &opened.model.tensors[2];
    assert_eq!(
        (
            blk.dtype_name().as_str(),
            blk.layout.as_deref(),
            blk.block_size
        ),
        ("Q4_K", Some("Q4_K"), 144)
    );
    assert_eq!(blk.dtype.code(), Some(4108));
    assert!(element_bytes(blk, 0, 1).is_err());
    let s = &opened.model.tensors[1];
    let (range, _, _) = element_bytes(s, 0, 2).unwrap();
    assert_eq!(widen_range(s, &file[us(range)], 0, 2).unwrap(), [1.0, 2.0]);
}

#[test]
fn bad_type_text_is_a_refusal() {
    let err = open(&[0u8][..], "struct{a:}", Framing::Bare, Limits::DEFAULT)
        .err()
        .unwrap();
    assert_eq!(err.kind_name(), "BadTypeText");
    assert!(check("u8", &[1], Options::BARE).is_ok());
}
