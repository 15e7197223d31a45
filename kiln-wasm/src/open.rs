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
use kiln_nostd::dtype::Dtype;
use kiln_nostd::walk::{ScalarValue, Span, Visitor};
use kiln_nostd::{
    CompiledType, Directory, Error, Framing, Limits, Options, Quant, Refusal, Result,
};

/// Files up to this size are copied into the shadow whole.
pub const SMALL_FILE: usize = 1 << 20;

/// Payload interiors shorter than this are copied anyway (not worth a
/// hole in the shadow).
pub const MIN_HOLE: u64 = 4096;

/// The first prefix of a large file, and the first step it grows by.
pub const GROW_STEP: usize = 64 * 1024;

/// How many nodes the type text may compile to.
pub const TYPE_NODES: usize = 1024;

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

/// What is in the file, besides the tensors.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// `bool`.
    Bool(bool),
    /// `f32`, `f64`, and the integers of 32 bits or fewer (exact in f64).
    Number(f64),
    /// `i64` and `int` (BigInt in JS).
    I64(i64),
    /// `u64` and `uint` (BigInt in JS).
    U64(u64),
    /// `str`.
    Str(String),
    /// `list<u8>`: where its bytes are in the file.
    Bytes(Range<usize>),
    /// `list<T>`.
    List(Vec<Val>),
    /// A list of zero-size elements: `count` times `element`.
    Repeat {
        /// Elements.
        count: u32,
        /// The one value.
        element: Box<Val>,
    },
    /// `opt<T>`.
    Opt(Option<Box<Val>>),
    /// `dict<str,V>`, in key order.
    Dict(Vec<(String, Val)>),
    /// `struct{...}`, in field order.
    Struct(Vec<(String, Val)>),
    /// A `tensors` value: index into [`Opened::directories`].
    Tensors(usize),
}

/// One `tensors` value of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirFacts {
    /// Path in the message: `""` for the root, `batch`, `layers[2].w`,
    /// `meta["k"]`.
    pub path: String,
    /// Absolute byte range of the block.
    pub range: Range<usize>,
    /// Absolute offset of the payload region.
    pub payload_offset: usize,
    /// Tensors in this directory.
    pub count: usize,
    /// Index of its first tensor in [`Opened::tensors`].
    pub first: usize,
    /// Whether the name flag is set.
    pub named: bool,
    /// Whether names are in increasing byte order.
    pub names_sorted: bool,
}

/// How a tensor is quantized (links are tensor indices in the same
/// directory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantFacts {
    /// 0 none, 1 scales, 2 scales and outer.
    pub scheme: u8,
    /// Dimension the groups run along.
    pub axis: Option<u16>,
    /// Elements per group.
    pub group_size: u32,
    /// Index of the scale tensor in the directory.
    pub scales: Option<usize>,
    /// Index of the outer tensor in the directory.
    pub outer: Option<usize>,
}

/// Everything known about one tensor without reading its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorFacts {
    /// Index of its directory in [`Opened::directories`].
    pub directory: usize,
    /// Index in its directory.
    pub index: usize,
    /// Name, when the directory names its tensors.
    pub name: Option<String>,
    /// Dtype code.
    pub dtype_code: u16,
    /// The closed dtype, if any.
    pub dtype: Option<Dtype>,
    /// Dimensions.
    pub shape: Vec<u64>,
    /// Element count.
    pub elements: u64,
    /// Absolute payload byte range in the file.
    pub range: Range<usize>,
    /// Opaque layout name.
    pub layout: Option<String>,
    /// Opaque block size.
    pub block_size: u32,
    /// Quantization.
    pub quant: QuantFacts,
    /// Bytes per element for a typed array (1 for one-byte, packed and
    /// opaque dtypes).
    pub element_align: usize,
}

impl TensorFacts {
    /// The dtype's name: `f32`, or `opaque(4108)`.
    pub fn dtype_name(&self) -> String {
        match self.dtype {
            Some(d) => d.name().into(),
            None => {
                let mut s = String::from("opaque(");
                push_decimal(&mut s, self.dtype_code.into());
                s.push(')');
                s
            }
        }
    }

