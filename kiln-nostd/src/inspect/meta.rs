//! A Kiln model's metadata: the values of its record that are not
//! containers or directories, each keyed by its path.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::walk::walk_value;
use super::{Inspection, Meta, Path, Seg, MAX_METADATA};
use crate::directory::Directory;
use crate::error::{Error, Refusal, Result};
use crate::schema::{CompiledType, NodeKind, Scalar, TypeRef, TOOL_NODES};
use crate::value::{Value, ValueKind};

impl Inspection {
    /// Reads a Kiln model's metadata from its record image: one entry per
    /// value that is not a container or a directory, keyed by its path
    /// (`id`, `layers[2].name`, `tags["a"]`; a list of numbers is one
    /// entry), at most [`MAX_METADATA`] (then [`Inspection::omitted`]). A struct
    /// of three fields `key: str`, a `str` naming a Kiln type and `value:
    /// list<u8>` is one entry with that key and type, its value those
    /// bytes, wherever it is. The walk's directories must be the checked
    /// heads, at the same paths and places.
    pub fn read_metadata(&mut self) -> Result<()> {
        let Some(kiln) = &self.kiln else {
            return Ok(());
        };
        let ty: Box<CompiledType<'_, TOOL_NODES>> = Box::new(CompiledType::parse(&kiln.type_text)?);
        let options = crate::limits::Options {
            framing: if kiln.framed {
                crate::limits::Framing::Framed
            } else {
                crate::limits::Framing::Bare
            },
            limits: crate::limits::Limits::uniform(crate::limits::WIRE_MAX),
        };
        let walked = walk_value(&*ty, &self.record, options)?;
        self.check_image(&walked.directories)?;
        let mut rows = Rows {
            record: &self.record,
            entries: Vec::new(),
            omitted: 0,
        };
        rows.visit(ty.root(), &walked.value, &mut Path::root());
        let (entries, omitted) = (rows.entries, rows.omitted);
        self.metadata = entries;
        self.omitted = omitted;
        Ok(())
    }

    /// Whether the record image's directories are the checked heads: the
    /// same paths, each at the image offset its block's stand-in has (the
    /// image holds each block as the empty directory).
    fn check_image(&self, walked: &[(Path, crate::walk::Span)]) -> Result<()> {
        let stand_in = Directory::EMPTY.as_bytes().len() as u64;
        let mut left_out = 0u64;
        let same = walked.len() == self.directories.len()
            && walked
                .iter()
                .zip(&self.directories)
                .all(|((path, span), d)| {
                    let at = d.offset.saturating_sub(left_out);
                    left_out = left_out.saturating_add(d.length.saturating_sub(stand_in));
                    d.path.as_ref() == Some(path) && span.start as u64 == at
                });
        if same {
            Ok(())
        } else {
            Err(Error::refused(
                Refusal::WrongValue,
                "the record image's directories are not the checked heads",
            ))
        }
    }
}

struct Rows<'r> {
    record: &'r [u8],
    entries: Vec<Meta>,
    omitted: u64,
}

/// A typed pair: a struct of three fields, `key: str`, a `str` naming the
/// Kiln type of the value (`type`, `value_type`), and `value: list<u8>`.
fn typed_pair<'v>(
    ty: TypeRef<'_, '_>,
    value: &'v Value<'_>,
) -> Option<(&'v str, &'v str, &'v [u8])> {
    let mut fields = ty.fields();
    let shape_ok = matches!(fields.next(), Some(("key", k)) if k.kind() == NodeKind::Str)
        && matches!(fields.next(), Some((_, t)) if t.kind() == NodeKind::Str)
        && matches!(fields.next(), Some(("value", v)) if v.is_bytes())
        && fields.next().is_none();
    if !shape_ok {
        return None;
    }
    let ValueKind::Struct(fields) = &value.kind else {
        return None;
    };
    match fields.as_slice() {
        [(_, k), (_, t), (_, v)] => match (&k.kind, &t.kind, &v.kind) {
            (ValueKind::Str(k), ValueKind::Str(t), ValueKind::Bytes(v)) => Some((k, t, v)),
            _ => None,
        },
        _ => None,
    }
}

/// A list of these is one entry: numbers, not values one by one.
fn is_numbers(element: TypeRef<'_, '_>) -> bool {
    matches!(element.kind(), NodeKind::Scalar(s) if s != Scalar::Bool)
}

impl Rows<'_> {
    fn push(&mut self, meta: Meta) {
        if self.entries.len() < MAX_METADATA {
            self.entries.push(meta);
        } else {
            self.omitted = self.omitted.saturating_add(1);
        }
    }

    fn visit(&mut self, ty: TypeRef<'_, '_>, value: &Value<'_>, path: &mut Path) {
        if let Some((key, type_text, bytes)) = typed_pair(ty, value) {
            return self.push(Meta {
                key: key.into(),
                type_text: type_text.into(),
                bytes: bytes.to_vec(),
            });
        }
        let mut inside = |rows: &mut Self, seg: Seg, t: TypeRef<'_, '_>, v: &Value<'_>| {
            path.push(seg);
            rows.visit(t, v, path);
            path.pop();
        };
        match (&value.kind, ty.element()) {
            (ValueKind::List(items), Some(element))
                if !items.is_empty() && !is_numbers(element) =>
            {
                for (i, item) in items.iter().enumerate() {
                    let i = u32::try_from(i).unwrap_or(u32::MAX);
                    inside(self, Seg::Index(i), element, item);
                }
            }
            (ValueKind::Opt(Some(inner)), Some(element)) => self.visit(element, inner, path),
            (ValueKind::Dict(pairs), Some(element)) if !pairs.is_empty() => {
                for (key, item) in pairs {
                    inside(self, Seg::Key(key.to_string()), element, item);
                }
            }
            (ValueKind::Struct(fields), _) if !fields.is_empty() => {
                for ((_, field_ty), (name, item)) in ty.fields().zip(fields) {
                    inside(self, Seg::Field(name.to_string()), field_ty, item);
                }
            }
            (ValueKind::Tensors(_), _) => {}
            _ => {
                let bytes = self
                    .record
                    .get(value.span.clone())
                    .unwrap_or_default()
                    .to_vec();
                self.push(Meta {
                    key: path.text(),
                    type_text: ty.to_string(),
                    bytes,
                })
            }
        }
    }
}

impl Meta {
    /// The value as text for a person: a string as itself, anything else
    /// as its compact JSON form; `None` when the bytes are not a value of
    /// the entry's type.
    pub fn text(&self) -> Option<String> {
        let value = self.value().ok()?;
        match &value.kind {
            ValueKind::Str(s) => Some(s.to_string()),
            _ => self.json().ok(),
        }
    }
}
