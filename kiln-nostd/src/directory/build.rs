//! Writing the canonical block for an ordered list of tensors.
//!
//! Everything the parser would reject is refused before the first byte is
//! written, by the same rules the parser runs ([`super::rules`]), so the
//! specs are walked twice: a checking pass, then the writing pass. Offsets,
//! heap positions and padding come from one [`Cursor`] that both passes
//! move the same way.

use super::descriptor::*;
use super::rules;
use crate::dtype::{Dtype, DtypeCode};
use crate::error::{Error, Refusal, Result};
use crate::frozen::{Encode, Frozen};
use crate::order::{self, Element};
use crate::schema::Schema;
use crate::wire::{copy_short, Sink, Writer};

/// A tensor's payload as the builder receives it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Payload<'a> {
    bytes: &'a [u8],
    /// 0 when `bytes` are already wire bytes; else the width of the host
    /// numbers they hold, which a big-endian host swaps while writing.
    host_width: usize,
    host_code: Option<u16>,
}

impl<'a> Payload<'a> {
    /// Bytes already in wire order (little-endian), for any dtype.
    pub const fn wire(bytes: &'a [u8]) -> Payload<'a> {
        Payload {
            bytes,
            host_width: 0,
            host_code: None,
        }
    }

    /// Host numbers; written little-endian on every host.
    pub fn host<T: Element>(values: &'a [T]) -> Payload<'a> {
        Payload {
            bytes: bytemuck::cast_slice(values),
            host_width: T::WIDTH,
            host_code: Some(T::DTYPE_CODE),
        }
    }

    /// Length in bytes.
    #[doc(hidden)]
    pub const fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether there are no bytes.
    #[doc(hidden)]
    pub const fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn write<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        order::write_host_elements(self.bytes, self.host_width, w)
    }

    /// Whether [`Payload::write`] puts `bytes` as they are.
    fn in_wire_order(&self) -> bool {
        order::HOST_IS_LITTLE_ENDIAN || self.host_width <= 1
    }
}

/// Quantization links of a tensor to spec, by index in the same list.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum QuantSpec {
    /// Scheme 0.
    #[default]
    None,
    /// Scheme 1: `scales` holds one scale per group.
    Scales {
        /// Dimension the groups run along.
        axis: u16,
        /// Elements per group.
        group_size: u32,
        /// Index of the scale tensor.
        scales: u32,
    },
    /// Scheme 2: scheme 1 plus a one-element f32 `outer` tensor.
    ScalesOuter {
        /// Dimension the groups run along.
        axis: u16,
        /// Elements per group.
        group_size: u32,
        /// Index of the scale tensor.
        scales: u32,
        /// Index of the outer scale tensor.
        outer: u32,
    },
}

/// One tensor to write.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec<'a> {
    /// Closed or opaque dtype.
    pub dtype: DtypeCode,
    /// Dimensions; empty for a scalar.
    pub shape: &'a [u64],
    /// Name; either every tensor of a directory has one or none does.
    pub name: Option<&'a str>,
    /// Layout name, for an opaque dtype only.
    pub layout: Option<&'a str>,
    /// Opaque block size; 0 for closed dtypes.
    pub block_size: u32,
    /// Quantization links.
    pub quant: QuantSpec,
    /// The elements.
    pub payload: Payload<'a>,
}

impl<'a> TensorSpec<'a> {
    /// A tensor of a closed dtype from wire-order bytes.
    pub const fn new(dtype: Dtype, shape: &'a [u64], bytes: &'a [u8]) -> TensorSpec<'a> {
        TensorSpec {
            dtype: DtypeCode::Closed(dtype),
            shape,
            name: None,
            layout: None,
            block_size: 0,
            quant: QuantSpec::None,
            payload: Payload::wire(bytes),
        }
    }

    /// A tensor from host numbers; the dtype follows from `T`.
    ///
    /// ```
    /// use kiln_nostd::{TensorSpec, Tensors, to_slice, Directory};
    /// let values = [1.0f32, -2.0];
    /// let specs = [TensorSpec::from_host(&[2], &values)];
    /// let mut buf = [0u8; 256];
    /// let block = to_slice(&Tensors(&specs), &mut buf).unwrap();
    /// assert_eq!(block.len(), 200);
    /// assert_eq!(&block[192..], &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]);
    /// let dir = Directory::parse(block).unwrap();
    /// let mut out = [0f32; 2];
    /// dir.get(0).unwrap().copy_into(&mut out).unwrap();
    /// assert_eq!(out, values);
    /// ```
    pub fn from_host<T: Element>(shape: &'a [u64], values: &'a [T]) -> TensorSpec<'a> {
        TensorSpec {
            dtype: DtypeCode::from_code(T::DTYPE_CODE).unwrap_or(DtypeCode::Opaque(T::DTYPE_CODE)),
            payload: Payload::host(values),
            ..TensorSpec::new(Dtype::U8, shape, &[])
        }
    }

    /// An opaque tensor: a foreign block layout Kiln stores and does not
    /// interpret.
    pub const fn opaque(
        code: u16,
        layout: &'a str,
        block_size: u32,
        shape: &'a [u64],
        bytes: &'a [u8],
    ) -> TensorSpec<'a> {
        TensorSpec {
            dtype: DtypeCode::Opaque(code),
            shape,
            name: None,
            layout: Some(layout),
            block_size,
            quant: QuantSpec::None,
            payload: Payload::wire(bytes),
        }
    }

    /// The same tensor with a name.
    pub const fn named(mut self, name: &'a str) -> TensorSpec<'a> {
        self.name = Some(name);
        self
    }

    /// The same tensor with quantization links.
    pub const fn quantized(mut self, quant: QuantSpec) -> TensorSpec<'a> {
        self.quant = quant;
        self
    }
}

