//! The walker: bytes read against a [`CompiledType`], in wire order, with a
//! [`Visitor`] told what is where.
//!
//! Every position the visitor sees is an absolute byte offset into the
//! buffer the walk was given (a frame included), so a caller can cut
//! strings, byte runs and tensor payloads straight out of that buffer, or
//! make JavaScript typed arrays over it.
//!
//! The walker checks everything a typed decoder checks, in the same order,
//! through the same reader ([`Reader`]): [`crate::check()`] is the walker
//! with a visitor that does nothing. Work is bounded by the input: a list
//! whose element type takes zero bytes (`list<struct{}>`) is walked once
//! for its first element, whatever its count, and the visitor is told how
//! often that element repeats ([`Visitor::repeat`]).
//!
//! Plumbing, hidden from the docs but still callable: the public readers
//! are the value tree (`decode_value`) and the inspection model,
//! both built on this walk; the tests, the differential harness and the
//! fuzzers drive it directly.
//!
//! ```
//! use kiln_nostd::{CompiledType, Options, Result, Span, Visitor};
//!
//! /// Collects where each string is.
//! #[derive(Default)]
//! struct Strings(Vec<Span>);
//! impl<'de> Visitor<'de> for Strings {
//!     fn str(&mut self, span: Span, _value: &'de str) -> Result<()> {
//!         self.0.push(span);
//!         Ok(())
//!     }
//! }
//!
//! let ty = CompiledType::<8>::parse("struct{id:u8,names:list<str>,}").unwrap();
//! let bytes = [7, 2, 0, 0, 0, 1, 0, 0, 0, b'a', 2, 0, 0, 0, b'b', b'c'];
//! let mut strings = Strings::default();
//! ty.walk(&bytes, Options::BARE, &mut strings).unwrap();
//! assert_eq!(strings.0, [9..10, 14..16]);
//! ```

use core::ops::Range;

use crate::directory::Directory;
use crate::error::Result;
use crate::frame;
use crate::frozen::{read_dict, read_opt, Decode, DictEvent};
use crate::limits::Options;
use crate::schema::{CompiledType, NodeKind, Scalar, TypeRef};
use crate::wire::Reader;

/// An absolute byte range in the buffer being walked.
pub type Span = Range<usize>;

/// One Frozen scalar as read from the wire. Floats keep every bit (NaN
/// payloads, -0.0); compare them with `to_bits` when bits matter.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum ScalarValue {
    /// `bool`.
    Bool(bool),
    /// `i8`.
    I8(i8),
    /// `u8`.
    U8(u8),
    /// `i16`.
    I16(i16),
    /// `u16`.
    U16(u16),
    /// `i32`.
    I32(i32),
    /// `u32`.
    U32(u32),
    /// `i64`.
    I64(i64),
    /// `u64`.
    U64(u64),
    /// `int`.
    Int(i64),
    /// `uint`.
    Uint(u64),
    /// `f32`.
    F32(f32),
    /// `f64`.
    F64(f64),
}

impl ScalarValue {
    /// Reads one scalar of type `scalar` (a bool byte other than 0 or 1 is
    /// TYPE).
    #[doc(hidden)]
    pub fn read(scalar: Scalar, r: &mut Reader<'_>) -> Result<ScalarValue> {
        Ok(match scalar {
            Scalar::Bool => ScalarValue::Bool(bool::decode(r)?),
            Scalar::I8 => ScalarValue::I8(i8::decode(r)?),
            Scalar::U8 => ScalarValue::U8(u8::decode(r)?),
            Scalar::I16 => ScalarValue::I16(i16::decode(r)?),
            Scalar::U16 => ScalarValue::U16(u16::decode(r)?),
            Scalar::I32 => ScalarValue::I32(i32::decode(r)?),
            Scalar::U32 => ScalarValue::U32(u32::decode(r)?),
            Scalar::I64 => ScalarValue::I64(i64::decode(r)?),
            Scalar::U64 => ScalarValue::U64(u64::decode(r)?),
            Scalar::Int => ScalarValue::Int(i64::decode(r)?),
            Scalar::Uint => ScalarValue::Uint(u64::decode(r)?),
            Scalar::F32 => ScalarValue::F32(f32::decode(r)?),
            Scalar::F64 => ScalarValue::F64(f64::decode(r)?),
        })
    }

