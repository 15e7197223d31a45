//! JSON text, read the way the Kiln JSON form needs it
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
//! Writing is the core's (`kiln_nostd::json`): one writer for every tool.
//!
//! This file depends only on std, serde and serde_json: the build script
//! compiles it too (for `kiln gen`'s test fixtures).

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
// Numbers

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
                    serde_json::to_string(&*s).unwrap_or_default()
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
}
