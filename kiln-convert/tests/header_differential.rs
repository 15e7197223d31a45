//! The safetensors header reader against the safetensors crate: on
//! generated headers and on mutations of them (byte flips, truncations,
//! repeated keys, escapes, odd offsets, huge numbers, nested metadata),
//! the fast reader accepts only what the crate accepts, and then gives the
//! same facts; the serde reader (every header outside the fast subset)
//! accepts what the crate accepts, with the same facts;
//! `read_safetensors_header` gives the crate's verdict and error on all
//! of them, on the whole file and on its head alone.

use kiln_convert::{
    fast_reader, read_safetensors, read_safetensors_header, serde_reader, SafetensorsHeader,
};
use safetensors::tensor::SafeTensors;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const DTYPES: [(&str, usize); 8] = [
    ("F32", 4),
    ("F16", 2),
    ("BF16", 2),
    ("I64", 8),
    ("U8", 1),
    ("BOOL", 1),
    ("F8_E4M3", 1),
    ("F64", 8),
];

/// A valid safetensors file: header JSON (in a random key order, random
/// white space) and zero data.
fn generate(rng: &mut Rng) -> Vec<u8> {
    let count = rng.below(6);
    let mut entries = Vec::new();
    let mut offset = 0usize;
    const SPACE: [&str; 6] = ["", "", " ", "\n", "\t", "\r\n  "];
    // Half the files are laid out as the writers lay them out (no white
    // space, keys in their order), which the fast reader reads without
    // looking for keys.
    let compact = rng.below(2) == 0;
    let ws = |rng: &mut Rng| {
        if compact {
            ""
        } else {
            SPACE[rng.below(SPACE.len())]
        }
    };
    for i in 0..count {
        let (dtype, width) = *rng.pick(&DTYPES);
        let rank = rng.below(4);
        let shape: Vec<usize> = (0..rank).map(|_| rng.below(4)).collect();
        let bytes = shape.iter().product::<usize>() * width;
        let name = match rng.below(5) {
            0 => format!(
                "model.layers.{i}.mlp.experts.{}.up_proj.weight",
                rng.below(128)
            ),
            1 => format!("t{i}"),
            2 => format!("ünï{i}"),
            3 => format!("a b {i}"),
            _ => format!("z{}", count - i),
        };
        let shape_text = shape
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(&format!(",{}", ws(rng)));
        let mut fields = [
            format!("\"dtype\":{}\"{dtype}\"", ws(rng)),
            format!("\"shape\":[{}{shape_text}]", ws(rng)),
            format!("\"data_offsets\":[{offset},{}{}]", ws(rng), offset + bytes),
        ];
        if !compact && rng.below(2) == 0 {
            fields.swap(0, 2);
        }
        entries.push(format!(
            "\"{name}\":{}{{{}}}",
            ws(rng),
            fields.join(&format!(",{}", ws(rng)))
        ));
        offset += bytes;
    }
    if rng.below(2) == 0 {
        let pairs: Vec<String> = (0..rng.below(3))
            .map(|k| format!("\"k{k}\":\"v{}\"", rng.below(9)))
            .collect();
        let at = rng.below(entries.len() + 1);
        entries.insert(at, format!("\"__metadata__\":{{{}}}", pairs.join(",")));
    }
    // Shuffle.
    for i in (1..entries.len()).rev() {
        let j = rng.below(i + 1);
        entries.swap(i, j);
    }
    let mut json = format!("{{{}}}", entries.join(",")).into_bytes();
    json.resize(json.len() + rng.below(8), b' ');
    let mut file = (json.len() as u64).to_le_bytes().to_vec();
    file.extend(json);
    file.resize(file.len() + offset, 0);
    file
}

