//! Dynamic values (feature `alloc`): any Frozen value as a [`Value`] tree,
//! read and written against type text known only at run time.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::ops::Range;

use crate::directory::Directory;
use crate::error::{Error, Refusal, Result};
use crate::frame;
use crate::frozen::cautious_capacity;
use crate::limits::{Limits, Options};
use crate::path::{Path, Seg};
use crate::schema::{CompiledType, NodeKind, Scalar, TypeRef, TOOL_NODES};
use crate::walk::{ScalarValue, Span, Visitor};
use crate::wire::{Sink, Writer};

/// How many nodes the type text of [`decode_value`] and [`encode_value`]
/// may compile to: the tools' one cap, [`TOOL_NODES`].
pub(crate) const VALUE_NODES: usize = TOOL_NODES;

/// One Frozen value of any type, and where it is.
///
/// One tree serves both directions. Decoded, a `Value` borrows its strings,
/// byte runs and directory blocks from the buffer it was read from, and
/// every node carries its absolute byte range ([`Value::span`]) in that
/// buffer (the frame included), so a tool can point at the bytes of any
/// value. Built to be
/// encoded (from JSON, say), the same tree owns its strings and bytes
/// ([`Cow::Owned`]) and its spans are empty ([`Value::new`]); the encoder
/// never reads a span.
///
/// A `Value` holds every value exactly: integers of every width as `i128`
/// (so `u64` and `i64` both fit), `f32` and `f64` with every bit (NaN
/// payloads and -0.0 kept; equality compares bits), `list<u8>` as bytes,
/// dicts as pairs in key order, structs as named fields in declaration
/// order, and a `tensors` value as its canonical directory block.
/// Equality compares values, never spans.
///
/// ```
/// use kiln_nostd::{decode_value, encode_value, Options, Value, ValueKind};
/// let ty = "struct{id:u32,tags:dict<str,u8>,}";
/// let int = |n| Value::new(ValueKind::Integer(n));
/// let value = Value::new(ValueKind::Struct(vec![
///     ("id".into(), int(7)),
///     ("tags".into(), Value::new(ValueKind::Dict(vec![("b".into(), int(2)), ("a".into(), int(1))]))),
/// ]));
/// let bytes = encode_value(ty, &value, Options::BARE).unwrap(); // keys sorted on the way out
/// let back = decode_value(ty, &bytes, Options::BARE).unwrap();
/// assert_eq!(encode_value(ty, &back, Options::BARE).unwrap(), bytes);
/// assert_eq!(back.field("id").unwrap().span, 0..4); // where it is in `bytes`
/// // A value that does not fit its type is refused, never written.
/// let too_big = Value::new(ValueKind::Struct(vec![("id".into(), int(1 << 40)), ("tags".into(), Value::new(ValueKind::Dict(vec![])))]));
/// assert!(encode_value(ty, &too_big, Options::BARE).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Value<'a> {
    /// The absolute byte range of the value in the buffer it was decoded
    /// from: a string's or byte run's length word included, a struct's
    /// fields, a directory's whole block. Empty (`0..0`) for a value built
    /// to be encoded.
    pub span: Range<usize>,
    /// The value.
    pub kind: ValueKind<'a>,
}

