//! The tensor directory: [`Directory::parse`] checks a whole block once, in
//! the format's check order; afterwards [`TensorView`]s borrow names,
//! shapes and payloads from it without allocating. [`TensorSpec`] and
//! [`Tensors`] write the canonical block.
//!
//! The check has two equivalent forms, chosen by the `small-code` feature
//! and never by the target, so that a host test runs either. Both give the
//! same verdict, code and offset for every block; `small-code` gives up
//! speed for flash:
//!
//! | concern | default | `small-code` |
//! |---|---|---|
//! | descriptor steps (`parse`) | one pass over all steps, the ordered check only for a block that fails it | the ordered check alone |
//! | UTF-8 of the name heap (`parse`) | skipped for an ASCII heap | always run |
//! | alignment gaps (`parse`), shape tails (`rules`) | ORed first, searched only when nonzero | searched at once |
//! | step 9 (`rules`) | a common descriptor (closed whole-byte dtype, no layout name or block size) accepted in a few compares, the ordered rules for any other | the ordered rules |
//! | unsorted names without alloc or scratch (`names`) | sorted 256-index chunks, O(n²/256) | pairwise, O(n²) |
//! | name comparison (`names`) | eight bytes at a time, inline | `<[u8]>::cmp` |
//! | rule functions, name lookups (`rules`, `name_at`) | compiler's choice | inlined into their one caller, or kept out of line where there are several |
//!
//! The run-time choices read one constant, `SMALL_CODE`; the rest are
//! `cfg` attributes on the items of the table.

/// Whether the `small-code` form of the directory check is built.
const SMALL_CODE: bool = cfg!(feature = "small-code");

mod build;
mod descriptor;
mod names;
pub(crate) mod parse;
mod rules;

pub use build::{Payload, QuantSpec, TensorSpec, Tensors};
// The layout is the parser's and the builder's business: other crates
// read a block through `Directory` and `stream::Checker`.
pub(crate) use descriptor::{
    DESCRIPTOR_LEN, DIRECTORY_VERSION, FLAG_LITTLE_ENDIAN, FLAG_NAMES, HEADER_LEN, MAGIC, MAX_RANK,
};
pub use names::NameIndex;
#[cfg(feature = "alloc")]
pub use names::{NameTable, RepeatedName};
pub use rules::element_count;

use descriptor::{dims_of, Fields, Record, NO_INDEX};
use parse::Placement;

use crate::dtype::{Dtype, DtypeCode};
use crate::error::{Code, Detail, Error, Refusal, Result};
use crate::frozen::{Decode, Encode, Frozen};
use crate::limits::Limits;
use crate::order::{self, Element};
use crate::schema::Schema;
use crate::wire::{Reader, Sink, Writer};

/// A checked tensor directory block, borrowed from the caller's buffer.
///
/// Positions are absolute: [`TensorView::byte_range`] is a payload's range
/// in the buffer the directory was parsed from (a message or a file),
/// not the wire's offset from the start of the payload region, and is
/// what a typed array or a memory map needs.
///
/// A directory is `Clone`, not `Copy`: with `alloc`, a parsed one keeps
/// the parse's lookup table by name, shared (a clone adds a reference, it
/// does not copy the table).
#[derive(Clone, PartialEq, Eq)]
pub struct Directory<'a> {
    /// Exactly the block: header through the last payload byte.
    block: &'a [u8],
    /// Absolute offset of the block's first byte in the parsed buffer.
    offset: usize,
    tensor_count: u32,
    name_bytes: u32,
    payload_base: usize,
    flags: u8,
    /// Names in strictly increasing byte order (lookups binary-search
    /// where no table is kept).
    names_sorted: bool,
    /// The table the parse kept for lookups (with `alloc`).
    names: names::ParsedNames,
    /// The name heap as text, once the parse knows it is UTF-8 (empty
    /// otherwise, and with `small-code`): a view's name is cut from it
    /// rather than checked again.
    heap_text: HeapText<'a>,
}

/// The name heap as text, or empty when not known to be UTF-8: a function
/// of the block's bytes and of how it was read, so it takes no part in
/// equality. With `small-code` it holds nothing (names are checked when
/// read, and the directory stays two words smaller in flash and RAM).
#[derive(Copy, Clone, Debug, Default)]
struct HeapText<'a>(
    #[cfg(not(feature = "small-code"))] &'a str,
    #[cfg(feature = "small-code")] core::marker::PhantomData<&'a str>,
);

impl<'a> HeapText<'a> {
    /// Nothing known.
    const NONE: HeapText<'static> = HeapText(
        #[cfg(not(feature = "small-code"))]
        "",
        #[cfg(feature = "small-code")]
        core::marker::PhantomData,
    );

    /// The text of `heap`, when it is UTF-8.
    #[cfg_attr(feature = "small-code", allow(unused_variables))]
    fn of(heap: &'a [u8]) -> HeapText<'a> {
        #[cfg(not(feature = "small-code"))]
        return HeapText(core::str::from_utf8(heap).unwrap_or(""));
        #[cfg(feature = "small-code")]
        HeapText(core::marker::PhantomData)
    }

    /// The text of heap bytes `start..start + len`, when kept and on
    /// character boundaries.
    #[inline]
    #[cfg_attr(feature = "small-code", allow(unused_variables))]
    fn get(&self, start: usize, len: usize) -> Option<&'a str> {
        #[cfg(not(feature = "small-code"))]
        return self.0.get(start..start.saturating_add(len));
        #[cfg(feature = "small-code")]
        None
    }
}

impl PartialEq for HeapText<'_> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for HeapText<'_> {}

