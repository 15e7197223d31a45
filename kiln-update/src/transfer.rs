//! The transfer, without flash: envelope frames in, chunks in order, each
//! checked by the streaming checker as it passes. The updaters put what it
//! accepts into flash.

use core::fmt;

use embedded_storage::nor_flash::NorFlashErrorKind;
use kiln_nostd::envelope::{Chunk, EnvelopeError, Reassembly};
use kiln_nostd::stream::{Checker, Need};
use kiln_nostd::{CompiledType, Options};

/// Why an update was refused. After any of them the model that was current
/// stays current: nothing of the new one is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Refused {
    /// The announced model is larger than a slot.
    TooLarge {
        /// Bytes announced.
        announced: u32,
        /// Bytes in a slot.
        slot: u32,
    },
    /// A chunk the envelope passed that the transfer cannot take: out of
    /// order (a chunk lost in a refused frame, or repeated), another
    /// transfer's, or the whole model's CRC-32C not the announced one.
    Chunk {
        /// Why, in the envelope's terms.
        error: EnvelopeError,
        /// The offset the next chunk should have had.
        expected: u32,
        /// The last frame the envelope refused before it, if any.
        dropped: Option<EnvelopeError>,
    },
    /// The link went quiet before the model was complete.
    Short {
        /// Bytes announced (none: no first chunk arrived).
        announced: Option<u32>,
        /// Bytes received.
        received: u32,
        /// The last frame the envelope refused, if any.
        dropped: Option<EnvelopeError>,
    },
    /// The model is not a valid value of its type: the streaming check's
    /// fault, with its wire code and offset.
    Invalid(kiln_nostd::Error),
    /// The slot does not hold what was sent: its CRC-32C read back.
    Stored {
        /// The CRC-32C the sender announced.
        sent: u32,
        /// The CRC-32C of the slot.
        read: u32,
    },
    /// The state record did not read back as written.
    Record,
    /// The flash refused an operation (or power is failing).
    Flash(NorFlashErrorKind),
    /// The update already ended (installed or refused): a new transfer
    /// needs a new updater.
    Ended,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dropped = |f: &mut fmt::Formatter<'_>, dropped: &Option<EnvelopeError>| match dropped {
            Some(e) => write!(f, " (the last frame refused: {})", e.name()),
            None => Ok(()),
        };
        match self {
            Refused::TooLarge { announced, slot } => {
                write!(
                    f,
                    "TooLarge: {announced} bytes announced for a {slot}-byte slot"
                )
            }
            Refused::Chunk {
                error,
                expected,
                dropped: d,
            } => {
                write!(f, "{}: chunk at {expected} expected", error.name())?;
                dropped(f, d)
            }
            Refused::Short {
                announced,
                received,
                dropped: d,
            } => {
                match announced {
                    Some(total) => write!(
                        f,
                        "Short: the link went quiet at {received} of {total} bytes"
                    )?,
                    None => write!(f, "Short: the link went quiet before the first chunk")?,
                }
                dropped(f, d)
            }
            Refused::Invalid(e) => write!(f, "{e}"),
            Refused::Stored { sent, read } => {
                write!(f, "Stored: slot CRC-32C {read:#010x}, sent {sent:#010x}")
            }
            Refused::Record => f.write_str("Record: the state record did not read back"),
            Refused::Flash(kind) => write!(f, "Flash: {kind}"),
            Refused::Ended => f.write_str("Ended: this update already ended"),
        }
    }
}

impl core::error::Error for Refused {}

/// What a transfer saw of the link, for its report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LinkCounts {
    /// Chunks taken.
    pub chunks: u32,
    /// Frames the envelope refused (garbage, changed frames).
    pub dropped: u32,
    /// The smallest checker scratch this model needed, once checked.
    pub scratch_needed: usize,
}

/// A chunk taken: its bytes are the next of the model.
pub(crate) struct Taken<'m> {
    /// The chunk's bytes.
    pub bytes: &'m [u8],
    /// Whether it was the last; then the model's length and CRC-32C.
    pub complete: Option<(u32, u32)>,
}

