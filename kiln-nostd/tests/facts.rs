//! The byte facts the format states outright, asserted directly.

use kiln_nostd::{
    bf16, check, f16, from_bytes, to_slice, Code, CompiledType, Directory, Dtype, Frozen, Options,
    PodList, Schema, TensorSpec, Tensors,
};

// wasm-bindgen-test-runner runs only #[wasm_bindgen_test] functions.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn encode<T: kiln_nostd::Encode>(value: &T) -> Vec<u8> {
    let mut buf = vec![0u8; 4096];
    let len = to_slice(value, &mut buf).unwrap().len();
    assert_eq!(kiln_nostd::encoded_len(value).unwrap(), len);
    buf.truncate(len);
    buf
}

#[derive(Frozen)]
struct Batch<'a> {
    id: i64,
    batch: Directory<'a>,
}

type Compiled<'t> = CompiledType<'t, 64>;

const BATCH_HASH: u64 = <Batch as Frozen>::HASH;

#[test]
fn schema_hash_of_the_wire_text_example() {
    assert_eq!(BATCH_HASH, 0xe58aadc7552f0d82);
    assert_eq!(Batch::SCHEMA.to_string(), "struct{id:i64,batch:tensors,}");
    let text = Compiled::parse("struct{id:i64,batch:tensors,}").unwrap();
    assert_eq!(text.hash(), 0xe58aadc7552f0d82);
    assert_eq!(Batch::MIN_SIZE, 8 + 64);
    assert_eq!(text.min_size(), 72);
}

#[test]
fn float_bits_are_little_endian_and_exact() {
    assert_eq!(encode(&1.0f32), [0x00, 0x00, 0x80, 0x3f]);
    assert_eq!(encode(&-0.0f32), [0x00, 0x00, 0x00, 0x80]);
    let nan = f64::from_bits(0x7FF8000000000001);
    let bytes = encode(&nan);
    assert_eq!(bytes, 0x7FF8000000000001u64.to_le_bytes());
    assert_eq!(
        from_bytes::<f64>(&bytes).unwrap().to_bits(),
        0x7FF8000000000001
    );
    let neg_zero = from_bytes::<f32>(&[0, 0, 0, 0x80]).unwrap();
    assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
}

#[test]
fn half_precision_payloads() {
    let one_bf16 = [bf16::from_f32(1.0)];
    let one_f16 = [f16::from_f32(1.0)];
    let specs = [
        TensorSpec::from_host(&[], &one_bf16),
        TensorSpec::from_host(&[], &one_f16),
    ];
    let block = encode(&Tensors(&specs));
    let dir = Directory::parse(&block).unwrap();
    assert_eq!(dir.get(0).unwrap().bytes(), [0x80, 0x3f]);
    assert_eq!(dir.get(1).unwrap().bytes(), [0x00, 0x3c]);
    assert_eq!(dir.get(1).unwrap().byte_offset(), 64); // payloads start at multiples of 64
}

#[test]
fn packed_nibbles_low_first() {
    let specs = [TensorSpec::new(Dtype::U4, &[3], &[0x21, 0x03])];
    let block = encode(&Tensors(&specs));
    assert_eq!(
        Directory::parse(&block).unwrap().get(0).unwrap().bytes(),
        [0x21, 0x03]
    );
    // A nonzero high nibble after an odd count cannot be written...
    let bad = [TensorSpec::new(Dtype::U4, &[3], &[0x21, 0x13])];
    assert!(to_slice(&Tensors(&bad), &mut [0u8; 512]).is_err());
    // ...and is TYPE when read.
    let mut patched = block.clone();
    let last = patched.len() - 1;
    patched[last] = 0x13;
    assert_eq!(
        Directory::parse(&patched).unwrap_err().code(),
        Some(Code::Type)
    );
}

#[test]
fn empty_directory_is_the_64_byte_header() {
    let block = encode(&Tensors(&[]));
    assert_eq!(
        hex(&block),
        "4b4c4e5402020000000000000000000000000000000000000000000000000000\
         0000000000000000000000000000000000000000000000000000000000000000"
    );
}

#[test]
fn f32_vector_block_is_200_bytes() {
    let values = [1.0f32, -2.0];
    let block = encode(&Tensors(&[TensorSpec::from_host(&[2], &values)]));
    assert_eq!(block.len(), 200);
    let expected = [
        // header: magic, version 2, flags LE, reserved, count 1, no heap,
        // payload 8, directory 128, reserved
        "4b4c4e54",
        "02",
        "02",
        "0000",
        "01000000",
        "00000000",
        "0800000000000000",
        "8000000000000000",
        &"00".repeat(32),
        // descriptor: f32, rank 1, unnamed, no layout, no block, scheme 0
        "0200",
        "01",
        "00",
        "ffff",
        "0000",
        "ffff",
        "0000",
        "00000000",
        "0000",
        "ffff",
        "00000000",
        "ffffffff",
        "ffffffff",
        "0000000000000000",
        "0800000000000000",
        "0200000000000000",
        &"00".repeat(56),
        &"00".repeat(16),
        // payload
        "0000803f000000c0",
    ]
    .concat();
    assert_eq!(hex(&block), expected);
}

