//! Tensor element types: the 19 closed dtype codes, and opaque codes for
//! foreign block layouts.

use crate::error::{Code, Error, Result};

/// One of the 19 closed dtypes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u16)]
pub enum Dtype {
    /// IEEE binary64.
    F64 = 1,
    /// IEEE binary32.
    F32 = 2,
    /// IEEE binary16.
    F16 = 3,
    /// bfloat16.
    Bf16 = 4,
    /// OFP8 E4M3.
    F8E4M3 = 5,
    /// OFP8 E5M2.
    F8E5M2 = 6,
    /// One byte, 0 or 1.
    Bool = 7,
    /// Two's complement byte.
    I8 = 8,
    /// Unsigned byte.
    U8 = 9,
    /// Little-endian i16.
    I16 = 10,
    /// Little-endian u16.
    U16 = 11,
    /// Little-endian i32.
    I32 = 12,
    /// Little-endian u32.
    U32 = 13,
    /// Little-endian i64.
    I64 = 14,
    /// Little-endian u64.
    U64 = 15,
    /// Packed two's-complement nibbles, low nibble first.
    I4 = 16,
    /// Packed unsigned nibbles, low nibble first.
    U4 = 17,
    /// OCP MX FP4 E2M1, packed nibbles.
    E2M1 = 18,
    /// OCP MX E8M0 scale byte.
    E8M0 = 19,
}

/// First opaque dtype code.
pub const OPAQUE_FIRST: u16 = 4096;
/// Last opaque dtype code.
pub const OPAQUE_LAST: u16 = 32767;

/// How many bytes `n` elements of a closed dtype take.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Width {
    /// `n * bytes`.
    Bytes(u8),
    /// Two elements per byte: `ceil(n / 2)`.
    Nibbles,
}

impl Dtype {
    /// All closed dtypes, by code.
    pub const ALL: [Dtype; 19] = [
        Dtype::F64,
        Dtype::F32,
        Dtype::F16,
        Dtype::Bf16,
        Dtype::F8E4M3,
        Dtype::F8E5M2,
        Dtype::Bool,
        Dtype::I8,
        Dtype::U8,
        Dtype::I16,
        Dtype::U16,
        Dtype::I32,
        Dtype::U32,
        Dtype::I64,
        Dtype::U64,
        Dtype::I4,
        Dtype::U4,
        Dtype::E2M1,
        Dtype::E8M0,
    ];

    /// The wire code.
    pub const fn code(self) -> u16 {
        self as u16
    }

    /// The closed dtype with `code`, if any.
    pub fn from_code(code: u16) -> Option<Dtype> {
        // ALL is in code order from 1 (a test checks it): one table read.
        let d = *Dtype::ALL.get(usize::from(code).wrapping_sub(1))?;
        Some(d)
    }

    /// The dtype's name, e.g. `"bf16"`.
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::F64 => "f64",
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F8E4M3 => "f8e4m3",
            Dtype::F8E5M2 => "f8e5m2",
            Dtype::Bool => "bool",
            Dtype::I8 => "i8",
            Dtype::U8 => "u8",
            Dtype::I16 => "i16",
            Dtype::U16 => "u16",
            Dtype::I32 => "i32",
            Dtype::U32 => "u32",
            Dtype::I64 => "i64",
            Dtype::U64 => "u64",
            Dtype::I4 => "i4",
            Dtype::U4 => "u4",
            Dtype::E2M1 => "e2m1",
            Dtype::E8M0 => "e8m0",
        }
    }

    /// Bytes per element, or nibbles.
    pub const fn width(self) -> Width {
        match self {
            Dtype::F64 | Dtype::I64 | Dtype::U64 => Width::Bytes(8),
            Dtype::F32 | Dtype::I32 | Dtype::U32 => Width::Bytes(4),
            Dtype::F16 | Dtype::Bf16 | Dtype::I16 | Dtype::U16 => Width::Bytes(2),
            Dtype::F8E4M3 | Dtype::F8E5M2 | Dtype::Bool | Dtype::I8 | Dtype::U8 | Dtype::E8M0 => {
                Width::Bytes(1)
            }
            Dtype::I4 | Dtype::U4 | Dtype::E2M1 => Width::Nibbles,
        }
    }

    /// The exact byte length of `count` elements; LIMIT when the product
    /// overflows 64 bits.
    pub fn byte_length(self, count: u64) -> Result<u64> {
        match self.width() {
            Width::Bytes(w) => count.checked_mul(u64::from(w)).ok_or(Error::wire(
                Code::Limit,
                "element count times width overflows 64 bits",
                0,
            )),
            Width::Nibbles => Ok(count.div_ceil(2)),
        }
    }
}

/// A dtype code as found in a descriptor: closed or opaque.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum DtypeCode {
    /// Codes 1 through 19.
    Closed(Dtype),
    /// Codes 4096 through 32767: a foreign block layout Kiln does not
    /// interpret.
    Opaque(u16),
}

impl DtypeCode {
    /// Classifies a wire code; `None` for 0, the reserved 20..=4095 and
    /// anything above 32767.
    pub fn from_code(code: u16) -> Option<DtypeCode> {
        if (OPAQUE_FIRST..=OPAQUE_LAST).contains(&code) {
            return Some(DtypeCode::Opaque(code));
        }
        Dtype::from_code(code).map(DtypeCode::Closed)
    }

    /// The wire code.
    pub const fn code(self) -> u16 {
        match self {
            DtypeCode::Closed(d) => d.code(),
            DtypeCode::Opaque(c) => c,
        }
    }
}

impl From<Dtype> for DtypeCode {
    fn from(d: Dtype) -> Self {
        DtypeCode::Closed(d)
    }
}

impl core::fmt::Display for Dtype {
    /// The dtype's name, e.g. `bf16`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl core::fmt::Display for DtypeCode {
    /// A closed dtype's name, or `opaque(4096)` for an opaque code.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DtypeCode::Closed(d) => d.fmt(f),
            DtypeCode::Opaque(code) => write!(f, "opaque({code})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_code_order_from_one() {
        for (i, d) in Dtype::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(d.code()), i + 1);
            assert_eq!(Dtype::from_code(d.code()), Some(d));
        }
        for code in [0, 20, 4095, 4096, u16::MAX] {
            assert_eq!(Dtype::from_code(code), None);
        }
    }
}
