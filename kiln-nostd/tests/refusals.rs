//! Refusals say how much: a buffer refusal gives the bytes needed and the
//! bytes there, a wrong element type names both dtypes, and `Debug` of a
//! directory or a tensor prints facts, never the block's bytes.

use kiln_nostd::{
    from_bytes, order, to_frame_slice, to_slice, Detail, Directory, Dtype, DtypeCode, PodList,
    Refusal, TensorSpec,
};

/// With the feature no-error-text the sentence and the numbers are left
/// out; the kind, the tensor and the offset stay.
fn line(kind: &str, sentence: &str, numbers: &str, rest: &str) -> String {
    if cfg!(feature = "no-error-text") {
        format!("{kind}{rest}")
    } else {
        format!("{kind}: {sentence}{numbers}{rest}")
    }
}

fn bytes(needed: u64, available: u64) -> Detail {
    if cfg!(feature = "no-error-text") {
        Detail::None
    } else {
        Detail::Bytes { needed, available }
    }
}

fn width(length: u64, width: u64) -> Detail {
    if cfg!(feature = "no-error-text") {
        Detail::None
    } else {
        Detail::Width { length, width }
    }
}

fn dtypes(tensor: Dtype, requested: u16) -> Detail {
    if cfg!(feature = "no-error-text") {
        Detail::None
    } else {
        Detail::Dtypes {
            tensor: tensor.code(),
            requested,
        }
    }
}

const MATRIX: [f32; 6] = [1.0, 0.0, 0.5, 0.0, 1.0, -0.5];

fn specs() -> [TensorSpec<'static>; 1] {
    [TensorSpec::from_host(&[2, 3], &MATRIX).named("cal")]
}

#[test]
fn encoded_len_is_what_build_writes_and_one_byte_less_is_refused_with_both_numbers() {
    let specs = specs();
    let needed = Directory::encoded_len(&specs).unwrap();
    // Header, one descriptor, the name heap padded to 64, 24 payload bytes.
    assert_eq!(needed, 64 + 128 + 64 + 24);
    let mut buf = [0u8; 1024];
    assert_eq!(
        Directory::build(&specs, &mut buf[..needed])
            .unwrap()
            .block_len(),
        needed
    );
    for short in [0, 1, 64, needed - 1] {
        let err = Directory::build(&specs, &mut buf[..short]).unwrap_err();
        assert_eq!(err.refusal(), Some(Refusal::BufferTooSmall));
        // The whole length, not the bytes up to the write that failed.
        assert_eq!(err.detail(), bytes(needed as u64, short as u64), "{short}");
    }
    assert_eq!(
        Directory::build(&specs, &mut buf[..needed - 1])
            .unwrap_err()
            .to_string(),
        line(
            "refused (BufferTooSmall)",
            "output buffer too small",
            " (needs 280 bytes, the buffer has 279)",
            ""
        )
    );
    // More tensors: the count still follows the builder.
    let two = [
        TensorSpec::from_host(&[6], &MATRIX).named("v"),
        TensorSpec::from_host(&[3, 2], &MATRIX).named("t"),
    ];
    let len = Directory::encoded_len(&two).unwrap();
    assert_eq!(Directory::build(&two, &mut buf).unwrap().block_len(), len);
}

#[test]
fn encoded_len_refuses_what_build_refuses() {
    // Two elements of shape [3] do not fill it.
    let bad = [TensorSpec::from_host(&[3], &MATRIX[..2])];
    let mut buf = [0u8; 1024];
    let from_len = Directory::encoded_len(&bad).unwrap_err();
    let from_build = Directory::build(&bad, &mut buf).unwrap_err();
    assert_eq!(from_len.refusal(), Some(Refusal::NotEncodable));
    assert_eq!(from_len, from_build);
}

#[test]
fn slice_and_frame_refusals_give_the_whole_length() {
    let values = [1.0f32, 2.0, 3.0];
    let list = PodList::from_slice(&values);
    let mut buf = [0u8; 64];
    let err = to_slice(&list, &mut buf[..5]).unwrap_err();
    assert_eq!(err.detail(), bytes(16, 5));
    let err = to_frame_slice(&list, &mut buf[..20]).unwrap_err();
    assert_eq!(err.detail(), bytes(32, 20));
    assert_eq!(
        err.to_string(),
        line(
            "refused (BufferTooSmall)",
            "output buffer too small",
            " (needs 32 bytes, the buffer has 20)",
            ""
        )
    );
}

#[test]
fn a_short_output_slice_is_counted_in_bytes() {
    let mut block = [0u8; 512];
    let dir = Directory::build(&specs(), &mut block).unwrap();
    let cal = dir.get(0).unwrap();
    let mut four = [0f32; 4];
    let err = cal.copy_into(&mut four).unwrap_err();
    assert_eq!(err.refusal(), Some(Refusal::BufferTooSmall));
    assert_eq!(err.detail(), bytes(24, 16));
    assert_eq!(err.tensor(), Some(0));
    let err = cal.copy_into_f32(&mut four).unwrap_err();
    assert_eq!(err.detail(), bytes(24, 16));
    assert_eq!(
        err.to_string(),
        line(
            "refused (BufferTooSmall)",
            "output slice shorter than the element count",
            " (needs 24 bytes, the buffer has 16)",
            " in tensor 0"
        )
    );
    // A list read into a short slice: the same numbers.
    let mut message = [0u8; 64];
    let written = to_slice(&PodList::from_slice(&MATRIX), &mut message).unwrap();
    let list: PodList<f32> = from_bytes(written).unwrap();
    assert_eq!(
        list.copy_into(&mut four).unwrap_err().detail(),
        bytes(24, 16)
    );
    // Enough room: no refusal.
    let mut six = [0f32; 6];
    assert_eq!(cal.copy_into(&mut six), Ok(6));
}

