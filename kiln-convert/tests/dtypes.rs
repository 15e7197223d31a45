//! Every dtype of the pinned safetensors converts to Kiln and back, byte
//! for byte, alone and all in one file (the writer's order by dtype comes
//! back too); F4 is Kiln's e2m1 with the same shape, the dtypes Kiln has
//! no dtype for are opaque layouts named by the safetensors dtype.

use kiln_convert::{convert, foreign_layout, kiln_dtype, Format};
use kiln_nostd::inspect::TensorDtype;
use safetensors::Dtype as S;

const EVERY_DTYPE: [S; 22] = [
    S::BOOL,
    S::F4,
    S::F6_E2M3,
    S::F6_E3M2,
    S::U8,
    S::I8,
    S::F8_E5M2,
    S::F8_E4M3,
    S::F8_E8M0,
    S::F8_E4M3FNUZ,
    S::F8_E5M2FNUZ,
    S::I16,
    S::U16,
    S::F16,
    S::BF16,
    S::I32,
    S::U32,
    S::F32,
    S::C64,
    S::F64,
    S::I64,
    S::U64,
];

fn run(from: Format, to: Format, input: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    convert(from, to, input, &mut out).unwrap_or_else(|e| panic!("{from:?} -> {to:?}: {e}"));
    out
}

/// 8 elements of `d`, bytes 0, 7, 14, ... (any bit pattern is a value of
/// every dtype here: no rule of Kiln reads them, but bool's, which the
/// bytes 0 and 1 keep).
fn payload(d: S) -> Vec<u8> {
    let len = 8 * d.bitsize() / 8;
    (0..len)
        .map(|i| {
            if d == S::BOOL {
                (i % 2) as u8
            } else {
                (i * 7) as u8
            }
        })
        .collect()
}

fn file(tensors: &[(String, S, Vec<u8>)]) -> Vec<u8> {
    let views = tensors.iter().map(|(name, d, data)| {
        (
            name.clone(),
            safetensors::tensor::TensorView::new(*d, vec![2, 4], data).unwrap(),
        )
    });
    safetensors::serialize(views, None).unwrap()
}

#[test]
fn the_pinned_safetensors_has_these_22_dtypes_and_each_converts() {
    for d in EVERY_DTYPE {
        assert!(
            kiln_dtype(d).is_some() != foreign_layout(d).is_some(),
            "{d}: a Kiln dtype or an opaque layout, not both"
        );
    }
    assert_eq!(kiln_dtype(S::F4), Some(kiln_nostd::Dtype::E2M1));
}

#[test]
fn every_dtype_round_trips_alone_and_together() {
    let mut all = vec![];
    for d in EVERY_DTYPE {
        let tensors = vec![(format!("t.{d}"), d, payload(d))];
        let source = file(&tensors);
        let kiln = run(Format::Safetensors, Format::Kiln, &source);
        assert_eq!(run(Format::Kiln, Format::Safetensors, &kiln), source, "{d}");
        // The converted tensor's dtype and shape.
        let model = inspect(&kiln);
        let t = &model.tensors[0];
        // A Kiln dtype by its Kiln name (F4 is e2m1), any other by the
        // safetensors name its layout carries.
        let shown = kiln_dtype(d).map_or_else(|| d.to_string(), |k| k.name().to_owned());
        assert_eq!(t.dtype_name(), shown, "{d}");
        assert_eq!(t.shape, [2, 4], "{d}");
        assert!(matches!(t.dtype, TensorDtype::Kiln(_)), "{d}");
        // The source's inspection shows the same name and shape.
        let head = kiln_convert::head::inspect_head("t.safetensors", Format::Safetensors, &source)
            .unwrap();
        assert_eq!(head.tensors[0].dtype_name(), shown, "{d}");
        assert_eq!(head.tensors[0].shape, [2, 4], "{d}");
        all.extend(tensors);
    }
    let source = file(&all);
    let kiln = run(Format::Safetensors, Format::Kiln, &source);
    assert_eq!(run(Format::Kiln, Format::Safetensors, &kiln), source);
}

#[test]
fn an_opaque_layout_that_is_not_a_safetensors_dtype_does_not_go_back() {
    let c64 = file(&[("z".into(), S::C64, payload(S::C64))]);
    let mut kiln = run(Format::Safetensors, Format::Kiln, &c64);
    // The layout's name, in the directory's heap, made one safetensors
    // lacks: code and block still say C64, the name does not.
    let at = kiln.windows(3).position(|w| w == b"C64").unwrap();
    kiln[at..at + 3].copy_from_slice(b"C65");
    let mut out = Vec::new();
    let e = convert(Format::Kiln, Format::Safetensors, &kiln, &mut out).unwrap_err();
    assert!(e.to_string().contains("C65"), "{e}");
}

fn inspect(kiln: &[u8]) -> kiln_nostd::inspect::Inspection {
    let reading = kiln_nostd::inspect::recognise(kiln, None, None, None).unwrap();
    kiln_convert::inspect::inspect_kiln("t.kiln", kiln, &reading).unwrap()
}