/// A directory's fields without the lookup table it keeps: what a
/// [`TensorView`] carries, so that views stay `Copy` and free to make.
///
/// [`Directory`] repeats these fields rather than holding a `Lean`: with
/// the nested struct the firmware's inlined parse came out 32 bytes
/// larger on Cortex-M3 (register allocation only), past its flash budget.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Lean<'a> {
    block: &'a [u8],
    offset: usize,
    tensor_count: u32,
    name_bytes: u32,
    payload_base: usize,
    flags: u8,
    names_sorted: bool,
    heap_text: HeapText<'a>,
}

impl<'a> Lean<'a> {
    /// The directory again, without its lookup table (what a view's
    /// accessors need: none looks a name up).
    #[inline]
    fn full(self) -> Directory<'a> {
        let Lean {
            block,
            offset,
            tensor_count,
            name_bytes,
            payload_base,
            flags,
            names_sorted,
            heap_text,
        } = self;
        Directory {
            block,
            offset,
            tensor_count,
            name_bytes,
            payload_base,
            flags,
            names_sorted,
            names: names::ParsedNames::NONE,
            heap_text,
        }
    }
}

impl<'a> Directory<'a> {
    #[inline]
    fn lean(&self) -> Lean<'a> {
        Lean {
            block: self.block,
            offset: self.offset,
            tensor_count: self.tensor_count,
            name_bytes: self.name_bytes,
            payload_base: self.payload_base,
            flags: self.flags,
            names_sorted: self.names_sorted,
            heap_text: self.heap_text,
        }
    }
}

/// The bytes of an empty block: the header alone (no tensors, no names).
const EMPTY_BLOCK: [u8; HEADER_LEN as usize] = {
    let mut block = [0u8; HEADER_LEN as usize];
    block[0] = MAGIC[0];
    block[1] = MAGIC[1];
    block[2] = MAGIC[2];
    block[3] = MAGIC[3];
    block[4] = DIRECTORY_VERSION;
    block[5] = FLAG_LITTLE_ENDIAN;
    block
};

impl Directory<'static> {
    /// The directory with no tensors (the 64-byte header alone): what a
    /// record's `tensors` field holds before [`from_bytes_into`] reads a
    /// message into it. [`Default`] gives the same.
    ///
    /// ```
    /// use kiln_nostd::Directory;
    /// assert_eq!(Directory::EMPTY.len(), 0);
    /// assert_eq!(Directory::parse(Directory::EMPTY.as_bytes()), Ok(Directory::EMPTY));
    /// ```
    ///
    /// [`from_bytes_into`]: crate::from_bytes_into
    pub const EMPTY: Directory<'static> = Directory {
        block: &EMPTY_BLOCK,
        offset: 0,
        tensor_count: 0,
        name_bytes: 0,
        payload_base: HEADER_LEN as usize,
        flags: FLAG_LITTLE_ENDIAN,
        names_sorted: false,
        names: names::ParsedNames::NONE,
        heap_text: HeapText::NONE,
    };
}

/// Facts, never the block's bytes: where the block lies, how long it is,
/// and each tensor's name, dtype, shape and byte range.
impl core::fmt::Debug for Directory<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Directory")
            .field("offset", &self.offset)
            .field("block_len", &self.block_len())
            .field("count", &self.len())
            .field("tensors", &TensorList(self))
            .finish()
    }
}

/// A directory's tensors as a `Debug` list.
struct TensorList<'d, 'a>(&'d Directory<'a>);

impl core::fmt::Debug for TensorList<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl Default for Directory<'_> {
    fn default() -> Self {
        Directory::EMPTY
    }
}

