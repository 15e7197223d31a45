//! Opening a file whose bytes stay where the caller has them.
//!
//! The checker ([`kiln_nostd::walk()`]) needs one contiguous slice whose
//! positions are the file's positions. This module builds that slice, the
//! *shadow*, in wasm memory, and copies into it every byte the checker can
//! read: all bytes outside tensor payloads, every alignment gap, every
//! `bool` payload, and the last byte of every payload (the odd packed
//! tail). What it leaves out (zeros in the shadow) are the interiors of the
//! other payloads, which no rule of the format reads. The verdict on the
//! shadow is therefore the verdict on the file, with the same code and the
//! same offset; [`open`] proves it per block, and copies a block's
//! payloads too whenever it cannot (see "Confirmation" below).
//!
//! How the shadow grows. The walk runs over a prefix of the file (the
//! *frontier*). When it stops with EOF before the end of the file, either
//! a tensors value starts where the last complete value ended (the bytes
//! there are `KLNT`): its head (header, descriptors, name heap, padding)
//! is copied, its payload region is copied except the payload interiors,
//! and the frontier moves to the block's end; or the frontier grows (by
//! a step that doubles while no block is found). The walk then starts again from the beginning. Files up to
//! [`SMALL_FILE`] are copied whole: one walk.
//!
//! Confirmation. Payload interiors are left out only for a block that the
//! final walk reports whole (the visitor's `tensors`): its descriptors
//! were then checked, and the ranges left out lie inside checked payloads
//! that no rule reads. If the final walk fails before reporting such a
//! block (the block is bad, or what looked like one was not a tensors
//! value), the left-out bytes are copied in and the walk runs again. So a
//! verdict never depends on a byte that was not copied.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

use kiln_nostd::directory::{align_up, DESCRIPTOR_LEN, HEADER_LEN, MAGIC};
use kiln_nostd::dtype::{DtypeCode, PayloadRule, Width};
use kiln_nostd::inspect::{Collector, DirectoryFacts, TensorFacts};
use kiln_nostd::schema::TOOL_NODES;
use kiln_nostd::{CompiledType, Error, Framing, Limits, Options, Refusal, Result, Value};

/// Files up to this size are copied into the shadow whole.
pub const SMALL_FILE: usize = 1 << 20;

/// Payload interiors shorter than this are copied anyway (not worth a
/// hole in the shadow).
pub const MIN_HOLE: u64 = 4096;

/// The first prefix of a large file, and the first step it grows by.
pub const GROW_STEP: usize = 64 * 1024;

/// How many nodes the type text may compile to: the tools' one cap, so
/// the browser accepts every type `kiln check` accepts.
pub const TYPE_NODES: usize = TOOL_NODES;

/// Where the file's bytes are: [`Source::read`] copies a range of them.
pub trait Source {
    /// The file's length in bytes.
    fn len(&self) -> usize;
    /// Whether the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies the file's bytes `at..at + out.len()` into `out` (the range
    /// is always inside the file).
    fn read(&self, at: usize, out: &mut [u8]);
}

impl Source for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn read(&self, at: usize, out: &mut [u8]) {
        if let Some(src) = self.get(at..at.saturating_add(out.len())) {
            out.copy_from_slice(src);
        }
    }
}

/// A file that passed every check.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    /// Canonical type text.
    pub type_text: String,
    /// Whether it starts with a frame.
    pub framed: bool,
    /// The type's schema hash (what a frame must carry).
    pub hash: u64,
    /// File length.
    pub len: usize,
    /// The value's outline (the core's tree without the bytes of byte
    /// runs and directories, which stay in the caller's buffer and are
    /// reached by their spans).
    pub value: Value<'static>,
    /// Every `tensors` value, in wire order.
    pub directories: Vec<DirectoryFacts>,
    /// Every tensor of every directory, in wire order.
    pub tensors: Vec<TensorFacts>,
    /// Bytes copied into wasm memory for the check.
    pub copied: usize,
    /// Walks it took.
    pub walks: usize,
}

/// The result of a failed open: the error, and how much was copied.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Failed {
    /// The error: a wire code or a refusal (bad type text).
    pub error: Error,
    /// Bytes copied into wasm memory for the check.
    pub copied: usize,
}

impl From<Error> for Failed {
    fn from(error: Error) -> Failed {
        Failed { error, copied: 0 }
    }
}

