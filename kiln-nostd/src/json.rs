//! The Kiln JSON form (feature `inspect`): a [`Value`] of a type as JSON
//! text, as `spec/json.md` defines it, written by one writer for every
//! tool (`kiln decode`, the JSON form of the inspection model, the
//! browser module).
//!
//! The type decides every shape; 64-bit integers are strings, floats keep
//! every bit (shortest digits, NaN payloads as hex), byte runs and
//! payloads are lowercase hex. Text goes to any [`core::fmt::Write`], so a
//! large value streams to its destination instead of being built first.
//!
//! ```
//! use kiln_nostd::json::{value_text, Style};
//! use kiln_nostd::{decode_value, CompiledType, Options};
//!
//! let ty = CompiledType::<8>::parse("struct{id:i64,x:f32,}").unwrap();
//! let bytes = [7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x3f];
//! let value = ty.decode_value(&bytes, Options::BARE).unwrap();
//! assert_eq!(value_text(ty.root(), &value, Style::COMPACT).unwrap(), r#"{"id":"7","x":1.0}"#);
//! ```

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::directory::{Directory, Quant, TensorView};
use crate::dtype::{Dtype, DtypeCode};
use crate::error::{Error, Refusal, Result};
use crate::limits::Limits;
use crate::schema::{NodeKind, Scalar, TypeRef};
use crate::text::{decimal, HEX};
use crate::value::{Value, ValueKind};

/// How a value is written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Style {
    /// Two spaces of indent per level and a member per line (Python's
    /// `json.dumps(indent=2)`); else one line with no spaces.
    pub pretty: bool,
    /// `Some(n)`: each tensor shows its payload's length and first `n`
    /// elements instead of its payload (for reading; not accepted back).
    pub preview: Option<usize>,
}

impl Style {
    /// Pretty, payloads in full.
    pub const PRETTY: Style = Style {
        pretty: true,
        preview: None,
    };
    /// One line, payloads in full.
    pub const COMPACT: Style = Style {
        pretty: false,
        preview: None,
    };
}

/// Largest integer magnitude written as a JSON number: every integer up to
/// it is exactly one IEEE double, so no JSON reader rounds it. Above it an
/// integer is a decimal string.
#[doc(hidden)]
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Writes `value` (of type `ty`) as JSON to `out`. A value that does not
/// have its type's shape is refused ([`Refusal::WrongValue`]); a refusal of
/// `out` is [`Refusal::Capacity`].
pub fn write_value(
    ty: TypeRef<'_, '_>,
    value: &Value<'_>,
    style: Style,
    out: &mut dyn Write,
) -> Result<()> {
    let mut w = JsonWriter::new(out, style.pretty);
    value_json(ty, value, &mut w, style.preview)?;
    w.done()
}

/// [`write_value`] into a new string.
pub fn value_text(ty: TypeRef<'_, '_>, value: &Value<'_>, style: Style) -> Result<String> {
    let mut out = String::new();
    write_value(ty, value, style, &mut out)?;
    Ok(out)
}

// ---------------------------------------------------------------------------
// The text writer

/// A streaming JSON writer: pretty (two-space indent, `": "` after names)
/// or compact, strings escaped as Python's `json.dumps(ensure_ascii=False)`
/// escapes them. The first refusal of the sink is kept and every later
/// call does nothing, so a caller checks once, at the end.
pub(crate) struct JsonWriter<'w> {
    out: &'w mut dyn Write,
    /// Text not yet given to `out`: the many small pieces go there, and
    /// to `out` in large ones.
    buf: String,
    pretty: bool,
    /// Per open container: whether it has a member yet.
    open: Vec<bool>,
    after_name: bool,
    failed: bool,
}

impl<'w> JsonWriter<'w> {
    pub(crate) fn new(out: &'w mut dyn Write, pretty: bool) -> Self {
        JsonWriter {
            out,
            buf: String::new(),
            pretty,
            open: Vec::new(),
            after_name: false,
            failed: false,
        }
    }

