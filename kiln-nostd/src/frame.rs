//! The frame: 16 bytes that name the profile and carry the schema hash,
//! then one Frozen value. The hash is compared before the first field is
//! read, so a reader never interprets bytes written for another type.

use crate::error::{Code, Error, Result};
use crate::frozen::{Decode, Encode};
use crate::limits::Limits;
use crate::schema::TypeText;
use crate::wire::{Reader, Sink, SliceSink, Writer};

/// ASCII `KLN0`.
pub const FRAME_MAGIC: [u8; 4] = *b"KLN0";
/// Frame length.
pub const FRAME_LEN: usize = 16;
/// The Frozen profile, the only one a frame may name.
pub const PROFILE_FROZEN: u8 = 0;

/// Checks a frame header against `expected_hash`, in the frame's check
/// order, and returns the value's bytes (everything after the 16 bytes).
pub fn open(buf: &[u8], expected_hash: u64) -> Result<&[u8]> {
    if buf.len() < FRAME_MAGIC.len() {
        return Err(Error::wire(
            Code::Eof,
            "fewer than 4 bytes for the frame magic",
            0,
        ));
    }
    if buf.get(..4) != Some(&FRAME_MAGIC[..]) {
        return Err(Error::wire(Code::Frame, "frame magic is not KLN0", 0));
    }
    let header: [u8; FRAME_LEN] =
        buf.get(..FRAME_LEN)
            .and_then(|h| h.try_into().ok())
            .ok_or(Error::wire(
                Code::Eof,
                "fewer than 16 bytes for the frame",
                4,
            ))?;
    let [_, _, _, _, profile, flags, r0, r1, hash @ ..] = header;
    if profile != PROFILE_FROZEN {
        return Err(Error::wire(
            Code::Frame,
            "frame profile is not 0 (Frozen)",
            4,
        ));
    }
    if flags != 0 {
        return Err(Error::wire(Code::Frame, "nonzero frame flags", 5));
    }
    if r0 != 0 || r1 != 0 {
        return Err(Error::wire(Code::Frame, "nonzero reserved frame bytes", 6));
    }
    if u64::from_le_bytes(hash) != expected_hash {
        return Err(Error::wire(
            Code::Schema,
            "frame schema hash is not the destination type's",
            8,
        ));
    }
    Ok(buf.get(FRAME_LEN..).unwrap_or(&[]))
}

/// Writes a frame header for a value whose schema hash is `hash`.
pub fn write_header<S: Sink>(w: &mut Writer<S>, hash: u64) -> Result<()> {
    w.put(&FRAME_MAGIC)?;
    w.put(&[PROFILE_FROZEN, 0, 0, 0])?;
    w.u64(hash)
}

/// Decodes a framed value of type `T`: frame checks, the value, then
/// TRAILING for anything after it.
pub fn from_frame<'de, T: Decode<'de>>(buf: &'de [u8], limits: Limits) -> Result<T> {
    let body = open(buf, T::HASH)?;
    let mut r = Reader::new(body, limits);
    let value = T::decode(&mut r).map_err(|e| e.shifted(FRAME_LEN))?;
    r.finish().map_err(|e| e.shifted(FRAME_LEN))?;
    Ok(value)
}

/// Encodes `value` in a frame into the start of `buf`.
pub fn to_frame_slice<'a, T: Encode + ?Sized>(
    value: &T,
    buf: &'a mut [u8],
) -> Result<&'a mut [u8]> {
    let mut w = Writer::new(SliceSink::new(buf));
    write_header(&mut w, T::HASH)?;
    value.encode(&mut w)?;
    Ok(w.into_sink().into_written())
}

/// The schema hash of run-time type text, for framing values checked by
/// [`crate::check()`].
pub fn hash_of_text(text: &str) -> Result<u64> {
    TypeText::parse(text)?.hash()
}
