//! A bounds-checked little-endian cursor over GGUF bytes. Every length and
//! count is compared with the bytes that remain before anything is sized
//! from it, and every failure names the byte offset.
//!
//! The cursor may hold only a prefix of the file ([`Cursor::over_prefix`]):
//! the checks then measure against the file's length, so they answer as
//! they would over the whole file, and a read past the prefix (but inside
//! the file) fails with [`Cursor::needs`] set to the prefix length it
//! wants.

use crate::error::{Error, Result};

/// Reads GGUF bytes front to back.
#[derive(Clone, Debug)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// The file's length: `buf.len()` unless `buf` is a prefix.
    len: u64,
    /// Set when a read ran past the prefix: the prefix length it needs.
    needs: Option<u64>,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor::starting_at(buf, 0)
    }

    /// A cursor over the whole of `buf` that starts at `pos`, so offsets in
    /// errors are offsets in `buf`.
    pub(crate) fn starting_at(buf: &'a [u8], pos: usize) -> Cursor<'a> {
        Cursor {
            buf,
            pos,
            len: buf.len() as u64,
            needs: None,
        }
    }

    /// A cursor over `prefix`, the first bytes of a file of `len` bytes
    /// (at least the prefix's length).
    pub(crate) fn over_prefix(prefix: &'a [u8], len: u64) -> Cursor<'a> {
        Cursor {
            len: len.max(prefix.len() as u64),
            ..Cursor::new(prefix)
        }
    }

    /// The prefix length a failed read needed, when it failed only for
    /// lack of the bytes past the prefix.
    pub(crate) fn needs(&self) -> Option<u64> {
        self.needs
    }

    /// Bytes the cursor holds past its position (all of them remain in
    /// the file too): what bounds a capacity sized from a count.
    pub(crate) fn held(&self) -> u64 {
        self.buf.len().saturating_sub(self.pos) as u64
    }

    /// Bytes consumed so far: the offset of the next byte.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn at(&self) -> u64 {
        self.pos as u64
    }

    /// Bytes of the file after the position.
    pub(crate) fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos as u64)
    }

    /// The bytes held from `start` to the position.
    pub(crate) fn held_range(&self, start: usize) -> &'a [u8] {
        self.buf.get(start..self.pos).unwrap_or_default()
    }

    /// The next `len` bytes, or an error naming `what`.
    pub(crate) fn take(&mut self, len: u64, what: &str) -> Result<&'a [u8]> {
        let left = self.remaining();
        if len > left {
            return Err(Error::gguf(
                self.at(),
                format!("{what} needs {len} bytes, but the file has only {left} left"),
            ));
        }
        if len > self.held() {
            let end = self.at().saturating_add(len);
            self.needs = Some(end);
            return Err(Error::gguf(
                self.at(),
                format!(
                    "{what} needs the file's bytes up to {end}, past the {} read",
                    self.buf.len()
                ),
            ));
        }
        // len <= held <= buf.len(), so it fits in usize.
        let end = self.pos + len as usize;
        let bytes = self.buf.get(self.pos..end).unwrap_or_default();
        self.pos = end;
        Ok(bytes)
    }

    pub(crate) fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let at = self.at();
        self.take(N as u64, what)?
            .try_into()
            .map_err(|_| Error::gguf(at, format!("{what} is cut short")))
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32> {
        self.array(what).map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self, what: &str) -> Result<u64> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// Checks that `count` elements of at least `min` bytes each could be
    /// in the bytes that remain, before anything is allocated or looped
    /// for them. `at` is where the count was read.
    pub(crate) fn claim(&self, count: u64, min: u64, at: u64, what: &str) -> Result<usize> {
        let left = self.remaining();
        match count.checked_mul(min) {
            Some(need) if need <= left => usize::try_from(count)
                .map_err(|_| Error::gguf(at, format!("{what} {count} does not fit in memory"))),
            _ => Err(Error::gguf(
                at,
                format!(
                    "{what} is {count}, but {count} x {min} bytes cannot fit in the {left} bytes left"
                ),
            )),
        }
    }

    /// A GGUF string: u64 byte length, then that many UTF-8 bytes.
    pub(crate) fn string(&mut self, what: &str) -> Result<&'a str> {
        let at = self.at();
        let len = self.u64(what)?;
        let left = self.remaining();
        if len > left {
            return Err(Error::gguf(
                at,
                format!("{what} claims {len} bytes, but the file has only {left} left"),
            ));
        }
        let start = self.at();
        let bytes = self.take(len, what)?;
        core::str::from_utf8(bytes).map_err(|e| {
            Error::gguf(
                start + e.valid_up_to() as u64,
                format!("{what} is not UTF-8"),
            )
        })
    }
}
