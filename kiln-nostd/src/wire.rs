//! Wire primitives: a bounds-checked little-endian [`Reader`], the
//! allocation rule every claimed count goes through, and a [`Writer`] over a
//! [`Sink`] that says where encoded bytes go.
//!
//! Integers are read and written with `from_le_bytes`/`to_le_bytes`, which
//! give wire order on every host. Payload slices go through
//! [`crate::order`].

use crate::error::{Code, Detail, Error, Refusal, Result};
use crate::limits::Limits;

/// Containers a value may sit inside; entering one more is DEPTH.
pub const MAX_DEPTH: u8 = 64;

/// Values of a zero-size type (`Empty`, `struct{}`) that typed decoders may
/// create for one message, besides [`ZERO_SIZE_PER_BYTE`] per byte of the
/// buffer, and never more than the count cap
/// ([`Reader::spend_zero_size`]).
pub(crate) const ZERO_SIZE_BASE: u64 = 65_536;

/// Values of a zero-size type that typed decoders may create per byte of
/// the buffer, besides [`ZERO_SIZE_BASE`].
pub(crate) const ZERO_SIZE_PER_BYTE: u64 = 64;

/// The zero-size budget of a reader over `len` bytes: work grows with the
/// input, not with the counts it claims.
const fn zero_size_budget(len: usize, limits: Limits) -> u64 {
    let by_input = ZERO_SIZE_BASE.saturating_add((len as u64).saturating_mul(ZERO_SIZE_PER_BYTE));
    let cap = limits.count_cap as u64;
    if by_input < cap {
        by_input
    } else {
        cap
    }
}

// ---------------------------------------------------------------------------
// The allocation rule

/// Step 2 of the allocation rule: a claimed count above its cap is LIMIT.
/// Runs before anything whose size depends on the count.
#[inline]
pub(crate) fn check_cap(count: u64, cap: u32, what: &'static str, at: usize) -> Result<()> {
    if count > u64::from(cap) {
        return Err(Error::wire(Code::Limit, what, at).with_detail(Detail::Cap {
            claimed: count,
            cap: u64::from(cap),
        }));
    }
    Ok(())
}

/// Steps 3 and 4 of the allocation rule: `count * min_element + fixed`
/// must not overflow (LIMIT) and must fit in `unread` bytes (EOF).
/// `fixed` is bytes the claim needs besides its elements (a directory's
/// header and name heap); it is 0 for a Frozen list. `unread` is a `u64`:
/// a stream or a file read by ranges may hold more bytes than a 32-bit
/// `usize` counts.
#[inline]
pub(crate) fn check_fits_u64(
    count: u64,
    min_element: u64,
    fixed: u64,
    unread: u64,
    what: &'static str,
    at: usize,
) -> Result<u64> {
    let needed = count
        .checked_mul(min_element)
        .and_then(|bytes| bytes.checked_add(fixed))
        .ok_or(Error::wire(
            Code::Limit,
            "size product overflows 64 bits",
            at,
        ))?;
    if needed > unread {
        return Err(Error::wire(Code::Eof, what, at).with_detail(Detail::Bytes {
            needed,
            available: unread,
        }));
    }
    Ok(needed)
}

/// A count that the format allows but that storage whose capacity is in
/// its type cannot hold: a refusal of the API, never a wire code, so that
/// the verdict on the bytes stays the same for every reader.
#[inline]
pub(crate) fn check_capacity(
    count: u64,
    capacity: usize,
    what: &'static str,
    at: usize,
) -> Result<()> {
    if count > capacity as u64 {
        return Err(Error::refused(Refusal::Capacity, what)
            .at(at)
            .with_detail(Detail::Cap {
                claimed: count,
                cap: capacity as u64,
            }));
    }
    Ok(())
}

/// The rules of a count or length word, once read: above `cap` LIMIT
/// (`over_cap`), then `word * min_element` overflow LIMIT or more than
/// `unread` bytes EOF (`too_long`). Returns the bytes the claim needs.
/// [`Reader`] and the incremental checker both call it.
#[inline]
pub(crate) fn check_claim(
    word: u32,
    cap: u32,
    min_element: u64,
    over_cap: &'static str,
    too_long: &'static str,
    unread: u64,
    at: usize,
) -> Result<u64> {
    check_cap(u64::from(word), cap, over_cap, at)?;
    check_fits_u64(u64::from(word), min_element, 0, unread, too_long, at)
}

