//! GGUF metadata values and their Kiln form.
//!
//! A GGUF value of type `T` becomes one Kiln value whose canonical type
//! text is `kiln(T)`, stored as that value's Frozen bytes next to the type
//! text:
//!
//! | GGUF type (id) | Kiln type text |
//! |---|---|
//! | UINT8 (0), INT8 (1), UINT16 (2), INT16 (3) | `u8`, `i8`, `u16`, `i16` |
//! | UINT32 (4), INT32 (5), FLOAT32 (6), BOOL (7) | `u32`, `i32`, `f32`, `bool` |
//! | STRING (8) | `str` |
//! | UINT64 (10), INT64 (11), FLOAT64 (12) | `u64`, `i64`, `f64` |
//! | ARRAY (9) of a non-array type `E` | `list<kiln(E)>` |
//! | ARRAY (9) of arrays | `list<struct{type:str,value:list<u8>,}>` |
//!
//! An array of arrays keeps each inner array as its own (type text, bytes)
//! pair, because GGUF lets every inner array have its own element type (and
//! an empty outer array says nothing about them). The mapping is one to
//! one, so the way back is exact.

use super::cursor::Cursor;
use crate::error::{Error, Result};

/// Type text of one element of a GGUF array of arrays.
pub const NESTED_ARRAY_TYPE: &str = "struct{type:str,value:list<u8>,}";

/// Deepest nesting of GGUF arrays this crate reads or writes. Each level
/// costs at least 12 bytes in GGUF, so without a bound a small hostile
/// file could exhaust the stack.
pub const MAX_ARRAY_DEPTH: u32 = 32;

/// The thirteen GGUF metadata value types.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueType {
    /// 0
    U8,
    /// 1
    I8,
    /// 2
    U16,
    /// 3
    I16,
    /// 4
    U32,
    /// 5
    I32,
    /// 6
    F32,
    /// 7: one byte, 0 or 1
    Bool,
    /// 8: u64 length and UTF-8 bytes
    String,
    /// 9: element type, u64 count, elements
    Array,
    /// 10
    U64,
    /// 11
    I64,
    /// 12
    F64,
}

const ALL: [ValueType; 13] = [
    ValueType::U8,
    ValueType::I8,
    ValueType::U16,
    ValueType::I16,
    ValueType::U32,
    ValueType::I32,
    ValueType::F32,
    ValueType::Bool,
    ValueType::String,
    ValueType::Array,
    ValueType::U64,
    ValueType::I64,
    ValueType::F64,
];

impl ValueType {
    /// The type with GGUF id `id`.
    pub fn from_id(id: u32) -> Option<ValueType> {
        ALL.get(usize::try_from(id).ok()?).copied()
    }

    /// The GGUF id.
    pub fn id(self) -> u32 {
        ALL.iter().position(|&t| t == self).unwrap_or(0) as u32
    }

    /// Width in bytes of a fixed-width type (bool included).
    pub fn width(self) -> Option<u64> {
        Some(match self {
            ValueType::U8 | ValueType::I8 | ValueType::Bool => 1,
            ValueType::U16 | ValueType::I16 => 2,
            ValueType::U32 | ValueType::I32 | ValueType::F32 => 4,
            ValueType::U64 | ValueType::I64 | ValueType::F64 => 8,
            ValueType::String | ValueType::Array => return None,
        })
    }

    /// Fewest bytes a GGUF encoding of this type can take: what bounds an
    /// array count.
    pub fn min_len(self) -> u64 {
        match self {
            ValueType::String => 8,
            ValueType::Array => 12,
            fixed => fixed.width().unwrap_or(1),
        }
    }