    /// Checks one scalar of type `scalar` without making its value: the
    /// error [`ScalarValue::read`] gives for the same bytes, in one small
    /// function (the incremental checker's rule, where a match over every
    /// type would be its largest part in the browser module).
    pub(crate) fn check(scalar: Scalar, r: &mut Reader<'_>) -> Result<()> {
        if scalar == Scalar::Bool {
            return bool::decode(r).map(|_| ());
        }
        // The name the Rust type's decoder gives an EOF: `int` and `uint`
        // are read as `i64` and `u64`.
        let what = match scalar {
            Scalar::Int => "i64",
            Scalar::Uint => "u64",
            s => s.name(),
        };
        r.skip(scalar.width() as usize, what)
    }
}

/// What a walk tells its caller, in wire order. Every method has a default
/// that does nothing, so a visitor implements only what it wants. A method
/// that returns an error stops the walk with that error.
///
/// Positions (`at`, [`Span`]) are absolute offsets in the walked buffer.
#[allow(unused_variables)]
pub trait Visitor<'de> {
    /// A scalar at `at`.
    fn scalar(&mut self, at: usize, value: ScalarValue) -> Result<()> {
        Ok(())
    }

    /// A `str`; `span` is its UTF-8 body, without the length word.
    fn str(&mut self, span: Span, value: &'de str) -> Result<()> {
        Ok(())
    }

    /// A `list<u8>` (the bytes type); `span` is its body, without the
    /// length word. Byte runs are reported whole, never as a list.
    fn bytes(&mut self, span: Span, value: &'de [u8]) -> Result<()> {
        Ok(())
    }

    /// A list whose count word starts at `at`; `count` elements follow,
    /// then [`Visitor::end_list`].
    fn begin_list(&mut self, at: usize, count: u32) -> Result<()> {
        Ok(())
    }

    /// All elements of a list of fixed-width numbers other than `bool`, at
    /// once: `bytes` are the little-endian elements at `span`. The default
    /// reports each element to [`Visitor::scalar`].
    fn numbers(&mut self, scalar: Scalar, span: Span, bytes: &'de [u8]) -> Result<()> {
        let mut r = Reader::starting_at(bytes, 0, crate::Limits::DEFAULT);
        let width = scalar.width() as usize;
        let mut at = span.start;
        while r.remaining() >= width {
            self.scalar(at, ScalarValue::read(scalar, &mut r)?)?;
            at = at.saturating_add(width);
        }
        Ok(())
    }

    /// The element just visited repeats `times` more times. Only for a list
    /// whose element type takes zero bytes: all its elements are the same
    /// value, so the walker visits the first one only, whatever the count.
    fn repeat(&mut self, times: u32) -> Result<()> {
        Ok(())
    }

    /// The end of the list begun last.
    fn end_list(&mut self) -> Result<()> {
        Ok(())
    }

    /// An `opt` whose tag byte is at `at`; when `present`, its value
    /// follows, then [`Visitor::end_opt`].
    fn begin_opt(&mut self, at: usize, present: bool) -> Result<()> {
        Ok(())
    }

    /// The end of the opt begun last.
    fn end_opt(&mut self) -> Result<()> {
        Ok(())
    }

    /// A dict whose count word starts at `at`; `count` pairs follow, each a
    /// [`Visitor::key`] and then its value, then [`Visitor::end_dict`].
    fn begin_dict(&mut self, at: usize, count: u32) -> Result<()> {
        Ok(())
    }

    /// A dict key; `span` is its UTF-8 body. Keys arrive in strictly
    /// increasing byte order (the walker has checked it).
    fn key(&mut self, span: Span, key: &'de str) -> Result<()> {
        Ok(())
    }

    /// The end of the dict begun last.
    fn end_dict(&mut self) -> Result<()> {
        Ok(())
    }

    /// A struct starting at `at` with `fields` fields, each announced by
    /// [`Visitor::field`] before its value, then [`Visitor::end_struct`].
    fn begin_struct(&mut self, at: usize, fields: usize) -> Result<()> {
        Ok(())
    }

    /// The next struct field's name (from the type text).
    fn field(&mut self, name: &str) -> Result<()> {
        Ok(())
    }

    /// The end of the struct begun last.
    fn end_struct(&mut self) -> Result<()> {
        Ok(())
    }

    /// A `tensors` value: a checked directory. [`Directory::byte_range`] is
    /// the absolute range of its block, and its tensors' byte ranges are
    /// absolute too. A walk looks no name up, so the directory keeps no
    /// hash table of names in byte order ([`Directory::by_name`] then
    /// binary-searches them); a decoded `Directory` field keeps one.
    fn tensors(&mut self, directory: Directory<'de>) -> Result<()> {
        Ok(())
    }
}

