//! The JSON Schema subset of the wire text's "Dynamic values" section, read
//! into Kiln types, and a Rust module of `#[derive(Frozen)]` structs for
//! them (`kiln gen`, `kiln type`).
//!
//! | JSON Schema | Kiln | Rust |
//! |---|---|---|
//! | `{"type":"boolean"}` | `bool` | `bool` |
//! | `{"type":"integer"}` | `int` | `kiln_nostd::Int` |
//! | `"format"`: `int8` … `int64`, `uint8` … `uint64` | `i8` … `u64` | `i8` … `u64` |
//! | `{"type":"number"}`, `"format":"double"` | `f64` | `f64` |
//! | `"format":"float"` | `f32` | `f32` |
//! | `{"type":"string"}` | `str` | `String` |
//! | `"format":"binary"` | `list<u8>` | `Vec<u8>` |
//! | `{"type":"array","items":S}` | `list<T>` | `Vec<T>` |
//! | `{"type":"object","properties":{…}}` | `struct{…}`, fields in document order | a struct |
//! | a property not in `required` (when `required` is given) | `opt<T>` | `Option<T>` |
//! | `{"type":"object","additionalProperties":S}` | `dict<str,V>` | `BTreeMap<String, V>` (key byte order is the wire's) |
//! | `{"$ref":"#/$defs/Name"}` | the definition's type | the struct `Name` |
//!
//! Annotations (`title`, `description`, `$comment`, `examples`, `default`,
//! `deprecated`, `readOnly`, `writeOnly`, and `$schema`, `$id`, `$defs` at
//! the root) are allowed and do not change the type. Anything else is an
//! error naming its JSON pointer and byte offset.
//!
//! This file depends only on std and `jsontext`: the build script compiles
//! it too, to generate the test fixtures' modules.

use crate::jsontext::{JsonError, Node, Raw};

/// A Kiln type read from a schema.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Bool,
    /// A scalar integer or float by its Kiln name (`int`, `u8`, `f32`, …).
    Scalar(&'static str),
    Str,
    Bytes,
    List(Box<Ty>),
    Opt(Box<Ty>),
    Dict(Box<Ty>),
    /// Index into [`Schema::structs`].
    Struct(usize),
}

/// One struct: its Rust name, where it comes from, and its fields.
#[derive(Clone, Debug)]
pub struct StructDef {
    pub name: String,
    pub pointer: String,
    pub description: Option<String>,
    /// Kiln field name, type, description.
    pub fields: Vec<(String, Ty, Option<String>)>,
}

/// A schema document read into Kiln types.
#[derive(Clone, Debug)]
pub struct Schema {
    pub root: Ty,
    pub structs: Vec<StructDef>,
}

const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "$comment",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
];
const ROOT_ONLY: &[&str] = &["$schema", "$id", "$defs"];

const INTEGER_FORMATS: &[(&str, &str)] = &[
    ("int8", "i8"),
    ("int16", "i16"),
    ("int32", "i32"),
    ("int64", "i64"),
    ("uint8", "u8"),
    ("uint16", "u16"),
    ("uint32", "u32"),
    ("uint64", "u64"),
];

/// A JSON pointer fragment: `#`, `#/properties/a`, `#/$defs/Name`.
fn child(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// `Person`, `PersonAddress`: a Rust type name from words.
pub fn camel(words: &str) -> String {
    let mut out = String::new();
    for part in words.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    if out.is_empty() {
        out.push_str("Record");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    out
}

struct Reader<'a> {
    defs: Vec<(String, Raw<'a>)>,
    /// Definitions already read: name and type.
    done: Vec<(String, Ty)>,
    /// Definitions being read, to refuse a recursive `$ref`.
    active: Vec<String>,
    structs: Vec<StructDef>,
}

fn err(raw: Raw<'_>, pointer: &str, message: impl std::fmt::Display) -> JsonError {
    raw.error(format!("{pointer}: {message}"))
}

fn members<'a>(raw: Raw<'a>, pointer: &str) -> Result<Vec<(String, Raw<'a>)>, JsonError> {
    match raw.node()? {
        Node::Object(members) => {
            let mut names: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
            names.sort_unstable();
            if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
                return Err(err(
                    raw,
                    pointer,
                    format!("the keyword {:?} appears twice", w[0]),
                ));
            }
            Ok(members)
        }
        _ => Err(err(
            raw,
            pointer,
            format!("a schema here is an object, not {}", raw.kind_name()),
        )),
    }
}

fn string(raw: Raw<'_>, pointer: &str) -> Result<String, JsonError> {
    match raw.node()? {
        Node::String(s) => Ok(s),
        _ => Err(err(
            raw,
            pointer,
            format!("expected a string, found {}", raw.kind_name()),
        )),
    }
}

