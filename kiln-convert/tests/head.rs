//! The head readers give the whole-file readers' verdict from a prefix:
//! at every prefix length of the samples and of their truncated and
//! corrupted forms, a prefix either asks for more bytes (more than it
//! holds, no more than the file) or gives exactly what the whole file
//! gives (the same head, or the same error: kind, offset and words).

mod common;

use common::*;
use kiln_convert::gguf::Gguf;
use kiln_convert::head::{read_head, sniff, HeadOpener, Step, FIRST_READ};
use kiln_convert::{read_safetensors, ErrorKind, Format};
use kiln_nostd::inspect::{Inspection, TensorDtype};

type Verdict = Result<Inspection, (ErrorKind, Option<u64>, String)>;

fn verdict(r: kiln_convert::Result<Step>) -> Option<Verdict> {
    match r {
        Ok(Step::Need(_)) => None,
        Ok(Step::Model(h)) => Some(Ok(*h)),
        Err(e) => Some(Err((e.kind(), e.offset(), e.to_string()))),
    }
}

/// The head from the whole file, checked against the whole-file reader.
fn whole(format: Format, file: &[u8]) -> Verdict {
    let len = file.len() as u64;
    let got = verdict(read_head("f", format, file, len)).expect("the whole file never needs more");
    match format {
        Format::Gguf => match (Gguf::parse(file), &got) {
            (Ok(g), Ok(head)) => {
                assert_eq!(g.tensors.len(), head.tensors.len());
                assert_eq!(g.metadata.len(), head.metadata.len());
                for (t, h) in g.tensors.iter().zip(&head.tensors) {
                    let start = t.data.as_ptr() as u64 - file.as_ptr() as u64;
                    assert_eq!(h.range(), start..start + t.data.len() as u64, "{}", t.name);
                    assert_eq!(h.name.as_deref(), Some(t.name));
                    let dims: Vec<u64> = t.dims.iter().rev().copied().collect();
                    assert_eq!(h.shape, dims);
                    assert_eq!(h.dtype, TensorDtype::Kiln(t.ggml.kiln_dtype()));
                }
            }
            (Err(e), Err(got)) => assert_eq!((e.kind(), e.offset(), e.to_string()), *got),
            (a, b) => panic!("GGUF reader {a:?}, head {b:?}"),
        },
        _ => match (read_safetensors(file), &got) {
            (Ok((n, meta)), Ok(head)) => {
                let data = head.directories[0].payload_offset;
                assert_eq!(data, 8 + n as u64);
                assert_eq!(head.tensors.len(), meta.tensors().len());
                for t in &head.tensors {
                    let info = meta.info(t.name.as_deref().unwrap()).unwrap();
                    let (s, e) = info.data_offsets;
                    assert_eq!(t.range(), data + s as u64..data + e as u64);
                }
            }
            (Err(e), Err(got)) => assert_eq!((e.kind(), e.offset(), e.to_string()), *got),
            (a, b) => panic!("safetensors reader {a:?}, head {b:?}"),
        },
    }
    got
}

/// Every prefix of `file` asks for more or gives the whole file's verdict;
/// once one gives it, every longer prefix does.
fn every_prefix(format: Format, file: &[u8]) -> Verdict {
    let want = whole(format, file);
    let len = file.len() as u64;
    let mut decided = false;
    for p in 0..=file.len() {
        match read_head("f", format, &file[..p], len) {
            Ok(Step::Need(n)) => {
                assert!(
                    !decided,
                    "prefix {p} needs {n} after a shorter prefix decided"
                );
                assert!(n > p as u64 && n <= len, "prefix {p} of {len} needs {n}");
            }
            r => {
                assert_eq!(verdict(r).unwrap(), want, "prefix {p} of {len}");
                decided = true;
            }
        }
    }
    assert!(decided);
    want
}