/// A visitor that does nothing: walking with it only checks.
#[derive(Copy, Clone, Debug, Default)]
pub struct Ignore;

impl Visitor<'_> for Ignore {
    fn numbers(&mut self, _: Scalar, _: Span, _: &[u8]) -> Result<()> {
        Ok(())
    }
}

/// Walks `buf` as one value of type `ty` (framed or bare, as `options`
/// say), telling `visitor` what it finds. Framed: the frame is checked
/// first and a hash other than `ty`'s is SCHEMA before any field is read.
/// The value must use the whole buffer (else TRAILING).
pub fn walk<'de, const N: usize, V: Visitor<'de>>(
    ty: &CompiledType<'_, N>,
    buf: &'de [u8],
    options: Options,
    visitor: &mut V,
) -> Result<()> {
    let mut r = if options.is_framed() {
        frame::open(buf, ty.hash())?;
        Reader::starting_at(buf, frame::FRAME_LEN, options.limits)
    } else {
        Reader::new(buf, options.limits)
    };
    let walked = value(ty.root(), &mut r, visitor).and_then(|()| r.finish());
    walked.map_err(|e| frame::hint_if_framed(e, buf, options))
}

impl<const N: usize> CompiledType<'_, N> {
    /// [`walk`] with this type.
    #[doc(hidden)]
    pub fn walk<'de, V: Visitor<'de>>(
        &self,
        buf: &'de [u8],
        options: Options,
        visitor: &mut V,
    ) -> Result<()> {
        walk(self, buf, options, visitor)
    }

    /// Checks that `buf` is one valid value of this type (framed or bare,
    /// under the caps in `options`): [`check()`](crate::check()) with a
    /// type compiled once, of any size.
    pub fn check(&self, buf: &[u8], options: Options) -> Result<()> {
        walk(self, buf, options, &mut Ignore)
    }
}

