//! `Directory::parse`: the one gate. It runs the check order of
//! `spec/kiln-v2.md` section 14, steps 1 to 12, so that a block with
//! several faults reports the same first fault in every reader. Nothing is
//! allocated; the cost is proportional to the tensor count, the name bytes
//! and the alignment gaps, plus one pass over bool payloads (the format
//! requires their bytes to be checked).
//!
//! Steps 1 to 7 read the header ([`parse`]). Steps 8 to 11 are rules about
//! each descriptor, listed in check order in [`STEPS`] ([`Step`] says
//! which step of the text each one is): the first fault the format names
//! is the first descriptor that breaks step 8a, else the first that
//! breaks 8b, and so on ([`in_order`]: each step over every descriptor
//! before the next starts). A valid block has no first fault, so by
//! default the steps first run together, in one pass that reads each
//! descriptor once ([`one_pass`]); only a block that fails it is checked
//! again in order, to name the fault the format names. With the
//! `small-code` feature (a firmware short of flash) the ordered check runs
//! alone: it is the smaller code, and such a firmware's blocks are small.

use super::descriptor::*;
use super::names;
use super::rules;
use super::Directory;
use crate::error::{Code, Error, Result};
use crate::limits::Limits;
use crate::wire::{check_cap, check_fits_u64};

/// How the block sits in the caller's buffer.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum Placement {
    /// The buffer is this one block: bytes after it are TRAILING.
    Standalone,
    /// The block is a `tensors` field: bytes after it belong to the next
    /// field.
    Field,
}

fn fault(code: Code, fault: &'static str, at: u64) -> Error {
    Error::wire(code, fault, usize::try_from(at).unwrap_or(usize::MAX))
}

/// `N` bytes at `at`, or zeros past the end (callers have checked length).
fn bytes_at<const N: usize>(buf: &[u8], at: usize) -> [u8; N] {
    buf.get(at..)
        .and_then(<[u8]>::first_chunk::<N>)
        .copied()
        .unwrap_or([0u8; N])
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes_at(buf, at))
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes_at(buf, at))
}

/// Every step of the format on the block at the start of `buf`; the
/// directory keeps a table for lookups by name (with `alloc`).
pub(crate) fn parse<'a>(
    buf: &'a [u8],
    limits: Limits,
    placement: Placement,
    trusted: bool,
    scratch: Option<&mut [u32]>,
) -> Result<Directory<'a>> {
    parse_keeping(buf, limits, placement, trusted, scratch, true)
}

/// [`parse`] for a reader that looks no name up (the walker under
/// `check`, a value's block checked before it is written): names in byte
/// order are not hashed. A directory of names out of order still keeps
/// the table its uniqueness check built.
#[cfg(feature = "inspect")]
pub(crate) fn parse_unindexed(
    buf: &[u8],
    limits: Limits,
    placement: Placement,
    trusted: bool,
) -> Result<Directory<'_>> {
    parse_keeping(buf, limits, placement, trusted, None, false)
}

fn parse_keeping<'a>(
    buf: &'a [u8],
    limits: Limits,
    placement: Placement,
    trusted: bool,
    scratch: Option<&mut [u32]>,
    hash_sorted: bool,
) -> Result<Directory<'a>> {
    let (mut dir, payload_bytes) = check_header(buf, limits)?;

    // Steps 8 to 11.
    (dir.names_sorted, dir.names) =
        check_descriptors(&dir, payload_bytes, trusted, scratch, hash_sorted)?;
    // The heap as text, for the views' names: one check of the whole heap
    // (fast for an ASCII one) instead of one per name read.
    dir.heap_text = super::HeapText::of(dir.heap());

    // Step 12: a standalone block is the whole buffer.
    if placement == Placement::Standalone && buf.len() > dir.block.len() {
        return Err(fault(
            Code::Trailing,
            "bytes after the end of the directory block",
            dir.block.len() as u64,
        ));
    }
    Ok(dir)
}