    /// The Kiln type text of a value of this type; for an array, of an
    /// element of an array of this type.
    pub fn element_text(self) -> &'static str {
        match self {
            ValueType::U8 => "u8",
            ValueType::I8 => "i8",
            ValueType::U16 => "u16",
            ValueType::I16 => "i16",
            ValueType::U32 => "u32",
            ValueType::I32 => "i32",
            ValueType::F32 => "f32",
            ValueType::Bool => "bool",
            ValueType::String => "str",
            ValueType::Array => NESTED_ARRAY_TYPE,
            ValueType::U64 => "u64",
            ValueType::I64 => "i64",
            ValueType::F64 => "f64",
        }
    }

    /// The GGUF type whose element type text is `text` (the inverse of
    /// [`ValueType::element_text`]).
    pub fn from_element_text(text: &str) -> Option<ValueType> {
        ALL.into_iter().find(|t| t.element_text() == text)
    }

    /// GGUF's name for it, e.g. `UINT32`.
    pub fn name(self) -> &'static str {
        match self {
            ValueType::U8 => "UINT8",
            ValueType::I8 => "INT8",
            ValueType::U16 => "UINT16",
            ValueType::I16 => "INT16",
            ValueType::U32 => "UINT32",
            ValueType::I32 => "INT32",
            ValueType::F32 => "FLOAT32",
            ValueType::Bool => "BOOL",
            ValueType::String => "STRING",
            ValueType::Array => "ARRAY",
            ValueType::U64 => "UINT64",
            ValueType::I64 => "INT64",
            ValueType::F64 => "FLOAT64",
        }
    }
}

/// Where transcoded bytes go: a buffer, or nowhere (for validating).
pub(crate) trait Out: Default {
    fn put(&mut self, bytes: &[u8]);
    fn len(&self) -> u64;
    fn append(&mut self, inner: Self);
}

impl Out for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn len(&self) -> u64 {
        Vec::len(self) as u64
    }
    fn append(&mut self, mut inner: Self) {
        Vec::append(self, &mut inner);
    }
}

/// Counts and drops: validation without building anything.
#[derive(Default)]
pub(crate) struct Discard(u64);

impl Out for Discard {
    fn put(&mut self, bytes: &[u8]) {
        self.0 = self.0.saturating_add(bytes.len() as u64);
    }
    fn len(&self) -> u64 {
        self.0
    }
    fn append(&mut self, inner: Self) {
        self.0 = self.0.saturating_add(inner.0);
    }
}

fn kiln_len(len: u64, at: u64, what: &str) -> Result<[u8; 4]> {
    u32::try_from(len).map(u32::to_le_bytes).map_err(|_| {
        Error::gguf(
            at,
            format!("{what} of {len} is more than a Kiln length (u32) can hold"),
        )
    })
}

