//! JSON text, read and written the way the Kiln JSON form needs it
//! (`spec/json.md`).
//!
//! Reading keeps what a plain JSON parser loses: the exact text of every
//! number (so a 64-bit integer or an `f32` is converted from its digits,
//! never through an `f64`), object members in document order with
//! repeated names kept (so a repeated name is an error, not a silently
//! dropped value), and the byte offset of every value (for error
//! messages). serde_json checks the syntax; each container is split into
//! its members' raw text ([`RawValue`]) one level at a time, as the caller
//! descends.
//!
//! Writing streams JSON with Python's `json.dumps(indent=2,
//! ensure_ascii=False)` layout (or compact), so that the reference's text
//! and ours can be compared byte for byte.
//!
//! This file depends only on std, serde and serde_json: the build script
//! compiles it too (for `kiln gen`'s test fixtures).

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// A JSON input that is not what was expected: where, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset in the document.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

impl JsonError {
    pub fn new(offset: usize, message: impl Into<String>) -> JsonError {
        JsonError {
            offset,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.message)
    }
}

/// Byte offset of serde_json's (1-based) line and column in `doc`.
fn line_column_offset(doc: &str, line: usize, column: usize) -> usize {
    let start: usize = doc
        .split('\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    (start + column.saturating_sub(1)).min(doc.len())
}

/// One JSON value of a document: its raw text and where it is.
#[derive(Clone, Copy, Debug)]
pub struct Raw<'a> {
    doc: &'a str,
    raw: &'a RawValue,
}

/// One level of a JSON value.
#[derive(Debug)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    /// The number's exact text, as JSON allows it.
    Number(&'a str),
    String(String),
    Array(Vec<Raw<'a>>),
    /// Members in document order; a repeated name appears twice.
    Object(Vec<(String, Raw<'a>)>),
}

/// Object members in order, repeated names kept.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    members.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'a> Raw<'a> {
    /// Checks the whole document's syntax and returns its one value.
    pub fn document(doc: &'a str) -> Result<Raw<'a>, JsonError> {
        let raw: &RawValue = serde_json::from_str(doc).map_err(|e| {
            let message = e.to_string();
            // serde_json appends " at line L column C"; we say the byte.
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(m, _)| m)
                .to_string();
            JsonError::new(
                line_column_offset(doc, e.line(), e.column()),
                format!("not JSON: {message}"),
            )
        })?;
        Ok(Raw { doc, raw })
    }

    /// Byte offset of the value in the document.
    pub fn offset(&self) -> usize {
        (self.raw.get().as_ptr() as usize).saturating_sub(self.doc.as_ptr() as usize)
    }

    /// An error at this value.
    pub fn error(&self, message: impl Into<String>) -> JsonError {
        JsonError::new(self.offset(), message)
    }

    fn inner<T: Deserialize<'a>>(&self) -> Result<T, JsonError> {
        // The document's syntax was checked whole; this only splits it.
        serde_json::from_str(self.raw.get()).map_err(|e| self.error(format!("not JSON: {e}")))
    }

    /// A string without escapes, borrowed as it is in the document (the
    /// fast way to a long hex payload); `None` for anything else.
    pub fn plain_str(&self) -> Option<&'a str> {
        let text = self.raw.get();
        let inner = text.strip_prefix('"')?.strip_suffix('"')?;
        (!inner.contains('\\')).then_some(inner)
    }

    /// This value, one level deep.
    pub fn node(&self) -> Result<Node<'a>, JsonError> {
        let text = self.raw.get();
        let wrap = |raw: &'a RawValue| Raw { doc: self.doc, raw };
        Ok(match text.as_bytes().first() {
            Some(b'n') => Node::Null,
            Some(b't') => Node::Bool(true),
            Some(b'f') => Node::Bool(false),
            Some(b'"') => Node::String(self.inner()?),
            Some(b'[') => Node::Array(
                self.inner::<Vec<&'a RawValue>>()?
                    .into_iter()
                    .map(wrap)
                    .collect(),
            ),
            Some(b'{') => Node::Object(
                self.inner::<Members<'a>>()?
                    .0
                    .into_iter()
                    .map(|(k, v)| (k, wrap(v)))
                    .collect(),
            ),
            _ => Node::Number(text),
        })
    }

    /// What kind of JSON value this is, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self.raw.get().as_bytes().first() {
            Some(b'n') => "null",
            Some(b't' | b'f') => "a boolean",
            Some(b'"') => "a string",
            Some(b'[') => "an array",
            Some(b'{') => "an object",
            _ => "a number",
        }
    }
}