/// What EOF names when a count or length word is cut short.
pub(crate) const COUNT_WORD: &str = "count or length word";
/// The LIMIT of an element count above the count cap.
pub(crate) const OVER_COUNT_CAP: &str = "count above the count cap";
/// The LIMIT of a byte length above the byte cap.
pub(crate) const OVER_BYTE_CAP: &str = "length above the byte cap";
/// The EOF of a string length beyond the bytes that remain.
pub(crate) const STR_BEYOND: &str = "string length beyond the bytes that remain";

/// DEPTH: a container entered at `at` inside 64 others.
#[cold]
pub(crate) const fn depth_fault(at: usize) -> Error {
    Error::wire(
        Code::Depth,
        "value nested inside more than 64 containers",
        at,
    )
}

/// TRAILING: bytes at `at` after the end of a standalone value.
#[cold]
pub(crate) const fn trailing_fault(at: usize) -> Error {
    Error::wire(Code::Trailing, "bytes after the end of the value", at)
}

// ---------------------------------------------------------------------------
// Reader

/// A cursor over a borrowed buffer. Every read is bounds-checked; a read
/// past the end is EOF and moves nothing.
///
/// Positions are offsets into the whole buffer the reader was made over,
/// so error offsets and the ranges the walker reports are absolute even
/// when the value starts after a frame.
///
/// A hand-written [`Decode`](crate::Decode) reads its fields with their
/// own `decode` inside [`Reader::nested`]; the primitive reads (words,
/// runs, claims) are hidden: they serve this crate's decoders and the
/// code `#[derive(Frozen)]` generates, and are no API.
#[derive(Clone, Debug)]
pub struct Reader<'de> {
    buf: &'de [u8],
    pos: usize,
    end: usize,
    limits: Limits,
    depth: u8,
    trusted: bool,
    entered: u64,
    /// Values of a zero-size type that typed decoders may still create.
    zero_size_left: u64,
}

