//! Types: the static [`Schema`] tree every Rust type declares, and
//! [`CompiledType`], type text compiled once into a node table. A schema is
//! compiled into the same table at compile time, so the schema hash and
//! the minimum wire size have one implementation for both.

use core::fmt;

mod compiled;

pub use compiled::{CompiledType, NodeKind, TypeRef, DEFAULT_NODES, MAX_TYPE_NESTING, TOOL_NODES};

/// FNV-1a 64 offset basis.
pub(crate) const FNV_OFFSET: u64 = 14_695_981_039_346_656_037;
/// FNV-1a 64 prime.
pub(crate) const FNV_PRIME: u64 = 1_099_511_628_211;

/// The minimum wire size of one tensor directory (its header).
pub(crate) const TENSORS_MIN: u64 = 64;

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
    #[doc(hidden)]
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

    /// The scalar named `name` in type text.
    #[doc(hidden)]
    pub fn from_name(name: &str) -> Option<Scalar> {
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

/// One FNV-1a token: its bytes, then the step for one 0x00 byte.
pub(crate) const fn fnv_token(mut hash: u64, token: &[u8]) -> u64 {
    let mut rest = token;
    while let [byte, tail @ ..] = rest {
        hash ^= *byte as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        rest = tail;
    }
    hash.wrapping_mul(FNV_PRIME)
}

/// How many nodes the compile-time table of a Rust type may have. A Rust
/// type larger than this fails to compile, with a message saying so.
#[doc(hidden)]
pub const SCHEMA_NODES: usize = 1024;

impl Schema {
    /// The FNV-1a 64 schema hash a frame carries.
    #[doc(hidden)]
    pub const fn hash(&self) -> u64 {
        CompiledType::<'static, SCHEMA_NODES>::from_schema(self).hash()
    }

    /// The fewest bytes one value of this type can take.
    #[doc(hidden)]
    pub const fn min_size(&self) -> u64 {
        CompiledType::<'static, SCHEMA_NODES>::from_schema(self).min_size()
    }

    /// Whether every value of this type takes zero bytes (`struct{}` and
    /// structs made only of such).
    #[doc(hidden)]
    pub const fn is_zero_size(&self) -> bool {
        CompiledType::<'static, SCHEMA_NODES>::from_schema(self).is_zero_size()
    }

    /// Whether every value of this type takes exactly
    /// [`Schema::min_size`] bytes: a scalar, or a struct of such (whose
    /// decoder then checks its bytes once instead of once per field).
    pub(crate) const fn is_fixed_size(&self) -> bool {
        match self {
            Schema::Scalar(_) => true,
            Schema::Struct(fields) => {
                let mut rest = *fields;
                while let [field, tail @ ..] = rest {
                    if !field.ty.is_fixed_size() {
                        return false;
                    }
                    rest = tail;
                }
                true
            }
            _ => false,
        }
    }

    /// Whether this is the bytes type `list<u8>`, whose length uses the
    /// byte cap.
    #[doc(hidden)]
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
