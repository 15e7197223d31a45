//! Streaming decode over `embedded-io` (and `embedded-io-async`): the
//! [`Checker`] driven by a reader, payloads handed to a [`PayloadSink`]
//! as they arrive, the record's other fields decoded once the whole
//! message has passed.

use super::checker::{Checker, Need, Part, Report};
use crate::error::{Error, Refusal, Result};
use crate::frozen::Decode;
use crate::limits::Options;
use crate::schema::CompiledType;

/// Where a streaming decoder puts the tensors of a message as they arrive:
/// a flash writer, a file, a hash. Nothing it receives is valid until the
/// decode returns `Ok`: mark the stored copy valid only then.
pub trait PayloadSink {
    /// The head of `tensors` value `block` of the message (from 0): its
    /// header, descriptors, name heap and padding, checked, before its
    /// payloads. A sink that stores the block for parsing it in place
    /// later writes it at the block's offset 0, each payload run at its
    /// [`Part::block_offset`], and zeros between (the alignment gaps, which
    /// the check proves zero). The default ignores it.
    fn head(&mut self, block: u32, head: &[u8]) -> Result<()> {
        let _ = (block, head);
        Ok(())
    }

    /// The next `bytes` of a tensor's payload, in order; `part` says whose
    /// and where. A payload may come in many runs.
    fn payload(&mut self, part: Part, bytes: &[u8]) -> Result<()>;
}

/// A sink that drops every payload: check only.
#[derive(Copy, Clone, Debug, Default)]
pub struct Discard;

impl PayloadSink for Discard {
    fn payload(&mut self, _: Part, _: &[u8]) -> Result<()> {
        Ok(())
    }
}

/// Why a streaming read stopped: the reader's own error, or Kiln's (a wire
/// code, or a refusal such as a scratch too small).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReadError<E> {
    /// The reader failed.
    Io(E),
    /// The bytes, or the request.
    Kiln(Error),
}

impl<E> From<Error> for ReadError<E> {
    fn from(e: Error) -> Self {
        ReadError::Kiln(e)
    }
}

impl<E: core::fmt::Debug> core::fmt::Display for ReadError<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "the reader failed: {e:?}"),
            ReadError::Kiln(e) => write!(f, "{e}"),
        }
    }
}

/// Where the next read goes, and whose payload it carries.
fn next_read<const N: usize>(checker: &mut Checker<'_, '_, '_, N>) -> Result<Option<Option<Part>>> {
    Ok(match checker.need()? {
        Need::Done => None,
        Need::Bytes { payload, .. } => Some(payload),
        Need::Payload { part, .. } => Some(Some(part)),
        Need::End => Some(None),
    })
}

/// After a read of `n` bytes into [`Checker::unfilled`] (`n == 0`: the
/// input ended): payload bytes to the sink, then to the checker, then a
/// head just checked to the sink.
fn after_read<S: PayloadSink, const N: usize>(
    checker: &mut Checker<'_, '_, '_, N>,
    sink: &mut S,
    part: Option<Part>,
    n: usize,
) -> Result<()> {
    if n == 0 {
        return checker.end();
    }
    if let Some(part) = part {
        let bytes = checker.unfilled();
        sink.payload(part, bytes.get(..n).unwrap_or(bytes))?;
    }
    checker.filled(n)?;
    if let Some((block, head)) = checker.take_head() {
        sink.head(block, head)?;
    }
    Ok(())
}

/// The report, and the record decoded into `place` from the image a
/// keeping checker left, `Done`.
fn decode_image<'s, T: Decode<'s>, const N: usize>(
    checker: Checker<'_, '_, 's, N>,
    options: Options,
    place: &mut T,
) -> Result<Report> {
    let report = checker.report();
    let image = checker.into_image().ok_or(Error::refused(
        Refusal::WrongValue,
        "the check ended without a record image",
    ))?;
    if options.is_framed() {
        crate::frozen::from_frame_into_with(image, options.limits, place)?;
    } else {
        crate::frozen::from_bytes_into_with(image, options.limits, place)?;
    }
    Ok(report)
}

fn same_type<T: crate::Frozen, const N: usize>(ty: &CompiledType<'_, N>) -> Result<()> {
    if ty.hash() != T::HASH {
        return Err(Error::refused(
            Refusal::WrongValue,
            "the compiled type is not the record's type",
        ));
    }
    Ok(())
}