/// What a [`Value`] is.
#[derive(Clone, Debug)]
pub enum ValueKind<'a> {
    /// `bool`.
    Bool(bool),
    /// `i8 u8 i16 u16 i32 u32 i64 u64 int uint`: exact for every width;
    /// the type says the width, and the encoder refuses a value outside it.
    Integer(i128),
    /// `f32`, every bit kept.
    F32(f32),
    /// `f64`, every bit kept.
    F64(f64),
    /// `str`.
    Str(Cow<'a, str>),
    /// `list<u8>`, the bytes type.
    Bytes(Cow<'a, [u8]>),
    /// `list<T>` for every other `T`.
    List(Vec<Value<'a>>),
    /// A `list<T>` whose element type takes zero bytes (`struct{}` and
    /// structs of such): every element is the same value, so the list is
    /// its length and that value. The decoder gives this for such a list of
    /// one or more elements, so a few bytes claiming millions of empty
    /// structs cost neither time nor memory. The encoder takes it for any
    /// list.
    Repeat {
        /// How many elements.
        count: u32,
        /// The one value every element has.
        element: Box<Value<'a>>,
    },
    /// `opt<T>`.
    Opt(Option<Box<Value<'a>>>),
    /// `dict<str,V>`: pairs; decoded in strictly increasing key byte order,
    /// encoded sorted (repeated keys are refused).
    Dict(Vec<(Cow<'a, str>, Value<'a>)>),
    /// `struct{...}`: every field, named, in declaration order.
    Struct(Vec<(Cow<'a, str>, Value<'a>)>),
    /// `tensors`: the canonical directory block.
    Tensors(Cow<'a, [u8]>),
}

impl PartialEq for Value<'_> {
    /// The values compare; spans do not.
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}

impl PartialEq for ValueKind<'_> {
    /// Structural equality; floats compare by bits, so NaN equals the same
    /// NaN and -0.0 differs from 0.0.
    fn eq(&self, other: &Self) -> bool {
        use ValueKind::*;
        match (self, other) {
            (Bool(a), Bool(b)) => a == b,
            (Integer(a), Integer(b)) => a == b,
            (F32(a), F32(b)) => a.to_bits() == b.to_bits(),
            (F64(a), F64(b)) => a.to_bits() == b.to_bits(),
            (Str(a), Str(b)) => a == b,
            (Bytes(a), Bytes(b)) | (Tensors(a), Tensors(b)) => a == b,
            (List(a), List(b)) => a == b,
            (
                Repeat {
                    count: a,
                    element: x,
                },
                Repeat {
                    count: b,
                    element: y,
                },
            ) => a == b && x == y,
            (Opt(a), Opt(b)) => a == b,
            (Dict(a), Dict(b)) | (Struct(a), Struct(b)) => a == b,
            _ => false,
        }
    }
}

impl<'a> From<ValueKind<'a>> for Value<'a> {
    fn from(kind: ValueKind<'a>) -> Self {
        Value::new(kind)
    }
}

impl<'a> Value<'a> {
    /// A value built to be encoded: no place in any buffer (`0..0`).
    pub const fn new(kind: ValueKind<'a>) -> Value<'a> {
        Value { span: 0..0, kind }
    }

    /// The directory of a `tensors` value (its offsets relative to the
    /// block: the block's own place is [`Value::span`]).
    pub fn directory(&self) -> Option<Directory<'_>> {
        match &self.kind {
            ValueKind::Tensors(block) => {
                Directory::parse_with(block, Limits::uniform(u32::MAX)).ok()
            }
            _ => None,
        }
    }

    /// A struct field by name.
    pub fn field(&self, name: &str) -> Option<&Value<'a>> {
        match &self.kind {
            ValueKind::Struct(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value with everything it borrows copied: it no longer needs
    /// the buffer it was read from.
    pub fn into_owned(self) -> Value<'static> {
        self.map(&|bytes| Cow::Owned(bytes.into_owned()))
    }

    /// The value without the bytes of its byte runs and directory blocks
    /// (they become empty; their spans stay), everything else owned: the
    /// outline a caller keeps when those bytes stay in a buffer of its own
    /// (a browser's file), reached through the spans.
    #[doc(hidden)]
    pub fn into_outline(self) -> Value<'static> {
        self.map(&|_| Cow::Borrowed(&[]))
    }

    fn map(self, bytes: &dyn Fn(Cow<'a, [u8]>) -> Cow<'static, [u8]>) -> Value<'static> {
        let own = |s: Cow<'a, str>| Cow::Owned(s.into_owned());
        let pairs = |pairs: Vec<(Cow<'a, str>, Value<'a>)>| {
            pairs
                .into_iter()
                .map(|(k, v)| (own(k), v.map(bytes)))
                .collect()
        };
        let kind = match self.kind {
            ValueKind::Bool(b) => ValueKind::Bool(b),
            ValueKind::Integer(v) => ValueKind::Integer(v),
            ValueKind::F32(v) => ValueKind::F32(v),
            ValueKind::F64(v) => ValueKind::F64(v),
            ValueKind::Str(s) => ValueKind::Str(own(s)),
            ValueKind::Bytes(b) => ValueKind::Bytes(bytes(b)),
            ValueKind::List(items) => {
                ValueKind::List(items.into_iter().map(|v| v.map(bytes)).collect())
            }
            ValueKind::Repeat { count, element } => ValueKind::Repeat {
                count,
                element: Box::new(element.map(bytes)),
            },
            ValueKind::Opt(inner) => ValueKind::Opt(inner.map(|v| Box::new(v.map(bytes)))),
            ValueKind::Dict(p) => ValueKind::Dict(pairs(p)),
            ValueKind::Struct(p) => ValueKind::Struct(pairs(p)),
            ValueKind::Tensors(b) => ValueKind::Tensors(bytes(b)),
        };
        Value {
            span: self.span,
            kind,
        }
    }
}

/// Decodes `bytes` as one value of `type_text` (framed or bare, under the
/// caps in `options`). Same verdicts and codes as [`crate::check()`].
pub fn decode_value<'b>(type_text: &str, bytes: &'b [u8], options: Options) -> Result<Value<'b>> {
    compile(type_text)?.decode_value(bytes, options)
}

