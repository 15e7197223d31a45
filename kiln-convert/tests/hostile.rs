//! Truncated, corrupt and wrong-format inputs of every kind give one error
//! value (its kind, what, and the byte offset) and never a panic; huge
//! counts are refused before anything is sized from them.

mod common;

use std::io::Write;

use common::*;
use kiln_convert::{convert, ErrorKind, Format};

fn run(from: Format, to: Format, input: &[u8]) -> kiln_convert::Result<Vec<u8>> {
    let mut out = Vec::new();
    convert(from, to, input, &mut out).map(|_| out)
}

fn gguf_err(input: &[u8]) -> kiln_convert::Error {
    run(Format::Gguf, Format::Kiln, input).unwrap_err()
}

/// Asserts a GGUF error at `offset` whose message contains `words`.
fn assert_gguf(input: &[u8], offset: u64, words: &str) {
    let e = gguf_err(input);
    assert_eq!(e.kind(), ErrorKind::Gguf, "{e}");
    assert_eq!(e.offset(), Some(offset), "{e}");
    assert!(e.to_string().contains(words), "{e}");
}

#[test]
fn every_truncation_of_a_gguf_file_is_an_error_or_lacks_only_padding() {
    let full = sample_gguf();
    // The last tensor (w.q8_0, 34 bytes) ends 30 bytes before the end:
    // only those padding bytes may go missing.
    let data_end = full.len() - 30;
    for cut in 0..full.len() {
        match run(Format::Gguf, Format::Kiln, &full[..cut]) {
            Ok(_) => assert!(cut >= data_end, "cut at {cut} accepted"),
            Err(e) => {
                assert!(cut < data_end, "cut at {cut}: {e}");
                assert_eq!(e.kind(), ErrorKind::Gguf, "cut at {cut}: {e}");
                assert!(e.offset().unwrap() <= cut as u64, "cut at {cut}: {e}");
            }
        }
    }
}

#[test]
fn every_flipped_byte_of_a_gguf_file_is_handled() {
    let full = sample_gguf();
    for at in 0..full.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut bad = full.clone();
            bad[at] ^= mask;
            match run(Format::Gguf, Format::Kiln, &bad) {
                Ok(message) => {
                    // A flip in tensor data or a value's bits: it converts,
                    // and the message converts back to a file GGUF reads.
                    let back = run(Format::Kiln, Format::Gguf, &message).unwrap();
                    assert_eq!(back.len(), full.len());
                }
                Err(e) => {
                    assert!(
                        matches!(e.kind(), ErrorKind::Gguf | ErrorKind::Unsupported),
                        "flip {mask:#x} at {at}: {e}"
                    );
                    assert!(!e.message().is_empty());
                }
            }
        }
    }
}

#[test]
fn huge_counts_are_refused_before_allocation() {
    let base = GgufBuilder::new().kv("k", 4, &[0; 4]).build();
    let with = |at: usize, bytes: &[u8]| {
        let mut v = base.clone();
        v[at..at + bytes.len()].copy_from_slice(bytes);
        v
    };
    assert_gguf(&with(8, &u64::MAX.to_le_bytes()), 8, "cannot fit");
    assert_gguf(&with(16, &(1u64 << 60).to_le_bytes()), 8, "cannot fit");
    // Key length u64::MAX.
    assert_gguf(&with(24, &u64::MAX.to_le_bytes()), 24, "claims");
    // Array count u64::MAX.
    let arr = GgufBuilder::new()
        .kv("a", 9, &array(10, u64::MAX, &[]))
        .build();
    assert_gguf(&arr, 24 + 9 + 4 + 4, "cannot fit");
    // String count in an array: 2^40 strings of at least 8 bytes.
    let arr = GgufBuilder::new()
        .kv("a", 9, &array(8, 1 << 40, &[]))
        .build();
    assert_gguf(&arr, 24 + 9 + 4 + 4, "cannot fit");
    // A dimension count far above 8.
    let mut t = GgufBuilder::new().tensor("t", &[1], 0, &[0; 4]).build();
    t[24 + 9..24 + 13].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_gguf(&t, 24 + 9, "dimensions");
    // Dimensions whose product overflows.
    let t = GgufBuilder::new()
        .tensor("t", &[u64::MAX / 2, 4], 0, &[])
        .build();
    assert_gguf(&t, 24 + 9, "overflows");
}

