//! A link envelope around Kiln messages (feature `envelope`). **Not part of
//! the Kiln format**: the format has no checksum and no delimiter, and a
//! Kiln reader never sees these bytes. The envelope is for links that
//! lose or flip bytes (a UART, a radio, RS-485): it lets a receiver find
//! where each message starts in a byte stream and refuse one that arrived
//! changed, before the Kiln reader runs.
//!
//! One enveloped message on the wire:
//!
//! ```text
//! 0x00 | COBS( message | CRC-32C(message), 4 bytes little-endian ) | 0x00
//! ```
//!
//! - **COBS** (consistent overhead byte stuffing, the `cobs` crate) rewrites
//!   the bytes so that none is `0x00`, at one byte per 254 plus one, so
//!   `0x00` can only be a delimiter. A receiver that starts in the middle
//!   of a stream, or loses bytes, is back in step at the next `0x00`.
//! - The leading `0x00` ends whatever garbage came before, so the message
//!   after it is not lost with the garbage; two delimiters in a row are an
//!   empty frame, which the receiver passes over.
//! - **CRC-32C** (Castagnoli, `crc::CRC_32_ISCSI`, the `crc` crate) over
//!   the message. Castagnoli rather than the zlib/Ethernet polynomial
//!   (`CRC_32_ISO_HDLC`): at the lengths a link carries it detects more
//!   errors (Hamming distance 6 up to 5,243 data bits, where the zlib
//!   polynomial keeps 6 only to 268 and falls to 4 beyond 2,974; Koopman,
//!   "32-bit cyclic redundancy codes for Internet applications", 2002),
//!   it is what iSCSI, SCTP and ext4 use, and hosts compute it in hardware
//!   (SSE 4.2, ARMv8). Every single-bit error and every burst of up to 32
//!   bits is detected by either; a microcontroller CRC unit fixed to the
//!   Ethernet polynomial is the one reason to prefer the other.
//!   The table is 1 KiB of flash; with `small-code` the CRC is computed
//!   bit by bit, with no table.
//!
//! What it does not do: it does not retransmit, order, or authenticate
//! (a CRC stops noise, not an attacker; use a MAC for that), and an
//! accepted message is still checked by the Kiln reader as any bytes are.
//!
//! A message larger than the receiver's RAM (a model written to flash as
//! it arrives) travels as a sequence of frames, each a [`Chunk`]: its
//! offset in the message, the message's length and CRC-32C, then the
//! bytes. [`chunks`] splits a message for the sender; [`Reassembly`] takes
//! each chunk a receiver decodes, in order, and says when the message is
//! complete and its digest matches.
//!
//! Two paths, the same bytes:
//!
//! - buffers: [`seal`] a message into a frame, [`open`] a frame;
//! - streams: [`Decoder`] is fed bytes as they arrive and yields each valid
//!   message, resynchronising at every `0x00`; [`seal_to_writer`] (with
//!   `embedded-io`) encodes a value and seals it into a writer (a UART,
//!   say) one COBS block at a time, with no buffer for the message.
//!
//! ```
//! use kiln_nostd::envelope::{open, seal, sealed_len, Decoder};
//!
//! let message = [7u8, 0, 0, 0, 0, 1, 2];
//! let mut frame = [0u8; sealed_len(7)];
//! let frame = seal(&message, &mut frame).unwrap();
//! assert!(!frame[1..frame.len() - 1].contains(&0));
//!
//! let mut out = [0u8; 16];
//! assert_eq!(open(frame, &mut out).unwrap(), &message);
//!
//! // A stream: garbage, then the frame; the decoder yields the message.
//! let mut buf = [0u8; 16];
//! let mut decoder = Decoder::new(&mut buf);
//! let mut stream = vec![0x55, 0x00, 0x13];
//! stream.extend_from_slice(frame);
//! let mut rest = &stream[..];
//! let mut got = vec![];
//! while !rest.is_empty() {
//!     let (used, event) = decoder.feed(rest);
//!     if let Some(Ok(msg)) = event {
//!         got.push(msg.to_vec());
//!     }
//!     rest = &rest[used..];
//! }
//! assert_eq!(got, vec![message.to_vec()]);
//! ```