/// Reads one GGUF value of type `ty` at the cursor, checks it (bounded
/// counts, UTF-8 strings, bool bytes 0 or 1, nesting depth), writes its
/// Kiln Frozen bytes to `out` and returns its Kiln type text.
pub(crate) fn gguf_to_kiln<O: Out>(
    c: &mut Cursor<'_>,
    ty: ValueType,
    depth: u32,
    out: &mut O,
) -> Result<String> {
    match ty {
        ValueType::String => {
            let at = c.at();
            let s = c.string("string value")?;
            out.put(&kiln_len(s.len() as u64, at, "string length")?);
            out.put(s.as_bytes());
        }
        ValueType::Array => {
            if depth >= MAX_ARRAY_DEPTH {
                return Err(Error::gguf(
                    c.at(),
                    format!("arrays nested deeper than {MAX_ARRAY_DEPTH} levels"),
                ));
            }
            let at = c.at();
            let id = c.u32("array element type")?;
            let elem = ValueType::from_id(id).ok_or_else(|| {
                Error::gguf(at, format!("array element type {id} is not a GGUF type"))
            })?;
            let count_at = c.at();
            let count = c.u64("array count")?;
            let n = c.claim(count, elem.min_len(), count_at, "array count")?;
            out.put(&kiln_len(count, count_at, "array count")?);
            match elem {
                // The string arm above, inline: no type text made per
                // element (a vocabulary has hundreds of thousands).
                ValueType::String => {
                    for _ in 0..n {
                        let at = c.at();
                        let s = c.string("string value")?;
                        out.put(&kiln_len(s.len() as u64, at, "string length")?);
                        out.put(s.as_bytes());
                    }
                }
                ValueType::Array => {
                    for _ in 0..n {
                        let mut inner = O::default();
                        let inner_at = c.at();
                        let text = gguf_to_kiln(c, elem, depth + 1, &mut inner)?;
                        out.put(&kiln_len(text.len() as u64, inner_at, "type text")?);
                        out.put(text.as_bytes());
                        out.put(&kiln_len(inner.len(), inner_at, "nested array")?);
                        out.append(inner);
                    }
                }
                fixed => {
                    let width = fixed.width().unwrap_or(1);
                    let at = c.at();
                    // claim() proved count * width fits.
                    let bytes = c.take(count * width, "array elements")?;
                    check_bools(fixed, bytes, at)?;
                    out.put(bytes);
                }
            }
            return Ok(format!("list<{}>", elem.element_text()));
        }
        fixed => {
            let at = c.at();
            let bytes = c.take(fixed.width().unwrap_or(1), "value")?;
            check_bools(fixed, bytes, at)?;
            out.put(bytes);
        }
    }
    Ok(ty.element_text().to_string())
}

fn check_bools(ty: ValueType, bytes: &[u8], at: u64) -> Result<()> {
    if ty != ValueType::Bool {
        return Ok(());
    }
    match bytes.iter().position(|&b| b > 1) {
        Some(i) => Err(Error::gguf(
            at + i as u64,
            format!("bool byte {} is neither 0 nor 1", bytes[i]),
        )),
        None => Ok(()),
    }
}

/// A Kiln value back in GGUF form: its GGUF type and the bytes GGUF
/// stores after the type word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GgufValue {
    pub ty: ValueType,
    pub bytes: Vec<u8>,
}

/// A bounds-checked reader of Kiln bytes that `kiln_nostd::check` has
/// already accepted; a miss still gives an error, never a panic.
struct KilnBytes<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> KilnBytes<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        let bytes = self
            .pos
            .checked_add(len)
            .and_then(|end| self.buf.get(self.pos..end))
            .ok_or_else(|| Error::kiln(None, "metadata value is cut short"))?;
        self.pos += len;
        Ok(bytes)
    }

    fn u32(&mut self) -> Result<u32> {
        let bytes: [u8; 4] = self
            .take(4)?
            .try_into()
            .map_err(|_| Error::kiln(None, "metadata value is cut short"))?;
        Ok(u32::from_le_bytes(bytes))
    }

    fn run(&mut self) -> Result<&'a [u8]> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}

