//! Type text compiled once into a table of nodes in fixed-capacity storage.
//!
//! The table is the one representation every run-time user of a type
//! walks: [`crate::check()`], the walker, the dynamic values, the schema
//! hash and the minimum size. A Rust type's [`Schema`] is compiled into the
//! same table at compile time (`const fn`), so the hash and the minimum
//! size of a Rust type and of its type text come from the same code.
//!
//! Nodes are stored in pre-order: a node's children follow it, and each
//! node records where its subtree ends, so a walk needs no pointers and no
//! allocator. A struct's children are its field types, each carrying its
//! field name.

use core::fmt;

use super::{fnv_token, Scalar, Schema, FNV_OFFSET, TENSORS_MIN};
use crate::error::{Error, Refusal, Result};
use crate::limits::Limits;

const fn max(a: u64, b: u64) -> u64 {
    if a > b {
        a
    } else {
        b
    }
}

/// How many nodes [`CompiledType`] holds unless told otherwise: enough for
/// every golden case (the deepest has 66), small enough for a
/// microcontroller's stack (about 2.5 KiB on a 32-bit target).
pub const DEFAULT_NODES: usize = 128;

/// How many nodes the tools compile run-time type text into: `kiln`
/// (check, decode, encode, inspect), kiln-convert and the browser module
/// (kiln-wasm) all use this one cap, so a type one of them accepts the
/// others accept too. The table is about 40 bytes a node on a 64-bit host
/// (160 KiB): tools keep it on the heap (`Box<CompiledType<TOOL_NODES>>`).
#[doc(hidden)]
pub const TOOL_NODES: usize = 4096;

/// How deeply type text may nest. Deeper than the 64 containers a value
/// may enter, so that type text which is only deep in branches a value
/// never takes is still accepted (the format's depth rule is about values).
#[doc(hidden)]
pub const MAX_TYPE_NESTING: usize = 256;

/// What one node of a compiled type is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[doc(hidden)]
pub enum NodeKind {
    /// A fixed-width scalar.
    Scalar(Scalar),
    /// `str`.
    Str,
    /// `tensors`.
    Tensors,
    /// `list<T>`; its one child is `T`. `list<u8>` is the bytes type.
    List,
    /// `opt<T>`; its one child is `T`.
    Opt,
    /// `dict<str,V>`; its one child is `V`.
    Dict,
    /// `struct{...}`; its children are the field types, in order.
    Struct,
}

/// One node of a [`CompiledType`]: the walker's and the checker's table
/// row, read through [`TypeRef`].
#[doc(hidden)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Node<'t> {
    kind: NodeKind,
    /// The field name, when this node is the type of a struct field.
    field: &'t str,
    is_field: bool,
    /// Whether every value takes zero bytes (`struct{}`, structs of such).
    zero_size: bool,
    /// Index one past the last node of this subtree.
    end: u16,
    /// For a struct, the number of fields.
    fields: u16,
    /// The minimum wire size of one value. A table holds at most 65,535
    /// nodes of at most 64 bytes each, so it fits in 32 bits.
    min: u32,
}

impl Node<'_> {
    const BLANK: Node<'static> = Node {
        kind: NodeKind::Str,
        field: "",
        is_field: false,
        zero_size: false,
        end: 0,
        fields: 0,
        min: 0,
    };
}

/// Canonical type text compiled into at most `N` nodes, checked once and
/// then walked without allocating. `N` is a capacity in the type, like
/// `heapless::Vec<T, N>`: type text with more nodes is refused.
///
/// ```
/// use kiln_nostd::CompiledType;
/// let ty = CompiledType::<16>::parse("struct{id:i64,batch:tensors,}").unwrap();
/// assert_eq!(ty.hash(), 0xe58aadc7552f0d82);
/// assert_eq!(ty.min_size(), 8 + 64);
/// assert_eq!(ty.to_string(), "struct{id:i64,batch:tensors,}");
/// ```
#[derive(Clone, Debug)]
pub struct CompiledType<'t, const N: usize = DEFAULT_NODES> {
    nodes: [Node<'t>; N],
    len: u16,
    hash: u64,
}

fn bad_text(fault: &'static str, at: usize) -> Error {
    Error::refused(Refusal::BadTypeText, fault).at(at)
}