use core::fmt;

use cobs::{EncoderState, PushResult};

use crate::error::{Error, Result};
use crate::wire::Sink;

/// The table the CRC is computed with: 256 words by default, none with
/// `small-code` (eight shifts per byte, about 1 KiB less flash).
#[cfg(not(feature = "small-code"))]
type CrcTable = crc::Table<1>;
#[cfg(feature = "small-code")]
type CrcTable = crc::NoTable;

/// The envelope's checksum: CRC-32C (Castagnoli).
static CRC32C: crc::Crc<u32, CrcTable> = crc::Crc::<u32, CrcTable>::new(&crc::CRC_32_ISCSI);

/// Bytes of the checksum after each message.
pub const CHECK_LEN: usize = 4;

/// The byte that delimits frames; COBS leaves none inside one.
pub const DELIMITER: u8 = 0x00;

/// The CRC-32C of `bytes`.
pub fn checksum(bytes: &[u8]) -> u32 {
    CRC32C.checksum(bytes)
}

/// The envelope's CRC-32C over bytes that arrive in pieces (a model read
/// back from flash a few words at a time): the same figure as
/// [`checksum`] of the pieces joined.
///
/// ```
/// use kiln_nostd::envelope::{checksum, Checksum};
///
/// let mut digest = Checksum::new();
/// digest.update(b"kiln ");
/// digest.update(b"model");
/// assert_eq!(digest.finish(), checksum(b"kiln model"));
/// assert_ne!(checksum(b"kiln model"), checksum(b"kiln modem"));
/// ```
#[derive(Clone)]
pub struct Checksum(crc::Digest<'static, u32, CrcTable>);

impl Checksum {
    /// The checksum of no bytes yet.
    pub fn new() -> Self {
        Checksum(CRC32C.digest())
    }

    /// Adds the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The CRC-32C of every byte added.
    pub fn finish(self) -> u32 {
        self.0.finalize()
    }
}

impl Default for Checksum {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Checksum").finish_non_exhaustive()
    }
}

/// The longest frame [`seal`] writes for a message of `len` bytes: both
/// delimiters, the COBS overhead (one byte per 254, at least one) and the
/// checksum. A buffer this long is always enough.
pub const fn sealed_len(len: usize) -> usize {
    cobs::max_encoding_length(len.saturating_add(CHECK_LEN)).saturating_add(2)
}

/// Why a frame was not accepted. These are the envelope's own kinds, not
/// Kiln wire codes: they say what happened on the link, before any Kiln
/// reader saw the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvelopeError {
    /// The frame is not valid COBS: a run claims more bytes than the frame
    /// has before its delimiter (bytes lost or changed on the link), or a
    /// `0x00` sits inside a frame given to [`open`].
    BadCobs,
    /// The checksum over the message does not match: bytes changed on the
    /// link.
    CrcMismatch,
    /// The message is longer than the buffer given for it, or than a
    /// [`Chunk`] can describe.
    TooLong {
        /// Bytes the frame needs: the sealed frame ([`seal`],
        /// [`Chunk::seal`]), the message and its 4-byte checksum (the
        /// [`Decoder`], [`open`]), or the message ([`chunks`]).
        length: usize,
        /// Bytes there were room for: the buffer's length, or the largest
        /// message a chunk's `u32` offsets reach.
        limit: usize,
    },
    /// Fewer bytes than the checksum alone: not a frame of this envelope.
    TooShort,
    /// [`open`] was given no frame at all (only delimiters, or nothing).
    Empty,
    /// A frame that holds only a checksum: the envelope never carries an
    /// empty message. The CRC-32C of no bytes is `00000000` and COBS writes
    /// zeros as `0x01` codes, so a delimiter flipped into a Kiln message's
    /// run of zeros leaves a fragment `00 01 01 01 01 01 00` that would
    /// otherwise pass as a valid empty message; [`seal`] refuses to write
    /// one for the same reason.
    EmptyMessage,
    /// A [`Chunk`] that is not the next of its transfer: a frame was lost
    /// or repeated, or the receiver joined the transfer after its start.
    OutOfOrder,
    /// A [`Chunk`] that disagrees with its transfer: another total length
    /// or digest than the chunks before it, or bytes past the total.
    ChunkMismatch,
}