/// The header's JSON text, edited by one of the mutations the crate and
/// the fast reader must agree on; the length prefix is fixed up unless the
/// mutation is to the prefix itself.
fn mutate(rng: &mut Rng, file: &[u8]) -> Vec<u8> {
    let Some(prefix) = file.get(..8) else {
        return file.to_vec();
    };
    let n = u64::from_le_bytes(prefix.try_into().unwrap()).min(file.len() as u64 - 8) as usize;
    let mut json = file[8..8 + n].to_vec();
    if json.is_empty() {
        return file.to_vec();
    }
    let mut data = file[8 + n..].to_vec();
    let replace = |json: &mut Vec<u8>, from: &str, to: &str| {
        let text = String::from_utf8_lossy(json).into_owned();
        *json = text.replacen(from, to, 1).into_bytes();
    };
    match rng.below(16) {
        0 => {
            let i = rng.below(json.len());
            json[i] ^= 1 << rng.below(8);
        }
        1 => {
            let i = rng.below(json.len());
            json[i] = *rng.pick(b"\"\\{}[],:0123456789 \x00\x1f-.eE");
        }
        2 => json.truncate(rng.below(json.len())),
        3 => {
            // Repeat an entry: its key twice.
            let text = String::from_utf8_lossy(&json).into_owned();
            if let (Some(a), Some(b)) = (text.find("{\""), text.find("},")) {
                let entry = &text[a + 1..=b];
                let doubled = format!("{{{entry},{}", &text[a + 1..]);
                json = doubled.into_bytes();
            }
        }
        4 => replace(&mut json, "t", "\\u0074"),
        5 => replace(&mut json, "\"dtype\"", "\"dtype\":\"F32\",\"dtype\""),
        6 => replace(&mut json, "[0,", "[1,"),
        7 => replace(&mut json, "]", ",18446744073709551616]"),
        8 => replace(&mut json, "\"v", "{\"nested\":\"v\"},\"x"),
        9 => replace(
            &mut json,
            "\"__metadata__\":{",
            "\"__metadata__\":{\"a\":1,",
        ),
        10 => replace(&mut json, ",", ",,"),
        11 => replace(&mut json, "1", "1.0"),
        12 => replace(&mut json, "0", "00"),
        13 => data.push(0),
        14 => {
            let mut prefix = (n as u64).to_le_bytes();
            prefix[rng.below(8)] ^= 1 << rng.below(8);
            let mut out = prefix.to_vec();
            out.extend(&json);
            out.extend(&data);
            return out;
        }
        _ => replace(&mut json, "\"shape\":[", "\"shape\":[2,"),
    }
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend(json);
    out.extend(data);
    out
}

/// The facts of a header, in a comparable form.
fn facts(h: &SafetensorsHeader<'_>) -> String {
    let mut out = format!("n={} meta={:?}\n", h.header_len, h.metadata);
    for t in &h.tensors {
        out += &format!(
            "{:?} {:?} {:?} {:?}\n",
            t.name,
            t.dtype,
            h.shape(t),
            t.data_offsets
        );
    }
    out
}

/// The crate's facts straight from its `Metadata`, sorted the same way.
fn crate_facts(file: &[u8]) -> Option<String> {
    let (n, meta) = SafeTensors::read_metadata(file).ok()?;
    let mut meta_pairs: Option<Vec<(String, String)>> = meta.metadata().as_ref().map(|m| {
        let mut v: Vec<_> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        v.sort();
        v
    });
    let meta_text = format!("{:?}", meta_pairs.take());
    let mut tensors: Vec<_> = meta.tensors().into_iter().collect();
    tensors.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut out = format!("n={n} meta={meta_text}\n");
    for (name, info) in tensors {
        let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
        out += &format!(
            "{name:?} {:?} {:?} {:?}\n",
            info.dtype,
            shape.as_slice(),
            info.data_offsets
        );
    }
    Some(out)
}

