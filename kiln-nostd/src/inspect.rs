//! The inspection model (feature `alloc`): what a tool shows of a Kiln
//! value, built once here and rendered by every tool (`kiln inspect`,
//! `kiln decode`, the browser module).
//!
//! - the value tree ([`Value`], borrowed from the buffer, every node with
//!   its absolute [`Span`]);
//! - every `tensors` value with its [`Path`] in the value
//!   ([`DirectoryFacts`]);
//! - every tensor's facts ([`TensorFacts`]): name, dtype, shape, absolute
//!   byte range, quantization links, opaque layout, and whether its payload
//!   can be viewed in place at a given address ([`InPlace`]).
//!
//! All of it comes from one walk ([`crate::walk()`]) with one visitor
//! ([`Collector`]), so it has the walker's verdicts and codes.
//!
//! ```
//! use kiln_nostd::inspect::{inspect, InPlace};
//! use kiln_nostd::{to_frame_vec, CompiledType, Directory, Frozen, Options, TensorSpec};
//!
//! #[derive(Frozen)]
//! struct Batch<'a> { name: &'a str, batch: Directory<'a> }
//! let mut block = [0u8; 512];
//! let batch = Directory::build(&[TensorSpec::from_host(&[2], &[1.0f32, 2.0]).named("w")], &mut block).unwrap();
//! let bytes = to_frame_vec(&Batch { name: "abc", batch }).unwrap();
//!
//! let text = Batch::SCHEMA.to_string();
//! let ty = CompiledType::<16>::parse(&text).unwrap();
//! let seen = inspect(&ty, &bytes, Options::FRAMED).unwrap();
//! assert_eq!(seen.directories[0].path.to_string(), "batch");
//! let w = &seen.tensors[0];
//! assert_eq!((w.name.as_deref(), w.shape.as_slice()), (Some("w"), &[2][..]));
//! assert_eq!(&bytes[w.range.clone()], &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]);
//! // 16 (frame) + 4 + 3 ("abc") = 23: the block starts at an odd offset.
//! assert_eq!(w.in_place(0, true), InPlace::Misaligned { offset: w.range.start, align: 4 });
//! ```

use alloc::string::String;
use alloc::vec::Vec;

use crate::directory::{Directory, Quant, TensorView};
use crate::dtype::DtypeCode;
use crate::error::Result;
use crate::frame::FRAME_LEN;
use crate::limits::{Limits, Options};
use crate::schema::{CompiledType, Scalar};
use crate::value::{Builder, Value, ValueKind};
use crate::walk::{ScalarValue, Span, Visitor};

// ---------------------------------------------------------------------------
// Paths

/// One step of a [`Path`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Seg {
    /// A struct field, by name.
    Field(String),
    /// A list element, by index.
    Index(u32),
    /// A dict entry, by key.
    Key(String),
}

/// Where a value is inside the value it belongs to: `""` for the whole
/// value, `batch`, `layers[2].w`, `tags["a"]`, `[0]["k"].x`.
///
/// One syntax everywhere (`spec/json.md`, "Paths"): a field is its name,
/// after a `.` unless it comes first; a list element is `[N]`; a dict
/// entry is its key as a JSON string in brackets (`["a"]`, with `"`, `\`
/// and the control characters escaped as in the JSON form, nothing else).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Path {
    segs: Vec<Seg>,
}

impl Path {
    /// The whole value: `""`.
    pub const fn root() -> Path {
        Path { segs: Vec::new() }
    }

    /// Adds a step at the end.
    pub fn push(&mut self, seg: Seg) {
        self.segs.push(seg);
    }

    /// Removes the last step.
    pub fn pop(&mut self) -> Option<Seg> {
        self.segs.pop()
    }

    /// This path with one more step.
    pub fn child(&self, seg: Seg) -> Path {
        let mut path = self.clone();
        path.push(seg);
        path
    }

    /// The steps, outermost first.
    pub fn segments(&self) -> &[Seg] {
        &self.segs
    }

    /// The last step, if any.
    pub fn last(&self) -> Option<&Seg> {
        self.segs.last()
    }

    /// Whether this is the whole value.
    pub fn is_root(&self) -> bool {
        self.segs.is_empty()
    }

