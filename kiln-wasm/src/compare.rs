//! Comparing two tensors element by element, a chunk at a time.
//!
//! The inspector's worker reads both tensors' bytes a few MiB at a time
//! and feeds each pair of chunks to a [`TensorDiff`]; this module is the
//! arithmetic, so that a tensor of any size is compared in bounded memory
//! and the result does not depend on how the elements were chunked.
//!
//! # What is compared
//!
//! * **Bytes**: [`DiffSummary::bytes_identical`] is true when both tensors
//!   have the same dtype and every payload byte is equal.
//! * **Values of float tensors** (both dtypes float-like:
//!   `f64`, `f32`, `f16`, `bf16`, `f8e4m3`, `f8e5m2`, `e2m1`, `e8m0`; the
//!   two dtypes may differ, e.g. `f32` against its `bf16` rounding): each
//!   element is turned into a number by the display conversions
//!   ([`kiln_nostd::widen::element_to_f32`]; `f64` is read as `f64`) and
//!   the pair `(a, b)` is compared in `f64`:
//!   - the pair is *equal* when `a == b` (so `+0` equals `-0`) or both are
//!     NaN (whatever their payloads); every other pair *differs* and is
//!     counted in [`DiffSummary::differing`];
//!   - a differing pair where exactly one side is NaN is counted in
//!     [`DiffSummary::nan_mismatch`] and enters neither maximum;
//!   - otherwise the *absolute difference* is `|a - b|` and the *relative
//!     difference* is `|a - b| / max(|a|, |b|)`, which lies in `(0, 2]`
//!     (1 when one side is zero, 2 when the signs are opposite and the
//!     magnitudes equal). When one side is infinite the absolute
//!     difference is `+inf` and the relative one is 1; for `+inf` against
//!     `-inf` they are `+inf` and 2 (the limits of the finite formula);
//!   - [`DiffSummary::max_abs`] and [`DiffSummary::max_rel`] are the
//!     largest over the differing pairs (0 when no pair differs, or all
//!     differ by NaN), each with the first element index where it occurs
//!     and the two values there.
//! * **Values of other tensors** (integers, `bool`) of the same dtype:
//!   an element differs when its bits differ (for `i4`/`u4`, its nibble);
//!   no difference is computed. Integer tensors of different dtypes, or
//!   a float tensor against an integer one, are not compared element by
//!   element ([`Mode::None`]).

use js_sys::Object;
use kiln_nostd::widen::element_to_f32;
use kiln_nostd::{Dtype, Error, Refusal, Result, Width};
use wasm_bindgen::prelude::*;

use crate::js::{kiln_error, set};

/// How two dtypes are compared element by element.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Both float-like: values and their differences.
    Float,
    /// The same non-float dtype: elements compared by their bits.
    Bits,
    /// Not comparable element by element (only the bytes).
    None,
}

impl Mode {
    /// The mode for tensors of dtypes `a` and `b`.
    pub fn of(a: Dtype, b: Dtype) -> Mode {
        if a.is_float() && b.is_float() {
            Mode::Float
        } else if a == b {
            Mode::Bits
        } else {
            Mode::None
        }
    }

    /// Its name in JS (`"float"`, `"bits"`, `"none"`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Float => "float",
            Mode::Bits => "bits",
            Mode::None => "none",
        }
    }
}

/// The largest difference seen so far, where, and the two values there.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Extreme {
    /// The difference (absolute or relative).
    pub value: f64,
    /// Element index of its first occurrence.
    pub at: u64,
    /// The element of the first tensor there.
    pub a: f64,
    /// The element of the second tensor there.
    pub b: f64,
}

/// What a comparison found so far.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffSummary {
    /// How the elements are compared.
    pub mode: Mode,
    /// Elements compared.
    pub compared: u64,
    /// Elements that differ (see the module's definition of equal).
    pub differing: u64,
    /// Differing elements where exactly one side is NaN.
    pub nan_mismatch: u64,
    /// The largest absolute difference, if any pair differs by a number.
    pub max_abs: Option<Extreme>,
    /// The largest relative difference, if any pair differs by a number.
    pub max_rel: Option<Extreme>,
    /// Same dtype and every byte so far equal.
    pub bytes_identical: bool,
    /// Payload bytes compared, per side.
    pub bytes_a: u64,
    /// Payload bytes of the second tensor compared.
    pub bytes_b: u64,
}