/// An ordered list of tensors, encoded as one canonical directory block.
/// This is how a struct writes its `tensors` field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tensors<'a>(pub &'a [TensorSpec<'a>]);

impl Frozen for Tensors<'_> {
    const SCHEMA: Schema = Schema::Tensors;
}

impl Tensors<'_> {
    /// The length of the block [`Tensors`] writes for tensors of
    /// `lengths`, in order: each tensor's heap bytes (its name and layout
    /// name) and payload bytes, when it writes one. The builder's own
    /// placement (header, descriptors, heap, zeros up to a multiple of 64,
    /// each payload at the end of the one before rounded up to 64), without
    /// the specs. It checks nothing else; `None` when the length overflows.
    /// For a writer that reserves its output before writing (the encoder
    /// then writes exactly this many bytes or refuses).
    ///
    /// ```
    /// use kiln_nostd::{Directory, TensorSpec, Tensors};
    /// let (a, b) = ([0u8; 6], [0u8; 16]);
    /// let specs = [
    ///     TensorSpec::new(kiln_nostd::Dtype::U8, &[6], &a).named("a"),
    ///     TensorSpec::new(kiln_nostd::Dtype::U8, &[16], &b).named("bb"),
    /// ];
    /// let len = Tensors::block_len([(1, 6), (2, 16)]).unwrap();
    /// assert_eq!(len as usize, Directory::encoded_len(&specs).unwrap());
    /// ```
    #[doc(hidden)]
    pub fn block_len(lengths: impl IntoIterator<Item = (u64, u64)>) -> Option<u64> {
        let mut cursor = Cursor::new(0);
        let (mut count, mut heap) = (0u64, 0u64);
        for (heap_bytes, payload_bytes) in lengths {
            cursor.payload(payload_bytes).ok()?;
            heap = heap.checked_add(heap_bytes)?;
            count += 1;
        }
        let directory_end = count
            .checked_mul(DESCRIPTOR_LEN)?
            .checked_add(HEADER_LEN)?
            .checked_add(heap)?;
        align_up(directory_end)?.checked_add(cursor.payload_end)
    }
}

impl Encode for Tensors<'_> {
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        if !super::SMALL_CODE {
            if let Some(plan) = check_plain_lent(self.0, w) {
                return write_heap_and_payloads(self.0, &plan, w);
            }
        }
        let plan = check(self.0, w)?;
        write(self.0, &plan, w)
    }
}

fn refuse(fault: &'static str) -> Error {
    Error::refused(Refusal::NotEncodable, fault)
}

/// What the checking pass learned and the writing pass needs.
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    count: u32,
    names_total: u64,
    name_bytes: u32,
    payload_bytes: u64,
    /// The longest payload's length.
    longest_payload: u64,
    named: bool,
    /// Every spec is one [`plainly_sound`] vouches for.
    plain: bool,
}

/// The running positions of a walk over the specs: where the next name,
/// layout name and payload go. The one place those positions are
/// computed, so the checking pass and the writing pass agree.
struct Cursor {
    name: u64,
    layout: u64,
    payload_end: u64,
}

impl Cursor {
    /// At the start of a block whose names take `names_total` heap bytes
    /// (the layout names follow them).
    fn new(names_total: u64) -> Cursor {
        Cursor {
            name: 0,
            layout: names_total,
            payload_end: 0,
        }
    }

    /// The descriptor of `spec`, with canonical heap offsets and the greedy
    /// payload offset; the cursor moves past it.
    #[inline(always)] // one caller, its loop's whole body
    fn place<'s>(&mut self, spec: &TensorSpec<'s>) -> Result<Descriptor<'s>> {
        let rank = rank_of(spec)?;
        let (name_off, name_len) = slot(spec.name, &mut self.name)?;
        let (layout_off, layout_len) = slot(spec.layout, &mut self.layout)?;
        let byte_length = spec.payload.len() as u64;
        let byte_offset = self.payload(byte_length)?;
        let (quant_scheme, quant_axis, group_size, scale_index, outer_index) =
            quant_fields(spec.quant);
        Ok(Descriptor {
            dtype: spec.dtype.code(),
            rank,
            name_off,
            name_len,
            layout_off,
            layout_len,
            block_size: spec.block_size,
            quant_scheme,
            quant_axis,
            group_size,
            scale_index,
            outer_index,
            byte_offset,
            byte_length,
            dims: spec.shape,
        })
    }

    /// [`Cursor::place`] of a spec [`plainly_sound`] vouched for, in a
    /// block whose checking pass placed every spec: no layout name, block
    /// size or quantization, and every position known to fit, so none is
    /// checked again. For such a spec it gives what `place` gives.
    #[inline(always)] // one caller, its loop's whole body
    fn place_plain<'s>(&mut self, spec: &TensorSpec<'s>) -> Descriptor<'s> {
        // The heap is at most 0xFFFF bytes: every offset and length fits
        // in 16 bits as it is.
        #[allow(clippy::cast_possible_truncation)]
        let (name_off, name_len) = match spec.name {
            Some(name) => {
                let off = self.name as u16;
                self.name = self.name.wrapping_add(name.len() as u64);
                (off, name.len() as u16)
            }
            None => (NO_OFFSET, 0),
        };
        let byte_length = spec.payload.len() as u64;
        let byte_offset = align_up(self.payload_end).unwrap_or(0);
        self.payload_end = byte_offset.saturating_add(byte_length);
        plain_descriptor(spec, (name_off, name_len), byte_offset, byte_length)
    }

    /// The offset of the next payload, of `len` bytes: the end of the last
    /// one rounded up to [`ALIGN`]. The cursor moves past it.
    #[inline(always)]
    fn payload(&mut self, len: u64) -> Result<u64> {
        let overflow = || refuse("payload region overflows");
        let at = align_up(self.payload_end).ok_or_else(overflow)?;
        self.payload_end = at.checked_add(len).ok_or_else(overflow)?;
        Ok(at)
    }
}

