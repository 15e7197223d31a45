//! Property tests: encode/decode round trips for every type, canonical
//! re-encoding, and robustness of every reader against arbitrary bytes.
#![cfg(not(target_arch = "wasm32"))]

use heapless::{LinearMap, String as HString, Vec as HVec};
use kiln_nostd::{
    check, encoded_len, from_bytes, from_bytes_with, to_slice, Decode, DictView, Directory, Dtype,
    Encode, Framing, Frozen, Int, Kind, Limits, ListView, Options, PodList, Refusal, SliceSink,
    TensorSpec, Tensors, Uint, Writer,
};

fn options(framed: bool, limits: Limits) -> Options {
    let framing = if framed {
        Framing::Framed
    } else {
        Framing::Bare
    };
    Options { framing, limits }
}
use proptest::prelude::*;

fn encode<T: Encode + ?Sized>(value: &T) -> Vec<u8> {
    let len = encoded_len(value).unwrap();
    let mut buf = vec![0u8; len];
    assert_eq!(to_slice(value, &mut buf).unwrap().len(), len);
    // One byte short is refused, never a panic.
    if len > 0 {
        let mut short = vec![0u8; len - 1];
        let err = to_slice(value, &mut short).unwrap_err();
        assert_eq!(err.kind(), Kind::Refused(Refusal::BufferTooSmall));
    }
    buf
}

/// decode(encode(v)) == v, and the decoded value re-encodes to the same bytes.
fn round_trip<T>(value: &T)
where
    T: Encode + for<'de> Decode<'de> + PartialEq + core::fmt::Debug,
{
    let bytes = encode(value);
    let back: T = from_bytes(&bytes).unwrap();
    assert_eq!(&back, value);
    assert_eq!(encode(&back), bytes);
}

