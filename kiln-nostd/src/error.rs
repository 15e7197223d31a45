//! One error type for every failure: a wire fault carries one of the eight
//! codes of the format; an API refusal is kept apart so it can never be
//! mistaken for a verdict on the bytes.

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
    /// The encoder cannot write this value canonically (DECISIONS 7).
    NotEncodable,
    /// Type text that is not canonical Kiln type text.
    BadTypeText,
    /// A limit outside the range the format allows.
    BadLimits,
}

impl Refusal {
    /// A short name for the refusal.
    pub const fn as_str(self) -> &'static str {
        match self {
            Refusal::BigEndianHost => "big-endian host",
            Refusal::Misaligned => "misaligned payload",
            Refusal::WrongElementType => "wrong element type",
            Refusal::BufferTooSmall => "buffer too small",
            Refusal::NotEncodable => "not encodable",
            Refusal::BadTypeText => "bad type text",
            Refusal::BadLimits => "bad limits",
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

/// An error from any Kiln operation. `Copy`, no allocation: the fault is a
/// static description, plus where it was found.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Error {
    kind: Kind,
    fault: &'static str,
    offset: Option<u64>,
    tensor: Option<u32>,
}

impl Error {
    /// A wire fault `code` found at byte `offset` of the buffer being read.
    pub const fn wire(code: Code, fault: &'static str, offset: usize) -> Error {
        Error {
            kind: Kind::Wire(code),
            fault,
            offset: Some(offset as u64),
            tensor: None,
        }
    }

    /// An API refusal.
    pub const fn refused(refusal: Refusal, fault: &'static str) -> Error {
        Error {
            kind: Kind::Refused(refusal),
            fault,
            offset: None,
            tensor: None,
        }
    }

    /// The same error, naming the tensor (descriptor index) it concerns.
    pub const fn in_tensor(mut self, index: u32) -> Error {
        self.tensor = Some(index);
        self
    }

    /// The same error with its offset moved by `base`, for a fault found in
    /// a sub-slice that starts `base` bytes into the caller's buffer.
    pub const fn shifted(mut self, base: usize) -> Error {
        if let Some(offset) = self.offset {
            self.offset = Some(offset.saturating_add(base as u64));
        }
        self
    }

    /// The wire code, or `None` for an API refusal.
    pub const fn code(&self) -> Option<Code> {
        match self.kind {
            Kind::Wire(code) => Some(code),
            Kind::Refused(_) => None,
        }
    }

    /// Wire fault or refusal.
    pub const fn kind(&self) -> Kind {
        self.kind
    }

    /// What rule was broken, in words.
    pub const fn fault(&self) -> &'static str {
        self.fault
    }

    /// Byte offset in the buffer being read where the fault was found.
    pub const fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// Index of the tensor descriptor concerned, when there is one.
    pub const fn tensor(&self) -> Option<u32> {
        self.tensor
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Wire(code) => write!(f, "{code}: {}", self.fault)?,
            Kind::Refused(refusal) => write!(f, "refused ({}): {}", refusal.as_str(), self.fault)?,
        }
        if let Some(index) = self.tensor {
            write!(f, " (tensor {index})")?;
        }
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset}")?;
        }
        Ok(())
    }
}

impl core::error::Error for Error {}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;