/// A comparison of two tensors, fed chunk by chunk.
#[derive(Clone, Debug)]
pub struct TensorDiff {
    a: Dtype,
    b: Dtype,
    summary: DiffSummary,
}

fn refused(fault: &'static str) -> Error {
    Error::refused(Refusal::WrongElementType, fault)
}

/// The bytes `count` elements of `dtype` take (from an even element, for
/// packed dtypes).
fn bytes_of(dtype: Dtype, count: u64) -> Option<u64> {
    match dtype.width() {
        Width::Bytes(w) => count.checked_mul(u64::from(w)),
        Width::Nibbles => Some(count.div_ceil(2)),
    }
}

/// Element `i` of a chunk as a number: `f64` exactly, the rest through the
/// display conversions.
fn number(dtype: Dtype, bytes: &[u8], i: usize) -> Option<f64> {
    if dtype == Dtype::F64 {
        let start = i.checked_mul(8)?;
        let b: [u8; 8] = bytes.get(start..start.checked_add(8)?)?.try_into().ok()?;
        return Some(f64::from_le_bytes(b));
    }
    element_to_f32(dtype, bytes, i).map(f64::from)
}

/// The element's bits (a nibble for packed dtypes).
fn bits(dtype: Dtype, bytes: &[u8], i: usize) -> Option<(&[u8], u8)> {
    match dtype.width() {
        Width::Bytes(w) => {
            let w = usize::from(w);
            let start = i.checked_mul(w)?;
            Some((bytes.get(start..start.checked_add(w)?)?, 0))
        }
        Width::Nibbles => {
            let byte = *bytes.get(i / 2)?;
            Some((
                &[],
                if i.is_multiple_of(2) {
                    byte & 0x0F
                } else {
                    byte >> 4
                },
            ))
        }
    }
}

/// The absolute and relative difference of a pair that is not equal and
/// has no NaN (the module's definition).
pub fn difference(a: f64, b: f64) -> (f64, f64) {
    match (a.is_infinite(), b.is_infinite()) {
        (true, true) => (f64::INFINITY, 2.0),
        (true, false) | (false, true) => (f64::INFINITY, 1.0),
        (false, false) => {
            let abs = (a - b).abs();
            let scale = a.abs().max(b.abs());
            // Not both zero: the pair would be equal.
            (abs, if scale > 0.0 { abs / scale } else { 0.0 })
        }
    }
}

fn raise(slot: &mut Option<Extreme>, value: f64, at: u64, a: f64, b: f64) {
    if slot.is_none_or(|e| value > e.value) {
        *slot = Some(Extreme { value, at, a, b });
    }
}

impl TensorDiff {
    /// A comparison of a tensor of dtype `a` with one of dtype `b`.
    pub fn new(a: Dtype, b: Dtype) -> TensorDiff {
        TensorDiff {
            a,
            b,
            summary: DiffSummary {
                mode: Mode::of(a, b),
                compared: 0,
                differing: 0,
                nan_mismatch: 0,
                max_abs: None,
                max_rel: None,
                bytes_identical: a == b,
                bytes_a: 0,
                bytes_b: 0,
            },
        }
    }

    /// The next `count` elements: `a` and `b` hold exactly their bytes in
    /// each tensor (for a packed dtype the chunk starts at an even element,
    /// so its first element is a low nibble). Chunks come in order; the
    /// result is the same however the elements are chunked.
    pub fn update(&mut self, a: &[u8], b: &[u8], count: u64) -> Result<()> {
        let (need_a, need_b) = (bytes_of(self.a, count), bytes_of(self.b, count));
        if need_a != Some(a.len() as u64) || need_b != Some(b.len() as u64) {
            return Err(refused(
                "a chunk's bytes are not its element count's for the dtype",
            ));
        }
        if !self.summary.compared.is_multiple_of(2) && (self.a.is_packed() || self.b.is_packed()) {
            return Err(refused("a packed chunk must start at an even element"));
        }
        let n = usize::try_from(count).map_err(|_| refused("chunk too large"))?;
        let base = self.summary.compared;
        let s = &mut self.summary;
        s.bytes_identical &= a == b;
        match s.mode {
            Mode::Float => {
                for i in 0..n {
                    let (Some(x), Some(y)) = (number(self.a, a, i), number(self.b, b, i)) else {
                        return Err(refused("element outside its chunk"));
                    };
                    if x == y || (x.is_nan() && y.is_nan()) {
                        continue;
                    }
                    s.differing += 1;
                    if x.is_nan() || y.is_nan() {
                        s.nan_mismatch += 1;
                        continue;
                    }
                    let (abs, rel) = difference(x, y);
                    let at = base + i as u64;
                    raise(&mut s.max_abs, abs, at, x, y);
                    raise(&mut s.max_rel, rel, at, x, y);
                }
            }
            Mode::Bits if a != b => {
                for i in 0..n {
                    if bits(self.a, a, i) != bits(self.b, b, i) {
                        s.differing += 1;
                    }
                }
            }
            Mode::Bits | Mode::None => {}
        }
        s.compared += count;
        s.bytes_a += a.len() as u64;
        s.bytes_b += b.len() as u64;
        Ok(())
    }