/// The model through a [`HeadOpener`], its reads given in reverse order
/// each round (they may come back in any order): the model, the bytes
/// read (every read appends to the prefix: none is read twice) and the
/// rounds of reads.
fn open_by_ranges(format: Format, file: &[u8]) -> kiln_convert::Result<(Inspection, u64, u32)> {
    let mut opener = HeadOpener::new("f", format, file.len() as u64);
    let (mut read, mut rounds) = (0u64, 0u32);
    loop {
        let reads = opener.next_reads()?;
        if reads.is_empty() {
            break;
        }
        rounds += 1;
        assert_eq!(reads[0].start, read, "reads append");
        for r in reads.iter().rev() {
            opener.give(r.start, &file[r.start as usize..r.end as usize])?;
            read += r.end - r.start;
        }
    }
    let (model, stats) = opener.finish()?;
    assert_eq!(stats.bytes, read);
    Ok((model, read, rounds))
}

/// Following the needs from an empty prefix, and through a [`HeadOpener`],
/// reaches the whole file's verdict.
fn by_needs(format: Format, file: &[u8]) -> Verdict {
    let want = whole(format, file);
    let len = file.len() as u64;
    // Step by step only for a small file: each step reads the prefix again.
    if len < 1 << 16 {
        chain(format, file, &want);
    }
    let opened = open_by_ranges(format, file);
    match (&opened, &want) {
        (Ok((head, read, rounds)), Ok(w)) => {
            assert_eq!(head, w);
            // A safetensors header's rest is read exactly; a GGUF head
            // grows fourfold each round: log4 rounds, at most four times
            // the head plus the first read.
            let head_end = head.directories[0].payload_offset;
            assert!(
                *read <= (4 * head_end).max(FIRST_READ).min(len),
                "{read} of {len}"
            );
            let bound = 2 + (head_end / FIRST_READ.max(1)).max(1).ilog(4);
            assert!(*rounds <= bound, "{rounds} rounds for a head of {head_end}");
        }
        (Err(e), Err(w)) => assert_eq!((e.kind(), e.offset(), e.to_string()), *w),
        (a, b) => panic!("HeadOpener {a:?}, whole {b:?}"),
    }
    want
}

fn chain(format: Format, file: &[u8], want: &Verdict) {
    let len = file.len() as u64;
    let mut p = 0u64;
    let mut steps = 0;
    loop {
        match read_head("f", format, &file[..p as usize], len) {
            Ok(Step::Need(n)) => {
                assert!(n > p && n <= len, "prefix {p} of {len} needs {n}");
                // One byte short of the need still needs more.
                if n - 1 > p {
                    let r = read_head("f", format, &file[..n as usize - 1], len);
                    assert!(matches!(r, Ok(Step::Need(_))), "{r:?}");
                }
                p = n;
            }
            r => {
                assert_eq!(verdict(r).unwrap(), *want, "prefix {p} of {len}");
                break;
            }
        }
        steps += 1;
        assert!(steps < 1_000_000);
    }
}

fn sample_gguf_file() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/tiny.gguf")).unwrap()
}

fn sample_safetensors_file() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../samples/tiny.safetensors"
    ))
    .unwrap()
}

#[test]
fn the_samples_read_from_every_prefix() {
    for file in [sample_gguf(), sample_gguf_file()] {
        assert_eq!(sniff(&file), Some(Format::Gguf));
        let head = every_prefix(Format::Gguf, &file).unwrap();
        by_needs(Format::Gguf, &file).unwrap();
        assert!(!head.tensors.is_empty());
        let data = head.directories[0].payload_offset;
        assert!(head.tensors.iter().all(|t| t.offset >= data));
    }
    for file in [
        sample_safetensors(Some(&[("format", "pt")])),
        sample_safetensors(None),
        sample_safetensors_file(),
    ] {
        assert_eq!(sniff(&file), Some(Format::Safetensors));
        let head = every_prefix(Format::Safetensors, &file).unwrap();
        by_needs(Format::Safetensors, &file).unwrap();
        assert!(!head.tensors.is_empty());
    }
}

