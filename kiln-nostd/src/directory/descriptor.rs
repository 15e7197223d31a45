//! The fixed-width records of a directory block: header constants and the
//! 128-byte descriptor, read from and written to wire bytes.

use crate::error::Result;
use crate::wire::{Sink, Writer};

/// ASCII `KLNT`.
pub const MAGIC: [u8; 4] = *b"KLNT";
/// The only directory version.
pub const DIRECTORY_VERSION: u8 = 2;
/// Header length.
pub const HEADER_LEN: u64 = 64;
/// Descriptor length.
pub const DESCRIPTOR_LEN: u64 = 128;
/// Payloads start at multiples of this, measured from the block's start.
pub const ALIGN: u64 = 64;
/// Flag bit 0: at least one tensor has a name.
pub const FLAG_NAMES: u8 = 0b01;
/// Flag bit 1: payloads are little-endian. Must be set.
pub const FLAG_LITTLE_ENDIAN: u8 = 0b10;
/// Offset field value for "no slice".
pub const NO_OFFSET: u16 = 0xFFFF;
/// Index field value for "no tensor".
pub const NO_INDEX: u32 = 0xFFFF_FFFF;
/// Axis field value for "no axis".
pub const NO_AXIS: u16 = 0xFFFF;
/// Most dimensions a tensor may have.
pub const MAX_RANK: u8 = 8;

/// `value` rounded up to a multiple of [`ALIGN`], or `None` on overflow.
pub const fn align_up(value: u64) -> Option<u64> {
    match value.checked_add(ALIGN - 1) {
        Some(v) => Some(v & !(ALIGN - 1)),
        None => None,
    }
}

/// One descriptor's fields, as on the wire. Byte offsets within the
/// 128-byte record are in the field docs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Descriptor {
    /// 0: dtype code.
    pub dtype: u16,
    /// 2: rank.
    pub rank: u8,
    /// 4: name offset in the heap, or 0xFFFF.
    pub name_off: u16,
    /// 6: name length.
    pub name_len: u16,
    /// 8: layout name offset, or 0xFFFF.
    pub layout_off: u16,
    /// 10: layout name length.
    pub layout_len: u16,
    /// 12: opaque block size.
    pub block_size: u32,
    /// 16: quantization scheme.
    pub quant_scheme: u16,
    /// 18: quantization axis, or 0xFFFF.
    pub quant_axis: u16,
    /// 20: group size.
    pub group_size: u32,
    /// 24: scale tensor index, or 0xFFFFFFFF.
    pub scale_index: u32,
    /// 28: outer scale tensor index, or 0xFFFFFFFF.
    pub outer_index: u32,
    /// 32: offset from the start of the payload region.
    pub byte_offset: u64,
    /// 40: payload length.
    pub byte_length: u64,
    /// 48: eight dimensions.
    pub shape: [u64; 8],
}

/// Offsets of the reserved bytes of a descriptor: byte 3 and bytes
/// [`RESERVED_TAIL`]..128.
pub(crate) const RESERVED_BYTE: usize = 3;
pub(crate) const RESERVED_TAIL: usize = 112;

/// The descriptor fields the rules read, from either a decoded
/// [`Descriptor`] (the builder) or a borrowed [`Record`] (the parser,
/// which reads only the fields each step needs).
pub(crate) trait Fields: Copy {
    fn dtype(&self) -> u16;
    fn rank(&self) -> u8;
    fn layout_len(&self) -> u16;
    fn block_size(&self) -> u32;
    fn quant_scheme(&self) -> u16;
    fn quant_axis(&self) -> u16;
    fn group_size(&self) -> u32;
    fn scale_index(&self) -> u32;
    fn outer_index(&self) -> u32;
    fn byte_offset(&self) -> u64;
    fn byte_length(&self) -> u64;
    /// The eight shape slots.
    fn shape(&self) -> [u64; 8];
    /// Shape slot `k` (0 past the eighth).
    fn dim(&self, k: usize) -> u64;

    /// End of the payload range, or `None` on overflow.
    fn range_end(&self) -> Option<u64> {
        self.byte_offset().checked_add(self.byte_length())
    }
}

impl Fields for Descriptor {
    fn dtype(&self) -> u16 {
        self.dtype
    }
    fn rank(&self) -> u8 {
        self.rank
    }
    fn layout_len(&self) -> u16 {
        self.layout_len
    }
    fn block_size(&self) -> u32 {
        self.block_size
    }
    fn quant_scheme(&self) -> u16 {
        self.quant_scheme
    }
    fn quant_axis(&self) -> u16 {
        self.quant_axis
    }
    fn group_size(&self) -> u32 {
        self.group_size
    }
    fn scale_index(&self) -> u32 {
        self.scale_index
    }
    fn outer_index(&self) -> u32 {
        self.outer_index
    }
    fn byte_offset(&self) -> u64 {
        self.byte_offset
    }
    fn byte_length(&self) -> u64 {
        self.byte_length
    }
    fn shape(&self) -> [u64; 8] {
        self.shape
    }
    fn dim(&self, k: usize) -> u64 {
        self.shape.get(k).copied().unwrap_or(0)
    }
}

