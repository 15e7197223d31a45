//! Rules about one descriptor and its payload that the parser and the
//! builder share, so that what the builder writes is exactly what the
//! parser accepts. Offsets in errors are relative to the descriptor's
//! first byte; callers shift them.

use super::descriptor::{Fields, MAX_RANK, NO_AXIS, NO_INDEX};
use crate::dtype::{Dtype, DtypeCode, PayloadRule, Width};
use crate::error::{Code, Error, Result};

const fn type_fault(fault: &'static str, field: usize) -> Error {
    Error::wire(Code::Type, fault, field)
}

/// The element count: the exact product of the dimensions (1 for rank 0).
/// A zero dimension makes it 0 whatever the others are; otherwise a product
/// above 2^64 - 1 is `None`.
pub fn element_count(dims: &[u64]) -> Option<u64> {
    if dims.contains(&0) {
        return Some(0);
    }
    dims.iter().try_fold(1u64, |acc, &dim| acc.checked_mul(dim))
}

/// [`element_count`] of a descriptor's dimensions, read one slot at a time
/// (no copy of the eight slots).
fn count_of(d: impl Fields) -> Option<u64> {
    grouped_count(d, usize::MAX, 1)
}

/// [`count_of`] with dimension `axis` counted in groups of `group`
/// (`ceil(shape[axis] / group)`): the element count of a quantized
/// tensor's scales. One function for both, so that firmware carries one
/// copy of the loop. A zero dimension makes the count 0 whatever the
/// others are; otherwise a product above 2^64 - 1 is `None`.
#[cfg_attr(feature = "small-code", inline(never))] // several callers: one copy in flash
fn grouped_count(d: impl Fields, axis: usize, group: u32) -> Option<u64> {
    let mut product = Some(1u64);
    let mut zero = false;
    for k in 0..usize::from(d.rank().min(MAX_RANK)) {
        let mut n = d.dim(k);
        zero |= n == 0;
        if k == axis {
            let (q, r) = div_rem(n, group.max(1));
            n = q + u64::from(r != 0);
        }
        product = product.and_then(|p| p.checked_mul(n));
    }
    if zero {
        Some(0)
    } else {
        product
    }
}

/// Step 9 for one descriptor: dtype code, rank, shape tail, shape product,
/// then the opaque or closed length rules, then the payload range.
/// Returns the element count.
///
/// By default the common descriptor is accepted by the few compares of
/// [`plain_count`]; any other goes through the rules, in the wire text's
/// order, which find its fault. `small-code` runs the rules alone.
// `small-code` inlines the three rule functions into the parse, their one
// caller there: no call, and no error copied back through memory (the
// same reason as for `Walk::slice`). By default the call stays: the
// parse inlining even the fast path measured slower.
#[cfg_attr(feature = "small-code", inline(always))]
pub(crate) fn check_shape_and_range(d: impl Fields, payload_bytes: u64) -> Result<u64> {
    if !super::SMALL_CODE {
        if let Some(count) = plain_count(d, payload_bytes) {
            return Ok(count);
        }
    }
    ordered_shape_and_range(d, payload_bytes)
}

/// [`check_shape_and_range`] by the rules alone, in the wire text's order.
#[cfg_attr(feature = "small-code", inline(always))] // see check_shape_and_range
fn ordered_shape_and_range(d: impl Fields, payload_bytes: u64) -> Result<u64> {
    // (Errors are built only on their paths, never up front as `ok_or`
    // would: this runs once per descriptor.)
    let Some(code) = DtypeCode::from_code(d.dtype()) else {
        return Err(type_fault("dtype code is 0, reserved, or above 32767", 0));
    };
    let rank = d.rank();
    if rank > MAX_RANK {
        return Err(type_fault("rank above 8", 2));
    }
    // The slots at and past the rank. By default they are ORed first
    // (one unrolled loop) and searched for the nonzero one only when
    // there is one; `small-code` searches at once, in less code.
    let tail = super::SMALL_CODE
        || (0..8).fold(0, |acc, k| {
            acc | if k >= usize::from(rank) { d.dim(k) } else { 0 }
        }) != 0;
    if tail {
        if let Some(k) = (usize::from(rank)..8).find(|&k| d.dim(k) != 0) {
            return Err(type_fault(
                "nonzero shape slot at or past the rank",
                48 + 8 * k,
            ));
        }
    }
    let Some(count) = count_of(d) else {
        return Err(Error::wire(
            Code::Limit,
            "shape product overflows 64 bits",
            48,
        ));
    };
    let byte_length = d.byte_length();
    match code {
        DtypeCode::Opaque(_) => {
            if d.layout_len() == 0 {
                return Err(type_fault("opaque dtype without a layout name", 10));
            }
            if d.block_size() == 0 {
                return Err(type_fault("opaque dtype with block size 0", 12));
            }
            if div_rem(byte_length, d.block_size()).1 != 0 {
                return Err(type_fault(
                    "opaque length not a multiple of the block size",
                    40,
                ));
            }
        }
        DtypeCode::Closed(dtype) => {
            if d.layout_len() != 0 {
                return Err(type_fault("layout name on a closed dtype", 10));
            }
            if d.block_size() != 0 {
                return Err(type_fault("block size on a closed dtype", 12));
            }
            let Some(expected) = dtype.byte_length(count) else {
                return Err(Error::wire(
                    Code::Limit,
                    "element count times width overflows 64 bits",
                    40,
                ));
            };
            if byte_length != expected {
                return Err(type_fault("byte length does not match dtype and shape", 40));
            }
        }
    }
    let Some(end) = d.range_end() else {
        return Err(Error::wire(
            Code::Limit,
            "payload range end overflows 64 bits",
            32,
        ));
    };
    if end > payload_bytes {
        return Err(type_fault(
            "payload range extends past the payload region",
            32,
        ));
    }
    Ok(count)
}