impl<'de> Reader<'de> {
    /// A checking reader over all of `buf`.
    #[inline]
    #[doc(hidden)]
    pub const fn new(buf: &'de [u8], limits: Limits) -> Reader<'de> {
        Reader {
            buf,
            pos: 0,
            end: buf.len(),
            limits,
            depth: 0,
            trusted: false,
            entered: 0,
            zero_size_left: zero_size_budget(buf.len(), limits),
        }
    }

    /// A checking reader over `buf` that starts at byte `start` (after a
    /// frame, say); positions stay offsets into `buf`.
    #[doc(hidden)]
    pub const fn starting_at(buf: &'de [u8], start: usize, limits: Limits) -> Reader<'de> {
        let mut r = Reader::new(buf, limits);
        r.pos = if start < buf.len() { start } else { buf.len() };
        r
    }

    /// A reader for a buffer this process just wrote: it skips UTF-8
    /// checks of directory names and the quantization arithmetic, but every
    /// bound is still checked, so a bad buffer can give wrong answers but
    /// never a read outside it.
    #[doc(hidden)]
    pub const fn trusted(buf: &'de [u8], limits: Limits) -> Reader<'de> {
        let mut r = Reader::new(buf, limits);
        r.trusted = true;
        r
    }

    /// The caps in force.
    #[inline]
    #[doc(hidden)]
    pub const fn limits(&self) -> Limits {
        self.limits
    }

    /// Whether this reader skips the checks a trusted buffer may skip.
    #[inline]
    #[doc(hidden)]
    pub const fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// The offset of the next byte to read, in the whole buffer.
    #[inline]
    #[doc(hidden)]
    pub const fn position(&self) -> usize {
        self.pos
    }

    /// The whole buffer this reader walks.
    #[inline]
    #[doc(hidden)]
    pub const fn buffer(&self) -> &'de [u8] {
        self.buf
    }

    /// The bytes not yet read.
    #[inline]
    #[doc(hidden)]
    pub fn unread(&self) -> &'de [u8] {
        self.buf.get(self.pos..self.end).unwrap_or(&[])
    }

    /// How many bytes are not yet read.
    #[inline]
    #[doc(hidden)]
    pub const fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    /// How many containers (structs, lists, dicts, opts) this reader has
    /// entered so far: a measure of the work a hostile input caused that
    /// does not depend on the machine's speed.
    #[doc(hidden)]
    pub const fn containers_entered(&self) -> u64 {
        self.entered
    }

    /// Takes the next `len` bytes, or EOF naming `what`.
    #[inline]
    #[doc(hidden)]
    pub fn take(&mut self, len: usize, what: &'static str) -> Result<&'de [u8]> {
        if len > self.remaining() {
            return Err(self.eof(len, what));
        }
        let end = self.pos.saturating_add(len);
        let bytes = self
            .buf
            .get(self.pos..end)
            .ok_or_else(|| self.eof(len, what))?;
        self.pos = end;
        Ok(bytes)
    }

    #[cold]
    fn eof(&self, needed: usize, what: &'static str) -> Error {
        Error::wire(Code::Eof, what, self.pos).with_detail(Detail::Bytes {
            needed: needed as u64,
            available: self.remaining() as u64,
        })
    }

    /// Takes the next `N` bytes as an array.
    #[inline]
    #[doc(hidden)]
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        match self.unread().first_chunk::<N>() {
            Some(bytes) => {
                // `N` bytes were just found after `pos`, so this cannot
                // overflow (a plain add: this is the hottest line of a
                // struct of scalars).
                self.pos += N;
                Ok(*bytes)
            }
            None => Err(self.eof(N, what)),
        }
    }

    /// One byte.
    #[inline]
    #[doc(hidden)]
    pub fn u8(&mut self, what: &'static str) -> Result<u8> {
        self.array::<1>(what).map(u8::from_le_bytes)
    }

    /// A little-endian u16.
    #[inline]
    #[doc(hidden)]
    pub fn u16(&mut self, what: &'static str) -> Result<u16> {
        self.array(what).map(u16::from_le_bytes)
    }

    /// A little-endian u32.
    #[inline]
    #[doc(hidden)]
    pub fn u32(&mut self, what: &'static str) -> Result<u32> {
        self.array(what).map(u32::from_le_bytes)
    }

    /// A little-endian u64.
    #[inline]
    #[doc(hidden)]
    pub fn u64(&mut self, what: &'static str) -> Result<u64> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// Reads a u32 element count and applies the allocation rule: count
    /// word EOF, above `cap` LIMIT, `count * min_element` overflow LIMIT,
    /// more than the unread bytes EOF. Only a count that passes may size
    /// storage or a loop.
    #[inline]
    #[doc(hidden)]
    pub fn claim(&mut self, cap: u32, min_element: u64, what: &'static str) -> Result<u32> {
        self.claim_word(cap, min_element, OVER_COUNT_CAP, what)
    }

    /// Reads a u32 byte length (of a `str` or `list<u8>`) under the byte
    /// cap and checks it against the unread bytes.
    #[inline]
    #[doc(hidden)]
    pub fn claim_length(&mut self, what: &'static str) -> Result<u32> {
        self.claim_word(self.limits.byte_cap, 1, OVER_BYTE_CAP, what)
    }

    #[inline]
    fn claim_word(
        &mut self,
        cap: u32,
        min_element: u64,
        over_cap: &'static str,
        too_long: &'static str,
    ) -> Result<u32> {
        let at = self.pos;
        let word = self.u32(COUNT_WORD)?;
        check_claim(
            word,
            cap,
            min_element,
            over_cap,
            too_long,
            self.remaining() as u64,
            at,
        )?;
        Ok(word)
    }

    /// Reads a length-prefixed byte run (`str`, `list<u8>`) under the byte
    /// cap.
    #[inline]
    #[doc(hidden)]
    pub fn byte_run(&mut self, what: &'static str) -> Result<&'de [u8]> {
        let len = self.claim_length(what)?;
        self.take(len as usize, what)
    }

    /// Reads a `str`: a byte run that must be UTF-8.
    #[inline]
    #[doc(hidden)]
    pub fn str(&mut self) -> Result<&'de str> {
        let at = self.pos.saturating_add(4);
        let bytes = self.byte_run(STR_BEYOND)?;
        utf8(bytes, at)
    }

    /// Enters a container (struct, list, dict, opt). The 65th nested one is
    /// DEPTH, before any of its bytes is read.
    #[inline]
    pub(crate) fn enter(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(depth_fault(self.pos));
        }
        self.depth = self.depth.saturating_add(1);
        self.entered = self.entered.saturating_add(1);
        Ok(())
    }

    /// Leaves the container entered last.
    #[inline]
    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Runs `body` one container deeper.
    #[inline]
    pub fn nested<T>(&mut self, body: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.enter()?;
        let value = body(self);
        self.leave();
        value
    }

    /// The current container depth.
    #[doc(hidden)]
    pub const fn depth(&self) -> u8 {
        self.depth
    }

    /// A reader over `start..end` of the same buffer at the current depth,
    /// for re-reading a validated region lazily (list and dict views).
    pub(crate) fn window(&self, start: usize, end: usize) -> Reader<'de> {
        Reader {
            buf: self.buf,
            pos: start,
            end: end.min(self.buf.len()),
            limits: self.limits,
            depth: self.depth,
            trusted: self.trusted,
            entered: 0,
            zero_size_left: self.zero_size_left,
        }
    }