/// One 128-byte descriptor in the block, read in place: each accessor
/// decodes only its own field, so a parse step touches only the bytes it
/// checks.
#[derive(Copy, Clone)]
pub(crate) struct Record<'a>(pub &'a [u8; 128]);

macro_rules! field {
    ($record:expr, $ty:ty, $at:expr) => {{
        const W: usize = core::mem::size_of::<$ty>();
        // Constant offsets into a fixed-size record: this compiles to one
        // load, and the `None` arm away.
        match $record.0.get($at..).and_then(<[u8]>::first_chunk::<W>) {
            Some(bytes) => <$ty>::from_le_bytes(*bytes),
            None => 0,
        }
    }};
}

impl Record<'_> {
    pub fn name_off(&self) -> u16 {
        field!(self, u16, 4)
    }
    pub fn name_len(&self) -> u16 {
        field!(self, u16, 6)
    }
    pub fn layout_off(&self) -> u16 {
        field!(self, u16, 8)
    }
    /// Bytes 16..32 hold scheme 0 with no axis, group or links: what the
    /// quantization rule accepts of an unquantized tensor, in one compare.
    pub fn unquantized(&self) -> bool {
        const NONE: u128 = u128::from_le_bytes([
            0, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        ]);
        field!(self, u128, 16) == NONE
    }
    /// Byte 3 and bytes 112..128 are all zero.
    pub fn reserved_clear(&self) -> bool {
        self.0[RESERVED_BYTE] == 0 && field!(self, u128, RESERVED_TAIL) == 0
    }
}

impl Fields for Record<'_> {
    fn dtype(&self) -> u16 {
        field!(self, u16, 0)
    }
    fn rank(&self) -> u8 {
        self.0[2]
    }
    fn layout_len(&self) -> u16 {
        field!(self, u16, 10)
    }
    fn block_size(&self) -> u32 {
        field!(self, u32, 12)
    }
    fn quant_scheme(&self) -> u16 {
        field!(self, u16, 16)
    }
    fn quant_axis(&self) -> u16 {
        field!(self, u16, 18)
    }
    fn group_size(&self) -> u32 {
        field!(self, u32, 20)
    }
    fn scale_index(&self) -> u32 {
        field!(self, u32, 24)
    }
    fn outer_index(&self) -> u32 {
        field!(self, u32, 28)
    }
    fn byte_offset(&self) -> u64 {
        field!(self, u64, 32)
    }
    fn byte_length(&self) -> u64 {
        field!(self, u64, 40)
    }
    fn dim(&self, k: usize) -> u64 {
        // Slot k & 7 lies at 48..112 of the 128 bytes: no bounds check.
        match self
            .0
            .get(48 + 8 * (k & 7)..)
            .and_then(<[u8]>::first_chunk::<8>)
        {
            Some(bytes) if k < 8 => u64::from_le_bytes(*bytes),
            _ => 0,
        }
    }
    fn shape(&self) -> [u64; 8] {
        [
            field!(self, u64, 48),
            field!(self, u64, 56),
            field!(self, u64, 64),
            field!(self, u64, 72),
            field!(self, u64, 80),
            field!(self, u64, 88),
            field!(self, u64, 96),
            field!(self, u64, 104),
        ]
    }
}

impl Descriptor {
    /// Writes the 128-byte record, reserved bytes zero: laid out in one
    /// array and put at once, one sink call rather than one per field.
    #[inline]
    pub fn write<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        let mut record = [0u8; DESCRIPTOR_LEN as usize];
        // Each field at its constant offset: one store each, and the `None`
        // arm (never taken, the record is 128 bytes) compiles away.
        fn at<const N: usize>(record: &mut [u8; 128], offset: usize, bytes: [u8; N]) {
            if let Some(slot) = record
                .get_mut(offset..)
                .and_then(<[u8]>::first_chunk_mut::<N>)
            {
                *slot = bytes;
            }
        }
        at(&mut record, 0, self.dtype.to_le_bytes());
        at(&mut record, 2, [self.rank]);
        at(&mut record, 4, self.name_off.to_le_bytes());
        at(&mut record, 6, self.name_len.to_le_bytes());
        at(&mut record, 8, self.layout_off.to_le_bytes());
        at(&mut record, 10, self.layout_len.to_le_bytes());
        at(&mut record, 12, self.block_size.to_le_bytes());
        at(&mut record, 16, self.quant_scheme.to_le_bytes());
        at(&mut record, 18, self.quant_axis.to_le_bytes());
        at(&mut record, 20, self.group_size.to_le_bytes());
        at(&mut record, 24, self.scale_index.to_le_bytes());
        at(&mut record, 28, self.outer_index.to_le_bytes());
        at(&mut record, 32, self.byte_offset.to_le_bytes());
        at(&mut record, 40, self.byte_length.to_le_bytes());
        for (k, dim) in self.shape.iter().enumerate() {
            at(&mut record, 48 + 8 * k, dim.to_le_bytes());
        }
        // Byte 3 and the last 16 bytes are reserved and stay zero.
        w.put(&record)
    }
}

/// The rank's dimensions out of the eight shape slots (all eight when the
/// rank is above 8, which the rules reject first).
pub(crate) fn dims_of(shape: &[u64; 8], rank: u8) -> &[u64] {
    shape.get(..usize::from(rank.min(MAX_RANK))).unwrap_or(&[])
}