impl EnvelopeError {
    /// The kind as one word, for logs and tests.
    #[doc(hidden)]
    pub const fn name(self) -> &'static str {
        match self {
            EnvelopeError::BadCobs => "BadCobs",
            EnvelopeError::CrcMismatch => "CrcMismatch",
            EnvelopeError::TooLong { .. } => "TooLong",
            EnvelopeError::TooShort => "TooShort",
            EnvelopeError::Empty => "Empty",
            EnvelopeError::EmptyMessage => "EmptyMessage",
            EnvelopeError::OutOfOrder => "OutOfOrder",
            EnvelopeError::ChunkMismatch => "ChunkMismatch",
        }
    }
}

impl fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EnvelopeError::BadCobs => "envelope: the frame is not valid COBS",
            EnvelopeError::CrcMismatch => "envelope: checksum mismatch",
            EnvelopeError::TooLong { length, limit } => {
                return write!(
                    f,
                    "envelope: message longer than the buffer (needs {length} bytes, room for {limit})"
                );
            }
            EnvelopeError::TooShort => "envelope: frame shorter than its checksum",
            EnvelopeError::Empty => "envelope: no frame",
            EnvelopeError::EmptyMessage => {
                "envelope: a frame with an empty message (a fragment, never sent)"
            }
            EnvelopeError::OutOfOrder => {
                "envelope: a chunk out of order (a frame lost or repeated)"
            }
            EnvelopeError::ChunkMismatch => "envelope: a chunk disagrees with its transfer",
        })
    }
}

impl core::error::Error for EnvelopeError {}

#[cfg(feature = "defmt")]
impl defmt::Format for EnvelopeError {
    fn format(&self, f: defmt::Formatter<'_>) {
        match *self {
            EnvelopeError::TooLong { length, limit } => {
                defmt::write!(f, "TooLong {=usize}/{=usize}", length, limit)
            }
            _ => defmt::write!(f, "{=str}", self.name()),
        }
    }
}

// ---------------------------------------------------------------------------
// Buffers

/// Seals `message` into `out`: the delimiter, COBS of the message and its
/// checksum, the delimiter. [`sealed_len`] of the message's length is
/// always room enough; less is [`EnvelopeError::TooLong`]. An empty
/// message is [`EnvelopeError::EmptyMessage`]: a receiver refuses it.
pub fn seal<'o>(message: &[u8], out: &'o mut [u8]) -> Result<&'o [u8], EnvelopeError> {
    if message.is_empty() {
        return Err(EnvelopeError::EmptyMessage);
    }
    seal_parts(&[message], out)
}

/// Seals the concatenation of `parts` into `out` as one frame. When `out`
/// is too short the frame is sealed again into a counter, so that the
/// refusal gives its whole length.
fn seal_parts<'o>(parts: &[&[u8]], out: &'o mut [u8]) -> Result<&'o [u8], EnvelopeError> {
    fn run<S: Sink>(parts: &[&[u8]], sink: S) -> Result<S> {
        let mut enc = Encoder::new(sink);
        for part in parts {
            enc.put(part)?;
        }
        enc.finish()?;
        Ok(enc.into_inner())
    }
    let limit = out.len();
    match run(parts, SliceOut { buf: out, len: 0 }) {
        Ok(out) => {
            let len = out.len;
            Ok(out.buf.get(..len).unwrap_or_default())
        }
        Err(_) => Err(EnvelopeError::TooLong {
            length: run(parts, Counter(0)).map_or(usize::MAX, |c| c.0),
            limit,
        }),
    }
}

/// A sink that only counts: the length of a frame that did not fit.
struct Counter(usize);

impl Sink for Counter {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.0 = self.0.saturating_add(bytes.len());
        Ok(())
    }

    fn written(&self) -> usize {
        self.0
    }
}