impl<'a> Directory<'a> {
    /// Checks a standalone block under the default caps. The buffer must be
    /// exactly one block.
    ///
    /// ```
    /// use kiln_nostd::Directory;
    /// let mut empty = [0u8; 64];
    /// empty[..6].copy_from_slice(b"KLNT\x02\x02");
    /// let dir = Directory::parse(&empty).unwrap();
    /// assert_eq!(dir.len(), 0);
    /// ```
    pub fn parse(buf: &'a [u8]) -> Result<Directory<'a>> {
        Directory::parse_with(buf, Limits::DEFAULT)
    }

    /// Checks a standalone block under `limits`.
    pub fn parse_with(buf: &'a [u8], limits: Limits) -> Result<Directory<'a>> {
        parse::parse(buf, limits, Placement::Standalone, false, None)
    }

    /// [`Directory::parse_with`], with `scratch` (one `u32` per tensor) for
    /// the name uniqueness check: O(n log n) for names in any order with no
    /// allocator. Without it, a build with no `alloc` compares unsorted
    /// names pairwise with the `small-code` feature, O(n²), and chunk by
    /// chunk otherwise, O(n²/256); sorted names take one pass either way. A `scratch`
    /// too small is not used.
    #[doc(hidden)]
    pub fn parse_with_scratch(
        buf: &'a [u8],
        limits: Limits,
        scratch: &mut [u32],
    ) -> Result<Directory<'a>> {
        parse::parse(buf, limits, Placement::Standalone, false, Some(scratch))
    }

    /// The directory of a block's head alone (header, descriptors, name
    /// heap, padding), as [`crate::stream::Checker::take_head`] gives it
    /// once checked, for a reader by ranges that never holds the payloads.
    /// The header's fields are checked again; the descriptors are those
    /// the checker checked. Crate-private: its [`TensorView::bytes`] are
    /// not the payloads ([`crate::inspect::head_facts`] is the public way).
    /// Also returns the payload region's length.
    #[cfg(feature = "inspect")]
    pub(crate) fn of_checked_head(head: &'a [u8], limits: Limits) -> Result<(Directory<'a>, u64)> {
        let header = parse::check_header_fields(head, limits)?;
        if (head.len() as u64) < header.payload_base {
            return Err(Error::refused(
                Refusal::WrongValue,
                "not a whole directory head",
            ));
        }
        Ok((header.directory(head), header.payload_bytes))
    }

    /// Checks the block at the start of `buf`, which may continue with
    /// other data (a `tensors` field followed by more fields).
    /// [`Directory::block_len`] says where the block ends.
    #[doc(hidden)]
    pub fn parse_prefix(buf: &'a [u8], limits: Limits) -> Result<Directory<'a>> {
        parse::parse(buf, limits, Placement::Field, false, None)
    }

    /// Reads a block this process just wrote. Every bound is still checked,
    /// so a bad buffer cannot cause a read outside it, but UTF-8 of names
    /// and the quantization rules are skipped: [`TensorView::name`] of a
    /// bad name is `None`, and quantization links may be nonsense.
    #[doc(hidden)]
    pub fn parse_trusted(buf: &'a [u8], limits: Limits) -> Result<Directory<'a>> {
        parse::parse(buf, limits, Placement::Standalone, true, None)
    }

    /// How many tensors.
    pub const fn len(&self) -> usize {
        self.tensor_count as usize
    }

    /// Whether there are none.
    pub const fn is_empty(&self) -> bool {
        self.tensor_count == 0
    }

    /// The block's bytes (canonical, since it was checked).
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.block
    }

    /// The block's length in bytes.
    #[doc(hidden)]
    pub const fn block_len(&self) -> usize {
        self.block.len()
    }

    /// Whether the name flag is set (every tensor has a name).
    #[doc(hidden)]
    pub const fn has_names(&self) -> bool {
        self.flags & FLAG_NAMES != 0
    }

    /// Whether the names are in strictly increasing byte order, as a dict
    /// of tensors and every converter of ours writes them; lookups by name
    /// are then binary searches where the parse kept no hash table (no
    /// `alloc`). False for an unnamed directory.
    #[doc(hidden)]
    pub const fn names_sorted(&self) -> bool {
        self.names_sorted
    }

    /// The name heap: every tensor's name, then every layout name, end to
    /// end in descriptor order (empty when there are none). A writer that
    /// must treat some bytes of a name specially (a JSON escape) can test
    /// the whole heap once instead of each name.
    ///
    /// ```
    /// use kiln_nostd::{Directory, TensorSpec};
    /// let (one, two) = ([1u8], [2u8]);
    /// let specs = [
    ///     TensorSpec::from_host(&[1], &one).named("ab"),
    ///     TensorSpec::from_host(&[1], &two).named("c"),
    /// ];
    /// let mut buf = [0u8; 512];
    /// let dir = Directory::build(&specs, &mut buf).unwrap();
    /// assert_eq!(dir.name_heap(), b"abc");
    /// assert_eq!(Directory::EMPTY.name_heap(), b"");
    /// ```
    #[doc(hidden)]
    pub fn name_heap(&self) -> &'a [u8] {
        self.heap()
    }

    /// Absolute offset of the block's first byte in the buffer it was
    /// parsed from (0 for [`Directory::parse`], the field's offset for a
    /// `tensors` field in a message).
    #[doc(hidden)]
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// Absolute byte range of the whole block.
    pub const fn byte_range(&self) -> core::ops::Range<usize> {
        self.offset..self.offset.saturating_add(self.block.len())
    }

    /// Absolute offset of the payload region.
    #[doc(hidden)]
    pub const fn payload_offset(&self) -> usize {
        self.offset.saturating_add(self.payload_base)
    }

    /// Writes the canonical block for `specs` into `buf` and returns it as
    /// a checked directory: how a struct with a `tensors` field (a
    /// [`Directory`]) is given tensors to write. What the builder refuses
    /// is refused here, before anything is written.
    ///
    /// ```
    /// use kiln_nostd::{Directory, TensorSpec};
    /// let values = [1.0f32, -2.0];
    /// let mut buf = [0u8; 512];
    /// let dir = Directory::build(&[TensorSpec::from_host(&[2], &values).named("w")], &mut buf).unwrap();
    /// assert_eq!(dir.block_len(), 64 + 128 + 64 + 8); // header, descriptor, heap "w" padded, payload
    /// assert_eq!(dir.by_name("w").unwrap().shape(), &[2]);
    /// ```
    ///
    /// A `buf` shorter than [`Directory::encoded_len`] is refused with
    /// [`Refusal::BufferTooSmall`], whose [`Detail::Bytes`] gives that
    /// length and the buffer's.
    pub fn build(specs: &[TensorSpec<'_>], buf: &'a mut [u8]) -> Result<Directory<'a>> {
        let written = crate::frozen::to_slice(&Tensors(specs), buf)?;
        let block: &'a [u8] = written;
        parse::parse(
            block,
            Limits::uniform(crate::WIRE_MAX),
            Placement::Standalone,
            true,
            None,
        )
    }

    /// The exact length [`Directory::build`] writes for `specs`: the
    /// builder itself runs into a counting sink, so the two cannot differ.
    /// What the builder refuses is refused here too.
    ///
    /// ```
    /// use kiln_nostd::{Directory, TensorSpec};
    /// let values = [1.0f32, 0.0, 0.5, 0.0, 1.0, -0.5];
    /// let specs = [TensorSpec::from_host(&[2, 3], &values).named("cal")];
    /// let needed = Directory::encoded_len(&specs).unwrap();
    /// let mut buf = [0u8; 512];
    /// let dir = Directory::build(&specs, &mut buf[..needed]).unwrap();
    /// assert_eq!(dir.block_len(), needed);
    /// ```
    pub fn encoded_len(specs: &[TensorSpec<'_>]) -> Result<usize> {
        crate::frozen::encoded_len(&Tensors(specs))
    }

    /// Tensor `index`, in descriptor order.
    #[inline]
    pub fn get(&self, index: usize) -> Option<TensorView<'a>> {
        let index = u32::try_from(index)
            .ok()
            .filter(|&i| i < self.tensor_count)?;
        Some(TensorView {
            dir: self.lean(),
            record: self.record(index)?,
            index,
        })
    }

    /// The tensors in descriptor order.
    pub fn iter(&self) -> TensorIter<'a> {
        self.into_iter()
    }