    /// Takes `count` from the budget of zero-size values that typed decoders
    /// create (`Vec<Empty>`, say): one message may make at most 65,536 of
    /// them plus 64 per byte of its buffer, and never more than the count
    /// cap, however its lists nest. Reading zero bytes proves nothing about
    /// a count, and a `Vec` needs one write per value, so without this a few
    /// bytes could demand billions of writes (under the count cap alone,
    /// 1 KiB of nested lists can claim 16,777,216 of them). Past the
    /// budget the decoder refuses ([`Refusal::Capacity`]); the walker,
    /// `check`, views and dynamic values need no budget, since their work
    /// does not grow with such a count.
    #[doc(hidden)]
    pub fn spend_zero_size(&mut self, count: u32) -> Result<()> {
        let at = self.pos;
        self.zero_size_left = self.zero_size_left.checked_sub(u64::from(count)).ok_or(
            Error::refused(
                Refusal::Capacity,
                "more values of a zero-size type in one message than its budget",
            )
            .at(at)
            .with_detail(Detail::Cap {
                claimed: u64::from(count),
                cap: self.zero_size_left,
            }),
        )?;
        Ok(())
    }

    /// Runs `body` over a reader of exactly the next `len` bytes, or
    /// returns `None` (running nothing) when fewer remain. `body`'s reads
    /// are then checked against a length the optimizer knows, so a run of
    /// fixed-width reads keeps no bounds check. Inside `body`, positions
    /// count from the first of those bytes; the offsets of its errors are
    /// moved back to this reader's frame.
    #[inline] // the point is the constant length seen by the inlined body
    pub(crate) fn exactly<T>(
        &mut self,
        len: usize,
        body: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Option<Result<T>> {
        let buf = self.unread().get(..len)?;
        let start = self.pos;
        let mut exact = Reader {
            buf,
            pos: 0,
            end: len,
            limits: self.limits,
            depth: self.depth,
            trusted: self.trusted,
            entered: self.entered,
            zero_size_left: self.zero_size_left,
        };
        let value = body(&mut exact).map_err(|e| e.shifted(start));
        self.pos = start.saturating_add(exact.pos);
        self.entered = exact.entered;
        self.zero_size_left = exact.zero_size_left;
        Some(value)
    }

    /// Moves past `len` bytes already validated by someone else.
    #[inline]
    #[doc(hidden)]
    pub fn skip(&mut self, len: usize, what: &'static str) -> Result<()> {
        self.take(len, what).map(|_| ())
    }

    /// A standalone value must use the whole buffer: anything left is
    /// TRAILING.
    #[inline]
    #[doc(hidden)]
    pub fn finish(&self) -> Result<()> {
        if self.pos < self.end {
            return Err(trailing_fault(self.pos));
        }
        Ok(())
    }
}

/// Checks one piece of a string that may continue: `bytes` start at
/// absolute offset `at` and are followed by more of the string unless
/// `last`. Returns how many bytes at the end begin a character the next
/// piece completes (0 to 3), which the caller passes again at the start of
/// the next piece. The first fault is where [`utf8`] on the whole string
/// puts it.
pub(crate) fn utf8_piece(bytes: &[u8], at: u64, last: bool) -> Result<usize> {
    match core::str::from_utf8(bytes) {
        Ok(_) => Ok(0),
        Err(e) if e.error_len().is_none() && !last => Ok(bytes.len() - e.valid_up_to()),
        Err(e) => Err(Error::wire(Code::Utf8, "string is not UTF-8", 0)
            .shifted_u64(at.saturating_add(e.valid_up_to() as u64))),
    }
}

/// Checks that a byte run at absolute offset `at` is UTF-8.
#[inline]
pub(crate) fn utf8(bytes: &[u8], at: usize) -> Result<&str> {
    core::str::from_utf8(bytes).map_err(|e| {
        Error::wire(
            Code::Utf8,
            "string is not UTF-8",
            at.saturating_add(e.valid_up_to()),
        )
    })
}

// ---------------------------------------------------------------------------
// Sinks and the writer

/// Where encoded bytes go. A sink that runs out of room refuses with
/// [`Refusal::BufferTooSmall`] and never panics. A sink implements `put`
/// and `written`; the hidden provided methods are the encoder's shortcuts
/// (zeros, runs, bytes built or lent in place), which a sink may override
/// with the same result.
pub trait Sink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]) -> Result<()>;

    /// Appends `count` zero bytes (padding, alignment gaps).
    #[inline]
    #[doc(hidden)]
    fn put_zeros(&mut self, count: usize) -> Result<()> {
        const ZEROS: [u8; 64] = [0; 64];
        let mut left = count;
        while left > 0 {
            let step = left.min(ZEROS.len());
            self.put(ZEROS.get(..step).unwrap_or(&[]))?;
            left = left.saturating_sub(step);
        }
        Ok(())
    }

    /// Appends a little-endian `u32` length word, then `bytes` (a `str` or
    /// `list<u8>`). A sink over memory overrides it to check room for both
    /// at once.
    #[inline]
    #[doc(hidden)]
    fn put_run(&mut self, len: u32, bytes: &[u8]) -> Result<()> {
        self.put(&len.to_le_bytes())?;
        self.put(bytes)
    }

    /// Appends the first `len` bytes (at most `N`) of an `N`-byte run
    /// that `fill` writes: a fixed-size record, or a short payload with its
    /// alignment gap. A sink over memory may lend `fill` its own next `N`
    /// bytes, so the record is built where it goes instead of built and
    /// then copied; those bytes may hold anything before `fill` runs, so
    /// `fill` must write every byte that is kept. By default the run is
    /// built on the stack, then [`Sink::put`].
    #[inline]
    #[doc(hidden)]
    fn put_built<const N: usize>(
        &mut self,
        len: usize,
        fill: impl FnOnce(&mut [u8; N]),
    ) -> Result<()>
    where
        Self: Sized,
    {
        let mut run = [0u8; N];
        fill(&mut run);
        self.put(run.get(..len).unwrap_or(&run))
    }

    /// Lends `len` bytes of the sink's own memory to `fill`, to keep all
    /// of them if `fill` returns `true` and none if it returns `false`;
    /// returns whether they were kept. A sink that has no memory of its own
    /// to lend declines (the default): `fill` is not called and nothing is
    /// written. Lent bytes may hold anything before `fill` runs, and bytes
    /// that are not kept must not be seen by anyone: so a sink over a
    /// caller's buffer, whose bytes past the written ones the caller sees,
    /// declines. The directory builder checks a block and writes its
    /// descriptors in one walk through such a loan.
    #[inline]
    #[doc(hidden)]
    fn put_lent(&mut self, len: usize, fill: impl FnOnce(&mut [u8]) -> bool) -> bool
    where
        Self: Sized,
    {
        let _ = (len, fill);
        false
    }

    /// Lends the sink's next `len` bytes to `fill`, which writes every
    /// one of them, and keeps them all; returns whether it did. A sink
    /// with no memory of its own to lend, or with fewer than `len` bytes of
    /// room, declines (the default): `fill` is not called, nothing is
    /// written, and the caller writes the same bytes piece by piece, which
    /// gives the refusal its usual place. An encoder that knows a value's
    /// exact length writes it through this with one bounds check.
    #[inline]
    #[doc(hidden)]
    fn put_whole(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> bool
    where
        Self: Sized,
    {
        let _ = (len, fill);
        false
    }

    /// Bytes written so far.
    fn written(&self) -> usize;
}

