//! The builder writes only what the parser accepts, and refuses what it
//! cannot write canonically before writing anything.

use kiln_nostd::{
    from_bytes, to_slice, Directory, Dtype, Encode, Kind, Limits, QuantSpec, Reader, Refusal,
    TensorSpec, Tensors, Writer,
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

/// A sink with only `put`: the trait's own `put_built`, which builds each
/// run on the stack (what a sink over a UART or a checksum gets).
struct PutOnly(Vec<u8>);

impl kiln_nostd::Sink for PutOnly {
    fn put(&mut self, bytes: &[u8]) -> kiln_nostd::Result<()> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }
    fn written(&self) -> usize {
        self.0.len()
    }
}

/// A sink that lends bytes of its own (`put_lent`), holding garbage before
/// each loan, as a buffered writer's do; it counts its loans.
#[derive(Default)]
struct Lending {
    kept: Vec<u8>,
    loans: usize,
}

impl kiln_nostd::Sink for Lending {
    fn put(&mut self, bytes: &[u8]) -> kiln_nostd::Result<()> {
        self.kept.extend_from_slice(bytes);
        Ok(())
    }
    fn put_lent(&mut self, len: usize, fill: impl FnOnce(&mut [u8]) -> bool) -> bool {
        self.loans += 1;
        let mut lent = vec![0xEE; len];
        let kept = fill(&mut lent);
        if kept {
            self.kept.extend_from_slice(&lent);
        }
        kept
    }
    fn written(&self) -> usize {
        self.kept.len()
    }
}

/// A sink that lends its bytes gets the bytes every other sink gets, and
/// nothing at all for a block that is refused (a loan the check declines
/// keeps nothing).
#[test]
fn a_lending_sink_gets_the_same_block_and_nothing_when_refused() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(300).collect();
    let short = |name, len| TensorSpec::new(Dtype::U8, &[], &bytes[..len]).named(name);
    let shapes: Vec<[u64; 1]> = (0..=300u64).map(|n| [n]).collect();
    let u8s =
        |name, len: usize| TensorSpec::new(Dtype::U8, &shapes[len], &bytes[..len]).named(name);
    let blocks: Vec<Vec<TensorSpec>> = vec![
        // Plain, payloads of at most 64 bytes: heap and payloads lent too.
        vec![u8s("a", 1), u8s("b", 64), u8s("c", 0), u8s("d", 17)],
        // Plain with a longer payload: only the descriptors are lent.
        vec![u8s("a", 3), u8s("b", 300), u8s("c", 5)],
        vec![u8s("a", 65)],
        // Names out of order (allowed; searched for a repeat).
        vec![u8s("b", 2), u8s("a", 2)],
        // Unnamed, and not plain.
        vec![TensorSpec::new(Dtype::F64, &[], &bytes[..8])],
        vec![
            TensorSpec::opaque(4096, "q4", 4, &[8], &bytes[..8]).named("q"),
            TensorSpec::new(Dtype::Bool, &[3], &[1, 0, 1]).named("r"),
        ],
        vec![],
    ];
    for specs in &blocks {
        let mut put_only = Writer::new(PutOnly(Vec::new()));
        Tensors(specs).encode(&mut put_only).unwrap();
        let mut lending = Writer::new(Lending::default());
        Tensors(specs).encode(&mut lending).unwrap();
        let lending = lending.into_sink();
        assert_eq!(lending.kept, put_only.into_sink().0, "{specs:?}");
        assert!(lending.loans <= 2);
    }
    let refused: Vec<Vec<TensorSpec>> = vec![
        vec![u8s("b", 1), u8s("a", 1), u8s("b", 1)],
        vec![u8s("a", 1), u8s("a", 1)],
        vec![u8s("a", 1), u8s("", 1)],
        vec![u8s("a", 1), TensorSpec::new(Dtype::U8, &[1], &bytes[..1])],
        vec![
            u8s("a", 1),
            TensorSpec::new(Dtype::U8, &[2], &bytes[..1]).named("b"),
        ],
        vec![short("a", 2)],
    ];
    for specs in &refused {
        let mut lending = Writer::new(Lending::default());
        let err = Tensors(specs)
            .encode(&mut lending)
            .expect_err(&format!("{specs:?}"));
        assert_eq!(
            err.kind(),
            Kind::Refused(Refusal::NotEncodable),
            "{specs:?}"
        );
        assert_eq!(lending.written(), 0);
        // The refusal is the one a sink that does not lend gets.
        let mut put_only = Writer::new(PutOnly(Vec::new()));
        assert_eq!(Tensors(specs).encode(&mut put_only).unwrap_err(), err);
    }
}