/// Opens one frame: the message, decoded into `out`, once its checksum
/// matches. The delimiters around the frame may be there or not; a `0x00`
/// inside it is [`EnvelopeError::BadCobs`]. `out` needs room for the
/// message and its 4-byte checksum (`frame.len()` bytes always suffice).
pub fn open<'o>(frame: &[u8], out: &'o mut [u8]) -> Result<&'o [u8], EnvelopeError> {
    let frame = frame.strip_prefix(&[DELIMITER]).unwrap_or(frame);
    let frame = frame.strip_suffix(&[DELIMITER]).unwrap_or(frame);
    if frame.is_empty() {
        return Err(EnvelopeError::Empty);
    }
    if frame.contains(&DELIMITER) {
        return Err(EnvelopeError::BadCobs);
    }
    let mut decoder = Decoder::new(out);
    // No 0x00 in `frame`: only the delimiter ends it.
    decoder.feed(frame);
    let (_, event) = decoder.feed(&[DELIMITER]);
    let len = match event {
        Some(Ok(message)) => message.len(),
        Some(Err(e)) => return Err(e),
        None => return Err(EnvelopeError::Empty),
    };
    Ok(decoder.buf.get(..len).unwrap_or_default())
}

/// A sink over a byte buffer: what [`seal`] writes into (the caller sees
/// only [`EnvelopeError::TooLong`]).
struct SliceOut<'o> {
    buf: &'o mut [u8],
    len: usize,
}

impl Sink for SliceOut<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let end = self.len.saturating_add(bytes.len());
        let Some(slot) = self.buf.get_mut(self.len..end) else {
            return Err(Error::refused(
                crate::Refusal::BufferTooSmall,
                "output buffer too small",
            ));
        };
        slot.copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    fn written(&self) -> usize {
        self.len
    }
}

// ---------------------------------------------------------------------------
// Streams: decoding

/// Where the stream decoder is in COBS: between frames, or in a run of
/// data bytes (`left` of them to come) after a code byte. A code `n`
/// announces `n - 1` data bytes and, unless `n` is 0xFF (a run of 254
/// bytes with no zero) or the frame ends after the run, one zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cobs {
    Idle,
    Run { left: u8, zero_after: bool },
}

impl Cobs {
    /// The state after the code byte `code` (not 0).
    fn code(code: u8) -> Cobs {
        Cobs::Run {
            left: code.wrapping_sub(1),
            zero_after: code != 0xFF,
        }
    }
}

/// Finds and checks enveloped messages in a byte stream, fed as it arrives,
/// in pieces of any size. Memory is the caller's buffer, which must hold
/// the longest message plus its 4-byte checksum; a longer frame is skipped
/// to its delimiter and reported as [`EnvelopeError::TooLong`], so no
/// stream makes it use more. Every `0x00` ends a frame: after any error
/// the next frame is read afresh.
pub struct Decoder<'b> {
    buf: &'b mut [u8],
    len: usize,
    state: Cobs,
    overflow: bool,
}

impl fmt::Debug for Decoder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("capacity", &self.buf.len())
            .field("len", &self.len)
            .field("overflow", &self.overflow)
            .finish()
    }
}