    /// `none`, `scales` or `scales+outer`.
    pub fn quant_name(&self) -> &'static str {
        match self.quant.scheme {
            1 => "scales",
            2 => "scales+outer",
            _ => "none",
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
    /// The value (tensors values point into `directories`).
    pub value: Val,
    /// Every `tensors` value, in wire order.
    pub directories: Vec<DirFacts>,
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
        let mut collect = Collect::new(start);
        let walked = ty.walk(shadow.prefix(), options, &mut collect);
        let complete = shadow.frontier == shadow.len;
        if complete || !matches!(&walked, Err(e) if e.code() == Some(kiln_nostd::Code::Eof)) {
            let reported: Vec<usize> = collect.dirs.iter().map(|d| d.range.start).collect();
            if shadow.unconfirmed(&reported) {
                // Not every hole lies in a block the walk checked: copy
                // them in and walk again.
                shadow.fill_holes_outside(&reported);
                continue;
            }
            match walked {
                Ok(()) if complete => {
                    return Ok(Opened {
                        // parse accepts canonical text only.
                        type_text: type_text.into(),
                        framed: options.is_framed(),
                        hash: ty.hash(),
                        len: shadow.len,
                        value: collect.root.unwrap_or(Val::Struct(Vec::new())),
                        directories: collect.dirs,
                        tensors: collect.tensors,
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
        if shadow.load_block(collect.cursor) {
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
            if dtype == u64::from(Dtype::Bool.code()) || length < MIN_HOLE {
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

// ---------------------------------------------------------------------------
// The visitor: the value tree, the directories and the tensors' facts.

enum Frame {
    /// A struct (field names) or a dict (keys).
    Pairs {
        pairs: Vec<(String, Val)>,
        next: String,
        dict: bool,
    },
    List {
        items: Vec<Val>,
        repeat: Option<u32>,
    },
    Opt {
        inner: Option<Val>,
    },
}

struct Collect {
    stack: Vec<Frame>,
    root: Option<Val>,
    dirs: Vec<DirFacts>,
    tensors: Vec<TensorFacts>,
    /// End of the last complete thing seen: where the next value starts.
    cursor: usize,
}

fn quoted(key: &str) -> String {
    let mut out = String::from("[\"");
    for c in key.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push_str("\"]");
    out
}

impl Collect {
    fn new(start: usize) -> Collect {
        Collect {
            stack: Vec::new(),
            root: None,
            dirs: Vec::new(),
            tensors: Vec::new(),
            cursor: start,
        }
    }

    /// The path of the value about to be added, from the open
    /// containers: only built for a tensors value.
    fn path(&self) -> String {
        let mut out = String::new();
        for frame in &self.stack {
            match frame {
                Frame::Pairs {
                    next, dict: true, ..
                } => out.push_str(&quoted(next)),
                Frame::Pairs { next, .. } => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(next);
                }
                Frame::List { items, .. } => {
                    out.push('[');
                    push_decimal(&mut out, items.len() as u64);
                    out.push(']');
                }
                Frame::Opt { .. } => {}
            }
        }
        out
    }

    fn add(&mut self, value: Val) {
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame::Pairs { pairs, next, .. }) => pairs.push((core::mem::take(next), value)),
            Some(Frame::List { items, .. }) => items.push(value),
            Some(Frame::Opt { inner, .. }) => *inner = Some(value),
        }
    }

    fn close(&mut self) {
        let value = match self.stack.pop() {
            Some(Frame::Pairs { pairs, dict, .. }) => {
                if dict {
                    Val::Dict(pairs)
                } else {
                    Val::Struct(pairs)
                }
            }
            Some(Frame::List { mut items, repeat }) => match (repeat, items.pop()) {
                (Some(more), Some(first)) if items.is_empty() => Val::Repeat {
                    count: more.saturating_add(1),
                    element: Box::new(first),
                },
                (_, last) => {
                    items.extend(last);
                    Val::List(items)
                }
            },
            Some(Frame::Opt { inner }) => Val::Opt(inner.map(Box::new)),
            None => return,
        };
        self.add(value);
    }
}

fn scalar_val(value: ScalarValue) -> Val {
    match value {
        ScalarValue::Bool(b) => Val::Bool(b),
        ScalarValue::I8(v) => Val::Number(v.into()),
        ScalarValue::U8(v) => Val::Number(v.into()),
        ScalarValue::I16(v) => Val::Number(v.into()),
        ScalarValue::U16(v) => Val::Number(v.into()),
        ScalarValue::I32(v) => Val::Number(v.into()),
        ScalarValue::U32(v) => Val::Number(v.into()),
        ScalarValue::I64(v) | ScalarValue::Int(v) => Val::I64(v),
        ScalarValue::U64(v) | ScalarValue::Uint(v) => Val::U64(v),
        ScalarValue::F32(v) => Val::Number(v.into()),
        ScalarValue::F64(v) => Val::Number(v),
    }
}

impl<'de> Visitor<'de> for Collect {
    fn scalar(&mut self, at: usize, value: ScalarValue) -> Result<()> {
        let width = match value {
            ScalarValue::Bool(_) | ScalarValue::I8(_) | ScalarValue::U8(_) => 1,
            ScalarValue::I16(_) | ScalarValue::U16(_) => 2,
            ScalarValue::I32(_) | ScalarValue::U32(_) | ScalarValue::F32(_) => 4,
            _ => 8,
        };
        self.cursor = at.saturating_add(width);
        self.add(scalar_val(value));
        Ok(())
    }

    fn str(&mut self, span: Span, value: &'de str) -> Result<()> {
        self.cursor = span.end;
        self.add(Val::Str(value.into()));
        Ok(())
    }

    fn bytes(&mut self, span: Span, _value: &'de [u8]) -> Result<()> {
        self.cursor = span.end;
        self.add(Val::Bytes(span));
        Ok(())
    }

    fn begin_list(&mut self, at: usize, _count: u32) -> Result<()> {
        self.cursor = at.saturating_add(4);
        self.stack.push(Frame::List {
            items: Vec::new(),
            repeat: None,
        });
        Ok(())
    }

    fn repeat(&mut self, times: u32) -> Result<()> {
        if let Some(Frame::List { repeat, .. }) = self.stack.last_mut() {
            *repeat = Some(times);
        }
        Ok(())
    }

    fn end_list(&mut self) -> Result<()> {
        self.close();
        Ok(())
    }

    fn begin_opt(&mut self, at: usize, _present: bool) -> Result<()> {
        self.cursor = at.saturating_add(1);
        self.stack.push(Frame::Opt { inner: None });
        Ok(())
    }

    fn end_opt(&mut self) -> Result<()> {
        self.close();
        Ok(())
    }

    fn begin_dict(&mut self, at: usize, _count: u32) -> Result<()> {
        self.cursor = at.saturating_add(4);
        self.stack.push(Frame::Pairs {
            pairs: Vec::new(),
            next: String::new(),
            dict: true,
        });
        Ok(())
    }

    fn key(&mut self, span: Span, key: &'de str) -> Result<()> {
        self.cursor = span.end;
        if let Some(Frame::Pairs { next, .. }) = self.stack.last_mut() {
            *next = key.into();
        }
        Ok(())
    }

    fn end_dict(&mut self) -> Result<()> {
        self.close();
        Ok(())
    }

    fn begin_struct(&mut self, at: usize, _fields: usize) -> Result<()> {
        self.cursor = at;
        self.stack.push(Frame::Pairs {
            pairs: Vec::new(),
            next: String::new(),
            dict: false,
        });
        Ok(())
    }

    fn field(&mut self, name: &str) -> Result<()> {
        if let Some(Frame::Pairs { next, .. }) = self.stack.last_mut() {
            *next = name.into();
        }
        Ok(())
    }

    fn end_struct(&mut self) -> Result<()> {
        self.close();
        Ok(())
    }

    fn tensors(&mut self, dir: Directory<'de>) -> Result<()> {
        self.cursor = dir.byte_range().end;
        let index = self.dirs.len();
        let first = self.tensors.len();
        for t in &dir {
            let (scheme, axis, group_size, scales, outer) = match t.quant() {
                Quant::None => (0, None, 0, None, None),
                Quant::Scales {
                    axis,
                    group_size,
                    scales,
                } => (1, Some(axis), group_size, Some(scales.index()), None),
                Quant::ScalesOuter {
                    axis,
                    group_size,
                    scales,
                    outer,
                } => (
                    2,
                    Some(axis),
                    group_size,
                    Some(scales.index()),
                    Some(outer.index()),
                ),
            };
            self.tensors.push(TensorFacts {
                directory: index,
                index: t.index(),
                name: t.name().map(String::from),
                dtype_code: t.dtype().code(),
                dtype: t.closed_dtype(),
                shape: t.shape().to_vec(),
                elements: t.element_count(),
                range: t.byte_range(),
                layout: t.layout().map(String::from),
                block_size: t.block_size(),
                quant: QuantFacts {
                    scheme,
                    axis,
                    group_size,
                    scales,
                    outer,
                },
                element_align: t.element_align(),
            });
        }
        self.dirs.push(DirFacts {
            path: self.path(),
            range: dir.byte_range(),
            payload_offset: dir.payload_offset(),
            count: dir.len(),
            first,
            named: dir.has_names(),
            names_sorted: dir.names_sorted(),
        });
        self.add(Val::Tensors(index));
        Ok(())
    }
}

/// Appends `n` in decimal (without `core::fmt`, which would add to the
/// module's size).
pub fn push_decimal(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        if let Some(d) = digits.get_mut(i) {
            *d = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    for &d in digits.get(i..).unwrap_or(&[]) {
        out.push(char::from(d));
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
    let dtype = t.dtype.ok_or(Error::refused(
        Refusal::WrongElementType,
        "an opaque dtype has no elements to widen",
    ))?;
    let count = count.min(t.elements.saturating_sub(first));
    // `first` comes from a JS number: anything up to u64::MAX, so every
    // step is checked (an overflow is a range outside the tensor).
    let last = first.checked_add(count).ok_or_else(out_of_range)?;
    let (start, end, skip) = match dtype.width() {
        kiln_nostd::dtype::Width::Bytes(w) => {
            let w = u64::from(w);
            let bytes = |n: u64| n.checked_mul(w).ok_or_else(out_of_range);
            (bytes(first)?, bytes(last)?, 0)
        }
        kiln_nostd::dtype::Width::Nibbles => (first / 2, last.div_ceil(2), first % 2),
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
    let dtype = t.dtype.ok_or(out_of_range())?;
    let (_, skip, total) = element_bytes(t, first, count)?;
    let n = usize::try_from(total - skip).map_err(|_| out_of_range())?;
    let mut out = vec![0f32; n];
    let written = kiln_nostd::widen::widen_into(dtype, bytes, total, skip, &mut out)?;
    out.truncate(written);
    Ok(out)
}
