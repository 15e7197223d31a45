//! Bytes at an address aligned for every element type (feature `alloc`),
//! so that zero-copy views of a file read into memory are not a matter of
//! luck.
//!
//! A directory's payloads start at multiples of 64 from the start of its
//! block. When the block itself starts at an address that is a multiple of
//! 8 (the widest element), every payload can be viewed in place with
//! [`crate::TensorView::as_slice`]. A `Vec<u8>` gives no such promise (its
//! alignment is 1; that it is usually more is the allocator's choice), so
//! read files into [`AlignedBytes`] instead:
//!
//! ```no_run
//! # #[cfg(feature = "std")] {
//! use kiln_nostd::{AlignedBytes, Directory};
//! let file = AlignedBytes::read_file("weights.kiln").unwrap();
//! let dir = Directory::parse(&file).unwrap();
//! let w: &[f32] = dir.by_name("w").unwrap().as_slice().unwrap(); // aligned: no copy
//! # }
//! ```
//!
//! A memory map is page-aligned (4096 bytes), so a bare directory file
//! mapped with, say, the `memmap2` crate has the same property without
//! reading the file at all: `Directory::parse(&mmap[..])`.
//!
//! Inside a message, a `tensors` field starts wherever the fields before it
//! end, so its payloads are aligned only when that offset is a multiple of
//! the element width. [`crate::TensorView::view_or_copy`] views in place
//! when it can and copies once when it cannot; it never gives a wrong
//! number.

use alloc::vec::Vec;
use core::ops::{Deref, DerefMut};

/// An owned byte buffer whose first byte is 8-byte aligned.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBytes {
    /// `len` zero bytes.
    #[doc(hidden)]
    pub fn zeroed(len: usize) -> AlignedBytes {
        AlignedBytes {
            words: alloc::vec![0u64; len.div_ceil(8)],
            len,
        }
    }

    /// A copy of `bytes`.
    pub fn from_slice(bytes: &[u8]) -> AlignedBytes {
        let mut out = AlignedBytes::zeroed(bytes.len());
        out.copy_from_slice(bytes);
        out
    }

    /// Reads everything `reader` yields.
    #[cfg(feature = "std")]
    #[doc(hidden)]
    pub fn read_from(mut reader: impl std::io::Read) -> std::io::Result<AlignedBytes> {
        let mut out = AlignedBytes::default();
        let mut chunk = 64 * 1024;
        loop {
            let start = out.len;
            out.resize(start.saturating_add(chunk));
            let read = reader.read(out.get_mut(start..).unwrap_or_default())?;
            out.resize(start.saturating_add(read));
            if read == 0 {
                return Ok(out);
            }
            chunk = chunk.saturating_mul(2).min(64 * 1024 * 1024);
        }
    }

    /// Reads a whole file.
    #[cfg(feature = "std")]
    pub fn read_file(path: impl AsRef<std::path::Path>) -> std::io::Result<AlignedBytes> {
        let file = std::fs::File::open(path)?;
        AlignedBytes::read_from(std::io::BufReader::with_capacity(1 << 20, file))
    }

    /// Sets the length, adding zero bytes or dropping bytes at the end.
    #[doc(hidden)]
    pub fn resize(&mut self, len: usize) {
        self.words.resize(len.div_ceil(8), 0);
        self.len = len;
    }
}

impl Deref for AlignedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        let bytes: &[u8] = bytemuck::cast_slice(&self.words);
        bytes.get(..self.len).unwrap_or_default()
    }
}

impl DerefMut for AlignedBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.words);
        bytes.get_mut(..self.len).unwrap_or_default()
    }
}

impl core::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "AlignedBytes({} bytes)", self.len)
    }
}

impl crate::wire::Sink for AlignedBytes {
    fn put(&mut self, bytes: &[u8]) -> crate::Result<()> {
        let start = self.len;
        self.resize(start.saturating_add(bytes.len()));
        if let Some(target) = self.get_mut(start..) {
            target.copy_from_slice(bytes);
        }
        Ok(())
    }

    fn written(&self) -> usize {
        self.len
    }
}