    // -- byte access for the parser and the views ---------------------------

    /// Where descriptor `index` starts. Callers pass at most the tensor
    /// count, and step 5 found every descriptor inside the buffer, so this
    /// is a position in the buffer and cannot wrap (plain arithmetic: less
    /// code than saturating on every error path of a firmware).
    fn record_start(&self, index: u32) -> usize {
        (index as usize)
            .wrapping_mul(DESCRIPTOR_LEN as usize)
            .wrapping_add(HEADER_LEN as usize)
    }

    /// Descriptor `index`, read in place; `None` past the descriptors
    /// (which the parser's bounds make unreachable for indices below the
    /// count).
    #[inline]
    fn record(&self, index: u32) -> Option<Record<'a>> {
        let start = (index as usize)
            .wrapping_mul(DESCRIPTOR_LEN as usize)
            .wrapping_add(HEADER_LEN as usize);
        // `first_chunk` has no length-mismatch path, so no panic survives
        // in the decoder (the no-panic firmware build links only then).
        self.block
            .get(start..)
            .and_then(<[u8]>::first_chunk::<128>)
            .map(Record)
    }

    /// Every descriptor in order, with its index, read in place.
    fn records(&self) -> impl Iterator<Item = (u32, Record<'a>)> {
        let region = self
            .block
            .get(HEADER_LEN as usize..self.heap_start())
            .unwrap_or(&[]);
        (0u32..).zip(
            region
                .chunks_exact(DESCRIPTOR_LEN as usize)
                .filter_map(<[u8]>::first_chunk::<128>)
                .map(Record),
        )
    }

    /// The name heap.
    fn heap(&self) -> &'a [u8] {
        let start = self.heap_start();
        self.block
            .get(start..start.saturating_add(self.name_bytes as usize))
            .unwrap_or(&[])
    }

    fn heap_start(&self) -> usize {
        self.record_start(self.tensor_count)
    }

    #[inline]
    fn heap_slice(&self, off: u16, len: u16) -> &'a [u8] {
        if len == 0 {
            return &[];
        }
        let start = self.heap_start().saturating_add(usize::from(off));
        self.block
            .get(start..start.saturating_add(usize::from(len)))
            .unwrap_or(&[])
    }

    /// The name bytes of tensor `index` (empty when unnamed), read straight
    /// from the two fields of its record.
    #[cfg_attr(not(feature = "small-code"), inline)] // inlined into lookups; `small-code` keeps one copy
    #[cfg_attr(feature = "small-code", inline(never))]
    fn name_at(&self, index: u32) -> &'a [u8] {
        let heap_start = self.heap_start();
        let (records, heap) = self
            .block
            .split_at_checked(heap_start)
            .unwrap_or((&[], &[]));
        name_in(records, heap, index as usize)
    }

    /// Payload bytes `[start, end)` measured from the payload base. Every
    /// caller passes offsets that step 9 has bounded (a payload's start or
    /// end, at most `payload_bytes`, inside the block and so inside the
    /// buffer): they fit in `usize` and the sums do not wrap. Plain
    /// arithmetic, then, and one bounds check: this sits in three loops of
    /// the parse and in every view.
    #[inline]
    #[allow(clippy::cast_possible_truncation)] // bounded by the buffer's length, above
    fn payload_region(&self, start: u64, end: u64) -> &'a [u8] {
        let base = self.payload_base;
        self.block
            .get(base.wrapping_add(start as usize)..base.wrapping_add(end as usize))
            .unwrap_or(&[])
    }

    #[inline]
    fn payload_of(&self, r: Record<'_>) -> &'a [u8] {
        self.payload_region(r.byte_offset(), r.range_end().unwrap_or(0))
    }

    fn fault_in(&self, index: u32, code: Code, fault: &'static str, field: usize) -> Error {
        // `field` is below 128: still inside the descriptor.
        Error::wire(code, fault, self.record_start(index).wrapping_add(field)).in_tensor(index)
    }
}

/// The name of tensor `index`, from the block's bytes before the heap
/// (`records`, header included) and from the heap on (`heap`): two loads
/// and two bounds checks, for the hot loop of a lookup.
#[inline]
fn name_in<'a>(records: &[u8], heap: &'a [u8], index: usize) -> &'a [u8] {
    match name_field(records, index) {
        Some((off, len)) => heap.get(off..off + len).unwrap_or(&[]),
        None => &[],
    }
}

/// The heap offset and length of tensor `index`'s name, from the block's
/// bytes before the heap (`records`): one bounds check and one load.
#[inline] // every probe of by_name
fn name_field(records: &[u8], index: usize) -> Option<(usize, usize)> {
    // Byte 4 of descriptor `index`: 64 + 128 * index + 4, written as an OR
    // since the record start is a multiple of 128 past the header.
    let field = (index << 7) | (HEADER_LEN as usize + 4);
    let &[o0, o1, l0, l1] = records.get(field..).and_then(<[u8]>::first_chunk)?;
    Some((
        usize::from(u16::from_le_bytes([o0, o1])),
        usize::from(u16::from_le_bytes([l0, l1])),
    ))
}