/// Steps 1 to 7: the header, and where the block ends. Returns the
/// directory (names not yet known to be sorted) and `payload_bytes`.
fn check_header(buf: &[u8], limits: Limits) -> Result<(Directory<'_>, u64)> {
    let header = check_header_fields(buf, limits)?;
    let block_len = check_extent(&header, buf.len() as u64)?;
    // The block lies inside `buf` (step 6), so its length fits in usize.
    let block = buf
        .get(..usize::try_from(block_len).unwrap_or(usize::MAX))
        .unwrap_or(&[]);
    check_padding(block, &header)?;
    Ok((header.directory(block), header.payload_bytes))
}

/// What the 64 header bytes say, once steps 1 to 4 passed.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Header {
    pub tensor_count: u32,
    pub name_bytes: u32,
    pub payload_bytes: u64,
    pub flags: u8,
    /// Where the name heap ends, from the block's start.
    pub heap_end: u64,
    /// Where the payload region starts (the heap's end rounded up to 64):
    /// the length of the block's head.
    pub payload_base: u64,
}

impl Header {
    /// The directory over `block`, which holds at least the head.
    pub(crate) fn directory<'a>(&self, block: &'a [u8]) -> Directory<'a> {
        Directory {
            block,
            offset: 0,
            tensor_count: self.tensor_count,
            name_bytes: self.name_bytes,
            // Below 2^40 (step 4), so it fits in usize where the head does.
            payload_base: usize::try_from(self.payload_base).unwrap_or(usize::MAX),
            flags: self.flags,
            names_sorted: false,
            names: names::ParsedNames::NONE,
            heap_text: super::HeapText::NONE,
        }
    }
}

/// Steps 1 to 4, from the first bytes of a block: the magic (EOF when `buf`
/// has fewer than 4 bytes), a whole header (EOF when fewer than 64), then
/// version, flags, reserved bytes, the caps and `directory_bytes`. Reads
/// only the first 64 bytes, so a streaming reader calls it on those.
pub(crate) fn check_header_fields(buf: &[u8], limits: Limits) -> Result<Header> {
    // Step 1: magic, and a whole header.
    if buf.len() < MAGIC.len() {
        return Err(fault(
            Code::Eof,
            "fewer than 4 bytes for the directory magic",
            0,
        ));
    }
    if buf.get(..4) != Some(&MAGIC[..]) {
        return Err(fault(Code::Frame, "directory magic is not KLNT", 0));
    }
    let Some(header) = buf.first_chunk::<{ HEADER_LEN as usize }>() else {
        return Err(fault(
            Code::Eof,
            "fewer than 64 bytes for the directory header",
            4,
        ));
    };

    // Step 2: version, flags, reserved header bytes.
    let [_, _, _, _, version, flags, r6, r7, ..] = *header;
    if version != DIRECTORY_VERSION {
        return Err(fault(Code::Frame, "directory version is not 2", 4));
    }
    if flags & !(FLAG_NAMES | FLAG_LITTLE_ENDIAN) != 0 {
        return Err(fault(Code::Frame, "unknown directory flag bit", 5));
    }
    if flags & FLAG_LITTLE_ENDIAN == 0 {
        return Err(fault(Code::Frame, "little-endian flag is clear", 5));
    }
    if r6 | r7 != 0 {
        return Err(fault(Code::Frame, "nonzero reserved header byte", 6));
    }
    if header
        .get(32..)
        .is_some_and(|tail| tail.iter().any(|&b| b != 0))
    {
        return Err(fault(Code::Frame, "nonzero reserved header byte", 32));
    }

    // Step 3: caps, before anything is sized by the claims.
    let tensor_count = u32_at(header, 8);
    let name_bytes = u32_at(header, 12);
    let payload_bytes = u64_at(header, 16);
    let directory_bytes = u64_at(header, 24);
    check_cap(
        tensor_count.into(),
        limits.count_cap,
        "tensor count above the cap",
        8,
    )?;
    check_cap(
        name_bytes.into(),
        limits.byte_cap,
        "name heap above the byte cap",
        12,
    )?;

    // Step 4: directory_bytes agrees with the count and the heap. The sum
    // of a u32 times 128 and a u32 cannot overflow a u64.
    let expected_directory = u64::from(tensor_count) * DESCRIPTOR_LEN + u64::from(name_bytes);
    if directory_bytes != expected_directory {
        return Err(fault(
            Code::Type,
            "directory_bytes is not tensor_count * 128 + name_bytes",
            24,
        ));
    }
    // (directory_bytes is below 2^40 here, so these sums do not overflow.)
    let heap_end = HEADER_LEN + directory_bytes;
    Ok(Header {
        tensor_count,
        name_bytes,
        payload_bytes,
        flags,
        heap_end,
        payload_base: heap_end.next_multiple_of(ALIGN),
    })
}