    /// Appends the path's text to `out` (what `Display` prints, without
    /// `core::fmt`: the browser module keeps its size down this way).
    pub fn write_to(&self, out: &mut String) {
        for (i, seg) in self.segs.iter().enumerate() {
            match seg {
                Seg::Field(name) => {
                    if i > 0 {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Seg::Index(n) => {
                    out.push('[');
                    push_decimal(out, (*n).into());
                    out.push(']');
                }
                Seg::Key(key) => {
                    out.push('[');
                    push_json_string(out, key);
                    out.push(']');
                }
            }
        }
    }

    /// The path's text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write_to(&mut out);
        out
    }
}

impl core::fmt::Display for Path {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.text())
    }
}

/// Appends `text` as a JSON string literal: `"` and `\` and the control
/// characters below U+0020 escaped (`\n \r \t \b \f`, else `\u00xx` in
/// lowercase hex), nothing else.
pub fn push_json_string(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let b = c as usize;
                out.push_str("\\u00");
                for digit in [b >> 4, b & 15] {
                    out.push(HEX.get(digit).map_or('0', |&h| char::from(h)));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `n` in decimal (without `core::fmt`).
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

// ---------------------------------------------------------------------------
// Tensor facts

/// A tensor's quantization links: indexes of other tensors in the same
/// directory.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum QuantLink {
    /// Scheme 0: not quantized.
    None,
    /// Scheme 1: a scale per group.
    Scales {
        /// The dimension the groups run along.
        axis: u16,
        /// Elements per group.
        group_size: u32,
        /// The scale tensor.
        scales: usize,
    },
    /// Scheme 2: a scale per group and an outer scale.
    ScalesOuter {
        /// The dimension the groups run along.
        axis: u16,
        /// Elements per group.
        group_size: u32,
        /// The scale tensor.
        scales: usize,
        /// The outer scale tensor.
        outer: usize,
    },
}

impl QuantLink {
    /// The scheme number: 0, 1 or 2.
    pub const fn scheme(&self) -> u8 {
        match self {
            QuantLink::None => 0,
            QuantLink::Scales { .. } => 1,
            QuantLink::ScalesOuter { .. } => 2,
        }
    }

    /// `none`, `scales` or `scales+outer`.
    pub const fn name(&self) -> &'static str {
        match self {
            QuantLink::None => "none",
            QuantLink::Scales { .. } => "scales",
            QuantLink::ScalesOuter { .. } => "scales+outer",
        }
    }
}

/// Whether a payload can be viewed in place (a typed slice or typed array
/// over the buffer itself, no copy), and why not.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum InPlace {
    /// It can.
    Yes,
    /// The payload's address is not a multiple of its element size.
    Misaligned {
        /// The payload's address (the buffer's address plus its offset).
        offset: usize,
        /// The element size it needs to be a multiple of.
        align: usize,
    },
    /// Elements wider than a byte, on a big-endian host: the bytes are
    /// little-endian, so they must be swapped (copied).
    BigEndianHost,
}

impl InPlace {
    /// Whether it can.
    pub const fn is_yes(&self) -> bool {
        matches!(self, InPlace::Yes)
    }

    /// Why not, in a few words (`""` when it can).
    pub const fn reason(&self) -> &'static str {
        match self {
            InPlace::Yes => "",
            InPlace::Misaligned { .. } => "misaligned",
            InPlace::BigEndianHost => "big-endian host",
        }
    }
}

/// Everything known about one tensor without reading its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorFacts {
    /// Index of its directory in [`Inspection::directories`].
    pub directory: usize,
    /// Index within its directory (what quantization links use).
    pub index: usize,
    /// Name, when the directory names its tensors.
    pub name: Option<String>,
    /// Dtype code: closed or opaque.
    pub dtype: DtypeCode,
    /// Dimensions, outermost first.
    pub shape: Vec<u64>,
    /// Element count.
    pub elements: u64,
    /// Absolute payload byte range in the buffer.
    pub range: Span,
    /// Opaque layout name.
    pub layout: Option<String>,
    /// Opaque block size (0 for a closed dtype).
    pub block_size: u32,
    /// Quantization links.
    pub quant: QuantLink,
}