/// By dtype code: the bytes per element of a closed dtype of whole bytes;
/// 0 for the packed dtypes and for every code that is not a closed dtype
/// (0, and the table's end stands for the rest). One load where
/// `DtypeCode::from_code` and `Dtype::width` are a range test and a jump.
#[allow(clippy::indexing_slicing)] // evaluated at compile time: a bad index fails the build
pub(crate) const WHOLE_BYTES: [u8; 20] = {
    let mut table = [0u8; 20];
    let mut k = 0;
    while k < Dtype::ALL.len() {
        let dtype = Dtype::ALL[k];
        if let Width::Bytes(w) = dtype.width() {
            table[dtype.code() as usize] = w;
        }
        k += 1;
    }
    table
};

/// The element count of a descriptor that every rule of
/// [`check_shape_and_range`] accepts, when the short argument of the
/// common case shows it: a closed dtype of whole bytes, rank at most 8
/// with zero slots past it, no layout name or block size, no partial
/// product of the dimensions above 2^64 - 1, a byte length of exactly the
/// count times the width, and a range that ends inside the region. Each
/// is a rule of step 9 (or implies one: a closed code is not 0, reserved
/// or above 32767); `None` says only that the rules must decide.
#[inline(always)] // one caller, once per descriptor
fn plain_count(d: impl Fields, payload_bytes: u64) -> Option<u64> {
    let width = WHOLE_BYTES
        .get(usize::from(d.dtype()))
        .copied()
        .unwrap_or(0);
    let rank = usize::from(d.rank());
    if width == 0 || rank > usize::from(MAX_RANK) || d.layout_len() != 0 || d.block_size() != 0 {
        return None;
    }
    let mut count = 1u64;
    let mut tail = 0u64;
    for k in 0..usize::from(MAX_RANK) {
        let dim = d.dim(k);
        if k < rank {
            count = count.checked_mul(dim)?;
        } else {
            tail |= dim;
        }
    }
    let length = count.checked_mul(u64::from(width))?;
    let end = d.byte_offset().checked_add(length)?;
    (tail == 0 && length == d.byte_length() && end <= payload_bytes).then_some(count)
}

/// The bytes of a payload of `len` bytes that [`check_payload_bits`]
/// reads, as `(skip, read)`: the rule is given bytes `skip..skip + read`
/// and nothing else, by the parse of a whole block and by a reader that
/// fetches only what the rules read. All of a bool payload, the last byte
/// of a packed payload with an odd count, nothing of any other.
pub(crate) fn bits_read(d: impl Fields, len: u64) -> (u64, u64) {
    match Dtype::from_code(d.dtype()) {
        Some(Dtype::Bool) => (0, len),
        Some(Dtype::I4 | Dtype::U4 | Dtype::E2M1) if count_of(d).is_some_and(|n| n % 2 == 1) => {
            (len.saturating_sub(1), len.min(1))
        }
        _ => (len, 0),
    }
}