/// Converts the Kiln value `bytes` of type `text` (one of the texts
/// [`gguf_to_kiln`] writes) back to GGUF. `key` names the metadata pair in
/// errors.
pub(crate) fn kiln_to_gguf(
    key: &str,
    text: &str,
    bytes: &[u8],
    base: usize,
    depth: u32,
) -> Result<GgufValue> {
    let bad =
        |what: String| Error::kiln(Some(base as u64), format!("metadata key {key:?}: {what}"));
    if depth >= MAX_ARRAY_DEPTH {
        return Err(bad(format!(
            "arrays nested deeper than {MAX_ARRAY_DEPTH} levels"
        )));
    }
    let limits = kiln_nostd::Limits::uniform(kiln_nostd::WIRE_MAX);
    kiln_nostd::check(text, bytes, kiln_nostd::Options::BARE.with_limits(limits)).map_err(|e| {
        Error::from_kiln(
            e,
            base,
            &format!("metadata key {key:?}, value of type {text}"),
        )
    })?;
    let mut r = KilnBytes { buf: bytes, pos: 0 };
    let mut out = Vec::with_capacity(bytes.len());
    let elem_text = text.strip_prefix("list<").and_then(|t| t.strip_suffix('>'));
    let ty = match elem_text {
        None => {
            let ty = ValueType::from_element_text(text)
                .filter(|&t| t != ValueType::Array)
                .ok_or_else(|| bad(format!("type text {text} has no GGUF counterpart")))?;
            if ty == ValueType::String {
                let s = r.run()?;
                out.extend_from_slice(&(s.len() as u64).to_le_bytes());
                out.extend_from_slice(s);
            } else {
                out.extend_from_slice(r.take(ty.width().unwrap_or(1) as usize)?);
            }
            ty
        }
        Some(elem_text) => {
            let elem = ValueType::from_element_text(elem_text)
                .ok_or_else(|| bad(format!("type text {text} has no GGUF counterpart")))?;
            out.extend_from_slice(&elem.id().to_le_bytes());
            let count = r.u32()?;
            out.extend_from_slice(&u64::from(count).to_le_bytes());
            match elem {
                ValueType::String => {
                    for _ in 0..count {
                        let s = r.run()?;
                        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
                        out.extend_from_slice(s);
                    }
                }
                ValueType::Array => {
                    for i in 0..count {
                        let inner_text = core::str::from_utf8(r.run()?)
                            .map_err(|_| bad("nested type text is not UTF-8".into()))?;
                        let inner_bytes = r.run()?;
                        let inner_base = base + r.pos - inner_bytes.len();
                        let inner =
                            kiln_to_gguf(key, inner_text, inner_bytes, inner_base, depth + 1)?;
                        if inner.ty != ValueType::Array {
                            return Err(bad(format!(
                                "element {i} of an array of arrays has type {inner_text}, not a list"
                            )));
                        }
                        out.extend_from_slice(&inner.bytes);
                    }
                }
                fixed => {
                    let width = fixed.width().unwrap_or(1) as usize;
                    out.extend_from_slice(r.take((count as usize).saturating_mul(width))?);
                }
            }
            ValueType::Array
        }
    };
    if r.pos != bytes.len() {
        return Err(bad(format!(
            "{} bytes after the value",
            bytes.len() - r.pos
        )));
    }
    Ok(GgufValue { ty, bytes: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gguf_string(s: &str) -> Vec<u8> {
        let mut v = (s.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(s.as_bytes());
        v
    }

    fn array(elem: ValueType, count: u64, items: &[u8]) -> Vec<u8> {
        let mut v = elem.id().to_le_bytes().to_vec();
        v.extend_from_slice(&count.to_le_bytes());
        v.extend_from_slice(items);
        v
    }

    fn round_trip(ty: ValueType, raw: &[u8]) -> (String, Vec<u8>) {
        let mut c = Cursor::new(raw);
        let mut kiln = Vec::new();
        let text = gguf_to_kiln(&mut c, ty, 0, &mut kiln).unwrap();
        assert_eq!(c.pos(), raw.len());
        let back = kiln_to_gguf("k", &text, &kiln, 0, 0).unwrap();
        assert_eq!((back.ty, back.bytes.as_slice()), (ty, raw), "{text}");
        (text, kiln)
    }

    #[test]
    fn ids_and_texts_are_one_to_one() {
        for (id, t) in ALL.iter().enumerate() {
            assert_eq!(t.id(), id as u32);
            assert_eq!(ValueType::from_id(id as u32), Some(*t));
            assert_eq!(ValueType::from_element_text(t.element_text()), Some(*t));
        }
        assert_eq!(ValueType::from_id(13), None);
    }

    #[test]
    fn scalars_keep_their_bytes() {
        assert_eq!(round_trip(ValueType::U32, &7u32.to_le_bytes()).0, "u32");
        let nan = f64::from_bits(0x7FF8_0000_0000_0001).to_le_bytes();
        assert_eq!(round_trip(ValueType::F64, &nan).1, nan);
        assert_eq!(round_trip(ValueType::Bool, &[1]).0, "bool");
    }

    #[test]
    fn strings_become_kiln_str() {
        let (text, kiln) = round_trip(ValueType::String, &gguf_string("é"));
        assert_eq!(text, "str");
        assert_eq!(kiln, [2, 0, 0, 0, 0xc3, 0xa9]);
    }

    #[test]
    fn arrays_and_nested_arrays() {
        let mut strs = gguf_string("a");
        strs.extend(gguf_string("ß"));
        let (text, _) = round_trip(ValueType::Array, &array(ValueType::String, 2, &strs));
        assert_eq!(text, "list<str>");
        let ints = array(ValueType::I32, 2, &[1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        let empty = array(ValueType::U8, 0, &[]);
        let mut inner = ints.clone();
        inner.extend(array(ValueType::String, 1, &gguf_string("x")));
        inner.extend(empty.clone());
        let (text, _) = round_trip(ValueType::Array, &array(ValueType::Array, 3, &inner));
        assert_eq!(text, format!("list<{NESTED_ARRAY_TYPE}>"));
        let (text, kiln) = round_trip(ValueType::Array, &array(ValueType::Array, 0, &[]));
        assert_eq!(
            (text.as_str(), kiln.as_slice()),
            (&*format!("list<{NESTED_ARRAY_TYPE}>"), &[0u8; 4][..])
        );
    }

    #[test]
    fn hostile_values_are_errors_with_offsets() {
        let huge = array(ValueType::U64, u64::MAX, &[]);
        let err = gguf_to_kiln(
            &mut Cursor::new(&huge),
            ValueType::Array,
            0,
            &mut Discard::default(),
        )
        .unwrap_err();
        assert_eq!(err.offset(), Some(4), "{err}");
        let bad_bool = array(ValueType::Bool, 2, &[1, 2]);
        let err = gguf_to_kiln(
            &mut Cursor::new(&bad_bool),
            ValueType::Array,
            0,
            &mut Discard::default(),
        )
        .unwrap_err();
        assert_eq!(err.offset(), Some(13), "{err}");
        let bad_utf8 = [1, 0, 0, 0, 0, 0, 0, 0, 0xff];
        let err = gguf_to_kiln(
            &mut Cursor::new(&bad_utf8),
            ValueType::String,
            0,
            &mut Discard::default(),
        )
        .unwrap_err();
        assert_eq!(err.offset(), Some(8), "{err}");
        // Arrays of arrays nested past the bound.
        let mut deep = Vec::new();
        for _ in 0..100 {
            deep.extend(ValueType::Array.id().to_le_bytes());
            deep.extend(1u64.to_le_bytes());
        }
        let err = gguf_to_kiln(
            &mut Cursor::new(&deep),
            ValueType::Array,
            0,
            &mut Discard::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("nested deeper"), "{err}");
    }

    #[test]
    fn kiln_texts_outside_the_mapping_are_refused() {
        assert!(kiln_to_gguf("k", "list<list<u8>>", &[0, 0, 0, 0], 0, 0).is_err());
        assert!(kiln_to_gguf("k", "opt<u8>", &[0], 0, 0).is_err());
        assert!(kiln_to_gguf("k", "u32", &[0, 0, 0], 0, 0).is_err());
        let bad_nested_elem = {
            let mut v = 1u32.to_le_bytes().to_vec();
            v.extend(3u32.to_le_bytes());
            v.extend(b"u32");
            v.extend(4u32.to_le_bytes());
            v.extend(7u32.to_le_bytes());
            v
        };
        let text = format!("list<{NESTED_ARRAY_TYPE}>");
        let err = kiln_to_gguf("k", &text, &bad_nested_elem, 0, 0).unwrap_err();
        assert!(err.to_string().contains("not a list"), "{err}");
    }
}
