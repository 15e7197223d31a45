//! Byte order on every host: the refusal path (zero-copy views of
//! multi-byte payloads on a big-endian host) and the swap path (copies and
//! writers give the right numbers and little-endian wire bytes).
//!
//! These run on x86-64 and, under qemu-user, on s390x and powerpc64.

use kiln_nostd::order::{self, HOST_IS_LITTLE_ENDIAN};
use kiln_nostd::{
    bf16, f16, to_slice, Directory, Dtype, Element, PodList, Refusal, TensorSpec, Tensors, Writer,
};

// wasm-bindgen-test-runner runs only #[wasm_bindgen_test] functions.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// A buffer whose payload start we control, for alignment tests.
#[repr(align(64))]
struct Aligned([u8; 128]);

fn refusal<T: core::fmt::Debug>(result: kiln_nostd::Result<T>) -> Option<Refusal> {
    match result.unwrap_err().kind() {
        kiln_nostd::Kind::Refused(r) => Some(r),
        kiln_nostd::Kind::Wire(_) => None,
    }
}

#[test]
fn host_order_is_what_the_target_says() {
    assert_eq!(HOST_IS_LITTLE_ENDIAN, cfg!(target_endian = "little"));
    assert_eq!(HOST_IS_LITTLE_ENDIAN, 1u32.to_ne_bytes()[0] == 1);
}

#[test]
fn zero_copy_view_is_refused_on_big_endian_and_exact_on_little() {
    let mut buf = Aligned([0; 128]);
    buf.0[..8].copy_from_slice(&[0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0]);
    let payload = &buf.0[..8];
    let view = order::view::<f32>(payload);
    if HOST_IS_LITTLE_ENDIAN {
        assert_eq!(view.unwrap(), &[1.0, -2.0]);
        // A misaligned start is refused, never read wrongly.
        assert_eq!(
            refusal(order::view::<f32>(&buf.0[1..9])),
            Some(Refusal::Misaligned)
        );
    } else {
        assert_eq!(refusal(view), Some(Refusal::BigEndianHost));
    }
    // One-byte elements are bytes on every host.
    assert_eq!(order::view::<i8>(&[0xff, 0x01]).unwrap(), &[-1, 1]);
    // A length that is not a whole number of elements is refused (on a
    // big-endian host the byte order refusal comes first).
    let expected = if HOST_IS_LITTLE_ENDIAN {
        Refusal::WrongElementType
    } else {
        Refusal::BigEndianHost
    };
    assert_eq!(refusal(order::view::<u32>(&buf.0[..6])), Some(expected));
}

fn wire<T: Element>(values: &[T]) -> Vec<u8> {
    let mut out = vec![0u8; values.len() * T::WIDTH];
    let mut w = Writer::new(kiln_nostd::SliceSink::new(&mut out));
    order::write_le(values, &mut w).unwrap();
    out
}

#[test]
fn writers_emit_little_endian_on_every_host() {
    assert_eq!(wire(&[1.0f32, -2.0]), [0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]);
    assert_eq!(
        wire(&[f64::from_bits(0x7FF8000000000001)]),
        0x7FF8000000000001u64.to_le_bytes()
    );
    assert_eq!(wire(&[bf16::from_f32(1.0)]), [0x80, 0x3f]);
    assert_eq!(wire(&[f16::from_f32(1.0)]), [0x00, 0x3c]);
    assert_eq!(wire(&[0x0102u16, 0x0304]), [0x02, 0x01, 0x04, 0x03]);
    assert_eq!(wire(&[-2i32]), [0xfe, 0xff, 0xff, 0xff]);
    assert_eq!(wire(&[0x0102030405060708u64]), [8, 7, 6, 5, 4, 3, 2, 1]);
    assert_eq!(wire(&[-0.0f32]), [0, 0, 0, 0x80]);
}

#[test]
fn swapping_writer_matches_on_every_host() {
    // The big-endian path, exercised on every host: reversing each element
    // of big-endian bytes gives wire bytes.
    let big_endian_f32s: Vec<u8> = [1.0f32, -2.0]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let mut out = [0u8; 8];
    let mut w = Writer::new(kiln_nostd::SliceSink::new(&mut out));
    order::write_reversed_elements(&big_endian_f32s, 4, &mut w).unwrap();
    assert_eq!(out, [0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]);
    let mut out = [0u8; 4];
    let mut w = Writer::new(kiln_nostd::SliceSink::new(&mut out));
    order::write_per_element(&[0x0102u16, 0x0304], &mut w).unwrap();
    assert_eq!(out, [0x02, 0x01, 0x04, 0x03]);
}

