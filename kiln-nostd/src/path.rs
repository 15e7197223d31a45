//! Paths inside a value (feature `inspect`): where a value sits in the
//! value it belongs to, with one text syntax for every tool.

use alloc::string::String;
use alloc::vec::Vec;

use crate::text::{push_decimal, push_string};

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
///
/// ```
/// use kiln_nostd::inspect::{Path, Seg};
/// let mut p = Path::root();
/// p.push(Seg::Field("layers".into()));
/// p.push(Seg::Index(2));
/// p.push(Seg::Key("a.b".into()));
/// assert_eq!(p.text(), r#"layers[2]["a.b"]"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Path {
    segs: Vec<Seg>,
}

impl Path {
    /// The whole value: `""`.
    #[doc(hidden)]
    pub const fn root() -> Path {
        Path { segs: Vec::new() }
    }

    /// Adds a step at the end.
    #[doc(hidden)]
    pub fn push(&mut self, seg: Seg) {
        self.segs.push(seg);
    }

    /// Removes the last step.
    #[doc(hidden)]
    pub fn pop(&mut self) -> Option<Seg> {
        self.segs.pop()
    }

    /// This path with one more step.
    #[doc(hidden)]
    pub fn child(&self, seg: Seg) -> Path {
        let mut path = self.clone();
        path.push(seg);
        path
    }

    /// The steps, outermost first.
    #[doc(hidden)]
    pub fn segments(&self) -> &[Seg] {
        &self.segs
    }

    /// Whether this is the whole value.
    #[doc(hidden)]
    pub fn is_root(&self) -> bool {
        self.segs.is_empty()
    }

    /// Appends the path's text to `out` (what `Display` prints, without
    /// `core::fmt`, which the browser's core module leaves out).
    #[doc(hidden)]
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
                    push_string(out, key);
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
}