impl<'b> Decoder<'b> {
    /// A decoder that collects each frame's message in `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        Decoder {
            buf,
            len: 0,
            state: Cobs::Idle,
            overflow: false,
        }
    }

    /// Feeds bytes from the stream, up to the end of the first frame among
    /// them. Returns how many of `bytes` it took and, when a frame ended
    /// there, what it held: the message (borrowed from the buffer until the
    /// next call) or why it was refused. Feed the rest again; a frame
    /// that has not ended stays in the decoder for the next call. Empty
    /// frames (two delimiters in a row) are passed over silently.
    pub fn feed(&mut self, bytes: &[u8]) -> (usize, Option<Result<&[u8], EnvelopeError>>) {
        let mut i = 0;
        // Between frames a delimiter is an empty frame, passed over; any
        // other byte is the first code of a frame.
        while let Cobs::Idle = self.state {
            let Some(&byte) = bytes.get(i) else {
                return (bytes.len(), None);
            };
            i += 1;
            if byte != DELIMITER {
                self.state = Cobs::code(byte);
            }
        }
        let Cobs::Run {
            mut left,
            mut zero_after,
        } = self.state
        else {
            return (i, None);
        };
        // In a frame, a byte at a time with the state in locals: a Kiln
        // message's runs are often a few bytes (the zeros of its numbers),
        // so this loop is the decoder's cost per byte.
        let (mut len, mut overflow) = (self.len, self.overflow);
        let mut ended = None;
        while let Some(&byte) = bytes.get(i) {
            i += 1;
            let data = if left > 0 {
                // Inside a run: data; a delimiter cuts the frame short.
                if byte == DELIMITER {
                    ended = Some(false);
                    break;
                }
                left -= 1;
                byte
            } else {
                // A run ended: the frame ends, or the next code follows,
                // after the zero the run stood for (none after a code 0xFF,
                // a run of 254 bytes with no zero).
                if byte == DELIMITER {
                    ended = Some(true);
                    break;
                }
                let zero = zero_after;
                left = byte.wrapping_sub(1);
                zero_after = byte != 0xFF;
                if !zero {
                    continue;
                }
                0
            };
            // Counted past the buffer too: the refusal says how long the
            // frame was.
            match self.buf.get_mut(len) {
                Some(slot) if !overflow => *slot = data,
                _ => overflow = true,
            }
            len = len.saturating_add(1);
        }
        self.len = len;
        self.overflow = overflow;
        self.state = Cobs::Run { left, zero_after };
        match ended {
            None => (bytes.len(), None),
            Some(true) => {
                self.state = Cobs::Idle;
                (i, Some(self.end_frame()))
            }
            Some(false) => {
                self.restart();
                (i, Some(Err(EnvelopeError::BadCobs)))
            }
        }
    }

    /// Drops the frame under way, if any: the next byte starts a new one
    /// (as if a delimiter had arrived, with nothing reported).
    pub fn restart(&mut self) {
        self.len = 0;
        self.overflow = false;
        self.state = Cobs::Idle;
    }

    /// The frame's delimiter came: its verdict, and the decoder ready for
    /// the next frame. The message stays in the buffer until then.
    fn end_frame(&mut self) -> Result<&[u8], EnvelopeError> {
        let (len, overflow) = (self.len, self.overflow);
        self.len = 0;
        self.overflow = false;
        if overflow {
            return Err(EnvelopeError::TooLong {
                length: len,
                limit: self.buf.len(),
            });
        }
        // The frame's shape first, then its checksum: fewer bytes than the
        // checksum, then a checksum alone (a fragment whose CRC-32C of no
        // bytes, 00000000, always matches).
        let Some(message_len) = len.checked_sub(CHECK_LEN) else {
            return Err(EnvelopeError::TooShort);
        };
        if message_len == 0 {
            return Err(EnvelopeError::EmptyMessage);
        }
        let (message, check) = self
            .buf
            .get(..len)
            .unwrap_or_default()
            .split_at(message_len.min(len));
        let sent = check
            .try_into()
            .map(u32::from_le_bytes)
            .map_err(|_| EnvelopeError::TooShort)?;
        if checksum(message) != sent {
            return Err(EnvelopeError::CrcMismatch);
        }
        Ok(message)
    }
}

// ---------------------------------------------------------------------------
// Streams: encoding

/// The longest COBS block: its code byte and 254 data bytes.
const BLOCK: usize = 255;

/// Seals a message as it is written: a [`Sink`] that the Kiln encoder (or
/// anyone) writes the message into, writing the frame into another sink
/// `S`, one COBS block (at most 255 bytes, on the stack) at a time. Call
/// [`Encoder::finish`] after each message to write its checksum and the
/// closing delimiter; the next message may follow. The bytes are those of
/// [`seal`].
#[doc(hidden)]
pub struct Encoder<S> {
    out: S,
    digest: crc::Digest<'static, u32, CrcTable>,
    state: EncoderState,
    /// The block under way; `block[0]` is its code byte, set when it ends.
    block: [u8; BLOCK],
    len: usize,
    /// The last block was a full one (254 data bytes) and nothing came
    /// since: a message ending here needs no further block.
    after_full: bool,
    started: bool,
    taken: usize,
}