/// The descriptor of a plain spec (no layout name, block size or
/// quantization) whose name and payload are already placed.
#[inline(always)] // inside the loops of the plain walks
fn plain_descriptor<'s>(
    spec: &TensorSpec<'s>,
    (name_off, name_len): (u16, u16),
    byte_offset: u64,
    byte_length: u64,
) -> Descriptor<'s> {
    Descriptor {
        dtype: spec.dtype.code(),
        // At most 8 (the spec was checked).
        #[allow(clippy::cast_possible_truncation)]
        rank: spec.shape.len() as u8,
        name_off,
        name_len,
        layout_off: NO_OFFSET,
        layout_len: 0,
        block_size: 0,
        quant_scheme: 0,
        quant_axis: NO_AXIS,
        group_size: 0,
        scale_index: NO_INDEX,
        outer_index: NO_INDEX,
        byte_offset,
        byte_length,
        dims: spec.shape,
    }
}

/// A heap slot at `cursor`: `(offset, length)`, refused when it cannot be
/// expressed in the u16 fields.
#[inline(always)]
fn slot(text: Option<&str>, cursor: &mut u64) -> Result<(u16, u16)> {
    let Some(text) = text else {
        return Ok((NO_OFFSET, 0));
    };
    if text.is_empty() {
        return Err(refuse("empty name or layout name"));
    }
    let Ok(len) = u16::try_from(text.len()) else {
        return Err(refuse("name longer than 65,535 bytes"));
    };
    let off = match u16::try_from(*cursor) {
        Ok(off) if off != NO_OFFSET => off,
        _ => return Err(refuse("name heap offset does not fit below 0xFFFF")),
    };
    *cursor = cursor.saturating_add(u64::from(len));
    Ok((off, len))
}

/// The rank of a spec, refused above 8.
#[inline(always)]
fn rank_of(spec: &TensorSpec<'_>) -> Result<u8> {
    match u8::try_from(spec.shape.len()) {
        Ok(r) if r <= MAX_RANK => Ok(r),
        _ => Err(refuse("rank above 8")),
    }
}

/// The quantization fields of a spec: scheme, axis, group size, scale
/// and outer index.
#[inline(always)]
fn quant_fields(quant: QuantSpec) -> (u16, u16, u32, u32, u32) {
    match quant {
        QuantSpec::None => (0, NO_AXIS, 0, NO_INDEX, NO_INDEX),
        QuantSpec::Scales {
            axis,
            group_size,
            scales,
        } => (1, axis, group_size, scales, NO_INDEX),
        QuantSpec::ScalesOuter {
            axis,
            group_size,
            scales,
            outer,
        } => (2, axis, group_size, scales, outer),
    }
}

/// A spec's descriptor fields read from the spec itself, with the
/// positions the cursor gave it: what the checking pass hands the rules,
/// so that no 128-byte descriptor is built (and copied) for a check.
/// `rank` is the shape's length, at most 8.
#[derive(Copy, Clone)]
struct SpecFields<'s, 'a> {
    spec: &'s TensorSpec<'a>,
    rank: u8,
    layout_len: u16,
    byte_offset: u64,
}

impl Fields for SpecFields<'_, '_> {
    fn dtype(&self) -> u16 {
        self.spec.dtype.code()
    }
    fn rank(&self) -> u8 {
        self.rank
    }
    fn layout_len(&self) -> u16 {
        self.layout_len
    }
    fn block_size(&self) -> u32 {
        self.spec.block_size
    }
    fn quant_scheme(&self) -> u16 {
        quant_fields(self.spec.quant).0
    }
    fn quant_axis(&self) -> u16 {
        quant_fields(self.spec.quant).1
    }
    fn group_size(&self) -> u32 {
        quant_fields(self.spec.quant).2
    }
    fn scale_index(&self) -> u32 {
        quant_fields(self.spec.quant).3
    }
    fn outer_index(&self) -> u32 {
        quant_fields(self.spec.quant).4
    }
    fn byte_offset(&self) -> u64 {
        self.byte_offset
    }
    fn byte_length(&self) -> u64 {
        self.spec.payload.len() as u64
    }
    fn shape(&self) -> [u64; 8] {
        let mut shape = [0u64; 8];
        for (slot, &dim) in shape.iter_mut().zip(self.spec.shape) {
            *slot = dim;
        }
        shape
    }
    /// The slots past the shape's length (the rank) are zero, as the
    /// written descriptor's are.
    fn dim(&self, k: usize) -> u64 {
        self.spec.shape.get(k).copied().unwrap_or(0)
    }
}