    /// What it found so far.
    pub fn summary(&self) -> &DiffSummary {
        &self.summary
    }
}

/// [`TensorDiff`] for JavaScript: `new TensorDiff(dtypeCodeA,
/// dtypeCodeB)`, then `update(bytesA, bytesB, count)` for each chunk (the
/// bytes `elementBytes` names for the same elements of each tensor), and
/// `summary()` at any point.
#[wasm_bindgen(js_name = TensorDiff)]
pub struct JsTensorDiff(TensorDiff);

#[wasm_bindgen(typescript_custom_section)]
const DIFF_TYPES: &'static str = r#"
/** The largest difference, the first element index where it occurs, and the two values there. */
export interface DiffExtreme { value: number; at: number; a: number; b: number }

/** What `TensorDiff.summary()` says (see docs/browser.md for the definitions). */
export interface DiffSummary {
  /** "float" (values and differences), "bits" (same non-float dtype), "none" (bytes only). */
  mode: string;
  compared: number;
  differing: number;
  nanMismatch: number;
  maxAbs: DiffExtreme | null;
  maxRel: DiffExtreme | null;
  bytesIdentical: boolean;
  bytesA: number;
  bytesB: number;
}
"#;

fn extreme(e: Option<Extreme>) -> JsValue {
    e.map_or(JsValue::NULL, |e| {
        let o = Object::new();
        set(&o, "value", JsValue::from_f64(e.value));
        set(&o, "at", JsValue::from_f64(e.at as f64));
        set(&o, "a", JsValue::from_f64(e.a));
        set(&o, "b", JsValue::from_f64(e.b));
        o.into()
    })
}

fn dtype_of(code: u16) -> core::result::Result<Dtype, JsValue> {
    Dtype::from_code(code).ok_or_else(|| {
        kiln_error(&refused(
            "an opaque dtype has no elements to compare: compare its bytes",
        ))
    })
}

#[wasm_bindgen(js_class = TensorDiff)]
impl JsTensorDiff {
    /// A comparison of a tensor of dtype code `a` with one of code `b`
    /// (`TensorInfo.dtypeCode`; closed dtypes only).
    #[wasm_bindgen(constructor)]
    pub fn new(a: u16, b: u16) -> core::result::Result<JsTensorDiff, JsValue> {
        Ok(JsTensorDiff(TensorDiff::new(dtype_of(a)?, dtype_of(b)?)))
    }

    /// A comparison of two payloads as bytes (`u8` elements): for opaque
    /// dtypes (quantized blocks), whose elements have no value here.
    pub fn bytes() -> JsTensorDiff {
        JsTensorDiff(TensorDiff::new(Dtype::U8, Dtype::U8))
    }

    /// The next `count` elements of both tensors, in order (a packed
    /// dtype's chunk starts at an even element).
    pub fn update(&mut self, a: &[u8], b: &[u8], count: f64) -> core::result::Result<(), JsValue> {
        if !(count >= 0.0 && count == (count as u64) as f64) {
            return Err(kiln_error(&refused("count is not a whole number")));
        }
        self.0
            .update(a, b, count as u64)
            .map_err(|e| kiln_error(&e))
    }

