//! The Rust logic under the JS layer, which the host tests run: a file
//! opened by ranges through the core's sans-I/O opener
//! ([`kiln_nostd::inspect::KilnOpener`]; this module knows no offset of
//! the format), and which bytes hold a range of a tensor's elements.
//!
//! JavaScript drives the opener itself, a step at a time, awaiting each
//! read (`KilnFile.openReader`); bytes already in memory are read in one
//! run ([`kiln_nostd::inspect::open_read_at`]). Either way only the ranges
//! the checker names are read: payload interiors never are.

use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

use kiln_nostd::inspect::{TensorDtype, TensorFacts};
use kiln_nostd::Width;
use kiln_nostd::{Detail, Error, Refusal, Result};

/// Refusal for a range of elements outside a tensor.
pub fn out_of_range() -> Error {
    Error::refused(
        Refusal::WrongElementType,
        "element range outside the tensor",
    )
}

/// The closed dtype of `t`, or the refusal a read of its elements gets.
fn closed(t: &TensorFacts) -> Result<kiln_nostd::Dtype> {
    match &t.dtype {
        TensorDtype::Kiln(d) => d.closed().ok_or(
            Error::refused(
                Refusal::WrongElementType,
                "an opaque dtype has no elements to widen",
            )
            .with_detail(Detail::Dtypes {
                tensor: d.code(),
                requested: 0,
            }),
        ),
        TensorDtype::Foreign(_) => Err(Error::refused(
            Refusal::WrongElementType,
            "a dtype Kiln does not have has no elements to widen",
        )),
    }
}

/// The payload bytes (absolute in the file) that hold elements
/// `first..first + count` of a tensor, the index of element `first` within
/// them, and the element count they span: what [`widen_range`] needs, so
/// that a caller reads only those bytes.
pub fn element_bytes(t: &TensorFacts, first: u64, count: u64) -> Result<(Range<u64>, u64, u64)> {
    let dtype = closed(t)?;
    let elements = t.elements.unwrap_or(0);
    let count = count.min(elements.saturating_sub(first));
    // `first` comes from a JS number: anything up to u64::MAX, so every
    // step is checked (an overflow is a range outside the tensor).
    let last = first.checked_add(count).ok_or_else(out_of_range)?;
    let (start, end, skip) = match dtype.width() {
        Width::Bytes(w) => {
            let w = u64::from(w);
            let bytes = |n: u64| n.checked_mul(w).ok_or_else(out_of_range);
            (bytes(first)?, bytes(last)?, 0)
        }
        Width::Nibbles => (first / 2, last.div_ceil(2), first % 2),
    };
    if end > t.length || start > end {
        return Err(out_of_range());
    }
    Ok((t.offset + start..t.offset + end, skip, count + skip))
}

/// Widens `count` elements starting at `first` for display, given the
/// bytes [`element_bytes`] named. Bits only: no scale is applied.
pub fn widen_range(t: &TensorFacts, bytes: &[u8], first: u64, count: u64) -> Result<Vec<f32>> {
    let dtype = closed(t)?;
    let (range, skip, total) = element_bytes(t, first, count)?;
    if (bytes.len() as u64) < range.end - range.start {
        return Err(out_of_range());
    }
    let n = usize::try_from(total - skip).map_err(|_| out_of_range())?;
    let mut out = vec![0f32; n];
    let written = kiln_nostd::widen::widen_into(dtype, bytes, total, skip, &mut out)?;
    out.truncate(written);
    Ok(out)
}