/// Whether every rule of [`check_spec`] holds for `spec` by the short
/// argument of the common case: an unquantized spec of a closed dtype of
/// whole bytes whose payload no rule reads (not bool, not packed), no
/// layout name or block size, host numbers (if any) of that dtype, and a
/// payload of exactly the element count times the width. The other rules
/// of step 9 hold for every spec the checking pass asks this of: the rank
/// is at most 8 (`rank_of`), the slots past it are zero, and the payload
/// range ends below 2^64 (`Cursor::payload`) inside an unbounded region.
/// A spec this does not vouch for goes through [`check_spec`], which finds
/// its fault: only the cost of an accepted spec changes, never a verdict
/// or an error.
#[inline(always)] // one caller, once per spec
fn plainly_sound(spec: &TensorSpec<'_>) -> bool {
    let DtypeCode::Closed(dtype) = spec.dtype else {
        return false;
    };
    let width = PLAIN_WIDTH
        .get(usize::from(dtype.code()))
        .copied()
        .unwrap_or(0);
    let host_matches = spec.payload.host_code.is_none_or(|c| c == dtype.code());
    if width == 0
        || !host_matches
        || spec.layout.is_some()
        || spec.block_size != 0
        || spec.quant != QuantSpec::None
    {
        return false;
    }
    // The exact product, when no partial product overflows (a zero
    // dimension keeps it 0); an overflow is left to the rules, for which
    // a zero dimension after it still makes the count 0.
    let mut count = 1u64;
    for &dim in spec.shape {
        match count.checked_mul(dim) {
            Some(c) => count = c,
            None => return false,
        }
    }
    count.checked_mul(u64::from(width)) == Some(spec.payload.len() as u64)
}

/// [`rules::WHOLE_BYTES`] without `bool`, whose bytes a rule reads: by
/// dtype code, the width of a closed dtype whose payload no rule reads,
/// else 0. One load where the dtype's payload rule is a jump.
#[allow(clippy::indexing_slicing)] // evaluated at compile time: a bad index fails the build
const PLAIN_WIDTH: [u8; 20] = {
    let mut table = rules::WHOLE_BYTES;
    table[Dtype::Bool as usize] = 0;
    table
};