impl<'a> IntoIterator for &Directory<'a> {
    type Item = TensorView<'a>;
    type IntoIter = TensorIter<'a>;

    fn into_iter(self) -> TensorIter<'a> {
        TensorIter {
            dir: self.lean(),
            next: 0,
        }
    }
}

/// The tensors of a [`Directory`] in descriptor order.
#[derive(Clone, Debug)]
pub struct TensorIter<'a> {
    dir: Lean<'a>,
    next: usize,
}

impl<'a> Iterator for TensorIter<'a> {
    type Item = TensorView<'a>;

    #[inline]
    fn next(&mut self) -> Option<TensorView<'a>> {
        let view = self.dir.full().get(self.next)?;
        self.next = self.next.saturating_add(1);
        Some(view)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.dir.tensor_count as usize).saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for TensorIter<'_> {}

/// How a tensor's elements are quantized. Kiln stores the links and never
/// applies a scale.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Quant<'a> {
    /// Scheme 0: plain elements.
    None,
    /// Scheme 1: one sibling tensor holds a scale per group of `group_size`
    /// elements along `axis`.
    Scales {
        /// Dimension the groups run along.
        axis: u16,
        /// Elements per group.
        group_size: u32,
        /// The scale tensor.
        scales: TensorView<'a>,
    },
    /// Scheme 2: scheme 1 plus one f32 outer scale for the whole tensor.
    ScalesOuter {
        /// Dimension the groups run along.
        axis: u16,
        /// Elements per group.
        group_size: u32,
        /// The scale tensor.
        scales: TensorView<'a>,
        /// The one-element f32 outer scale tensor.
        outer: TensorView<'a>,
    },
}

impl From<Quant<'_>> for QuantSpec {
    /// The same links, by index: what the builder takes to write them
    /// again.
    fn from(quant: Quant<'_>) -> QuantSpec {
        match quant {
            Quant::None => QuantSpec::None,
            Quant::Scales {
                axis,
                group_size,
                scales,
            } => QuantSpec::Scales {
                axis,
                group_size,
                scales: scales.index,
            },
            Quant::ScalesOuter {
                axis,
                group_size,
                scales,
                outer,
            } => QuantSpec::ScalesOuter {
                axis,
                group_size,
                scales: scales.index,
                outer: outer.index,
            },
        }
    }
}

/// One tensor of a checked [`Directory`]: the directory and the tensor's
/// descriptor, borrowed. Every accessor reads its own field of the
/// descriptor when called (the parser has checked them all), so looking a
/// tensor up costs nothing beyond finding it.
#[derive(Copy, Clone)]
pub struct TensorView<'a> {
    dir: Lean<'a>,
    record: Record<'a>,
    index: u32,
}

impl PartialEq for TensorView<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && self.dir == other.dir
    }
}

impl Eq for TensorView<'_> {}

impl core::fmt::Debug for TensorView<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TensorView")
            .field("index", &self.index)
            .field("name", &self.name())
            .field("dtype", &self.dtype())
            .field("shape", &self.shape())
            .field("byte_range", &self.byte_range())
            .finish()
    }
}

impl<'a> TensorView<'a> {
    /// Position in the directory.
    pub const fn index(&self) -> usize {
        self.index as usize
    }

    /// The dtype code, closed or opaque.
    pub fn dtype(&self) -> DtypeCode {
        let code = self.record.dtype();
        // Checked by parse; the fallback is never taken.
        DtypeCode::from_code(code).unwrap_or(DtypeCode::Opaque(code))
    }

    /// Number of dimensions, 0 through 8.
    #[doc(hidden)]
    pub fn rank(&self) -> usize {
        usize::from(self.record.rank())
    }

    /// The dimensions (empty for a scalar), decoded from the descriptor:
    /// a [`Shape`] derefs to `&[u64]`.
    ///
    /// ```
    /// use kiln_nostd::{Directory, TensorSpec};
    /// let values = [0f32; 6];
    /// let mut buf = [0u8; 512];
    /// let dir = Directory::build(&[TensorSpec::from_host(&[2, 3], &values)], &mut buf).unwrap();
    /// let shape = dir.get(0).unwrap().shape();
    /// assert_eq!(shape, [2, 3]);
    /// let dims: &[u64] = &shape;
    /// assert_eq!(dims.iter().product::<u64>(), 6);
    /// ```
    pub fn shape(&self) -> Shape {
        Shape {
            dims: self.record.shape(),
            rank: self.record.rank().min(MAX_RANK),
        }
    }

    /// Product of the dimensions (1 for a scalar).
    pub fn element_count(&self) -> u64 {
        element_count(&self.shape()).unwrap_or(0)
    }

