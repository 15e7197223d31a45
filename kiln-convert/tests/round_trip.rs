//! Round trips that need no Python: hand-built GGUF files and safetensors
//! files written by the safetensors crate, to Kiln and back, byte for byte.

mod common;

use common::*;
use kiln_convert::{
    convert, gguf::Gguf, kiln_safetensors_parts, kiln_to_safetensors, Format, GgufMessage,
    MessageType, Model, SafetensorsMessage, GGUF_MESSAGE, LIMITS, SAFETENSORS_MESSAGE,
};
use kiln_nostd::{Dtype, DtypeCode};

/// Converts to Kiln, and views every payload of the result in place from
/// a memory map of it.
fn to_kiln(from: Format, input: &[u8]) -> Vec<u8> {
    static FILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let mut out = Vec::new();
    let summary = convert(from, Format::Kiln, input, &mut out).unwrap();
    assert_eq!(summary.written, out.len() as u64);
    let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    view_every_payload(&MappedFile::new(&format!("round-trip-{n}.kiln"), &out).map);
    out
}

fn back(to: Format, message: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    convert(Format::Kiln, to, message, &mut out).unwrap();
    out
}

#[test]
fn gguf_comes_back_byte_identical() {
    let original = sample_gguf();
    let message = to_kiln(Format::Gguf, &original);
    kiln_nostd::check(
        GGUF_MESSAGE,
        &message,
        kiln_nostd::Options::FRAMED.with_limits(LIMITS),
    )
    .unwrap();
    assert_eq!(MessageType::of(&message).unwrap(), MessageType::Gguf);
    assert_eq!(back(Format::Gguf, &message), original);
}

#[test]
fn gguf_with_alignment_64_and_no_tensors() {
    let with_64 = GgufBuilder {
        alignment: 64,
        ..GgufBuilder::new()
    }
    .kv("general.alignment", 4, &64u32.to_le_bytes())
    .tensor("a", &[3], 0, &f32_bytes(&[1.0, 2.0, 3.0]))
    .tensor("b", &[5], 24, &[1, 2, 3, 4, 5])
    .build();
    assert_eq!(Gguf::parse(&with_64).unwrap().alignment, 64);
    assert_eq!(
        back(Format::Gguf, &to_kiln(Format::Gguf, &with_64)),
        with_64
    );

    let no_tensors = GgufBuilder::new().kv("k", 8, &gguf_str(b"v")).build();
    assert_eq!(
        back(Format::Gguf, &to_kiln(Format::Gguf, &no_tensors)),
        no_tensors
    );
    // Without the padding after the tensor infos (gguf-py's vocab-only
    // path stops after the metadata), the file is read and comes back
    // padded: header 24 bytes, key 9, type 4, value 9.
    let unpadded = &no_tensors[..24 + 9 + 4 + 9];
    assert_eq!(
        back(Format::Gguf, &to_kiln(Format::Gguf, unpadded)),
        no_tensors
    );
}

#[test]
fn gguf_tensors_become_kiln_tensors() {
    let message = to_kiln(Format::Gguf, &sample_gguf());
    let decoded: GgufMessage = kiln_nostd::from_frame_with(&message, LIMITS).unwrap();
    let [file] = decoded.files.as_slice() else {
        panic!("one file")
    };
    assert_eq!((file.file, file.version), ("", 3));
    let texts: Vec<&str> = file.metadata.iter().map(|p| p.value_type).collect();
    assert!(texts.contains(&"list<struct{type:str,value:list<u8>,}>"));
    assert!(texts.contains(&"list<f64>"));
    assert!(texts.contains(&"str"));
    let [aligned] = file.directories.as_slice() else {
        panic!("one directory")
    };
    assert!(aligned.align.iter().all(|&b| b == 0));
    let dir = &aligned.tensors;
    assert_eq!(dir.offset() % 64, 0);
    assert_eq!(dir.byte_range().end, message.len());
    let names: Vec<_> = dir.iter().map(|t| t.name().unwrap()).collect();
    assert_eq!(
        names,
        ["w.f32", "w.q4_k", "w.i16", "scalar", "empty", "w.q8_0"]
    );
    let model = Model::open(&message).unwrap();
    let f32_ = model.tensor("w.f32").unwrap();
    assert_eq!(f32_.shape(), &[2, 3], "GGUF [3, 2] is Kiln [2, 3]");
    assert_eq!(f32_.dtype(), DtypeCode::Closed(Dtype::F32));
    let q4k = model.tensor("w.q4_k").unwrap();
    assert_eq!(q4k.dtype(), DtypeCode::Opaque(4096 + 12));
    assert_eq!((q4k.layout(), q4k.block_size()), (Some("Q4_K"), 144));
    assert_eq!(q4k.shape(), &[2, 256]);
    assert_eq!(model.tensor("scalar").unwrap().rank(), 0);
    assert_eq!(
        model.tensor("empty").unwrap().dtype(),
        DtypeCode::Closed(Dtype::Bf16)
    );
    assert!(model.tensor("absent").is_none());
}