/// `dst.copy_from_slice(src)` for slices of the same length, up to 64
/// bytes by a few fixed-size moves (overlapping when the length is not
/// their size) rather than a call: names, keys and short strings, and
/// short payloads. Longer ones go to `copy_from_slice`.
#[inline(always)]
pub(crate) fn copy_short(dst: &mut [u8], src: &[u8]) {
    fn pair<const W: usize>(dst: &mut [u8], src: &[u8]) {
        if let (Some(d), Some(s)) = (dst.first_chunk_mut::<W>(), src.first_chunk::<W>()) {
            *d = *s;
        }
        if let (Some(d), Some(s)) = (dst.last_chunk_mut::<W>(), src.last_chunk::<W>()) {
            *d = *s;
        }
    }
    // The shortest first: a key or a name of a few bytes is told its
    // width in two compares.
    let n = src.len();
    if n != dst.len() {
        dst.copy_from_slice(src);
    } else if n <= 16 {
        if n >= 8 {
            pair::<8>(dst, src);
        } else if n >= 4 {
            pair::<4>(dst, src);
        } else {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = *s;
            }
        }
    } else if n <= 32 {
        pair::<16>(dst, src);
    } else if n <= 64 {
        pair::<32>(dst, src);
    } else {
        dst.copy_from_slice(src);
    }
}