/// Reads one value of type `ty` at the reader's position. Hidden, as the
/// reader's primitive reads are: a caller holding a [`Reader`] (inside a
/// typed decoder, say) can walk a value embedded in its own.
#[doc(hidden)]
pub fn value<'de, V: Visitor<'de>>(
    ty: TypeRef<'_, '_>,
    r: &mut Reader<'de>,
    v: &mut V,
) -> Result<()> {
    match ty.kind() {
        NodeKind::Scalar(scalar) => {
            let at = r.position();
            let read = ScalarValue::read(scalar, r)?;
            v.scalar(at, read)
        }
        NodeKind::Str => {
            let start = r.position().saturating_add(4);
            let text = r.str()?;
            v.str(start..start.saturating_add(text.len()), text)
        }
        NodeKind::Tensors => v.tensors(Directory::decode_unindexed(r)?),
        NodeKind::List => r.nested(|r| list(ty, r, v)),
        NodeKind::Opt => read_opt(r, |r, at, present| {
            v.begin_opt(at, present)?;
            if present {
                if let Some(inner) = ty.element() {
                    value(inner, r, v)?;
                }
            }
            v.end_opt()
        }),
        NodeKind::Dict => {
            let element = ty.element();
            let value_min = element.map_or(0, |e| e.min_size());
            read_dict(r, usize::MAX, value_min, |r, event| match event {
                DictEvent::Begin { at, count } => v.begin_dict(at, count),
                DictEvent::Pair { key, key_at } => {
                    let start = key_at.saturating_add(4);
                    v.key(start..start.saturating_add(key.len()), key)?;
                    match element {
                        Some(e) => value(e, r, v),
                        None => Ok(()),
                    }
                }
            })?;
            v.end_dict()
        }
        NodeKind::Struct => r.nested(|r| {
            v.begin_struct(r.position(), ty.field_count())?;
            for (name, field) in ty.fields() {
                v.field(name)?;
                value(field, r, v)?;
            }
            v.end_struct()
        }),
    }
}

/// The EOF of a `list<u8>` length beyond the bytes that remain.
pub(crate) const BYTES_BEYOND: &str = "list<u8> length beyond the bytes that remain";
/// The EOF of a list count beyond the bytes that remain.
pub(crate) const LIST_BEYOND: &str = "list count beyond the bytes that remain";

/// A list's body, inside its container level.
fn list<'de, V: Visitor<'de>>(ty: TypeRef<'_, '_>, r: &mut Reader<'de>, v: &mut V) -> Result<()> {
    let Some(element) = ty.element() else {
        return Ok(());
    };
    if ty.is_bytes() {
        let start = r.position().saturating_add(4);
        let body = r.byte_run(BYTES_BEYOND)?;
        return v.bytes(start..start.saturating_add(body.len()), body);
    }
    let at = r.position();
    let count = r.claim(r.limits().count_cap, element.min_size(), LIST_BEYOND)?;
    v.begin_list(at, count)?;
    match element.kind() {
        // Fixed-width numbers: the claim proved the bytes are there, and
        // every bit pattern is a value.
        NodeKind::Scalar(scalar) if scalar != Scalar::Bool => {
            let start = r.position();
            let len = (count as usize).saturating_mul(scalar.width() as usize);
            let bytes = r.take(len, "list of numbers")?;
            v.numbers(scalar, start..start.saturating_add(len), bytes)?;
        }
        // Every element is the same zero-byte value: walk one (it may still
        // be too deep), then say how often it repeats.
        _ if element.is_zero_size() => {
            if let Some(more) = count.checked_sub(1) {
                value(element, r, v)?;
                v.repeat(more)?;
            }
        }
        _ => {
            for _ in 0..count {
                value(element, r, v)?;
            }
        }
    }
    v.end_list()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing)]
    use super::*;
    use crate::Limits;

    /// For every scalar type, every length up to a byte past its width and
    /// every bool byte: `check` gives `read`'s error and stops where it
    /// stops.
    #[test]
    fn check_gives_reads_error_for_every_scalar_and_length() {
        let bytes = [2u8, 1, 0, 0xFF, 0x80, 7, 9, 3, 5];
        for scalar in Scalar::ALL {
            for first in 0..=u8::MAX {
                for len in 0..=bytes.len() {
                    let mut buf = bytes;
                    buf[0] = first;
                    let buf = &buf[..len];
                    let mut read = Reader::starting_at(buf, 0, Limits::DEFAULT);
                    let mut checked = Reader::starting_at(buf, 0, Limits::DEFAULT);
                    let want = ScalarValue::read(scalar, &mut read).map(|_| ());
                    let got = ScalarValue::check(scalar, &mut checked);
                    assert_eq!(got, want, "{scalar:?}, first byte {first}, {len} bytes");
                    assert_eq!(
                        checked.position(),
                        read.position(),
                        "{scalar:?}, {len} bytes"
                    );
                }
            }
        }
    }
}