/// Checks the file in `source` as one value of `type_text` (`tensors` for
/// a bare directory), framed or not, and collects its facts.
pub fn open<S: Source + ?Sized>(
    source: &S,
    type_text: &str,
    framing: Framing,
    limits: Limits,
) -> core::result::Result<Opened, Failed> {
    let ty: Box<CompiledType<'_, TYPE_NODES>> = Box::new(CompiledType::parse(type_text)?);
    let options = Options { framing, limits };
    let mut shadow = Shadow::new(source);
    let start = if options.is_framed() {
        kiln_nostd::frame::FRAME_LEN
    } else {
        0
    };
    if shadow.len <= SMALL_FILE {
        shadow.fill_to(shadow.len);
    } else {
        shadow.fill_to(GROW_STEP);
    }
    let mut walks = 0;
    // How far the frontier moves when no block starts at the cursor:
    // doubles while nothing but other values is found, so a long run of
    // strings costs few walks, and starts small again after a block.
    let mut step = GROW_STEP;
    loop {
        walks += 1;
        let mut collect = Collector::new(start);
        let walked = ty.walk(shadow.prefix(), options, &mut collect);
        let complete = shadow.frontier == shadow.len;
        if complete || !matches!(&walked, Err(e) if e.code() == Some(kiln_nostd::Code::Eof)) {
            let reported: Vec<usize> = collect.directories().iter().map(|d| d.span.start).collect();
            if shadow.unconfirmed(&reported) {
                // Not every hole lies in a block the walk checked: copy
                // them in and walk again.
                shadow.fill_holes_outside(&reported);
                continue;
            }
            match walked {
                Ok(()) if complete => {
                    let seen = collect.finish()?;
                    return Ok(Opened {
                        // parse accepts canonical text only.
                        type_text: type_text.into(),
                        framed: options.is_framed(),
                        hash: ty.hash(),
                        len: shadow.len,
                        value: seen.value.into_outline(),
                        directories: seen.directories,
                        tensors: seen.tensors,
                        copied: shadow.copied,
                        walks,
                    });
                }
                // The value ended before the file does: walk the rest too,
                // so that the verdict (TRAILING) comes from the walker.
                Ok(()) => {
                    shadow.fill_to(shadow.len);
                    continue;
                }
                Err(error) => {
                    return Err(Failed {
                        error,
                        copied: shadow.copied,
                    })
                }
            }
        }
        // EOF inside the prefix: a block to load, or more bytes.
        if shadow.load_block(collect.cursor()) {
            step = GROW_STEP;
        } else {
            shadow.fill_to(shadow.frontier.saturating_add(step));
            step = step.saturating_mul(2);
        }
    }
}

/// The shadow: the file's length, every byte the checker can read.
struct Shadow<'s, S: Source + ?Sized> {
    source: &'s S,
    bytes: Vec<u8>,
    len: usize,
    /// Bytes `[0, frontier)` are copied, except the holes.
    frontier: usize,
    /// Payload interiors not copied: (block start, range), in file order.
    holes: Vec<(usize, Range<usize>)>,
    copied: usize,
}

impl<'s, S: Source + ?Sized> Shadow<'s, S> {
    fn new(source: &'s S) -> Self {
        Shadow {
            source,
            bytes: Vec::new(),
            len: source.len(),
            frontier: 0,
            holes: Vec::new(),
            copied: 0,
        }
    }

    fn prefix(&self) -> &[u8] {
        self.bytes.get(..self.frontier).unwrap_or(&[])
    }

    /// Copies `range` of the file into the shadow.
    fn copy(&mut self, range: Range<usize>) {
        if range.end > self.bytes.len() {
            self.bytes.resize(range.end.min(self.len), 0);
        }
        let len = range.len();
        if let Some(out) = self.bytes.get_mut(range.clone()) {
            self.source.read(range.start, out);
            self.copied = self.copied.saturating_add(len);
        }
    }

    /// Copies everything from the frontier to `end`.
    fn fill_to(&mut self, end: usize) {
        let end = end.min(self.len);
        if end > self.frontier {
            self.copy(self.frontier..end);
            self.frontier = end;
        }
    }