/// Reads one message of type `ty` from `reader` until it ends (a read of
/// 0 bytes), checking every rule as the bytes pass and handing each
/// tensor's payload to `sink` as it arrives; no buffer holds the message.
/// The verdict, code and offset are [`crate::check()`]'s on the whole
/// message. `scratch` holds what [`super::scratch_for`] says (the
/// largest directory head plus a byte, the keys of open dicts, a few bytes
/// more: docs/streaming.md); a smaller one is refused
/// ([`Refusal::Capacity`]).
///
/// ```
/// use kiln_nostd::stream::{check_from, Part, PayloadSink};
/// use kiln_nostd::{CompiledType, Directory, Options, TensorSpec};
///
/// /// Counts payload bytes, as a flash writer would write them.
/// struct Flash(usize);
/// impl PayloadSink for Flash {
///     fn payload(&mut self, _: Part, bytes: &[u8]) -> kiln_nostd::Result<()> {
///         self.0 += bytes.len();
///         Ok(())
///     }
/// }
///
/// let weights = [0.25f32; 256];
/// let mut block = [0u8; 2048];
/// let dir = Directory::build(&[TensorSpec::from_host(&[256], &weights).named("w")], &mut block).unwrap();
/// let message: &[u8] = dir.as_bytes(); // embedded-io's Read for &[u8]
/// let ty = CompiledType::<4>::parse("tensors").unwrap();
/// let mut scratch = [0u8; 300]; // the 256-byte head, and room to pass payload bytes
/// let mut flash = Flash(0);
/// check_from(&ty, Options::BARE, message, &mut scratch, &mut flash).unwrap();
/// assert_eq!(flash.0, 1024);
/// ```
pub fn check_from<R: embedded_io::Read, S: PayloadSink, const N: usize>(
    ty: &CompiledType<'_, N>,
    options: Options,
    mut reader: R,
    scratch: &mut [u8],
    sink: &mut S,
) -> core::result::Result<Report, ReadError<R::Error>> {
    let mut checker = Checker::new(ty, options, scratch);
    pull(&mut checker, &mut reader, sink)?;
    Ok(checker.report())
}

/// The read loop of [`pull`] and `pull_async`, written once: `$read`
/// reads from the reader into `$buf` (awaiting, in the async one) and
/// gives the reader's result.
macro_rules! pull_loop {
    ($checker:ident, $sink:ident, |$buf:ident| $read:expr) => {{
        while let Some(part) = next_read($checker)? {
            let mut byte = [0u8; 1];
            let n = {
                let free = $checker.unfilled();
                // No free scratch after a kept record: a byte at a time.
                let $buf = if free.is_empty() { &mut byte[..] } else { free };
                $read.map_err(ReadError::Io)?
            };
            if $checker.unfilled().is_empty() && n > 0 {
                $checker.feed(byte.get(..n).unwrap_or(&[]))?;
                continue;
            }
            after_read($checker, $sink, part, n)?;
        }
        Ok(())
    }};
}

fn pull<R: embedded_io::Read, S: PayloadSink, const N: usize>(
    checker: &mut Checker<'_, '_, '_, N>,
    reader: &mut R,
    sink: &mut S,
) -> core::result::Result<(), ReadError<R::Error>> {
    pull_loop!(checker, sink, |buf| reader.read(buf))
}

/// [`check_from`], then the record: its fields decoded into `place` the
/// [`crate::from_bytes_into`] way (framed or bare as `options` say),
/// borrowing from `scratch`, which keeps the message's bytes outside the
/// payload regions (the checker keeps the record: [`super::Scratch::decode`]
/// says how much). Each `tensors` field of
/// the record holds [`crate::Directory::EMPTY`] afterwards: the tensors
/// went to `sink` (heads and payloads), where the program keeps them and
/// parses them in place. `ty` must be the record's type
/// (`CompiledType::from_schema(&T::SCHEMA)`, in a `const`), else
/// [`Refusal::WrongValue`].
pub fn decode_from<'s, T: Decode<'s>, R: embedded_io::Read, S: PayloadSink, const N: usize>(
    ty: &CompiledType<'_, N>,
    options: Options,
    mut reader: R,
    scratch: &'s mut [u8],
    sink: &mut S,
    place: &mut T,
) -> core::result::Result<Report, ReadError<R::Error>> {
    same_type::<T, N>(ty)?;
    let mut checker = Checker::new(ty, options, scratch).keeping_record();
    pull(&mut checker, &mut reader, sink)?;
    Ok(decode_image(checker, options, place)?)
}

/// [`check_from`] over an `embedded-io-async` reader (an embassy UART or
/// USB class, say): the same state machine, awaiting each read.
#[cfg(feature = "embedded-io-async")]
pub async fn check_from_async<R: embedded_io_async::Read, S: PayloadSink, const N: usize>(
    ty: &CompiledType<'_, N>,
    options: Options,
    mut reader: R,
    scratch: &mut [u8],
    sink: &mut S,
) -> core::result::Result<Report, ReadError<R::Error>> {
    let mut checker = Checker::new(ty, options, scratch);
    pull_async(&mut checker, &mut reader, sink).await?;
    Ok(checker.report())
}

/// [`decode_from`] over an `embedded-io-async` reader.
#[cfg(feature = "embedded-io-async")]
pub async fn decode_from_async<
    's,
    T: Decode<'s>,
    R: embedded_io_async::Read,
    S: PayloadSink,
    const N: usize,
>(
    ty: &CompiledType<'_, N>,
    options: Options,
    mut reader: R,
    scratch: &'s mut [u8],
    sink: &mut S,
    place: &mut T,
) -> core::result::Result<Report, ReadError<R::Error>> {
    same_type::<T, N>(ty)?;
    let mut checker = Checker::new(ty, options, scratch).keeping_record();
    pull_async(&mut checker, &mut reader, sink).await?;
    Ok(decode_image(checker, options, place)?)
}

#[cfg(feature = "embedded-io-async")]
async fn pull_async<R: embedded_io_async::Read, S: PayloadSink, const N: usize>(
    checker: &mut Checker<'_, '_, '_, N>,
    reader: &mut R,
    sink: &mut S,
) -> core::result::Result<(), ReadError<R::Error>> {
    pull_loop!(checker, sink, |buf| reader.read(buf).await)
}