/// The refusal of a sink over a caller's buffer that has no room left:
/// `needed` counts the bytes up to the end of the write that failed (the
/// encoder stops there; [`crate::to_slice`] replaces it by the whole
/// length), `available` the buffer's length.
#[cold]
fn buffer_too_small(written: usize, len: usize, available: usize) -> Error {
    Error::refused(Refusal::BufferTooSmall, "output buffer too small").with_detail(Detail::Bytes {
        needed: (written as u64).saturating_add(len as u64),
        available: available as u64,
    })
}

/// A sink over a caller's buffer.
#[derive(Debug)]
pub struct SliceSink<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> SliceSink<'a> {
    /// Writes from the start of `buf`.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> SliceSink<'a> {
        SliceSink { buf, len: 0 }
    }

    /// The next `len` bytes of the buffer and the length after them, or
    /// `None` when fewer remain.
    #[inline]
    fn room(&mut self, len: usize) -> Option<(&mut [u8], usize)> {
        // Two compares: `len` fits in what is left after the written
        // bytes, so their sum cannot overflow.
        let slot = self.buf.get_mut(self.len..)?.get_mut(..len)?;
        Some((slot, self.len.wrapping_add(len)))
    }

    /// The bytes written.
    #[inline]
    #[doc(hidden)]
    pub fn into_written(self) -> &'a mut [u8] {
        let len = self.len;
        self.buf.get_mut(..len).unwrap_or_default()
    }
}

impl Sink for SliceSink<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let Some((slot, end)) = self.room(bytes.len()) else {
            return Err(buffer_too_small(self.len, bytes.len(), self.buf.len()));
        };
        slot.copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    /// One bounds check for the length word and the bytes; a buffer too
    /// small for both gets neither.
    #[inline]
    fn put_run(&mut self, len: u32, bytes: &[u8]) -> Result<()> {
        let Some((slot, end)) = bytes
            .len()
            .checked_add(4)
            .and_then(|total| self.room(total))
        else {
            return Err(buffer_too_small(
                self.len,
                bytes.len().saturating_add(4),
                self.buf.len(),
            ));
        };
        if let Some((word, rest)) = slot.split_first_chunk_mut::<4>() {
            *word = len.to_le_bytes();
            copy_short(rest, bytes);
        }
        self.len = end;
        Ok(())
    }

    /// The buffer's next `len` bytes, when there are that many.
    #[inline]
    fn put_whole(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        match self.room(len) {
            Some((slot, end)) => {
                fill(slot);
                self.len = end;
                true
            }
            None => false,
        }
    }

    /// Built in the buffer when its next `N` bytes are free; else on the
    /// stack, so a run whose kept bytes fit still fits.
    #[inline]
    fn put_built<const N: usize>(
        &mut self,
        len: usize,
        fill: impl FnOnce(&mut [u8; N]),
    ) -> Result<()> {
        let len = len.min(N);
        match self
            .buf
            .get_mut(self.len..)
            .and_then(<[u8]>::first_chunk_mut::<N>)
        {
            Some(run) => {
                fill(run);
                self.len = self.len.saturating_add(len);
                Ok(())
            }
            None => {
                let mut run = [0u8; N];
                fill(&mut run);
                self.put(run.get(..len).unwrap_or(&run))
            }
        }
    }

    #[inline]
    fn written(&self) -> usize {
        self.len
    }
}