    /// Gives `out` the rest of the text; whether it took every byte.
    pub(crate) fn done(&mut self) -> Result<()> {
        self.flush();
        if self.failed {
            Err(Error::refused(
                Refusal::Capacity,
                "the JSON output refused the text",
            ))
        } else {
            Ok(())
        }
    }

    pub(crate) fn raw(&mut self, text: &str) {
        self.buf.push_str(text);
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    /// One ASCII byte of JSON's punctuation.
    fn byte(&mut self, b: u8) {
        self.buf.push(char::from(b));
    }

    fn flush(&mut self) {
        if !self.failed && self.out.write_str(&self.buf).is_err() {
            self.failed = true;
        }
        self.buf.clear();
    }

    fn newline(&mut self) {
        if self.pretty {
            self.raw("\n");
            for _ in 0..self.open.len() {
                self.raw("  ");
            }
        }
    }

    /// What comes before a value: a comma and a new line, unless the value
    /// follows a member name.
    fn before_value(&mut self) {
        if core::mem::take(&mut self.after_name) {
            return;
        }
        if let Some(has) = self.open.last_mut() {
            if core::mem::replace(has, true) {
                self.byte(b',');
            }
            self.newline();
        }
    }

    pub(crate) fn begin_object(&mut self) {
        self.before_value();
        self.byte(b'{');
        self.open.push(false);
    }

    pub(crate) fn begin_array(&mut self) {
        self.before_value();
        self.byte(b'[');
        self.open.push(false);
    }

    fn end(&mut self, close: u8) {
        if self.open.pop().unwrap_or(false) {
            self.newline();
        }
        self.byte(close);
    }

    pub(crate) fn end_object(&mut self) {
        self.end(b'}');
    }

    pub(crate) fn end_array(&mut self) {
        self.end(b']');
    }

    /// A member name; its value comes next.
    pub(crate) fn name(&mut self, name: &str) {
        self.before_value();
        self.string_body(name);
        self.raw(if self.pretty { ": " } else { ":" });
        self.after_name = true;
    }

    /// A member name of the writer's own (a literal with nothing to
    /// escape): copied whole, not scanned.
    pub(crate) fn key(&mut self, name: &'static str) {
        self.before_value();
        self.byte(b'"');
        self.raw(name);
        self.byte(b'"');
        self.byte(b':');
        if self.pretty {
            self.byte(b' ');
        }
        self.after_name = true;
    }

    /// A number, `true`, `false` or `null`, as text.
    pub(crate) fn literal(&mut self, text: &str) {
        self.before_value();
        self.raw(text);
    }

    pub(crate) fn null(&mut self) {
        self.literal("null");
    }

    pub(crate) fn bool(&mut self, b: bool) {
        self.literal(if b { "true" } else { "false" });
    }

    pub(crate) fn string(&mut self, s: &str) {
        self.before_value();
        self.string_body(s);
    }

    pub(crate) fn opt_string(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.string(s),
            None => self.null(),
        }
    }

    /// An unsigned integer: a number up to [`MAX_SAFE_INTEGER`], a decimal
    /// string above.
    pub(crate) fn uint(&mut self, n: u64) {
        self.before_value();
        let quoted = n > MAX_SAFE_INTEGER;
        if quoted {
            self.byte(b'"');
        }
        let mut digits = [0u8; 20];
        for &d in decimal(&mut digits, n) {
            self.buf.push(char::from(d));
        }
        if quoted {
            self.byte(b'"');
        }
    }

    pub(crate) fn opt_uint(&mut self, n: Option<u64>) {
        match n {
            Some(n) => self.uint(n),
            None => self.null(),
        }
    }

