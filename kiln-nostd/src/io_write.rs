//! Streaming encode to `embedded-io` writers (feature `embedded-io`) and
//! `embedded-io-async` writers (feature `embedded-io-async`): a UART, a
//! USB endpoint, a socket, with no buffer for the whole message.
//!
//! The encoder writes through a [`Sink`] in order: a record's fields one
//! after another, a list's elements, a directory's header, descriptors,
//! name heap and then each payload straight from the caller's slice. So a
//! sink over a writer is all a blocking stream needs ([`EmbeddedIoSink`],
//! [`to_writer`]). A record with a `tensors` field streams its tensors from
//! their specs with no block buffer: write its fields in order with
//! [`Writer::nested`](crate::Writer::nested), the tensors one as
//! [`Tensors`](crate::Tensors) (the bytes are those of the derived struct
//! holding the built [`Directory`](crate::Directory)):
//!
//! ```
//! # #[cfg(feature = "embedded-io")] {
//! use kiln_nostd::io_write::EmbeddedIoSink;
//! use kiln_nostd::{Encode, TensorSpec, Tensors, Writer};
//!
//! let weights = [1.0f32, -2.0, 0.5];
//! let specs = [TensorSpec::from_host(&[3], &weights).named("w")];
//! let mut out = [0u8; 512]; // stands for a UART: `&mut [u8]` is an embedded-io Write
//! let mut w = Writer::new(EmbeddedIoSink::new(&mut out[..]));
//! w.nested(|w| {
//!     7i64.encode(w)?;
//!     "probe".encode(w)?;
//!     Tensors(&specs).encode(w)
//! })
//! .unwrap();
//! // id and name, then the block: header and descriptor (192 bytes), the
//! // name heap, the payload at 256 from the block's start, its 12 bytes.
//! assert_eq!(w.written(), 8 + 4 + 5 + 256 + 12);
//! # }
//! ```
//!
//! An async writer cannot be awaited from inside the encoder, which is
//! synchronous. [`to_async_writer`] stays synchronous by construction: it
//! runs the encoder once per chunk of a staging buffer the caller gives,
//! keeping only the bytes of that chunk (everything before it is counted,
//! not copied, and the run stops as the chunk fills), then awaits the
//! write of the chunk. Memory is the staging buffer; time is one encoder
//! run per chunk, each as far as its chunk, so pick the staging buffer as
//! large as the link's own buffer (a few hundred bytes turn a
//! kilobyte-sized record into a handful of runs). Payloads are copied only
//! into the chunk that carries them.

use core::fmt;

use crate::error::{Error, Result};
use crate::frozen::Encode;
use crate::wire::{Sink, Writer};

/// Why a streaming encode stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteError<E> {
    /// The encoder refused the value (the same error [`crate::to_slice`]
    /// gives; never a buffer that is too small).
    Encode(Error),
    /// The writer failed; its own error.
    Io(E),
    /// The writer accepted none of a non-empty write (`Ok(0)`), so the
    /// stream cannot go on.
    Stalled,
}

impl<E> From<Error> for WriteError<E> {
    fn from(e: Error) -> Self {
        WriteError::Encode(e)
    }
}

impl<E: fmt::Debug> fmt::Display for WriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Encode(e) => write!(f, "{e}"),
            WriteError::Io(e) => write!(f, "the writer failed: {e:?}"),
            WriteError::Stalled => f.write_str("the writer accepted no bytes"),
        }
    }
}

impl<E: fmt::Debug> core::error::Error for WriteError<E> {}

#[cfg(feature = "defmt")]
impl<E> defmt::Format for WriteError<E> {
    fn format(&self, f: defmt::Formatter<'_>) {
        match self {
            WriteError::Encode(e) => defmt::write!(f, "{}", e),
            WriteError::Io(_) => defmt::write!(f, "the writer failed"),
            WriteError::Stalled => defmt::write!(f, "the writer accepted no bytes"),
        }
    }
}

// ---------------------------------------------------------------------------
// Blocking: a sink over embedded_io::Write

/// A sink over an `embedded_io::Write` (feature `embedded-io`). The first
/// failure of the writer stops the encoder with
/// [`Refusal::Io`](crate::Refusal::Io); the writer's own error is kept
/// here ([`EmbeddedIoSink::take_error`]), since Kiln's error type stays
/// `Copy` and knows no writer.
#[cfg(feature = "embedded-io")]
#[derive(Debug)]
pub struct EmbeddedIoSink<W: embedded_io::ErrorType> {
    inner: W,
    written: usize,
    error: Option<WriteError<W::Error>>,
}

