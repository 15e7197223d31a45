//! The frame: 16 bytes that name the profile and carry the schema hash,
//! then one Frozen value. The hash is compared before the first field is
//! read, so a reader never interprets bytes written for another type.
//!
//! This module reads and writes the 16 bytes; the framed entry points
//! ([`crate::from_frame`], [`crate::to_frame_slice`] and their kin) sit at
//! the root beside their bare twins.

use crate::error::{Code, Detail, Error, Result};
use crate::limits::Options;
use crate::wire::{Sink, Writer};

/// ASCII `KLN0`.
pub const FRAME_MAGIC: [u8; 4] = *b"KLN0";
/// Frame length.
pub const FRAME_LEN: usize = 16;
/// The Frozen profile, the only one a frame may name.
#[doc(hidden)]
pub const PROFILE_FROZEN: u8 = 0;

/// What the first 16 bytes of a framed buffer say, read without checking
/// them against any type: [`peek`] gives it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[doc(hidden)]
pub struct FrameInfo {
    /// The schema hash the frame carries: the FNV-1a hash of the canonical
    /// type text of the value that follows.
    pub hash: u64,
    /// The profile byte (only [`PROFILE_FROZEN`] is valid).
    pub profile: u8,
    /// Whether the profile, flags and reserved bytes are what a valid
    /// frame has; [`open`] gives the wire code when they are not.
    pub well_formed: bool,
}

/// Whether `bytes` start with a frame, and with which schema hash: `Some`
/// when they begin with `KLN0` and hold the 16 frame bytes. This is the
/// one place a tool reads a frame's header without a type in hand (to
/// pick the type a known hash names); reading the value still goes
/// through [`open`], which checks every byte of the frame.
///
/// ```
/// use kiln_nostd::{frame, to_frame_slice, Frozen};
/// let mut buf = [0u8; 32];
/// let framed = to_frame_slice(&7u32, &mut buf).unwrap();
/// let info = frame::peek(framed).unwrap();
/// assert_eq!(info.hash, u32::HASH);
/// assert!(info.well_formed);
/// assert_eq!(frame::peek(&framed[..15]), None);
/// assert_eq!(frame::peek(b"KLNT"), None);
/// ```
#[doc(hidden)]
pub fn peek(bytes: &[u8]) -> Option<FrameInfo> {
    let header: &[u8; FRAME_LEN] = bytes.first_chunk()?;
    let [m0, m1, m2, m3, profile, flags, r0, r1, hash @ ..] = *header;
    if [m0, m1, m2, m3] != FRAME_MAGIC {
        return None;
    }
    Some(FrameInfo {
        hash: u64::from_le_bytes(hash),
        profile,
        well_formed: profile == PROFILE_FROZEN && flags == 0 && r0 == 0 && r1 == 0,
    })
}

/// Checks a frame header against `expected_hash`, in the frame's check
/// order, and returns the value's bytes (everything after the 16 bytes).
#[doc(hidden)]
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
    let header: [u8; FRAME_LEN] = buf.first_chunk::<FRAME_LEN>().copied().ok_or(Error::wire(
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
    let found = u64::from_le_bytes(hash);
    if found != expected_hash {
        return Err(Error::wire(
            Code::Schema,
            "frame schema hash is not the destination type's",
            8,
        )
        .with_detail(Detail::Hashes {
            expected: expected_hash,
            found,
        }));
    }
    Ok(buf.get(FRAME_LEN..).unwrap_or(&[]))
}

/// Marks an error from reading `buf` as a bare value when `buf` starts
/// with the frame magic: then the caller probably meant a framed read.
pub(crate) fn hint_if_framed(e: Error, buf: &[u8], options: Options) -> Error {
    if !options.is_framed() && buf.starts_with(&FRAME_MAGIC) {
        e.hint_framed()
    } else {
        e
    }
}

/// Writes a frame header for a value whose schema hash is `hash`.
#[doc(hidden)]
pub fn write_header<S: Sink>(w: &mut Writer<S>, hash: u64) -> Result<()> {
    w.put(&FRAME_MAGIC)?;
    w.put(&[PROFILE_FROZEN, 0, 0, 0])?;
    w.u64(hash)
}

/// The schema hash of run-time type text, for framing values checked by
/// [`crate::check()`]. The type is compiled on the stack under the default
/// cap, [`DEFAULT_NODES`](crate::DEFAULT_NODES) type nodes; a tool that
/// takes larger types compiles them itself into a larger
/// [`CompiledType`](crate::CompiledType) on the heap and asks it for its
/// hash.
pub fn hash_of_text(text: &str) -> Result<u64> {
    Ok(crate::schema::CompiledType::<{ crate::schema::DEFAULT_NODES }>::parse(text)?.hash())
}
