//! A Kiln [`Sink`] over any [`std::io::Write`], so the canonical builder
//! writes header, descriptors and payloads straight into a file.

use std::io::Write;

use kiln_nostd::{Refusal, Sink};

use crate::error::{Error, Result};

/// Every write a [`WriteSink`] gives its writer ends at a multiple of 64
/// KiB from the sink's first byte (but the last, and the writes around a
/// payload that goes straight to the writer); what is left over waits in
/// the buffer for the next write. For a file, Linux then caches a write
/// in large pages (folios) instead of 4 KiB ones. Writing a 4.5 MB file
/// in the pieces the MoE conversion makes (descriptors, then names and
/// payloads, about 180 KB and 155 KB a directory) took 1.24-1.30 ms
/// written as they came and 1.00-1.07 ms cut at 64 KiB boundaries
/// (medians of 300 interleaved runs; 256 KiB boundaries: 0.95-0.99 ms,
/// for four times the bytes moved to the buffer's front).
pub const WRITE_ALIGN: usize = 64 << 10;

/// The longest run or loan a [`WriteSink`] makes in its buffer: 256 KiB,
/// a directory of 2,000 descriptors. A longer buffer touches more fresh
/// pages (each a page fault): converting the 18,867-tensor MoE file with a
/// 1 MiB buffer took 8% and 14% longer than with 256 KiB.
pub const LOAN_LEN: usize = 256 << 10;

/// Buffer size of a [`WriteSink`]: a loan of [`LOAN_LEN`] bytes fits
/// after what a write leaves (less than [`WRITE_ALIGN`]).
pub const BUFFER_LEN: usize = LOAN_LEN + WRITE_ALIGN;

/// Writes at least this long (payloads) go straight from the input slice
/// to the writer, after what is buffered: copying them into the buffer
/// first costs a second pass over every byte, a large part of the
/// conversion's time for a model of many mid-sized tensors.
const DIRECT_LEN: usize = 64 << 10;

/// A [`Sink`] that gathers bytes in a buffer of its own in front of `W`,
/// and gives them to `W` in writes that end on a [`WRITE_ALIGN`]
/// boundary.
///
/// The buffer is the sink's rather than a [`std::io::BufWriter`]'s so that
/// the encoder can build a descriptor in it ([`Sink::put_built`]) instead
/// of building it aside and copying it in.
///
/// `Sink::put` can only report a Kiln error, so the first I/O error is kept
/// here and every later `put` fails at once; [`WriteSink::finish`] (or
/// [`WriteSink::take_error`]) gives the I/O error back. What is buffered is
/// written by `finish`, not when the sink is dropped.
///
/// ```
/// use kiln_convert::WriteSink;
/// use kiln_nostd::{Dtype, Encode, TensorSpec, Tensors, Writer};
///
/// let specs = [TensorSpec::new(Dtype::F32, &[2], &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0])];
/// let mut w = Writer::new(WriteSink::new(Vec::new()));
/// Tensors(&specs).encode(&mut w).unwrap();
/// let (bytes, written) = w.into_sink().finish().unwrap();
/// assert_eq!((bytes.len(), written), (200, 200));
/// ```
#[derive(Debug)]
pub struct WriteSink<W: Write> {
    out: W,
    /// [`BUFFER_LEN`] bytes, zeroed once; empty once a write failed, so
    /// that every later write takes the slow path, which fails it.
    buf: Box<[u8]>,
    /// The first `len` bytes of `buf` wait for `out`.
    len: usize,
    /// Bytes given to `out` so far.
    sent: usize,
    failed: Option<std::io::Error>,
}

impl<W: Write> WriteSink<W> {
    /// A sink that buffers [`BUFFER_LEN`] bytes in front of `out`.
    pub fn new(out: W) -> WriteSink<W> {
        WriteSink {
            out,
            buf: vec![0; BUFFER_LEN].into_boxed_slice(),
            len: 0,
            sent: 0,
            failed: None,
        }
    }

    /// The I/O error that stopped the sink, if one did.
    pub fn take_error(&mut self) -> Option<std::io::Error> {
        self.failed.take()
    }

