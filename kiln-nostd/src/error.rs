//! One error type for every failure: a wire fault carries one of the eight
//! codes of the format; an API refusal is kept apart so it can never be
//! mistaken for a verdict on the bytes.
//!
//! The error is `Copy`, allocates nothing and stays small (48 bytes on a
//! 64-bit host): the fault is a static sentence, plus where it was found
//! (byte offset, tensor index) and, where the reader knows them, the
//! numbers that explain it ([`Detail`]). The feature `no-error-text` drops
//! the sentences and the numbers (codes, offsets and tensors stay; 12 bytes
//! on a 32-bit microcontroller), for firmware short of flash (the
//! benchmark table's footprint rows give the saving).

use core::fmt;

/// The eight wire error codes. Every Kiln reader reports the same code for
/// the same bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Code {
    /// Magic, version, flags, or a reserved byte.
    Frame,
    /// A cap, or a size product that overflows 64 bits.
    Limit,
    /// A checked length does not fit in the bytes that remain.
    Eof,
    /// Dtype, shape, range, name, quantization, canonical layout, a bool or
    /// opt tag byte, or dict key order.
    Type,
    /// A string, name or layout name that is not UTF-8.
    Utf8,
    /// A standalone value does not use the whole buffer.
    Trailing,
    /// The frame's schema hash is not the destination type's.
    Schema,
    /// A value nested inside more than 64 containers.
    Depth,
}

impl Code {
    /// Every code, in the order the format lists them.
    #[doc(hidden)]
    pub const ALL: [Code; 8] = [
        Code::Frame,
        Code::Limit,
        Code::Eof,
        Code::Type,
        Code::Utf8,
        Code::Trailing,
        Code::Schema,
        Code::Depth,
    ];

    /// The spelling a command line prints and JavaScript sees, e.g. `"EOF"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::Frame => "FRAME",
            Code::Limit => "LIMIT",
            Code::Eof => "EOF",
            Code::Type => "TYPE",
            Code::Utf8 => "UTF8",
            Code::Trailing => "TRAILING",
            Code::Schema => "SCHEMA",
            Code::Depth => "DEPTH",
        }
    }

    /// Parses the spelling of [`Code::as_str`].
    #[doc(hidden)]
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|code| code.as_str() == name)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal by the API. The bytes may be fine; the request cannot be met.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Refusal {
    /// A zero-copy typed slice of a multi-byte payload was asked for on a
    /// big-endian host. Copy it instead; the copy swaps bytes.
    BigEndianHost,
    /// A zero-copy typed slice was asked for, but the payload's address is
    /// not aligned for the element type. Copy it instead.
    Misaligned,
    /// The typed slice's element width does not divide the payload, or the
    /// element type does not match the tensor's dtype.
    WrongElementType,
    /// The caller's output buffer is too small. `encoded_len` or the
    /// element count says how much is needed.
    BufferTooSmall,
    /// A fixed-capacity container (`heapless::Vec<T, N>`, `heapless::String<N>`,
    /// `heapless::LinearMap<K, V, N>`, a name index) is smaller than a count
    /// or length the format allows here. The bytes may be valid; give the
    /// decoder larger storage.
    Capacity,
    /// The encoder cannot write this value canonically: it would write
    /// bytes its own decoder rejects (see `spec/kiln-v2.md`, "Encoders").
    NotEncodable,
    /// A dynamic value does not have the shape of the type it is encoded
    /// as (a string for a `u32`, 300 for a `u8`, a missing struct field).
    WrongValue,
    /// Type text that is not canonical Kiln type text.
    BadTypeText,
    /// A limit outside the range the format allows.
    BadLimits,
    /// The `std::io::Write` behind an `IoSink` failed (the sink keeps the
    /// I/O error).
    Io,
}

impl Refusal {
    /// A short name for the refusal, as JavaScript sees it in an error's
    /// `code` property (e.g. `"Misaligned"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Refusal::BigEndianHost => "BigEndianHost",
            Refusal::Misaligned => "Misaligned",
            Refusal::WrongElementType => "WrongElementType",
            Refusal::BufferTooSmall => "BufferTooSmall",
            Refusal::Capacity => "Capacity",
            Refusal::NotEncodable => "NotEncodable",
            Refusal::WrongValue => "WrongValue",
            Refusal::BadTypeText => "BadTypeText",
            Refusal::BadLimits => "BadLimits",
            Refusal::Io => "Io",
        }
    }
}

/// What went wrong: a wire fault with its code, or an API refusal.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Kind {
    /// The bytes break a rule of the format.
    Wire(Code),
    /// The API cannot do what was asked.
    Refused(Refusal),
}