impl<S: fmt::Debug> fmt::Debug for Encoder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Encoder")
            .field("out", &self.out)
            .field("taken", &self.taken)
            .finish()
    }
}

impl<S: Sink> Encoder<S> {
    /// An encoder writing its frame into `out`.
    pub fn new(out: S) -> Self {
        Encoder {
            out,
            digest: CRC32C.digest(),
            state: EncoderState::default(),
            block: [0; BLOCK],
            len: 1,
            after_full: false,
            started: false,
            taken: 0,
        }
    }

    fn start(&mut self) -> Result<()> {
        if !self.started {
            self.out.put(&[DELIMITER])?;
            self.started = true;
        }
        Ok(())
    }

    /// Writes the block under way with `code` as its code byte and starts
    /// the next.
    fn end_block(&mut self, code: u8) -> Result<()> {
        if let Some(first) = self.block.first_mut() {
            *first = code;
        }
        self.out
            .put(self.block.get(..self.len).unwrap_or_default())?;
        self.len = 1;
        Ok(())
    }

    fn push(&mut self, byte: u8) -> Result<()> {
        self.after_full = false;
        match self.state.push(byte) {
            PushResult::AddSingle(b) => self.append(b),
            PushResult::ModifyFromStartAndSkip((_, code)) => self.end_block(code)?,
            PushResult::ModifyFromStartAndPushAndSkip((_, code, b)) => {
                self.append(b);
                self.end_block(code)?;
                self.after_full = true;
            }
        }
        Ok(())
    }

    fn append(&mut self, byte: u8) {
        if let Some(slot) = self.block.get_mut(self.len) {
            *slot = byte;
            self.len = self.len.saturating_add(1);
        }
    }

    /// Message bytes taken so far.
    pub fn message_len(&self) -> usize {
        self.taken
    }

    /// Ends the message: writes its checksum and the closing delimiter.
    /// The encoder is then ready for the next message. A message of no
    /// bytes is refused (`NotEncodable`) and nothing is written: a
    /// receiver refuses an empty message ([`EnvelopeError::EmptyMessage`]).
    pub fn finish(&mut self) -> Result<()> {
        if self.taken == 0 {
            return Err(Error::refused(
                crate::Refusal::NotEncodable,
                "the envelope carries no empty message",
            ));
        }
        self.start()?;
        let digest = core::mem::replace(&mut self.digest, CRC32C.digest());
        for byte in digest.finalize().to_le_bytes() {
            self.push(byte)?;
        }
        // The checksum is never empty, so the message has a last block;
        // after a full one, nothing is left to write.
        let (_, code) = core::mem::take(&mut self.state).finalize();
        if !self.after_full {
            self.end_block(code)?;
        }
        self.len = 1;
        self.after_full = false;
        self.started = false;
        self.taken = 0;
        self.out.put(&[DELIMITER])
    }

    /// The sink the frames went into.
    pub fn into_inner(self) -> S {
        self.out
    }

    /// The sink the frames go into.
    pub fn get_ref(&self) -> &S {
        &self.out
    }
}

impl<S: Sink> Sink for Encoder<S> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.start()?;
        self.digest.update(bytes);
        for &byte in bytes {
            self.push(byte)?;
        }
        self.taken = self.taken.saturating_add(bytes.len());
        Ok(())
    }

    fn written(&self) -> usize {
        self.taken
    }
}

/// Encodes `value` and seals it into `writer` as it goes (feature
/// `embedded-io` too): the bytes of [`seal`] over [`crate::to_slice`],
/// with 255 bytes of stack for the message. Returns the frame's length.
#[cfg(feature = "embedded-io")]
pub fn seal_to_writer<T: crate::Encode + ?Sized, W: embedded_io::Write>(
    value: &T,
    writer: W,
) -> core::result::Result<usize, crate::io_write::WriteError<W::Error>> {
    use crate::io_write::EmbeddedIoSink;
    let mut w = crate::Writer::new(Encoder::new(EmbeddedIoSink::new(writer)));
    let encoded = value.encode(&mut w);
    let mut encoder = w.into_sink();
    match encoded.and_then(|()| encoder.finish()) {
        Ok(()) => Ok(encoder.get_ref().written()),
        Err(e) => Err(encoder.into_inner().stop(e)),
    }
}