/// Encodes `value` as `type_text`, framed or bare, into canonical bytes
/// (dict keys sorted). A value that does not fit the type is refused
/// ([`Refusal::WrongValue`]); what cannot be written canonically is refused
/// ([`Refusal::NotEncodable`]); neither is ever one of the eight codes.
pub fn encode_value(type_text: &str, value: &Value<'_>, options: Options) -> Result<Vec<u8>> {
    compile(type_text)?.encode_value(value, options)
}

fn compile(type_text: &str) -> Result<Box<CompiledType<'_, VALUE_NODES>>> {
    CompiledType::parse(type_text).map(Box::new)
}

impl<const N: usize> CompiledType<'_, N> {
    /// [`decode_value`] with this type.
    #[doc(hidden)]
    pub fn decode_value<'b>(&self, bytes: &'b [u8], options: Options) -> Result<Value<'b>> {
        let mut builder = Builder::default();
        self.walk(bytes, options, &mut builder)?;
        builder.finish()
    }

    /// [`encode_value`] with this type.
    #[doc(hidden)]
    pub fn encode_value(&self, value: &Value<'_>, options: Options) -> Result<Vec<u8>> {
        let mut w = Writer::with_limits(Vec::new(), options.limits);
        if options.is_framed() {
            frame::write_header(&mut w, self.hash())?;
        }
        encode(self.root(), value, &mut w)?;
        Ok(w.into_sink())
    }
}

// ---------------------------------------------------------------------------
// Decoding: a visitor that builds the tree

/// A container being filled: where it starts, where its last byte so far
/// ends, and what it holds.
struct Open<'a> {
    start: usize,
    end: usize,
    kind: OpenKind<'a>,
}

