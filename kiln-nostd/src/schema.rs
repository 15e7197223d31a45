//! Types: the static [`Schema`] tree every Rust type declares, and
//! [`TypeText`], canonical type text checked at run time. Both give the
//! canonical type text, the FNV-1a schema hash and the minimum wire size.

use core::fmt;

use crate::error::{Error, Refusal, Result};

/// FNV-1a 64 offset basis.
pub const FNV_OFFSET: u64 = 14_695_981_039_346_656_037;
/// FNV-1a 64 prime.
pub const FNV_PRIME: u64 = 1_099_511_628_211;

/// The minimum wire size of one tensor directory (its header).
pub const TENSORS_MIN: u64 = 64;

/// A fixed-width Frozen scalar.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Scalar {
    /// `bool`: one byte, 0 or 1.
    Bool,
    /// `i8`.
    I8,
    /// `u8`.
    U8,
    /// `i16`.
    I16,
    /// `u16`.
    U16,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `i64`.
    I64,
    /// `u64`.
    U64,
    /// `int`: the bytes of an i64 under its own name.
    Int,
    /// `uint`: the bytes of a u64 under its own name.
    Uint,
    /// `f32`, bit-exact.
    F32,
    /// `f64`, bit-exact.
    F64,
}

impl Scalar {
    /// Every scalar.
    pub const ALL: [Scalar; 13] = [
        Scalar::Bool,
        Scalar::I8,
        Scalar::U8,
        Scalar::I16,
        Scalar::U16,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::Int,
        Scalar::Uint,
        Scalar::F32,
        Scalar::F64,
    ];

    /// The scalar's name in type text.
    pub const fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "i8",
            Scalar::U8 => "u8",
            Scalar::I16 => "i16",
            Scalar::U16 => "u16",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::Int => "int",
            Scalar::Uint => "uint",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// Bytes on the wire.
    pub const fn width(self) -> u64 {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::Int | Scalar::Uint | Scalar::F64 => 8,
        }
    }

    fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// A Kiln type known at compile time. Rust types declare theirs as