/// Every sink gets the same block, whether it lends its own bytes to
/// `put_built` (a slice with room, one whose end cuts a descriptor's or a
/// payload run's room short) or not (the trait's default, the counter);
/// a slice one byte short refuses with the length the block needs.
#[test]
fn every_sink_gets_the_same_block() {
    let bytes: Vec<u8> = (0..200u8).collect();
    let names = ["a", "bb", "ccc", "dddd"];
    let blocks: Vec<Vec<TensorSpec>> = vec![
        // Plain: a long payload alone, then short ones joined with their
        // gaps, the last run ending the block.
        vec![
            TensorSpec::new(Dtype::U8, &[200], &bytes[..200]).named(names[0]),
            TensorSpec::new(Dtype::U8, &[4], &bytes[..4]).named(names[1]),
            TensorSpec::new(Dtype::U16, &[8], &bytes[..16]).named(names[2]),
            TensorSpec::new(Dtype::F32, &[4, 4], &bytes[..64]).named(names[3]),
        ],
        // Not plain: an opaque tensor with a layout name, then a bool.
        vec![
            TensorSpec::opaque(4096, "q4", 4, &[8], &bytes[..8]),
            TensorSpec::new(Dtype::Bool, &[3], &[1, 0, 1]),
        ],
        vec![],
    ];
    for specs in &blocks {
        let mut put_only = Writer::new(PutOnly(Vec::new()));
        Tensors(specs).encode(&mut put_only).unwrap();
        let expected = put_only.into_sink().0;
        let mut big = vec![0x55u8; expected.len() + 256];
        assert_eq!(to_slice(&Tensors(specs), &mut big).unwrap(), &expected[..]);
        // Exactly the block's length: the last runs have less room than
        // they are built in, and are built on the stack.
        let mut exact = vec![0x55u8; expected.len()];
        assert_eq!(
            to_slice(&Tensors(specs), &mut exact).unwrap(),
            &expected[..]
        );
        let mut counter = Writer::new(kiln_nostd::CountingSink::new());
        Tensors(specs).encode(&mut counter).unwrap();
        assert_eq!(counter.written(), expected.len());
        if let Some(short) = expected.len().checked_sub(1) {
            let mut short = vec![0x55u8; short];
            let err = to_slice(&Tensors(specs), &mut short).unwrap_err();
            assert_eq!(err.kind(), Kind::Refused(Refusal::BufferTooSmall));
        }
    }
}

/// `put_built` keeps the first `len` bytes of what `fill` writes, from any
/// sink, where a sink that lends its bytes holds other bytes before.
#[test]
fn put_built_keeps_the_first_len_bytes() {
    use kiln_nostd::Sink;
    let fill = |run: &mut [u8; 8]| *run = *b"01234567";
    let mut buf = [0xEEu8; 12];
    let mut slice = kiln_nostd::SliceSink::new(&mut buf);
    slice.put(b"ab").unwrap();
    slice.put_built(3, fill).unwrap(); // room for all 8
    slice.put_built(5, fill).unwrap(); // 7 left: on the stack
    assert_eq!(
        slice.put_built(3, fill).unwrap_err().kind(),
        Kind::Refused(Refusal::BufferTooSmall)
    );
    assert_eq!(slice.into_written(), b"ab01201234");
    let mut put_only = PutOnly(Vec::new());
    put_only.put_built(9, fill).unwrap(); // at most N
    put_only.put_built(0, fill).unwrap();
    assert_eq!(put_only.0, b"01234567");
}
