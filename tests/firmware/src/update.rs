//! A model update received over a byte link and written to flash as it
//! arrives, independent of the board: the board gives a [`Flash`] and
//! feeds every byte its link delivers to [`Receiver::on_link_bytes`].
//!
//! The transfer is the model (one Kiln message) in chunks of the link
//! envelope (`kiln_nostd::envelope`, docs/firmware.md): each frame is
//! COBS-framed with its own CRC-32C and carries one [`Chunk`] (its offset,
//! the model's length and CRC-32C, then its bytes). Per frame:
//!
//! 1. the envelope's [`Decoder`] collects the frame in a buffer the size of
//!    one chunk and compares its CRC; a frame it refuses (garbage on the
//!    line, a flipped bit) is passed over and remembered;
//! 2. the chunk must be the next one ([`Reassembly`]): a chunk lost in a
//!    refused frame shows as the next chunk out of order, which refuses the
//!    transfer; the last chunk brings the whole model's CRC-32C;
//! 3. its bytes go to the streaming checker ([`Checker`], the rules of
//!    `check` as the bytes pass: the bytes the rules read are held in its
//!    scratch, payload interiors are only counted), so a model that is not
//!    a valid value of its type is refused at the first bad byte;
//! 4. and to flash at their offset ([`FlashWriter`]), erased page by page
//!    as the data reaches it.
//!
//! Nothing is valid until [`Receiver::on_link_bytes`] returns the
//! [`Stored`] model; the caller then reads it back from flash, compares
//! its CRC-32C with the sent one, and only then writes its flag.

use core::fmt;

use kiln_nostd::envelope::{Chunk, Decoder, EnvelopeError, Reassembly};
use kiln_nostd::stream::{Checker, Need};
use kiln_nostd::{CompiledType, Options};

/// The word in the flag page's first word once a stored model was checked.
pub const VALID: u32 = 0x4B4C_4E56;

/// A NOR flash: erased pages read as 0xFF, a write can only clear bits.
pub trait Flash {
    /// Bytes in an erase page.
    const PAGE: usize;
    /// Erases the page that starts at `address`.
    fn erase_page(&mut self, address: usize);
    /// Writes one word at a word-aligned `address` in an erased page.
    fn write_word(&mut self, address: usize, word: u32);
}

/// Why a transfer was refused. Nothing is marked valid after any of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The announced model does not fit the model region.
    TooLarge {
        /// Bytes announced.
        announced: u32,
        /// Bytes in the region.
        region: usize,
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
        /// Bytes received and stored.
        stored: u32,
        /// The last frame the envelope refused, if any.
        dropped: Option<EnvelopeError>,
    },
    /// The model is not a valid value of its type: the streaming check's
    /// fault, with its wire code and offset.
    Invalid(kiln_nostd::Error),
    /// The flash does not hold what was sent: its CRC-32C read back.
    Stored {
        /// The CRC-32C the sender announced.
        sent: u32,
        /// The CRC-32C of the flash.
        read: u32,
    },
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dropped = |f: &mut fmt::Formatter<'_>, dropped: &Option<EnvelopeError>| match dropped {
            Some(e) => write!(f, " (the last frame refused: {})", e.name()),
            None => Ok(()),
        };
        match self {
            Refused::TooLarge { announced, region } => {
                write!(
                    f,
                    "TooLarge: {announced} bytes announced for a {region}-byte region"
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
                stored,
                dropped: d,
            } => {
                match announced {
                    Some(total) => {
                        write!(f, "Short: the link went quiet at {stored} of {total} bytes")?
                    }
                    None => write!(f, "Short: the link went quiet before the first chunk")?,
                }
                dropped(f, d)
            }
            Refused::Invalid(e) => write!(f, "{e}"),
            Refused::Stored { sent, read } => {
                write!(f, "Stored: flash CRC-32C {read:#010x}, sent {sent:#010x}")
            }
        }
    }
}