/// Steps 5 and 6 for a block followed by `available` bytes (its own
/// included): descriptors and heap, then the whole block, lie inside them.
/// Returns the block's length.
pub(crate) fn check_extent(header: &Header, available: u64) -> Result<u64> {
    // Step 5: descriptors and heap lie inside the buffer.
    check_fits_u64(
        header.tensor_count.into(),
        DESCRIPTOR_LEN,
        HEADER_LEN + u64::from(header.name_bytes),
        available,
        "directory extends past the end of the buffer",
        8,
    )?;

    // Step 6: the whole block lies inside the buffer.
    let block_len = header
        .payload_base
        .checked_add(header.payload_bytes)
        .ok_or(fault(
            Code::Limit,
            "payload_base + payload_bytes overflows 64 bits",
            16,
        ))?;
    if block_len > available {
        return Err(fault(
            Code::Eof,
            "payload region extends past the end of the buffer",
            16,
        ));
    }
    Ok(block_len)
}

/// Step 7: padding between the heap and the payloads is zero. `block`
/// holds at least the head (`header.payload_base` bytes).
pub(crate) fn check_padding(block: &[u8], header: &Header) -> Result<()> {
    let as_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    let padding = block
        .get(as_usize(header.heap_end)..as_usize(header.payload_base))
        .unwrap_or(&[]);
    if let Some(i) = padding.iter().position(|&b| b != 0) {
        return Err(fault(
            Code::Type,
            "nonzero padding byte before the payloads",
            header.heap_end + i as u64,
        ));
    }
    Ok(())
}