#[test]
fn f8_pair_second_offset_is_64() {
    let specs = [
        TensorSpec::new(Dtype::F8E4M3, &[1], &[0x38]),
        TensorSpec::new(Dtype::F8E5M2, &[1], &[0x3c]),
    ];
    let block = encode(&Tensors(&specs));
    let dir = Directory::parse(&block).unwrap();
    assert_eq!(dir.get(0).unwrap().byte_offset(), 0);
    assert_eq!(dir.get(1).unwrap().byte_offset(), 64);
    assert_eq!(dir.get(1).unwrap().bytes(), [0x3c]);
    // Unnamed tensors are not found by any name, the empty one included.
    assert!(dir.by_name("").is_none() && dir.get(0).unwrap().name().is_none());
    // 64 header + 2 * 128 descriptors, payload 65 bytes with 63 zero.
    assert_eq!(block.len(), 320 + 65);
    assert!(block[321..384].iter().all(|&b| b == 0));
}

#[test]
fn struct_with_tensors_field_continues_after_the_block() {
    let values = [1.0f32, -2.0];
    let specs = [TensorSpec::from_host(&[2], &values)];
    #[derive(Frozen)]
    struct Message<'a> {
        id: i64,
        batch: Directory<'a>,
        tail: u8,
    }
    let mut block = [0u8; 256];
    let batch = Directory::build(&specs, &mut block).unwrap();
    let bytes = encode(&Message {
        id: 7,
        batch,
        tail: 9,
    });
    assert_eq!(bytes.len(), 8 + 200 + 1);
    let decoded: Message = from_bytes(&bytes).unwrap();
    assert_eq!((decoded.id, decoded.tail, decoded.batch.len()), (7, 9, 1));
    assert!(check(
        "struct{id:i64,batch:tensors,tail:u8,}",
        &bytes,
        Options::BARE
    )
    .is_ok());
}

#[test]
fn type_text_round_trips_and_rejects_garbage() {
    for text in [
        "bool",
        "struct{}",
        "list<list<u8>>",
        "dict<str,opt<struct{a:f64,b_2:tensors,}>>",
        "struct{x:struct{},y:list<str>,}",
    ] {
        assert_eq!(Compiled::parse(text).unwrap().to_string(), text);
    }
    for bad in [
        "",
        "list<>",
        "list<u8",
        "struct{a:u8}",
        "struct{a:u8,a:u8,}",
        "dict<u8,u8>",
        "struct{1a:u8,}",
        "u8 ",
        "float",
        "opt<u8>>",
    ] {
        assert!(Compiled::parse(bad).is_err(), "{bad}");
    }
    // Deep type text is fine; only decoding enters containers.
    let deep = format!("{}u8{}", "opt<".repeat(200), ">".repeat(200));
    assert!(CompiledType::<256>::parse(&deep).is_ok());
    let too_deep = format!("{}u8{}", "opt<".repeat(300), ">".repeat(300));
    assert!(CompiledType::<512>::parse(&too_deep).is_err());
}

#[test]
fn schema_display_matches_type_text_hash() {
    type Deep<'a> = Option<heapless::Vec<kiln_nostd::DictView<'a, PodList<'a, f32>>, 4>>;
    let text = <Deep as Frozen>::SCHEMA.to_string();
    assert_eq!(text, "opt<list<dict<str,list<f32>>>>");
    assert_eq!(
        Compiled::parse(&text).unwrap().hash(),
        <Deep as Frozen>::HASH
    );
    assert_eq!(
        <kiln_nostd::Int as Frozen>::SCHEMA,
        Schema::Scalar(kiln_nostd::Scalar::Int)
    );
    assert_ne!(<kiln_nostd::Int as Frozen>::HASH, <i64 as Frozen>::HASH);
}

/// An error line: with the feature no-error-text, the sentence after the
/// code and the numbers in parentheses are left out.
fn line(code: &str, sentence: &str, numbers: &str, rest: &str) -> String {
    if cfg!(feature = "no-error-text") {
        format!("{code}{rest}")
    } else {
        format!("{code}: {sentence}{numbers}{rest}")
    }
}

#[test]
fn error_lines_say_what_went_wrong_and_what_to_do() {
    // The README quotes these lines; they are what Display prints.
    let mut short = 16u32.to_le_bytes().to_vec();
    short.extend_from_slice(&[0u8; 12]);
    assert_eq!(
        from_bytes::<PodList<f32>>(&short).unwrap_err().to_string(),
        line(
            "EOF",
            "list count beyond the bytes that remain",
            " (needs 64 bytes, 12 remain)",
            " at byte 0"
        )
    );
    let mut buf = [0u8; 64];
    let framed = kiln_nostd::to_frame_slice(&7u32, &mut buf)
        .unwrap()
        .to_vec();
    assert_eq!(
        kiln_nostd::from_frame::<u64>(&framed)
            .unwrap_err()
            .to_string(),
        line(
            "SCHEMA",
            "frame schema hash is not the destination type's",
            " (expected 0xbfdca5e54a45ed36, found 0xa6b2e8e53c40f523)",
            " at byte 8"
        )
    );
    let mut sixteen = 16u32.to_le_bytes().to_vec();
    sixteen.extend_from_slice(&[0u8; 64]);
    assert_eq!(
        from_bytes::<heapless::Vec<u32, 4>>(&sixteen)
            .unwrap_err()
            .to_string(),
        line(
            "refused (Capacity)",
            "list count above the storage capacity",
            " (16, at most 4)",
            " at byte 0"
        )
    );
    let framed_list = kiln_nostd::to_frame_slice(&PodList::from_slice(&[1.0f32]), &mut buf)
        .unwrap()
        .to_vec();
    assert_eq!(
        from_bytes::<PodList<f32>>(&framed_list)
            .unwrap_err()
            .to_string(),
        line(
            "LIMIT",
            "count above the count cap",
            " (810437707, at most 16777216)",
            " at byte 0; \
             the bytes start with the frame magic KLN0: read them as framed \
             (from_frame, Options::FRAMED, kiln --framed)"
        )
    );
}
