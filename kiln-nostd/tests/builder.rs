//! The builder writes only what the parser accepts, and refuses what it
//! cannot write canonically before writing anything.

use kiln_nostd::{
    from_bytes, to_slice, Directory, Dtype, Kind, Limits, QuantSpec, Reader, Refusal, TensorSpec,
    Tensors, Writer,
};

// wasm-bindgen-test-runner runs only #[wasm_bindgen_test] functions.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn refused(specs: &[TensorSpec]) -> &'static str {
    let mut buf = vec![0xAAu8; 1 << 16];
    let err = to_slice(&Tensors(specs), &mut buf).unwrap_err();
    assert_eq!(err.kind(), Kind::Refused(Refusal::NotEncodable), "{err}");
    // Nothing was written.
    assert!(buf.iter().all(|&b| b == 0xAA));
    err.fault()
}

/// Whether a refusal's sentence names what it is about (always, with the
/// feature no-error-text, which leaves sentences out).
fn says(fault: &str, what: &str) -> bool {
    cfg!(feature = "no-error-text") || fault.contains(what)
}

#[test]
fn refuses_what_cannot_be_written_canonically() {
    let long = "x".repeat(65_536);
    let four = [0u8; 4];
    assert!(says(
        refused(&[TensorSpec::new(Dtype::F32, &[1], &four).named(&long)]),
        "65,535"
    ));
    assert!(says(
        refused(&[TensorSpec::new(Dtype::U8, &[1; 9], &[0])]),
        "rank"
    ));
    assert!(says(
        refused(&[TensorSpec::new(Dtype::F32, &[2], &four)]),
        "byte length"
    ));
    assert!(says(
        refused(&[
            TensorSpec::new(Dtype::U8, &[1], &[0]).named("a"),
            TensorSpec::new(Dtype::U8, &[1], &[0]),
        ]),
        "named"
    ));
    assert!(says(
        refused(&[
            TensorSpec::new(Dtype::U8, &[1], &[0]).named("a"),
            TensorSpec::new(Dtype::U8, &[1], &[0]).named("a"),
        ]),
        "repeats"
    ));
    assert!(says(
        refused(&[TensorSpec::new(Dtype::U8, &[1], &[0]).named("")]),
        "empty"
    ));
    assert!(says(
        refused(&[TensorSpec::new(Dtype::Bool, &[1], &[2])]),
        "bool"
    ));
    assert!(says(
        refused(&[TensorSpec::opaque(4096, "Q4_K", 18, &[1], &[0; 17])]),
        "multiple"
    ));
    assert!(says(
        refused(&[TensorSpec::opaque(20, "x", 1, &[1], &[0])]),
        "dtype"
    ));
    // Quantization: a scale count that is not one per group, and a chain.
    let data = [0u8; 16];
    let scales = QuantSpec::Scales {
        axis: 0,
        group_size: 16,
        scales: 1,
    };
    assert!(says(
        refused(&[
            TensorSpec::new(Dtype::E2M1, &[32], &data).quantized(scales),
            TensorSpec::new(Dtype::E8M0, &[1], &[127]),
        ]),
        "one per group"
    ));
    assert!(says(
        refused(&[
            TensorSpec::new(Dtype::E2M1, &[32], &data).quantized(scales),
            TensorSpec::new(Dtype::E8M0, &[2], &[127, 127]).quantized(QuantSpec::Scales {
                axis: 0,
                group_size: 2,
                scales: 0
            }),
        ]),
        "quantized"
    ));
    // Host numbers of the wrong type for the dtype.
    let wrong = TensorSpec {
        dtype: Dtype::F64.into(),
        ..TensorSpec::from_host(&[1], &[1.0f32, 2.0])
    };
    assert!(says(refused(&[wrong]), "host element"));
}

#[test]
fn caps_bound_what_is_written() {
    let specs = [TensorSpec::new(Dtype::U8, &[1], &[0]); 5];
    let mut buf = [0u8; 2048];
    let mut w = Writer::with_limits(kiln_nostd::SliceSink::new(&mut buf), Limits::uniform(4));
    let err = kiln_nostd::Encode::encode(&Tensors(&specs), &mut w).unwrap_err();
    assert_eq!(err.kind(), Kind::Refused(Refusal::NotEncodable));
    let mut w = Writer::with_limits(kiln_nostd::SliceSink::new(&mut buf), Limits::uniform(4));
    assert!(kiln_nostd::Encode::encode(&"hello", &mut w).is_err());
}

