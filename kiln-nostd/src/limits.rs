//! Caps on claimed sizes. A cap bounds what a hostile count can make the
//! reader do before the bytes prove the count real.

use crate::error::{Error, Refusal, Result};

/// The largest cap the wire allows: a u32 count or length.
pub const WIRE_MAX: u32 = u32::MAX;

/// The default for both caps, 16,777,216 (the reference cap of the golden
/// cases).
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
    /// Both caps at [`DEFAULT_CAP`].
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
