//! Dynamic values (feature `alloc`): any Frozen value as a [`Value`] tree,
//! read and written against type text known only at run time.
//!
//! A `Value` holds every value exactly: integers of every width as `i128`
//! (so `u64` and `i64` both fit), `f32` and `f64` with every bit (NaN
//! payloads and -0.0 kept; equality compares bits), `list<u8>` as bytes,
//! dicts as pairs in key order, structs as named fields in declaration
//! order, and a `tensors` value as its canonical directory block.
//!
//! ```
//! use kiln_nostd::{decode_value, encode_value, Options, Value};
//! let ty = "struct{id:u32,tags:dict<str,u8>,}";
//! let value = Value::Struct(vec![
//!     ("id".into(), Value::Integer(7)),
//!     ("tags".into(), Value::Dict(vec![("b".into(), Value::Integer(2)), ("a".into(), Value::Integer(1))])),
//! ]);
//! let bytes = encode_value(ty, &value, Options::BARE).unwrap(); // keys sorted on the way out
//! let back = decode_value(ty, &bytes, Options::BARE).unwrap();
//! assert_eq!(encode_value(ty, &back, Options::BARE).unwrap(), bytes);
//! // A value that does not fit its type is refused, never written.
//! let too_big = Value::Struct(vec![("id".into(), Value::Integer(1 << 40)), ("tags".into(), Value::Dict(vec![]))]);
//! assert!(encode_value(ty, &too_big, Options::BARE).is_err());
//! ```

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use crate::directory::Directory;
use crate::error::{Error, Refusal, Result};
use crate::frame;
use crate::frozen::cautious_capacity;
use crate::limits::{Limits, Options};
use crate::schema::{CompiledType, NodeKind, Scalar, TypeRef};
use crate::walk::{ScalarValue, Span, Visitor};
use crate::wire::{Sink, Writer};

/// How many nodes the type text of [`decode_value`] and [`encode_value`]
/// may compile to. For larger types compile a bigger [`CompiledType`]
/// and call [`CompiledType::decode_value`].
pub const VALUE_NODES: usize = 1024;

/// One Frozen value of any type.
#[derive(Clone, Debug)]
pub enum Value {
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
    Str(String),
    /// `list<u8>`, the bytes type.
    Bytes(Vec<u8>),
    /// `list<T>` for every other `T`.
    List(Vec<Value>),
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
        element: Box<Value>,
    },
    /// `opt<T>`.
    Opt(Option<Box<Value>>),
    /// `dict<str,V>`: pairs; decoded in strictly increasing key byte order,
    /// encoded sorted (repeated keys are refused).
    Dict(Vec<(String, Value)>),
    /// `struct{...}`: every field, named, in declaration order.
    Struct(Vec<(String, Value)>),
    /// `tensors`: the canonical directory block.
    Tensors(Vec<u8>),
}

