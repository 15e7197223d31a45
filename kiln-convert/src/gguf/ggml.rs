//! ggml tensor types: their ids in GGUF, names, block geometry, and the
//! Kiln dtype each becomes.
//!
//! Plain numeric types (F32, F16, BF16, F64, I8, I16, I32, I64) become the
//! closed Kiln dtype with the same bits. Every block type becomes the
//! opaque Kiln dtype `4096 + id`, with the ggml type name as the layout
//! name and the bytes of one block as the block size. The numbers are
//! ggml's type traits (`blck_size`, `type_size` in `ggml/src/ggml.c`, the
//! same as `GGML_QUANT_SIZES` in gguf-py).

use kiln_nostd::{Dtype, DtypeCode};

/// First opaque Kiln dtype code; a ggml block type with id `t` is
/// `OPAQUE_BASE + t`.
pub const OPAQUE_BASE: u16 = 4096;

/// One ggml tensor type.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GgmlType {
    /// The id GGUF stores in a tensor info.
    pub id: u32,
    /// ggml's name for it (gguf-py's spelling), e.g. `Q4_K`: the Kiln
    /// layout name of a block type.
    pub name: &'static str,
    /// Elements per block (1 for the plain types).
    pub block_elements: u64,
    /// Bytes per block: the Kiln block size of a block type.
    pub block_bytes: u64,
    /// The closed Kiln dtype of a plain type; `None` for a block type.
    pub closed: Option<Dtype>,
}

impl GgmlType {
    /// The Kiln dtype code: closed for a plain type, `4096 + id` for a
    /// block type.
    pub fn kiln_dtype(&self) -> DtypeCode {
        match self.closed {
            Some(d) => DtypeCode::Closed(d),
            // Ids are below 64, so the sum stays inside 4096..=32767.
            None => DtypeCode::Opaque(OPAQUE_BASE + self.id as u16),
        }
    }

    /// The ggml type with this id, if ggml defines one.
    pub fn from_id(id: u32) -> Option<&'static GgmlType> {
        GGML_TYPES.iter().find(|t| t.id == id)
    }

    /// The ggml type a Kiln dtype stands for.
    pub fn from_kiln(code: DtypeCode) -> Option<&'static GgmlType> {
        GGML_TYPES.iter().find(|t| t.kiln_dtype() == code)
    }

    /// Bytes of a tensor of this type whose innermost dimension is
    /// `dims[0]` (GGUF order), or why there is no such size: the innermost
    /// dimension must be a whole number of blocks, and the size must fit in
    /// 64 bits.
    pub fn byte_len(&self, dims: &[u64]) -> Result<u64, &'static str> {
        let (&first, rest) = dims.split_first().unwrap_or((&1, &[]));
        if first % self.block_elements != 0 {
            return Err("innermost dimension is not a whole number of blocks");
        }
        if dims.contains(&0) {
            return Ok(0);
        }
        let mut bytes = (first / self.block_elements).checked_mul(self.block_bytes);
        for &d in rest {
            bytes = bytes.and_then(|n| n.checked_mul(d));
        }
        bytes.ok_or("byte size overflows 64 bits")
    }
}

const fn plain(id: u32, name: &'static str, bytes: u64, dtype: Dtype) -> GgmlType {
    GgmlType {
        id,
        name,
        block_elements: 1,
        block_bytes: bytes,
        closed: Some(dtype),
    }
}

const fn block(id: u32, name: &'static str, elements: u64, bytes: u64) -> GgmlType {
    GgmlType {
        id,
        name,
        block_elements: elements,
        block_bytes: bytes,
        closed: None,
    }
}

/// Every ggml tensor type a GGUF file may hold, by id.
pub const GGML_TYPES: [GgmlType; 35] = [
    plain(0, "F32", 4, Dtype::F32),
    plain(1, "F16", 2, Dtype::F16),
    block(2, "Q4_0", 32, 18),
    block(3, "Q4_1", 32, 20),
    block(6, "Q5_0", 32, 22),
    block(7, "Q5_1", 32, 24),
    block(8, "Q8_0", 32, 34),
    block(9, "Q8_1", 32, 36),
    block(10, "Q2_K", 256, 84),
    block(11, "Q3_K", 256, 110),
    block(12, "Q4_K", 256, 144),
    block(13, "Q5_K", 256, 176),
    block(14, "Q6_K", 256, 210),
    block(15, "Q8_K", 256, 292),
    block(16, "IQ2_XXS", 256, 66),
    block(17, "IQ2_XS", 256, 74),
    block(18, "IQ3_XXS", 256, 98),
    block(19, "IQ1_S", 256, 50),
    block(20, "IQ4_NL", 32, 18),
    block(21, "IQ3_S", 256, 110),
    block(22, "IQ2_S", 256, 82),
    block(23, "IQ4_XS", 256, 136),
    plain(24, "I8", 1, Dtype::I8),
    plain(25, "I16", 2, Dtype::I16),
    plain(26, "I32", 4, Dtype::I32),
    plain(27, "I64", 8, Dtype::I64),
    plain(28, "F64", 8, Dtype::F64),
    block(29, "IQ1_M", 256, 56),
    plain(30, "BF16", 2, Dtype::Bf16),
    block(34, "TQ1_0", 256, 54),
    block(35, "TQ2_0", 256, 66),
    block(39, "MXFP4", 32, 17),
    block(40, "NVFP4", 64, 36),
    block(41, "Q1_0", 128, 18),
    block(42, "Q2_0", 64, 18),
];

/// Ids ggml once used and has removed, for a clearer refusal.
pub fn removed_name(id: u32) -> Option<&'static str> {
    Some(match id {
        4 => "Q4_2",
        5 => "Q4_3",
        31 => "Q4_0_4_4",
        32 => "Q4_0_4_8",
        33 => "Q4_0_8_8",
        36 => "IQ4_NL_4_4",
        37 => "IQ4_NL_4_8",
        38 => "IQ4_NL_8_8",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_opaque_codes_in_range() {
        for (i, a) in GGML_TYPES.iter().enumerate() {
            assert!(GGML_TYPES[i + 1..]
                .iter()
                .all(|b| b.id != a.id && b.name != a.name));
            assert_eq!(GgmlType::from_id(a.id), Some(a));
            assert_eq!(GgmlType::from_kiln(a.kiln_dtype()), Some(a));
            if a.closed.is_none() {
                let code = a.kiln_dtype().code();
                assert!((4096..=32767).contains(&code));
                assert_eq!(u32::from(code) - 4096, a.id);
            }
            assert!(removed_name(a.id).is_none());
        }
    }

    #[test]
    fn plain_types_match_the_closed_dtype_width() {
        for t in GGML_TYPES.iter().filter(|t| t.closed.is_some()) {
            let d = t.closed.unwrap();
            assert_eq!(d.byte_length(1).unwrap(), t.block_bytes, "{}", t.name);
        }
    }

    #[test]
    fn byte_len_follows_blocks_and_rows() {
        let q4k = GgmlType::from_id(12).unwrap();
        assert_eq!(q4k.byte_len(&[512, 3]), Ok(2 * 144 * 3));
        assert!(q4k.byte_len(&[100, 3]).is_err());
        assert_eq!(
            q4k.byte_len(&[]).ok(),
            None,
            "a scalar is not a whole block"
        );
        let f32_ = GgmlType::from_id(0).unwrap();
        assert_eq!(f32_.byte_len(&[]), Ok(4));
        assert_eq!(f32_.byte_len(&[2, 0, 5]), Ok(0));
        assert!(f32_.byte_len(&[u64::MAX, 2]).is_err());
    }
}