    /// A string literal, written piece by piece: the runs that need no
    /// escape as they are (a name, most text, is one run).
    fn string_body(&mut self, s: &str) {
        self.raw("\"");
        let mut rest = s;
        // The runs that need no escape are copied whole: a name, most
        // text, is one run.
        while let Some(at) = rest
            .bytes()
            .position(|b| b < 0x20 || b == b'"' || b == b'\\')
        {
            let (run, tail) = rest.split_at(at);
            self.raw(run);
            let b = tail.as_bytes().first().copied().unwrap_or(0);
            let escaped = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                _ => "",
            };
            if escaped.is_empty() {
                let hex = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0'),
                    HEX.get(usize::from(b & 15)).copied().unwrap_or(b'0'),
                ];
                self.raw(core::str::from_utf8(&hex).unwrap_or(""));
            } else {
                self.raw(escaped);
            }
            rest = tail.get(1..).unwrap_or("");
        }
        self.raw(rest);
        self.raw("\"");
    }

    /// A string of lowercase hex digits, two per byte, written in pieces.
    fn hex(&mut self, bytes: &[u8]) {
        self.before_value();
        self.raw("\"");
        let mut buf = String::with_capacity(8192);
        for chunk in bytes.chunks(4096) {
            buf.clear();
            for &b in chunk {
                for digit in [b >> 4, b & 15] {
                    buf.push(char::from(
                        HEX.get(usize::from(digit)).copied().unwrap_or(b'0'),
                    ));
                }
            }
            self.raw(&buf);
        }
        self.raw("\"");
    }
}

/// How much text the writer holds before it gives it to its sink.
const FLUSH_AT: usize = 64 << 10;

// ---------------------------------------------------------------------------
// Numbers

/// A number's text, on the stack: every float and integer the writer
/// writes is a few dozen bytes, and a metadata list holds hundreds of
/// thousands of them (a vocabulary's scores), each of which would
/// otherwise cost allocations.
#[derive(Clone, Copy)]
pub(crate) struct Short {
    bytes: [u8; Short::CAPACITY],
    len: usize,
}

impl Short {
    /// The longest text: `-` and 17 digits with 21 places of zeros, or an
    /// exponent form, fit with room to spare.
    const CAPACITY: usize = 48;

    fn new() -> Short {
        Short {
            bytes: [0; Short::CAPACITY],
            len: 0,
        }
    }

    fn from_str(text: &str) -> Short {
        let mut s = Short::new();
        s.push_str(text);
        s
    }

    /// Appends `text`; what does not fit is left out (nothing the writer
    /// writes is that long).
    fn push_str(&mut self, text: &str) {
        let end = (self.len + text.len()).min(Short::CAPACITY);
        let take = end - self.len;
        if let (Some(to), Some(from)) = (
            self.bytes.get_mut(self.len..end),
            text.as_bytes().get(..take),
        ) {
            to.copy_from_slice(from);
            self.len = end;
        }
    }

    fn push(&mut self, b: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only whole `str`s (cut only at ASCII) and ASCII bytes went in.
        core::str::from_utf8(self.bytes.get(..self.len).unwrap_or(&[])).unwrap_or("")
    }
}

impl Write for Short {
    fn write_str(&mut self, text: &str) -> core::fmt::Result {
        if self.len + text.len() > Short::CAPACITY {
            return Err(core::fmt::Error);
        }
        self.push_str(text);
        Ok(())
    }
}