#[test]
fn malformed_gguf_files_name_the_fault() {
    let ok = GgufBuilder::new()
        .kv("k", 4, &[0; 4])
        .tensor("t", &[4], 0, &[0; 16])
        .build();
    let patch = |at: usize, bytes: &[u8]| {
        let mut v = ok.clone();
        v[at..at + bytes.len()].copy_from_slice(bytes);
        v
    };
    assert_gguf(b"GGU", 0, "magic");
    assert_gguf(b"GGML\x03\0\0\0", 0, "not a GGUF file");
    assert_gguf(&patch(4, &1u32.to_le_bytes()), 4, "version 1");
    assert_gguf(&patch(4, &3u32.to_be_bytes()), 4, "big-endian");
    assert_gguf(&patch(4, &7u32.to_le_bytes()), 4, "unknown GGUF version 7");
    // Value type 13 does not exist.
    assert_gguf(
        &patch(24 + 9, &13u32.to_le_bytes()),
        24 + 9,
        "value type 13",
    );
    // Tensor type 31 was removed from ggml; 99 never existed.
    let t_type = 24 + 9 + 4 + 4 + 9 + 4 + 8;
    assert_gguf(
        &patch(t_type, &31u32.to_le_bytes()),
        t_type as u64,
        "Q4_0_4_4",
    );
    assert_gguf(
        &patch(t_type, &99u32.to_le_bytes()),
        t_type as u64,
        "type 99",
    );
    // A data offset that is not the canonical one.
    assert_gguf(
        &patch(t_type + 4, &32u64.to_le_bytes()),
        t_type as u64 + 4,
        "expected 0",
    );
    // Trailing bytes after the last tensor's padding.
    let mut long = ok.clone();
    long.extend([0u8; 33]);
    assert_gguf(&long, ok.len() as u64, "33 bytes after");
    // Bad key bytes, a repeated key, a repeated tensor name.
    assert_gguf(&patch(24 + 8, &[0xff]), 24 + 8, "not UTF-8");
    let twice = GgufBuilder::new().kv("k", 0, &[1]).kv("k", 0, &[2]).build();
    assert_gguf(&twice, 24 + 14, "appears twice");
    let twice = GgufBuilder::new()
        .tensor("t", &[1], 0, &[0; 4])
        .tensor("t", &[1], 0, &[0; 4])
        .build();
    assert_gguf(&twice, 24 + 33, "appears twice");
    // A bool byte of 2, an alignment that is not a power of two or not u32.
    assert_gguf(
        &GgufBuilder::new().kv("b", 7, &[2]).build(),
        24 + 13,
        "bool byte 2",
    );
    let align = GgufBuilder::new()
        .kv("general.alignment", 4, &48u32.to_le_bytes())
        .build();
    assert_gguf(&align, 24 + 29, "not a power of two");
    let align = GgufBuilder::new()
        .kv("general.alignment", 10, &[64, 0, 0, 0, 0, 0, 0, 0])
        .build();
    assert_gguf(&align, 24 + 29, "not UINT32");
    // A block type whose innermost dimension is not whole blocks.
    let t = GgufBuilder::new().tensor("q", &[100], 8, &[0; 34]).build();
    assert_gguf(&t, 24 + 9, "whole number of blocks");
    // Data past the end of the file.
    let mut short = ok.clone();
    short.truncate(short.len() - 20);
    assert_gguf(&short, 96, "the file ends at byte");
}

#[test]
fn gguf_that_kiln_cannot_hold_is_unsupported() {
    let empty_name = GgufBuilder::new().tensor("", &[1], 0, &[0; 4]).build();
    let e = gguf_err(&empty_name);
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.to_string().contains("empty name"), "{e}");
    // 3,000 names of 30 bytes and layout names of 4: 102,000 heap bytes,
    // more than one directory addresses, so two directories, and back to
    // the same bytes.
    let mut big = GgufBuilder::new();
    for i in 0..3000 {
        big = big.tensor(
            &format!("blk.{i:04}.ffn_down.weight.xxxxx"),
            &[32],
            8,
            &[0; 34],
        );
    }
    let source = big.build();
    let kiln = run(Format::Gguf, Format::Kiln, &source).unwrap();
    let model = kiln_convert::Model::open(&kiln).unwrap();
    assert_eq!(model.directories().len(), 2);
    assert_eq!(model.directories()[0].len(), 65_535 / 34);
    assert_eq!(model.len(), 3000);
    assert_eq!(run(Format::Kiln, Format::Gguf, &kiln).unwrap(), source);
}