#[test]
fn a_wrong_element_type_names_both_dtypes() {
    let mut block = [0u8; 512];
    let dir = Directory::build(&specs(), &mut block).unwrap();
    let cal = dir.get(0).unwrap();
    let err = cal.as_slice::<u16>().unwrap_err();
    assert_eq!(err.refusal(), Some(Refusal::WrongElementType));
    assert_eq!(err.detail(), dtypes(Dtype::F32, Dtype::U16.code()));
    assert_eq!(
        err.to_string(),
        line(
            "refused (WrongElementType)",
            "element type does not match the tensor's dtype",
            " (the tensor is f32, asked for u16)",
            " in tensor 0"
        )
    );
    let mut out = [0i8; 6];
    assert_eq!(
        cal.copy_into(&mut out).unwrap_err().detail(),
        dtypes(Dtype::F32, Dtype::I8.code())
    );

    // A read that takes a set of dtypes names the tensor's alone.
    let ints = [1i32, 2, 3];
    let mut block = [0u8; 512];
    let dir = Directory::build(&[TensorSpec::from_host(&[3], &ints)], &mut block).unwrap();
    let err = dir
        .get(0)
        .unwrap()
        .copy_into_f32(&mut [0f32; 3])
        .unwrap_err();
    assert_eq!(err.detail(), dtypes(Dtype::I32, 0));
    assert_eq!(
        err.to_string(),
        line(
            "refused (WrongElementType)",
            "copy_into_f32 takes an f32, f16 or bf16 tensor",
            " (the tensor is i32)",
            " in tensor 0"
        )
    );
    assert_eq!(dir.get(0).unwrap().dtype(), DtypeCode::Closed(Dtype::I32));
}

#[test]
fn debug_prints_facts_not_bytes() {
    let mut block = [0u8; 512];
    let two = [
        TensorSpec::from_host(&[2, 3], &MATRIX).named("cal"),
        TensorSpec::from_host(&[6], &MATRIX).named("v"),
    ];
    let dir = Directory::build(&two, &mut block).unwrap();
    let text = format!("{dir:?}");
    assert_eq!(
        text,
        // Header and two descriptors (320), the name heap (64), then each
        // payload at a multiple of 64.
        "Directory { offset: 0, block_len: 472, count: 2, tensors: [\
         TensorView { index: 0, name: Some(\"cal\"), dtype: Closed(F32), shape: [2, 3], byte_range: 384..408 }, \
         TensorView { index: 1, name: Some(\"v\"), dtype: Closed(F32), shape: [6], byte_range: 448..472 }] }"
    );
    assert_eq!(
        format!("{:?}", dir.get(0).unwrap()),
        "TensorView { index: 0, name: Some(\"cal\"), dtype: Closed(F32), shape: [2, 3], byte_range: 384..408 }"
    );
    // A large block prints as briefly: nothing grows with the payload.
    let big = [0.25f32; 4096];
    let mut storage =
        vec![0u8; Directory::encoded_len(&[TensorSpec::from_host(&[4096], &big)]).unwrap()];
    let dir = Directory::build(&[TensorSpec::from_host(&[4096], &big)], &mut storage).unwrap();
    assert!(format!("{dir:?}").len() < 200, "{dir:?}");
    assert!(format!("{:#?}", Directory::EMPTY).contains("count: 0"));
}

#[test]
fn a_payload_that_is_no_whole_number_of_elements_gives_its_length_and_the_width() {
    // Aligned for u32, so the length is what is wrong.
    let words = [0u32; 4];
    let bytes: &[u8] = bytemuck::cast_slice(&words);
    // A zero-copy view exists on a little-endian host only (a big-endian
    // one refuses it first, BigEndianHost).
    if cfg!(target_endian = "little") {
        let err = order::view::<u32>(&bytes[..6]).unwrap_err();
        assert_eq!(err.refusal(), Some(Refusal::WrongElementType));
        assert_eq!(err.detail(), width(6, 4));
        assert_eq!(
            err.to_string(),
            line(
                "refused (WrongElementType)",
                "payload length is not a multiple of the element width",
                " (6 bytes, the element width is 4)",
                ""
            )
        );
        // A whole number of elements: no refusal.
        assert_eq!(order::view::<u32>(&bytes[..8]).unwrap(), &[0, 0]);
    }
    // The copies, on every host, refuse the same bytes with the same
    // numbers.
    let mut out = [0u16; 8];
    let err = order::copy_into::<u16>(&bytes[..7], &mut out).unwrap_err();
    assert_eq!(err.refusal(), Some(Refusal::WrongElementType));
    assert_eq!(err.detail(), width(7, 2));
    let err = order::copy_per_element::<u16>(&bytes[..7], &mut out).unwrap_err();
    assert_eq!(err.detail(), width(7, 2));
    assert_eq!(order::copy_into::<u16>(&bytes[..8], &mut out), Ok(4));
}