#[cfg(feature = "embedded-io")]
impl<W: embedded_io::Write> EmbeddedIoSink<W> {
    /// Writes into `inner`.
    pub const fn new(inner: W) -> Self {
        EmbeddedIoSink {
            inner,
            written: 0,
            error: None,
        }
    }

    /// What stopped the writer ([`WriteError::Io`] or
    /// [`WriteError::Stalled`]), if anything did.
    #[doc(hidden)]
    pub fn take_error(&mut self) -> Option<WriteError<W::Error>> {
        self.error.take()
    }

    /// The writer, after flushing it.
    pub fn into_inner(mut self) -> core::result::Result<W, W::Error> {
        self.inner.flush()?;
        Ok(self.inner)
    }

    /// The writer's failure as the encoder's error, or the encoder's own.
    pub(crate) fn stop(&mut self, e: Error) -> WriteError<W::Error> {
        self.take_error().unwrap_or(WriteError::Encode(e))
    }
}

#[cfg(feature = "embedded-io")]
impl<W: embedded_io::Write> Sink for EmbeddedIoSink<W> {
    fn put(&mut self, mut bytes: &[u8]) -> Result<()> {
        // A loop of our own rather than `write_all`, which panics on a
        // writer that accepts nothing.
        while !bytes.is_empty() {
            match self.inner.write(bytes) {
                Ok(0) => return Err(self.fail(WriteError::Stalled)),
                Ok(n) => {
                    bytes = bytes.get(n..).unwrap_or_default();
                    self.written = self.written.saturating_add(n);
                }
                Err(e) => return Err(self.fail(WriteError::Io(e))),
            }
        }
        Ok(())
    }

    fn written(&self) -> usize {
        self.written
    }
}

#[cfg(feature = "embedded-io")]
impl<W: embedded_io::Write> EmbeddedIoSink<W> {
    #[cold]
    fn fail(&mut self, why: WriteError<W::Error>) -> Error {
        self.error = Some(why);
        Error::refused(crate::Refusal::Io, "the sink's writer failed")
    }
}

/// Encodes `value` into `writer` as it goes, with no buffer for the
/// message: the bytes of [`crate::to_slice`]. Returns the bytes written.
/// The writer is not flushed (a flush is the caller's, once per message
/// or per batch).
///
/// ```
/// # #[cfg(feature = "embedded-io")] {
/// use kiln_nostd::{io_write::to_writer, to_slice};
/// let mut sent = [0u8; 16];
/// let n = to_writer("hi", &mut sent[..]).unwrap();
/// let mut buf = [0u8; 16];
/// assert_eq!(&sent[..n], to_slice("hi", &mut buf).unwrap());
/// # }
/// ```
#[cfg(feature = "embedded-io")]
pub fn to_writer<T: Encode + ?Sized, W: embedded_io::Write>(
    value: &T,
    writer: W,
) -> core::result::Result<usize, WriteError<W::Error>> {
    let mut w = Writer::new(EmbeddedIoSink::new(writer));
    match value.encode(&mut w) {
        Ok(()) => Ok(w.written()),
        Err(e) => Err(w.into_sink().stop(e)),
    }
}

/// [`to_writer`] with the 16-byte frame first: the bytes of
/// [`crate::to_frame_slice`].
#[cfg(feature = "embedded-io")]
pub fn to_frame_writer<T: Encode + ?Sized, W: embedded_io::Write>(
    value: &T,
    writer: W,
) -> core::result::Result<usize, WriteError<W::Error>> {
    let mut w = Writer::new(EmbeddedIoSink::new(writer));
    match crate::frame::write_header(&mut w, T::HASH).and_then(|()| value.encode(&mut w)) {
        Ok(()) => Ok(w.written()),
        Err(e) => Err(w.into_sink().stop(e)),
    }
}

// ---------------------------------------------------------------------------
// Async: the encoder run once per chunk of a staging buffer

/// The sink of one run of [`encode_async`]: it counts every byte, keeps
/// those that fall in `skip..skip + chunk.len()`, and stops the run once
/// the chunk is full. Public only because the encode closure of
/// [`encode_async`] names it.
#[cfg(feature = "embedded-io-async")]
#[derive(Debug)]
pub struct ChunkSink<'c> {
    chunk: &'c mut [u8],
    skip: usize,
    pos: usize,
    full: bool,
}

#[cfg(feature = "embedded-io-async")]
impl<'c> ChunkSink<'c> {
    fn new(chunk: &'c mut [u8], skip: usize) -> Self {
        ChunkSink {
            chunk,
            skip,
            pos: 0,
            full: false,
        }
    }

    /// Bytes kept in the chunk.
    fn kept(&self) -> usize {
        self.pos.saturating_sub(self.skip).min(self.chunk.len())
    }
}