impl TensorFacts {
    /// The facts of `t`, a tensor of directory number `directory`.
    pub fn of(directory: usize, t: &TensorView<'_>) -> TensorFacts {
        let quant = match t.quant() {
            Quant::None => QuantLink::None,
            Quant::Scales {
                axis,
                group_size,
                scales,
            } => QuantLink::Scales {
                axis,
                group_size,
                scales: scales.index(),
            },
            Quant::ScalesOuter {
                axis,
                group_size,
                scales,
                outer,
            } => QuantLink::ScalesOuter {
                axis,
                group_size,
                scales: scales.index(),
                outer: outer.index(),
            },
        };
        TensorFacts {
            directory,
            index: t.index(),
            name: t.name().map(String::from),
            dtype: t.dtype(),
            shape: t.shape().to_vec(),
            elements: t.element_count(),
            range: t.byte_range(),
            layout: t.layout().map(String::from),
            block_size: t.block_size(),
            quant,
        }
    }

    /// The alignment a zero-copy view needs ([`DtypeCode::element_align`]).
    pub fn element_align(&self) -> usize {
        self.dtype.element_align()
    }

    /// Whether the payload can be viewed in place when the buffer starts
    /// at address `base` (0 for a memory-mapped file, whose pages are
    /// aligned: then the file offset decides) on a host of the given byte
    /// order.
    pub fn in_place(&self, base: usize, little_endian_host: bool) -> InPlace {
        let align = self.element_align();
        let offset = base.wrapping_add(self.range.start);
        if align > 1 && !little_endian_host {
            InPlace::BigEndianHost
        } else if !offset.is_multiple_of(align) {
            InPlace::Misaligned { offset, align }
        } else {
            InPlace::Yes
        }
    }

    /// The dtype's name: `f32`, or `opaque(4108)` (without `core::fmt`).
    pub fn dtype_name(&self) -> String {
        match self.dtype {
            DtypeCode::Closed(d) => d.name().into(),
            DtypeCode::Opaque(code) => {
                let mut s = String::from("opaque(");
                push_decimal(&mut s, code.into());
                s.push(')');
                s
            }
        }
    }
}

/// One `tensors` value of the walked buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectoryFacts {
    /// Where it is in the value.
    pub path: Path,
    /// Absolute byte range of the block.
    pub span: Span,
    /// Absolute offset of the payload region.
    pub payload_offset: usize,
    /// Index of its first tensor in [`Inspection::tensors`].
    pub first: usize,
    /// How many tensors it has.
    pub count: usize,
    /// Whether it names its tensors.
    pub named: bool,
    /// Whether the names are in increasing byte order.
    pub names_sorted: bool,
}

/// A `tensors` block known from its head alone: what a reader by ranges
/// (a browser `Blob`, HTTP Range requests) knows after
/// [`crate::stream::Checker`] checked the head and skipped the payloads.
/// Offsets are `u64`, since such a file may be larger than the host's
/// address space (wasm32).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadFacts {
    /// The head's length: where the payload region starts, from the
    /// block's start.
    pub head_len: u64,
    /// The payload region's length.
    pub payload_bytes: u64,
    /// Whether it names its tensors.
    pub named: bool,
    /// Whether the names are in strictly increasing byte order.
    pub names_sorted: bool,
    /// Every tensor's facts (their `range` is empty: the payload is not in
    /// any buffer), each with its payload's offset from the start of the
    /// payload region and its length.
    pub tensors: Vec<(TensorFacts, u64, u64)>,
}

/// The facts of a block from its checked head (what
/// [`crate::stream::Checker::take_head`] gives), the block being
/// directory number `directory` of its message.
pub fn head_facts(head: &[u8], directory: usize, limits: Limits) -> Result<HeadFacts> {
    let (dir, payload_bytes) = Directory::of_checked_head(head, limits)?;
    let tensors: Vec<(TensorFacts, u64, u64)> = dir
        .iter()
        .map(|t| {
            let mut facts = TensorFacts::of(directory, &t);
            facts.range = 0..0;
            (facts, t.byte_offset(), t.byte_length())
        })
        .collect();
    let names_sorted = dir.has_names()
        && tensors.windows(2).all(|w| match w {
            [a, b] => {
                matches!((&a.0.name, &b.0.name), (Some(x), Some(y)) if x.as_bytes() < y.as_bytes())
            }
            _ => true,
        });
    Ok(HeadFacts {
        head_len: dir.payload_offset() as u64,
        payload_bytes,
        named: dir.has_names(),
        names_sorted,
        tensors,
    })
}