/// Everything the two readers must agree on for one file.
fn compare(file: &[u8], stats: &mut [usize; 3]) {
    let by_crate = crate_facts(file);
    let len = file.len() as u64;
    if let Some(fast) = fast_reader(file, len) {
        stats[0] += 1;
        // Cow's Debug is its text's, so the two forms compare directly.
        let expected = by_crate.as_deref().unwrap_or_else(|| {
            panic!(
                "the fast reader accepted what the crate refuses: {:?}",
                String::from_utf8_lossy(file)
            )
        });
        assert_eq!(
            facts(&fast),
            expected,
            "{:?}",
            String::from_utf8_lossy(file)
        );
    } else if by_crate.is_some() {
        stats[1] += 1;
    } else {
        stats[2] += 1;
    }
    // The combined reader: the crate's verdict, on the whole file and on
    // its head alone.
    let whole = read_safetensors_header(file, len);
    assert_eq!(
        whole.is_ok(),
        by_crate.is_some(),
        "{:?}",
        String::from_utf8_lossy(file)
    );
    let by_serde = serde_reader(file, len);
    assert_eq!(
        by_serde.as_ref().map(facts),
        by_crate,
        "{:?}",
        String::from_utf8_lossy(file)
    );
    // The crate's error, through the same words: kind, offset and text.
    if let (Err(ours), Err(theirs)) = (&whole, read_safetensors(file)) {
        assert_eq!(
            (ours.kind(), ours.offset()),
            (theirs.kind(), theirs.offset())
        );
        if !same_offset_fault(ours, &theirs) {
            assert_eq!(
                ours.to_string(),
                theirs.to_string(),
                "{:?}",
                String::from_utf8_lossy(file)
            );
        }
    }
    if let Some(n) = file
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .filter(|&n| n <= len.saturating_sub(8))
    {
        let head = &file[..8 + n as usize];
        let from_head = read_safetensors_header(head, len);
        assert_eq!(
            from_head.is_ok(),
            by_crate.is_some(),
            "{:?}",
            String::from_utf8_lossy(file)
        );
        if let (Ok(a), Ok(b)) = (&from_head, &whole) {
            assert_eq!(facts(a), facts(b));
        }
        // The same refusal, word for word (ties in the offsets go by name,
        // so even the tensor an offset error names is the same).
        if let (Err(a), Err(b)) = (&from_head, &whole) {
            assert_eq!(
                (a.kind(), a.offset(), a.to_string()),
                (b.kind(), b.offset(), b.to_string())
            );
        }
    }
}

/// Both errors say a tensor's data_offsets do not start where the
/// previous tensor's end. Which tensor the crate names can differ between
/// two calls of the crate itself: it sorts a hash map's entries by
/// offset, and ties keep the map's random order.
fn same_offset_fault(a: &kiln_convert::Error, b: &kiln_convert::Error) -> bool {
    let offset_fault = |e: &kiln_convert::Error| {
        e.to_string()
            .contains("data_offsets do not start where the previous tensor's end")
    };
    offset_fault(a) && offset_fault(b)
}

#[test]
fn the_fast_reader_agrees_with_the_crate() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    // [fast accepted, left to the crate and accepted, refused]
    let mut stats = [0usize; 3];
    let files = 4000;
    let mutations = 6;
    for _ in 0..files {
        let file = generate(&mut rng);
        compare(&file, &mut stats);
        // Every generated file is valid, and in the fast subset.
        assert!(fast_reader(&file, file.len() as u64).is_some());
        for _ in 0..mutations {
            let mutated = mutate(&mut rng, &file);
            compare(&mutated, &mut stats);
            let again = mutate(&mut rng, &mutated);
            compare(&again, &mut stats);
        }
    }
    println!(
        "{} files: fast reader accepted {}, left to the crate and accepted {}, refused {}",
        stats.iter().sum::<usize>(),
        stats[0],
        stats[1],
        stats[2]
    );
    // The mutations reach all three outcomes.
    assert!(stats.iter().all(|&s| s > 100), "{stats:?}");
}

#[test]
fn every_dtype_name_reads_as_the_crate_reads_it() {
    let names = [
        "BOOL",
        "F4",
        "F6_E2M3",
        "F6_E3M2",
        "U8",
        "I8",
        "F8_E5M2",
        "F8_E4M3",
        "F8_E8M0",
        "F8_E4M3FNUZ",
        "F8_E5M2FNUZ",
        "I16",
        "U16",
        "F16",
        "BF16",
        "I32",
        "U32",
        "F32",
        "C64",
        "F64",
        "I64",
        "U64",
        "f32",
        "F8_E4M3FN",
        "",
        "Q4_K",
    ];
    for name in names {
        let json =
            format!("{{\"t\":{{\"dtype\":\"{name}\",\"shape\":[8],\"data_offsets\":[0,0]}}}}");
        // Offsets of zero bytes: refused by the size check for every real
        // dtype, so the fast reader's dtype is compared through a header
        // of the right size.
        let by_serde = serde_json::from_str::<safetensors::Dtype>(&format!("\"{name}\"")).ok();
        let size = by_serde.map_or(0, |d| 8 * d.bitsize() / 8);
        let json = json.replace("[0,0]", &format!("[0,{size}]"));
        let mut file = (json.len() as u64).to_le_bytes().to_vec();
        file.extend(json.as_bytes());
        file.resize(file.len() + size, 0);
        let fast = fast_reader(&file, file.len() as u64);
        assert_eq!(
            fast.as_ref().map(|h| h.tensors[0].dtype),
            by_serde,
            "dtype {name:?}"
        );
        let mut stats = [0; 3];
        compare(&file, &mut stats);
    }
}