/// Members of an object, looked up by name, each used at most once; what
/// is left over or repeated is an error.
pub struct Object<'a> {
    at: Raw<'a>,
    members: Vec<(String, Raw<'a>)>,
}

impl<'a> Object<'a> {
    /// The object at `raw`, or an error when it is something else or
    /// repeats a name.
    pub fn new(raw: Raw<'a>, what: &str) -> Result<Object<'a>, JsonError> {
        let Node::Object(members) = raw.node()? else {
            return Err(raw.error(format!("{what} is an object, not {}", raw.kind_name())));
        };
        let mut names: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            let name = w[0].to_string();
            let at = members
                .iter()
                .filter(|(k, _)| *k == name)
                .nth(1)
                .map_or(raw, |(_, v)| *v);
            return Err(at.error(format!("{what} has the member {name:?} twice")));
        }
        Ok(Object { at: raw, members })
    }

    /// Takes member `name`, if present.
    pub fn take(&mut self, name: &str) -> Option<Raw<'a>> {
        let i = self.members.iter().position(|(k, _)| k == name)?;
        Some(self.members.remove(i).1)
    }

    /// Takes member `name`, which must be present.
    pub fn need(&mut self, name: &str, what: &str) -> Result<Raw<'a>, JsonError> {
        let at = self.at;
        self.take(name)
            .ok_or_else(|| at.error(format!("{what} has no member {name:?}")))
    }

    /// Fails when members are left over.
    pub fn finish(self, what: &str) -> Result<(), JsonError> {
        match self.members.first() {
            None => Ok(()),
            Some((name, raw)) => Err(raw.error(format!("{what} has an unknown member {name:?}"))),
        }
    }

    /// The members left, in document order.
    pub fn into_members(self) -> Vec<(String, Raw<'a>)> {
        self.members
    }
}

// ---------------------------------------------------------------------------
// Writing

/// A streaming JSON writer: pretty (two-space indent, `": "` after names)
/// or compact, strings escaped as Python's `json.dumps(ensure_ascii=False)`
/// escapes them.
pub struct JsonOut<W: Write> {
    out: W,
    pretty: bool,
    /// Per open container: whether it has a member yet.
    open: Vec<bool>,
    after_name: bool,
}

impl<W: Write> JsonOut<W> {
    pub fn new(out: W, pretty: bool) -> JsonOut<W> {
        JsonOut {
            out,
            pretty,
            open: Vec::new(),
            after_name: false,
        }
    }

    fn newline(&mut self) -> io::Result<()> {
        if self.pretty {
            self.out.write_all(b"\n")?;
            for _ in 0..self.open.len() {
                self.out.write_all(b"  ")?;
            }
        }
        Ok(())
    }