fn is_field_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl<'a> Reader<'a> {
    fn unique_name(&self, wanted: &str) -> String {
        let taken = |n: &str| self.structs.iter().any(|s| s.name == n);
        if !taken(wanted) {
            return wanted.to_string();
        }
        (2..)
            .map(|i| format!("{wanted}{i}"))
            .find(|n| !taken(n))
            .unwrap_or_default()
    }

    fn reference(&mut self, raw: Raw<'a>, pointer: &str) -> Result<Ty, JsonError> {
        let target = string(raw, pointer)?;
        let Some(name) = target.strip_prefix("#/$defs/") else {
            return Err(err(
                raw,
                pointer,
                format!("$ref {target:?}: only \"#/$defs/Name\" references are in the subset"),
            ));
        };
        let name = name.replace("~1", "/").replace("~0", "~");
        if let Some((_, ty)) = self.done.iter().find(|(n, _)| *n == name) {
            return Ok(ty.clone());
        }
        if self.active.contains(&name) {
            return Err(err(
                raw,
                pointer,
                format!("$ref {target:?} refers to itself: a Kiln type cannot contain itself"),
            ));
        }
        let Some(&(_, def)) = self.defs.iter().find(|(n, _)| *n == name) else {
            return Err(err(
                raw,
                pointer,
                format!("$ref {target:?}: no such definition in $defs"),
            ));
        };
        self.active.push(name.clone());
        let ty = self.schema(def, &child("#/$defs", &name), &camel(&name))?;
        self.active.pop();
        self.done.push((name, ty.clone()));
        Ok(ty)
    }

    /// The type of the schema at `raw`; `hint` names a struct made here.
    fn schema(&mut self, raw: Raw<'a>, pointer: &str, hint: &str) -> Result<Ty, JsonError> {
        let mut reference = None;
        let mut kind = None;
        let mut format = None;
        let mut items = None;
        let mut properties = None;
        let mut required = None;
        let mut additional = None;
        let mut description = None;
        for (key, value) in members(raw, pointer)? {
            let here = child(pointer, &key);
            match key.as_str() {
                "$ref" => reference = Some(value),
                "type" => kind = Some((string(value, &here)?, value)),
                "format" => format = Some((string(value, &here)?, value)),
                "items" => items = Some(value),
                "properties" => properties = Some(value),
                "required" => required = Some(value),
                "additionalProperties" => additional = Some(value),
                "description" => description = Some(value),
                k if ANNOTATIONS.contains(&k) => {}
                k if pointer == "#" && ROOT_ONLY.contains(&k) => {}
                k => {
                    return Err(err(
                        value,
                        &here,
                        format!("the keyword {k:?} is outside the Kiln JSON Schema subset"),
                    ))
                }
            }
        }
        if let Some(r) = reference {
            if let Some((_, at)) = kind {
                return Err(err(
                    at,
                    pointer,
                    "\"type\" beside \"$ref\" is outside the subset",
                ));
            }
            return self.reference(r, &child(pointer, "$ref"));
        }
        let Some((kind, kind_at)) = kind else {
            return Err(err(
                raw,
                pointer,
                "a schema here needs \"type\" or \"$ref\"",
            ));
        };
        let stray = |what: Option<Raw<'a>>, name: &str| match what {
            Some(at) => Err(err(
                at,
                &child(pointer, name),
                format!("{name:?} does not apply to type {kind:?}"),
            )),
            None => Ok(()),
        };
        if kind != "array" {
            stray(items, "items")?;
        }
        if kind != "object" {
            stray(properties, "properties")?;
            stray(required, "required")?;
            stray(additional, "additionalProperties")?;
        }
        let bad_format = |(f, at): (String, Raw<'_>)| {
            Err(err(
                at,
                &child(pointer, "format"),
                format!("format {f:?} is outside the subset for type {kind:?}"),
            ))
        };
        match kind.as_str() {
            "boolean" => match format {
                None => Ok(Ty::Bool),
                Some(f) => bad_format(f),
            },
            "integer" => match format {
                None => Ok(Ty::Scalar("int")),
                Some((f, at)) => match INTEGER_FORMATS.iter().find(|(name, _)| *name == f) {
                    Some(&(_, kiln)) => Ok(Ty::Scalar(kiln)),
                    None => bad_format((f, at)),
                },
            },
            "number" => match format {
                None => Ok(Ty::Scalar("f64")),
                Some((f, at)) => match f.as_str() {
                    "double" => Ok(Ty::Scalar("f64")),
                    "float" => Ok(Ty::Scalar("f32")),
                    _ => bad_format((f, at)),
                },
            },
            "string" => match format {
                None => Ok(Ty::Str),
                Some((f, at)) => match f.as_str() {
                    "binary" => Ok(Ty::Bytes),
                    _ => bad_format((f, at)),
                },
            },
            "array" => {
                if let Some(f) = format {
                    return bad_format(f);
                }
                let Some(items) = items else {
                    return Err(err(raw, pointer, "an array schema needs \"items\""));
                };
                let item = self.schema(items, &child(pointer, "items"), &format!("{hint}Item"))?;
                Ok(Ty::List(Box::new(item)))
            }
            "object" => {
                if let Some(f) = format {
                    return bad_format(f);
                }
                let description = description.map(|d| string(d, pointer)).transpose()?;
                self.object(pointer, hint, properties, required, additional, description)
            }
            other => Err(err(
                kind_at,
                &child(pointer, "type"),
                format!("type {other:?} is outside the subset (boolean integer number string array object)"),
            )),
        }
    }

    fn object(
        &mut self,
        pointer: &str,
        hint: &str,
        properties: Option<Raw<'a>>,
        required: Option<Raw<'a>>,
        additional: Option<Raw<'a>>,
        description: Option<String>,
    ) -> Result<Ty, JsonError> {
        let additional_pointer = child(pointer, "additionalProperties");
        match (properties, additional) {
            (None, Some(values)) => {
                if let Some(r) = required {
                    return Err(err(
                        r,
                        &child(pointer, "required"),
                        "\"required\" on a dict (additionalProperties only) is outside the subset",
                    ));
                }
                if let Node::Bool(_) = values.node()? {
                    return Err(err(
                        values,
                        &additional_pointer,
                        "a dict needs a schema for its values, not a boolean",
                    ));
                }
                let value = self.schema(values, &additional_pointer, &format!("{hint}Value"))?;
                return Ok(Ty::Dict(Box::new(value)));
            }
            (Some(_), Some(values)) if !matches!(values.node()?, Node::Bool(false)) => {
                return Err(err(
                    values,
                    &additional_pointer,
                    "an object is a struct (properties) or a dict (additionalProperties), not both",
                ));
            }
            _ => {}
        }
        let props_pointer = child(pointer, "properties");
        let props = match properties {
            Some(p) => members(p, &props_pointer)?,
            None => Vec::new(),
        };
        let required: Option<Vec<(String, Raw<'a>)>> = match required {
            None => None,
            Some(r) => {
                let Node::Array(names) = r.node()? else {
                    return Err(err(
                        r,
                        &child(pointer, "required"),
                        "\"required\" is an array of property names",
                    ));
                };
                let mut list = Vec::new();
                for (i, n) in names.into_iter().enumerate() {
                    let here = child(&child(pointer, "required"), &i.to_string());
                    let name = string(n, &here)?;
                    if !props.iter().any(|(p, _)| *p == name) {
                        return Err(err(
                            n,
                            &here,
                            format!("{name:?} is required but not a property"),
                        ));
                    }
                    list.push((name, n));
                }
                Some(list)
            }
        };
        let index = self.structs.len();
        let name = self.unique_name(hint);
        self.structs.push(StructDef {
            name: name.clone(),
            pointer: pointer.to_string(),
            description,
            fields: Vec::new(),
        });
        let mut fields = Vec::with_capacity(props.len());
        for (prop, schema) in props {
            let here = child(&props_pointer, &prop);
            if !is_field_name(&prop) {
                return Err(err(
                    schema,
                    &here,
                    format!("property {prop:?} is not a Kiln field name ([A-Za-z_][A-Za-z0-9_]*)"),
                ));
            }
            if matches!(prop.as_str(), "_" | "self" | "Self" | "super" | "crate") {
                return Err(err(
                    schema,
                    &here,
                    format!("property {prop:?} cannot be a Rust field name"),
                ));
            }
            let field_description = match schema.node()? {
                Node::Object(m) => m
                    .into_iter()
                    .find(|(k, _)| k == "description")
                    .map(|(_, d)| string(d, &here))
                    .transpose()?,
                _ => None,
            };
            let ty = self.schema(schema, &here, &format!("{name}{}", camel(&prop)))?;
            let present = match &required {
                None => true,
                Some(list) => list.iter().any(|(n, _)| *n == prop),
            };
            let ty = if present { ty } else { Ty::Opt(Box::new(ty)) };
            fields.push((prop, ty, field_description));
        }
        if let Some(def) = self.structs.get_mut(index) {
            def.fields = fields;
        }
        Ok(Ty::Struct(index))
    }
}