#[test]
fn a_head_too_short_for_its_header_is_refused_by_name() {
    let mut rng = Rng(7);
    let file = generate(&mut rng);
    let n = u64::from_le_bytes(file[..8].try_into().unwrap()) as usize;
    let err = read_safetensors_header(&file[..8 + n / 2], file.len() as u64 + 1).unwrap_err();
    assert!(err.to_string().contains("bytes were given"), "{err}");
}

/// Names at the edges of the reader's eight-byte words: prefixes of one
/// another (also where the longer goes on with a byte below the quote),
/// equal up to 8 or 16 bytes, differing in the byte after a word, shorter
/// than a word, not ASCII, empty.
const EDGE_NAMES: [&str; 25] = [
    "",
    "a",
    "ab",
    "abc",
    "abc defgh",
    "abc!defgh",
    "abcdefg",
    "abcdefgh",
    "abcdefgh ",
    "abcdefgh!",
    "abcdefgh0",
    "abcdefghi",
    "abcdefghabcdefg",
    "abcdefghabcdefgh",
    "abcdefghabcdefgh0",
    "abcdefghabcdefgi",
    "abcdefg\u{e9}",
    "abcdefgh\u{e9}",
    "\u{e9}",
    "model.layers.1.mlp.w",
    "model.layers.1.mlp.w.b",
    "model.layers.1.mlp.v",
    "model.layers.10.mlp.w",
    "__metadata_",
    "~",
];

/// Dimensions as text, valid and not, for a tensor of no elements (the
/// other dimension is 0), so a long one needs no data.
const EDGE_DIMS: [&str; 14] = [
    "0",
    "7",
    "10",
    "01",
    "00",
    "12345678",
    "123456789",
    "1234567890123456",
    "9999999999999999999",
    "18446744073709551615",
    "18446744073709551616",
    "1.5",
    "1e3",
    "2E1",
];

/// A header as the writers lay it out (compact, tensors in the order
/// given, data in that order), of `names` with the given dtypes and
/// shapes; `gap` bytes of data left out before the last tensor.
fn writers_file(tensors: &[(&str, &str, usize, String)], gap: usize) -> (Vec<u8>, bool) {
    let mut offset = 0;
    let mut entries = Vec::new();
    for (i, (name, dtype, width, shape)) in tensors.iter().enumerate() {
        let elements: u64 = shape
            .split(',')
            .map(|d| d.parse::<u64>().unwrap_or(1))
            .fold(1, u64::saturating_mul);
        let bytes = if elements == 0 {
            0
        } else {
            elements as usize * width
        };
        if i + 1 == tensors.len() {
            offset += gap;
        }
        entries.push(format!(
            "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{shape}],\"data_offsets\":[{offset},{}]}}",
            offset + bytes
        ));
        offset += bytes;
    }
    let json = format!("{{{}}}", entries.join(","));
    let mut file = (json.len() as u64).to_le_bytes().to_vec();
    file.extend(json.as_bytes());
    file.resize(file.len() + offset, 0);
    // Plain numbers only: digits, no leading zero, at most 19 of them.
    let plain = tensors.iter().all(|t| {
        t.3.split(',').all(|d| {
            d.len() <= 19
                && d.bytes().all(|b| b.is_ascii_digit())
                && !(d.len() > 1 && d.starts_with('0'))
        })
    });
    (file, plain)
}