    /// What comes before a value: a comma and a new line, unless the value
    /// follows a member name.
    fn before_value(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.after_name) {
            return Ok(());
        }
        if let Some(has) = self.open.last_mut() {
            let comma = std::mem::replace(has, true);
            if comma {
                self.out.write_all(b",")?;
            }
            self.newline()?;
        }
        Ok(())
    }

    pub fn begin_object(&mut self) -> io::Result<()> {
        self.before_value()?;
        self.out.write_all(b"{")?;
        self.open.push(false);
        Ok(())
    }

    pub fn begin_array(&mut self) -> io::Result<()> {
        self.before_value()?;
        self.out.write_all(b"[")?;
        self.open.push(false);
        Ok(())
    }

    fn end(&mut self, close: &[u8]) -> io::Result<()> {
        if self.open.pop().unwrap_or(false) {
            self.newline()?;
        }
        self.out.write_all(close)
    }

    pub fn end_object(&mut self) -> io::Result<()> {
        self.end(b"}")
    }

    pub fn end_array(&mut self) -> io::Result<()> {
        self.end(b"]")
    }

    /// A member name; its value comes next.
    pub fn name(&mut self, name: &str) -> io::Result<()> {
        self.before_value()?;
        write_string(&mut self.out, name)?;
        self.out.write_all(if self.pretty { b": " } else { b":" })?;
        self.after_name = true;
        Ok(())
    }

    /// A number, `true`, `false` or `null`, as text.
    pub fn literal(&mut self, text: &str) -> io::Result<()> {
        self.before_value()?;
        self.out.write_all(text.as_bytes())
    }

    pub fn string(&mut self, s: &str) -> io::Result<()> {
        self.before_value()?;
        write_string(&mut self.out, s)
    }

    /// A string of lowercase hex digits, two per byte, written in pieces.
    pub fn hex(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.before_value()?;
        self.out.write_all(b"\"")?;
        let mut buf = [0u8; 8192];
        for chunk in bytes.chunks(buf.len() / 2) {
            for (i, b) in chunk.iter().enumerate() {
                buf[2 * i] = HEX[usize::from(b >> 4)];
                buf[2 * i + 1] = HEX[usize::from(b & 15)];
            }
            self.out.write_all(&buf[..2 * chunk.len()])?;
        }
        self.out.write_all(b"\"")
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn write_string<W: Write>(out: &mut W, s: &str) -> io::Result<()> {
    out.write_all(b"\"")?;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let escaped: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            c if (c as u32) < 0x20 => None,
            _ => continue,
        };
        out.write_all(&s.as_bytes()[start..i])?;
        match escaped {
            Some(e) => out.write_all(e.as_bytes())?,
            None => write!(out, "\\u{:04x}", c as u32)?,
        }
        start = i + c.len_utf8();
    }
    out.write_all(&s.as_bytes()[start..])?;
    out.write_all(b"\"")
}

/// A string as JSON text.
pub fn quote(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    // Writing into a Vec cannot fail.
    let _ = write_string(&mut out, s);
    String::from_utf8(out).unwrap_or_default()
}

// ---------------------------------------------------------------------------
// Numbers