/// Numbers that explain an error, where the reader knows them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Detail {
    /// Nothing more to say.
    None,
    /// A region needed more bytes than were there.
    Bytes {
        /// Bytes the claim needs.
        needed: u64,
        /// Bytes that remain.
        available: u64,
    },
    /// A count or length above a cap ([`crate::Limits`]) or above a
    /// storage capacity ([`Refusal::Capacity`]).
    Cap {
        /// What the bytes claim.
        claimed: u64,
        /// The largest allowed.
        cap: u64,
    },
    /// A frame's schema hash is not the destination type's.
    Hashes {
        /// The destination type's hash.
        expected: u64,
        /// The hash in the frame.
        found: u64,
    },
    /// A frame's schema hash names no type the reader knows (and no type
    /// was given).
    UnknownHash {
        /// The hash in the frame.
        found: u64,
    },
    /// A typed read asked for elements of another dtype than the tensor's
    /// ([`Refusal::WrongElementType`]). Both are wire codes
    /// ([`crate::DtypeCode::from_code`] names them); `requested` is 0 when
    /// the read takes a set of dtypes rather than one (`copy_into_f32`,
    /// `widen_into`).
    Dtypes {
        /// The tensor's dtype code.
        tensor: u16,
        /// The dtype code of the element type asked for.
        requested: u16,
    },
    /// A payload whose length is not a whole number of elements of the
    /// type asked for ([`Refusal::WrongElementType`]).
    Width {
        /// The payload's length in bytes.
        length: u64,
        /// The element type's width in bytes.
        width: u64,
    },
}

/// Set when bytes given to an unframed decode begin with the frame magic.
const HINT_FRAMED: u8 = 1;

/// Where the fault was found: a `u64` with the sentences, the host's
/// `usize` without them (32 bits on a microcontroller, so the error stays
/// three words there).
#[cfg(not(feature = "no-error-text"))]
type Offset = u64;
#[cfg(feature = "no-error-text")]
type Offset = usize;

/// An error from any Kiln operation. `Copy`, no allocation.
///
/// With the sentences it keeps the fault, the offset, the tensor, the kind
/// and the numbers of its [`Detail`] (48 bytes on a 64-bit host). With the
/// feature `no-error-text` it keeps only the kind, the offset and the tensor
/// (12 bytes on a 32-bit microcontroller): [`Error::fault`] is empty and
/// [`Error::detail`] is [`Detail::None`], so building one at each of a
/// decoder's many exits takes a few instructions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Error {
    #[cfg(not(feature = "no-error-text"))]
    fault: &'static str,
    offset: Offset,
    /// [`Detail`], stored flat so the error stays at 48 bytes.
    #[cfg(not(feature = "no-error-text"))]
    numbers: [u64; 2],
    tensor: u32,
    kind: Kind,
    #[cfg(not(feature = "no-error-text"))]
    detail: u8,
    hint: u8,
}

#[cfg(not(feature = "no-error-text"))]
const DETAIL_NONE: u8 = 0;
#[cfg(not(feature = "no-error-text"))]
const DETAIL_BYTES: u8 = 1;
#[cfg(not(feature = "no-error-text"))]
const DETAIL_CAP: u8 = 2;
#[cfg(not(feature = "no-error-text"))]
const DETAIL_HASHES: u8 = 3;
#[cfg(not(feature = "no-error-text"))]
const DETAIL_DTYPES: u8 = 4;
#[cfg(not(feature = "no-error-text"))]
const DETAIL_WIDTH: u8 = 5;
#[cfg(not(feature = "no-error-text"))]
const DETAIL_UNKNOWN_HASH: u8 = 6;

/// Field value for "not known".
const NONE_OFFSET: Offset = Offset::MAX;
const NONE_U32: u32 = u32::MAX;

impl Error {
    /// Every constructor ends here; the sentence is dropped with the
    /// feature `no-error-text`.
    #[cfg_attr(feature = "no-error-text", inline(always))] // the sentence must vanish with the feature, even where the caller is not inlined
    const fn new(kind: Kind, fault: &'static str, offset: Offset) -> Error {
        #[cfg(feature = "no-error-text")]
        let _ = fault;
        Error {
            #[cfg(not(feature = "no-error-text"))]
            fault,
            offset,
            #[cfg(not(feature = "no-error-text"))]
            numbers: [0; 2],
            tensor: NONE_U32,
            kind,
            #[cfg(not(feature = "no-error-text"))]
            detail: DETAIL_NONE,
            hint: 0,
        }
    }

    /// A wire fault `code` found at byte `offset` of the buffer being read.
    #[cfg_attr(feature = "no-error-text", inline(always))] // see Error::new
    #[allow(clippy::unnecessary_cast)] // the offset's type depends on no-error-text
    #[doc(hidden)]
    pub const fn wire(code: Code, fault: &'static str, offset: usize) -> Error {
        Error::new(Kind::Wire(code), fault, offset as Offset)
    }