/// Step 11, first part: bool bytes are 0 or 1, and an odd count of packed
/// nibbles leaves the last high nibble 0. `payload` is this tensor's
/// bytes, or the part of them that [`bits_read`] names (a bool payload may
/// come in pieces, each checked alone): the rule reads only that part, so
/// both give the same verdict. An error's offset is the offending byte's
/// within `payload` (the caller shifts it to the part's place), as the
/// reference reports it.
#[cfg_attr(feature = "small-code", inline(always))] // see check_shape_and_range
pub(crate) fn check_payload_bits(d: impl Fields, payload: &[u8]) -> Result<()> {
    let rule = Dtype::from_code(d.dtype()).map_or(PayloadRule::None, Dtype::payload_rule);
    match rule {
        PayloadRule::EveryByte => {
            if let Some(k) = payload.iter().position(|&b| b > 1) {
                return Err(type_fault("bool byte other than 0 or 1", k));
            }
        }
        PayloadRule::LastByte => {
            let odd = count_of(d).is_some_and(|n| n % 2 == 1);
            if odd && payload.last().is_some_and(|&b| b & 0xF0 != 0) {
                return Err(type_fault(
                    "nonzero high nibble after an odd packed count",
                    payload.len().saturating_sub(1),
                ));
            }
        }
        PayloadRule::None => {}
    }
    Ok(())
}

/// Step 11, second part: the quantization fields of tensor `index` and the
/// tensors they link to. `get` returns another descriptor of the same
/// directory; `count` is how many there are.
#[cfg_attr(feature = "small-code", inline(always))] // see check_shape_and_range
pub(crate) fn check_quant<F: Fields>(
    index: u32,
    d: F,
    count: u32,
    get: impl Fn(u32) -> Option<F>,
) -> Result<()> {
    match d.quant_scheme() {
        0 => {
            if d.quant_axis() != NO_AXIS
                || d.group_size() != 0
                || d.scale_index() != NO_INDEX
                || d.outer_index() != NO_INDEX
            {
                return Err(type_fault(
                    "scheme 0 with axis, group or index fields set",
                    16,
                ));
            }
            Ok(())
        }
        1 | 2 => {
            if d.rank() == 0 || d.quant_axis() >= u16::from(d.rank()) {
                return Err(type_fault("quantization axis not below the rank", 18));
            }
            if d.group_size() == 0 {
                return Err(type_fault("quantization group size 0", 20));
            }
            let scales = link(index, d.scale_index(), count, &get, 24)?;
            if scales.quant_scheme() != 0 {
                return Err(type_fault("scale tensor is itself quantized", 24));
            }
            // ceil(shape[axis] / group) * product(other dimensions): never
            // above the data tensor's own count, which step 9 bounded.
            let groups = grouped_count(d, usize::from(d.quant_axis()), d.group_size());
            if groups.is_none() || count_of(scales) != groups {
                return Err(type_fault(
                    "scale tensor element count is not one per group",
                    24,
                ));
            }
            if d.quant_scheme() == 1 {
                if d.outer_index() != NO_INDEX {
                    return Err(type_fault("scheme 1 with an outer index", 28));
                }
                return Ok(());
            }
            if d.outer_index() == d.scale_index() {
                return Err(type_fault("outer tensor is the scale tensor", 28));
            }
            let outer = link(index, d.outer_index(), count, &get, 28)?;
            if outer.dtype() != Dtype::F32.code()
                || outer.quant_scheme() != 0
                || count_of(outer) != Some(1)
            {
                return Err(type_fault("outer tensor is not one unquantized f32", 28));
            }
            Ok(())
        }
        _ => Err(type_fault("quantization scheme above 2", 16)),
    }
}

/// The descriptor that `target` links to: in range and not `index` itself.
fn link<F>(
    index: u32,
    target: u32,
    count: u32,
    get: &impl Fn(u32) -> Option<F>,
    field: usize,
) -> Result<F> {
    if target == index || target >= count {
        return Err(type_fault(
            "quantization link to itself or out of range",
            field,
        ));
    }
    get(target).ok_or(type_fault("quantization link out of range", field))
}

/// `(n / d, n % d)` for a nonzero 32-bit divisor. On a 64-bit host this is
/// the machine's division; on a 32-bit target, which has no 64-bit divide,
/// it is [`div_rem_portable`], so that the compiler's 64-bit division
/// helpers, large for what they do here, are not linked into the firmware.
#[inline]
pub(crate) fn div_rem(n: u64, d: u32) -> (u64, u32) {
    #[cfg(target_pointer_width = "64")]
    {
        let d = u64::from(d.max(1));
        #[allow(clippy::cast_possible_truncation)]
        return (n / d, (n % d) as u32);
    }
    #[cfg(not(target_pointer_width = "64"))]
    div_rem_portable(n, d)
}