impl<'t, const N: usize> CompiledType<'t, N> {
    const CAPACITY_OK: () = assert!(
        N >= 1 && N <= u16::MAX as usize,
        "a compiled type holds 1 to 65,535 nodes"
    );

    const fn empty() -> Self {
        let () = Self::CAPACITY_OK;
        CompiledType {
            nodes: [Node::BLANK; N],
            len: 0,
            hash: 0,
        }
    }

    /// Compiles canonical type text, e.g. `struct{id:i64,batch:tensors,}`.
    /// Refused ([`Refusal::BadTypeText`], with the byte offset) when the
    /// text is not exactly one canonical type, nests more than
    /// [`MAX_TYPE_NESTING`] levels, repeats a field name in one struct, or
    /// needs more than `N` nodes.
    pub fn parse(text: &'t str) -> Result<Self> {
        let mut table = Self::empty();
        let end = Parser {
            text,
            table: &mut table,
        }
        .run()?;
        if end != text.len() {
            return Err(bad_text("text continues after the type", end));
        }
        table.finish();
        Ok(table)
    }

    /// Appends one node; the caller fills in `end` when its subtree closes.
    fn push(&mut self, kind: NodeKind, field: Option<&'t str>, at: usize) -> Result<u16> {
        let index = self.len;
        let slot = self.nodes.get_mut(usize::from(index)).ok_or(bad_text(
            "type text has more nodes than the table holds",
            at,
        ))?;
        *slot = Node {
            kind,
            field: field.unwrap_or(""),
            is_field: field.is_some(),
            ..Node::BLANK
        };
        self.len = index.saturating_add(1);
        Ok(index)
    }

    /// Closes the subtree that `index` starts: it ends at the next node.
    fn close(&mut self, index: u16) {
        let end = self.len;
        if let Some(node) = self.nodes.get_mut(usize::from(index)) {
            node.end = end;
        }
    }