    /// The tensor's name, if the directory names its tensors.
    #[inline]
    pub fn name(&self) -> Option<&'a str> {
        self.heap_text(self.record.name_off(), self.record.name_len())
    }

    /// The opaque layout name (e.g. `Q4_K`), for an opaque dtype.
    pub fn layout(&self) -> Option<&'a str> {
        self.heap_text(self.record.layout_off(), self.record.layout_len())
    }

    /// The heap slice at `off` of `len` bytes as text, `None` when empty:
    /// cut from the heap's text when the parse kept it (the slice then
    /// lies on character boundaries), else checked here.
    #[inline]
    fn heap_text(&self, off: u16, len: u16) -> Option<&'a str> {
        if len != 0 {
            if let Some(text) = self.dir.heap_text.get(usize::from(off), usize::from(len)) {
                return Some(text);
            }
        }
        let bytes = self.dir.full().heap_slice(off, len);
        (!bytes.is_empty())
            .then(|| core::str::from_utf8(bytes).ok())
            .flatten()
    }

    /// The opaque block size in bytes (0 for closed dtypes).
    pub fn block_size(&self) -> u32 {
        self.record.block_size()
    }

    /// Offset of the payload from the start of the payload region (the
    /// wire's field).
    #[doc(hidden)]
    pub fn byte_offset(&self) -> u64 {
        self.record.byte_offset()
    }

    /// Payload length in bytes.
    #[doc(hidden)]
    pub fn byte_length(&self) -> u64 {
        self.record.byte_length()
    }

    /// Absolute byte range of the payload in the buffer the directory was
    /// parsed from.
    pub fn byte_range(&self) -> core::ops::Range<usize> {
        // Parse checked that the range lies inside the block.
        let start = self
            .dir
            .full()
            .payload_offset()
            .saturating_add(usize::try_from(self.byte_offset()).unwrap_or(usize::MAX));
        start..start.saturating_add(self.bytes().len())
    }

    /// Bytes per element for alignment: the element width of a whole-byte
    /// dtype wider than one byte, else 1 (one-byte, packed and opaque
    /// dtypes are plain bytes).
    #[doc(hidden)]
    pub fn element_align(&self) -> usize {
        self.dtype().element_align()
    }

    /// Whether the payload's absolute offset is a multiple of its element
    /// width: what a JavaScript typed array over the parsed buffer needs,
    /// and what a zero-copy slice needs when the buffer itself is aligned.
    pub fn is_aligned_at_offset(&self) -> bool {
        self.byte_range().start.is_multiple_of(self.element_align())
    }

    /// What the builder takes to write this tensor again, into a new
    /// block or the same one rebuilt: its dtype, name, layout, block size,
    /// quantization links (by index, so the other tensors keep their
    /// places) and payload bytes. The spec borrows `shape`, which is this
    /// tensor's [`TensorView::shape`] kept by the caller.
    ///
    /// ```
    /// use kiln_nostd::{Directory, TensorSpec, Tensors};
    /// let mut block = [0u8; 256];
    /// let dir = Directory::build(&[TensorSpec::from_host(&[2], &[1.5f32, -2.0])], &mut block).unwrap();
    /// let t = dir.get(0).unwrap();
    /// let shape = t.shape();
    /// let mut out = [0u8; 256];
    /// let again = kiln_nostd::to_slice(&Tensors(&[t.to_spec(&shape)]), &mut out).unwrap();
    /// assert_eq!(again, dir.as_bytes());
    /// ```
    #[doc(hidden)]
    pub fn to_spec<'s>(&self, shape: &'s [u64]) -> TensorSpec<'s>
    where
        'a: 's,
    {
        TensorSpec {
            dtype: self.dtype(),
            shape,
            name: self.name(),
            layout: self.layout(),
            block_size: self.block_size(),
            quant: self.quant().into(),
            payload: Payload::wire(self.bytes()),
        }
    }

    /// The raw little-endian payload, borrowed from the buffer.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.dir.full().payload_of(self.record)
    }

    /// Whether [`TensorView::quant`] is anything but [`Quant::None`]: the
    /// same answer without making the views of the linked tensors.
    ///
    /// ```
    /// use kiln_nostd::{Directory, Dtype, Quant, QuantSpec, TensorSpec};
    /// let (data, scale) = ([0x21u8; 16], [127u8]);
    /// let specs = [
    ///     TensorSpec::new(Dtype::E2M1, &[32], &data).named("w").quantized(QuantSpec::Scales {
    ///         axis: 0,
    ///         group_size: 32,
    ///         scales: 1,
    ///     }),
    ///     TensorSpec::new(Dtype::F8E4M3, &[1], &scale).named("s"),
    /// ];
    /// let mut buf = [0u8; 1024];
    /// let dir = Directory::build(&specs, &mut buf).unwrap();
    /// for t in dir.iter() {
    ///     assert_eq!(t.is_quantized(), t.quant() != Quant::None);
    /// }
    /// assert!(dir.get(0).unwrap().is_quantized());
    /// assert!(!dir.get(1).unwrap().is_quantized());
    /// ```
    #[inline]
    #[doc(hidden)]
    pub fn is_quantized(&self) -> bool {
        let r = self.record;
        let linked = |i: u32| i != NO_INDEX && self.dir.full().get(i as usize).is_some();
        match r.quant_scheme() {
            1 => linked(r.scale_index()),
            2 => linked(r.scale_index()) && linked(r.outer_index()),
            _ => false,
        }
    }

    /// Quantization scheme and the tensors it links to.
    #[inline]
    pub fn quant(&self) -> Quant<'a> {
        let r = self.record;
        let dir = self.dir.full();
        let link = |i: u32| (i != NO_INDEX).then(|| dir.get(i as usize)).flatten();
        let (axis, group_size) = (r.quant_axis(), r.group_size());
        match (
            r.quant_scheme(),
            link(r.scale_index()),
            link(r.outer_index()),
        ) {
            (1, Some(scales), _) => Quant::Scales {
                axis,
                group_size,
                scales,
            },
            (2, Some(scales), Some(outer)) => Quant::ScalesOuter {
                axis,
                group_size,
                scales,
                outer,
            },
            _ => Quant::None,
        }
    }

    fn check_element<T: Element>(&self) -> Result<()> {
        if self.record.dtype() != T::DTYPE_CODE {
            return Err(Error::refused(
                Refusal::WrongElementType,
                "element type does not match the tensor's dtype",
            )
            .with_detail(Detail::Dtypes {
                tensor: self.record.dtype(),
                requested: T::DTYPE_CODE,
            })
            .in_tensor(self.index));
        }
        Ok(())
    }

    /// The payload in place as host numbers: no copy. Refused on a
    /// big-endian host, at a misaligned address, or when `T` is not this
    /// tensor's dtype. The payload's offset from the block start is a
    /// multiple of 64, so it is aligned when the block is.
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T]> {
        self.check_element::<T>()?;
        order::view(self.bytes()).map_err(|e| e.in_tensor(self.index))
    }

    /// Copies the payload into `out` as host numbers (one copy on a
    /// little-endian host, a swap per element on a big-endian one) and
    /// returns the element count.
    pub fn copy_into<T: Element>(&self, out: &mut [T]) -> Result<usize> {
        self.check_element::<T>()?;
        order::copy_into(self.bytes(), out).map_err(|e| e.in_tensor(self.index))
    }

    /// The payload in place when [`TensorView::as_slice`] allows it (a
    /// little-endian host and an address aligned for `T`), else copied
    /// once into `scratch` (swapping on a big-endian host). One call that
    /// gives the right numbers on every host and at every address; only the
    /// wrong element type is refused. `scratch` must hold the element count
    /// when a copy is needed.
    ///
    /// ```
    /// use kiln_nostd::{Directory, TensorSpec};
    /// let values = [1.5f32, -2.0];
    /// let mut block = [0u8; 256];
    /// let dir = Directory::build(&[TensorSpec::from_host(&[2], &values)], &mut block).unwrap();
    /// let mut scratch = [0f32; 2];
    /// let read = dir.get(0).unwrap().view_or_copy(&mut scratch).unwrap();
    /// assert_eq!(read, &values);
    /// ```
    pub fn view_or_copy<'s, T: Element>(&self, scratch: &'s mut [T]) -> Result<&'s [T]>
    where
        'a: 's,
    {
        match self.as_slice::<T>() {
            Ok(view) => Ok(view),
            Err(e) if e.refusal() == Some(Refusal::WrongElementType) => Err(e),
            Err(_) => {
                let count = self.copy_into(scratch)?;
                Ok(scratch.get(..count).unwrap_or_default())
            }
        }
    }

    /// Copies a float tensor (`f32`, `f16` or `bf16`) into `out` as `f32`:
    /// `f16` and `bf16` widen exactly (through the `half` crate), `f32` is
    /// copied. Returns the element count. Other dtypes are refused; for a
    /// display of any dtype see [`TensorView::widen_into`].
    pub fn copy_into_f32(&self, out: &mut [f32]) -> Result<usize> {
        let count = usize::try_from(self.element_count()).unwrap_or(usize::MAX);
        let available = out.len();
        let out = out.get_mut(..count).ok_or(
            Error::refused(
                Refusal::BufferTooSmall,
                "output slice shorter than the element count",
            )
            .with_detail(order::slice_bytes::<f32>(count, available))
            .in_tensor(self.index),
        )?;
        let bytes = self.bytes();
        match self.closed_dtype() {
            Some(Dtype::F32) => self.copy_into(out),
            Some(Dtype::F16) => {
                for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                    if let [lo, hi] = *pair {
                        *slot = half::f16::from_le_bytes([lo, hi]).to_f32();
                    }
                }
                Ok(count)
            }
            Some(Dtype::Bf16) => {
                for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                    if let [lo, hi] = *pair {
                        *slot = half::bf16::from_le_bytes([lo, hi]).to_f32();
                    }
                }
                Ok(count)
            }
            _ => Err(Error::refused(
                Refusal::WrongElementType,
                "copy_into_f32 takes an f32, f16 or bf16 tensor",
            )
            .with_detail(Detail::Dtypes {
                tensor: self.record.dtype(),
                requested: 0,
            })
            .in_tensor(self.index)),
        }
    }

    /// An owned copy of the payload as host numbers. Refused with LIMIT
    /// when the payload is above the byte cap.
    #[cfg(feature = "alloc")]
    pub fn to_vec<T: Element + Default>(&self, limits: Limits) -> Result<alloc::vec::Vec<T>> {
        self.check_element::<T>()?;
        if self.bytes().len() as u64 > u64::from(limits.byte_cap) {
            return Err(Error::wire(
                Code::Limit,
                "payload above the byte cap for an owned copy",
                0,
            )
            .in_tensor(self.index));
        }
        let mut out = alloc::vec![T::default(); self.bytes().len() / T::WIDTH];
        order::copy_into(self.bytes(), &mut out)?;
        Ok(out)
    }

    /// Widens elements `first..first + out.len()` to `f32` for display:
    /// every closed dtype, small floats and packed
    /// nibbles included. Bits only: a quantization scale is never applied.
    /// Returns how many were written (fewer at the tensor's end); an opaque
    /// dtype is refused.
    pub fn widen_into(&self, first: u64, out: &mut [f32]) -> Result<usize> {
        let dtype = self.closed_dtype().ok_or(
            Error::refused(
                Refusal::WrongElementType,
                "an opaque dtype has no elements to widen",
            )
            .with_detail(Detail::Dtypes {
                tensor: self.record.dtype(),
                requested: 0,
            })
            .in_tensor(self.index),
        )?;
        crate::widen::widen_into(dtype, self.bytes(), self.element_count(), first, out)
    }

    /// The closed dtype, if this tensor has one.
    #[doc(hidden)]
    pub fn closed_dtype(&self) -> Option<Dtype> {
        Dtype::from_code(self.record.dtype())
    }
}