#[test]
fn files_in_the_writers_order_read_as_the_crate_reads_them() {
    let mut rng = Rng(0x0bad_cafe_f00d_0002);
    let mut stats = [0usize; 3];
    let mut in_order = 0;
    for _ in 0..6000 {
        let count = 1 + rng.below(5);
        let mut names: Vec<&str> = (0..count).map(|_| *rng.pick(&EDGE_NAMES)).collect();
        // Mostly sorted by bytes, as the writers write them (repeats
        // stay); sometimes not.
        if rng.below(4) != 0 {
            names.sort_unstable();
        }
        let tensors: Vec<(&str, &str, usize, String)> = names
            .iter()
            .map(|&name| {
                let (dtype, width) = *rng.pick(&[
                    ("F32", 4),
                    ("F32", 4),
                    ("BF16", 2),
                    ("U8", 1),
                    ("F8_E4M3", 1),
                ]);
                let shape = match rng.below(3) {
                    0 => format!("{},0", rng.pick(&EDGE_DIMS)),
                    1 => format!("{}", 1 + rng.below(300)),
                    _ => format!("{},{}", 1 + rng.below(9), 1 + rng.below(9)),
                };
                (name, dtype, width, shape)
            })
            .collect();
        let gap = if rng.below(8) == 0 {
            1 + rng.below(3)
        } else {
            0
        };
        let (file, plain) = writers_file(&tensors, gap);
        compare(&file, &mut stats);
        // Names strictly in order, plain numbers, no gap: in the fast
        // subset, and read by it.
        let ordered = names.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes());
        if ordered && plain && gap == 0 {
            in_order += 1;
            assert!(
                fast_reader(&file, file.len() as u64).is_some(),
                "{:?}",
                String::from_utf8_lossy(&file)
            );
        }
    }
    println!(
        "{} files: fast reader accepted {} ({in_order} in the writers' order), left to the crate and accepted {}, refused {}",
        stats.iter().sum::<usize>(),
        stats[0],
        stats[1],
        stats[2]
    );
    assert!(stats.iter().all(|&s| s > 100), "{stats:?}");
    assert!(in_order > 1000, "{in_order}");
}

/// Name bytes for [`writers_bytes_file`]: ASCII, UTF-8 of two, three and
/// four bytes, and bytes that are not UTF-8 (a lone continuation byte, a
/// lead byte without its continuation, 0xff), at every place of the
/// reader's eight-byte words; an escape; a quote's neighbours.
fn edge_name(rng: &mut Rng) -> Vec<u8> {
    const PIECES: [&[u8]; 12] = [
        b"a",
        b"z",
        b"model.layers.",
        b".",
        "\u{e9}".as_bytes(),
        "\u{20ac}".as_bytes(),
        "\u{1f600}".as_bytes(),
        b"\x80",
        b"\xc3",
        b"\xff",
        b"\\u0041",
        b"!",
    ];
    let mut name = b"model.layers.1.mlp.experts.".to_vec();
    name.truncate(rng.below(name.len() + 1));
    for _ in 0..rng.below(4) {
        // Mostly valid bytes, so that files reach the fast reader's
        // acceptance and its checks of later names.
        let piece = if rng.below(4) == 0 {
            *rng.pick(&PIECES)
        } else {
            *rng.pick(&PIECES[..7])
        };
        name.extend_from_slice(piece);
    }
    name
}

/// A header as the writers lay it out, of raw name bytes, dtypes, shapes
/// and data offsets as given (the data's length from the largest end).
fn writers_bytes_file(entries: &[(Vec<u8>, &str, String, u64, u64)], metadata: &[u8]) -> Vec<u8> {
    let mut json = b"{".to_vec();
    json.extend_from_slice(metadata);
    for (i, (name, dtype, shape, start, end)) in entries.iter().enumerate() {
        if i > 0 || !metadata.is_empty() {
            json.push(b',');
        }
        json.push(b'"');
        json.extend_from_slice(name);
        json.extend_from_slice(
            format!(
                "\":{{\"dtype\":\"{dtype}\",\"shape\":[{shape}],\"data_offsets\":[{start},{end}]}}"
            )
            .as_bytes(),
        );
    }
    json.push(b'}');
    let data = entries.iter().map(|e| e.4).max().unwrap_or(0);
    let mut file = (json.len() as u64).to_le_bytes().to_vec();
    file.extend(&json);
    file.resize(file.len() + data as usize, 0);
    file
}