    /// What the comparison found so far.
    #[wasm_bindgen(unchecked_return_type = "DiffSummary")]
    pub fn summary(&self) -> Object {
        let s = self.0.summary();
        let o = Object::new();
        set(&o, "mode", JsValue::from_str(s.mode.name()));
        set(&o, "compared", JsValue::from_f64(s.compared as f64));
        set(&o, "differing", JsValue::from_f64(s.differing as f64));
        set(&o, "nanMismatch", JsValue::from_f64(s.nan_mismatch as f64));
        set(&o, "maxAbs", extreme(s.max_abs));
        set(&o, "maxRel", extreme(s.max_rel));
        set(&o, "bytesIdentical", JsValue::from_bool(s.bytes_identical));
        set(&o, "bytesA", JsValue::from_f64(s.bytes_a as f64));
        set(&o, "bytesB", JsValue::from_f64(s.bytes_b as f64));
        o
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;
    use kiln_nostd::{bf16, f16};

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn run(a: Dtype, ab: &[u8], b: Dtype, bb: &[u8], count: u64, per: u64) -> DiffSummary {
        let mut d = TensorDiff::new(a, b);
        let mut first = 0;
        while first < count {
            let n = per.min(count - first);
            let (sa, la) = (
                bytes_of(a, first).unwrap() as usize,
                bytes_of(a, n).unwrap() as usize,
            );
            let (sb, lb) = (
                bytes_of(b, first).unwrap() as usize,
                bytes_of(b, n).unwrap() as usize,
            );
            d.update(&ab[sa..sa + la], &bb[sb..sb + lb], n).unwrap();
            first += n;
        }
        d.summary().clone()
    }

    #[test]
    fn identical_tensors() {
        let v = f32s(&[1.0, -2.0, 0.5]);
        let s = run(Dtype::F32, &v, Dtype::F32, &v, 3, 2);
        assert!(s.bytes_identical);
        assert_eq!(
            (s.compared, s.differing, s.max_abs, s.max_rel),
            (3, 0, None, None)
        );
        assert_eq!((s.bytes_a, s.bytes_b), (12, 12));
    }

    #[test]
    fn known_differences_whatever_the_chunking() {
        let a = f32s(&[1.0, 2.0, 3.0, -4.0, 0.0, 10.0]);
        let b = f32s(&[1.0, 2.5, 3.0, 4.0, 0.25, 10.0]);
        for per in 1..=6 {
            let s = run(Dtype::F32, &a, Dtype::F32, &b, 6, per);
            assert!(!s.bytes_identical);
            assert_eq!(s.differing, 3);
            let abs = s.max_abs.unwrap();
            assert_eq!((abs.value, abs.at, abs.a, abs.b), (8.0, 3, -4.0, 4.0));
            let rel = s.max_rel.unwrap();
            assert_eq!((rel.value, rel.at), (2.0, 3));
        }
    }

    #[test]
    fn first_occurrence_of_the_maximum() {
        let a = f32s(&[0.0, 1.0, 0.0]);
        let b = f32s(&[1.0, 0.0, 1.0]);
        let s = run(Dtype::F32, &a, Dtype::F32, &b, 3, 1);
        assert_eq!(s.max_abs.unwrap().at, 0);
        assert_eq!(s.max_rel.unwrap().value, 1.0);
    }

    #[test]
    fn zeros_and_nans() {
        // +0 and -0 are equal values but not equal bytes; NaN pairs are
        // equal whatever their payloads; one NaN is a mismatch.
        let a = f32s(&[0.0, f32::NAN, f32::NAN, 1.0]);
        let b = f32s(&[-0.0, f32::from_bits(0x7FC0_0001), 1.0, 1.0]);
        let s = run(Dtype::F32, &a, Dtype::F32, &b, 4, 4);
        assert!(!s.bytes_identical);
        assert_eq!((s.differing, s.nan_mismatch), (1, 1));
        assert_eq!((s.max_abs, s.max_rel), (None, None));
    }

    #[test]
    fn infinities() {
        assert_eq!(difference(f64::INFINITY, 3.0), (f64::INFINITY, 1.0));
        assert_eq!(difference(-2.0, f64::NEG_INFINITY), (f64::INFINITY, 1.0));
        assert_eq!(
            difference(f64::INFINITY, f64::NEG_INFINITY),
            (f64::INFINITY, 2.0)
        );
        assert_eq!(difference(0.0, -3.0), (3.0, 1.0));
        assert_eq!(difference(-1.0, 1.0), (2.0, 2.0));
        assert_eq!(difference(4.0, 5.0), (1.0, 0.2));
        let a = f32s(&[f32::INFINITY, f32::INFINITY]);
        let b = f32s(&[f32::INFINITY, 1.0]);
        let s = run(Dtype::F32, &a, Dtype::F32, &b, 2, 2);
        assert_eq!(s.differing, 1);
        assert_eq!(s.max_abs.unwrap().value, f64::INFINITY);
    }

    #[test]
    fn across_dtypes_through_the_display_conversions() {
        // f32 against its bf16 and f16 roundings.
        let v = [1.0f32, 1.001, -3.3, 65504.0];
        let a = f32s(&v);
        let b: Vec<u8> = v
            .iter()
            .flat_map(|&x| bf16::from_f32(x).to_bits().to_le_bytes())
            .collect();
        let s = run(Dtype::F32, &a, Dtype::Bf16, &b, 4, 3);
        assert_eq!(s.mode, Mode::Float);
        assert!(!s.bytes_identical);
        let expect = v
            .iter()
            .map(|&x| (f64::from(x) - f64::from(bf16::from_f32(x).to_f32())).abs())
            .fold(0.0, f64::max);
        assert_eq!(s.max_abs.unwrap().value, expect);
        let h: Vec<u8> = v
            .iter()
            .flat_map(|&x| f16::from_f32(x).to_bits().to_le_bytes())
            .collect();
        let s = run(Dtype::F16, &h, Dtype::F16, &h, 4, 1);
        assert!(s.bytes_identical);
        assert_eq!(s.differing, 0);
    }

    #[test]
    fn f64_is_read_exactly() {
        let a: Vec<u8> = [1.0f64, 1.0 + 1e-12]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let b: Vec<u8> = [1.0f64, 1.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let s = run(Dtype::F64, &a, Dtype::F64, &b, 2, 2);
        assert_eq!(s.differing, 1);
        assert!(s.max_abs.unwrap().value > 0.0);
    }

    #[test]
    fn packed_floats_and_ints() {
        // e2m1 nibbles, low first: 0.5, 1.0, 6.0 against 0.5, 1.5, 6.0.
        let s = run(Dtype::E2M1, &[0x21, 0x07], Dtype::E2M1, &[0x31, 0x07], 3, 2);
        assert_eq!(s.differing, 1);
        assert_eq!(s.max_abs.unwrap().value, 0.5);
        let s = run(Dtype::U4, &[0x21, 0x03], Dtype::U4, &[0x21, 0x0E], 3, 2);
        assert_eq!(s.mode, Mode::Bits);
        assert_eq!((s.differing, s.max_abs), (1, None));
        let mut d = TensorDiff::new(Dtype::U4, Dtype::U4);
        d.update(&[0x21], &[0x21], 1).unwrap();
        assert!(
            d.update(&[0x21], &[0x21], 2).is_err(),
            "an odd start is refused"
        );
    }

    #[test]
    fn ints_by_bits_and_mixed_not_at_all() {
        let a: Vec<u8> = [1i32, 2, 3].iter().flat_map(|x| x.to_le_bytes()).collect();
        let b: Vec<u8> = [1i32, 5, 6].iter().flat_map(|x| x.to_le_bytes()).collect();
        let s = run(Dtype::I32, &a, Dtype::I32, &b, 3, 2);
        assert_eq!((s.mode, s.differing), (Mode::Bits, 2));
        assert_eq!(Mode::of(Dtype::I32, Dtype::I64), Mode::None);
        assert_eq!(Mode::of(Dtype::F32, Dtype::I32), Mode::None);
        let s = run(Dtype::I32, &a, Dtype::F32, &b, 3, 3);
        assert_eq!(
            (s.mode, s.differing, s.bytes_identical),
            (Mode::None, 0, false)
        );
    }

    #[test]
    fn chunks_of_the_wrong_length_are_refused() {
        let mut d = TensorDiff::new(Dtype::F32, Dtype::F16);
        assert!(d.update(&[0; 8], &[0; 4], 2).is_ok());
        assert!(d.update(&[0; 8], &[0; 8], 2).is_err());
        assert!(d.update(&[0; 4], &[0; 4], 2).is_err());
        assert!(d.update(&[], &[], u64::MAX).is_err());
    }
}