    /// The nodes in use.
    #[doc(hidden)]
    pub fn nodes(&self) -> &[Node<'t>] {
        self.nodes.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// The whole type.
    pub fn root(&self) -> TypeRef<'_, 't> {
        TypeRef {
            nodes: self.nodes(),
            index: 0,
        }
    }

    /// Node `index` and its subtree (a blank node past the table).
    pub(crate) fn node_at(&self, index: u16) -> TypeRef<'_, 't> {
        TypeRef {
            nodes: self.nodes(),
            index,
        }
    }

    /// The FNV-1a 64 schema hash a frame carries.
    pub const fn hash(&self) -> u64 {
        self.hash
    }

    /// The fewest bytes one value of this type can take.
    #[doc(hidden)]
    pub const fn min_size(&self) -> u64 {
        match self.nodes.first() {
            Some(root) => root.min as u64,
            None => 0,
        }
    }

    /// Whether every value of this type takes zero bytes.
    #[doc(hidden)]
    pub const fn is_zero_size(&self) -> bool {
        match self.nodes.first() {
            Some(root) => root.zero_size,
            None => false,
        }
    }

    // -- derived facts: one implementation for run time and compile time ---

    /// Fills in every node's minimum size and zero-size flag (children
    /// first: they come after their parent, so a backward pass sees them
    /// done), then the schema hash.
    ///
    /// `const` so that a Rust type's table is finished at compile time; at
    /// run time every index below is checked against `len <= N` first, so
    /// no bounds-check panic survives (the firmware's no-panic link proves
    /// it).
    #[allow(clippy::indexing_slicing)] // guarded by `< len <= N`
    const fn finish(&mut self) {
        let len = self.used();
        let mut i = len;
        while i > 0 {
            i -= 1;
            let (min, zero_size) = match self.nodes[i].kind {
                NodeKind::Scalar(s) => (s.width() as u32, false),
                NodeKind::Str | NodeKind::List | NodeKind::Dict => (4, false),
                NodeKind::Opt => (1, false),
                NodeKind::Tensors => (TENSORS_MIN as u32, false),
                NodeKind::Struct => {
                    let (mut total, mut all_zero) = (0u32, true);
                    let mut child = i + 1;
                    let end = self.nodes[i].end as usize;
                    while child < end && child < len {
                        total = total.saturating_add(self.nodes[child].min);
                        all_zero = all_zero && self.nodes[child].zero_size;
                        let next = self.nodes[child].end as usize;
                        // A subtree ends after its first node.
                        child = if next > child { next } else { child + 1 };
                    }
                    (total, all_zero)
                }
            };
            self.nodes[i].min = min;
            self.nodes[i].zero_size = zero_size;
        }
        self.hash = self.compute_hash();
    }

    /// Upper bounds on the scratch the streaming checker holds for one
    /// value of this type whose counts and byte runs are within `limits`
    /// (`crate::stream::scratch_bound`): the most a check holds at once;
    /// the most a kept record image takes (each `tensors` block as its
    /// 64-byte header); and how much more than its 64 bytes the largest
    /// head takes while it is read, with a byte for payload bytes (0
    /// without a `tensors` field). Children come after their parent, so a
    /// backward pass sees them done, as in `finish`.
    #[allow(clippy::indexing_slicing)] // guarded by `< len <= N`
    pub(crate) const fn stream_bounds(&self, limits: Limits) -> (u64, u64, u64) {
        let len = self.used();
        let count = limits.count_cap as u64;
        let bytes = limits.byte_cap as u64;
        // A head: header, 128 bytes a descriptor, the name heap, padded.
        let head = (64 + 128 * count + bytes).next_multiple_of(64);
        let mut held = [0u64; N];
        let mut image = [0u64; N];
        let mut tensors = false;
        let mut i = len;
        while i > 0 {
            i -= 1;
            let child = i + 1;
            // The child of a list, opt or dict (always in the table).
            let (inner_held, inner_image, inner_kind) = if child < len {
                (held[child], image[child], Some(self.nodes[child].kind))
            } else {
                (0, 0, None)
            };
            let (h, m) = match self.nodes[i].kind {
                NodeKind::Scalar(s) => (s.width(), s.width()),
                // The length word, or a piece of up to 4 bytes.
                NodeKind::Str => (4, 4u64.saturating_add(bytes)),
                NodeKind::Tensors => {
                    tensors = true;
                    (head + 1, 64)
                }
                // Bytes and lists of numbers: the count word, then the
                // run a byte at a time at least.
                NodeKind::List => match inner_kind {
                    Some(NodeKind::Scalar(Scalar::U8)) => (4, 4u64.saturating_add(bytes)),
                    Some(NodeKind::Scalar(s)) if !matches!(s, Scalar::Bool) => {
                        (4, 4u64.saturating_add(count.saturating_mul(s.width())))
                    }
                    _ => (
                        max(4, inner_held),
                        4u64.saturating_add(count.saturating_mul(inner_image)),
                    ),
                },
                NodeKind::Opt => (max(1, inner_held), 1u64.saturating_add(inner_image)),
                // The previous key stays while the next key's word and
                // bytes are read, and each key while its value is.
                NodeKind::Dict => (
                    max(
                        max(bytes + 4, bytes.saturating_mul(2)),
                        bytes.saturating_add(inner_held),
                    ),
                    4u64.saturating_add(
                        count.saturating_mul((4 + bytes).saturating_add(inner_image)),
                    ),
                ),
                NodeKind::Struct => {
                    let (mut most, mut total) = (0u64, 0u64);
                    let mut field = i + 1;
                    let end = self.nodes[i].end as usize;
                    while field < end && field < len {
                        most = max(most, held[field]);
                        total = total.saturating_add(image[field]);
                        let next = self.nodes[field].end as usize;
                        field = if next > field { next } else { field + 1 };
                    }
                    (most, total)
                }
            };
            held[i] = h;
            image[i] = m;
        }
        let (root_held, root_image) = if len > 0 { (held[0], image[0]) } else { (0, 0) };
        let extra = if tensors { head + 1 - 64 } else { 0 };
        (root_held, root_image, extra)
    }

    /// How many nodes are in use, never more than `N`.
    const fn used(&self) -> usize {
        let len = self.len as usize;
        if len < N {
            len
        } else {
            N
        }
    }

    /// The FNV-1a hash over the canonical tokens, in pre-order: a node's
    /// opening token when it is entered, its closing token (and a field's
    /// comma) when its subtree ends. The stack holds each open node's end.
    #[allow(clippy::indexing_slicing)] // guarded by `< len <= N`
    const fn compute_hash(&self) -> u64 {
        let len = self.used();
        let mut h = FNV_OFFSET;
        let mut open_end = [0u16; N];
        let mut open_node = [0u16; N];
        let mut depth = 0usize;
        let mut i = 0usize;
        while i < len && depth < N {
            let node = self.nodes[i];
            if node.is_field {
                h = fnv_token(fnv_token(h, node.field.as_bytes()), b":");
            }
            h = match node.kind {
                NodeKind::Scalar(s) => fnv_token(h, s.name().as_bytes()),
                NodeKind::Str => fnv_token(h, b"str"),
                NodeKind::Tensors => fnv_token(h, b"tensors"),
                NodeKind::List => fnv_token(h, b"list<"),
                NodeKind::Opt => fnv_token(h, b"opt<"),
                NodeKind::Dict => fnv_token(fnv_token(fnv_token(h, b"dict<"), b"str"), b","),
                NodeKind::Struct => fnv_token(h, b"struct{"),
            };
            open_end[depth] = node.end;
            open_node[depth] = i as u16;
            depth += 1;
            i += 1;
            while depth > 0 && depth <= N && open_end[depth - 1] as usize <= i {
                let closing = open_node[depth - 1] as usize;
                if closing >= len {
                    break;
                }
                let closing = self.nodes[closing];
                h = match closing.kind {
                    NodeKind::List | NodeKind::Opt | NodeKind::Dict => fnv_token(h, b">"),
                    NodeKind::Struct => fnv_token(h, b"}"),
                    NodeKind::Scalar(_) | NodeKind::Str | NodeKind::Tensors => h,
                };
                if closing.is_field {
                    h = fnv_token(h, b",");
                }
                depth -= 1;
            }
        }
        h
    }
}

impl<const N: usize> CompiledType<'static, N> {
    // -- compile time: the same table from a Rust type's schema ------------