    /// If a block header lies at `at` (past the frontier's copied bytes
    /// or not), copies the block except its payload interiors and moves
    /// the frontier to its end. False when there is no block to load.
    fn load_block(&mut self, at: usize) -> bool {
        let header_end = at.saturating_add(HEADER_LEN as usize);
        if header_end > self.len {
            return false;
        }
        let mut header = [0u8; HEADER_LEN as usize];
        self.source.read(at, &mut header);
        if header.get(..4) != Some(&MAGIC[..]) {
            return false;
        }
        let word = |at: usize, n: usize| -> u64 {
            let mut v = [0u8; 8];
            if let (Some(dst), Some(src)) = (v.get_mut(..n), header.get(at..at + n)) {
                dst.copy_from_slice(src);
            }
            u64::from_le_bytes(v)
        };
        let (count, name_bytes, payload_bytes) = (word(8, 4), word(12, 4), word(16, 8));
        let head = count
            .checked_mul(DESCRIPTOR_LEN)
            .and_then(|d| d.checked_add(HEADER_LEN + name_bytes))
            .and_then(align_up)
            .and_then(|h| usize::try_from(h).ok());
        let Some(head) = head else { return false };
        let base = at.saturating_add(head);
        let end = usize::try_from(payload_bytes)
            .ok()
            .and_then(|p| base.checked_add(p));
        // A block that does not fit: the walker's own EOF decides.
        let Some(end) = end.filter(|&e| e <= self.len && base <= self.len) else {
            return false;
        };
        // Already copied: the EOF came from elsewhere.
        if end <= self.frontier {
            return false;
        }
        self.fill_to(base);
        let from = base.max(self.frontier);
        let mut holes = Vec::new();
        for i in 0..usize::try_from(count).unwrap_or(0) {
            let record = at + HEADER_LEN as usize + i * DESCRIPTOR_LEN as usize;
            let field = |off: usize, n: usize| -> u64 {
                let mut v = [0u8; 8];
                if let (Some(dst), Some(src)) = (
                    v.get_mut(..n),
                    self.bytes.get(record + off..record + off + n),
                ) {
                    dst.copy_from_slice(src);
                }
                u64::from_le_bytes(v)
            };
            let (dtype, offset, length) = (field(0, 2), field(32, 8), field(40, 8));
            let rule = u16::try_from(dtype)
                .ok()
                .and_then(DtypeCode::from_code)
                .map_or(PayloadRule::None, DtypeCode::payload_rule);
            // Every byte a rule reads is copied: a bool payload whole; the
            // last byte of the others (a packed count's odd tail) below.
            if rule == PayloadRule::EveryByte || length < MIN_HOLE {
                continue;
            }
            // The interior: all but the last byte (the odd packed tail).
            let start = usize::try_from(offset)
                .ok()
                .and_then(|o| base.checked_add(o));
            let stop = usize::try_from(offset.saturating_add(length - 1))
                .ok()
                .and_then(|o| base.checked_add(o));
            if let (Some(start), Some(stop)) = (start, stop) {
                let (start, stop) = (start.clamp(from, end), stop.min(end));
                if start < stop {
                    holes.push(start..stop);
                }
            }
        }
        // A valid block's payloads are in increasing order; for any other
        // block, copy the whole payload region (the walker will reject it).
        if holes
            .windows(2)
            .any(|w| matches!(w, [a, b] if a.end > b.start))
        {
            holes.clear();
        }
        // Copy the complement of the holes within the payload region.
        let mut cursor = from;
        for hole in &holes {
            if hole.start > cursor {
                self.copy(cursor..hole.start);
            }
            cursor = cursor.max(hole.end);
        }
        if end > cursor {
            self.copy(cursor..end);
        }
        if end > self.bytes.len() {
            self.bytes.resize(end, 0);
        }
        self.holes.extend(holes.into_iter().map(|h| (at, h)));
        self.frontier = self.frontier.max(end);
        true
    }

    /// Whether a hole lies in a block the walk did not report.
    fn unconfirmed(&self, reported: &[usize]) -> bool {
        self.holes.iter().any(|(b, _)| !reported.contains(b))
    }

    /// Copies the holes of blocks the walk did not report.
    fn fill_holes_outside(&mut self, reported: &[usize]) {
        let holes = core::mem::take(&mut self.holes);
        let (keep, fill): (Vec<_>, Vec<_>) =
            holes.into_iter().partition(|(b, _)| reported.contains(b));
        for (_, range) in fill {
            self.copy(range);
        }
        self.holes = keep;
    }
}

/// Refusal for a range of elements outside a tensor.
pub fn out_of_range() -> Error {
    Error::refused(
        Refusal::WrongElementType,
        "element range outside the tensor",
    )
}

/// The payload bytes that hold elements `first..first + count` of a
/// tensor, and the index of element `first` within them: what
/// [`widen_range`] needs, so that a caller copies only those bytes.
pub fn element_bytes(t: &TensorFacts, first: u64, count: u64) -> Result<(Range<usize>, u64, u64)> {
    let dtype = t.dtype.closed().ok_or(Error::refused(
        Refusal::WrongElementType,
        "an opaque dtype has no elements to widen",
    ))?;
    let count = count.min(t.elements.saturating_sub(first));
    // `first` comes from a JS number: anything up to u64::MAX, so every
    // step is checked (an overflow is a range outside the tensor).
    let last = first.checked_add(count).ok_or_else(out_of_range)?;
    let (start, end, skip) = match dtype.width() {
        Width::Bytes(w) => {
            let w = u64::from(w);
            let bytes = |n: u64| n.checked_mul(w).ok_or_else(out_of_range);
            (bytes(first)?, bytes(last)?, 0)
        }
        Width::Nibbles => (first / 2, last.div_ceil(2), first % 2),
    };
    let to = |v: u64| usize::try_from(v).map_err(|_| out_of_range());
    let (start, end) = (to(start)?, to(end)?);
    if end > t.range.len() || start > end {
        return Err(out_of_range());
    }
    Ok((
        t.range.start + start..t.range.start + end,
        skip,
        count + skip,
    ))
}

/// Widens `count` elements starting at `first` for display, given the
/// bytes [`element_bytes`] named. Bits only: no scale is applied.
pub fn widen_range(t: &TensorFacts, bytes: &[u8], first: u64, count: u64) -> Result<Vec<f32>> {
    let dtype = t.dtype.closed().ok_or(out_of_range())?;
    let (_, skip, total) = element_bytes(t, first, count)?;
    let n = usize::try_from(total - skip).map_err(|_| out_of_range())?;
    let mut out = vec![0f32; n];
    let written = kiln_nostd::widen::widen_into(dtype, bytes, total, skip, &mut out)?;
    out.truncate(written);
    Ok(out)
}