// ---------------------------------------------------------------------------
// Chunked transfers

/// Bytes of a [`Chunk`]'s header: offset, total length and digest, each a
/// `u32`, little-endian.
pub const CHUNK_HEADER_LEN: usize = 12;

/// One frame's share of a message sent in several frames. The frame's
/// message is the header (`offset`, `total`, `digest`, each `u32`
/// little-endian) followed by `bytes`, so each frame has its own CRC and a
/// receiver needs a buffer for one chunk, not for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// Where `bytes` start in the message.
    pub offset: u32,
    /// The whole message's length, the same in every chunk.
    pub total: u32,
    /// The CRC-32C of the whole message, the same in every chunk: the
    /// receiver compares it once the last chunk is in, so a message put
    /// together from two transfers of the same length is refused.
    pub digest: u32,
    /// This chunk's bytes of the message.
    pub bytes: &'a [u8],
}

impl<'a> Chunk<'a> {
    /// The chunk a decoded frame's message holds: [`EnvelopeError::TooShort`]
    /// without a whole header, [`EnvelopeError::ChunkMismatch`] when its
    /// bytes run past the total.
    pub fn parse(message: &'a [u8]) -> Result<Self, EnvelopeError> {
        let (header, bytes) = message
            .split_at_checked(CHUNK_HEADER_LEN)
            .ok_or(EnvelopeError::TooShort)?;
        let word = |i: usize| {
            header
                .get(i..i.saturating_add(4))
                .and_then(|w| w.try_into().ok())
                .map_or(0, u32::from_le_bytes)
        };
        let chunk = Chunk {
            offset: word(0),
            total: word(4),
            digest: word(8),
            bytes,
        };
        let end = u64::from(chunk.offset).saturating_add(bytes.len() as u64);
        if end > u64::from(chunk.total) {
            return Err(EnvelopeError::ChunkMismatch);
        }
        Ok(chunk)
    }

    /// The chunk's header, as it precedes the bytes in the frame.
    #[doc(hidden)]
    pub fn header(&self) -> [u8; CHUNK_HEADER_LEN] {
        let mut header = [0u8; CHUNK_HEADER_LEN];
        for (slot, word) in header
            .chunks_exact_mut(4)
            .zip([self.offset, self.total, self.digest])
        {
            slot.copy_from_slice(&word.to_le_bytes());
        }
        header
    }

    /// Seals the chunk into `out` as one frame (the bytes of [`seal`] over
    /// the header and the bytes, with no copy of them): `sealed_len` of
    /// [`CHUNK_HEADER_LEN`] plus the bytes' length is always room enough.
    pub fn seal<'o>(&self, out: &'o mut [u8]) -> Result<&'o [u8], EnvelopeError> {
        seal_parts(&[&self.header(), self.bytes], out)
    }
}

/// Splits `message` into chunks of at most `size` bytes (at least 1), in
/// order; an empty message is one empty chunk, so that the receiver still
/// learns it is complete. [`EnvelopeError::TooLong`] for a message of 4 GiB
/// or more, whose offsets a chunk cannot hold.
pub fn chunks(message: &[u8], size: usize) -> Result<Chunks<'_>, EnvelopeError> {
    let total = u32::try_from(message.len()).map_err(|_| EnvelopeError::TooLong {
        length: message.len(),
        limit: u32::MAX as usize,
    })?;
    Ok(Chunks {
        message,
        size: size.max(1),
        total,
        digest: checksum(message),
        at: 0,
        done: false,
    })
}

/// The chunks of a message, from [`chunks`].
#[derive(Debug, Clone)]
pub struct Chunks<'a> {
    message: &'a [u8],
    size: usize,
    total: u32,
    digest: u32,
    at: usize,
    done: bool,
}