    /// Compiles a Rust type's schema at compile time. Evaluated in a
    /// `const`, a schema with more than `N` nodes stops the build.
    pub const fn from_schema(schema: &Schema) -> CompiledType<'static, N> {
        let mut table = CompiledType::empty();
        table.add_schema(schema, "", false);
        table.finish();
        table
    }

    #[allow(clippy::indexing_slicing, clippy::panic)] // const evaluation: a bad index stops the build
    const fn add_schema(&mut self, schema: &Schema, field: &'static str, is_field: bool) {
        let index = self.len as usize;
        if index >= N {
            panic!("a Rust type's schema has more nodes than the compile-time table holds");
        }
        let kind = match schema {
            Schema::Scalar(s) => NodeKind::Scalar(*s),
            Schema::Str => NodeKind::Str,
            Schema::Tensors => NodeKind::Tensors,
            Schema::List(_) => NodeKind::List,
            Schema::Opt(_) => NodeKind::Opt,
            Schema::Dict(_) => NodeKind::Dict,
            Schema::Struct(_) => NodeKind::Struct,
        };
        self.nodes[index] = Node {
            kind,
            field,
            is_field,
            ..Node::BLANK
        };
        self.len += 1;
        match schema {
            Schema::List(inner) | Schema::Opt(inner) | Schema::Dict(inner) => {
                self.add_schema(inner, "", false)
            }
            Schema::Struct(fields) => {
                let mut i = 0;
                while i < fields.len() {
                    self.add_schema(fields[i].ty, fields[i].name, true);
                    i += 1;
                }
                self.nodes[index].fields = fields.len() as u16;
            }
            Schema::Scalar(_) | Schema::Str | Schema::Tensors => {}
        }
        self.nodes[index].end = self.len;
    }
}

impl<const N: usize> fmt::Display for CompiledType<'_, N> {
    /// The canonical type text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.root().fmt(f)
    }
}

/// One type inside a [`CompiledType`]: a node and its subtree.
#[derive(Copy, Clone, Debug)]
pub struct TypeRef<'c, 't> {
    nodes: &'c [Node<'t>],
    index: u16,
}