/// The rules of one spec (`d`, tensor `i` of `specs`) in the order of the
/// wire text: its host element type, step 9, the payload bits, then its
/// quantization links.
// Cold: the rare path, out of the checking loop. `inline` rather than
// `inline(never)`: a non-generic function that is not `inline` is compiled
// into this crate for every user, firmware that never encodes included,
// and its calls change how the helpers it shares with the parse are
// inlined there.
#[cold]
#[inline]
fn check_spec(i: u32, d: SpecFields<'_, '_>, specs: &[TensorSpec<'_>], count: u32) -> Result<()> {
    let spec = d.spec;
    let in_tensor = |e: Error| refuse(e.fault()).in_tensor(i);
    if let Some(code) = spec.payload.host_code {
        if code != d.dtype() {
            return Err(refuse("host element type does not match the dtype").in_tensor(i));
        }
    }
    rules::check_shape_and_range(d, u64::MAX).map_err(in_tensor)?;
    rules::check_payload_bits(d, spec.payload.bytes).map_err(in_tensor)?;
    // The rule holds for an unquantized spec by construction (its fields
    // are the "none" values); only a quantized one is checked.
    if spec.quant != QuantSpec::None {
        // A linked tensor as its descriptor with the positions left at
        // zero: all the quantization rule reads of it.
        rules::check_quant(i, d, count, |j| {
            let spec = specs.get(j as usize)?;
            Some(SpecFields {
                spec,
                rank: rank_of(spec).ok()?,
                layout_len: 0,
                byte_offset: 0,
            })
        })
        .map_err(in_tensor)?;
    }
    Ok(())
}

/// The checking pass of a block whose every spec [`plainly_sound`]
/// vouches for, with nonempty names in a heap of at most 0xFFFF bytes (or
/// no names): the names, placements and rules in one walk, where
/// [`check`] needs two. `None` for any other block and for any block
/// something would refuse: [`check`] then walks it again and decides, so
/// this changes no verdict and no error, only the cost of an accepted
/// plain block.
///
/// `emit` is given each spec's descriptor as the walk places it (the
/// heap offsets only as the low 16 bits, which are the offsets when the
/// walk gives a plan).
#[inline(always)] // two callers, one with a closure that does nothing
fn check_plain<'s>(
    specs: &[TensorSpec<'s>],
    limits: crate::limits::Limits,
    mut emit: impl FnMut(Descriptor<'s>),
) -> Option<Plan> {
    let count = u32::try_from(specs.len())
        .ok()
        .filter(|&c| c <= limits.count_cap)?;
    // Few values live across the loop (each one more is a spill): how
    // many names, the shortest, and the previous one (an empty slice
    // first, below every nonempty name).
    let (mut named_count, mut shortest) = (0usize, usize::MAX);
    let mut names_total = 0u64;
    let mut payload_end = 0u64;
    let mut longest_payload = 0u64;
    let (mut previous, mut increasing) = (&[][..], true);
    for spec in specs {
        if spec.shape.len() > usize::from(MAX_RANK) || !plainly_sound(spec) {
            return None;
        }
        // `Cursor::payload`, with the refusal left to `check`.
        let byte_offset = align_up(payload_end)?;
        let byte_length = spec.payload.len() as u64;
        payload_end = byte_offset.checked_add(byte_length)?;
        longest_payload = longest_payload.max(byte_length);
        #[allow(clippy::cast_possible_truncation)] // see `emit` above
        let (name_off, name_len) = match spec.name {
            Some(name) => {
                let off = names_total as u16;
                named_count += 1;
                names_total += name.len() as u64;
                shortest = shortest.min(name.len());
                let name = name.as_bytes();
                increasing &= previous < name;
                previous = name;
                (off, name.len() as u16)
            }
            None => (NO_OFFSET, 0),
        };
        emit(plain_descriptor(
            spec,
            (name_off, name_len),
            byte_offset,
            byte_length,
        ));
    }
    let named = named_count != 0;
    if (named && named_count != specs.len()) || shortest == 0 || names_total > u64::from(NO_OFFSET)
    {
        return None;
    }
    let name_bytes = u32::try_from(names_total)
        .ok()
        .filter(|&n| n <= limits.byte_cap)?;
    if named && !increasing {
        let name_of = |i: u32| {
            specs
                .get(i as usize)
                .and_then(|s| s.name)
                .unwrap_or("")
                .as_bytes()
        };
        if super::names::first_repeat_unordered(count, name_of, None)
            .0
            .is_some()
        {
            return None;
        }
    }
    let directory_end = HEADER_LEN + u64::from(count) * DESCRIPTOR_LEN + u64::from(name_bytes);
    align_up(directory_end)?.checked_add(payload_end)?;
    Some(Plan {
        count,
        names_total,
        name_bytes,
        payload_bytes: payload_end,
        longest_payload,
        named,
        plain: true,
    })
}

/// The checking pass: every rule the parser applies, on the descriptors
/// the writing pass will emit.
/// By default a block of plain specs takes [`check_plain`]'s one walk;
/// any other (and every block with `small-code`) [`check_ordered`]'s.
fn check<S: Sink>(specs: &[TensorSpec<'_>], w: &Writer<S>) -> Result<Plan> {
    let limits = w.limits();
    if !super::SMALL_CODE {
        if let Some(plan) = check_plain(specs, limits, |_| {}) {
            return Ok(plan);
        }
    }
    check_ordered(specs, limits)
}

/// [`check_plain`] writing the header and descriptors as it goes, into
/// bytes the sink lends ([`Sink::put_lent`]) and keeps only when the walk
/// gives a plan: one walk where [`check`] and [`write`] take two. `None`
/// when the sink declines the loan or the walk gives no plan; nothing is
/// written then.
#[inline(always)] // one caller
fn check_plain_lent<S: Sink>(specs: &[TensorSpec<'_>], w: &mut Writer<S>) -> Option<Plan> {
    const RECORD: usize = DESCRIPTOR_LEN as usize;
    let limits = w.limits();
    let len = specs
        .len()
        .checked_mul(RECORD)?
        .checked_add(HEADER_LEN as usize)?;
    let mut plan = None;
    w.put_lent(len, |region| {
        let Some((header, records)) = region.split_first_chunk_mut::<{ HEADER_LEN as usize }>()
        else {
            return false;
        };
        let mut records = records.as_chunks_mut::<RECORD>().0.iter_mut();
        plan = check_plain(specs, limits, |d| {
            if let Some(record) = records.next() {
                d.write_into(record);
            }
        });
        match &plan {
            Some(plan) => {
                *header = header_bytes(plan);
                true
            }
            None => false,
        }
    });
    plan
}

/// [`check`] by the rules in the order of the wire text.
// `inline` for the reason `check_spec` is: not compiled into this crate
// for firmware that never encodes, where it changes how the rules the
// parse shares are inlined.
#[inline]
fn check_ordered(specs: &[TensorSpec<'_>], limits: crate::limits::Limits) -> Result<Plan> {
    let count = u32::try_from(specs.len())
        .ok()
        .filter(|&c| c <= limits.count_cap)
        .ok_or(refuse("more tensors than the count cap"))?;
    // Names and heap size in one walk; the layout names' heap offsets
    // start after all the names, so this comes before the placements.
    let (mut named, mut unnamed) = (false, false);
    let (mut names_total, mut layouts_total) = (0u64, 0u64);
    let mut some_empty = false;
    for spec in specs {
        match spec.name {
            Some(name) => {
                named = true;
                names_total += name.len() as u64;
                some_empty |= name.is_empty();
            }
            None => unnamed = true,
        }
        if let Some(layout) = spec.layout {
            layouts_total += layout.len() as u64;
            some_empty |= layout.is_empty();
        }
    }
    if named && unnamed {
        return Err(refuse("some tensors are named and some are not"));
    }
    let name_bytes = u32::try_from(names_total + layouts_total)
        .ok()
        .filter(|&n| n <= limits.byte_cap)
        .ok_or(refuse("name heap above the byte cap"))?;

    // A heap of at most 0xFFFF bytes of nonempty names puts every name and
    // layout name at an offset below 0xFFFF with a length that fits: no
    // `slot` can refuse, and the walk need not place them.
    let slots_fit = !some_empty && names_total + layouts_total <= u64::from(NO_OFFSET);
    let mut cursor = Cursor::new(names_total);
    // The names so far in strictly increasing order (then unique), checked
    // on the way; only names out of order need the uniqueness search.
    let (mut previous, mut increasing) = (&[][..], true);
    let mut plain = true;
    let mut longest_payload = 0u64;
    for (i, spec) in (0u32..).zip(specs) {
        // What `Cursor::place` computes, in its order, without building
        // the descriptor: the rules read the spec's fields in place.
        let rank = rank_of(spec)?;
        let layout_len = if slots_fit {
            spec.layout.map_or(0, |l| l.len() as u16)
        } else {
            slot(spec.name, &mut cursor.name)?;
            slot(spec.layout, &mut cursor.layout)?.1
        };
        let byte_offset = cursor.payload(spec.payload.len() as u64)?;
        longest_payload = longest_payload.max(spec.payload.len() as u64);
        // The spec's own rules, in the wire text's order; out of line, and
        // only for a spec the common case does not vouch for.
        let sound = plainly_sound(spec);
        plain &= sound;
        if !sound {
            let d = SpecFields {
                spec,
                rank,
                layout_len,
                byte_offset,
            };
            check_spec(i, d, specs, count)?;
        }
        if let Some(name) = spec.name {
            let name = name.as_bytes();
            increasing &= i == 0 || previous < name;
            previous = name;
        }
    }
    let name_of = |i: u32| {
        specs
            .get(i as usize)
            .and_then(|s| s.name)
            .unwrap_or("")
            .as_bytes()
    };
    if named && !increasing {
        if let (Some(i), _) = super::names::first_repeat_unordered(count, name_of, None) {
            return Err(refuse("tensor name repeats an earlier name").in_tensor(i));
        }
    }
    let directory_end = HEADER_LEN + u64::from(count) * DESCRIPTOR_LEN + u64::from(name_bytes);
    align_up(directory_end)
        .and_then(|base| base.checked_add(cursor.payload_end))
        .ok_or(refuse("block length overflows 64 bits"))?;
    Ok(Plan {
        count,
        names_total,
        name_bytes,
        payload_bytes: cursor.payload_end,
        longest_payload,
        named,
        plain,
    })
}

/// The writing pass: header, descriptors, heap, padding, payloads.
fn write<S: Sink>(specs: &[TensorSpec<'_>], plan: &Plan, w: &mut Writer<S>) -> Result<()> {
    w.put(&header_bytes(plan))?;
    // Descriptors.
    // Each built where the sink will keep it (`put_built`), not copied.
    let mut cursor = Cursor::new(plan.names_total);
    const RECORD: usize = DESCRIPTOR_LEN as usize;
    if plan.plain {
        for spec in specs {
            let d = cursor.place_plain(spec);
            w.put_built::<RECORD>(RECORD, |record| d.write_into(record))?;
        }
    } else {
        for spec in specs {
            let d = cursor.place(spec)?;
            w.put_built::<RECORD>(RECORD, |record| d.write_into(record))?;
        }
    }
    write_heap_and_payloads(specs, plan, w)
}

/// The 64-byte header of the block `plan` describes.
#[inline] // as `check_ordered`
fn header_bytes(plan: &Plan) -> [u8; HEADER_LEN as usize] {
    let directory_bytes = u64::from(plan.count) * DESCRIPTOR_LEN + u64::from(plan.name_bytes);
    let flags = FLAG_LITTLE_ENDIAN | if plan.named { FLAG_NAMES } else { 0 };
    let mut header = [0u8; HEADER_LEN as usize];
    let fields = [
        &MAGIC[..],
        &[DIRECTORY_VERSION, flags, 0, 0],
        &plan.count.to_le_bytes(),
        &plan.name_bytes.to_le_bytes(),
        &plan.payload_bytes.to_le_bytes(),
        &directory_bytes.to_le_bytes(),
    ];
    let mut at = 0;
    for field in fields {
        if let Some(slot) = header.get_mut(at..at + field.len()) {
            slot.copy_from_slice(field);
        }
        at += field.len();
    }
    header
}

/// The writing pass after the descriptors: heap, padding, payloads.
fn write_heap_and_payloads<S: Sink>(
    specs: &[TensorSpec<'_>],
    plan: &Plan,
    w: &mut Writer<S>,
) -> Result<()> {
    if !super::SMALL_CODE && lent_tail(specs, plan, w) {
        return Ok(());
    }
    let directory_bytes = u64::from(plan.count) * DESCRIPTOR_LEN + u64::from(plan.name_bytes);
    // Heap: names in order, then layout names in order (a plain block has
    // none).
    for name in specs.iter().filter_map(|s| s.name) {
        w.put(name.as_bytes())?;
    }
    if !plan.plain {
        for layout in specs.iter().filter_map(|s| s.layout) {
            w.put(layout.as_bytes())?;
        }
    }
    // Padding to the payload base.
    let heap_end = HEADER_LEN + directory_bytes;
    let base = align_up(heap_end).ok_or(refuse("block length overflows"))?;
    w.put_zeros(to_usize(base - heap_end)?)?;
    // Payloads, each at its greedy offset, gaps zero: only the payload
    // positions of the walk are needed here.
    let mut cursor = Cursor::new(plan.names_total);
    for spec in specs {
        let end = cursor.payload_end;
        let at = cursor.payload(spec.payload.len() as u64)?;
        let gap = to_usize(at.saturating_sub(end))?;
        // A small payload in wire order goes with its gap in one put.
        let joined = gap
            .checked_add(spec.payload.len())
            .filter(|&n| n <= SMALL_RUN);
        match joined {
            Some(n) if spec.payload.in_wire_order() => {
                w.put_built::<SMALL_RUN>(n, |run| {
                    // The gap is below ALIGN bytes: zero that many (a
                    // fixed-length store), then the payload over the rest.
                    if let Some(zeros) = run.first_chunk_mut::<{ ALIGN as usize }>() {
                        *zeros = [0; ALIGN as usize];
                    }
                    if let Some(slot) = run.get_mut(gap..n) {
                        slot.copy_from_slice(spec.payload.bytes);
                    }
                })?;
            }
            _ => {
                w.put_zeros(gap)?;
                spec.payload.write(w)?;
            }
        }
    }
    Ok(())
}

/// The heap, padding and payloads of a plain block of payloads of at most
/// [`ALIGN`] bytes in wire order (each of which [`write_heap_and_payloads`]
/// copies through a run too) written into bytes the sink lends: one copy
/// a name or payload, and no room to check between them. `false` (nothing
/// written) for any other block, and when the sink declines.
#[inline(always)] // one caller
fn lent_tail<S: Sink>(specs: &[TensorSpec<'_>], plan: &Plan, w: &mut Writer<S>) -> bool {
    if !plan.plain || plan.longest_payload > ALIGN || !order::HOST_IS_LITTLE_ENDIAN {
        return false;
    }
    let heap = plan.name_bytes as usize;
    let heap_end = HEADER_LEN + u64::from(plan.count) * DESCRIPTOR_LEN + u64::from(plan.name_bytes);
    // `check` bounded the block's end.
    let padding = (align_up(heap_end).unwrap_or(heap_end) - heap_end) as usize;
    let Some(len) = usize::try_from(plan.payload_bytes)
        .ok()
        .and_then(|p| p.checked_add(heap + padding))
    else {
        return false;
    };
    w.put_lent(len, |region| {
        let (names, rest) = region.split_at_mut(heap.min(region.len()));
        let mut at = 0;
        for name in specs.iter().filter_map(|s| s.name) {
            if let Some(slot) = names.get_mut(at..at + name.len()) {
                copy_short(slot, name.as_bytes());
            }
            at += name.len();
        }
        let (pad, payloads) = rest.split_at_mut(padding.min(rest.len()));
        pad.fill(0);
        // Each payload at its greedy offset after a gap of under ALIGN
        // bytes: ALIGN zero bytes from the last one's end (a fixed-length
        // store; the rest of the region's end when shorter), then the
        // payload over them.
        let mut end = 0;
        for spec in specs {
            let bytes = spec.payload.bytes;
            let at = (end + ALIGN as usize - 1) & !(ALIGN as usize - 1);
            match payloads
                .get_mut(end..)
                .and_then(<[u8]>::first_chunk_mut::<{ ALIGN as usize }>)
            {
                Some(zeros) => *zeros = [0; ALIGN as usize],
                None => payloads.get_mut(end..).unwrap_or_default().fill(0),
            }
            if let Some(slot) = payloads.get_mut(at..at + bytes.len()) {
                copy_short(slot, bytes);
            }
            end = at + bytes.len();
        }
        true
    })
}

/// Longest alignment gap and payload written as one run: a payload under
/// the alignment and the gap before it.
const SMALL_RUN: usize = 2 * ALIGN as usize;

fn to_usize(n: u64) -> Result<usize> {
    usize::try_from(n).map_err(|_| refuse("length does not fit in memory"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, clippy::unwrap_used)]

    use super::*;

    /// What the common case vouches for, the rules accept; and it does
    /// vouch for the plain tensors a model is made of.
    #[test]
    fn the_common_case_agrees_with_the_rules() {
        let bytes = [0u8; 40];
        let values = [0f32; 6];
        let shapes: [&[u64]; 7] = [
            &[],
            &[6],
            &[2, 3],
            &[0],
            &[0, u64::MAX, u64::MAX],
            &[u64::MAX, 2],
            &[1 << 62],
        ];
        let mut vouched = 0;
        for dtype in Dtype::ALL {
            for shape in shapes {
                for len in [0, 1, 2, 4, 6, 12, 24, 25, 40] {
                    let plain = TensorSpec::new(dtype, shape, &bytes[..len]);
                    let host = TensorSpec {
                        dtype: DtypeCode::Closed(dtype),
                        payload: Payload::host(&values[..len.min(6)]),
                        ..plain
                    };
                    let layout = TensorSpec {
                        layout: Some("q"),
                        ..plain
                    };
                    let blocked = TensorSpec {
                        block_size: 4,
                        ..plain
                    };
                    let quantized = plain.quantized(QuantSpec::Scales {
                        axis: 0,
                        group_size: 1,
                        scales: 0,
                    });
                    let opaque = TensorSpec::opaque(4096, "q", 4, shape, &bytes[..len]);
                    for spec in [plain, host, layout, blocked, quantized, opaque] {
                        let specs = [spec];
                        let Ok(rank) = rank_of(&spec) else {
                            continue;
                        };
                        let d = SpecFields {
                            spec: &spec,
                            rank,
                            layout_len: spec.layout.map_or(0, |l| l.len() as u16),
                            byte_offset: 0,
                        };
                        if plainly_sound(&spec) {
                            assert_eq!(check_spec(0, d, &specs, 1), Ok(()), "{spec:?}");
                            vouched += 1;
                        }
                    }
                }
            }
        }
        assert!(vouched >= 16, "{vouched}");
        // A plain block writes what the checked walk writes.
        let specs = [
            TensorSpec::new(Dtype::F32, &[1], &bytes[..4]).named("a"),
            TensorSpec::new(Dtype::U8, &[3, 1], &bytes[..3]).named("b"),
            TensorSpec::new(Dtype::F64, &[], &bytes[..8]).named("c"),
        ];
        let (mut checked, mut plain) = (Cursor::new(3), Cursor::new(3));
        for spec in &specs {
            assert!(plainly_sound(spec));
            assert_eq!(plain.place_plain(spec), checked.place(spec).unwrap());
        }
    }

    /// The one walk of a plain block plans what the ordered walk plans,
    /// and declines every block the ordered walk refuses or that is not
    /// plain (which the ordered walk then decides alone).
    #[test]
    fn the_plain_walk_plans_what_the_ordered_walk_plans() {
        let bytes = [0u8; 24];
        let values = [0f32; 2];
        let long = "n".repeat(0xFFFE);
        let f32 = |name| TensorSpec::new(Dtype::F32, &[2], &bytes[..8]).named(name);
        let u8s = |name, len| TensorSpec::new(Dtype::U8, &[3, 1], &bytes[..len]).named(name);
        let blocks: [&[TensorSpec<'_>]; 16] = [
            &[],
            &[f32("a"), u8s("b", 3), f32("c")],
            &[f32("a"), f32("a")],
            &[f32("b"), f32("a")],
            &[f32("b"), f32("a"), f32("b")],
            &[f32("a"), f32("")],
            &[f32("a"), TensorSpec::new(Dtype::F32, &[2], &bytes[..8])],
            &[
                TensorSpec::new(Dtype::F32, &[2], &bytes[..8]),
                TensorSpec::new(Dtype::F64, &[], &bytes[..8]),
            ],
            &[f32("a"), u8s("b", 4)],
            &[
                f32("a"),
                TensorSpec::new(Dtype::Bool, &[1], &bytes[..1]).named("b"),
            ],
            &[f32("a"), TensorSpec::from_host(&[2], &values).named("b")],
            &[
                f32("a"),
                TensorSpec::opaque(4096, "q", 4, &[1], &bytes[..4]).named("b"),
            ],
            &[f32(&long), f32("o")],
            &[f32(&long), f32("op"), f32("q")],
            &[
                f32("a"),
                TensorSpec::new(Dtype::F32, &[1; 9], &bytes[..4]).named("b"),
            ],
            &[
                f32("a"),
                TensorSpec::new(Dtype::U8, &[1 << 40, 1 << 40], &[]).named("b"),
            ],
        ];
        let mut planned = 0;
        for limits in [
            crate::limits::Limits::DEFAULT,
            crate::limits::Limits::uniform(2),
        ] {
            for specs in blocks {
                let ordered = check_ordered(specs, limits);
                match check_plain(specs, limits, |_| {}) {
                    Some(plan) => {
                        assert_eq!(Ok(plan), ordered, "{specs:?}");
                        planned += 1;
                    }
                    None => {
                        let plain = specs.iter().all(plainly_sound);
                        assert!(ordered.is_err() || !plain, "{specs:?}");
                    }
                }
            }
        }
        assert!(planned >= 5, "{planned}");
    }

    #[test]
    fn short_copies_copy_every_byte() {
        let src: std::vec::Vec<u8> = (1..=80).collect();
        for n in 0..=80 {
            let mut dst = std::vec![0u8; n];
            copy_short(&mut dst, &src[..n]);
            assert_eq!(dst, &src[..n], "{n}");
        }
    }

    /// A name heap refused for its names' slots, whatever the shortcut for
    /// a heap that fits: an empty name, a name at offset 0xFFFF, each in
    /// its place in the walk's order (after the rank of its own tensor,
    /// before anything of a later one).
    #[test]
    fn name_slots_are_refused_in_the_walks_order() {
        let fault = |specs: &[TensorSpec<'_>]| {
            let mut buf = std::vec![0u8; 1 << 18];
            let e = crate::to_slice(&Tensors(specs), &mut buf).unwrap_err();
            assert_eq!(e.refusal(), Some(Refusal::NotEncodable));
            e.fault()
        };
        let text = |fault: &'static str| {
            if cfg!(feature = "no-error-text") {
                ""
            } else {
                fault
            }
        };
        let bytes = [0u8; 4];
        let nine = [1u64; 9];
        let f32 = |name| TensorSpec::new(Dtype::F32, &[1], &bytes).named(name);
        let rank9 = |name| TensorSpec::new(Dtype::F32, &nine, &bytes).named(name);
        let empty = text("empty name or layout name");
        let rank = text("rank above 8");
        assert_eq!(fault(&[f32("a"), f32(""), rank9("c")]), empty);
        assert_eq!(fault(&[f32("a"), rank9("b"), f32("")]), rank);
        assert_eq!(fault(&[rank9("")]), rank);
        let layout = [TensorSpec::opaque(4096, "", 4, &[1], &bytes)];
        assert_eq!(fault(&layout), empty);
        // 0xFFFF bytes of names fit; one more byte puts a name at 0xFFFF.
        let long = "a".repeat(0xFFFE);
        let mut buf = std::vec![0u8; 1 << 18];
        assert!(crate::to_slice(&Tensors(&[f32(&long), f32("b")]), &mut buf).is_ok());
        let longer = "a".repeat(0xFFFF);
        let offset = text("name heap offset does not fit below 0xFFFF");
        assert_eq!(fault(&[f32(&longer), f32("b"), rank9("c")]), offset);
    }
}