// ---------------------------------------------------------------------------
// The walk

/// What one walk found: the value tree, every directory, every tensor.
#[derive(Clone, Debug)]
pub struct Inspection<'a> {
    /// The value, borrowed from the buffer, with absolute spans.
    pub value: Value<'a>,
    /// Every `tensors` value, in wire order.
    pub directories: Vec<DirectoryFacts>,
    /// Every tensor of every directory, in wire order.
    pub tensors: Vec<TensorFacts>,
}

impl Inspection<'_> {
    /// The tensors of directory `d`.
    pub fn tensors_of(&self, d: &DirectoryFacts) -> &[TensorFacts] {
        self.tensors
            .get(d.first..d.first.saturating_add(d.count))
            .unwrap_or(&[])
    }
}

/// The visitor behind [`inspect`], for a caller that drives the walk
/// itself (the browser module walks growing prefixes of a file): the tree
/// being built, the directories and tensors so far, and where the last
/// complete thing read ends.
pub struct Collector<'a> {
    builder: Builder<'a>,
    directories: Vec<DirectoryFacts>,
    tensors: Vec<TensorFacts>,
}

impl<'a> Collector<'a> {
    /// A collector for a walk whose value starts at `start` (16 when the
    /// buffer is framed).
    pub fn new(start: usize) -> Self {
        Collector {
            builder: Builder::starting_at(start),
            directories: Vec::new(),
            tensors: Vec::new(),
        }
    }

    /// A collector for a walk under `options`.
    pub fn for_options(options: Options) -> Self {
        Collector::new(if options.is_framed() { FRAME_LEN } else { 0 })
    }

    /// The end of the last complete thing read: where the next value
    /// starts (after a walk that stopped with EOF, where a reader of a
    /// prefix would load more).
    pub fn cursor(&self) -> usize {
        self.builder.cursor
    }

    /// The directories reported so far (every one checked whole).
    pub fn directories(&self) -> &[DirectoryFacts] {
        &self.directories
    }

    /// What the walk found; call it after the walk succeeded.
    pub fn finish(self) -> Result<Inspection<'a>> {
        Ok(Inspection {
            value: self.builder.finish()?,
            directories: self.directories,
            tensors: self.tensors,
        })
    }
}

/// Walks `buf` as one value of `ty` (framed or bare, as `options` say) and
/// collects the inspection model. Same verdicts and codes as
/// [`crate::check()`].
pub fn inspect<'a, const N: usize>(
    ty: &CompiledType<'_, N>,
    buf: &'a [u8],
    options: Options,
) -> Result<Inspection<'a>> {
    let mut collector = Collector::for_options(options);
    ty.walk(buf, options, &mut collector)?;
    collector.finish()
}

impl<'de> Visitor<'de> for Collector<'de> {
    fn scalar(&mut self, at: usize, value: ScalarValue) -> Result<()> {
        self.builder.scalar(at, value)
    }
    fn str(&mut self, span: Span, value: &'de str) -> Result<()> {
        self.builder.str(span, value)
    }
    fn bytes(&mut self, span: Span, value: &'de [u8]) -> Result<()> {
        self.builder.bytes(span, value)
    }
    fn begin_list(&mut self, at: usize, count: u32) -> Result<()> {
        self.builder.begin_list(at, count)
    }
    fn numbers(&mut self, scalar: Scalar, span: Span, bytes: &'de [u8]) -> Result<()> {
        self.builder.numbers(scalar, span, bytes)
    }
    fn repeat(&mut self, times: u32) -> Result<()> {
        self.builder.repeat(times)
    }
    fn end_list(&mut self) -> Result<()> {
        self.builder.end_list()
    }
    fn begin_opt(&mut self, at: usize, present: bool) -> Result<()> {
        self.builder.begin_opt(at, present)
    }
    fn end_opt(&mut self) -> Result<()> {
        self.builder.end_opt()
    }
    fn begin_dict(&mut self, at: usize, count: u32) -> Result<()> {
        self.builder.begin_dict(at, count)
    }
    fn key(&mut self, span: Span, key: &'de str) -> Result<()> {
        self.builder.key(span, key)
    }
    fn end_dict(&mut self) -> Result<()> {
        self.builder.end_dict()
    }
    fn begin_struct(&mut self, at: usize, fields: usize) -> Result<()> {
        self.builder.begin_struct(at, fields)
    }
    fn field(&mut self, name: &str) -> Result<()> {
        self.builder.field(name)
    }
    fn end_struct(&mut self) -> Result<()> {
        self.builder.end_struct()
    }
    fn tensors(&mut self, dir: Directory<'de>) -> Result<()> {
        let index = self.directories.len();
        let first = self.tensors.len();
        self.tensors
            .extend(dir.iter().map(|t| TensorFacts::of(index, &t)));
        self.directories.push(DirectoryFacts {
            path: self.builder.path(),
            span: dir.byte_range(),
            payload_offset: dir.payload_offset(),
            first,
            count: dir.len(),
            named: dir.has_names(),
            names_sorted: dir.names_sorted(),
        });
        self.builder.tensors(dir)
    }
}