    /// Appends `bytes` through the buffer (the path for writers that are
    /// not Kiln encoders, such as the GGUF writer).
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        match Sink::put(self, bytes) {
            Ok(()) => Ok(()),
            Err(e) => Err(match self.failed.take() {
                Some(io) => Error::io(io),
                None => Error::from_kiln(e, 0, "writing the output"),
            }),
        }
    }

    /// Appends `count` zero bytes.
    pub fn write_zeros(&mut self, count: usize) -> Result<()> {
        const ZEROS: [u8; 256] = [0; 256];
        let mut left = count;
        while left > 0 {
            let step = left.min(ZEROS.len());
            self.write_all(ZEROS.get(..step).unwrap_or_default())?;
            left -= step;
        }
        Ok(())
    }

    /// Bytes written so far.
    pub fn written_len(&self) -> u64 {
        self.written() as u64
    }

    /// Writes what is buffered and gives back the writer and how many bytes
    /// were written, or the first I/O error.
    pub fn finish(mut self) -> Result<(W, u64)> {
        if let Some(e) = self.failed.take() {
            return Err(Error::io(e));
        }
        self.flush().map_err(|()| match self.failed.take() {
            Some(e) => Error::io(e),
            None => Error::io(std::io::Error::other("the output write failed")),
        })?;
        Ok((self.out, self.sent as u64))
    }

    /// Gives all the buffered bytes to the writer; `Err` once a write
    /// failed (the error is in `failed`).
    fn flush(&mut self) -> core::result::Result<(), ()> {
        self.write_out(self.len)
    }

    /// Gives the buffered bytes up to the last multiple of [`WRITE_ALIGN`]
    /// (counted from the sink's first byte) to the writer, and moves what
    /// is left (less than [`WRITE_ALIGN`] bytes) to the front of the
    /// buffer.
    fn flush_whole(&mut self) -> core::result::Result<(), ()> {
        let end = self.sent.saturating_add(self.len);
        let whole = (end - end % WRITE_ALIGN).saturating_sub(self.sent);
        self.write_out(whole)
    }

    /// Gives the first `n` buffered bytes to the writer and moves the rest
    /// to the front.
    fn write_out(&mut self, n: usize) -> core::result::Result<(), ()> {
        if self.failed.is_some() {
            return Err(());
        }
        if n == 0 {
            return Ok(());
        }
        let pending = self.buf.get(..n).unwrap_or_default();
        if let Err(e) = self.out.write_all(pending) {
            self.fail(e);
            return Err(());
        }
        self.sent = self.sent.saturating_add(n);
        self.buf.copy_within(n..self.len, 0);
        self.len -= n;
        Ok(())
    }

    /// Keeps the first I/O error and stops the sink.
    #[cold]
    fn fail(&mut self, e: std::io::Error) {
        self.failed = Some(e);
        self.buf = Box::default();
        self.len = 0;
    }

    /// [`Sink::put`] of what does not fit in the room left (or is long):
    /// the aligned part goes to the writer, then `bytes` go into the
    /// buffer; long ones go to the writer after all that is buffered.
    #[inline(never)]
    fn put_past_room(&mut self, bytes: &[u8]) -> kiln_nostd::Result<()> {
        if bytes.len() >= DIRECT_LEN {
            self.flush().map_err(|()| stopped())?;
            if let Err(e) = self.out.write_all(bytes) {
                self.fail(e);
                return Err(stopped());
            }
            self.sent = self.sent.saturating_add(bytes.len());
            return Ok(());
        }
        self.flush_whole().map_err(|()| stopped())?;
        self.put(bytes)
    }
}

impl<W: Write> WriteSink<W> {
    /// Makes room for a [`Sink::put_built`] run or a loan of `n` bytes:
    /// gives the aligned part to the writer; when the room is still short
    /// (`n` above [`LOAN_LEN`]), everything, and grows the buffer if it is
    /// shorter than `n`. Out of line, and not generic over the run's
    /// `fill`, which `put_built` then calls in one place (so it is inlined
    /// there).
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, n: usize) -> kiln_nostd::Result<()> {
        self.flush_whole().map_err(|()| stopped())?;
        if self.buf.len() - self.len < n {
            self.flush().map_err(|()| stopped())?;
            if self.buf.len() < n {
                self.buf = vec![0; n].into_boxed_slice();
            }
        }
        Ok(())
    }
}