proptest! {
    // A fixed seed: the same inputs on every run and every target, so a
    // test's outcome never depends on the run (the fuzzers in fuzz/ are the
    // ones that explore). Failures still shrink and are recorded in
    // properties.proptest-regressions.
    #![proptest_config(ProptestConfig {
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x6b69_6c6e),
        ..ProptestConfig::default()
    })]

    #[test]
    fn scalars(b: bool, a: i8, c: u8, d: i16, e: u16, f: i32, g: u32, h: i64, i: u64) {
        round_trip(&b); round_trip(&a); round_trip(&c); round_trip(&d); round_trip(&e);
        round_trip(&f); round_trip(&g); round_trip(&h); round_trip(&i);
        round_trip(&Int(h)); round_trip(&Uint(i));
    }

    #[test]
    fn floats_keep_every_bit(bits32: u32, bits64: u64) {
        let bytes = encode(&f32::from_bits(bits32));
        prop_assert_eq!(&bytes, &bits32.to_le_bytes());
        prop_assert_eq!(from_bytes::<f32>(&bytes).unwrap().to_bits(), bits32);
        let bytes = encode(&f64::from_bits(bits64));
        prop_assert_eq!(from_bytes::<f64>(&bytes).unwrap().to_bits(), bits64);
    }

    #[test]
    fn strings_and_bytes(text in ".{0,40}", raw in proptest::collection::vec(any::<u8>(), 0..40)) {
        let bytes = encode(&text.as_str());
        prop_assert_eq!(from_bytes::<&str>(&bytes).unwrap(), text.as_str());
        let bounded: HString<200> = from_bytes(&bytes).unwrap();
        prop_assert_eq!(bounded.as_str(), text.as_str());
        let bytes = encode(&raw.as_slice());
        prop_assert_eq!(from_bytes::<&[u8]>(&bytes).unwrap(), raw.as_slice());
    }

    #[test]
    fn lists(values in proptest::collection::vec(any::<u32>(), 0..32),
             words in proptest::collection::vec("[a-z]{0,6}", 0..8)) {
        let bounded: HVec<u32, 32> = values.iter().copied().collect();
        round_trip(&bounded);
        // The same bytes as a zero-copy list and as a lazily read view.
        let bytes = encode(&bounded);
        prop_assert_eq!(encode(&PodList::from_slice(&values)), bytes.clone());
        let pod: PodList<u32> = from_bytes(&bytes).unwrap();
        prop_assert_eq!(pod.iter().collect::<Vec<_>>(), values.clone());
        let view: ListView<u32> = from_bytes(&bytes).unwrap();
        prop_assert_eq!(view.iter().collect::<Vec<_>>(), values.clone());
        // Too little storage is a refusal (not a wire code: the bytes are
        // fine) before any element is read.
        if values.len() > 4 {
            let err = from_bytes::<HVec<u32, 4>>(&bytes).unwrap_err();
            prop_assert_eq!(err.refusal(), Some(Refusal::Capacity));
            prop_assert_eq!(err.offset(), Some(0));
        }
        let strs: HVec<&str, 8> = words.iter().map(String::as_str).collect();
        let bytes = encode(&strs);
        let back: ListView<&str> = from_bytes(&bytes).unwrap();
        prop_assert_eq!(back.iter().collect::<Vec<_>>(), words.iter().map(String::as_str).collect::<Vec<_>>());
        round_trip(&heapless_strings(&words));
    }

    #[test]
    fn optionals(v: Option<Option<i16>>, w: Option<u64>) {
        round_trip(&v);
        round_trip(&w);
    }

    #[test]
    fn dicts_sort_their_keys(pairs in proptest::collection::btree_map("[a-z]{1,6}", any::<u16>(), 0..8)) {
        // Inserted in reverse order; written sorted.
        let mut map: LinearMap<HString<8>, u16, 8> = LinearMap::new();
        for (k, v) in pairs.iter().rev() {
            map.insert(HString::try_from(k.as_str()).unwrap(), *v).unwrap();
        }
        let bytes = encode(&map);
        let view: DictView<u16> = from_bytes(&bytes).unwrap();
        let read: Vec<(String, u16)> = view.iter().map(|(k, v)| (k.to_string(), v)).collect();
        let sorted: Vec<(String, u16)> = pairs.iter().map(|(k, v)| (k.clone(), *v)).collect();
        prop_assert_eq!(read, sorted);
        for (k, v) in &pairs {
            prop_assert_eq!(view.get(k), Some(*v));
        }
        let stored: LinearMap<HString<8>, u16, 8> = from_bytes(&bytes).unwrap();
        prop_assert_eq!(encode(&stored), bytes);
    }

    #[test]
    fn dicts_of_strings_into_a_slice(
        pairs in proptest::collection::btree_map("[a-z]{0,20}", "[ -~]{0,70}", 0..8),
        reversed: bool,
        cap in 0u32..80,
    ) {
        // The bytes written by hand: count, then each key's and value's
        // length word and text, in key order.
        let mut want = (pairs.len() as u32).to_le_bytes().to_vec();
        for (k, v) in &pairs {
            for text in [k, v] {
                want.extend_from_slice(&(text.len() as u32).to_le_bytes());
                want.extend_from_slice(text.as_bytes());
            }
        }
        // Inserted in order (written behind one bounds check) or reversed
        // (sorted first); borrowed and stored keys and values alike.
        let mut borrowed: LinearMap<&str, &str, 8> = LinearMap::new();
        let mut stored: LinearMap<HString<20>, HString<70>, 8> = LinearMap::new();
        let order: Vec<_> = if reversed { pairs.iter().rev().collect() } else { pairs.iter().collect() };
        for (k, v) in order {
            borrowed.insert(k.as_str(), v.as_str()).unwrap();
            stored
                .insert(HString::try_from(k.as_str()).unwrap(), HString::try_from(v.as_str()).unwrap())
                .unwrap();
        }
        prop_assert_eq!(&encode(&borrowed), &want);
        prop_assert_eq!(&encode(&stored), &want);
        // Every buffer shorter than the dict is refused, whatever it holds.
        for len in 0..want.len() {
            let mut short = vec![0xa5u8; len];
            let err = to_slice(&borrowed, &mut short).unwrap_err();
            prop_assert_eq!(err.kind(), Kind::Refused(Refusal::BufferTooSmall));
        }
        // A text over the byte cap is refused as the pair-by-pair writer
        // refuses it; under it, the same bytes.
        let limits = Limits { count_cap: 8, byte_cap: cap };
        let over = pairs.iter().any(|(k, v)| k.len() > cap as usize || v.len() > cap as usize);
        let mut buf = vec![0u8; want.len()];
        let mut w = Writer::with_limits(SliceSink::new(&mut buf), limits);
        match borrowed.encode(&mut w) {
            Ok(()) => {
                prop_assert!(!over);
                prop_assert_eq!(&*w.into_sink().into_written(), &want[..]);
            }
            Err(err) => {
                prop_assert!(over);
                prop_assert_eq!(err.kind(), Kind::Refused(Refusal::NotEncodable));
            }
        }
    }

    #[test]
    fn structs(id: i64, name in "[ -~]{0,12}", score: Option<f64>, samples in proptest::collection::vec(any::<i16>(), 0..10)) {
        let out = Record { id, name: &name, score, samples: PodList::from_slice(&samples) };
        let bytes = encode(&out);
        let back: Record = from_bytes(&bytes).unwrap();
        prop_assert!(back.samples == out.samples);
        prop_assert_eq!(back.id, id);
        prop_assert_eq!(back.name, name.as_str());
        prop_assert_eq!(back.score.map(f64::to_bits), score.map(f64::to_bits));
        prop_assert_eq!(back.samples.iter().collect::<Vec<_>>(), samples);
        prop_assert_eq!(encode(&back), bytes.clone());
        let text = "struct{id:i64,name:str,score:opt<f64>,samples:list<i16>,}";
        prop_assert!(check(text, &bytes, Options::BARE).is_ok());
    }

    #[test]
    fn directories(specs in proptest::collection::vec(tensor(), 0..6), named: bool) {
        let names: Vec<String> = (0..specs.len()).map(|i| format!("t{i}")).collect();
        let list: Vec<TensorSpec> = specs
            .iter()
            .zip(&names)
            .map(|((dtype, shape, bytes), name)| {
                let spec = TensorSpec::new(*dtype, shape, bytes);
                if named { spec.named(name) } else { spec }
            })
            .collect();
        let block = encode(&Tensors(&list));
        // The length the builder writes, from the names' and payloads'
        // lengths alone.
        let lens = list
            .iter()
            .map(|s| (s.name.map_or(0, |n| n.len() as u64), s.payload.len() as u64));
        prop_assert_eq!(Tensors::block_len(lens), Some(block.len() as u64));
        let dir = Directory::parse(&block).unwrap();
        prop_assert_eq!(dir.len(), list.len());
        for (view, spec) in dir.iter().zip(&list) {
            prop_assert_eq!(view.closed_dtype(), Some(*match &spec.dtype { kiln_nostd::DtypeCode::Closed(d) => d, _ => unreachable!() }));
            prop_assert_eq!(view.shape(), spec.shape);
            prop_assert_eq!(view.name(), spec.name);
            prop_assert_eq!(view.byte_offset() % 64, 0);
            prop_assert_eq!(view.bytes().len(), spec.payload.len());
        }
        prop_assert_eq!(encode(&dir), block.clone());
        let verdict = check("tensors", &block, Options::BARE);
        prop_assert!(verdict.is_ok());
        // Any strict prefix is rejected with a wire code.
        let cut = block.len() / 2;
        prop_assert!(Directory::parse(&block[..cut]).unwrap_err().code().is_some());
    }

    #[test]
    fn any_bytes_get_a_verdict_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300), which in 0usize..TYPES.len(), cap in 0u32..64) {
        for limits in [Limits::DEFAULT, Limits::uniform(cap)] {
            for framed in [false, true] {
                if let Err(e) = check(TYPES[which], &bytes, options(framed, limits)) {
                    prop_assert!(e.code().is_some(), "{}", e);
                }
            }
        }
        let _ = from_bytes::<Directory>(&bytes);
        let _ = from_bytes::<ListView<Record>>(&bytes);
        let _ = from_bytes::<DictView<Option<&str>>>(&bytes);
        let _ = from_bytes_with::<HVec<HString<4>, 4>>(&bytes, Limits::uniform(cap));
    }

    #[test]
    fn mutated_directories_get_a_verdict(index in 0usize..600, value: u8) {
        let block = sample_block();
        let mut bytes = block.clone();
        let i = index % bytes.len();
        bytes[i] = value;
        match Directory::parse(&bytes) {
            Ok(dir) => {
                // Whatever was accepted is canonical: it re-encodes exactly.
                prop_assert_eq!(encode(&dir), bytes.clone());
                for view in dir.iter() { let _ = (view.name(), view.quant(), view.bytes()); }
            }
            Err(e) => prop_assert!(e.code().is_some()),
        }
    }
}