impl<'c, 't> TypeRef<'c, 't> {
    fn node(&self) -> Node<'t> {
        self.nodes
            .get(usize::from(self.index))
            .copied()
            .unwrap_or(Node::BLANK)
    }

    /// What this type is.
    #[doc(hidden)]
    pub fn kind(&self) -> NodeKind {
        self.node().kind
    }

    /// The node's index in the table.
    #[doc(hidden)]
    pub const fn index(&self) -> usize {
        self.index as usize
    }

    /// The index one past this subtree's last node (where the next field
    /// of a struct starts); never this node's own.
    pub(crate) fn subtree_end(&self) -> u16 {
        self.node().end.max(self.index.saturating_add(1))
    }

    /// The fewest bytes one value can take.
    #[doc(hidden)]
    pub fn min_size(&self) -> u64 {
        u64::from(self.node().min)
    }

    /// Whether every value takes zero bytes.
    #[doc(hidden)]
    pub fn is_zero_size(&self) -> bool {
        self.node().zero_size
    }

    /// Whether this is `list<u8>`, the bytes type.
    #[doc(hidden)]
    pub fn is_bytes(&self) -> bool {
        self.kind() == NodeKind::List
            && self.element().map(|e| e.kind()) == Some(NodeKind::Scalar(Scalar::U8))
    }

    /// The element of a list, the value of an opt, the value of a dict.
    #[doc(hidden)]
    pub fn element(&self) -> Option<TypeRef<'c, 't>> {
        match self.kind() {
            NodeKind::List | NodeKind::Opt | NodeKind::Dict => Some(TypeRef {
                nodes: self.nodes,
                index: self.index.saturating_add(1),
            }),
            _ => None,
        }
    }

    /// How many fields a struct has (0 for any other type).
    #[doc(hidden)]
    pub fn field_count(&self) -> usize {
        usize::from(self.node().fields)
    }

    /// A struct's fields in order: name and type. Empty for other types.
    #[doc(hidden)]
    pub fn fields(&self) -> Fields<'c, 't> {
        let node = self.node();
        let is_struct = node.kind == NodeKind::Struct;
        Fields {
            nodes: self.nodes,
            next: self.index.saturating_add(1),
            end: if is_struct { node.end } else { 0 },
        }
    }

    /// The field name, when this type is a struct field's type.
    #[doc(hidden)]
    pub fn field_name(&self) -> Option<&'t str> {
        let node = self.node();
        node.is_field.then_some(node.field)
    }
}

impl fmt::Display for TypeRef<'_, '_> {
    /// The canonical type text of this subtree.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            NodeKind::Scalar(s) => f.write_str(s.name()),
            NodeKind::Str => f.write_str("str"),
            NodeKind::Tensors => f.write_str("tensors"),
            NodeKind::List | NodeKind::Opt | NodeKind::Dict => {
                f.write_str(match self.kind() {
                    NodeKind::List => "list<",
                    NodeKind::Opt => "opt<",
                    _ => "dict<str,",
                })?;
                if let Some(element) = self.element() {
                    element.fmt(f)?;
                }
                f.write_str(">")
            }
            NodeKind::Struct => {
                f.write_str("struct{")?;
                for (name, ty) in self.fields() {
                    write!(f, "{name}:{ty},")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// The fields of a struct type, in order.
#[derive(Clone, Debug)]
pub struct Fields<'c, 't> {
    nodes: &'c [Node<'t>],
    next: u16,
    end: u16,
}

impl<'c, 't> Iterator for Fields<'c, 't> {
    type Item = (&'t str, TypeRef<'c, 't>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        let node = self.nodes.get(usize::from(self.next))?;
        let field = TypeRef {
            nodes: self.nodes,
            index: self.next,
        };
        // A subtree always ends after its first node; `max` keeps a
        // malformed table from looping.
        self.next = node.end.max(self.next.saturating_add(1));
        Some((node.field, field))
    }
}

// ---------------------------------------------------------------------------
// Parsing type text

/// A single left-to-right pass over the text that appends nodes in
/// pre-order. Iterative, with an explicit stack of open nodes, so hostile
/// type text cannot exhaust the call stack.
struct Parser<'p, 't, const N: usize> {
    text: &'t str,
    table: &'p mut CompiledType<'t, N>,
}

impl<'t, const N: usize> Parser<'_, 't, N> {
    fn rest(&self, pos: usize) -> &'t str {
        self.text.get(pos..).unwrap_or("")
    }

