//! Widening a tensor's elements to `f32` for display: the one
//! implementation the command line, the browser inspector and
//! [`crate::TensorView::widen_into`] share.
//!
//! Kiln stores bits and never dequantizes. These conversions are view aids
//! for looking at values (first elements, min, max, a histogram): each
//! element's own bits become the nearest `f32`, and no scale tensor is ever
//! applied. `i64`, `u64` and `f64` round; every narrower type is exact.
//!
//! The small float formats follow their specifications:
//!
//! | dtype | layout | special values |
//! |---|---|---|
//! | `f16` | IEEE binary16 | inf, NaN |
//! | `bf16` | 1-8-7, bias 127 | inf, NaN |
//! | `f8e4m3` | OFP8 E4M3 (the "FN" form): 1-4-3, bias 7 | no inf; `S.1111.111` is NaN; max 448 |
//! | `f8e5m2` | OFP8 E5M2: 1-5-2, bias 15 | inf, NaN (IEEE-like) |
//! | `e2m1` | OCP MX FP4: 1-2-1, bias 1 | none: ±0, 0.5, 1, 1.5, 2, 3, 4, 6 |
//! | `e8m0` | OCP MX scale: 8 exponent bits, bias 127 | `0xFF` is NaN; `0x00` is 2^-127 |
//!
//! Packed dtypes (`i4`, `u4`, `e2m1`) hold two elements per byte, the low
//! nibble first.
//!
//! [`element_to_f32`] and [`widen_into`] are the API; the per-format
//! conversions they call are hidden.

use crate::dtype::Dtype;
use crate::error::{Error, Refusal, Result};

/// IEEE binary16 bits to `f32` (exact).
#[doc(hidden)]
pub fn f16_to_f32(bits: u16) -> f32 {
    half::f16::from_bits(bits).to_f32()
}

/// bfloat16 bits to `f32` (exact).
#[doc(hidden)]
pub fn bf16_to_f32(bits: u16) -> f32 {
    half::bf16::from_bits(bits).to_f32()
}