/// Writes a message into the flash region `[base, base + size)` in order,
/// in pieces of any length: erases each page when the data reaches it and
/// writes whole words, carrying a word's bytes across pieces.
pub struct FlashWriter<F: Flash> {
    flash: F,
    base: usize,
    size: usize,
    stored: usize,
    /// Bytes of the next word not yet written (a piece may end mid-word).
    pending: [u8; 4],
    pending_len: usize,
}

impl<F: Flash> FlashWriter<F> {
    /// A writer into the page-aligned region `[base, base + size)`.
    pub fn new(flash: F, base: usize, size: usize) -> Self {
        debug_assert!(base.is_multiple_of(F::PAGE) && size.is_multiple_of(F::PAGE));
        FlashWriter {
            flash,
            base,
            size,
            stored: 0,
            pending: [0xFF; 4],
            pending_len: 0,
        }
    }

    /// Bytes in the region.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Bytes taken so far.
    pub fn stored(&self) -> usize {
        self.stored
    }

    /// Appends `bytes`; `false` (nothing written) if they would run past
    /// the region.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        if bytes.len() > self.size - self.stored {
            return false;
        }
        for &byte in bytes {
            self.pending[self.pending_len] = byte;
            self.pending_len += 1;
            self.stored += 1;
            if self.pending_len == 4 {
                self.write_pending();
            }
        }
        true
    }

    /// Writes the last partial word, padded with 0xFF (the erased value).
    pub fn finish(&mut self) {
        if self.pending_len > 0 {
            self.write_pending();
        }
    }

    /// Writes the pending word at the word that holds the last stored
    /// byte, erasing its page first when the word is the page's first.
    fn write_pending(&mut self) {
        let offset = (self.stored - 1) & !3;
        let address = self.base + offset;
        if offset.is_multiple_of(F::PAGE) {
            self.flash.erase_page(address);
        }
        self.flash
            .write_word(address, u32::from_le_bytes(self.pending));
        self.pending = [0xFF; 4];
        self.pending_len = 0;
    }
}

/// A model received whole: its bytes checked as they passed, written to
/// flash, their CRC-32C the sent one. Not yet valid: the caller reads the
/// flash back against `digest`, then writes the flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The model's length.
    pub len: usize,
    /// The CRC-32C the sender announced for the whole model.
    pub digest: u32,
}

/// What a receiver saw of the link, for its report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCounts {
    /// Chunks taken.
    pub chunks: u32,
    /// Frames the envelope refused (garbage, changed frames).
    pub dropped: u32,
    /// The smallest checker scratch this model needs, once checked.
    pub scratch_needed: usize,
}

/// The transfer behind the envelope's decoder: the chunks in order, the
/// streaming check and the flash writer.
struct Transfer<'a, F: Flash, const N: usize, const D: usize> {
    reassembly: Reassembly,
    ty: &'a CompiledType<'static, N>,
    options: Options,
    /// The checker's scratch until the first chunk says the model's length.
    scratch: Option<&'a mut [u8]>,
    checker: Option<Checker<'a, 'static, 'a, N, D>>,
    writer: FlashWriter<F>,
    dropped: Option<EnvelopeError>,
    counts: LinkCounts,
}

/// Receives one enveloped, chunked model into a flash region, checking it
/// as it streams. `D` is the deepest nesting of containers the model's
/// type allows: the checker's state holds that many open containers, and
/// a model nested deeper is refused by the check.
pub struct Receiver<'a, F: Flash, const N: usize, const D: usize> {
    frames: Decoder<'a>,
    transfer: Transfer<'a, F, N, D>,
}