#[test]
fn names_of_any_bytes_in_the_writers_order_read_as_the_crate_reads_them() {
    let mut rng = Rng(0x00c0_ffee_0bad_0003);
    let mut stats = [0usize; 3];
    let (mut not_ascii, mut long) = (0, 0);
    let metadatas: [&[u8]; 5] = [
        b"",
        b"\"__metadata__\":{\"format\":\"pt\"}",
        "\"__metadata__\":{\"note\":\"caf\u{e9}\"}".as_bytes(),
        b"\"__metadata__\":{\"note\":\"caf\xe9\"}",
        b"\"__metadata__\":{\"\xc3\":\"pt\"}",
    ];
    for _ in 0..6000 {
        let count = 1 + rng.below(6);
        let mut names: Vec<Vec<u8>> = (0..count).map(|_| edge_name(&mut rng)).collect();
        if rng.below(4) != 0 {
            names.sort();
        }
        // Mostly one dtype and shape, as the experts of a model, so that
        // entries repeat the last one's text; sometimes another.
        let (dtype, width) = *rng.pick(&[("F32", 4u64), ("BF16", 2), ("U8", 1)]);
        // Now and then a first tensor of some 10 MB, so that the ends
        // after it cross from 7 digits to 8 (the last end's text as one
        // word holds 7 digits and its comma).
        let mut offset = 0;
        let mut entries = Vec::new();
        if rng.below(200) == 0 {
            offset = 9_999_990 + rng.below(8) as u64;
            entries.push((b"\x01".to_vec(), "U8", offset.to_string(), 0, offset));
            entries[0].0 = b"!".to_vec();
        }
        for name in names {
            let (dtype, width, shape, elements) = match rng.below(6) {
                0 => ("F32", 4, "2,3".to_string(), 6),
                1 => (dtype, width, String::new(), 1),
                _ => (dtype, width, "4".to_string(), 4),
            };
            let len = elements * width;
            // Now and then a gap, an overlap or the wrong length.
            let (start, end) = match rng.below(30) {
                0 => (offset + 1, offset + 1 + len),
                1 => (offset.saturating_sub(1), offset + len),
                2 => (offset, offset + len + 1),
                _ => (offset, offset + len),
            };
            offset = end;
            entries.push((name, dtype, shape, start, end));
        }
        let metadata = *rng.pick(&metadatas);
        let file = writers_bytes_file(&entries, metadata);
        compare(&file, &mut stats);
        let fast = fast_reader(&file, file.len() as u64).is_some();
        if fast && entries.iter().any(|e| !e.0.is_ascii()) {
            not_ascii += 1;
        }
        if fast && entries.len() > 2 {
            long += 1;
        }
    }
    println!(
        "{} files: fast reader accepted {}, left to the crate and accepted {}, refused {}",
        stats.iter().sum::<usize>(),
        stats[0],
        stats[1],
        stats[2]
    );
    assert!(stats.iter().all(|&s| s > 100), "{stats:?}");
    // The fast reader read names that are not ASCII, and runs of entries.
    assert!(not_ascii > 100 && long > 100, "{not_ascii} {long}");
}

#[test]
fn a_name_that_shares_part_of_a_character_with_the_last_is_checked_whole() {
    // A valid character, then the same lead bytes with an ASCII byte where
    // its continuation was: the two names agree up to the middle of the
    // character, and the second is not UTF-8 though its bytes from there
    // on are ASCII.
    let pairs: [(&[u8], &[u8]); 6] = [
        ("\u{e9}".as_bytes(), b"\xc3A"),
        ("\u{20ac}".as_bytes(), b"\xe2\x82A"),
        ("\u{20ac}".as_bytes(), b"\xe2A"),
        ("\u{1f600}".as_bytes(), b"\xf0\x9f\x98A"),
        (b"\xc3A", "\u{e9}".as_bytes()),
        ("\u{e9}".as_bytes(), "\u{e9}A".as_bytes()),
    ];
    let mut stats = [0usize; 3];
    let mut refused = 0;
    for prefix in 0..=17 {
        for (first, second) in pairs {
            for order in [[first, second], [second, first]] {
                let mut entries = Vec::new();
                let mut offset = 0;
                for tail in order.iter().chain([&&b"~"[..]]) {
                    let mut name = vec![b'p'; prefix];
                    name.extend_from_slice(tail);
                    entries.push((name, "F32", "4".to_string(), offset, offset + 16));
                    offset += 16;
                }
                let file = writers_bytes_file(&entries, b"");
                compare(&file, &mut stats);
                if entries.iter().any(|e| std::str::from_utf8(&e.0).is_err()) {
                    refused += 1;
                    assert!(read_safetensors_header(&file, file.len() as u64).is_err());
                }
            }
        }
    }
    assert!(refused > 0 && stats[0] > 0, "{refused} {stats:?}");
}
