//! A model update received in chunks and written to flash as it arrives,
//! independent of the board: the board gives a [`Flash`] and feeds every
//! chunk its link delivers to [`Receiver::on_chunk`].
//!
//! The transfer today is a bare length-prefixed message: the 4 bytes
//! [`MAGIC`], the message length (u32, little-endian), then the message.
//! It carries no checksum, so the receiver's only integrity test is
//! `check` over the stored message before it marks the model valid; a
//! flipped payload byte of an `f32` tensor passes that check (every bit
//! pattern is an `f32`). The COBS/CRC-32 envelope and the streaming
//! checker plug in at [`Receiver::on_chunk`]: the envelope decoder takes
//! the link's bytes and hands each decoded chunk on, the streaming checker
//! sees every chunk before it is written, and the CRC is compared before
//! the flag is written.

/// The first bytes of a transfer.
pub const MAGIC: [u8; 4] = *b"KLNU";

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
    /// The transfer does not start with [`MAGIC`].
    BadMagic,
    /// The announced message does not fit the model region.
    TooLarge {
        /// Bytes announced.
        announced: usize,
        /// Bytes in the region.
        region: usize,
    },
    /// More bytes arrived than the header announced.
    Overrun,
    /// The link ended before the announced length arrived.
    Short {
        /// Bytes announced.
        announced: usize,
        /// Bytes stored.
        stored: usize,
    },
    /// The stored message is not a valid value of the model's type.
    Invalid(kiln_nostd::Error),
}

/// Receives one transfer into the flash region `[base, base + size)`:
/// erases each page as the data reaches it and writes whole words.
pub struct Receiver<F: Flash> {
    flash: F,
    base: usize,
    size: usize,
    header: [u8; 8],
    header_len: usize,
    announced: usize,
    stored: usize,
    /// Bytes of the next word not yet written (a chunk may end mid-word).
    pending: [u8; 4],
    pending_len: usize,
}

impl<F: Flash> Receiver<F> {
    /// A receiver writing into the page-aligned region `[base, base + size)`.
    pub fn new(flash: F, base: usize, size: usize) -> Self {
        debug_assert!(base.is_multiple_of(F::PAGE) && size.is_multiple_of(F::PAGE));
        Receiver {
            flash,
            base,
            size,
            header: [0; 8],
            header_len: 0,
            announced: 0,
            stored: 0,
            pending: [0xFF; 4],
            pending_len: 0,
        }
    }

    /// Whether every announced byte has arrived.
    pub fn is_complete(&self) -> bool {
        self.wanted() == 0
    }

    /// How many more bytes the transfer has: the rest of the header, or
    /// once it is read, the rest of the announced message.
    pub fn wanted(&self) -> usize {
        if self.header_len < self.header.len() {
            self.header.len() - self.header_len
        } else {
            self.announced - self.stored
        }
    }

    /// Takes the next chunk of the transfer, as the link delivered it.
    pub fn on_chunk(&mut self, mut chunk: &[u8]) -> Result<(), Refused> {
        if self.header_len < self.header.len() {
            let take = chunk.len().min(self.header.len() - self.header_len);
            let (head, rest) = chunk.split_at(take);
            self.header[self.header_len..self.header_len + take].copy_from_slice(head);
            self.header_len += take;
            chunk = rest;
            if self.header_len < self.header.len() {
                return Ok(());
            }
            let (magic, length) = self.header.split_at(4);
            if magic != MAGIC {
                return Err(Refused::BadMagic);
            }
            let mut word = [0u8; 4];
            word.copy_from_slice(length);
            self.announced = u32::from_le_bytes(word) as usize;
            if self.announced > self.size {
                return Err(Refused::TooLarge {
                    announced: self.announced,
                    region: self.size,
                });
            }
        }
        if chunk.len() > self.announced - self.stored {
            return Err(Refused::Overrun);
        }
        for &byte in chunk {
            self.pending[self.pending_len] = byte;
            self.pending_len += 1;
            self.stored += 1;
            if self.pending_len == 4 || self.stored == self.announced {
                self.write_pending();
            }
        }
        Ok(())
    }

    /// Writes the pending word (padded with 0xFF, the erased value) at the
    /// word that holds the last stored byte, erasing its page first when
    /// the word is the page's first.
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

    /// The stored message's length once the transfer is complete.
    pub fn finish(self) -> Result<usize, Refused> {
        if self.is_complete() {
            Ok(self.announced)
        } else {
            Err(Refused::Short {
                announced: self.announced,
                stored: self.stored,
            })
        }
    }
}