const TYPES: [&str; 8] = [
    "tensors",
    "struct{id:i64,batch:tensors,}",
    "list<struct{a:i64,b:str,}>",
    "dict<str,opt<list<u8>>>",
    "opt<opt<opt<bool>>>",
    "list<list<tensors>>",
    "struct{a:str,b:list<f32>,c:dict<str,struct{}>,}",
    "list<struct{}>",
];

fn heapless_strings(words: &[String]) -> HVec<HString<8>, 8> {
    words
        .iter()
        .map(|w| HString::try_from(w.as_str()).unwrap())
        .collect()
}

/// One struct writes (from host numbers) and reads (borrowing the bytes).
#[derive(Frozen)]
struct Record<'a> {
    id: i64,
    name: &'a str,
    score: Option<f64>,
    samples: PodList<'a, i16>,
}

/// A closed dtype, a small shape, and valid payload bytes for them.
fn tensor() -> impl Strategy<Value = (Dtype, Vec<u64>, Vec<u8>)> {
    (
        0usize..19,
        proptest::collection::vec(0u64..5, 0..4),
        any::<u64>(),
    )
        .prop_map(|(d, shape, seed)| {
            let dtype = Dtype::ALL[d];
            let count: u64 = shape.iter().product();
            let len = dtype.byte_length(count).unwrap() as usize;
            let mut state = seed;
            let mut bytes: Vec<u8> = (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (state >> 56) as u8
                })
                .collect();
            match dtype {
                Dtype::Bool => bytes.iter_mut().for_each(|b| *b &= 1),
                Dtype::I4 | Dtype::U4 | Dtype::E2M1 if count % 2 == 1 => {
                    if let Some(last) = bytes.last_mut() {
                        *last &= 0x0f;
                    }
                }
                _ => {}
            }
            (dtype, shape, bytes)
        })
}

