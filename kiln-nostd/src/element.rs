//! The element types of payloads and lists: the Rust numbers a view, a
//! copy or a builder takes, each with its wire width and dtype code.

use half::{bf16, f16};

mod sealed {
    /// Only this crate's element types: their width and dtype code come
    /// from the Rust type itself, so no outside impl can disagree with the
    /// size a copy assumes.
    pub trait Sealed {}
}

/// A fixed-width number that can live in a Kiln payload or a Frozen list.
/// Sealed: implemented for `f64 f32 f16 bf16 i8 u8 i16 u16 i32 u32 i64
/// u64` only.
pub trait Element: sealed::Sealed + bytemuck::Pod + PartialEq + core::fmt::Debug {
    /// Bytes per element on the wire.
    const WIDTH: usize;
    /// The directory dtype code of this element type.
    const DTYPE_CODE: u16;
    /// Reads one element from exactly `WIDTH` little-endian bytes.
    #[doc(hidden)]
    fn from_le(bytes: &[u8]) -> Option<Self>;
    /// Writes one element as `WIDTH` little-endian bytes into `out`.
    #[doc(hidden)]
    fn to_le(self, out: &mut [u8]) -> Option<()>;
    /// Fills `out` from `bytes` (at least `out.len() * WIDTH` of them),
    /// reversing the bytes of each element: the other byte order's copy.
    #[doc(hidden)]
    fn copy_reversed(bytes: &[u8], out: &mut [Self]);
}

macro_rules! element {
    ($($ty:ty => $code:expr),* $(,)?) => {$(
        impl sealed::Sealed for $ty {}
        impl Element for $ty {
            const WIDTH: usize = core::mem::size_of::<$ty>();
            const DTYPE_CODE: u16 = $code;
            fn from_le(bytes: &[u8]) -> Option<Self> {
                bytes.try_into().ok().map(<$ty>::from_le_bytes)
            }
            fn to_le(self, out: &mut [u8]) -> Option<()> {
                let out: &mut [u8; core::mem::size_of::<$ty>()] = out.try_into().ok()?;
                *out = self.to_le_bytes();
                Some(())
            }
            #[inline]
            fn copy_reversed(bytes: &[u8], out: &mut [Self]) {
                const W: usize = core::mem::size_of::<$ty>();
                for (slot, chunk) in out.iter_mut().zip(bytes.chunks_exact(W)) {
                    if let Some(&element) = chunk.first_chunk::<W>() {
                        let mut element = element;
                        element.reverse();
                        *slot = <$ty>::from_ne_bytes(element);
                    }
                }
            }
        }
    )*};
}

element! {
    f64 => 1, f32 => 2, f16 => 3, bf16 => 4,
    i8 => 8, u8 => 9, i16 => 10, u16 => 11,
    i32 => 12, u32 => 13, i64 => 14, u64 => 15,
}