/// [`div_rem`] with 32-bit divisions only: the high word by the divisor,
/// then the low word one bit at a time (the remainder stays below the
/// divisor, so it fits in 33 bits at every step).
#[cfg_attr(target_pointer_width = "64", allow(dead_code))]
pub(crate) fn div_rem_portable(n: u64, d: u32) -> (u64, u32) {
    let d = d.max(1);
    let high = (n >> 32) as u32;
    let low = n as u32;
    if high == 0 {
        return (u64::from(low / d), low % d);
    }
    let mut quotient = u64::from(high / d) << 32;
    let mut rem = u64::from(high % d);
    for bit in (0..32).rev() {
        rem = (rem << 1) | u64::from((low >> bit) & 1);
        if rem >= u64::from(d) {
            rem -= u64::from(d);
            quotient |= 1 << bit;
        }
    }
    (quotient, rem as u32)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, clippy::unwrap_used)]

    use super::super::descriptor::Record;
    use super::*;

    /// A descriptor record with the fields step 9 reads.
    fn record(
        dtype: u16,
        dims: &[u64],
        layout_len: u16,
        block_size: u32,
        range: (u64, u64),
    ) -> [u8; 128] {
        let mut r = [0u8; 128];
        r[0..2].copy_from_slice(&dtype.to_le_bytes());
        r[2] = dims.len().min(255) as u8;
        r[10..12].copy_from_slice(&layout_len.to_le_bytes());
        r[12..16].copy_from_slice(&block_size.to_le_bytes());
        r[32..40].copy_from_slice(&range.0.to_le_bytes());
        r[40..48].copy_from_slice(&range.1.to_le_bytes());
        for (k, dim) in dims.iter().take(8).enumerate() {
            r[48 + 8 * k..56 + 8 * k].copy_from_slice(&dim.to_le_bytes());
        }
        r
    }

    /// The common case's compares accept only what the ordered rules
    /// accept, with the same count, and the check gives the ordered
    /// rules' verdict (error, code and offset) on every descriptor.
    #[test]
    fn the_common_case_agrees_with_the_ordered_rules() {
        let shapes: [&[u64]; 11] = [
            &[],
            &[4],
            &[0],
            &[3, 5],
            &[u64::MAX, 2],
            &[1 << 32, 1 << 32, 0],
            &[0, u64::MAX, u64::MAX],
            &[1 << 61],
            &[2, 2, 2, 2, 2, 2, 2, 2],
            &[2, 2, 2, 2, 2, 2, 2, 2, 2],
            &[7, 1, 3],
        ];
        let mut fast = 0;
        for dtype in [
            0u16, 1, 2, 3, 7, 9, 16, 18, 19, 20, 4095, 4096, 32767, 32768,
        ] {
            for dims in shapes {
                let count = element_count(dims).unwrap_or(0);
                let width = WHOLE_BYTES.get(usize::from(dtype)).copied().unwrap_or(1);
                let exact = count.wrapping_mul(u64::from(width.max(1)));
                for (layout_len, block_size) in [(0, 0), (3, 0), (0, 4), (3, 4)] {
                    for length in [exact, exact.wrapping_add(1), exact.wrapping_sub(1), 0] {
                        for offset in [0, 64, u64::MAX - 3] {
                            for payload_bytes in [u64::MAX, 100] {
                                let mut r =
                                    record(dtype, dims, layout_len, block_size, (offset, length));
                                for tail in [false, true] {
                                    if tail {
                                        r[104..112].copy_from_slice(&1u64.to_le_bytes());
                                    }
                                    let d = Record(&r);
                                    let ordered = ordered_shape_and_range(d, payload_bytes);
                                    if let Some(n) = plain_count(d, payload_bytes) {
                                        assert_eq!(ordered, Ok(n), "{dtype} {dims:?}");
                                        fast += 1;
                                    }
                                    assert_eq!(check_shape_and_range(d, payload_bytes), ordered);
                                }
                            }
                        }
                    }
                }
            }
        }
        // The common case is taken (a rank-8 f64 tensor, a scalar, ...).
        assert!(fast > 50, "{fast}");
    }

    #[test]
    fn portable_division_agrees_with_the_machine() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let divisors = [
            1u32,
            2,
            3,
            7,
            18,
            32,
            144,
            255,
            65_535,
            65_536,
            0x8000_0001,
            u32::MAX,
        ];
        for _ in 0..2_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for n in [x, x >> 17, x >> 40, u64::MAX, 0, u64::from(u32::MAX) + 1] {
                for &d in &divisors {
                    let expected = (n / u64::from(d), (n % u64::from(d)) as u32);
                    assert_eq!(div_rem_portable(n, d), expected, "{n} / {d}");
                    assert_eq!(div_rem(n, d), expected, "{n} / {d}");
                }
            }
        }
    }
}