impl PartialEq<&str> for Short {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl core::fmt::Debug for Short {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Decimal text of a finite float from its shortest round-trip digits
/// (`{:e}` of Rust's float formatting), laid out as ECMAScript's
/// `Number.prototype.toString` lays them out, with `.0` added when the text
/// would otherwise look like an integer: `1.0`, `-0.0`, `0.1`, `1.5e-7`,
/// `1e+21`, `3.4028235e+38`.
fn float_text(exponential: &str) -> Short {
    let (sign, rest) = match exponential.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", exponential),
    };
    let (mantissa, exp) = rest.split_once('e').unwrap_or((rest, "0"));
    // The digits without the point: at most 17 of them.
    let mut all = Short::new();
    for b in mantissa.bytes().filter(|b| *b != b'.') {
        all.push(b);
    }
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits = all.as_str().trim_end_matches('0');
    let mut out = Short::from_str(sign);
    if digits.is_empty() {
        out.push_str("0.0");
        return out;
    }
    let k = digits.len() as i64;
    // value = 0.DIGITS x 10^n
    let n = exp.saturating_add(1);
    let at = |i: i64| usize::try_from(i).unwrap_or(0);
    let zeros = |out: &mut Short, count: i64| {
        for _ in 0..count {
            out.push(b'0');
        }
    };
    if k <= n && n <= 21 {
        out.push_str(digits);
        zeros(&mut out, n - k);
        out.push_str(".0");
    } else if 0 < n && n <= 21 {
        out.push_str(digits.get(..at(n)).unwrap_or(""));
        out.push(b'.');
        out.push_str(digits.get(at(n)..).unwrap_or(""));
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        zeros(&mut out, -n);
        out.push_str(digits);
    } else {
        out.push_str(digits.get(..1).unwrap_or(""));
        if k > 1 {
            out.push(b'.');
            out.push_str(digits.get(1..).unwrap_or(""));
        }
        let e = n - 1;
        out.push(b'e');
        out.push(if e < 0 { b'-' } else { b'+' });
        let mut buf = [0u8; 20];
        for &d in decimal(&mut buf, e.unsigned_abs()) {
            out.push(d);
        }
    }
    out
}

/// The JSON text of an `f32`: a number when finite, else a string
/// (`"Infinity"`, `"-Infinity"`, `"NaN"` for the quiet NaN 0x7fc00000,
/// `"0x…"` bits for every other NaN). The flag says whether it is a
/// number.
fn f32_json(x: f32) -> (bool, Short) {
    // A whole number below 2^24 in magnitude (a tokenizer's scores): every
    // whole number near it is an f32 too, so its shortest round-trip
    // digits are its own, and float_text lays them out as `N.0`.
    if x != 0.0 && x > -16_777_216.0 && x < 16_777_216.0 && x as i32 as f32 == x {
        return (true, whole_text(i64::from(x as i32)));
    }
    if x.is_finite() {
        let mut e = Short::new();
        let _ = write!(e, "{x:e}");
        (true, float_text(e.as_str()))
    } else if x.is_nan() {
        let bits = x.to_bits();
        if bits == 0x7fc0_0000 {
            (false, Short::from_str("NaN"))
        } else {
            let mut s = Short::new();
            let _ = write!(s, "0x{bits:08x}");
            (false, s)
        }
    } else if x > 0.0 {
        (false, Short::from_str("Infinity"))
    } else {
        (false, Short::from_str("-Infinity"))
    }
}

/// The JSON text of an `f64`, as [`f32_json`] (quiet NaN 0x7ff8000000000000).
fn f64_json(x: f64) -> (bool, Short) {
    // As f32_json, below 2^53.
    const WHOLE: f64 = 9_007_199_254_740_992.0;
    if x != 0.0 && x > -WHOLE && x < WHOLE && x as i64 as f64 == x {
        return (true, whole_text(x as i64));
    }
    if x.is_finite() {
        let mut e = Short::new();
        let _ = write!(e, "{x:e}");
        (true, float_text(e.as_str()))
    } else if x.is_nan() {
        let bits = x.to_bits();
        if bits == 0x7ff8_0000_0000_0000 {
            (false, Short::from_str("NaN"))
        } else {
            let mut s = Short::new();
            let _ = write!(s, "0x{bits:016x}");
            (false, s)
        }
    } else if x > 0.0 {
        (false, Short::from_str("Infinity"))
    } else {
        (false, Short::from_str("-Infinity"))
    }
}

/// Writes the JSON form of a `list<str>`, `list<i32>`, `list<u32>` or
/// `list<f32>` value (a tokenizer's tokens, merges, scores and token
/// types) straight from its bytes, without a value tree: the text
/// [`value_json`] writes for its decoded value. Writes nothing and says
/// `false` for any other type, or for bytes that are not exactly one
/// such value (the caller's decoder then says why).
pub(crate) fn scalar_list_json(type_text: &str, bytes: &[u8], w: &mut JsonWriter<'_>) -> bool {
    let width = match type_text {
        "list<str>" => 0,
        "list<i32>" | "list<u32>" | "list<f32>" => 4,
        _ => return false,
    };
    let Some((count, items)) = bytes.split_first_chunk::<4>() else {
        return false;
    };
    let count = u32::from_le_bytes(*count) as usize;
    if width == 4 {
        if items.len() / 4 != count || items.len() % 4 != 0 {
            return false;
        }
        w.begin_array();
        for item in items.chunks_exact(4) {
            let Some(&word) = item.first_chunk::<4>() else {
                break;
            };
            match type_text {
                "list<i32>" => w.literal(integer_text(i32::from_le_bytes(word).into()).as_str()),
                "list<u32>" => w.literal(integer_text(u32::from_le_bytes(word).into()).as_str()),
                _ => float(w, f32_json(f32::from_le_bytes(word))),
            }
        }
        w.end_array();
        return true;
    }
    // Strings: every one found and checked before any is written.
    let mut strs = Vec::with_capacity(count.min(items.len() / 4));
    let mut rest = items;
    for _ in 0..count {
        let Some((len, tail)) = rest.split_first_chunk::<4>() else {
            return false;
        };
        let len = u32::from_le_bytes(*len) as usize;
        let (Some(text), Some(tail)) = (tail.get(..len), tail.get(len..)) else {
            return false;
        };
        let Ok(text) = core::str::from_utf8(text) else {
            return false;
        };
        strs.push(text);
        rest = tail;
    }
    if !rest.is_empty() {
        return false;
    }
    w.begin_array();
    for text in strs {
        w.string(text);
    }
    w.end_array();
    true
}

/// `N.0`: what float_text gives a whole number of 21 digits or fewer.
fn whole_text(n: i64) -> Short {
    let mut text = Short::new();
    if n < 0 {
        text.push(b'-');
    }
    let mut buf = [0u8; 20];
    for &d in decimal(&mut buf, n.unsigned_abs()) {
        text.push(d);
    }
    text.push_str(".0");
    text
}

fn float(w: &mut JsonWriter<'_>, (number, text): (bool, Short)) {
    if number {
        w.literal(text.as_str())
    } else {
        w.string(text.as_str())
    }
}

fn integer_text(n: i128) -> Short {
    let mut text = Short::new();
    if n < 0 {
        text.push(b'-');
    }
    let magnitude = n.unsigned_abs();
    // Every Kiln integer fits 64 bits; a wider one is the value's fault.
    let mut buf = [0u8; 20];
    for &d in decimal(&mut buf, u64::try_from(magnitude).unwrap_or(u64::MAX)) {
        text.push(d);
    }
    text
}

// ---------------------------------------------------------------------------
// Values

fn is_64_bit(scalar: Scalar) -> bool {
    matches!(
        scalar,
        Scalar::I64 | Scalar::U64 | Scalar::Int | Scalar::Uint
    )
}

fn mismatch() -> Error {
    Error::refused(
        Refusal::WrongValue,
        "a value that does not have its type's shape",
    )
}

pub(crate) fn value_json(
    ty: TypeRef<'_, '_>,
    value: &Value<'_>,
    w: &mut JsonWriter<'_>,
    preview: Option<usize>,
) -> Result<()> {
    match (ty.kind(), &value.kind) {
        (NodeKind::Scalar(_), ValueKind::Bool(b)) => w.bool(*b),
        (NodeKind::Scalar(s), ValueKind::Integer(n)) if is_64_bit(s) => {
            w.string(integer_text(*n).as_str())
        }
        (NodeKind::Scalar(_), ValueKind::Integer(n)) => w.literal(integer_text(*n).as_str()),
        (NodeKind::Scalar(_), ValueKind::F32(x)) => float(w, f32_json(*x)),
        (NodeKind::Scalar(_), ValueKind::F64(x)) => float(w, f64_json(*x)),
        (NodeKind::Str, ValueKind::Str(s)) => w.string(s),
        (NodeKind::List, ValueKind::Bytes(b)) => w.hex(b),
        (NodeKind::List, ValueKind::List(items)) => {
            let element = ty.element().ok_or_else(mismatch)?;
            if element.is_zero_size() {
                count_form(w, items.len() as u64);
                return Ok(());
            }
            w.begin_array();
            for item in items {
                value_json(element, item, w, preview)?;
            }
            w.end_array();
        }
        (NodeKind::List, ValueKind::Repeat { count, element }) => {
            let element_ty = ty.element().ok_or_else(mismatch)?;
            if element_ty.is_zero_size() {
                count_form(w, u64::from(*count));
                return Ok(());
            }
            w.begin_array();
            for _ in 0..*count {
                value_json(element_ty, element, w, preview)?;
            }
            w.end_array();
        }
        (NodeKind::Opt, ValueKind::Opt(None)) => w.null(),
        (NodeKind::Opt, ValueKind::Opt(Some(inner))) => {
            let element = ty.element().ok_or_else(mismatch)?;
            if element.kind() == NodeKind::Opt {
                w.begin_object();
                w.key("some");
                value_json(element, inner, w, preview)?;
                w.end_object();
            } else {
                value_json(element, inner, w, preview)?;
            }
        }
        (NodeKind::Dict, ValueKind::Dict(pairs)) => {
            let element = ty.element().ok_or_else(mismatch)?;
            w.begin_object();
            for (key, item) in pairs {
                w.name(key);
                value_json(element, item, w, preview)?;
            }
            w.end_object();
        }
        (NodeKind::Struct, ValueKind::Struct(fields)) => {
            w.begin_object();
            for ((name, field_ty), (_, item)) in ty.fields().zip(fields) {
                w.name(name);
                value_json(field_ty, item, w, preview)?;
            }
            w.end_object();
        }
        (NodeKind::Tensors, ValueKind::Tensors(block)) => {
            let dir = Directory::parse_unindexed(block, Limits::uniform(u32::MAX))?;
            w.begin_array();
            for t in &dir {
                tensor_json(&t, w, preview);
            }
            w.end_array();
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

fn count_form(w: &mut JsonWriter<'_>, count: u64) {
    w.begin_object();
    w.key("count");
    w.uint(count);
    w.end_object();
}

/// A tensor of a `tensors` value: every descriptor field that is not
/// derived (`spec/json.md`, section 5), then its payload (or, previewed,
/// its length and first elements).
fn tensor_json(t: &TensorView<'_>, w: &mut JsonWriter<'_>, preview: Option<usize>) {
    w.begin_object();
    w.key("name");
    w.opt_string(t.name());
    w.key("dtype");
    match t.dtype() {
        DtypeCode::Closed(d) => w.string(d.name()),
        DtypeCode::Opaque(code) => w.uint(code.into()),
    }
    w.key("shape");
    w.begin_array();
    for d in t.shape() {
        w.uint(d);
    }
    w.end_array();
    w.key("layout");
    w.opt_string(t.layout());
    w.key("block_size");
    w.uint(t.block_size().into());
    w.key("quant");
    let link = |w: &mut JsonWriter<'_>, axis: u16, group_size: u32, scales: usize| {
        w.key("axis");
        w.uint(axis.into());
        w.key("group_size");
        w.uint(group_size.into());
        w.key("scales");
        w.uint(scales as u64);
    };
    match t.quant() {
        Quant::None => w.null(),
        Quant::Scales {
            axis,
            group_size,
            scales,
        } => {
            w.begin_object();
            link(w, axis, group_size, scales.index());
            w.end_object();
        }
        Quant::ScalesOuter {
            axis,
            group_size,
            scales,
            outer,
        } => {
            w.begin_object();
            link(w, axis, group_size, scales.index());
            w.key("outer");
            w.uint(outer.index() as u64);
            w.end_object();
        }
    }
    match preview {
        None => {
            w.key("hex");
            w.hex(t.bytes());
        }
        Some(n) => {
            w.key("bytes");
            w.uint(t.byte_length());
            w.key("preview");
            preview_json(t, n, w);
        }
    }
    w.end_object();
}

/// The first `n` elements for reading: integers exact, floats widened to
/// `f32` by the core's display conversions, an opaque payload's first `n`
/// bytes as hex.
fn preview_json(t: &TensorView<'_>, n: usize, w: &mut JsonWriter<'_>) {
    let bytes = t.bytes();
    let Some(dtype) = t.closed_dtype() else {
        w.hex(bytes.get(..bytes.len().min(n)).unwrap_or(&[]));
        return;
    };
    let count = usize::try_from(t.element_count())
        .unwrap_or(usize::MAX)
        .min(n);
    // A whole-byte integer, exact: its little-endian bytes, sign-extended
    // when the dtype is signed.
    let int = |width: usize, i: usize| -> Option<Short> {
        let chunk = bytes.get(i.checked_mul(width)?..i.checked_add(1)?.checked_mul(width)?)?;
        let mut buf = [0u8; 8];
        buf.get_mut(..width)?.copy_from_slice(chunk);
        let unsigned = u64::from_le_bytes(buf);
        Some(if dtype.is_signed() {
            let shift = 64 - 8 * width as u32;
            integer_text((((unsigned << shift) as i64) >> shift).into())
        } else {
            integer_text(unsigned.into())
        })
    };
    w.begin_array();
    for i in 0..count {
        let item = match (dtype, dtype.element_size()) {
            (Dtype::Bool, _) => Some((
                true,
                Short::from_str(if bytes.get(i) == Some(&1) {
                    "true"
                } else {
                    "false"
                }),
            )),
            (Dtype::F64, _) => i
                .checked_mul(8)
                .and_then(|at| bytes.get(at..at + 8))
                .and_then(|b| b.try_into().ok())
                .map(|b| f64_json(f64::from_le_bytes(b))),
            (d, Some(width)) if !d.is_float() => int(width, i).map(|s| (true, s)),
            // Every other float-like and packed dtype: the core's display
            // conversion to f32.
            _ => {
                let mut one = [0f32];
                match t.widen_into(i as u64, &mut one) {
                    Ok(1) => one.first().map(|x| f32_json(*x)),
                    _ => None,
                }
            }
        };
        match item {
            Some(pair) => float(w, pair),
            None => break,
        }
    }
    w.end_array();
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::text::push_string;

    #[test]
    fn floats_are_laid_out_as_ecmascript_does() {
        let f = |x: f64| f64_json(x).1;
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(1e21), "1e+21");
        assert_eq!(f(1e20), "100000000000000000000.0");
        assert_eq!(f(0.000001), "0.000001");
        assert_eq!(f(1.5e-7), "1.5e-7");
        assert_eq!(f(5e-324), "5e-324");
        assert_eq!(f32_json(f32::MAX).1, "3.4028235e+38");
        let bits = f32_json(f32::from_bits(0x7fc0_0001));
        assert_eq!((bits.0, bits.1.as_str()), (false, "0x7fc00001"));
        let nan = f64_json(f64::NAN);
        assert_eq!((nan.0, nan.1.as_str()), (false, "NaN"));
        // The longest layouts fit.
        assert_eq!(f(-1.2345678901234567e20), "-123456789012345670000.0");
        assert_eq!(f(-1.2345678901234566e-7), "-1.2345678901234566e-7");
        assert_eq!(f(-1.2345678901234567e-6), "-0.0000012345678901234567");
        assert_eq!(f(f64::MIN), "-1.7976931348623157e+308");
    }

    #[test]
    fn whole_floats_are_their_shortest_digits() {
        // The whole-number path gives what the digits of `{:e}` give.
        let slow32 = |x: f32| float_text(&std::format!("{x:e}"));
        let slow64 = |x: f64| float_text(&std::format!("{x:e}"));
        let mut n: i64 = 1;
        while n < 1 << 24 {
            for x in [n, n + 1, n - 1, (1 << 24) - n] {
                let f = x as f32;
                assert_eq!(f32_json(f).1.as_str(), slow32(f).as_str(), "{x}");
                assert_eq!(f32_json(-f).1.as_str(), slow32(-f).as_str(), "-{x}");
            }
            n = n * 3 + 1;
        }
        let mut n: i64 = 1;
        while n < 1 << 53 {
            for x in [n, n + 1, n - 1, (1 << 53) - n] {
                let f = x as f64;
                assert_eq!(f64_json(f).1.as_str(), slow64(f).as_str(), "{x}");
                assert_eq!(f64_json(-f).1.as_str(), slow64(-f).as_str(), "-{x}");
            }
            n = n * 3 + 1;
        }
        for x in [16_777_216.0f32, 16_777_218.0, 1e20, -0.0, 0.0, 0.5, 1e-7] {
            assert_eq!(f32_json(x).1.as_str(), slow32(x).as_str(), "{x}");
        }
        for x in [9_007_199_254_740_992.0f64, 1e21, 1e300, -0.0, 0.0, 0.5] {
            assert_eq!(f64_json(x).1.as_str(), slow64(x).as_str(), "{x}");
        }
    }

    #[test]
    fn scalar_lists_from_bytes_are_their_values_json() {
        use crate::inspect::Meta;
        use crate::value::encode_value;
        let list = |ty: &str, items: Vec<ValueKind<'static>>| {
            let items = items
                .into_iter()
                .map(|kind| Value { span: 0..0, kind })
                .collect();
            let v = Value {
                span: 0..0,
                kind: ValueKind::List(items),
            };
            let bytes = encode_value(ty, &v, crate::limits::Options::BARE).unwrap();
            Meta {
                key: "k".into(),
                type_text: ty.into(),
                bytes,
            }
        };
        let fast = |m: &Meta| {
            let mut out = String::new();
            let mut w = JsonWriter::new(&mut out, false);
            let done = scalar_list_json(&m.type_text, &m.bytes, &mut w);
            w.done().unwrap();
            (done, out)
        };
        let s = |t: &'static str| ValueKind::Str(t.into());
        let f = |x: f32| ValueKind::F32(x);
        let n = |x: i128| ValueKind::Integer(x);
        let metas = [
            list(
                "list<str>",
                vec![s("a"), s(""), s("\u{2581}x\"\\\n\u{1}"), s("\u{9f}")],
            ),
            list("list<str>", vec![]),
            list(
                "list<i32>",
                vec![n(0), n(-1), n(i32::MIN.into()), n(i32::MAX.into())],
            ),
            list("list<u32>", vec![n(0), n(u32::MAX.into())]),
            list(
                "list<f32>",
                vec![
                    f(0.0),
                    f(-0.0),
                    f(-31743.0),
                    f(0.1),
                    f(1e-7),
                    f(f32::MAX),
                    f(f32::INFINITY),
                    f(f32::NAN),
                    f(f32::from_bits(0x7fc0_0001)),
                ],
            ),
            list("list<f32>", vec![]),
        ];
        for m in &metas {
            assert_eq!(fast(m), (true, m.json().unwrap()), "{}", m.type_text);
        }
        // Bytes that are not one such value: nothing written.
        let [strs, _, ints, ..] = &metas;
        let mut bad = strs.clone();
        bad.bytes.push(0);
        let mut short = ints.clone();
        short.bytes.pop();
        let mut utf8 = strs.clone();
        *utf8.bytes.last_mut().unwrap() = 0xff;
        let other = list("list<i16>", vec![n(1)]);
        for m in [&bad, &short, &utf8, &other] {
            assert_eq!(fast(m), (false, String::new()), "{}", m.type_text);
        }
    }

    #[test]
    fn strings_escape_quotes_backslashes_and_controls_only() {
        let mut s = String::new();
        push_string(&mut s, "a\"b\\\n\u{1}é\u{9f}");
        assert_eq!(s, "\"a\\\"b\\\\\\n\\u0001é\u{9f}\"");
    }

    #[test]
    fn pretty_layout_is_pythons() {
        let mut out = String::new();
        let mut w = JsonWriter::new(&mut out, true);
        w.begin_object();
        w.name("a");
        w.begin_array();
        w.uint(1);
        w.uint(u64::MAX);
        w.end_array();
        w.name("b");
        w.begin_object();
        w.end_object();
        w.end_object();
        w.done().unwrap();
        assert_eq!(
            out,
            "{\n  \"a\": [\n    1,\n    \"18446744073709551615\"\n  ],\n  \"b\": {}\n}"
        );
    }
}