/// The chunks in order and their streaming check.
pub(crate) struct Transfer<'a, const N: usize, const D: usize> {
    reassembly: Reassembly,
    ty: &'a CompiledType<'static, N>,
    options: Options,
    slot_size: u32,
    /// The checker's scratch until the first chunk says the model's length.
    scratch: Option<&'a mut [u8]>,
    checker: Option<Checker<'a, 'static, 'a, N, D>>,
    pub dropped: Option<EnvelopeError>,
    pub counts: LinkCounts,
}

impl<'a, const N: usize, const D: usize> Transfer<'a, N, D> {
    pub fn new(
        ty: &'a CompiledType<'static, N>,
        options: Options,
        scratch: &'a mut [u8],
        slot_size: u32,
    ) -> Self {
        Transfer {
            reassembly: Reassembly::new(),
            ty,
            options,
            slot_size,
            scratch: Some(scratch),
            checker: None,
            dropped: None,
            counts: LinkCounts::default(),
        }
    }

    /// A frame the envelope refused: passed over, remembered.
    pub fn dropped(&mut self, error: EnvelopeError) {
        self.dropped = Some(error);
        self.counts.dropped += 1;
    }

    fn refused(&self, error: EnvelopeError) -> Refused {
        Refused::Chunk {
            error,
            expected: self.reassembly.received(),
            dropped: self.dropped,
        }
    }

    /// One frame's message: a chunk, in order, checked.
    pub fn take<'m>(&mut self, message: &'m [u8]) -> Result<Taken<'m>, Refused> {
        let chunk = Chunk::parse(message).map_err(|error| self.refused(error))?;
        if self.reassembly.total().is_none() && chunk.offset == 0 {
            if chunk.total > self.slot_size {
                return Err(Refused::TooLarge {
                    announced: chunk.total,
                    slot: self.slot_size,
                });
            }
            if let Some(scratch) = self.scratch.take() {
                start_checker(
                    &mut self.checker,
                    self.ty,
                    self.options,
                    scratch,
                    chunk.total,
                );
            }
        }
        let complete = self
            .reassembly
            .accept(&chunk)
            .map_err(|error| self.refused(error))?;
        self.counts.chunks += 1;
        let Some(checker) = self.checker.as_mut() else {
            return Err(self.refused(EnvelopeError::OutOfOrder));
        };
        checker.feed(chunk.bytes).map_err(Refused::Invalid)?;
        if !complete {
            return Ok(Taken {
                bytes: chunk.bytes,
                complete: None,
            });
        }
        // The length was given: all of it passed, so the check is done, or
        // its end says the fault.
        if checker.need().map_err(Refused::Invalid)? != Need::Done {
            checker.end().map_err(Refused::Invalid)?;
        }
        self.counts.scratch_needed = checker.report().scratch_needed;
        Ok(Taken {
            bytes: chunk.bytes,
            complete: Some((chunk.total, chunk.digest)),
        })
    }

    /// The refusal of a link that went quiet now.
    pub fn short(&self) -> Refused {
        Refused::Short {
            announced: self.reassembly.total(),
            received: self.reassembly.received(),
            dropped: self.dropped,
        }
    }
}

/// Puts the checker of a `total`-byte model in `slot`. Not inlined: the
/// checker is built in this call's frame and moved, and that frame must
/// not stay on the stack under the check of every chunk (with the
/// format's 64 open containers the checker is 3.4 KB on the Cortex-M0).
#[inline(never)]
fn start_checker<'a, const N: usize, const D: usize>(
    slot: &mut Option<Checker<'a, 'static, 'a, N, D>>,
    ty: &'a CompiledType<'static, N>,
    options: Options,
    scratch: &'a mut [u8],
    total: u32,
) {
    *slot = Some(Checker::with_depth::<D>(
        ty,
        options,
        scratch,
        Some(u64::from(total)),
    ));
}