#[cfg(feature = "embedded-io-async")]
impl Sink for ChunkSink<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let start = self.pos;
        let end = start.saturating_add(bytes.len());
        let window_end = self.skip.saturating_add(self.chunk.len());
        if end > self.skip && start < window_end {
            let from = self.skip.max(start);
            let to = window_end.min(end);
            let src = bytes.get(from - start..to - start).unwrap_or_default();
            if let Some(dst) = self.chunk.get_mut(from - self.skip..to - self.skip) {
                dst.copy_from_slice(src);
            }
        }
        self.pos = end;
        if end >= window_end {
            // Not a failure: the run has what this chunk needs.
            self.full = true;
            return Err(Error::refused(
                crate::Refusal::BufferTooSmall,
                "staging chunk full",
            ));
        }
        Ok(())
    }

    fn written(&self) -> usize {
        self.pos
    }
}

/// Writes all of `bytes` to an async writer.
#[cfg(feature = "embedded-io-async")]
async fn write_all_async<W: embedded_io_async::Write>(
    writer: &mut W,
    mut bytes: &[u8],
) -> core::result::Result<(), WriteError<W::Error>> {
    while !bytes.is_empty() {
        match writer.write(bytes).await {
            Ok(0) => return Err(WriteError::Stalled),
            Ok(n) => bytes = bytes.get(n..).unwrap_or_default(),
            Err(e) => return Err(WriteError::Io(e)),
        }
    }
    Ok(())
}

/// Streams what `encode` writes into an async `writer`, one chunk of
/// `staging` at a time (see the module docs). `encode` runs once per chunk
/// and must write the same bytes every time (any encoder of a value that
/// does not change does). Returns the bytes written; the writer is not
/// flushed. An empty `staging` is refused
/// ([`Refusal::BufferTooSmall`](crate::Refusal::BufferTooSmall)).
#[cfg(feature = "embedded-io-async")]
pub async fn encode_async<W, F>(
    mut writer: W,
    staging: &mut [u8],
    mut encode: F,
) -> core::result::Result<usize, WriteError<W::Error>>
where
    W: embedded_io_async::Write,
    F: FnMut(&mut Writer<ChunkSink<'_>>) -> Result<()>,
{
    if staging.is_empty() {
        return Err(WriteError::Encode(Error::refused(
            crate::Refusal::BufferTooSmall,
            "empty staging buffer",
        )));
    }
    let mut sent = 0usize;
    loop {
        let mut w = Writer::new(ChunkSink::new(staging, sent));
        let outcome = encode(&mut w);
        let sink = w.into_sink();
        let done = match outcome {
            Ok(()) => true,
            Err(_) if sink.full => false,
            Err(e) => return Err(WriteError::Encode(e)),
        };
        let kept = sink.kept();
        write_all_async(&mut writer, staging.get(..kept).unwrap_or_default()).await?;
        sent = sent.saturating_add(kept);
        if done {
            return Ok(sent);
        }
    }
}

/// Encodes `value` into an async `writer` through `staging`: the bytes of
/// [`crate::to_slice`], with memory for one chunk, not the message.
///
/// ```
/// # #[cfg(feature = "embedded-io-async")] {
/// # fn block_on<F: core::future::Future>(f: F) -> F::Output {
/// #     let mut f = core::pin::pin!(f);
/// #     let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
/// #     loop { if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v; } }
/// # }
/// use kiln_nostd::{io_write::to_async_writer, to_slice};
/// let mut sent = [0u8; 32];
/// let mut staging = [0u8; 4];
/// let value = [3u32, 1, 4, 1, 5];
/// let n = block_on(to_async_writer(&value, &mut sent[..], &mut staging)).unwrap();
/// let mut buf = [0u8; 32];
/// assert_eq!(&sent[..n], to_slice(&value, &mut buf).unwrap());
/// # }
/// ```
#[cfg(feature = "embedded-io-async")]
pub async fn to_async_writer<T: Encode + ?Sized, W: embedded_io_async::Write>(
    value: &T,
    writer: W,
    staging: &mut [u8],
) -> core::result::Result<usize, WriteError<W::Error>> {
    encode_async(writer, staging, |w| value.encode(w)).await
}

/// [`to_async_writer`] with the 16-byte frame first: the bytes of
/// [`crate::to_frame_slice`].
#[cfg(feature = "embedded-io-async")]
pub async fn to_frame_async_writer<T: Encode + ?Sized, W: embedded_io_async::Write>(
    value: &T,
    writer: W,
    staging: &mut [u8],
) -> core::result::Result<usize, WriteError<W::Error>> {
    encode_async(writer, staging, |w| {
        crate::frame::write_header(w, T::HASH)?;
        value.encode(w)
    })
    .await
}