    /// An API refusal.
    #[cfg_attr(feature = "no-error-text", inline(always))] // see Error::new
    pub const fn refused(refusal: Refusal, fault: &'static str) -> Error {
        Error::new(Kind::Refused(refusal), fault, NONE_OFFSET)
    }

    /// The same error, naming the tensor (descriptor index) it concerns.
    #[doc(hidden)]
    pub const fn in_tensor(mut self, index: u32) -> Error {
        self.tensor = index;
        self
    }

    /// The same error with the numbers that explain it (dropped with the
    /// feature `no-error-text`).
    #[cfg_attr(feature = "no-error-text", inline(always))] // with no-error-text the numbers must not even be computed
    #[cfg_attr(feature = "no-error-text", allow(unused_mut))] // nothing to store
    #[doc(hidden)]
    pub const fn with_detail(mut self, detail: Detail) -> Error {
        #[cfg(feature = "no-error-text")]
        let _ = detail;
        #[cfg(not(feature = "no-error-text"))]
        {
            (self.detail, self.numbers) = match detail {
                Detail::None => (DETAIL_NONE, [0; 2]),
                Detail::Bytes { needed, available } => (DETAIL_BYTES, [needed, available]),
                Detail::Cap { claimed, cap } => (DETAIL_CAP, [claimed, cap]),
                Detail::Hashes { expected, found } => (DETAIL_HASHES, [expected, found]),
                Detail::UnknownHash { found } => (DETAIL_UNKNOWN_HASH, [found, 0]),
                Detail::Dtypes { tensor, requested } => {
                    (DETAIL_DTYPES, [tensor as u64, requested as u64])
                }
                Detail::Width { length, width } => (DETAIL_WIDTH, [length, width]),
            };
        }
        self
    }

    /// The same error at byte `offset` (for a refusal about a place in the
    /// buffer, such as a misaligned payload).
    #[allow(clippy::unnecessary_cast)] // the offset's type depends on no-error-text
    #[doc(hidden)]
    pub const fn at(mut self, offset: usize) -> Error {
        self.offset = offset as Offset;
        self
    }

    /// The same error with its offset moved by `base`, for a fault found in
    /// a sub-slice that starts `base` bytes into the caller's buffer.
    #[allow(clippy::unnecessary_cast)] // the offset's type depends on no-error-text
    #[doc(hidden)]
    pub const fn shifted(mut self, base: usize) -> Error {
        if self.offset != NONE_OFFSET {
            self.offset = self.offset.saturating_add(base as Offset);
        }
        self
    }

    /// [`Error::shifted`] by a `u64`: a position in a stream or a file read
    /// by ranges, which may lie past a 32-bit `usize`. Saturates where the
    /// offset is stored narrower.
    #[allow(clippy::unnecessary_cast)] // the offset's type depends on no-error-text
    pub(crate) const fn shifted_u64(mut self, base: u64) -> Error {
        if self.offset != NONE_OFFSET {
            let widest = (NONE_OFFSET - 1) as u64;
            let base = if base > widest { widest } else { base } as Offset;
            let moved = self.offset.saturating_add(base);
            self.offset = if moved == NONE_OFFSET {
                NONE_OFFSET - 1
            } else {
                moved
            };
        }
        self
    }

    /// Marks an error from an unframed decode whose bytes start with the
    /// frame magic `KLN0`: the likely mistake is a missing `from_frame`.
    pub(crate) const fn hint_framed(mut self) -> Error {
        self.hint |= HINT_FRAMED;
        self
    }

    /// The wire code, or `None` for an API refusal.
    pub const fn code(&self) -> Option<Code> {
        match self.kind {
            Kind::Wire(code) => Some(code),
            Kind::Refused(_) => None,
        }
    }

    /// The refusal, or `None` for a wire fault.
    pub const fn refusal(&self) -> Option<Refusal> {
        match self.kind {
            Kind::Wire(_) => None,
            Kind::Refused(refusal) => Some(refusal),
        }
    }

    /// Wire fault or refusal.
    pub const fn kind(&self) -> Kind {
        self.kind
    }