impl<W: Write> Sink for WriteSink<W> {
    // Inlined (always: the compiler declines for this many callers), so
    // that the encoder's names and small fields are copied into the buffer
    // without a call each.
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) -> kiln_nostd::Result<()> {
        let end = self.len.wrapping_add(bytes.len());
        match self.buf.get_mut(self.len..end) {
            Some(room) if bytes.len() < DIRECT_LEN => {
                room.copy_from_slice(bytes);
                self.len = end;
                Ok(())
            }
            _ => self.put_past_room(bytes),
        }
    }

    /// Built in the buffer itself, after a flush when the room left is
    /// short. Inlined with `fill`, whose stores then go straight to the
    /// buffer.
    #[inline(always)]
    fn put_built<const N: usize>(
        &mut self,
        len: usize,
        fill: impl FnOnce(&mut [u8; N]),
    ) -> kiln_nostd::Result<()> {
        if self.buf.len() - self.len < N {
            self.make_room(N)?;
        }
        // Never `None`: `make_room` made room, or failed.
        let run = self
            .buf
            .get_mut(self.len..)
            .and_then(<[u8]>::first_chunk_mut::<N>)
            .ok_or_else(stopped)?;
        fill(run);
        self.len += len.min(N);
        Ok(())
    }

    /// Lends bytes of the buffer past those waiting (after a flush when
    /// the room left is short); declines a loan longer than [`LOAN_LEN`],
    /// and once a write failed. What is not kept stays unwritten scratch.
    #[inline]
    fn put_lent(&mut self, len: usize, fill: impl FnOnce(&mut [u8]) -> bool) -> bool {
        if len > LOAN_LEN {
            return false;
        }
        if self.buf.len() - self.len < len && self.make_room(len).is_err() {
            return false;
        }
        let end = self.len + len;
        let kept = self.buf.get_mut(self.len..end).is_some_and(fill);
        if kept {
            self.len = end;
        }
        kept
    }

    fn written(&self) -> usize {
        self.sent.saturating_add(self.len)
    }
}

#[cold]
fn stopped() -> kiln_nostd::Error {
    kiln_nostd::Error::refused(Refusal::BufferTooSmall, "the output write failed")
}

/// Turns a failed Kiln encode into our error: the sink's I/O error when it
/// stopped the encoder, else the encoder's own refusal.
pub(crate) fn encode_error<W: Write>(
    sink: &mut WriteSink<W>,
    e: kiln_nostd::Error,
    context: &str,
) -> Error {
    match sink.take_error() {
        Some(io) => Error::io(io),
        None => Error::from_kiln(e, 0, context),
    }
}