/// [`crate::Frozen::SCHEMA`]; a derive macro writes the same tree.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Schema {
    /// A fixed-width scalar.
    Scalar(Scalar),
    /// `str`.
    Str,
    /// `tensors`: one directory block.
    Tensors,
    /// `list<T>`; `list<u8>` is the bytes type.
    List(&'static Schema),
    /// `opt<T>`.
    Opt(&'static Schema),
    /// `dict<str,V>`.
    Dict(&'static Schema),
    /// `struct{...}`, fields in declaration order.
    Struct(&'static [Field]),
}

/// One field of a struct schema.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Field name: `[A-Za-z_][A-Za-z0-9_]*`.
    pub name: &'static str,
    /// Field type.
    pub ty: &'static Schema,
}

const fn fnv_token(mut hash: u64, token: &[u8]) -> u64 {
    let mut rest = token;
    while let [byte, tail @ ..] = rest {
        hash ^= *byte as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        rest = tail;
    }
    // Every token is followed by the FNV step for one 0x00 byte.
    hash.wrapping_mul(FNV_PRIME)
}

const fn fnv_schema(hash: u64, schema: &Schema) -> u64 {
    match schema {
        Schema::Scalar(s) => fnv_token(hash, s.name().as_bytes()),
        Schema::Str => fnv_token(hash, b"str"),
        Schema::Tensors => fnv_token(hash, b"tensors"),
        Schema::List(t) => fnv_token(fnv_schema(fnv_token(hash, b"list<"), t), b">"),
        Schema::Opt(t) => fnv_token(fnv_schema(fnv_token(hash, b"opt<"), t), b">"),
        Schema::Dict(v) => {
            let h = fnv_token(fnv_token(fnv_token(hash, b"dict<"), b"str"), b",");
            fnv_token(fnv_schema(h, v), b">")
        }
        Schema::Struct(fields) => {
            let mut h = fnv_token(hash, b"struct{");
            let mut rest = *fields;
            while let [field, tail @ ..] = rest {
                h = fnv_token(h, field.name.as_bytes());
                h = fnv_token(h, b":");
                h = fnv_schema(h, field.ty);
                h = fnv_token(h, b",");
                rest = tail;
            }
            fnv_token(h, b"}")
        }
    }
}

impl Schema {
    /// The FNV-1a 64 schema hash a frame carries.
    pub const fn hash(&self) -> u64 {
        fnv_schema(FNV_OFFSET, self)
    }

    /// The fewest bytes one value of this type can take (saturating; a
    /// struct large enough to saturate cannot fit in any buffer anyway).
    pub const fn min_size(&self) -> u64 {
        match self {
            Schema::Scalar(s) => s.width(),
            Schema::Str | Schema::List(_) | Schema::Dict(_) => 4,
            Schema::Opt(_) => 1,
            Schema::Tensors => TENSORS_MIN,
            Schema::Struct(fields) => {
                let mut total: u64 = 0;
                let mut rest = *fields;
                while let [field, tail @ ..] = rest {
                    total = total.saturating_add(field.ty.min_size());
                    rest = tail;
                }
                total
            }
        }
    }

    /// Whether this is the bytes type `list<u8>`, whose length uses the
    /// byte cap.
    pub const fn is_bytes(&self) -> bool {
        matches!(self, Schema::List(Schema::Scalar(Scalar::U8)))
    }
}

impl fmt::Display for Schema {
    /// Canonical type text, e.g. `struct{id:i64,batch:tensors,}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schema::Scalar(s) => f.write_str(s.name()),
            Schema::Str => f.write_str("str"),
            Schema::Tensors => f.write_str("tensors"),
            Schema::List(t) => write!(f, "list<{t}>"),
            Schema::Opt(t) => write!(f, "opt<{t}>"),
            Schema::Dict(v) => write!(f, "dict<str,{v}>"),
            Schema::Struct(fields) => {
                f.write_str("struct{")?;
                for field in fields.iter() {
                    write!(f, "{}:{},", field.name, field.ty)?;
                }
                f.write_str("}")
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Type text known only at run time

/// How deeply type text may nest. Deeper than the 64 containers a value
/// may enter, so that type text which is only deep in branches a value
/// never takes is still accepted.
pub const MAX_TYPE_NESTING: usize = 256;

/// Canonical type text, checked once, then walked without allocation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TypeText<'t> {
    text: &'t str,
}

/// The head of one type in [`TypeText`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Node<'t> {
    /// A scalar.
    Scalar(Scalar),
    /// `str`.
    Str,
    /// `tensors`.
    Tensors,
    /// `list<T>`.
    List(TypeText<'t>),
    /// `opt<T>`.
    Opt(TypeText<'t>),
    /// `dict<str,V>`.
    Dict(TypeText<'t>),
    /// `struct{...}`.
    Struct(Fields<'t>),
}

/// The fields of a struct in [`TypeText`], in order.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Fields<'t> {
    rest: &'t str,
}

fn bad_text(fault: &'static str) -> Error {
    Error::refused(Refusal::BadTypeText, fault)
}

impl<'t> TypeText<'t> {
    /// Checks that `text` is exactly one canonical type.
    pub fn parse(text: &'t str) -> Result<TypeText<'t>> {
        let end = scan_type(text, 0)?;
        if end != text.len() {
            return Err(bad_text("text continues after the type"));
        }
        let parsed = TypeText { text };
        parsed.check_field_names()?;
        Ok(parsed)
    }

    /// Field names are unique within each struct.
    fn check_field_names(&self) -> Result<()> {
        match self.node()? {
            Node::List(t) | Node::Opt(t) | Node::Dict(t) => t.check_field_names(),
            Node::Struct(fields) => {
                for (i, field) in fields.enumerate() {
                    let (name, ty) = field?;
                    if fields.take(i).any(|f| f.is_ok_and(|(n, _)| n == name)) {
                        return Err(bad_text("repeated field name"));
                    }
                    ty.check_field_names()?;
                }
                Ok(())
            }
            Node::Scalar(_) | Node::Str | Node::Tensors => Ok(()),
        }
    }

    /// The text itself.
    pub const fn as_str(&self) -> &'t str {
        self.text
    }

    /// The head of this type.
    pub fn node(&self) -> Result<Node<'t>> {
        let t = self.text;
        if let Some(inner) = strip(t, "list<", ">") {
            return Ok(Node::List(TypeText { text: inner }));
        }
        if let Some(inner) = strip(t, "opt<", ">") {
            return Ok(Node::Opt(TypeText { text: inner }));
        }
        if let Some(inner) = strip(t, "dict<str,", ">") {
            return Ok(Node::Dict(TypeText { text: inner }));
        }
        if let Some(rest) = strip(t, "struct{", "}") {
            return Ok(Node::Struct(Fields { rest }));
        }
        match t {
            "str" => Ok(Node::Str),
            "tensors" => Ok(Node::Tensors),
            _ => Scalar::from_name(t)
                .map(Node::Scalar)
                .ok_or(bad_text("unknown type name")),
        }
    }

    /// The schema hash of this type.
    pub fn hash(&self) -> Result<u64> {
        self.fold_hash(FNV_OFFSET)
    }

    fn fold_hash(&self, h: u64) -> Result<u64> {
        Ok(match self.node()? {
            Node::Scalar(s) => fnv_token(h, s.name().as_bytes()),
            Node::Str => fnv_token(h, b"str"),
            Node::Tensors => fnv_token(h, b"tensors"),
            Node::List(t) => fnv_token(t.fold_hash(fnv_token(h, b"list<"))?, b">"),
            Node::Opt(t) => fnv_token(t.fold_hash(fnv_token(h, b"opt<"))?, b">"),
            Node::Dict(v) => {
                let h = fnv_token(fnv_token(fnv_token(h, b"dict<"), b"str"), b",");
                fnv_token(v.fold_hash(h)?, b">")
            }
            Node::Struct(fields) => {
                let mut h = fnv_token(h, b"struct{");
                for field in fields {
                    let (name, ty) = field?;
                    h = fnv_token(fnv_token(h, name.as_bytes()), b":");
                    h = fnv_token(ty.fold_hash(h)?, b",");
                }
                fnv_token(h, b"}")
            }
        })
    }

    /// The minimum wire size of one value of this type (saturating).
    pub fn min_size(&self) -> Result<u64> {
        Ok(match self.node()? {
            Node::Scalar(s) => s.width(),
            Node::Str | Node::List(_) | Node::Dict(_) => 4,
            Node::Opt(_) => 1,
            Node::Tensors => TENSORS_MIN,
            Node::Struct(fields) => {
                let mut total: u64 = 0;
                for field in fields {
                    total = total.saturating_add(field?.1.min_size()?);
                }
                total
            }
        })
    }

    /// Whether this is `u8` (so a list of it is the bytes type).
    pub fn is_u8(&self) -> bool {
        self.text == "u8"
    }
}

impl<'t> Iterator for Fields<'t> {
    type Item = Result<(&'t str, TypeText<'t>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let step = || -> Result<(&'t str, TypeText<'t>, &'t str)> {
            let colon = self
                .rest
                .find(':')
                .ok_or(bad_text("field without a type"))?;
            let name = self.rest.get(..colon).ok_or(bad_text("field name"))?;
            let ty_start = colon.saturating_add(1);
            let ty_end = scan_type(self.rest, ty_start)?;
            let ty = self
                .rest
                .get(ty_start..ty_end)
                .ok_or(bad_text("field type"))?;
            let rest = self
                .rest
                .get(ty_end..)
                .and_then(|r| r.strip_prefix(','))
                .ok_or(bad_text("field not followed by a comma"))?;
            Ok((name, TypeText { text: ty }, rest))
        };
        Some(step().map(|(name, ty, rest)| {
            self.rest = rest;
            (name, ty)
        }))
    }
}

fn strip<'t>(text: &'t str, open: &str, close: &str) -> Option<&'t str> {
    text.strip_prefix(open)?.strip_suffix(close)
}

/// Scans one type starting at byte `at` of `text`; returns where it ends.
/// Iterative, with an explicit nesting count, so hostile type text cannot
/// exhaust the stack.
fn scan_type(text: &str, at: usize) -> Result<usize> {
    // What closes each open level: b'>' for list/opt/dict, b'}' for struct.
    let mut closers = [0u8; MAX_TYPE_NESTING];
    let mut open = 0usize;
    let mut pos = at;
    let rest = |pos: usize| text.get(pos..).unwrap_or("");
    loop {
        // Expect one type here.
        let here = rest(pos);
        let opener = ["list<", "opt<", "dict<str,"]
            .into_iter()
            .find(|p| here.starts_with(p));
        if let Some(prefix) = opener {
            let slot = closers
                .get_mut(open)
                .ok_or(bad_text("type text nests too deeply"))?;
            *slot = b'>';
            open = open.saturating_add(1);
            pos = pos.saturating_add(prefix.len());
            continue;
        }
        if here.starts_with("struct{") {
            let slot = closers
                .get_mut(open)
                .ok_or(bad_text("type text nests too deeply"))?;
            *slot = b'}';
            open = open.saturating_add(1);
            pos = pos.saturating_add("struct{".len());
            // A struct may start with a field name, or close at once.
            if let Some(next) = after_field_name(text, pos)? {
                pos = next;
                continue;
            }
            pos = pos.saturating_add(1);
            open = open.saturating_sub(1);
        } else {
            let len = here
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric())
                .count();
            let word = here.get(..len).unwrap_or("");
            if !matches!(word, "str" | "tensors") && Scalar::from_name(word).is_none() {
                return Err(bad_text("unknown type name"));
            }
            pos = pos.saturating_add(len);
        }
        // Close levels until one expects another type.
        loop {
            let Some(top) = open.checked_sub(1) else {
                return Ok(pos);
            };
            let closer = closers.get(top).copied().unwrap_or(0);
            let next = text.as_bytes().get(pos).copied();
            if closer == b'>' {
                if next != Some(b'>') {
                    return Err(bad_text("expected '>'"));
                }
                pos = pos.saturating_add(1);
                open = top;
                continue;
            }
            // Inside a struct: a field type just ended; a comma must follow,
            // then either '}' or the next field name.
            if next != Some(b',') {
                return Err(bad_text("struct field not followed by a comma"));
            }
            pos = pos.saturating_add(1);
            match after_field_name(text, pos)? {
                Some(next_type) => {
                    pos = next_type;
                    break;
                }
                None => {
                    // after_field_name saw '}' at pos.
                    pos = pos.saturating_add(1);
                    open = top;
                }
            }
        }
    }
}

/// At a point in a struct where a field may start: `Some(pos of its type)`
/// after `name:`, or `None` when the struct closes here (`}` at `pos`).
fn after_field_name(text: &str, pos: usize) -> Result<Option<usize>> {
    let here = text.get(pos..).unwrap_or("");
    if here.starts_with('}') {
        return Ok(None);
    }
    let name_len = here
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let name = here.get(..name_len).unwrap_or("");
    let starts_well = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if !starts_well {
        return Err(bad_text("bad field name"));
    }
    if here.as_bytes().get(name_len) != Some(&b':') {
        return Err(bad_text("field name not followed by ':'"));
    }
    Ok(Some(pos.saturating_add(name_len).saturating_add(1)))
}