/// `(-1)^sign * mantissa * 2^exponent`, exactly, for the small values of
/// the 8-bit and 4-bit formats (every one is an exact `f32`).
fn signed_scaled(negative: bool, mantissa: u32, exponent: i32) -> f32 {
    // mantissa < 2^4 and -20 <= exponent <= 16 here: both factors exact.
    let magnitude = mantissa as f32 * pow2(exponent);
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// 2^e as an `f32`, for -149 <= e <= 127, built from its bits.
fn pow2(e: i32) -> f32 {
    if e >= -126 {
        // A normal number: exponent field e + 127, mantissa 0.
        f32::from_bits(((e + 127) as u32) << 23)
    } else {
        // A subnormal: one mantissa bit, 2^(e + 149) units of 2^-149.
        f32::from_bits(1u32 << (e + 149).clamp(0, 22))
    }
}

/// OFP8 E4M3 to `f32` (exact).
#[doc(hidden)]
pub fn f8e4m3_to_f32(byte: u8) -> f32 {
    let negative = byte & 0x80 != 0;
    let exponent = i32::from((byte >> 3) & 0x0F);
    let mantissa = u32::from(byte & 0x07);
    if exponent == 0x0F && mantissa == 0x07 {
        return f32::NAN;
    }
    if exponent == 0 {
        // Subnormal: m/8 * 2^(1-7).
        return signed_scaled(negative, mantissa, -9);
    }
    signed_scaled(negative, 8 + mantissa, exponent - 7 - 3)
}

/// OFP8 E5M2 to `f32` (exact).
#[doc(hidden)]
pub fn f8e5m2_to_f32(byte: u8) -> f32 {
    let negative = byte & 0x80 != 0;
    let exponent = i32::from((byte >> 2) & 0x1F);
    let mantissa = u32::from(byte & 0x03);
    if exponent == 0x1F {
        return match (mantissa, negative) {
            (0, false) => f32::INFINITY,
            (0, true) => f32::NEG_INFINITY,
            _ => f32::NAN,
        };
    }
    if exponent == 0 {
        // Subnormal: m/4 * 2^(1-15).
        return signed_scaled(negative, mantissa, -16);
    }
    signed_scaled(negative, 4 + mantissa, exponent - 15 - 2)
}

/// OCP MX E2M1 (one nibble, the low four bits of `nibble`) to `f32`.
#[doc(hidden)]
pub fn e2m1_to_f32(nibble: u8) -> f32 {
    let negative = nibble & 0x08 != 0;
    let exponent = i32::from((nibble >> 1) & 0x03);
    let mantissa = u32::from(nibble & 0x01);
    if exponent == 0 {
        // Subnormal: m/2 * 2^(1-1).
        return signed_scaled(negative, mantissa, -1);
    }
    signed_scaled(negative, 2 + mantissa, exponent - 1 - 1)
}

/// OCP MX E8M0 scale byte to `f32`: 2^(byte - 127), `0xFF` NaN.
#[doc(hidden)]
pub fn e8m0_to_f32(byte: u8) -> f32 {
    if byte == 0xFF {
        return f32::NAN;
    }
    pow2(i32::from(byte) - 127)
}

/// A signed 4-bit two's-complement nibble (low four bits) to `f32`.
#[doc(hidden)]
pub fn i4_to_f32(nibble: u8) -> f32 {
    let value = i32::from(nibble & 0x0F);
    (if value >= 8 { value - 16 } else { value }) as f32
}

/// An unsigned 4-bit nibble (low four bits) to `f32`.
#[doc(hidden)]
pub fn u4_to_f32(nibble: u8) -> f32 {
    f32::from(nibble & 0x0F)
}

/// Element `index` of a packed payload (`i4`, `u4`, `e2m1`): its four
/// bits, from the low nibble of byte `index / 2` for an even index and
/// the high nibble for an odd one (the format's packing).
pub fn nibble(payload: &[u8], index: usize) -> Option<u8> {
    let byte = payload.get(index / 2)?;
    Some(if index.is_multiple_of(2) {
        byte & 0x0F
    } else {
        byte >> 4
    })
}

/// Element `index` of a little-endian payload of `dtype`, as `f32`.
pub fn element_to_f32(dtype: Dtype, payload: &[u8], index: usize) -> Option<f32> {
    let nibble = || nibble(payload, index);
    let bytes = |width: usize| {
        let start = index.checked_mul(width)?;
        payload.get(start..start.checked_add(width)?)
    };
    let array = |width| {
        bytes(width).map(|b| {
            let mut out = [0u8; 8];
            for (o, i) in out.iter_mut().zip(b) {
                *o = *i;
            }
            out
        })
    };
    Some(match dtype {
        Dtype::F64 => f64::from_le_bytes(array(8)?) as f32,
        Dtype::F32 => f32::from_le_bytes(bytes(4)?.try_into().ok()?),
        Dtype::F16 => f16_to_f32(u16::from_le_bytes(bytes(2)?.try_into().ok()?)),
        Dtype::Bf16 => bf16_to_f32(u16::from_le_bytes(bytes(2)?.try_into().ok()?)),
        Dtype::F8E4M3 => f8e4m3_to_f32(*payload.get(index)?),
        Dtype::F8E5M2 => f8e5m2_to_f32(*payload.get(index)?),
        Dtype::Bool | Dtype::U8 => f32::from(*payload.get(index)?),
        Dtype::I8 => f32::from(*payload.get(index)? as i8),
        Dtype::I16 => f32::from(i16::from_le_bytes(bytes(2)?.try_into().ok()?)),
        Dtype::U16 => f32::from(u16::from_le_bytes(bytes(2)?.try_into().ok()?)),
        Dtype::I32 => i32::from_le_bytes(bytes(4)?.try_into().ok()?) as f32,
        Dtype::U32 => u32::from_le_bytes(bytes(4)?.try_into().ok()?) as f32,
        Dtype::I64 => i64::from_le_bytes(array(8)?) as f32,
        Dtype::U64 => u64::from_le_bytes(array(8)?) as f32,
        Dtype::I4 => i4_to_f32(nibble()?),
        Dtype::U4 => u4_to_f32(nibble()?),
        Dtype::E2M1 => e2m1_to_f32(nibble()?),
        Dtype::E8M0 => e8m0_to_f32(*payload.get(index)?),
    })
}

/// Widens elements `first..first + out.len()` of a payload of `dtype`
/// (`count` elements in all) into `out`; returns how many were written
/// (fewer at the end of the tensor).
pub fn widen_into(
    dtype: Dtype,
    payload: &[u8],
    count: u64,
    first: u64,
    out: &mut [f32],
) -> Result<usize> {
    let available = count.saturating_sub(first);
    let n = out
        .len()
        .min(usize::try_from(available).unwrap_or(usize::MAX));
    let first = usize::try_from(first).map_err(|_| out_of_range())?;
    for (i, slot) in out.iter_mut().take(n).enumerate() {
        *slot = element_to_f32(dtype, payload, first.saturating_add(i)).ok_or_else(out_of_range)?;
    }
    Ok(n)
}

fn out_of_range() -> Error {
    Error::refused(
        Refusal::WrongElementType,
        "element outside the payload for its dtype",
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn known_values_of_each_small_format() {
        assert_eq!(f8e4m3_to_f32(0x38), 1.0);
        assert_eq!(f8e4m3_to_f32(0x7E), 448.0);
        assert_eq!(f8e4m3_to_f32(0x01), 2f32.powi(-9));
        assert!(f8e4m3_to_f32(0x7F).is_nan() && f8e4m3_to_f32(0xFF).is_nan());
        assert_eq!(f8e5m2_to_f32(0x3C), 1.0);
        assert_eq!(f8e5m2_to_f32(0x7B), 57344.0);
        assert_eq!(f8e5m2_to_f32(0x7C), f32::INFINITY);
        assert!(f8e5m2_to_f32(0x7D).is_nan());
        assert_eq!(f8e5m2_to_f32(0x01), 2f32.powi(-16));
        let e2m1: [f32; 8] = core::array::from_fn(|n| e2m1_to_f32(n as u8));
        assert_eq!(e2m1, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(e2m1_to_f32(0x0F), -6.0);
        assert_eq!(e8m0_to_f32(127), 1.0);
        assert_eq!(e8m0_to_f32(0), 2f32.powi(-127));
        assert!(e8m0_to_f32(0xFF).is_nan());
        assert_eq!(i4_to_f32(0x0F), -1.0);
        assert_eq!(i4_to_f32(0x08), -8.0);
        assert_eq!(u4_to_f32(0x0F), 15.0);
        assert_eq!(bf16_to_f32(0x3F80), 1.0);
        assert_eq!(f16_to_f32(0x3C00), 1.0);
    }

    #[test]
    fn packed_elements_are_low_nibble_first() {
        // 1, 2, 3 as u4: the bytes 21 03 (spec/kiln-v2.md, packed dtypes).
        let mut out = [0f32; 4];
        let n = widen_into(Dtype::U4, &[0x21, 0x03], 3, 0, &mut out).unwrap();
        assert_eq!((n, out), (3, [1.0, 2.0, 3.0, 0.0]));
        let n = widen_into(Dtype::U4, &[0x21, 0x03], 3, 2, &mut out).unwrap();
        assert_eq!((n, out[0]), (1, 3.0));
    }
}