impl PartialEq for Value {
    /// Structural equality; floats compare by bits, so NaN equals the same
    /// NaN and -0.0 differs from 0.0.
    fn eq(&self, other: &Value) -> bool {
        use Value::*;
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

impl Value {
    /// The directory of a `tensors` value.
    pub fn directory(&self) -> Option<Directory<'_>> {
        match self {
            Value::Tensors(block) => Directory::parse_with(block, Limits::uniform(u32::MAX)).ok(),
            _ => None,
        }
    }

    /// A struct field by name.
    pub fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Struct(fields) => fields.iter().find(|(n, _)| n == name).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Decodes `bytes` as one value of `type_text` (framed or bare, under the
/// caps in `options`). Same verdicts and codes as [`crate::check()`].
pub fn decode_value(type_text: &str, bytes: &[u8], options: Options) -> Result<Value> {
    compile(type_text)?.decode_value(bytes, options)
}

/// Encodes `value` as `type_text`, framed or bare, into canonical bytes
/// (dict keys sorted). A value that does not fit the type is refused
/// ([`Refusal::WrongValue`]); what cannot be written canonically is refused
/// ([`Refusal::NotEncodable`]); neither is ever one of the eight codes.
pub fn encode_value(type_text: &str, value: &Value, options: Options) -> Result<Vec<u8>> {
    compile(type_text)?.encode_value(value, options)
}

fn compile(type_text: &str) -> Result<Box<CompiledType<'_, VALUE_NODES>>> {
    CompiledType::parse(type_text).map(Box::new)
}

impl<const N: usize> CompiledType<'_, N> {
    /// [`decode_value`] with this type.
    pub fn decode_value(&self, bytes: &[u8], options: Options) -> Result<Value> {
        let mut builder = Builder::default();
        self.walk(bytes, options, &mut builder)?;
        builder.finish()
    }

    /// [`encode_value`] with this type.
    pub fn encode_value(&self, value: &Value, options: Options) -> Result<Vec<u8>> {
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

/// A container being filled.
enum Open {
    List(Vec<Value>, u32),
    /// A zero-size list once its one element is in: the count and it.
    Repeat(u32, Value),
    Opt(Option<Value>),
    Dict(Vec<(String, Value)>, Option<String>),
    Struct(Vec<(String, Value)>, Option<String>),
}

#[derive(Default)]
struct Builder {
    open: Vec<Open>,
    done: Option<Value>,
}

fn broken() -> Error {
    // The walker's events always nest; this is never reached.
    Error::refused(Refusal::WrongValue, "walk events out of order")
}

impl Builder {
    fn put(&mut self, value: Value) -> Result<()> {
        match self.open.last_mut() {
            None => self.done = Some(value),
            Some(Open::List(items, count)) => {
                if items.len() == 1 {
                    // Storage for the rest is reserved when a second
                    // element arrives: a list of a zero-size type has one
                    // element and then a repeat, so its count (millions,
                    // from four bytes) reserves nothing.
                    items.reserve_exact(cautious_capacity::<Value>(*count).saturating_sub(1));
                }
                items.push(value)
            }
            Some(Open::Repeat(..)) => return Err(broken()),
            Some(Open::Opt(slot)) => *slot = Some(value),
            Some(Open::Dict(pairs, key)) | Some(Open::Struct(pairs, key)) => {
                pairs.push((key.take().ok_or_else(broken)?, value))
            }
        }
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        let value = match self.open.pop().ok_or_else(broken)? {
            Open::List(items, _) => Value::List(items),
            Open::Repeat(count, element) => Value::Repeat {
                count,
                element: Box::new(element),
            },
            Open::Opt(slot) => Value::Opt(slot.map(Box::new)),
            Open::Dict(pairs, _) => Value::Dict(pairs),
            Open::Struct(fields, _) => Value::Struct(fields),
        };
        self.put(value)
    }

    fn finish(self) -> Result<Value> {
        self.done.ok_or_else(broken)
    }
}

impl<'de> Visitor<'de> for Builder {
    fn scalar(&mut self, _: usize, value: ScalarValue) -> Result<()> {
        self.put(match value {
            ScalarValue::Bool(b) => Value::Bool(b),
            ScalarValue::I8(v) => Value::Integer(v.into()),
            ScalarValue::U8(v) => Value::Integer(v.into()),
            ScalarValue::I16(v) => Value::Integer(v.into()),
            ScalarValue::U16(v) => Value::Integer(v.into()),
            ScalarValue::I32(v) => Value::Integer(v.into()),
            ScalarValue::U32(v) => Value::Integer(v.into()),
            ScalarValue::I64(v) | ScalarValue::Int(v) => Value::Integer(v.into()),
            ScalarValue::U64(v) | ScalarValue::Uint(v) => Value::Integer(v.into()),
            ScalarValue::F32(v) => Value::F32(v),
            ScalarValue::F64(v) => Value::F64(v),
        })
    }

    fn str(&mut self, _: Span, value: &'de str) -> Result<()> {
        self.put(Value::Str(value.into()))
    }

    fn bytes(&mut self, _: Span, value: &'de [u8]) -> Result<()> {
        self.put(Value::Bytes(value.into()))
    }

    fn begin_list(&mut self, _: usize, count: u32) -> Result<()> {
        self.open.push(Open::List(Vec::new(), count));
        Ok(())
    }

    fn repeat(&mut self, _: u32) -> Result<()> {
        match self.open.pop() {
            Some(Open::List(mut items, count)) => {
                let element = items.pop().ok_or_else(broken)?;
                self.open.push(Open::Repeat(count, element));
                Ok(())
            }
            _ => Err(broken()),
        }
    }

    fn end_list(&mut self) -> Result<()> {
        self.close()
    }

    fn begin_opt(&mut self, _: usize, _: bool) -> Result<()> {
        self.open.push(Open::Opt(None));
        Ok(())
    }

    fn end_opt(&mut self) -> Result<()> {
        self.close()
    }

    fn begin_dict(&mut self, _: usize, count: u32) -> Result<()> {
        let pairs = Vec::with_capacity(cautious_capacity::<(String, Value)>(count));
        self.open.push(Open::Dict(pairs, None));
        Ok(())
    }

    fn key(&mut self, _: Span, key: &'de str) -> Result<()> {
        match self.open.last_mut() {
            Some(Open::Dict(_, slot)) => *slot = Some(key.into()),
            _ => return Err(broken()),
        }
        Ok(())
    }

    fn end_dict(&mut self) -> Result<()> {
        self.close()
    }

    fn begin_struct(&mut self, _: usize, fields: usize) -> Result<()> {
        self.open
            .push(Open::Struct(Vec::with_capacity(fields), None));
        Ok(())
    }

    fn field(&mut self, name: &str) -> Result<()> {
        match self.open.last_mut() {
            Some(Open::Struct(_, slot)) => *slot = Some(name.into()),
            _ => return Err(broken()),
        }
        Ok(())
    }

    fn end_struct(&mut self) -> Result<()> {
        self.close()
    }

    fn tensors(&mut self, directory: Directory<'de>) -> Result<()> {
        self.put(Value::Tensors(directory.as_bytes().into()))
    }
}

// ---------------------------------------------------------------------------
// Encoding: the type and the value, side by side

fn wrong(fault: &'static str) -> Error {
    Error::refused(Refusal::WrongValue, fault)
}

fn encode<S: Sink>(ty: TypeRef<'_, '_>, value: &Value, w: &mut Writer<S>) -> Result<()> {
    match (ty.kind(), value) {
        (NodeKind::Scalar(Scalar::Bool), Value::Bool(b)) => w.u8(u8::from(*b)),
        (NodeKind::Scalar(Scalar::F32), Value::F32(v)) => w.put(&v.to_le_bytes()),
        (NodeKind::Scalar(Scalar::F64), Value::F64(v)) => w.put(&v.to_le_bytes()),
        (NodeKind::Scalar(scalar), Value::Integer(v)) => integer(scalar, *v, w),
        (NodeKind::Str, Value::Str(text)) => w.byte_run(text.as_bytes()),
        (NodeKind::Tensors, Value::Tensors(block)) => {
            // Only a block its own reader accepts is written.
            Directory::parse_with(block, w.limits())
                .map_err(|_| wrong("tensors value is not a valid directory block"))?;
            w.put(block)
        }
        (NodeKind::List, Value::Bytes(bytes)) if ty.is_bytes() => w.nested(|w| w.byte_run(bytes)),
        (NodeKind::List, Value::List(items)) => list(ty, items.len(), w, |w, element| {
            items.iter().try_for_each(|item| encode(element, item, w))
        }),
        (
            NodeKind::List,
            Value::Repeat {
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
        (NodeKind::Opt, Value::Opt(inner)) => w.nested(|w| match (inner, ty.element()) {
            (None, _) => w.u8(0),
            (Some(inner), Some(element)) => {
                w.u8(1)?;
                encode(element, inner, w)
            }
            (Some(_), None) => Err(wrong("opt without an element type")),
        }),
        (NodeKind::Dict, Value::Dict(pairs)) => dict(ty, pairs, w),
        (NodeKind::Struct, Value::Struct(fields)) => w.nested(|w| {
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

fn dict<S: Sink>(ty: TypeRef<'_, '_>, pairs: &[(String, Value)], w: &mut Writer<S>) -> Result<()> {
    let element = ty.element().ok_or(wrong("dict without a value type"))?;
    let mut order: Vec<&(String, Value)> = pairs.iter().collect();
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
