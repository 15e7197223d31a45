//! Tensor element types: the 19 closed dtype codes, and opaque codes for
//! foreign block layouts.

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

/// Which payload bytes the directory rules read for a dtype: the bytes a
/// checker that skips payloads (a browser that keeps a model in its own
/// buffer, say) must still see.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub enum PayloadRule {
    /// No rule reads the payload: every bit pattern is a value.
    None,
    /// Every byte is read (`bool`: each byte is 0 or 1).
    EveryByte,
    /// The last byte is read when the element count is odd (packed
    /// nibbles: the unused high nibble is 0).
    LastByte,
}

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
    #[doc(hidden)]
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

    /// Whether two elements share a byte (`i4`, `u4`, `e2m1`).
    #[doc(hidden)]
    pub const fn is_packed(self) -> bool {
        matches!(self.width(), Width::Nibbles)
    }

    /// Bytes per element, `None` for a packed dtype.
    #[doc(hidden)]
    pub const fn element_size(self) -> Option<usize> {
        match self.width() {
            Width::Bytes(w) => Some(w as usize),
            Width::Nibbles => None,
        }
    }

    /// The alignment a zero-copy view of the payload needs: the element
    /// size, 1 for packed dtypes (viewed as bytes).
    #[doc(hidden)]
    pub const fn element_align(self) -> usize {
        match self.width() {
            Width::Bytes(w) => w as usize,
            Width::Nibbles => 1,
        }
    }

    /// Which payload bytes the directory rules read.
    #[doc(hidden)]
    pub const fn payload_rule(self) -> PayloadRule {
        match self {
            Dtype::Bool => PayloadRule::EveryByte,
            _ if self.is_packed() => PayloadRule::LastByte,
            _ => PayloadRule::None,
        }
    }

    /// Whether the elements are IEEE-style floats or float-like codes
    /// (`f64` .. `f8e5m2`, `e2m1`, `e8m0`), as opposed to integers and
    /// `bool`.
    #[doc(hidden)]
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            Dtype::F64
                | Dtype::F32
                | Dtype::F16
                | Dtype::Bf16
                | Dtype::F8E4M3
                | Dtype::F8E5M2
                | Dtype::E2M1
                | Dtype::E8M0
        )
    }

    /// Whether the elements are two's-complement integers (`i4` .. `i64`).
    #[doc(hidden)]
    pub const fn is_signed(self) -> bool {
        matches!(
            self,
            Dtype::I4 | Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64
        )
    }

    /// The exact byte length of `count` elements, or `None` when the
    /// product overflows 64 bits (the directory check's `LIMIT`).
    pub fn byte_length(self, count: u64) -> Option<u64> {
        match self.width() {
            Width::Bytes(w) => count.checked_mul(u64::from(w)),
            Width::Nibbles => Some(count.div_ceil(2)),
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

    /// The closed dtype, if it is one.
    pub const fn closed(self) -> Option<Dtype> {
        match self {
            DtypeCode::Closed(d) => Some(d),
            DtypeCode::Opaque(_) => None,
        }
    }

    /// The alignment a zero-copy view needs: the closed dtype's
    /// [`Dtype::element_align`]; 1 for an opaque layout (viewed as bytes).
    #[doc(hidden)]
    pub const fn element_align(self) -> usize {
        match self {
            DtypeCode::Closed(d) => d.element_align(),
            DtypeCode::Opaque(_) => 1,
        }
    }

    /// Which payload bytes the directory rules read: none of an opaque
    /// layout's.
    #[doc(hidden)]
    pub const fn payload_rule(self) -> PayloadRule {
        match self {
            DtypeCode::Closed(d) => d.payload_rule(),
            DtypeCode::Opaque(_) => PayloadRule::None,
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

    #[test]
    fn facts_agree_with_the_width() {
        for d in Dtype::ALL {
            let packed = d.width() == Width::Nibbles;
            assert_eq!(d.is_packed(), packed, "{d}");
            assert_eq!(d.element_size().is_none(), packed, "{d}");
            let two = d.element_size().map_or(1, |w| 2 * w as u64);
            assert_eq!(d.byte_length(2), Some(two), "{d}");
            let rule = match d {
                Dtype::Bool => PayloadRule::EveryByte,
                _ if packed => PayloadRule::LastByte,
                _ => PayloadRule::None,
            };
            assert_eq!(d.payload_rule(), rule, "{d}");
        }
        assert_eq!(DtypeCode::Opaque(4108).element_align(), 1);
        assert_eq!(DtypeCode::Opaque(4108).payload_rule(), PayloadRule::None);
        assert_eq!(DtypeCode::Closed(Dtype::F64).element_align(), 8);
        assert!(Dtype::E8M0.is_float() && !Dtype::I8.is_float());
        for d in Dtype::ALL {
            // Every dtype is one of: bool, a float-like code, an integer.
            let kinds = [
                d == Dtype::Bool,
                d.is_float(),
                d.name().starts_with(['i', 'u']),
            ];
            assert_eq!(kinds.iter().filter(|&&k| k).count(), 1, "{d}");
            assert_eq!(d.is_signed(), d.name().starts_with('i'), "{d}");
        }
    }
}
