//! Random access: a message read by ranges, only the bytes the rules read.

use super::checker::{Checker, Need, Report};
use crate::error::{Error, Refusal, Result};
use crate::limits::Options;
use crate::schema::CompiledType;

/// Bytes that can be read at any offset: a buffer, a file, a memory map.
/// A browser `Blob` or an HTTP server with Range requests is the same, but
/// asynchronous: such a caller drives [`Checker`] itself, awaiting each
/// [`Need::Bytes`] (see docs/streaming.md).
pub trait ReadAt {
    /// The source's length in bytes.
    fn size(&self) -> Result<u64>;

    /// Fills `buf` with the bytes at `offset..offset + buf.len()`, which
    /// lie inside the source.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()>;
}

impl ReadAt for &[u8] {
    fn size(&self) -> Result<u64> {
        Ok(<[u8]>::len(self) as u64)
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let start = usize::try_from(offset).map_err(|_| out_of_range())?;
        let bytes = self
            .get(start..start.saturating_add(buf.len()))
            .ok_or_else(out_of_range)?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

fn out_of_range() -> Error {
    Error::refused(Refusal::Io, "read outside the source")
}

/// A file read by ranges with `pread` (feature `std`, Unix). An I/O error
/// is [`Refusal::Io`].
#[cfg(all(feature = "std", unix))]
impl ReadAt for std::fs::File {
    fn size(&self) -> Result<u64> {
        self.metadata()
            .map(|m| m.len())
            .map_err(|_| Error::refused(Refusal::Io, "the file's length could not be read"))
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
            .map_err(|_| Error::refused(Refusal::Io, "the file could not be read"))
    }
}

/// Checks the message in `source` against `ty`, reading only the ranges
/// the rules read: each payload's interior is skipped, never fetched.
/// Same verdict, code and offset as [`crate::check()`] on the whole
/// message. `scratch` must hold what [`super::scratch_for`] says (the
/// largest directory head plus a byte, dict keys); a smaller one is
/// refused ([`Refusal::Capacity`]). Returns what was read.
///
/// ```
/// use kiln_nostd::stream::check_at;
/// use kiln_nostd::{CompiledType, Directory, Options, TensorSpec};
///
/// let weights = [0.5f32; 1024]; // a 4 KiB payload
/// let mut block = vec![0u8; 8192];
/// let dir = Directory::build(&[TensorSpec::from_host(&[1024], &weights).named("w")], &mut block).unwrap();
/// let file: &[u8] = dir.as_bytes();
/// let ty = CompiledType::<4>::parse("tensors").unwrap();
/// let mut scratch = [0u8; 512];
/// let report = check_at(&ty, file, Options::BARE, &mut scratch).unwrap();
/// assert_eq!(report.payload, 4096); // skipped
/// assert_eq!(report.read, 256); // header, descriptor, name heap
/// ```
pub fn check_at<R: ReadAt, const N: usize>(
    ty: &CompiledType<'_, N>,
    mut source: R,
    options: Options,
    scratch: &mut [u8],
) -> Result<Report> {
    let len = source.size()?;
    let mut checker = Checker::with_len(ty, options, scratch, len);
    loop {
        match checker.need()? {
            Need::Done => return Ok(checker.report()),
            Need::Bytes { at, .. } => {
                let buf = checker.unfilled();
                let n = buf.len();
                source.read_at(at, buf)?;
                checker.filled(n)?;
            }
            Need::Payload { len, .. } => checker.skip(len)?,
            // A known length never asks for the end; answer it anyway.
            Need::End => checker.end()?,
        }
    }
}
