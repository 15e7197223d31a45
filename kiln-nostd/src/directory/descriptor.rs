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

/// Offsets of the reserved bytes of a descriptor: byte 3 and bytes 112..128.
pub(crate) const RESERVED_BYTE: usize = 3;
pub(crate) const RESERVED_TAIL: core::ops::Range<usize> = 112..128;

fn le<const N: usize>(record: &[u8; 128], at: usize) -> [u8; N] {
    record
        .get(at..)
        .and_then(<[u8]>::first_chunk::<N>)
        .copied()
        .unwrap_or([0u8; N])
}

impl Descriptor {
    /// Decodes the fields of one record (reserved bytes are not looked at).
    pub fn read(record: &[u8; 128]) -> Descriptor {
        let mut shape = [0u64; 8];
        for (i, dim) in shape.iter_mut().enumerate() {
            *dim = u64::from_le_bytes(le(record, 48usize.saturating_add(i.saturating_mul(8))));
        }
        Descriptor {
            dtype: u16::from_le_bytes(le(record, 0)),
            rank: record[2],
            name_off: u16::from_le_bytes(le(record, 4)),
            name_len: u16::from_le_bytes(le(record, 6)),
            layout_off: u16::from_le_bytes(le(record, 8)),
            layout_len: u16::from_le_bytes(le(record, 10)),
            block_size: u32::from_le_bytes(le(record, 12)),
            quant_scheme: u16::from_le_bytes(le(record, 16)),
            quant_axis: u16::from_le_bytes(le(record, 18)),
            group_size: u32::from_le_bytes(le(record, 20)),
            scale_index: u32::from_le_bytes(le(record, 24)),
            outer_index: u32::from_le_bytes(le(record, 28)),
            byte_offset: u64::from_le_bytes(le(record, 32)),
            byte_length: u64::from_le_bytes(le(record, 40)),
            shape,
        }
    }

    /// Writes the 128-byte record, reserved bytes zero.
    pub fn write<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        w.u16(self.dtype)?;
        w.u8(self.rank)?;
        w.u8(0)?;
        w.u16(self.name_off)?;
        w.u16(self.name_len)?;
        w.u16(self.layout_off)?;
        w.u16(self.layout_len)?;
        w.u32(self.block_size)?;
        w.u16(self.quant_scheme)?;
        w.u16(self.quant_axis)?;
        w.u32(self.group_size)?;
        w.u32(self.scale_index)?;
        w.u32(self.outer_index)?;
        w.u64(self.byte_offset)?;
        w.u64(self.byte_length)?;
        for dim in self.shape {
            w.u64(dim)?;
        }
        w.put_zeros(16)
    }

    /// The dimensions in use.
    pub fn dims(&self) -> &[u64] {
        self.shape
            .get(..usize::from(self.rank.min(MAX_RANK)))
            .unwrap_or(&[])
    }

    /// End of the payload range, or `None` on overflow.
    pub fn range_end(&self) -> Option<u64> {
        self.byte_offset.checked_add(self.byte_length)
    }
}