    /// Returns where the type ends.
    fn run(mut self) -> Result<usize> {
        let mut open = [0u16; MAX_TYPE_NESTING];
        let mut depth = 0usize;
        let mut pos = 0usize;
        let mut field: Option<&'t str> = None;
        loop {
            // One type starts at `pos`.
            let here = self.rest(pos);
            let container = [
                ("list<", NodeKind::List),
                ("opt<", NodeKind::Opt),
                ("dict<str,", NodeKind::Dict),
                ("struct{", NodeKind::Struct),
            ]
            .into_iter()
            .find(|(prefix, _)| here.starts_with(prefix));
            if let Some((prefix, kind)) = container {
                let index = self.table.push(kind, field.take(), pos)?;
                *open
                    .get_mut(depth)
                    .ok_or(bad_text("type text nests too deeply", pos))? = index;
                depth = depth.saturating_add(1);
                pos = pos.saturating_add(prefix.len());
                if kind != NodeKind::Struct {
                    continue;
                }
                if let Some((name, next)) = self.field_name(pos)? {
                    field = Some(name);
                    pos = next;
                    continue;
                }
                // `struct{}`: closed below, like any finished type.
            } else {
                let len = here
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric())
                    .count();
                let word = here.get(..len).unwrap_or("");
                let kind = match word {
                    "str" => NodeKind::Str,
                    "tensors" => NodeKind::Tensors,
                    _ => Scalar::from_name(word)
                        .map(NodeKind::Scalar)
                        .ok_or(bad_text("unknown type name", pos))?,
                };
                let index = self.table.push(kind, field.take(), pos)?;
                self.table.close(index);
                pos = pos.saturating_add(len);
            }
            // A type just ended at `pos`: close the open nodes it finishes,
            // until one expects another type.
            loop {
                let Some(top) = depth.checked_sub(1) else {
                    return Ok(pos);
                };
                let index = open.get(top).copied().unwrap_or(0);
                let kind = self.table.nodes().get(usize::from(index)).map(|n| n.kind);
                let next = self.text.as_bytes().get(pos).copied();
                if kind != Some(NodeKind::Struct) {
                    if next != Some(b'>') {
                        return Err(bad_text("expected '>'", pos));
                    }
                    pos = pos.saturating_add(1);
                    self.table.close(index);
                    depth = top;
                    continue;
                }
                // Inside a struct: either it closes now (`struct{}` or
                // after a field's comma) or a field's type just ended.
                let struct_opened_empty = self
                    .table
                    .nodes()
                    .get(usize::from(index).saturating_add(1))
                    .is_none();
                if !struct_opened_empty {
                    if next != Some(b',') {
                        return Err(bad_text("struct field not followed by a comma", pos));
                    }
                    pos = pos.saturating_add(1);
                    self.count_field(index, pos)?;
                }
                match self.field_name(pos)? {
                    Some((name, type_at)) => {
                        field = Some(name);
                        pos = type_at;
                        break;
                    }
                    None => {
                        pos = pos.saturating_add(1);
                        self.table.close(index);
                        depth = top;
                    }
                }
            }
        }
    }

    /// At a point in a struct where a field may start: `Some((name, where
    /// its type starts))` after `name:`, or `None` when the struct closes
    /// here (`}` at `pos`).
    fn field_name(&self, pos: usize) -> Result<Option<(&'t str, usize)>> {
        let here = self.rest(pos);
        if here.starts_with('}') {
            return Ok(None);
        }
        let len = here
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let name = here.get(..len).unwrap_or("");
        let starts_well = name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
        if !starts_well {
            return Err(bad_text("bad field name", pos));
        }
        if here.as_bytes().get(len) != Some(&b':') {
            return Err(bad_text("field name not followed by ':'", pos));
        }
        Ok(Some((name, pos.saturating_add(len).saturating_add(1))))
    }

    /// A field of struct `index` just ended: count it, and refuse a name
    /// used by an earlier field of the same struct. Every field subtree of
    /// the struct is closed here, and the newest ends at the last node.
    fn count_field(&mut self, index: u16, at: usize) -> Result<()> {
        let nodes = self.table.nodes();
        let end = u16::try_from(nodes.len()).unwrap_or(u16::MAX);
        let fields = Fields {
            nodes,
            next: index.saturating_add(1),
            end,
        };
        let earlier = usize::from(nodes.get(usize::from(index)).map_or(0, |n| n.fields));
        if let Some((newest, _)) = fields.clone().nth(earlier) {
            if fields.take(earlier).any(|(name, _)| name == newest) {
                return Err(bad_text("repeated field name", at));
            }
        }
        if let Some(node) = self.table.nodes.get_mut(usize::from(index)) {
            node.fields = node.fields.saturating_add(1);
        }
        Ok(())
    }
}
