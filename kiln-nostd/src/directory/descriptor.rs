//! The fixed-width records of a directory block: header constants and the
//! 128-byte descriptor, read from and written to wire bytes.

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

/// One descriptor's fields as the builder writes them. Byte offsets
/// within the 128-byte record are in the field docs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Descriptor<'s> {
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
    /// 48: the rank's dimensions (at most eight); the slots past them
    /// are zero.
    pub dims: &'s [u64],
}

/// Offsets of the reserved bytes of a descriptor: byte 3 and bytes
/// [`RESERVED_TAIL`]..128.
pub(crate) const RESERVED_BYTE: usize = 3;
pub(crate) const RESERVED_TAIL: usize = 112;

/// The descriptor fields the rules read, from either a spec the builder
/// is about to write or a borrowed [`Record`] (the parser, which reads
/// only the fields each step needs).
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

impl Descriptor<'_> {
    /// Stores the 128-byte record into `record`, every byte of it
    /// (the reserved ones zero): sixteen little-endian words, each at its
    /// offset, so the record is built in its place in the output.
    #[inline(always)] // one caller, its loop's whole body
    pub fn write_into(&self, record: &mut [u8; DESCRIPTOR_LEN as usize]) {
        let w = |v: u16, shift: u32| u64::from(v) << shift;
        let dim = |k: usize| self.dims.get(k).copied().unwrap_or(0);
        let words: [u64; 16] = [
            // Bytes 0..8: dtype, rank, reserved byte 3 (zero), name slice.
            w(self.dtype, 0)
                | u64::from(self.rank) << 16
                | w(self.name_off, 32)
                | w(self.name_len, 48),
            // 8..16: layout name slice, block size.
            w(self.layout_off, 0) | w(self.layout_len, 16) | u64::from(self.block_size) << 32,
            // 16..32: quantization scheme, axis, group size, scale and
            // outer index.
            w(self.quant_scheme, 0) | w(self.quant_axis, 16) | u64::from(self.group_size) << 32,
            u64::from(self.scale_index) | u64::from(self.outer_index) << 32,
            // 32..48: payload offset and length.
            self.byte_offset,
            self.byte_length,
            // 48..112: the eight shape slots, zero past the rank: eight
            // fixed steps (a copy of `dims.len()` words becomes a call).
            dim(0),
            dim(1),
            dim(2),
            dim(3),
            dim(4),
            dim(5),
            dim(6),
            dim(7),
            // 112..128: reserved.
            0,
            0,
        ];
        for (bytes, word) in record.chunks_exact_mut(8).zip(words) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
    }
}

/// The rank's dimensions out of the eight shape slots (all eight when the
/// rank is above 8, which the rules reject first).
pub(crate) fn dims_of(shape: &[u64; 8], rank: u8) -> &[u64] {
    shape.get(..usize::from(rank.min(MAX_RANK))).unwrap_or(&[])
}