/// Decimal text of a finite float from its shortest round-trip digits
/// (`{:e}` of Rust's float formatting), laid out as ECMAScript's
/// `Number.prototype.toString` lays them out, with `.0` added when the text
/// would otherwise look like an integer: `1.0`, `-0.0`, `0.1`, `1.5e-7`,
/// `1e+21`, `3.4028235e+38`.
pub fn float_text(exponential: &str) -> String {
    let (sign, rest) = match exponential.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", exponential),
    };
    let (mantissa, exp) = rest.split_once('e').unwrap_or((rest, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    if digits == "0" {
        return format!("{sign}0.0");
    }
    let k = digits.len() as i64;
    let n = exp + 1; // value = 0.DIGITS x 10^n
    let mut out = String::from(sign);
    if k <= n && n <= 21 {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
        out.push_str(".0");
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    out
}

/// The JSON text of an `f32`: a number when finite, else a string
/// (`"Infinity"`, `"-Infinity"`, `"NaN"` for the quiet NaN 0x7fc00000,
/// `"0x…"` bits for every other NaN).
pub fn f32_json(x: f32) -> (bool, String) {
    if x.is_finite() {
        (true, float_text(&format!("{x:e}")))
    } else if x.is_nan() {
        let bits = x.to_bits();
        if bits == 0x7fc0_0000 {
            (false, "NaN".into())
        } else {
            (false, format!("0x{bits:08x}"))
        }
    } else if x > 0.0 {
        (false, "Infinity".into())
    } else {
        (false, "-Infinity".into())
    }
}

/// The JSON text of an `f64`, as [`f32_json`] (quiet NaN 0x7ff8000000000000).
pub fn f64_json(x: f64) -> (bool, String) {
    if x.is_finite() {
        (true, float_text(&format!("{x:e}")))
    } else if x.is_nan() {
        let bits = x.to_bits();
        if bits == 0x7ff8_0000_0000_0000 {
            (false, "NaN".into())
        } else {
            (false, format!("0x{bits:016x}"))
        }
    } else if x > 0.0 {
        (false, "Infinity".into())
    } else {
        (false, "-Infinity".into())
    }
}

/// Largest integer magnitude a JSON number may have here: every integer up
/// to it is exactly one IEEE double, so no JSON parser rounds it.
pub const MAX_SAFE: i128 = (1 << 53) - 1;

/// An integer from a JSON number (at most [`MAX_SAFE`] in magnitude) or a
/// decimal string.
pub fn integer(raw: Raw<'_>, what: &str) -> Result<i128, JsonError> {
    match raw.node()? {
        Node::Number(text) => {
            let n: i128 = text
                .parse()
                .map_err(|_| raw.error(format!("{what} is an integer, not the number {text}")))?;
            if n.abs() > MAX_SAFE {
                return Err(raw.error(format!(
                    "{what}: the JSON number {text} is beyond 2^53-1, where JSON readers round; \
                     write it as a string, \"{text}\""
                )));
            }
            Ok(n)
        }
        Node::String(s) => {
            let digits = s.strip_prefix('-').unwrap_or(&s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(raw.error(format!(
                    "{what} is an integer, not the string {}",
                    quote(&s)
                )));
            }
            s.parse()
                .map_err(|_| raw.error(format!("{what}: {s} is far too large")))
        }
        _ => Err(raw.error(format!("{what} is an integer, not {}", raw.kind_name()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_as_ecmascript_writes_them() {
        let f = |x: f64| f64_json(x).1;
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(0.0), "0.0");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(-2.5), "-2.5");
        assert_eq!(f(1e21), "1e+21");
        assert_eq!(f(1e20), "100000000000000000000.0");
        assert_eq!(f(1.5e-7), "1.5e-7");
        assert_eq!(f(0.000001), "0.000001");
        assert_eq!(f(123456.789), "123456.789");
        assert_eq!(f32_json(0.1f32).1, "0.1");
        assert_eq!(f32_json(f32::MAX).1, "3.4028235e+38");
        assert_eq!(
            f32_json(f32::from_bits(0x7fc0_0001)),
            (false, "0x7fc00001".into())
        );
        assert_eq!(f64_json(f64::NAN), (false, "NaN".into()));
        assert_eq!(f64_json(f64::NEG_INFINITY), (false, "-Infinity".into()));
    }

    #[test]
    fn members_keep_order_and_repeats() {
        let doc = r#" {"b": 1, "a": [1, 2.50, "x"], "b": null} "#;
        let raw = Raw::document(doc).unwrap();
        let Node::Object(members) = raw.node().unwrap() else {
            panic!()
        };
        let names: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["b", "a", "b"]);
        let Node::Array(items) = members[1].1.node().unwrap() else {
            panic!()
        };
        assert!(matches!(items[1].node().unwrap(), Node::Number("2.50")));
        assert_eq!(items[1].offset(), doc.find("2.50").unwrap());
        let err = Object::new(raw, "the value").err().unwrap();
        assert_eq!(err.offset, doc.rfind("null").unwrap());
    }

    #[test]
    fn syntax_errors_have_byte_offsets() {
        let err = Raw::document("{\n  \"a\": tru\n}").unwrap_err();
        assert!(err.offset >= 9 && err.offset <= 13, "{err}");
        assert!(err.message.starts_with("not JSON"));
    }

    #[test]
    fn writer_matches_python_layout() {
        let mut out = JsonOut::new(Vec::new(), true);
        out.begin_object().unwrap();
        out.name("a").unwrap();
        out.begin_array().unwrap();
        out.literal("1").unwrap();
        out.string("x\"\u{1}é").unwrap();
        out.end_array().unwrap();
        out.name("b").unwrap();
        out.begin_object().unwrap();
        out.end_object().unwrap();
        out.end_object().unwrap();
        let text = String::from_utf8(out.into_inner()).unwrap();
        assert_eq!(
            text,
            "{\n  \"a\": [\n    1,\n    \"x\\\"\\u0001é\"\n  ],\n  \"b\": {}\n}"
        );
    }
}