/// A sink that only counts: running the real encoder into it gives the
/// exact encoded length.
#[derive(Debug, Default, Clone, Copy)]
#[doc(hidden)]
pub struct CountingSink {
    len: usize,
}

impl CountingSink {
    /// A counter at zero.
    #[inline]
    pub const fn new() -> CountingSink {
        CountingSink { len: 0 }
    }
}

impl Sink for CountingSink {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.put_zeros(bytes.len())
    }

    #[inline]
    fn put_zeros(&mut self, count: usize) -> Result<()> {
        self.len = self.len.checked_add(count).ok_or(Error::refused(
            Refusal::NotEncodable,
            "encoded length overflows usize",
        ))?;
        Ok(())
    }

    /// Counts the kept bytes; nothing is built.
    #[inline]
    fn put_built<const N: usize>(
        &mut self,
        len: usize,
        _: impl FnOnce(&mut [u8; N]),
    ) -> Result<()> {
        self.put_zeros(len.min(N))
    }

    #[inline]
    fn written(&self) -> usize {
        self.len
    }
}

#[cfg(feature = "inspect")]
impl Sink for alloc::vec::Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }

    #[inline]
    fn written(&self) -> usize {
        self.len()
    }
}

/// A sink over any `std::io::Write` (feature `std`): a file, a socket, a
/// `BufWriter`. The first I/O error stops the writer with
/// [`Refusal::Io`]; the `std::io::Error` itself is kept here
/// ([`IoSink::take_error`]), since Kiln's error type stays `Copy`.
#[cfg(feature = "std")]
#[derive(Debug)]
pub struct IoSink<W> {
    inner: W,
    written: usize,
    error: Option<std::io::Error>,
}

#[cfg(feature = "std")]
impl<W: std::io::Write> IoSink<W> {
    /// Writes into `inner`.
    pub const fn new(inner: W) -> IoSink<W> {
        IoSink {
            inner,
            written: 0,
            error: None,
        }
    }

    /// The I/O error that stopped the writer, if one did.
    #[doc(hidden)]
    pub fn take_error(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }

    /// The writer, after flushing it.
    pub fn into_inner(mut self) -> std::io::Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}

#[cfg(feature = "std")]
impl<W: std::io::Write> Sink for IoSink<W> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        if let Err(e) = self.inner.write_all(bytes) {
            self.error = Some(e);
            return Err(Error::refused(Refusal::Io, "the sink's writer failed"));
        }
        self.written = self.written.saturating_add(bytes.len());
        Ok(())
    }

    #[inline]
    fn written(&self) -> usize {
        self.written
    }
}

/// Encodes into a [`Sink`], refusing what its own reader would reject.
///
/// A hand-written [`Encode`](crate::Encode) writes its fields with their
/// own `encode` inside [`Writer::nested`]; the primitive writes are
/// hidden, as the reader's are.
#[derive(Debug)]
pub struct Writer<S> {
    sink: S,
    limits: Limits,
    depth: u8,
}

/// `count` as a count or length word, refused above `cap`.
#[inline]
fn capped(count: usize, cap: u32) -> Result<u32> {
    u32::try_from(count)
        .ok()
        .filter(|&c| c <= cap)
        .ok_or(Error::refused(
            Refusal::NotEncodable,
            "count or length above the cap",
        ))
}