    /// The short name of the kind: a wire code (`"EOF"`) or a refusal
    /// (`"Misaligned"`). JavaScript sees it as an error's `code`.
    #[doc(hidden)]
    pub const fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Wire(code) => code.as_str(),
            Kind::Refused(refusal) => refusal.as_str(),
        }
    }

    /// What rule was broken, in words (empty with the feature
    /// `no-error-text`).
    pub const fn fault(&self) -> &'static str {
        #[cfg(feature = "no-error-text")]
        return "";
        #[cfg(not(feature = "no-error-text"))]
        self.fault
    }

    /// Byte offset in the buffer being read where the fault was found.
    #[allow(clippy::unnecessary_cast)] // the offset's type depends on no-error-text
    pub const fn offset(&self) -> Option<u64> {
        if self.offset == NONE_OFFSET {
            None
        } else {
            Some(self.offset as u64)
        }
    }

    /// Index of the tensor descriptor concerned, when there is one.
    pub const fn tensor(&self) -> Option<u32> {
        if self.tensor == NONE_U32 {
            None
        } else {
            Some(self.tensor)
        }
    }

    /// The numbers that explain the error, where known ([`Detail::None`]
    /// with the feature `no-error-text`).
    pub const fn detail(&self) -> Detail {
        #[cfg(feature = "no-error-text")]
        return Detail::None;
        #[cfg(not(feature = "no-error-text"))]
        let [a, b] = self.numbers;
        #[cfg(not(feature = "no-error-text"))]
        match self.detail {
            DETAIL_BYTES => Detail::Bytes {
                needed: a,
                available: b,
            },
            DETAIL_CAP => Detail::Cap { claimed: a, cap: b },
            DETAIL_HASHES => Detail::Hashes {
                expected: a,
                found: b,
            },
            DETAIL_UNKNOWN_HASH => Detail::UnknownHash { found: a },
            // Stored from two u16 codes, so the casts are exact.
            DETAIL_DTYPES => Detail::Dtypes {
                tensor: a as u16,
                requested: b as u16,
            },
            DETAIL_WIDTH => Detail::Width {
                length: a,
                width: b,
            },
            _ => Detail::None,
        }
    }

    /// Whether the bytes of a failed unframed decode start with the frame
    /// magic (so `from_frame` was probably meant).
    #[doc(hidden)]
    pub const fn looks_framed(&self) -> bool {
        self.hint & HINT_FRAMED != 0
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Wire(code) => write!(f, "{code}")?,
            Kind::Refused(refusal) => write!(f, "refused ({})", refusal.as_str())?,
        }
        // Empty with the feature no-error-text.
        if !self.fault().is_empty() {
            write!(f, ": {}", self.fault())?;
        }
        match self.detail() {
            Detail::None => {}
            // A wire fault counts the bytes left in the input; a refusal
            // counts the room in the caller's buffer.
            Detail::Bytes { needed, available } => match self.kind {
                Kind::Wire(_) => write!(f, " (needs {needed} bytes, {available} remain)")?,
                Kind::Refused(_) => {
                    write!(f, " (needs {needed} bytes, the buffer has {available})")?
                }
            },
            Detail::Cap { claimed, cap } => write!(f, " ({claimed}, at most {cap})")?,
            Detail::Hashes { expected, found } => {
                write!(f, " (expected {expected:#018x}, found {found:#018x})")?
            }
            Detail::UnknownHash { found } => write!(f, " (found {found:#018x})")?,
            Detail::Dtypes { tensor, requested } => {
                f.write_str(" (the tensor is ")?;
                write_dtype(f, tensor)?;
                if requested != 0 {
                    f.write_str(", asked for ")?;
                    write_dtype(f, requested)?;
                }
                f.write_str(")")?
            }
            Detail::Width { length, width } => {
                write!(f, " ({length} bytes, the element width is {width})")?
            }
        }
        if let Some(index) = self.tensor() {
            write!(f, " in tensor {index}")?;
        }
        if let Some(offset) = self.offset() {
            write!(f, " at byte {offset}")?;
        }
        if self.looks_framed() {
            f.write_str(
                "; the bytes start with the frame magic KLN0: read them as framed (from_frame, Options::FRAMED, kiln --framed)",
            )?;
        }
        Ok(())
    }
}

/// A dtype code by its name (`f32`), an opaque or unknown one by number.
fn write_dtype(f: &mut fmt::Formatter<'_>, code: u16) -> fmt::Result {
    match crate::dtype::Dtype::from_code(code) {
        Some(dtype) => f.write_str(dtype.name()),
        None => write!(f, "dtype {code}"),
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for Error {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "{}: {=str}", self.kind, self.fault());
        if let Some(index) = self.tensor() {
            defmt::write!(f, " in tensor {}", index);
        }
        if let Some(offset) = self.offset() {
            defmt::write!(f, " at byte {}", offset);
        }
    }
}

impl core::error::Error for Error {}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_stays_small() {
        assert!(core::mem::size_of::<Error>() <= 48);
        // Without the sentences: the offset, the tensor, the kind and the
        // hint, three words on a 32-bit microcontroller.
        if cfg!(feature = "no-error-text") {
            assert!(
                core::mem::size_of::<Error>()
                    <= core::mem::size_of::<usize>() + 4 + core::mem::size_of::<Kind>() + 1 + 1
            );
        }
    }
}