#[test]
fn too_deep_values_are_refused_by_the_writer() {
    // 64 nested opts are fine; the 65th container is refused, as a reader
    // would reject it with DEPTH.
    macro_rules! nest {
        ($v:ident; $($x:tt)*) => { $(let _ = stringify!($x); let $v = Some($v);)* };
    }
    let v = 1u8;
    nest!(v; a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
             a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a);
    let mut buf = [0u8; 128];
    let bytes = to_slice(&v, &mut buf).unwrap().to_vec();
    assert_eq!(bytes.len(), 65);
    let w = Some(v);
    let err = to_slice(&w, &mut buf).unwrap_err();
    assert_eq!(err.kind(), Kind::Refused(Refusal::NotEncodable));
}

#[test]
fn trusted_reader_checks_bounds_but_skips_names_and_quant() {
    let data = [0x21u8; 16];
    let specs = [
        TensorSpec::new(Dtype::E2M1, &[32], &data)
            .named("wq")
            .quantized(QuantSpec::Scales {
                axis: 0,
                group_size: 32,
                scales: 1,
            }),
        TensorSpec::new(Dtype::E8M0, &[1], &[127]).named("sc"),
    ];
    let mut buf = [0u8; 1024];
    let block = to_slice(&Tensors(&specs), &mut buf).unwrap().to_vec();
    let trusted = Directory::parse_trusted(&block, Limits::DEFAULT).unwrap();
    assert_eq!(trusted, Directory::parse(&block).unwrap());

    // A bad name: the checking reader says UTF8, the trusted one accepts
    // it and the view reports no name rather than bad text.
    let mut bad = block.clone();
    let heap = 64 + 2 * 128;
    bad[heap] = 0xff;
    assert_eq!(
        Directory::parse(&bad).unwrap_err().code(),
        Some(kiln_nostd::Code::Utf8)
    );
    let dir = Directory::parse_trusted(&bad, Limits::DEFAULT).unwrap();
    assert_eq!(dir.get(0).unwrap().name(), None);
    // A bad scale count: skipped by the trusted reader only.
    let mut wrong_group = block.clone();
    wrong_group[64 + 20] = 16; // group_size 32 -> 16: two scales needed
    assert!(Directory::parse(&wrong_group).is_err());
    assert!(Directory::parse_trusted(&wrong_group, Limits::DEFAULT).is_ok());
    // Bounds are still checked: a truncated block is EOF.
    let err = Directory::parse_trusted(&block[..block.len() - 1], Limits::DEFAULT).unwrap_err();
    assert_eq!(err.code(), Some(kiln_nostd::Code::Eof));

    // The trusted Frozen reader still checks every bound.
    let mut r = Reader::trusted(&[5, 0, 0, 0, b'a'], Limits::DEFAULT);
    assert_eq!(r.str().unwrap_err().code(), Some(kiln_nostd::Code::Eof));
    assert_eq!(from_bytes::<u8>(&[9]).unwrap(), 9);
}

/// A view's name is the heap's text cut at the name's slice: multibyte
/// names read back whole, and a slice that splits a character (which only
/// a trusted parse lets through) reads as no name, as a check of the
/// slice alone says.
#[test]
fn names_read_back_from_the_heap_text() {
    let one = [1u8];
    let names = ["é", "a", "ü_x", "日本"];
    let specs: Vec<TensorSpec> = names
        .iter()
        .map(|n| TensorSpec::from_host(&[1], &one).named(n))
        .collect();
    let mut buf = vec![0u8; 4096];
    let block = to_slice(&Tensors(&specs), &mut buf).unwrap().to_vec();
    for dir in [
        Directory::parse(&block).unwrap(),
        Directory::parse_trusted(&block, Limits::DEFAULT).unwrap(),
    ] {
        let read: Vec<_> = dir.iter().map(|t| t.name()).collect();
        assert_eq!(read, names.map(Some));
        assert_eq!(dir.by_name("日本").map(|t| t.index()), Some(3));
    }
    // Names "é" and "a" moved by one byte: [C3] and [A9 61], each not
    // UTF-8, though the heap as a whole still is.
    let mut split = block.clone();
    let record = |i: usize| 64 + 128 * i;
    split[record(0) + 6] = 1; // name 0: length 1
    split[record(1) + 4] = 1; // name 1: offset 1
    split[record(1) + 6] = 2; // name 1: length 2
    assert!(Directory::parse(&split).is_err());
    let dir = Directory::parse_trusted(&split, Limits::DEFAULT).unwrap();
    let read: Vec<_> = dir.iter().map(|t| t.name()).collect();
    assert_eq!(read, [None, None, Some("ü_x"), Some("日本")]);
}
