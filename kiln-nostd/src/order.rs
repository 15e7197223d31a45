//! Byte order. Every copy of a multi-byte number between host memory and
//! wire bytes goes through this module.
//!
//! The wire is little-endian on every host. On a little-endian host a
//! payload already *is* an array of host numbers, so it can be viewed in
//! place (when its address is aligned) or copied with one `memcpy`. On a
//! big-endian host a zero-copy view would give wrong numbers, so it is
//! refused, and copies swap each element. One-byte and packed dtypes are
//! plain bytes on every host.
//!
//! The API is the view, the copy and the element read; the writers and
//! the alternative copies are hidden: the crate's encoders, tests and
//! benchmarks call them.

use crate::error::{Detail, Error, Refusal, Result};
use crate::wire::{Sink, Writer};
use bytemuck::PodCastError;

pub(crate) use crate::element::Element;

/// True when host memory order equals wire order.
pub const HOST_IS_LITTLE_ENDIAN: bool = cfg!(target_endian = "little");

/// Views a little-endian payload as host numbers without copying.
///
/// Refused on a big-endian host for any element wider than one byte
/// ([`Refusal::BigEndianHost`]), when the payload's address is not aligned
/// for `T` ([`Refusal::Misaligned`]), and when `T::WIDTH` does not divide
/// the length ([`Refusal::WrongElementType`]). Never returns wrong numbers.
pub fn view<T: Element>(payload: &[u8]) -> Result<&[T]> {
    if !HOST_IS_LITTLE_ENDIAN && T::WIDTH > 1 {
        return Err(Error::refused(
            Refusal::BigEndianHost,
            "zero-copy typed view of little-endian data on a big-endian host",
        ));
    }
    bytemuck::try_cast_slice(payload).map_err(|e| match e {
        PodCastError::TargetAlignmentGreaterAndInputNotAligned => Error::refused(
            Refusal::Misaligned,
            "payload address is not aligned for the element type",
        ),
        _ => wrong_width(payload.len(), T::WIDTH),
    })
}

/// Copies a little-endian payload into host numbers: one copy on a
/// little-endian host, a byte swap per element on a big-endian one.
/// Returns the element count. `out` may be longer than needed.
pub fn copy_into<T: Element>(payload: &[u8], out: &mut [T]) -> Result<usize> {
    #[cfg(target_endian = "big")]
    return copy_swapped(payload, out);
    #[cfg(target_endian = "little")]
    copy_native(payload, out)
}

/// The big-endian host's copy: each element's bytes reversed on the way,
/// in one pass. Compiled on a little-endian host only with the `bench`
/// feature, where it gives byte-swapped numbers and exists to be timed.
#[cfg(any(target_endian = "big", feature = "bench"))]
#[doc(hidden)]
pub fn copy_swapped<T: Element>(payload: &[u8], out: &mut [T]) -> Result<usize> {
    let count = element_count::<T>(payload)?;
    T::copy_reversed(payload, out_prefix(out, count)?);
    Ok(count)
}

/// The little-endian host's copy: the wire bytes are the host bytes.
#[cfg_attr(target_endian = "big", allow(dead_code))]
fn copy_native<T: Element>(payload: &[u8], out: &mut [T]) -> Result<usize> {
    let count = element_count::<T>(payload)?;
    let out_bytes: &mut [u8] = bytemuck::cast_slice_mut(out_prefix(out, count)?);
    out_bytes.copy_from_slice(payload);
    Ok(count)
}

/// The portable copy: decodes each element from its little-endian bytes.
/// Correct on every host; the big-endian path.
#[doc(hidden)]
pub fn copy_per_element<T: Element>(payload: &[u8], out: &mut [T]) -> Result<usize> {
    let count = element_count::<T>(payload)?;
    for (slot, bytes) in out_prefix(out, count)?
        .iter_mut()
        .zip(payload.chunks_exact(T::WIDTH))
    {
        *slot = T::from_le(bytes).ok_or_else(|| wrong_width(bytes.len(), T::WIDTH))?;
    }
    Ok(count)
}