/// Step 10's byte rule: an alignment gap before tensor `i`'s payload is
/// zero. The error's offset is the first nonzero byte's within `gap`, so
/// a gap may be checked in pieces (the caller shifts it).
pub(crate) fn check_gap(gap: &[u8], i: u32) -> Result<()> {
    // The OR of the gap is one vector loop; only a nonzero gap is searched
    // for the byte to report. (`small-code` searches at once: one loop
    // less in flash.)
    let any = super::SMALL_CODE || gap.iter().fold(0u8, |acc, &b| acc | b) != 0;
    if let Some(k) = gap.iter().position(|&b| any && b != 0) {
        return Err(Error::wire(Code::Type, "nonzero byte in an alignment gap", k).in_tensor(i));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// A block's head alone: for readers that do not hold the payloads

/// How far the rules that read payload bytes (step 10's gaps, then step
/// 11's bits) must run before the first fault found in a block's head can
/// be the first fault of the block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// The fault comes before every payload rule.
    Nothing,
    /// The gaps before the payloads of tensors `0..n`, no payload bits.
    Gaps(u32),
    /// Every gap, then the bits of every payload.
    All,
}

/// What steps 7 to 11 find in a block's head alone.
#[derive(Copy, Clone, Debug)]
pub(crate) struct HeadCheck {
    /// The first fault of the rules that read only the head.
    pub fault: Option<Error>,
    /// Which payload rules come before that fault (all of them when there
    /// is none): a fault they find is the block's first instead.
    pub reach: Reach,
}

/// Steps 7 to 11 over `head`, a block's first `header.payload_base`
/// bytes (header, descriptors, name heap, padding), in the format's check
/// order, with the payload rules left out: the same walk as [`parse`]'s
/// ordered check, with the payload bytes left for later as its one pass
/// leaves them. The caller runs the payload rules over the payload
/// region as far as [`HeadCheck::reach`] says, each through the function
/// the parse calls ([`check_gap`], [`rules::check_payload_bits`] on the
/// bytes [`rules::bits_read`] names).
pub(crate) fn check_head(head: &[u8], header: &Header) -> HeadCheck {
    if let Err(e) = check_padding(head, header) {
        return HeadCheck {
            fault: Some(e),
            reach: Reach::Nothing,
        };
    }
    let dir = header.directory(head);
    let mut walk = Walk::new(&dir, header.payload_bytes, false);
    walk.payload_later = true;
    match in_order(&mut walk, None) {
        Ok(()) => HeadCheck {
            fault: None,
            reach: Reach::All,
        },
        Err(e) => {
            let (step, i) = walk.at;
            let reach = match step {
                Step::Placement => Reach::Gaps(i),
                Step::PayloadBits | Step::Quant => Reach::All,
                _ => Reach::Nothing,
            };
            HeadCheck {
                fault: Some(e),
                reach,
            }
        }
    }
}

/// Where tensor `i`'s payload lies and which of its bytes the bit rules
/// read, from a head that [`check_head`] passed as far as tensor `i`'s
/// placement: `(byte_offset, byte_length, skip, read)`.
pub(crate) fn payload_of(head: &[u8], header: &Header, i: u32) -> (u64, u64, u64, u64) {
    let dir = header.directory(head);
    match dir.record(i) {
        Some(r) => {
            let (skip, read) = rules::bits_read(r, r.byte_length());
            (r.byte_offset(), r.byte_length(), skip, read)
        }
        None => (0, 0, 0, 0),
    }
}

/// Step 11's bit rule for `part`, the bytes of tensor `i`'s payload that
/// [`rules::bits_read`] names (or a piece of them), with the head that
/// [`check_head`] checked. The error's offset is within `part`.
pub(crate) fn check_payload_part(head: &[u8], header: &Header, i: u32, part: &[u8]) -> Result<()> {
    match header.directory(head).record(i) {
        Some(r) => rules::check_payload_bits(r, part).map_err(|e| e.in_tensor(i)),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// Steps 8 to 11: the descriptors

/// A rule about one descriptor, with what it checks once the last
/// descriptor has passed it. In check order; see [`STEPS`].
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Step {
    /// 8a: reserved descriptor bytes are zero; after the last, 8b's rule
    /// that an empty directory has no name flag.
    Reserved,
    /// 8b: the name flag rule, and each name at its canonical heap offset
    /// (the names in descriptor order from the heap's start).
    Names,
    /// 8b: each layout name at its canonical heap offset (after the names,
    /// in descriptor order); after the last, the heap has no other bytes.
    Layouts,
    /// 8c: names and layout names are UTF-8.
    Utf8,
    /// 8d: names are unique: strictly increasing (one comparison each),
    /// or else, after the last, no repeat found by a sort or a hash.
    Unique,
    /// 9: dtype, rank, shape, byte length and payload range.
    ShapeAndRange,
    /// 9: payload ranges in increasing order, none overlapping.
    Overlap,
    /// 10: each payload at the greedy 64-aligned offset, zero bytes in the
    /// gaps; after the last, `payload_bytes` is where it ends.
    Placement,
    /// 11: bool bytes are 0 or 1, an odd packed count leaves a zero high
    /// nibble.
    PayloadBits,
    /// 11: quantization fields and the tensors they link to.
    Quant,
}

/// Steps 8 to 11 in the format's check order.
const STEPS: [Step; 10] = [
    Step::Reserved,
    Step::Names,
    Step::Layouts,
    Step::Utf8,
    Step::Unique,
    Step::ShapeAndRange,
    Step::Overlap,
    Step::Placement,
    Step::PayloadBits,
    Step::Quant,
];

/// Steps 8 to 11; returns whether the names are in strictly increasing
/// byte order, and what the uniqueness check kept for lookups.
fn check_descriptors(
    dir: &Directory<'_>,
    payload_bytes: u64,
    trusted: bool,
    scratch: Option<&mut [u32]>,
    hash_sorted: bool,
) -> Result<(bool, names::ParsedNames)> {
    #[cfg(not(feature = "small-code"))]
    let mut scratch = scratch;
    #[cfg(not(feature = "small-code"))]
    {
        let mut walk = Walk::new(dir, payload_bytes, trusted);
        walk.hash_sorted = hash_sorted;
        if one_pass(&mut walk, scratch.as_deref_mut()).is_ok() {
            return Ok((walk.increasing, walk.names));
        }
    }
    let mut walk = Walk::new(dir, payload_bytes, trusted);
    walk.hash_sorted = hash_sorted;
    in_order(&mut walk, scratch)?;
    Ok((walk.increasing, walk.names))
}

/// Every step over every descriptor, then the next step: the first fault
/// found is the one the format names.
fn in_order(walk: &mut Walk<'_, '_>, mut scratch: Option<&mut [u32]>) -> Result<()> {
    for step in STEPS {
        if walk.skips(step) {
            continue;
        }
        for (i, r) in walk.dir.records() {
            walk.each(step, i, r)
                .map_err(|e| walk.stopped(step, i, e))?;
        }
        let count = walk.dir.tensor_count;
        walk.after(step, scratch.as_deref_mut())
            .map_err(|e| walk.stopped(step, count, e))?;
    }
    Ok(())
}

/// Every step on one descriptor, then the next descriptor: one read of
/// each. Only whether it passes means anything; a fault it reports may
/// not be the first in the format's order.
///
/// The payload bytes that steps 10 and 11 read (alignment gaps, bool and
/// packed payloads) are far apart in a large block, and each read waits
/// for memory. So the first loop leaves them, and a second loop ORs every
/// gap byte into one accumulator, checked once at the end: no branch
/// depends on a byte read, so the processor keeps many reads in flight.
// Compiled for the unit tests with `small-code` too, which compare it
// with the ordered check.
#[cfg(any(test, not(feature = "small-code")))]
fn one_pass(walk: &mut Walk<'_, '_>, mut scratch: Option<&mut [u32]>) -> Result<()> {
    walk.payload_later = true;
    for (i, r) in walk.dir.records() {
        for step in STEPS {
            walk.each(step, i, r)?;
        }
    }
    walk.payload_later = false;
    // The offsets are canonical (the first loop checked them), so each gap
    // runs from the previous payload's end to this payload's offset.
    let mut end = 0;
    let mut gap_bytes = 0u64;
    for (i, r) in walk.dir.records() {
        gap_bytes |= or_of(walk.dir.payload_region(end, r.byte_offset()));
        end = r.range_end().unwrap_or(u64::MAX);
        walk.each(Step::PayloadBits, i, r)?;
    }
    if gap_bytes != 0 {
        return Err(fault(Code::Type, "nonzero byte in an alignment gap", 0));
    }
    for step in STEPS {
        walk.after(step, scratch.as_deref_mut())?;
    }
    Ok(())
}

/// The OR of every byte of `bytes`, eight at a time: a block's gaps are
/// short (under 64 bytes each), too short for the vector loop a byte fold
/// becomes, whose set-up and tail then cost more than the bytes.
#[cfg(any(test, not(feature = "small-code")))]
#[inline]
fn or_of(bytes: &[u8]) -> u64 {
    let (words, rest) = bytes.as_chunks::<8>();
    let mut acc = 0u64;
    for word in words {
        acc |= u64::from_le_bytes(*word);
    }
    for &b in rest {
        acc |= u64::from(b);
    }
    acc
}

/// What the steps carry from one descriptor to the next.
struct Walk<'d, 'a> {
    dir: &'d Directory<'a>,
    payload_bytes: u64,
    trusted: bool,
    /// 8c runs only when some name byte is not ASCII.
    check_utf8: bool,
    /// 8b: where the next name must start in the heap.
    names_end: u32,
    /// 8b: where the next layout name must start; `None` until known. In
    /// order it is where the names end; in one pass, where the first
    /// layout name starts, checked against the names' end at the end.
    layouts: Option<u32>,
    first_layout: Option<u32>,
    /// 8d: the previous name, and whether the names so far increase.
    previous: &'a [u8],
    increasing: bool,
    /// 8d: the table kept for lookups: the one the check of unsorted
    /// names built, or (with `alloc`, when `hash_sorted`) one of sorted
    /// names.
    names: names::ParsedNames,
    /// Whether sorted names are hashed for lookups: by a parse, whose
    /// directory keeps the table, not by the checks that keep nothing.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    hash_sorted: bool,
    /// 9: the end of the last nonzero payload range.
    ranges_end: u64,
    /// 10: where the last payload ended.
    placed_end: u64,
    /// Steps 10 and 11 leave the payload bytes for a later loop.
    payload_later: bool,
    /// In order: the step and the descriptor being checked (the tensor
    /// count for what a step checks after the last one).
    at: (Step, u32),
}

impl<'d, 'a> Walk<'d, 'a> {
    fn new(dir: &'d Directory<'a>, payload_bytes: u64, trusted: bool) -> Self {
        Walk {
            dir,
            payload_bytes,
            trusted,
            // Every slice lies inside the heap (8b), so an ASCII heap has
            // only UTF-8 slices: step 8c is skipped for it. (`small-code`
            // leaves the shortcut out: from_utf8 has its own ASCII loop,
            // and the flash matters more there.)
            check_utf8: !trusted && (super::SMALL_CODE || !dir.heap().is_ascii()),
            names_end: 0,
            layouts: None,
            first_layout: None,
            previous: &[],
            increasing: dir.has_names(),
            names: names::ParsedNames::NONE,
            hash_sorted: false,
            ranges_end: 0,
            placed_end: 0,
            payload_later: false,
            at: (Step::Reserved, 0),
        }
    }

    /// Notes that `step` on descriptor `i` (the tensor count for what a
    /// step checks after the last one) found `e`: [`check_head`] reads it.
    /// Called on a fault's path only, so the parse stores nothing per
    /// descriptor.
    fn stopped(&mut self, step: Step, i: u32, e: Error) -> Error {
        self.at = (step, i);
        e
    }

    /// Whether `step` has nothing to check in this block.
    fn skips(&self, step: Step) -> bool {
        match step {
            Step::Utf8 => !self.check_utf8,
            Step::Unique => !self.dir.has_names(),
            Step::Quant => self.trusted,
            _ => false,
        }
    }

    /// `step` on descriptor `i`.
    #[inline] // one_pass runs all steps on each descriptor: each arm inlined there
    fn each(&mut self, step: Step, i: u32, r: Record<'a>) -> Result<()> {
        let dir = self.dir;
        match step {
            Step::Reserved => {
                if !r.reserved_clear() {
                    return Err(dir.fault_in(
                        i,
                        Code::Frame,
                        "nonzero reserved descriptor byte",
                        3,
                    ));
                }
            }
            Step::Names => {
                let (off, len) = (r.name_off(), r.name_len());
                if (len != 0) != dir.has_names() {
                    let fault = if dir.has_names() {
                        "name flag set but this tensor has no name"
                    } else {
                        "name flag clear but this tensor has a name"
                    };
                    return Err(dir.fault_in(i, Code::Type, fault, 4));
                }
                self.names_end = self.slice(i, off, len, self.names_end, 4)?;
            }
            Step::Layouts => {
                let (off, len) = (r.layout_off(), r.layout_len());
                let cursor = match self.layouts {
                    Some(cursor) => cursor,
                    // One pass: the first layout name starts the walk.
                    #[cfg(any(test, not(feature = "small-code")))]
                    None if len != 0 => *self.first_layout.insert(u32::from(off)),
                    None => 0,
                };
                let end = self.slice(i, off, len, cursor, 8)?;
                if len != 0 {
                    self.layouts = Some(end);
                }
            }
            Step::Utf8 => {
                if self.check_utf8 {
                    for (off, len) in [
                        (r.name_off(), r.name_len()),
                        (r.layout_off(), r.layout_len()),
                    ] {
                        let bytes = dir.heap_slice(off, len);
                        if let Err(e) = core::str::from_utf8(bytes) {
                            // A position inside the heap: no wrap.
                            let at = dir
                                .heap_start()
                                .wrapping_add(usize::from(off))
                                .wrapping_add(e.valid_up_to());
                            return Err(
                                Error::wire(Code::Utf8, "name is not UTF-8", at).in_tensor(i)
                            );
                        }
                    }
                }
            }
            Step::Unique => {
                // Once two names are out of order the hash or the sort
                // decides, and no comparison is needed.
                if dir.has_names() && self.increasing {
                    let name = dir.heap_slice(r.name_off(), r.name_len());
                    if i != 0 && names::cmp_names(self.previous, name).is_ge() {
                        self.increasing = false;
                    }
                    self.previous = name;
                }
            }
            Step::ShapeAndRange => {
                rules::check_shape_and_range(r, self.payload_bytes)
                    .map_err(|e| e.shifted(dir.record_start(i)).in_tensor(i))?;
            }
            Step::Overlap => {
                // Nonzero ranges in increasing offset order overlap exactly
                // when one starts before the previous one ends. Ranges out
                // of order cannot be canonical, so they are reported here
                // with the same code.
                if r.byte_length() != 0 {
                    if r.byte_offset() < self.ranges_end {
                        return Err(dir.fault_in(
                            i,
                            Code::Type,
                            "payload range overlaps another or is out of order",
                            32,
                        ));
                    }
                    self.ranges_end = r.range_end().unwrap_or(u64::MAX);
                }
            }
            Step::Placement => {
                let end = self.placed_end;
                let offset = align_up(end).unwrap_or(u64::MAX);
                if r.byte_offset() != offset {
                    return Err(dir.fault_in(
                        i,
                        Code::Type,
                        "payload offset is not the canonical placement",
                        32,
                    ));
                }
                if offset != end && !self.payload_later {
                    // A position inside the block (the previous payload
                    // passed step 9): no truncation, no wrap.
                    let at = dir.payload_base.wrapping_add(end as usize);
                    check_gap(dir.payload_region(end, offset), i).map_err(|e| e.shifted(at))?;
                }
                self.placed_end = r.range_end().unwrap_or(u64::MAX);
            }
            Step::PayloadBits => {
                // Only bool and packed payloads have bits to check.
                if matches!(r.dtype(), 7 | 16..=18) && !self.payload_later {
                    let payload = dir.payload_region(r.byte_offset(), r.range_end().unwrap_or(0));
                    // The whole payload: the rule gives the same verdict and
                    // offset on it as on the bytes rules::bits_read names
                    // (which a reader of ranges fetches), without the code
                    // that cuts them out.
                    // Inside the block (step 9 passed), so the payload's
                    // start fits in usize and the sum does not wrap.
                    let start = (r.byte_offset() as usize).wrapping_add(dir.payload_base);
                    rules::check_payload_bits(r, payload)
                        .map_err(|e| e.shifted(start).in_tensor(i))?;
                }
            }
            Step::Quant => {
                // (By default an unquantized record, the common one, is
                // recognised in one compare; `small-code` runs the rule.)
                if !self.trusted && (super::SMALL_CODE || !r.unquantized()) {
                    rules::check_quant(i, r, dir.tensor_count, |j| {
                        (j < dir.tensor_count).then(|| dir.record(j)).flatten()
                    })
                    .map_err(|e| e.shifted(dir.record_start(i)).in_tensor(i))?;
                }
            }
        }
        Ok(())
    }

    /// What `step` checks once every descriptor has passed it.
    fn after(&mut self, step: Step, scratch: Option<&mut [u32]>) -> Result<()> {
        let dir = self.dir;
        match step {
            // Step 8b's first rule, about the block rather than a
            // descriptor.
            Step::Reserved if dir.has_names() && dir.tensor_count == 0 => {
                Err(fault(Code::Type, "name flag set on an empty directory", 5))
            }
            Step::Names => match self.first_layout {
                // One pass: the layout names must start where the names
                // end (the ordered walk reports the one that does not).
                Some(first) if first != self.names_end => Err(fault(
                    Code::Type,
                    "slice is not at its canonical heap offset",
                    12,
                )),
                Some(_) => Ok(()),
                // In order, the layout walk starts where the names end.
                None => {
                    self.layouts = Some(self.names_end);
                    Ok(())
                }
            },
            Step::Layouts if self.layouts.unwrap_or(self.names_end) != dir.name_bytes => {
                Err(fault(Code::Type, "name heap has bytes no name uses", 12))
            }
            // Names in strictly increasing order are unique: with `alloc`
            // they are hashed all the same, for `Directory::by_name` (one
            // probe costs less than a binary search's); without it, the
            // binary search needs nothing kept.
            #[cfg(feature = "alloc")]
            Step::Unique if dir.has_names() && self.increasing && self.hash_sorted => {
                self.names = names::ParsedNames::of_sorted(dir.tensor_count, |i| dir.name_at(i));
                Ok(())
            }
            // Only names out of order need the hash or the sort.
            Step::Unique if dir.has_names() && !self.increasing => {
                let (repeat, kept) =
                    names::first_repeat_unordered(dir.tensor_count, |i| dir.name_at(i), scratch);
                self.names = kept;
                match repeat {
                    Some(i) => {
                        Err(dir.fault_in(i, Code::Type, "tensor name repeats an earlier name", 4))
                    }
                    None => Ok(()),
                }
            }
            Step::Placement if self.payload_bytes != self.placed_end => Err(fault(
                Code::Type,
                "payload_bytes is not the end of the last payload",
                16,
            )),
            _ => Ok(()),
        }
    }

    /// Step 8b for one name or layout name (`field` is its offset field in
    /// the descriptor): an empty slice has no offset; a present one starts
    /// at `cursor` and ends inside the heap. Returns where the next one
    /// starts.
    #[cfg_attr(feature = "small-code", inline(always))] // see rules::check_shape_and_range
    fn slice(&self, i: u32, off: u16, len: u16, cursor: u32, field: usize) -> Result<u32> {
        let dir = self.dir;
        if len == 0 {
            if off != NO_OFFSET {
                return Err(dir.fault_in(i, Code::Type, "empty slice with an offset", field));
            }
            return Ok(cursor);
        }
        if off == NO_OFFSET || u32::from(off) != cursor {
            return Err(dir.fault_in(
                i,
                Code::Type,
                "slice is not at its canonical heap offset",
                field,
            ));
        }
        // `cursor` is a 16-bit offset here, so the sum fits.
        let end = cursor + u32::from(len);
        if end > dir.name_bytes {
            return Err(dir.fault_in(i, Code::Type, "slice ends past the name heap", field));
        }
        Ok(end)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing)]

    use super::*;

    /// Every accepted golden directory, and every one-byte change of each
    /// (and a second change after the first): the one pass passes exactly
    /// the blocks the ordered check passes, and `parse`, which tries it
    /// first, reports exactly the ordered check's fault. The mutated
    /// positions are shared out over the machine's cores: under emulation
    /// (the big-endian targets) this is the longest test of the crate.
    #[test]
    fn one_pass_and_in_order_agree() {
        let text = include_str!("../../../spec/kiln-v2-cases.json");
        let cases: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len() / 2)
                .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
                .collect()
        };
        let accepted: Vec<Vec<u8>> = cases
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["type"] == "tensors" && c["framed"] == false && c["expect"] == "accept")
            .map(|c| hex(c["hex"].as_str().unwrap_or_default()))
            .collect();
        // Checks one block both ways, trusted and not; the number checked
        // (none when the header is refused).
        let agree = |m: &[u8]| -> usize {
            let mut blocks = 0;
            for trusted in [false, true] {
                let Ok((dir, payload_bytes)) = check_header(m, Limits::DEFAULT) else {
                    continue;
                };
                blocks += 1;
                let mut ordered = Walk::new(&dir, payload_bytes, trusted);
                let in_order = in_order(&mut ordered, None).map(|()| ordered.increasing);
                let mut fast = Walk::new(&dir, payload_bytes, trusted);
                let one = one_pass(&mut fast, None).map(|()| fast.increasing);
                assert_eq!(one.is_ok(), in_order.is_ok(), "{m:?}");
                if let (Ok(a), Ok(b)) = (one, in_order) {
                    assert_eq!(a, b);
                }
                let both = check_descriptors(&dir, payload_bytes, trusted, None, true);
                assert_eq!(both.map(|(sorted, _)| sorted), in_order, "{m:?}");
            }
            blocks
        };
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let blocks: usize = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|worker| {
                    let (accepted, agree) = (&accepted, &agree);
                    scope.spawn(move || {
                        let mut blocks = 0;
                        for bytes in accepted {
                            if worker == 0 {
                                blocks += agree(bytes);
                            }
                            for at in (worker..bytes.len()).step_by(workers) {
                                for value in [0u8, 0x80, 0xFF, bytes[at].wrapping_add(1)] {
                                    let mut m = bytes.clone();
                                    m[at] = value;
                                    blocks += agree(&m);
                                    let later = (at * 7 + 13) % bytes.len();
                                    m[later] ^= 0x21;
                                    blocks += agree(&m);
                                }
                            }
                        }
                        blocks
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .sum()
        });
        assert!(blocks > 5_000, "{blocks}");
    }
}
