//! A Kiln [`Sink`] over any [`std::io::Write`], so the canonical builder
//! writes header, descriptors and payloads straight into a file.

use std::io::{BufWriter, Write};

use kiln_nostd::{Refusal, Sink};

use crate::error::{Error, Result};

/// Buffer size of the [`BufWriter`] inside a [`WriteSink`]: 256 KiB. A
/// larger one makes fewer `write` calls but touches more fresh pages (each
/// a page fault) and falls out of the cache: converting the 18,867-tensor
/// MoE file, 1 MiB took 8% and 14% longer than 256 KiB in two
/// interleaved runs (and made 194 more page faults); 64 KiB and 128 KiB
/// were no faster than 256 KiB.
pub const BUFFER_LEN: usize = 256 << 10;

/// Writes at least this long (payloads) go straight from the input slice
/// to the writer, after what is buffered: copying them into the buffer
/// first costs a second pass over every byte, which for a model of many
/// mid-sized tensors was a fifth of the conversion's time.
const DIRECT_LEN: usize = 64 << 10;

/// A [`Sink`] that appends to a [`BufWriter`] over `W`.
///
/// `Sink::put` can only report a Kiln error, so the first I/O error is kept
/// here and every later `put` fails at once; [`WriteSink::finish`] (or
/// [`WriteSink::take_error`]) gives the I/O error back.
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
    out: BufWriter<W>,
    written: usize,
    failed: Option<std::io::Error>,
}

impl<W: Write> WriteSink<W> {
    /// A sink that buffers [`BUFFER_LEN`] bytes in front of `out`.
    pub fn new(out: W) -> WriteSink<W> {
        WriteSink {
            out: BufWriter::with_capacity(BUFFER_LEN, out),
            written: 0,
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
        self.written as u64
    }

    /// Flushes the buffer and gives back the writer and how many bytes were
    /// written, or the first I/O error.
    pub fn finish(mut self) -> Result<(W, u64)> {
        if let Some(e) = self.failed.take() {
            return Err(Error::io(e));
        }
        let written = self.written as u64;
        let out = self
            .out
            .into_inner()
            .map_err(|e| Error::io(e.into_error()))?;
        Ok((out, written))
    }
}

impl<W: Write> Sink for WriteSink<W> {
    // Inlined, so that the encoder's many small fields (a descriptor is 25
    // of them) are copied into the buffer without a call each.
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> kiln_nostd::Result<()> {
        if self.failed.is_some() {
            return Err(stopped());
        }
        if bytes.len() >= DIRECT_LEN {
            return self.put_direct(bytes);
        }
        match self.out.write_all(bytes) {
            Ok(()) => {
                self.written = self.written.saturating_add(bytes.len());
                Ok(())
            }
            Err(e) => {
                self.failed = Some(e);
                Err(stopped())
            }
        }
    }

    fn written(&self) -> usize {
        self.written
    }
}

impl<W: Write> WriteSink<W> {
    /// Flushes the buffer, then writes `bytes` to the writer itself.
    #[inline(never)]
    fn put_direct(&mut self, bytes: &[u8]) -> kiln_nostd::Result<()> {
        let result = self
            .out
            .flush()
            .and_then(|()| self.out.get_mut().write_all(bytes));
        match result {
            Ok(()) => {
                self.written = self.written.saturating_add(bytes.len());
                Ok(())
            }
            Err(e) => {
                self.failed = Some(e);
                Err(stopped())
            }
        }
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