/// Writes host numbers as little-endian wire bytes: the host bytes on a
/// little-endian host, one swapped element at a time on a big-endian one.
#[doc(hidden)]
pub fn write_le<T: Element, S: Sink>(values: &[T], w: &mut Writer<S>) -> Result<()> {
    if HOST_IS_LITTLE_ENDIAN {
        w.put(bytemuck::cast_slice(values))
    } else {
        write_per_element(values, w)
    }
}

/// The portable writer: encodes each element to little-endian bytes.
#[doc(hidden)]
pub fn write_per_element<T: Element, S: Sink>(values: &[T], w: &mut Writer<S>) -> Result<()> {
    let mut scratch = [0u8; 8];
    for &value in values {
        let bytes = scratch
            .get_mut(..T::WIDTH)
            .ok_or_else(|| wrong_width(T::WIDTH, T::WIDTH))?;
        value
            .to_le(bytes)
            .ok_or_else(|| wrong_width(T::WIDTH, T::WIDTH))?;
        w.put(bytes)?;
    }
    Ok(())
}

/// Element `index` of a little-endian payload, on any host.
pub fn get<T: Element>(payload: &[u8], index: usize) -> Option<T> {
    let start = index.checked_mul(T::WIDTH)?;
    let end = start.checked_add(T::WIDTH)?;
    T::from_le(payload.get(start..end)?)
}

fn element_count<T: Element>(payload: &[u8]) -> Result<usize> {
    if !payload.len().is_multiple_of(T::WIDTH) {
        return Err(wrong_width(payload.len(), T::WIDTH));
    }
    Ok(payload.len() / T::WIDTH)
}

fn out_prefix<T>(out: &mut [T], count: usize) -> Result<&mut [T]> {
    let available = out.len();
    out.get_mut(..count).ok_or(
        Error::refused(
            Refusal::BufferTooSmall,
            "output slice shorter than the element count",
        )
        .with_detail(slice_bytes::<T>(count, available)),
    )
}

/// The numbers of a typed output slice that is too short: `needed` and
/// `available` elements of `T`, counted in bytes like every other buffer
/// refusal.
pub(crate) fn slice_bytes<T>(needed: usize, available: usize) -> Detail {
    let width = core::mem::size_of::<T>() as u64;
    Detail::Bytes {
        needed: (needed as u64).saturating_mul(width),
        available: (available as u64).saturating_mul(width),
    }
}

/// A payload of `length` bytes is not a whole number of `width`-byte
/// elements.
fn wrong_width(length: usize, width: usize) -> Error {
    Error::refused(
        Refusal::WrongElementType,
        "payload length is not a multiple of the element width",
    )
    .with_detail(Detail::Width {
        length: length as u64,
        width: width as u64,
    })
}

/// Writes `bytes` that hold host-order elements of `width` bytes each as
/// little-endian wire bytes: unchanged on a little-endian host, each
/// element's bytes reversed on a big-endian one. Width 1 is never swapped.
#[doc(hidden)]
pub fn write_host_elements<S: Sink>(bytes: &[u8], width: usize, w: &mut Writer<S>) -> Result<()> {
    if HOST_IS_LITTLE_ENDIAN || width <= 1 {
        return w.put(bytes);
    }
    write_reversed_elements(bytes, width, w)
}

/// Reverses the bytes of each `width`-byte element: the swap from one
/// byte order to the other. Public (hidden) so that the tests of both
/// hosts run it.
#[doc(hidden)]
pub fn write_reversed_elements<S: Sink>(
    bytes: &[u8],
    width: usize,
    w: &mut Writer<S>,
) -> Result<()> {
    let mut scratch = [0u8; 8];
    for element in bytes.chunks(width.max(1)) {
        let out = scratch
            .get_mut(..element.len())
            .ok_or_else(|| wrong_width(bytes.len(), width))?;
        for (dst, src) in out.iter_mut().zip(element.iter().rev()) {
            *dst = *src;
        }
        w.put(out)?;
    }
    Ok(())
}