/// A block with names, a layout, quantization and gaps: every region.
fn sample_block() -> Vec<u8> {
    let data = [0x21u8; 16];
    let scale = [127u8];
    let outer = 1.0f32.to_le_bytes();
    let opaque = [7u8; 18];
    let specs = [
        TensorSpec::new(Dtype::E2M1, &[32], &data)
            .named("w")
            .quantized(kiln_nostd::QuantSpec::ScalesOuter {
                axis: 0,
                group_size: 32,
                scales: 1,
                outer: 2,
            }),
        TensorSpec::new(Dtype::F8E4M3, &[1], &scale).named("s"),
        TensorSpec::new(Dtype::F32, &[], &outer).named("o"),
        TensorSpec::opaque(4096, "Q4_K", 18, &[1], &opaque).named("q"),
        TensorSpec::new(Dtype::Bool, &[3], &[1, 0, 1]).named("b"),
    ];
    encode(&Tensors(&specs))
}

#[test]
fn sample_block_is_valid() {
    let block = sample_block();
    let dir = Directory::parse(&block).unwrap();
    assert_eq!(dir.len(), 5);
    let q = dir.by_name("q").unwrap();
    assert_eq!((q.layout(), q.block_size()), (Some("Q4_K"), 18));
    match dir.by_name("w").unwrap().quant() {
        kiln_nostd::Quant::ScalesOuter {
            scales,
            outer,
            group_size,
            axis,
        } => {
            assert_eq!(
                (scales.name(), outer.name(), group_size, axis),
                (Some("s"), Some("o"), 32, 0)
            );
        }
        other => panic!("{other:?}"),
    }
}