#[test]
fn the_gguf_head_shows_layouts_and_values() {
    let head = whole(Format::Gguf, &sample_gguf()).unwrap();
    let named = |n: &str| {
        head.tensors
            .iter()
            .find(|t| t.name.as_deref() == Some(n))
            .unwrap()
    };
    let q4k = named("w.q4_k");
    assert_eq!((q4k.layout.as_deref(), q4k.block_size), (Some("Q4_K"), 144));
    assert_eq!(q4k.dtype_name(), "Q4_K");
    assert_eq!(q4k.shape, [2, 256]);
    assert_eq!(q4k.length, 288);
    let f32s = named("w.f32");
    assert_eq!(f32s.layout, None);
    assert_eq!(f32s.dtype_name(), "f32");
    // Every value through the one GGUF value reader, as its Kiln value.
    let pair = |k: &str| head.metadata.iter().find(|p| p.key == k).unwrap();
    let json = |k: &str| pair(k).json().unwrap();
    assert_eq!(json("general.architecture"), "\"llama\"");
    assert_eq!(json("i8"), "-128");
    assert_eq!(json("u64"), format!("\"{}\"", u64::MAX));
    assert_eq!(json("bool"), "true");
    assert_eq!(pair("strings").type_text, "list<str>");
    assert_eq!(json("strings"), "[\"a\",\"é✓\"]");
    assert_eq!(
        pair("nested").type_text,
        "list<struct{type:str,value:list<u8>,}>"
    );
    assert_eq!(json("empty"), "[]");
    assert_eq!(pair("strings").text().unwrap(), "[\"a\",\"é✓\"]");
    assert_eq!(pair("general.architecture").text().unwrap(), "llama");
}

#[test]
fn every_truncation_and_flip_reads_as_the_whole_file_does() {
    let full = sample_gguf();
    for cut in 0..full.len() {
        // Only the last tensor's padding may go missing. Every prefix of
        // every eleventh cut; the needs of every cut.
        if cut % 11 == 0 {
            let _ = every_prefix(Format::Gguf, &full[..cut]);
        }
        let _ = by_needs(Format::Gguf, &full[..cut]);
    }
    for at in 0..full.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut bad = full.clone();
            bad[at] ^= mask;
            let _ = by_needs(Format::Gguf, &bad);
        }
    }
    let full = sample_safetensors(Some(&[("format", "pt")]));
    for cut in 0..full.len() {
        if cut % 5 == 0 {
            every_prefix(Format::Safetensors, &full[..cut]).unwrap_err();
        }
        by_needs(Format::Safetensors, &full[..cut]).unwrap_err();
    }
    for at in 0..full.len() {
        let mut bad = full.clone();
        bad[at] ^= 0x20;
        let _ = by_needs(Format::Safetensors, &bad);
    }
}