impl<'a> Iterator for Chunks<'a> {
    type Item = Chunk<'a>;

    fn next(&mut self) -> Option<Chunk<'a>> {
        if self.done {
            return None;
        }
        let end = self.at.saturating_add(self.size).min(self.message.len());
        let bytes = self.message.get(self.at..end).unwrap_or_default();
        let chunk = Chunk {
            // The whole message's length fits a u32 (checked in `chunks`).
            offset: u32::try_from(self.at).unwrap_or(u32::MAX),
            total: self.total,
            digest: self.digest,
            bytes,
        };
        self.at = end;
        self.done = end >= self.message.len();
        Some(chunk)
    }
}

/// Puts a message sent in chunks back together, for a receiver that
/// stores each chunk as it comes (at its offset: to flash, to a file).
/// It holds no bytes, only where the transfer is and the running digest:
/// [`Reassembly::accept`] each chunk decoded, in order; the message is
/// complete, and its bytes are the sent ones, once it returns `Ok(true)`.
///
/// Frames that the envelope refuses (garbage, a flipped bit) are not
/// chunks: a receiver passes over them, and the next chunk that does
/// arrive is [`EnvelopeError::OutOfOrder`] if one was lost in them.
#[derive(Clone)]
pub struct Reassembly {
    /// The total and digest the first chunk announced.
    transfer: Option<(u32, u32)>,
    next: u32,
    digest: crc::Digest<'static, u32, CrcTable>,
}

impl fmt::Debug for Reassembly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reassembly")
            .field("transfer", &self.transfer)
            .field("next", &self.next)
            .finish()
    }
}

impl Default for Reassembly {
    fn default() -> Self {
        Self::new()
    }
}

impl Reassembly {
    /// Waiting for the first chunk (offset 0) of a transfer.
    pub fn new() -> Self {
        Reassembly {
            transfer: None,
            next: 0,
            digest: CRC32C.digest(),
        }
    }

    /// Takes the next chunk. `Ok(false)`: store its bytes at its offset,
    /// more follow; `Ok(true)`: store them, the message is complete and its
    /// CRC-32C is the announced digest. A refused chunk changes nothing: the
    /// same chunk in order may still come. After the last chunk every
    /// chunk is [`EnvelopeError::OutOfOrder`].
    pub fn accept(&mut self, chunk: &Chunk<'_>) -> Result<bool, EnvelopeError> {
        let (total, digest) = match self.transfer {
            None if chunk.offset == 0 => (chunk.total, chunk.digest),
            None => return Err(EnvelopeError::OutOfOrder),
            Some(transfer) => transfer,
        };
        if (chunk.total, chunk.digest) != (total, digest) {
            return Err(EnvelopeError::ChunkMismatch);
        }
        if chunk.offset != self.next || self.is_complete() {
            return Err(EnvelopeError::OutOfOrder);
        }
        let end = u64::from(chunk.offset).saturating_add(chunk.bytes.len() as u64);
        let end = u32::try_from(end)
            .ok()
            .filter(|&end| end <= total)
            .ok_or(EnvelopeError::ChunkMismatch)?;
        if end == total {
            let mut whole = self.digest.clone();
            whole.update(chunk.bytes);
            if whole.finalize() != digest {
                return Err(EnvelopeError::CrcMismatch);
            }
        }
        self.transfer = Some((total, digest));
        self.digest.update(chunk.bytes);
        self.next = end;
        Ok(end == total)
    }

    /// The message's length, once the first chunk announced it.
    #[doc(hidden)]
    pub fn total(&self) -> Option<u32> {
        self.transfer.map(|(total, _)| total)
    }

    /// Bytes accepted so far: the offset the next chunk must have.
    #[doc(hidden)]
    pub fn received(&self) -> u32 {
        self.next
    }

    /// Whether every byte of the message was accepted.
    #[doc(hidden)]
    pub fn is_complete(&self) -> bool {
        self.transfer.is_some_and(|(total, _)| self.next == total)
    }
}