#[test]
fn copies_give_host_numbers_on_every_host() {
    let bytes = [0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0];
    let mut out = [0f32; 3];
    assert_eq!(order::copy_into(&bytes, &mut out).unwrap(), 2);
    assert_eq!(out[..2], [1.0, -2.0]);
    // The portable path gives the same numbers on any host.
    let mut again = [0f32; 2];
    order::copy_per_element(&bytes, &mut again).unwrap();
    assert_eq!(again, [1.0, -2.0]);
    // Too small an output is refused.
    assert_eq!(
        refusal(order::copy_into(&bytes, &mut [0f32; 1])),
        Some(Refusal::BufferTooSmall)
    );

    let mut halves = [bf16::ZERO; 1];
    order::copy_into(&[0x80, 0x3f], &mut halves).unwrap();
    assert_eq!(halves[0].to_f32(), 1.0);
    let mut halves = [f16::ZERO; 1];
    order::copy_into(&[0x00, 0x3c], &mut halves).unwrap();
    assert_eq!(halves[0].to_f32(), 1.0);
    let mut ints = [0i64; 1];
    order::copy_into(&(-5i64).to_le_bytes(), &mut ints).unwrap();
    assert_eq!(ints, [-5]);
    let mut nan = [0f64; 1];
    order::copy_into(&0x7FF8000000000001u64.to_le_bytes(), &mut nan).unwrap();
    assert_eq!(nan[0].to_bits(), 0x7FF8000000000001);
    assert_eq!(order::get::<u16>(&[0x02, 0x01], 0), Some(0x0102));
}

#[test]
fn tensor_round_trip_through_host_numbers() {
    let f64s = [1.5f64, -0.0, f64::from_bits(0x7FF8000000000001)];
    let i16s = [-1i16, 2, 0x0102];
    let bf16s = [bf16::from_f32(1.0), bf16::from_f32(-3.5)];
    let specs = [
        TensorSpec::from_host(&[3], &f64s).named("a"),
        TensorSpec::from_host(&[3], &i16s).named("b"),
        TensorSpec::from_host(&[2], &bf16s).named("c"),
        TensorSpec::new(Dtype::Bool, &[2], &[1, 0]).named("d"),
    ];
    // The block is written at a 64-byte-aligned address, so every payload
    // (at a multiple of 64 from the block start) is aligned too.
    let mut big = Box::new(AlignedBlock([0; 1024]));
    let block = to_slice(&Tensors(&specs), &mut big.0).unwrap();
    let dir = Directory::parse(block).unwrap();
    let a = dir.by_name("a").unwrap();
    assert_eq!(&a.bytes()[..8], &1.5f64.to_le_bytes());
    let mut back = [0f64; 3];
    a.copy_into(&mut back).unwrap();
    assert_eq!(back.map(f64::to_bits), f64s.map(f64::to_bits));
    let mut shorts = [0i16; 3];
    dir.by_name("b").unwrap().copy_into(&mut shorts).unwrap();
    assert_eq!(shorts, i16s);
    assert_eq!(dir.by_name("b").unwrap().bytes(), [0xff, 0xff, 2, 0, 2, 1]);
    let mut brains = [bf16::ZERO; 2];
    dir.by_name("c").unwrap().copy_into(&mut brains).unwrap();
    assert_eq!(brains, bf16s);
    // Asking for the wrong element type is refused.
    assert_eq!(
        refusal(a.copy_into(&mut [0f32; 6])),
        Some(Refusal::WrongElementType)
    );
    // A typed view: exact on little-endian, refused on big-endian.
    let view = dir.by_name("a").unwrap().as_slice::<f64>();
    if HOST_IS_LITTLE_ENDIAN {
        assert_eq!(view.unwrap()[0].to_bits(), 1.5f64.to_bits());
        assert_eq!(dir.by_name("b").unwrap().as_slice::<i16>().unwrap(), i16s);
    } else {
        assert_eq!(refusal(view), Some(Refusal::BigEndianHost));
    }
}

#[repr(align(64))]
struct AlignedBlock([u8; 1024]);

#[test]
fn frozen_pod_lists_swap_too() {
    let mut buf = [0u8; 64];
    let bytes = to_slice(&PodList::from_slice(&[1.0f32, -2.0]), &mut buf).unwrap();
    assert_eq!(bytes, [2, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]);
    let list: PodList<f32> = kiln_nostd::from_bytes(bytes).unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list.get(1), Some(-2.0));
    assert_eq!(list.iter().collect::<Vec<_>>(), [1.0, -2.0]);
    let mut out = [0f32; 2];
    list.copy_into(&mut out).unwrap();
    assert_eq!(out, [1.0, -2.0]);
    // The payload starts 4 bytes into the buffer: a view is aligned for f32
    // on a little-endian host when the buffer is.
    if !HOST_IS_LITTLE_ENDIAN {
        assert_eq!(refusal(list.as_slice()), Some(Refusal::BigEndianHost));
    }
}