#[test]
fn safetensors_comes_back_as_the_crate_writes_it() {
    for metadata in [None, Some(&[("format", "pt")][..])] {
        let original = sample_safetensors(metadata);
        let message = to_kiln(Format::Safetensors, &original);
        kiln_nostd::check(
            SAFETENSORS_MESSAGE,
            &message,
            kiln_nostd::Options::FRAMED.with_limits(LIMITS),
        )
        .unwrap();
        assert_eq!(back(Format::Safetensors, &message), original);
        // And through the crate's own serializer from the borrowed views.
        let (meta, views) = kiln_safetensors_parts(&message).unwrap();
        assert_eq!(safetensors::serialize(views, meta).unwrap(), original);
    }
}

#[test]
fn safetensors_tensors_are_sorted_by_name_with_their_dtypes() {
    let original = sample_safetensors(Some(&[("b", "2"), ("a", "1"), ("é", "3")]));
    let message = to_kiln(Format::Safetensors, &original);
    let decoded: SafetensorsMessage = kiln_nostd::from_frame_with(&message, LIMITS).unwrap();
    assert_eq!((decoded.index_file, decoded.index), ("", ""));
    let [file] = decoded.files.as_slice() else {
        panic!("one file")
    };
    // Keys in byte order: a, b, é.
    let pairs: Vec<_> = file.metadata.iter().collect();
    assert_eq!(pairs, [("a", "1"), ("b", "2"), ("é", "3")]);
    let [aligned] = file.directories.as_slice() else {
        panic!("one directory")
    };
    let dir = &aligned.tensors;
    assert_eq!(dir.offset() % 64, 0);
    let got: Vec<_> = dir.iter().map(|t| (t.name().unwrap(), t.dtype())).collect();
    assert_eq!(
        got,
        [
            ("bias.bf16", DtypeCode::Closed(Dtype::Bf16)),
            ("e8m0", DtypeCode::Closed(Dtype::E8M0)),
            ("mask", DtypeCode::Closed(Dtype::Bool)),
            ("scalar", DtypeCode::Closed(Dtype::I64)),
            ("weight", DtypeCode::Closed(Dtype::F32)),
            ("zero", DtypeCode::Closed(Dtype::U16)),
        ]
    );
    assert_eq!(
        dir.by_name("weight").unwrap().bytes(),
        f32_bytes(&[1.0, -2.0, 0.5, 8.0])
    );
    assert_eq!(dir.by_name("scalar").unwrap().shape(), &[] as &[u64]);
}

/// The alignment field is checked on read: a non-zero pad byte, or a pad
/// that leaves the directory off a multiple of 64, is a conversion error.
#[test]
fn a_bad_alignment_field_is_refused() {
    let message = to_kiln(Format::Safetensors, &sample_safetensors(None));
    let decoded: SafetensorsMessage = kiln_nostd::from_frame_with(&message, LIMITS).unwrap();
    let aligned = &decoded.files[0].directories[0];
    let pad = aligned.align.len();
    let dir_at = aligned.tensors.offset();
    assert!(pad > 0, "the sample's directory needs padding");
    // A non-zero byte in the pad.
    let mut bad = message.clone();
    bad[dir_at - 1] = 1;
    let e = Model::open(&bad).unwrap_err();
    assert!(e.to_string().contains("non-zero"), "{e}");
    assert_eq!(e.offset(), Some(dir_at as u64 - 1));
    // One pad byte fewer: the block moves to dir_at - 1.
    let mut short = message[..dir_at - pad - 4].to_vec();
    short.extend(((pad - 1) as u32).to_le_bytes());
    short.extend(vec![0; pad - 1]);
    short.extend_from_slice(&message[dir_at..]);
    let e = Model::open(&short).unwrap_err();
    assert!(e.to_string().contains("not a multiple of 64"), "{e}");
    assert!(kiln_to_safetensors(&short, Vec::new()).is_err());
}

#[test]
fn an_empty_safetensors_file() {
    let original = safetensors::serialize(
        Vec::<(&str, safetensors::tensor::TensorView<'_>)>::new(),
        None,
    )
    .unwrap();
    assert_eq!(
        back(
            Format::Safetensors,
            &to_kiln(Format::Safetensors, &original)
        ),
        original
    );
}