#[test]
fn hostile_headers_read_as_the_whole_file_does() {
    let base = GgufBuilder::new().kv("k", 4, &[0; 4]).build();
    let with = |at: usize, bytes: &[u8]| {
        let mut v = base.clone();
        v[at..at + bytes.len()].copy_from_slice(bytes);
        v
    };
    let mut files = vec![
        with(8, &u64::MAX.to_le_bytes()),
        with(16, &(1u64 << 60).to_le_bytes()),
        with(24, &u64::MAX.to_le_bytes()),
        GgufBuilder::new()
            .kv("a", 9, &array(10, u64::MAX, &[]))
            .build(),
        GgufBuilder::new()
            .kv("a", 9, &array(8, 1 << 40, &[]))
            .build(),
        GgufBuilder::new()
            .tensor("t", &[u64::MAX / 2, 4], 0, &[])
            .build(),
        GgufBuilder::new()
            .kv("general.alignment", 4, &3u32.to_le_bytes())
            .build(),
        GgufBuilder::new()
            .tensor("t", &[4], 0, &[0; 16])
            .tensor("t", &[4], 0, &[0; 16])
            .build(),
    ];
    let mut t = GgufBuilder::new().tensor("t", &[1], 0, &[0; 4]).build();
    t[24 + 9..24 + 13].copy_from_slice(&u32::MAX.to_le_bytes());
    files.push(t);
    let mut extra = GgufBuilder::new().tensor("t", &[4], 0, &[0; 16]).build();
    extra.extend([0u8; 40]);
    files.push(extra);
    for file in &files {
        let e = every_prefix(Format::Gguf, file).unwrap_err();
        assert_eq!(e.0, ErrorKind::Gguf, "{e:?}");
        by_needs(Format::Gguf, file).unwrap_err();
    }
    let header = |json: &str, data: usize| {
        let mut v = (json.len() as u64).to_le_bytes().to_vec();
        v.extend(json.as_bytes());
        v.resize(v.len() + data, 0);
        v
    };
    let mut huge = u64::MAX.to_le_bytes().to_vec();
    huge.extend(b"{}");
    for file in [
        header(
            "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}",
            4,
        ),
        header(
            "{\"w\":{\"dtype\":\"Q4\",\"shape\":[1],\"data_offsets\":[0,1]}}",
            1,
        ),
        header(
            "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
            3,
        ),
        header(
            "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
            5,
        ),
        header(
            "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}",
            4,
        ),
        header("{}", 2),
        huge,
        vec![5, 0, 0],
        header("{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4),
        header("{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4),
        header("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4),
        header("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4),
        header("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,18446744073709551616]}}", 4),
        header("[1,2]", 0),
        header("{\"__metadata__\":{\"a\":1}}", 0),
        header("{\"w\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,1]}}", 1),
        header("{\"w\":{\"dtype\":\"F32\",\"shape\":[18446744073709551615,2],\"data_offsets\":[0,4]}}", 4),
        header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12),
        header("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} \u{ff}", 4),
    ] {
        let e = every_prefix(Format::Safetensors, &file).unwrap_err();
        assert_eq!(e.0, ErrorKind::Safetensors, "{e:?}");
    }
    // Valid headers in any tensor order, with odd spacing and metadata.
    for file in [
        header("{\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}, \"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8),
        header("{\"__metadata__\":{\"k\":\"v\"},\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}  ", 0),
        header("{\"f4\":{\"dtype\":\"F4\",\"shape\":[4],\"data_offsets\":[0,2]}}", 2),
    ] {
        let head = every_prefix(Format::Safetensors, &file).unwrap();
        assert!(head.tensors.windows(2).all(|w| w[0].range().end == w[1].range().start));
    }
}

/// A large file's head is read without its payloads, and a hostile count
/// in a prefix costs no allocation sized by the file.
#[test]
fn a_large_files_head_needs_only_its_head() {
    // 20,000 vocabulary strings: a head of several hundred KB that takes
    // several growing reads.
    let mut tokens = Vec::new();
    for i in 0..20_000 {
        tokens.extend(gguf_str(format!("token-{i:05}-▁piece").as_bytes()));
    }
    let file = GgufBuilder::new()
        .kv("general.architecture", 8, &gguf_str(b"llama"))
        .kv("tokenizer.ggml.tokens", 9, &array(8, 20_000, &tokens))
        .tensor("a", &[64, 2], 0, &f32_bytes(&[0.5; 128]))
        .tensor("b.q8_0", &[32, 3], 8, &[1u8; 34 * 3])
        .build();
    let head = by_needs(Format::Gguf, &file).unwrap();
    let tokens = head
        .metadata
        .iter()
        .find(|p| p.key == "tokenizer.ggml.tokens")
        .unwrap();
    assert_eq!(tokens.type_text, "list<str>");
    let text = tokens.json().unwrap();
    assert!(
        text.starts_with("[\"token-00000-▁piece\","),
        "{}",
        &text[..40]
    );
    assert!(text.ends_with(",\"token-19999-▁piece\"]"));
    // A head larger than the first read, many times over: 600,000 tokens
    // (over 16 MB) in a few rounds of reads, not one per quarter.
    let mut tokens = Vec::new();
    for i in 0..600_000 {
        tokens.extend(gguf_str(format!("token-{i:06}-▁piece").as_bytes()));
    }
    let big = GgufBuilder::new()
        .kv("tokenizer.ggml.tokens", 9, &array(8, 600_000, &tokens))
        .tensor("a", &[64, 2], 0, &f32_bytes(&[0.5; 128]))
        .build();
    let (model, read, rounds) = open_by_ranges(Format::Gguf, &big).unwrap();
    let head_end = model.directories[0].payload_offset;
    assert!(head_end > 4 * FIRST_READ, "{head_end}");
    assert!(rounds <= 4, "{rounds} rounds, {read} bytes");
    assert_eq!(model, whole(Format::Gguf, &big).unwrap());
    // A 6 GiB file: its head alone (the payload is never given) is the
    // whole verdict, the last tensor ending at the file's end.
    let (cols, rows) = (1u64 << 16, 12_288u64);
    let mut head = b"GGUF".to_vec();
    head.extend(3u32.to_le_bytes());
    head.extend(4u64.to_le_bytes());
    head.extend(0u64.to_le_bytes());
    for i in 0..4u64 {
        head.extend(gguf_str(format!("t{i}").as_bytes()));
        head.extend(2u32.to_le_bytes());
        head.extend(cols.to_le_bytes());
        head.extend(rows.to_le_bytes());
        head.extend(1u32.to_le_bytes()); // F16
        head.extend((i * cols * rows * 2).to_le_bytes());
    }
    let head_len = head.len() as u64;
    let data_start = head_len.div_ceil(32) * 32;
    let file_len = data_start + 4 * cols * rows * 2;
    assert!(file_len >= 6 << 30);
    let Step::Model(read) = read_head("f", Format::Gguf, &head, file_len).unwrap() else {
        panic!("the head is all there")
    };
    assert_eq!(read.directories[0].payload_offset, data_start);
    assert_eq!(read.tensors[3].range().end, file_len);
    assert_eq!(read.tensors[3].shape, [rows, cols]);
    // One byte more in the file is a fault found from the head alone.
    let e = read_head("f", Format::Gguf, &head, file_len + 40).unwrap_err();
    assert_eq!(e.offset(), Some(file_len.div_ceil(32) * 32), "{e}");
    // A hostile count that a 6 GiB file could hold: the prefix asks for
    // more, nothing is sized from the count.
    let mut hostile = b"GGUF".to_vec();
    hostile.extend(3u32.to_le_bytes());
    hostile.extend(0u64.to_le_bytes());
    hostile.extend(400_000_000u64.to_le_bytes());
    assert_eq!(
        read_head("f", Format::Gguf, &hostile, file_len).unwrap(),
        Step::Need(hostile.len() as u64 + 8)
    );
}

/// A safetensors file past 4 GiB: its head alone is the whole verdict,
/// with 64-bit offsets, both through the fast reader (the writers' layout)
/// and through the serde reader (an escaped name, white space), and a
/// fault past 4 GiB is found from the head alone.
#[test]
fn a_safetensors_head_past_4_gib_reads_from_its_head() {
    // Two F16 tensors of 3 GiB each: offsets past u32.
    let (rows, cols) = (49_152u64, 32_768u64);
    let bytes = rows * cols * 2;
    let compact = format!(
        "{{\"a\":{{\"dtype\":\"F16\",\"shape\":[{rows},{cols}],\"data_offsets\":[0,{bytes}]}},\
         \"b\":{{\"dtype\":\"F16\",\"shape\":[{rows},{cols}],\"data_offsets\":[{bytes},{}]}}}}",
        2 * bytes
    );
    let spaced = compact.replace("\"b\":", "\"\\u0062\": ");
    for json in [compact, spaced] {
        let mut head = (json.len() as u64).to_le_bytes().to_vec();
        head.extend(json.as_bytes());
        let file_len = head.len() as u64 + 2 * bytes;
        assert!(file_len >= 6 << 30);
        let Step::Model(read) = read_head("f", Format::Safetensors, &head, file_len).unwrap()
        else {
            panic!("the head is all there")
        };
        assert_eq!(read.directories[0].payload_offset, head.len() as u64);
        assert_eq!(read.tensors.len(), 2);
        assert_eq!(read.tensors[1].name.as_deref(), Some("b"));
        assert_eq!(read.tensors[1].range(), head.len() as u64 + bytes..file_len);
        assert_eq!(read.tensors[1].shape, [rows, cols]);
        assert_eq!(read.tensors[1].elements, Some(rows * cols));
        // A prefix one byte short of the header needs the rest.
        assert_eq!(
            read_head("f", Format::Safetensors, &head[..head.len() - 1], file_len).unwrap(),
            Step::Need(head.len() as u64)
        );
        // One byte more in the file: the data no longer ends at its end.
        let e = read_head("f", Format::Safetensors, &head, file_len + 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Safetensors);
        assert_eq!(e.offset(), Some(head.len() as u64), "{e}");
        assert!(
            e.to_string()
                .contains(&format!("{} data bytes", 2 * bytes + 1)),
            "{e}"
        );
    }
}

/// A safetensors header longer than the first read: its first bytes say
/// the reads that follow (`HeadOpener::reads_after_first`, which a URL
/// source starts while the first read still arrives), exactly the ones
/// the opener asks for once given the first read. Nothing for a header
/// the first read holds, a GGUF head, a Kiln file or a refused length.
#[test]
fn the_first_bytes_of_a_long_safetensors_header_say_the_reads_after_the_first() {
    for count in [25_000u64, 60_000] {
        let mut json = String::from("{");
        for i in 0..count {
            if i > 0 {
                json.push(',');
            }
            let at = 4 * i;
            json.push_str(&format!(
                "\"model.layers.{i}.mlp.up_proj.weight\":{{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[{at},{}]}}",
                at + 4
            ));
        }
        json.push('}');
        let mut file = (json.len() as u64).to_le_bytes().to_vec();
        file.extend(json.as_bytes());
        let head_end = file.len() as u64;
        file.extend(vec![0u8; 4 * count as usize]);
        let len = file.len() as u64;
        assert!(head_end > FIRST_READ, "{head_end}");
        let planned = HeadOpener::reads_after_first(&file[..64], len);
        let mut opener = HeadOpener::new("f", Format::Safetensors, len);
        let first = opener.next_reads().unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0], 0..FIRST_READ);
        opener.give(0, &file[..FIRST_READ as usize]).unwrap();
        let asked = opener.next_reads().unwrap();
        assert_eq!(planned, asked, "{count} tensors");
        assert_eq!(asked.last().unwrap().end, head_end);
        for r in &asked {
            opener
                .give(r.start, &file[r.start as usize..r.end as usize])
                .unwrap();
        }
        assert!(opener.next_reads().unwrap().is_empty());
        assert_eq!(opener.finish().unwrap().0.tensors.len() as u64, count);
    }
    let small = sample_safetensors_file();
    assert!(HeadOpener::reads_after_first(&small, small.len() as u64).is_empty());
    let gguf = sample_gguf_file();
    assert!(HeadOpener::reads_after_first(&gguf, 1 << 30).is_empty());
    assert!(
        HeadOpener::reads_after_first(b"KLNT\x02\x00\x00\x00\x00\x00\x00\x00\x00", 1 << 30)
            .is_empty()
    );
    // A length past the file: the opener's first read reports it.
    let mut past = (1u64 << 40).to_le_bytes().to_vec();
    past.extend(b"{\"a\":");
    assert!(HeadOpener::reads_after_first(&past, 1 << 30).is_empty());
    // Too few bytes to say: nothing.
    assert!(HeadOpener::reads_after_first(&past[..5], 1 << 30).is_empty());
}