/// A tensor's dimensions, as [`TensorView::shape`] decodes them from the
/// descriptor: a small `Copy` value that derefs to `[u64]` (empty for a
/// scalar), and compares with slices and arrays of `u64`.
#[derive(Copy, Clone, Eq)]
pub struct Shape {
    dims: [u64; 8],
    rank: u8,
}

impl Shape {
    /// The dimensions as a slice.
    #[inline]
    #[doc(hidden)]
    pub fn as_slice(&self) -> &[u64] {
        dims_of(&self.dims, self.rank)
    }
}

impl core::ops::Deref for Shape {
    type Target = [u64];

    #[inline]
    fn deref(&self) -> &[u64] {
        self.as_slice()
    }
}

impl AsRef<[u64]> for Shape {
    #[inline]
    fn as_ref(&self) -> &[u64] {
        self.as_slice()
    }
}

impl core::fmt::Debug for Shape {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.as_slice().fmt(f)
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for Shape {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "{=[?]}", self.as_slice());
    }
}

impl core::hash::Hash for Shape {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl PartialEq for Shape {
    fn eq(&self, other: &Shape) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl PartialEq<[u64]> for Shape {
    fn eq(&self, other: &[u64]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<&[u64]> for Shape {
    fn eq(&self, other: &&[u64]) -> bool {
        self.as_slice() == *other
    }
}

impl<const N: usize> PartialEq<[u64; N]> for Shape {
    fn eq(&self, other: &[u64; N]) -> bool {
        self.as_slice() == other
    }
}

impl<const N: usize> PartialEq<&[u64; N]> for Shape {
    fn eq(&self, other: &&[u64; N]) -> bool {
        self.as_slice() == *other
    }
}

impl PartialEq<Shape> for [u64] {
    fn eq(&self, other: &Shape) -> bool {
        self == other.as_slice()
    }
}

impl PartialEq<Shape> for &[u64] {
    fn eq(&self, other: &Shape) -> bool {
        *self == other.as_slice()
    }
}

impl<const N: usize> PartialEq<Shape> for [u64; N] {
    fn eq(&self, other: &Shape) -> bool {
        self == other.as_slice()
    }
}

impl<'s> IntoIterator for &'s Shape {
    type Item = &'s u64;
    type IntoIter = core::slice::Iter<'s, u64>;

    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl IntoIterator for Shape {
    type Item = u64;
    type IntoIter = core::iter::Take<core::array::IntoIter<u64, 8>>;

    /// The dimensions by value.
    fn into_iter(self) -> Self::IntoIter {
        self.dims.into_iter().take(self.as_slice().len())
    }
}

impl Frozen for Directory<'_> {
    const SCHEMA: Schema = Schema::Tensors;
}

impl<'de> Decode<'de> for Directory<'de> {
    /// A `tensors` field: the block starts here, the next field starts
    /// where it ends.
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let at = r.position();
        let mut dir = parse::parse(
            r.unread(),
            r.limits(),
            Placement::Field,
            r.is_trusted(),
            None,
        )
        .map_err(|e| e.shifted(at))?;
        dir.offset = at;
        r.skip(dir.block_len(), "directory block")?;
        Ok(dir)
    }

    /// A directory that no reader sees: a derived struct's `tensors` field
    /// before it is decoded in place. (Its fields are not all zero, so
    /// building it is a few stores rather than a call to `memset` on a
    /// microcontroller.)
    #[inline]
    fn placeholder() -> Option<Self> {
        Some(Directory {
            block: &[],
            offset: usize::MAX,
            tensor_count: 0,
            name_bytes: 0,
            payload_base: usize::MAX,
            flags: FLAG_LITTLE_ENDIAN,
            names_sorted: false,
            names: names::ParsedNames::NONE,
            heap_text: HeapText::NONE,
        })
    }
}

impl<'de> Directory<'de> {
    /// [`Decode::decode`] for a reader that looks no name up (the walker:
    /// `check` and the visitors): without an allocator no parse hashes, so
    /// this is the one decode.
    #[cfg(not(feature = "alloc"))]
    #[inline]
    pub(crate) fn decode_unindexed(r: &mut Reader<'de>) -> Result<Self> {
        Self::decode(r)
    }

    /// [`Decode::decode`] for a reader that looks no name up (the walker:
    /// `check` and the visitors): names in byte order are not hashed.
    #[cfg(feature = "alloc")]
    pub(crate) fn decode_unindexed(r: &mut Reader<'de>) -> Result<Self> {
        let at = r.position();
        let mut dir =
            parse::parse_unindexed(r.unread(), r.limits(), Placement::Field, r.is_trusted())
                .map_err(|e| e.shifted(at))?;
        dir.offset = at;
        r.skip(dir.block_len(), "directory block")?;
        Ok(dir)
    }

    /// [`Directory::parse_with`] for a caller that looks no name up (a
    /// value's block checked before it is written, or listed): names in
    /// byte order are not hashed.
    #[cfg(feature = "inspect")]
    pub(crate) fn parse_unindexed(buf: &'de [u8], limits: Limits) -> Result<Self> {
        parse::parse_unindexed(buf, limits, Placement::Standalone, false)
    }
}

impl Encode for Directory<'_> {
    /// Re-emits the checked (and so canonical) block. The tests rebuild
    /// every accepted block from its views through the builder and compare
    /// bytes, so "canonical" is checked, not assumed.
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        w.put(self.block)
    }
}
