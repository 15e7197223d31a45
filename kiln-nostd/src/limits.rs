//! Caps on claimed sizes. A cap bounds what a hostile count can make the
//! reader do before the bytes prove the count real.

use crate::error::{Error, Refusal, Result};

/// The largest cap the wire allows: a u32 count or length.
pub const WIRE_MAX: u32 = u32::MAX;

/// The default for both caps, 16,777,216 (the reference cap of the golden
/// cases).
#[doc(hidden)]
pub const DEFAULT_CAP: u32 = 16_777_216;

/// Caps applied while reading (and refused while writing).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Limits {
    /// Largest element count of a list, dict, or tensor directory.
    /// Stops a claimed count from reserving storage or looping for
    /// elements of zero minimum size (`list<struct{}>`), where the
    /// remaining-bytes check cannot help.
    pub count_cap: u32,
    /// Largest byte run: a `str`, a `list<u8>`, a directory's name heap,
    /// and an owned copy of a tensor payload. Stops one value from
    /// claiming an unbounded copy.
    pub byte_cap: u32,
}

impl Limits {
    /// Both caps at 16,777,216, the reference cap of the golden cases.
    pub const DEFAULT: Limits = Limits {
        count_cap: DEFAULT_CAP,
        byte_cap: DEFAULT_CAP,
    };

    /// One cap for counts and byte runs alike, as the golden cases' `cap`
    /// field and `kiln check --cap` set it.
    pub const fn uniform(cap: u32) -> Limits {
        Limits {
            count_cap: cap,
            byte_cap: cap,
        }
    }

    /// A cap given as a u64 (from a command line or JavaScript number),
    /// refused when above the wire maximum.
    #[doc(hidden)]
    pub fn uniform_checked(cap: u64) -> Result<Limits> {
        u32::try_from(cap)
            .map(Limits::uniform)
            .map_err(|_| Error::refused(Refusal::BadLimits, "cap above 4,294,967,295"))
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Whether a buffer starts with the 16-byte frame.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Framing {
    /// The buffer is the value's bytes and nothing else.
    #[default]
    Bare,
    /// The buffer is a 16-byte frame (magic, profile, schema hash), then
    /// the value.
    Framed,
}

/// How to read a buffer against run-time type text: framed or bare, and
/// under which caps. Used by [`crate::check()`], the walker and the
/// dynamic values.
///
/// ```
/// use kiln_nostd::{Limits, Options};
/// let plain = Options::BARE;
/// let framed = Options::FRAMED.with_limits(Limits::uniform(1024));
/// assert!(!plain.is_framed() && framed.is_framed());
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Options {
    /// Framed or bare.
    pub framing: Framing,
    /// Caps on counts and byte runs.
    pub limits: Limits,
}

impl Options {
    /// A bare value under the default caps.
    pub const BARE: Options = Options {
        framing: Framing::Bare,
        limits: Limits::DEFAULT,
    };
    /// A framed value under the default caps.
    pub const FRAMED: Options = Options {
        framing: Framing::Framed,
        limits: Limits::DEFAULT,
    };

    /// The same options under other caps.
    pub const fn with_limits(self, limits: Limits) -> Options {
        Options {
            framing: self.framing,
            limits,
        }
    }

    /// Whether the buffer starts with a frame.
    #[doc(hidden)]
    pub const fn is_framed(&self) -> bool {
        matches!(self.framing, Framing::Framed)
    }
}