impl<'a, F: Flash, const N: usize, const D: usize> Receiver<'a, F, N, D> {
    /// A receiver of a model of type `ty` (bare or framed as `options`
    /// say) into `writer`'s region. `frame` holds one frame's message: the
    /// largest chunk the sender sends, its 12-byte header and the 4-byte
    /// CRC; `scratch` is the streaming checker's (the model's directory
    /// heads and a few bytes: `LinkCounts::scratch_needed` says how much).
    pub fn new(
        writer: FlashWriter<F>,
        ty: &'a CompiledType<'static, N>,
        options: Options,
        frame: &'a mut [u8],
        scratch: &'a mut [u8],
    ) -> Self {
        Receiver {
            frames: Decoder::new(frame),
            transfer: Transfer {
                reassembly: Reassembly::new(),
                ty,
                options,
                scratch: Some(scratch),
                checker: None,
                writer,
                dropped: None,
                counts: LinkCounts::default(),
            },
        }
    }

    /// Takes the next bytes from the link, as it delivered them. Returns
    /// the stored model once its last chunk is in, `None` while more are
    /// due, or why the transfer is refused (then stop: nothing is valid).
    pub fn on_link_bytes(&mut self, mut bytes: &[u8]) -> Result<Option<Stored>, Refused> {
        while !bytes.is_empty() {
            let (used, event) = self.frames.feed(bytes);
            bytes = bytes.get(used..).unwrap_or_default();
            let done = match event {
                None => None,
                Some(Err(e)) => {
                    self.transfer.dropped = Some(e);
                    self.transfer.counts.dropped += 1;
                    None
                }
                Some(Ok(message)) => {
                    let chunk =
                        Chunk::parse(message).map_err(|error| self.transfer.refused(error))?;
                    self.transfer.on_chunk(&chunk)?
                }
            };
            if done.is_some() {
                return Ok(done);
            }
        }
        Ok(None)
    }

    /// The link went quiet (a receive timeout): the transfer is short,
    /// unless it was complete.
    pub fn link_ended(&self) -> Refused {
        Refused::Short {
            announced: self.transfer.reassembly.total(),
            stored: self.transfer.reassembly.received(),
            dropped: self.transfer.dropped,
        }
    }

    /// What the receiver saw of the link so far.
    pub fn counts(&self) -> LinkCounts {
        self.transfer.counts
    }
}

impl<'a, F: Flash, const N: usize, const D: usize> Transfer<'a, F, N, D> {
    fn refused(&self, error: EnvelopeError) -> Refused {
        Refused::Chunk {
            error,
            expected: self.reassembly.received(),
            dropped: self.dropped,
        }
    }

    /// One chunk the envelope passed: in order, checked, stored.
    fn on_chunk(&mut self, chunk: &Chunk<'_>) -> Result<Option<Stored>, Refused> {
        if self.reassembly.total().is_none() && chunk.offset == 0 {
            if chunk.total as usize > self.writer.size() {
                return Err(Refused::TooLarge {
                    announced: chunk.total,
                    region: self.writer.size(),
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
            .accept(chunk)
            .map_err(|error| self.refused(error))?;
        self.counts.chunks += 1;
        let Some(checker) = self.checker.as_mut() else {
            return Err(self.refused(EnvelopeError::OutOfOrder));
        };
        checker.feed(chunk.bytes).map_err(Refused::Invalid)?;
        if !self.writer.write(chunk.bytes) {
            return Err(Refused::TooLarge {
                announced: chunk.total,
                region: self.writer.size(),
            });
        }
        if !complete {
            return Ok(None);
        }
        self.writer.finish();
        // The length was given: all of it passed, so the check is done, or
        // its end says the fault.
        if checker.need().map_err(Refused::Invalid)? != Need::Done {
            checker.end().map_err(Refused::Invalid)?;
        }
        self.counts.scratch_needed = checker.report().scratch_needed;
        Ok(Some(Stored {
            len: self.writer.stored(),
            digest: chunk.digest,
        }))
    }
}

/// Puts the checker of a `total`-byte model in `slot`. Not inlined: the
/// checker is built in this call's frame and moved, and that frame must
/// not stay on the stack under the check of every chunk (with the
/// format's 64 open containers the checker is 3.4 KB on the Cortex-M0 and
/// this frame 6.3 KB; docs/firmware.md).
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