enum OpenKind<'a> {
    List(Vec<Value<'a>>, u32),
    /// A zero-size list once its one element is in: the count and it.
    Repeat(u32, Value<'a>),
    Opt(Option<Value<'a>>),
    Dict(Vec<(Cow<'a, str>, Value<'a>)>, Option<Cow<'a, str>>),
    Struct(Vec<(Cow<'a, str>, Value<'a>)>, Option<Cow<'a, str>>),
}

/// The visitor that builds a [`Value`] from a walk. It also knows, at any
/// event, the path of the value about to be added and the end of the last
/// complete thing read (what [`crate::inspect`] needs too).
#[derive(Default)]
pub(crate) struct Builder<'a> {
    open: Vec<Open<'a>>,
    done: Option<Value<'a>>,
    /// End of the last complete thing read: where the next value starts.
    pub(crate) cursor: usize,
}

fn broken() -> Error {
    // The walker's events always nest; this is never reached.
    Error::refused(Refusal::WrongValue, "walk events out of order")
}

fn scalar_width(value: ScalarValue) -> usize {
    match value {
        ScalarValue::Bool(_) | ScalarValue::I8(_) | ScalarValue::U8(_) => 1,
        ScalarValue::I16(_) | ScalarValue::U16(_) => 2,
        ScalarValue::I32(_) | ScalarValue::U32(_) | ScalarValue::F32(_) => 4,
        _ => 8,
    }
}

impl<'a> Builder<'a> {
    /// Starts a walk whose value begins at `start` (after a frame, say).
    pub(crate) fn starting_at(start: usize) -> Self {
        Builder {
            cursor: start,
            ..Builder::default()
        }
    }

    /// The path of the value the next event adds.
    pub(crate) fn path(&self) -> Path {
        let mut path = Path::root();
        for open in &self.open {
            match &open.kind {
                OpenKind::List(items, _) => {
                    path.push(Seg::Index(u32::try_from(items.len()).unwrap_or(u32::MAX)))
                }
                OpenKind::Repeat(..) | OpenKind::Opt(_) => {}
                OpenKind::Dict(_, key) => path.push(Seg::Key(key.as_deref().unwrap_or("").into())),
                OpenKind::Struct(_, name) => {
                    path.push(Seg::Field(name.as_deref().unwrap_or("").into()))
                }
            }
        }
        path
    }

    fn reached(&mut self, end: usize) {
        self.cursor = self.cursor.max(end);
    }

    fn put(&mut self, value: Value<'a>) -> Result<()> {
        self.reached(value.span.end);
        let Some(open) = self.open.last_mut() else {
            self.done = Some(value);
            return Ok(());
        };
        open.end = open.end.max(value.span.end);
        match &mut open.kind {
            OpenKind::List(items, count) => {
                if items.len() == 1 {
                    // Storage for the rest is reserved when a second
                    // element arrives: a list of a zero-size type has one
                    // element and then a repeat, so its count (millions,
                    // from four bytes) reserves nothing.
                    items.reserve_exact(cautious_capacity::<Value<'a>>(*count).saturating_sub(1));
                }
                items.push(value)
            }
            OpenKind::Repeat(..) => return Err(broken()),
            OpenKind::Opt(slot) => *slot = Some(value),
            OpenKind::Dict(pairs, key) | OpenKind::Struct(pairs, key) => {
                pairs.push((key.take().ok_or_else(broken)?, value))
            }
        }
        Ok(())
    }

    fn begin(&mut self, start: usize, header: usize, kind: OpenKind<'a>) {
        let end = start.saturating_add(header);
        self.reached(end);
        self.open.push(Open { start, end, kind });
    }

    fn close(&mut self) -> Result<()> {
        let open = self.open.pop().ok_or_else(broken)?;
        let kind = match open.kind {
            OpenKind::List(items, _) => ValueKind::List(items),
            OpenKind::Repeat(count, element) => ValueKind::Repeat {
                count,
                element: Box::new(element),
            },
            OpenKind::Opt(slot) => ValueKind::Opt(slot.map(Box::new)),
            OpenKind::Dict(pairs, _) => ValueKind::Dict(pairs),
            OpenKind::Struct(fields, _) => ValueKind::Struct(fields),
        };
        self.put(Value {
            span: open.start..open.end,
            kind,
        })
    }

    pub(crate) fn finish(self) -> Result<Value<'a>> {
        self.done.ok_or_else(broken)
    }
}

impl<'de> Visitor<'de> for Builder<'de> {
    fn scalar(&mut self, at: usize, value: ScalarValue) -> Result<()> {
        let kind = match value {
            ScalarValue::Bool(b) => ValueKind::Bool(b),
            ScalarValue::I8(v) => ValueKind::Integer(v.into()),
            ScalarValue::U8(v) => ValueKind::Integer(v.into()),
            ScalarValue::I16(v) => ValueKind::Integer(v.into()),
            ScalarValue::U16(v) => ValueKind::Integer(v.into()),
            ScalarValue::I32(v) => ValueKind::Integer(v.into()),
            ScalarValue::U32(v) => ValueKind::Integer(v.into()),
            ScalarValue::I64(v) | ScalarValue::Int(v) => ValueKind::Integer(v.into()),
            ScalarValue::U64(v) | ScalarValue::Uint(v) => ValueKind::Integer(v.into()),
            ScalarValue::F32(v) => ValueKind::F32(v),
            ScalarValue::F64(v) => ValueKind::F64(v),
        };
        self.put(Value {
            span: at..at.saturating_add(scalar_width(value)),
            kind,
        })
    }

    fn str(&mut self, span: Span, value: &'de str) -> Result<()> {
        self.put(Value {
            span: span.start.saturating_sub(4)..span.end,
            kind: ValueKind::Str(Cow::Borrowed(value)),
        })
    }

    fn bytes(&mut self, span: Span, value: &'de [u8]) -> Result<()> {
        self.put(Value {
            span: span.start.saturating_sub(4)..span.end,
            kind: ValueKind::Bytes(Cow::Borrowed(value)),
        })
    }

    fn begin_list(&mut self, at: usize, count: u32) -> Result<()> {
        self.begin(at, 4, OpenKind::List(Vec::new(), count));
        Ok(())
    }

    fn repeat(&mut self, _: u32) -> Result<()> {
        let open = self.open.last_mut().ok_or_else(broken)?;
        match core::mem::replace(&mut open.kind, OpenKind::Opt(None)) {
            OpenKind::List(mut items, count) => {
                let element = items.pop().ok_or_else(broken)?;
                open.kind = OpenKind::Repeat(count, element);
                Ok(())
            }
            _ => Err(broken()),
        }
    }

    fn end_list(&mut self) -> Result<()> {
        self.close()
    }

    fn begin_opt(&mut self, at: usize, _: bool) -> Result<()> {
        self.begin(at, 1, OpenKind::Opt(None));
        Ok(())
    }

    fn end_opt(&mut self) -> Result<()> {
        self.close()
    }

    fn begin_dict(&mut self, at: usize, count: u32) -> Result<()> {
        let pairs = Vec::with_capacity(cautious_capacity::<(Cow<'de, str>, Value<'de>)>(count));
        self.begin(at, 4, OpenKind::Dict(pairs, None));
        Ok(())
    }

    fn key(&mut self, span: Span, key: &'de str) -> Result<()> {
        self.reached(span.end);
        match self.open.last_mut() {
            Some(Open {
                kind: OpenKind::Dict(_, slot),
                end,
                ..
            }) => {
                *end = span.end;
                *slot = Some(Cow::Borrowed(key))
            }
            _ => return Err(broken()),
        }
        Ok(())
    }

    fn end_dict(&mut self) -> Result<()> {
        self.close()
    }

    fn begin_struct(&mut self, at: usize, fields: usize) -> Result<()> {
        self.begin(at, 0, OpenKind::Struct(Vec::with_capacity(fields), None));
        Ok(())
    }

    fn field(&mut self, name: &str) -> Result<()> {
        match self.open.last_mut() {
            Some(Open {
                kind: OpenKind::Struct(_, slot),
                ..
            }) => *slot = Some(Cow::Owned(name.into())),
            _ => return Err(broken()),
        }
        Ok(())
    }

    fn end_struct(&mut self) -> Result<()> {
        self.close()
    }

    fn tensors(&mut self, directory: Directory<'de>) -> Result<()> {
        self.put(Value {
            span: directory.byte_range(),
            kind: ValueKind::Tensors(Cow::Borrowed(directory.as_bytes())),
        })
    }
}

// ---------------------------------------------------------------------------
// Encoding: the type and the value, side by side

fn wrong(fault: &'static str) -> Error {
    Error::refused(Refusal::WrongValue, fault)
}

fn encode<S: Sink>(ty: TypeRef<'_, '_>, value: &Value<'_>, w: &mut Writer<S>) -> Result<()> {
    match (ty.kind(), &value.kind) {
        (NodeKind::Scalar(Scalar::Bool), ValueKind::Bool(b)) => w.u8(u8::from(*b)),
        (NodeKind::Scalar(Scalar::F32), ValueKind::F32(v)) => w.put(&v.to_le_bytes()),
        (NodeKind::Scalar(Scalar::F64), ValueKind::F64(v)) => w.put(&v.to_le_bytes()),
        (NodeKind::Scalar(scalar), ValueKind::Integer(v)) => integer(scalar, *v, w),
        (NodeKind::Str, ValueKind::Str(text)) => w.byte_run(text.as_bytes()),
        (NodeKind::Tensors, ValueKind::Tensors(block)) => {
            // Only a block its own reader accepts is written.
            Directory::parse_unindexed(block, w.limits())
                .map_err(|_| wrong("tensors value is not a valid directory block"))?;
            w.put(block)
        }
        (NodeKind::List, ValueKind::Bytes(bytes)) if ty.is_bytes() => {
            w.nested(|w| w.byte_run(bytes))
        }
        (NodeKind::List, ValueKind::List(items)) => list(ty, items.len(), w, |w, element| {
            items.iter().try_for_each(|item| encode(element, item, w))
        }),
        (
            NodeKind::List,
            ValueKind::Repeat {
                count,
                element: item,
            },
        ) => list(ty, *count as usize, w, |w, element| {
            // Values of a zero-size type write no bytes: encoding one checks
            // the shape and depth of them all.
            let writes = if element.is_zero_size() {
                (*count).min(1)
            } else {
                *count
            };
            (0..writes).try_for_each(|_| encode(element, item, w))
        }),
        (NodeKind::Opt, ValueKind::Opt(inner)) => w.nested(|w| match (inner, ty.element()) {
            (None, _) => w.u8(0),
            (Some(inner), Some(element)) => {
                w.u8(1)?;
                encode(element, inner, w)
            }
            (Some(_), None) => Err(wrong("opt without an element type")),
        }),
        (NodeKind::Dict, ValueKind::Dict(pairs)) => dict(ty, pairs, w),
        (NodeKind::Struct, ValueKind::Struct(fields)) => w.nested(|w| {
            if fields.len() != ty.field_count() {
                return Err(wrong("struct value does not have the type's fields"));
            }
            for (i, (name, field_ty)) in ty.fields().enumerate() {
                // In declaration order, or found by name.
                let value = match fields.get(i) {
                    Some((n, v)) if n == name => v,
                    _ => fields
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|(_, v)| v)
                        .ok_or(wrong("struct value lacks a field of the type"))?,
                };
                encode(field_ty, value, w)?;
            }
            Ok(())
        }),
        _ => Err(wrong("value does not have the shape of its type")),
    }
}

fn integer<S: Sink>(scalar: Scalar, v: i128, w: &mut Writer<S>) -> Result<()> {
    let out_of_range = || wrong("integer outside the range of its type");
    match scalar {
        Scalar::I8 => w.put(&i8::try_from(v).map_err(|_| out_of_range())?.to_le_bytes()),
        Scalar::U8 => w.put(&u8::try_from(v).map_err(|_| out_of_range())?.to_le_bytes()),
        Scalar::I16 => w.put(&i16::try_from(v).map_err(|_| out_of_range())?.to_le_bytes()),
        Scalar::U16 => w.put(&u16::try_from(v).map_err(|_| out_of_range())?.to_le_bytes()),
        Scalar::I32 => w.put(&i32::try_from(v).map_err(|_| out_of_range())?.to_le_bytes()),
        Scalar::U32 => w.put(&u32::try_from(v).map_err(|_| out_of_range())?.to_le_bytes()),
        Scalar::I64 | Scalar::Int => {
            w.put(&i64::try_from(v).map_err(|_| out_of_range())?.to_le_bytes())
        }
        Scalar::U64 | Scalar::Uint => {
            w.put(&u64::try_from(v).map_err(|_| out_of_range())?.to_le_bytes())
        }
        Scalar::Bool | Scalar::F32 | Scalar::F64 => Err(wrong("an integer for a non-integer type")),
    }
}

fn list<S: Sink>(
    ty: TypeRef<'_, '_>,
    count: usize,
    w: &mut Writer<S>,
    elements: impl FnOnce(&mut Writer<S>, TypeRef<'_, '_>) -> Result<()>,
) -> Result<()> {
    let element = ty.element().ok_or(wrong("list without an element type"))?;
    let cap = if ty.is_bytes() {
        w.limits().byte_cap
    } else {
        w.limits().count_cap
    };
    w.nested(|w| {
        w.count(count, cap)?;
        elements(w, element)
    })
}

fn dict<S: Sink>(
    ty: TypeRef<'_, '_>,
    pairs: &[(Cow<'_, str>, Value<'_>)],
    w: &mut Writer<S>,
) -> Result<()> {
    let element = ty.element().ok_or(wrong("dict without a value type"))?;
    let mut order: Vec<&(Cow<'_, str>, Value<'_>)> = pairs.iter().collect();
    order.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    if order.windows(2).any(|p| matches!(p, [a, b] if a.0 == b.0)) {
        return Err(Error::refused(Refusal::NotEncodable, "dict keys repeat"));
    }
    w.nested(|w| {
        w.count(order.len(), w.limits().count_cap)?;
        order.iter().try_for_each(|(key, value)| {
            w.byte_run(key.as_bytes())?;
            encode(element, value, w)
        })
    })
}