// ---------------------------------------------------------------------------
// Leaves

/// Calls `f` with every leaf of `value` and its path, in wire order: every
/// value that is not a container, an empty container, a repeated list
/// (once), and a non-empty list of numbers as one leaf. `f` returns false
/// to stop.
pub fn for_each_leaf<'v, 'a>(
    value: &'v Value<'a>,
    f: &mut dyn FnMut(&Path, &'v Value<'a>) -> bool,
) {
    let mut path = Path::root();
    leaves(value, &mut path, f);
}

fn is_number(v: &Value<'_>) -> bool {
    matches!(
        v.kind,
        ValueKind::Integer(_) | ValueKind::F32(_) | ValueKind::F64(_)
    )
}

fn leaves<'v, 'a>(
    value: &'v Value<'a>,
    path: &mut Path,
    f: &mut dyn FnMut(&Path, &'v Value<'a>) -> bool,
) -> bool {
    let mut inside = |path: &mut Path, seg: Seg, v: &'v Value<'a>| {
        path.push(seg);
        let go = leaves(v, path, f);
        path.pop();
        go
    };
    match &value.kind {
        ValueKind::List(items) if !items.is_empty() && !items.iter().all(is_number) => items
            .iter()
            .enumerate()
            .all(|(i, v)| inside(path, Seg::Index(u32::try_from(i).unwrap_or(u32::MAX)), v)),
        ValueKind::Opt(Some(inner)) => leaves(inner, path, f),
        ValueKind::Dict(pairs) if !pairs.is_empty() => pairs
            .iter()
            .all(|(k, v)| inside(path, Seg::Key(k.as_ref().into()), v)),
        ValueKind::Struct(fields) if !fields.is_empty() => fields
            .iter()
            .all(|(k, v)| inside(path, Seg::Field(k.as_ref().into()), v)),
        _ => f(path, value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_have_one_syntax() {
        let mut p = Path::root();
        assert_eq!(p.text(), "");
        p.push(Seg::Field("layers".into()));
        p.push(Seg::Index(2));
        p.push(Seg::Field("w".into()));
        assert_eq!(p.text(), "layers[2].w");
        let q = Path::root()
            .child(Seg::Index(0))
            .child(Seg::Key("a\"b\\\n\u{1}é".into()))
            .child(Seg::Field("x".into()));
        assert_eq!(q.text(), "[0][\"a\\\"b\\\\\\n\\u0001é\"].x");
    }

    #[test]
    fn in_place_says_why_not() {
        let t = TensorFacts {
            directory: 0,
            index: 0,
            name: None,
            dtype: DtypeCode::Closed(crate::Dtype::F32),
            shape: alloc::vec![1],
            elements: 1,
            range: 66..70,
            layout: None,
            block_size: 0,
            quant: QuantLink::None,
        };
        assert_eq!(
            t.in_place(0, true),
            InPlace::Misaligned {
                offset: 66,
                align: 4
            }
        );
        assert_eq!(t.in_place(2, true), InPlace::Yes);
        assert_eq!(t.in_place(2, false), InPlace::BigEndianHost);
        let bytes = TensorFacts {
            dtype: DtypeCode::Opaque(4108),
            ..t
        };
        assert_eq!(bytes.in_place(1, false), InPlace::Yes);
        assert_eq!(bytes.dtype_name(), "opaque(4108)");
    }
}