impl Schema {
    /// Reads a JSON Schema document.
    pub fn read(doc: &str) -> Result<Schema, JsonError> {
        let root = Raw::document(doc)?;
        let mut defs = Vec::new();
        for (key, value) in members(root, "#")? {
            if key == "$defs" {
                defs = members(value, "#/$defs")?;
            }
        }
        let title = members(root, "#")?
            .into_iter()
            .find(|(k, _)| k == "title")
            .map(|(_, t)| string(t, "#/title"))
            .transpose()?;
        let mut reader = Reader {
            defs,
            done: Vec::new(),
            active: Vec::new(),
            structs: Vec::new(),
        };
        let hint = camel(title.as_deref().unwrap_or("Record"));
        let root_ty = reader.schema(root, "#", &hint)?;
        // Definitions nobody references still become structs.
        let names: Vec<String> = reader.defs.iter().map(|(n, _)| n.clone()).collect();
        for name in names {
            if !reader.done.iter().any(|(n, _)| *n == name) {
                let def = reader
                    .defs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, d)| *d);
                if let Some(def) = def {
                    reader.active.push(name.clone());
                    let ty = reader.schema(def, &child("#/$defs", &name), &camel(&name))?;
                    reader.active.pop();
                    reader.done.push((name, ty));
                }
            }
        }
        Ok(Schema {
            root: root_ty,
            structs: reader.structs,
        })
    }

    /// Canonical Kiln type text of `ty`.
    pub fn type_text(&self, ty: &Ty) -> String {
        match ty {
            Ty::Bool => "bool".into(),
            Ty::Scalar(name) => (*name).into(),
            Ty::Str => "str".into(),
            Ty::Bytes => "list<u8>".into(),
            Ty::List(t) => format!("list<{}>", self.type_text(t)),
            Ty::Opt(t) => format!("opt<{}>", self.type_text(t)),
            Ty::Dict(t) => format!("dict<str,{}>", self.type_text(t)),
            Ty::Struct(i) => {
                let mut out = String::from("struct{");
                for (name, t, _) in self.structs.get(*i).map_or(&[][..], |s| &s.fields) {
                    out.push_str(name);
                    out.push(':');
                    out.push_str(&self.type_text(t));
                    out.push(',');
                }
                out.push('}');
                out
            }
        }
    }

    fn rust_type(&self, ty: &Ty) -> String {
        match ty {
            Ty::Bool => "bool".into(),
            Ty::Scalar("int") => "kiln_nostd::Int".into(),
            Ty::Scalar("uint") => "kiln_nostd::Uint".into(),
            Ty::Scalar(name) => (*name).into(),
            Ty::Str => "String".into(),
            Ty::Bytes => "Vec<u8>".into(),
            Ty::List(t) => format!("Vec<{}>", self.rust_type(t)),
            Ty::Opt(t) => format!("Option<{}>", self.rust_type(t)),
            Ty::Dict(t) => format!("std::collections::BTreeMap<String, {}>", self.rust_type(t)),
            Ty::Struct(i) => self
                .structs
                .get(*i)
                .map_or("", |s| s.name.as_str())
                .to_string(),
        }
    }

    /// The Rust module: one `#[derive(Frozen)]` struct per object schema.
    /// `source` names the schema file in the header comment.
    pub fn rust_module(&self, source: &str) -> String {
        let mut out = format!(
            "// Generated by `kiln gen {source}`: Kiln types for a JSON Schema.\n\
             // Do not edit; run `kiln gen` again. Needs the kiln-nostd crate with its\n\
             // `alloc` and `derive` features.\n"
        );
        if let Ty::Struct(i) = self.root {
            if let Some(s) = self.structs.get(i) {
                out.push_str(&format!(
                    "//\n// The root is `{}`: {}\n",
                    s.name,
                    self.type_text(&self.root)
                ));
            }
        }
        for (i, s) in self.structs.iter().enumerate() {
            let ty = Ty::Struct(i);
            out.push('\n');
            if let Some(d) = &s.description {
                for line in d.lines() {
                    out.push_str(&format!("/// {line}\n"));
                }
                out.push_str("///\n");
            }
            out.push_str(&format!(
                "/// `{}` (from `{}`).\n",
                self.type_text(&ty),
                s.pointer
            ));
            out.push_str("#[derive(kiln_nostd::Frozen, Debug, Clone, PartialEq)]\n");
            out.push_str("#[allow(non_snake_case)]\n");
            out.push_str(&format!("pub struct {} {{\n", s.name));
            for (name, t, description) in &s.fields {
                if let Some(d) = description {
                    for line in d.lines() {
                        out.push_str(&format!("    /// {line}\n"));
                    }
                }
                let ident = if RUST_KEYWORDS.contains(&name.as_str()) {
                    format!("r#{name}")
                } else {
                    name.clone()
                };
                out.push_str(&format!("    pub {ident}: {},\n", self.rust_type(t)));
            }
            out.push_str("}\n");
        }
        out
    }
}

const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "dyn", "else", "enum", "extern", "false",
    "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where",
    "while", "abstract", "become", "box", "do", "final", "macro", "override", "priv", "try",
    "typeof", "unsized", "virtual", "yield",
];