#[test]
fn every_truncation_and_flip_of_a_safetensors_file_is_handled() {
    let full = sample_safetensors(Some(&[("format", "pt")]));
    for cut in 0..full.len() {
        let e = run(Format::Safetensors, Format::Kiln, &full[..cut]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Safetensors, "cut at {cut}: {e}");
        assert!(e.offset().is_some(), "cut at {cut}: {e}");
    }
    for at in 0..full.len() {
        let mut bad = full.clone();
        bad[at] ^= 0x20;
        if let Err(e) = run(Format::Safetensors, Format::Kiln, &bad) {
            assert!(
                matches!(e.kind(), ErrorKind::Safetensors | ErrorKind::Unsupported),
                "flip at {at}: {e}"
            );
        }
    }
}

#[test]
fn safetensors_faults_have_offsets_and_names() {
    let header = |json: &str| {
        let mut v = (json.len() as u64).to_le_bytes().to_vec();
        v.extend(json.as_bytes());
        v
    };
    let e = run(
        Format::Safetensors,
        Format::Kiln,
        &header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}"),
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (ErrorKind::Safetensors, Some(8 + 52)),
        "{e}"
    );
    let e = run(
        Format::Safetensors,
        Format::Kiln,
        &header("{\"w\":{\"dtype\":\"Q4\",\"shape\":[1],\"data_offsets\":[0,1]}}"),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("tensor \"w\" has dtype \"Q4\""),
        "{e}"
    );
    let c64 = safetensors::serialize(
        [(
            "z",
            safetensors::tensor::TensorView::new(safetensors::Dtype::C64, vec![1], &[0; 8])
                .unwrap(),
        )],
        None,
    )
    .unwrap();
    // A dtype Kiln has none of its own for travels as an opaque layout and
    // comes back byte for byte (tests/convert has every such dtype).
    let kiln = run(Format::Safetensors, Format::Kiln, &c64).unwrap();
    assert_eq!(run(Format::Kiln, Format::Safetensors, &kiln).unwrap(), c64);
    let mut huge = u64::MAX.to_le_bytes().to_vec();
    huge.extend(b"{}");
    let e = run(Format::Safetensors, Format::Kiln, &huge).unwrap_err();
    assert_eq!(e.offset(), Some(0), "{e}");
}

#[test]
fn every_truncation_and_flip_of_a_kiln_message_is_handled() {
    for (format, original) in [
        (Format::Gguf, sample_gguf()),
        (Format::Safetensors, sample_safetensors(Some(&[("k", "v")]))),
    ] {
        let message = run(format, Format::Kiln, &original).unwrap();
        for cut in 0..message.len() {
            let e = run(Format::Kiln, format, &message[..cut]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Kiln, "cut at {cut}: {e}");
            assert!(e.kiln_code().is_some(), "cut at {cut}: {e}");
            assert!(e.offset().unwrap() <= cut as u64, "cut at {cut}: {e}");
        }
        for at in 0..message.len() {
            let mut bad = message.clone();
            bad[at] ^= 0x41;
            if let Err(e) = run(Format::Kiln, format, &bad) {
                assert!(
                    matches!(e.kind(), ErrorKind::Kiln | ErrorKind::Unsupported),
                    "flip at {at}: {e}"
                );
            }
        }
    }
}

#[test]
fn a_kiln_message_of_the_other_kind_says_where_it_goes() {
    let message = run(Format::Gguf, Format::Kiln, &sample_gguf()).unwrap();
    let e = run(Format::Kiln, Format::Safetensors, &message).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.to_string().contains("convert it to a .gguf file"), "{e}");
    let e = run(Format::Safetensors, Format::Gguf, &message).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    let e = run(
        Format::Kiln,
        Format::Gguf,
        b"KLN0\0\0\0\0\x01\x02\x03\x04\x05\x06\x07\x08",
    )
    .unwrap_err();
    assert_eq!(e.kiln_code(), Some(kiln_nostd::Code::Schema), "{e}");
}

/// A writer that fails after `left` bytes.
struct Failing {
    left: usize,
}

impl Write for Failing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other("disk full"));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn write_failures_are_io_errors() {
    let gguf = sample_gguf();
    let message = run(Format::Gguf, Format::Kiln, &gguf).unwrap();
    let st = sample_safetensors(None);
    for (from, to, input) in [
        (Format::Gguf, Format::Kiln, &gguf),
        (Format::Kiln, Format::Gguf, &message),
        (Format::Safetensors, Format::Kiln, &st),
    ] {
        let e = convert(from, to, input, Failing { left: 100 }).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io, "{e}");
        assert!(e.to_string().contains("disk full"), "{e}");
        assert!(std::error::Error::source(&e).is_some());
    }
}