/// Writes one framed Kiln message to `out` through `body` and flushes it;
/// returns the bytes written. An encoder error caused by the writer
/// failing becomes that I/O error.
pub(crate) fn write_message<W: Write>(
    out: W,
    body: impl FnOnce(&mut kiln_nostd::Writer<WriteSink<W>>) -> kiln_nostd::Result<()>,
) -> Result<u64> {
    let mut w = kiln_nostd::Writer::with_limits(WriteSink::new(out), crate::LIMITS);
    let result = body(&mut w);
    let mut sink = w.into_sink();
    if let Err(e) = result {
        return Err(encode_error(&mut sink, e, "writing the Kiln message"));
    }
    let (_, written) = sink.finish()?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_writes_go_around_the_buffer_in_order() {
        let long: Vec<u8> = (0..DIRECT_LEN + 3).map(|i| i as u8).collect();
        let mut sink = WriteSink::new(Vec::new());
        sink.put(b"head").unwrap();
        sink.put(&long).unwrap();
        sink.write_all(b"tail").unwrap();
        sink.write_all(&long).unwrap();
        let (bytes, written) = sink.finish().unwrap();
        let expected = [&b"head"[..], &long, b"tail", &long].concat();
        assert_eq!(bytes, expected);
        assert_eq!(written, expected.len() as u64);
    }

    /// A run built in the buffer is kept as built, the bytes past `len`
    /// dropped: in the room left, where the room is short (the whole
    /// writes go out first), and longer than the whole buffer (it grows).
    #[test]
    fn built_runs_land_in_order() {
        let fill = |run: &mut [u8; 128]| {
            for (i, b) in run.iter_mut().enumerate() {
                *b = i as u8;
            }
        };
        let mut sink = WriteSink::new(Writes::default());
        sink.put_built(100, fill).unwrap();
        // Buffered (each below DIRECT_LEN), leaving 60 bytes of room.
        let head = vec![9u8; BUFFER_LEN - 100 - 60];
        for piece in head.chunks(1024) {
            sink.put(piece).unwrap();
        }
        assert_eq!(sink.out.bytes.len(), 0);
        // No room: what ends on the last boundary goes out, the rest stays.
        sink.put_built(128, fill).unwrap();
        let waited = BUFFER_LEN - 60;
        assert_eq!(sink.out.bytes.len(), waited - waited % WRITE_ALIGN);
        sink.put_built(0, fill).unwrap();
        let mut long = vec![0u8; BUFFER_LEN + 5];
        sink.put_built::<{ BUFFER_LEN + 8 }>(BUFFER_LEN + 5, |run| {
            run.fill(3);
            long.fill(3);
        })
        .unwrap();
        sink.put(b"end").unwrap();
        assert_eq!(sink.written(), 100 + head.len() + 128 + long.len() + 3);
        let (out, written) = sink.finish().unwrap();
        let run: Vec<u8> = (0..128).collect();
        let expected = [&run[..100], &head, &run, &long, b"end"].concat();
        assert_eq!(out.bytes, expected);
        assert_eq!(written, expected.len() as u64);
    }

    /// A loan is of the buffer past what waits (what ends on the last
    /// boundary goes out first when the room is short); a declined fill
    /// keeps nothing; a loan longer than [`LOAN_LEN`], or after a failed
    /// write, is declined.
    #[test]
    fn loans_keep_what_fill_keeps() {
        let mut sink = WriteSink::new(Writes::default());
        sink.put(b"ab").unwrap();
        assert!(!sink.put_lent(4, |region| {
            region.copy_from_slice(b"nope");
            false
        }));
        assert!(sink.put_lent(3, |region| {
            region.copy_from_slice(b"cde");
            true
        }));
        let head = vec![9u8; BUFFER_LEN - 10];
        for piece in head.chunks(1024) {
            sink.put(piece).unwrap();
        }
        assert!(sink.put_lent(20, |region| {
            region.fill(4);
            true
        }));
        let waited = 5 + head.len();
        assert_eq!(sink.out.bytes.len(), waited - waited % WRITE_ALIGN);
        assert!(!sink.put_lent(LOAN_LEN + 1, |_| true));
        assert!(sink.put_lent(LOAN_LEN, |region| {
            region.fill(5);
            true
        }));
        let (out, written) = sink.finish().unwrap();
        let expected = [&b"abcde"[..], &head, &[4; 20], &[5; LOAN_LEN]].concat();
        assert_eq!(out.bytes, expected);
        assert_eq!(written, expected.len() as u64);
        // A loan that needs the writer, which fails: declined, and every
        // later one too.
        let mut sink = WriteSink::new(Full { left: 0 });
        for piece in head.chunks(1024) {
            sink.put(piece).unwrap();
        }
        assert!(!sink.put_lent(LOAN_LEN, |_| true));
        assert!(!sink.put_lent(1, |_| true));
        assert_eq!(sink.finish().unwrap_err().kind(), crate::ErrorKind::Io);
    }

    /// Every write the writer sees ends at a multiple of [`WRITE_ALIGN`],
    /// but the last one, a long payload's (which goes to the writer
    /// directly) and the one just before it (all that was buffered); the
    /// bytes are those given, in order. Seeded runs of puts, built runs and
    /// loans of every size the encoder makes.
    #[test]
    fn writes_are_whole_and_aligned() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        for _ in 0..20 {
            let mut sink = WriteSink::new(Writes::default());
            let mut expected = Vec::new();
            let mut direct_at = Vec::new();
            while expected.len() < 3 * BUFFER_LEN {
                let byte = expected.len() as u8;
                match next(10) {
                    0..=3 => {
                        let bytes = vec![byte; next(300)];
                        sink.put(&bytes).unwrap();
                        expected.extend_from_slice(&bytes);
                    }
                    4..=5 => {
                        let n = next(129);
                        sink.put_built::<128>(n, |run| run.fill(byte)).unwrap();
                        expected.extend(std::iter::repeat_n(byte, n));
                    }
                    6..=8 => {
                        let n = next(LOAN_LEN + 1);
                        assert!(sink.put_lent(n, |region| {
                            region.fill(byte);
                            true
                        }));
                        expected.extend(std::iter::repeat_n(byte, n));
                    }
                    _ => {
                        let bytes = vec![byte; DIRECT_LEN + next(LOAN_LEN)];
                        direct_at.push(expected.len());
                        sink.put(&bytes).unwrap();
                        expected.extend_from_slice(&bytes);
                    }
                }
            }
            let (out, _) = sink.finish().unwrap();
            assert_eq!(out.bytes, expected);
            let last = out.writes.len() - 1;
            for (k, &(at, len)) in out.writes.iter().enumerate() {
                let direct = direct_at.contains(&at) || direct_at.contains(&(at + len));
                if k == last || direct {
                    continue;
                }
                assert_eq!(
                    (at + len) % WRITE_ALIGN,
                    0,
                    "write {k}: {len} bytes at {at}"
                );
            }
            assert!(out.writes.len() > 3 * BUFFER_LEN / LOAN_LEN);
        }
    }

    /// Keeps the bytes and where each write started and how long it was.
    #[derive(Debug, Default)]
    struct Writes {
        bytes: Vec<u8>,
        writes: Vec<(usize, usize)>,
    }

    impl Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.writes.push((self.bytes.len(), buf.len()));
            self.bytes.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_flush_before_a_built_run_is_the_io_error() {
        let mut sink = WriteSink::new(Full { left: 10 });
        let piece = [1u8; 1024];
        for _ in 0..BUFFER_LEN / piece.len() - 1 {
            sink.put(&piece).unwrap(); // buffered: the writer not yet called
        }
        sink.put(&piece[..piece.len() - 8]).unwrap();
        assert!(sink
            .put_built(16, |run: &mut [u8; 16]| *run = [2; 16])
            .is_err());
        // Stopped: nothing more goes in, and finish gives the I/O error.
        assert!(sink.put(b"x").is_err());
        assert!(sink.put_built(1, |run: &mut [u8; 1]| *run = [2]).is_err());
        assert_eq!(sink.finish().unwrap_err().kind(), crate::ErrorKind::Io);
        // A write that fails in `finish` is its error too.
        let mut sink = WriteSink::new(Full { left: 10 });
        sink.put_built(16, |run: &mut [u8; 16]| *run = [2; 16])
            .unwrap();
        assert_eq!(sink.finish().unwrap_err().kind(), crate::ErrorKind::Io);
    }

    /// Takes `left` bytes, then fails.
    #[derive(Debug)]
    struct Full {
        left: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return Err(std::io::Error::other("disk full"));
            }
            let n = buf.len().min(self.left);
            self.left -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_long_write_is_the_io_error() {
        let long = vec![7u8; DIRECT_LEN];
        let mut sink = WriteSink::new(Full { left: 10 });
        let err = sink.write_all(&long).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Io);
        let mut sink = WriteSink::new(Full { left: 10 });
        assert!(sink.put(&long).is_err());
        assert_eq!(sink.finish().unwrap_err().kind(), crate::ErrorKind::Io);
    }
}