impl<S: Sink> Writer<S> {
    /// A writer under the default caps.
    #[inline]
    pub fn new(sink: S) -> Writer<S> {
        Writer::with_limits(sink, Limits::DEFAULT)
    }

    /// A writer that refuses lengths above `limits`.
    #[inline]
    pub fn with_limits(sink: S, limits: Limits) -> Writer<S> {
        Writer {
            sink,
            limits,
            depth: 0,
        }
    }

    /// The caps in force.
    #[inline]
    #[doc(hidden)]
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The sink, with what was written.
    #[inline]
    pub fn into_sink(self) -> S {
        self.sink
    }

    /// Bytes written so far.
    #[inline]
    pub fn written(&self) -> usize {
        self.sink.written()
    }

    /// Appends raw bytes.
    #[inline]
    #[doc(hidden)]
    pub fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.sink.put(bytes)
    }

    /// Appends zero bytes.
    #[inline]
    #[doc(hidden)]
    pub fn put_zeros(&mut self, count: usize) -> Result<()> {
        self.sink.put_zeros(count)
    }

    /// Lends `len` bytes of the sink's memory to `fill`: [`Sink::put_lent`].
    #[inline]
    #[doc(hidden)]
    pub fn put_lent(&mut self, len: usize, fill: impl FnOnce(&mut [u8]) -> bool) -> bool {
        self.sink.put_lent(len, fill)
    }

    /// Lends the sink's next `len` bytes to `fill`, which writes all of
    /// them: [`Sink::put_whole`].
    #[inline]
    #[doc(hidden)]
    pub fn put_whole(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> bool {
        self.sink.put_whole(len, fill)
    }

    /// Appends the first `len` bytes (at most `N`) of an `N`-byte run that
    /// `fill` writes, every byte of them: [`Sink::put_built`].
    #[inline]
    #[doc(hidden)]
    pub fn put_built<const N: usize>(
        &mut self,
        len: usize,
        fill: impl FnOnce(&mut [u8; N]),
    ) -> Result<()> {
        self.sink.put_built(len, fill)
    }

    /// One byte.
    #[inline]
    #[doc(hidden)]
    pub fn u8(&mut self, value: u8) -> Result<()> {
        self.put(&[value])
    }

    /// A little-endian u16.
    #[inline]
    #[doc(hidden)]
    pub fn u16(&mut self, value: u16) -> Result<()> {
        self.put(&value.to_le_bytes())
    }

    /// A little-endian u32.
    #[inline]
    #[doc(hidden)]
    pub fn u32(&mut self, value: u32) -> Result<()> {
        self.put(&value.to_le_bytes())
    }

    /// A little-endian u64.
    #[inline]
    #[doc(hidden)]
    pub fn u64(&mut self, value: u64) -> Result<()> {
        self.put(&value.to_le_bytes())
    }

    /// A count or length word, refused above `cap`.
    #[inline]
    #[doc(hidden)]
    pub fn count(&mut self, count: usize, cap: u32) -> Result<()> {
        let count = capped(count, cap)?;
        self.u32(count)
    }

    /// A count word refused above `cap`, then `bytes` (a list's elements,
    /// already in wire order), behind one bounds check.
    #[inline]
    #[doc(hidden)]
    pub fn counted_run(&mut self, count: usize, cap: u32, bytes: &[u8]) -> Result<()> {
        let count = capped(count, cap)?;
        self.sink.put_run(count, bytes)
    }

    /// A length-prefixed byte run under the byte cap.
    #[inline]
    #[doc(hidden)]
    pub fn byte_run(&mut self, bytes: &[u8]) -> Result<()> {
        let len = u32::try_from(bytes.len())
            .ok()
            .filter(|&len| len <= self.limits.byte_cap)
            .ok_or(Error::refused(
                Refusal::NotEncodable,
                "count or length above the cap",
            ))?;
        self.sink.put_run(len, bytes)
    }

    /// Runs `body` one container deeper; a value the reader would find
    /// too deep is refused.
    #[inline]
    pub fn nested(&mut self, body: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::refused(
                Refusal::NotEncodable,
                "value nested inside more than 64 containers",
            ));
        }
        self.depth = self.depth.saturating_add(1);
        let result = body(self);
        self.depth = self.depth.saturating_sub(1);
        result
    }
}
