//! The inspection model (feature `inspect`): what every tool shows of a
//! model file, built once here and rendered by every tool (`kiln
//! inspect` and its JSON, the browser modules), whatever the format.
//!
//! A [`Inspection`] is a file or a set of files: its format (Kiln,
//! safetensors, GGUF), its directories, every tensor's facts (name,
//! dtype, shape, absolute file offset and length, whether its payload
//! can be viewed in place and why not, quantization links, the file that
//! holds it), and its metadata, each entry a key, a Kiln type and the
//! value's Kiln bytes ([`Meta::value`] gives the core's value tree).
//!
//! This crate fills it for Kiln files: [`KilnOpener`] is a sans-I/O
//! reader that says which byte ranges it needs next and takes them when
//! they come (a browser's `fetch`, a file read by ranges), and
//! [`open_bytes`] runs it over bytes in memory (a memory map). kiln-convert
//! fills it for safetensors and GGUF heads and for sets of files. Its one
//! JSON form is [`Inspection::write_json`] (`spec/json.md`, section 8).
//!
//! ```
//! use kiln_nostd::inspect::{open_bytes, recognise, InPlace};
//! use kiln_nostd::{to_frame_vec, Directory, Frozen, TensorSpec};
//!
//! #[derive(Frozen)]
//! struct Batch<'a> { name: &'a str, batch: Directory<'a> }
//! let mut block = [0u8; 512];
//! let batch = Directory::build(&[TensorSpec::from_host(&[2], &[1.0f32, 2.0]).named("w")], &mut block).unwrap();
//! let bytes = to_frame_vec(&Batch { name: "abc", batch }).unwrap();
//!
//! let text = Batch::SCHEMA.to_string();
//! let reading = recognise(&bytes, Some(&text), None, None).unwrap();
//! let (mut model, _) = open_bytes("batch.kiln", &bytes, &reading).unwrap();
//! model.read_metadata().unwrap(); // the values that are not tensors
//! assert_eq!(model.metadata[0].text().as_deref(), Some("abc"));
//! assert_eq!(model.directories[0].path.as_ref().unwrap().text(), "batch");
//! let w = &model.tensors[0];
//! assert_eq!((w.name.as_deref(), w.shape.as_slice()), (Some("w"), &[2][..]));
//! let at = w.offset as usize;
//! assert_eq!(&bytes[at..at + 8], &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]);
//! // 16 (frame) + 4 + 3 ("abc") = 23: the block starts at an odd offset,
//! // and on a big-endian host f32 elements are swapped (copied) anyway.
//! let expected = if cfg!(target_endian = "little") {
//!     InPlace::Misaligned { offset: w.offset, align: 4 }
//! } else {
//!     InPlace::BigEndianHost
//! };
//! assert_eq!(w.in_place, expected);
//! ```

use alloc::string::String;
use alloc::vec::Vec;

use crate::directory::{Quant, TensorView};
use crate::dtype::DtypeCode;
use crate::error::Result;
use crate::order::HOST_IS_LITTLE_ENDIAN;
use crate::schema::CompiledType;
use crate::value::Value;

mod json;
mod known;
mod meta;
mod open;
mod walk;

pub use crate::path::{Path, Seg};
pub use known::{
    recognise, KnownType, Reading, GGUF_CONVERSION, KNOWN_TYPES, SAFETENSORS_CONVERSION,
};
pub use open::{open_bytes, open_read_at, KilnOpener, ReadStats, FIRST_READ, MAX_SCRATCH};

/// The formats the model describes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// A Kiln value: a framed message, or a bare value (a tensor
    /// directory).
    #[default]
    Kiln,
    /// A safetensors file.
    Safetensors,
    /// A GGUF file.
    Gguf,
}

impl Format {
    /// `kiln`, `safetensors` or `gguf`: the JSON form's name.
    #[doc(hidden)]
    pub const fn name(self) -> &'static str {
        match self {
            Format::Kiln => "kiln",
            Format::Safetensors => "safetensors",
            Format::Gguf => "gguf",
        }
    }

    /// `Kiln`, `safetensors` or `GGUF`: the name a person reads.
    #[doc(hidden)]
    pub const fn title(self) -> &'static str {
        match self {
            Format::Kiln => "Kiln",
            Format::Safetensors => "safetensors",
            Format::Gguf => "GGUF",
        }
    }

    /// The format a name of [`Format::name`] or [`Format::title`] names.
    #[doc(hidden)]
    pub fn from_name(name: &str) -> Option<Format> {
        [Format::Kiln, Format::Safetensors, Format::Gguf]
            .into_iter()
            .find(|f| name == f.name() || name == f.title())
    }
}

/// One file of a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileFacts {
    /// Its name, as the caller gave it (a path, a URL, a shard's name).
    pub name: String,
    /// Its length.
    pub bytes: u64,
}

/// What a Kiln file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KilnFacts {
    /// The value's canonical type text (`tensors` for a bare directory).
    pub type_text: String,
    /// Whether it starts with a frame.
    pub framed: bool,
    /// The type's schema hash (what a frame carries).
    pub hash: u64,
    /// The format it was converted from, when its type is one of the
    /// conversion messages ([`KNOWN_TYPES`]).
    pub converted_from: Option<Format>,
}

/// A GGUF file's header, or that of the GGUF file a Kiln message was
/// converted from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GgufFacts {
    /// The GGUF version (2 or 3).
    pub version: u32,
    /// The tensor data alignment.
    pub alignment: u64,
}

/// One metadata entry: a key, the Kiln type of its value and the value's
/// Kiln bytes. A Kiln message's entries are its values that are not
/// containers or directories, keyed by their [`Path`]; a safetensors or
/// GGUF file's are its key/value pairs, typed as `kiln convert` types
/// them, so a file and the `.kiln` converted from it have the same
/// entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The key: a path in the message, or the file's own key.
    pub key: String,
    /// Canonical Kiln type text of the value (`str`, `u32`, `list<str>`).
    pub type_text: String,
    /// The value's bytes under that type.
    pub bytes: Vec<u8>,
}

/// How many type nodes a metadata value's type is compiled to at first;
/// a larger type is compiled again at the tools' cap.
const SMALL_NODES: usize = 64;

impl Meta {
    /// The entry's value tree (borrowing this entry's bytes), checked
    /// against its type.
    pub fn value(&self) -> Result<Value<'_>> {
        let options = crate::limits::Options::BARE
            .with_limits(crate::limits::Limits::uniform(crate::limits::WIRE_MAX));
        with_type(&self.type_text, |ty| ty.decode_value(&self.bytes, options))
    }

    /// The value's JSON form (`spec/json.md`), compact.
    #[doc(hidden)]
    pub fn json(&self) -> Result<String> {
        let mut out = String::new();
        let mut w = crate::json::JsonWriter::new(&mut out, false);
        self.write_json(&self.value()?, &mut w)?;
        w.done()?;
        Ok(out)
    }

    /// `value` (this entry's, from [`Meta::value`]) in its JSON form,
    /// compact, into `w`.
    pub(crate) fn write_json(
        &self,
        value: &Value<'_>,
        w: &mut crate::json::JsonWriter<'_>,
    ) -> Result<()> {
        with_type(&self.type_text, |ty| {
            crate::json::value_json(ty.root(), value, w, None)
        })
    }
}

/// Runs `f` with `text` compiled: small types (nearly every metadata
/// value) in a small table, others at the tools' cap.
fn with_type<T>(text: &str, mut f: impl FnMut(&dyn TypeView) -> Result<T>) -> Result<T> {
    match CompiledType::<SMALL_NODES>::parse(text) {
        Ok(ty) => f(&ty),
        Err(_) => {
            let ty: alloc::boxed::Box<CompiledType<'_, { crate::schema::TOOL_NODES }>> =
                alloc::boxed::Box::new(CompiledType::parse(text)?);
            f(&*ty)
        }
    }
}

/// What [`with_type`] lends: a compiled type of any table size.
trait TypeView {
    fn root(&self) -> crate::schema::TypeRef<'_, '_>;
    fn decode_value<'b>(
        &self,
        bytes: &'b [u8],
        options: crate::limits::Options,
    ) -> Result<Value<'b>>;
}

impl<const N: usize> TypeView for CompiledType<'_, N> {
    fn root(&self) -> crate::schema::TypeRef<'_, '_> {
        CompiledType::root(self)
    }
    fn decode_value<'b>(
        &self,
        bytes: &'b [u8],
        options: crate::limits::Options,
    ) -> Result<Value<'b>> {
        CompiledType::decode_value(self, bytes, options)
    }
}

/// A tensor's dtype: Kiln's, or the format's own name when Kiln has no
/// dtype for it (a safetensors `F4`, `C64`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TensorDtype {
    /// A Kiln dtype code, closed or opaque.
    Kiln(DtypeCode),
    /// A dtype Kiln does not have, by its own name; its payload is bytes.
    Foreign(String),
}

impl TensorDtype {
    /// The Kiln dtype code, if any.
    #[doc(hidden)]
    pub fn code(&self) -> Option<u16> {
        match self {
            TensorDtype::Kiln(d) => Some(d.code()),
            TensorDtype::Foreign(_) => None,
        }
    }

    /// The alignment a zero-copy view of the payload needs: the element
    /// size of a whole-byte dtype, 1 for packed, opaque and foreign ones.
    #[doc(hidden)]
    pub fn element_align(&self) -> usize {
        match self {
            TensorDtype::Kiln(d) => d.element_align(),
            TensorDtype::Foreign(_) => 1,
        }
    }
}

/// A tensor's quantization links: indexes of other tensors in the same
/// directory.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum QuantLink {
    /// Scheme 0: not quantized.
    None,
    /// Scheme 1: a scale per group.
    Scales {
        /// The dimension the groups run along.
        axis: u16,
        /// Elements per group.
        group_size: u32,
        /// The scale tensor's index in the directory.
        scales: usize,
    },
    /// Scheme 2: a scale per group and an outer scale.
    ScalesOuter {
        /// The dimension the groups run along.
        axis: u16,
        /// Elements per group.
        group_size: u32,
        /// The scale tensor's index in the directory.
        scales: usize,
        /// The outer scale tensor's index in the directory.
        outer: usize,
    },
}

impl QuantLink {
    /// The scheme number: 0, 1 or 2.
    #[doc(hidden)]
    pub const fn scheme(&self) -> u8 {
        match self {
            QuantLink::None => 0,
            QuantLink::Scales { .. } => 1,
            QuantLink::ScalesOuter { .. } => 2,
        }
    }

    /// `none`, `scales` or `scales+outer`.
    #[doc(hidden)]
    pub const fn name(&self) -> &'static str {
        match self {
            QuantLink::None => "none",
            QuantLink::Scales { .. } => "scales",
            QuantLink::ScalesOuter { .. } => "scales+outer",
        }
    }

    fn of(quant: Quant<'_>) -> QuantLink {
        match quant {
            Quant::None => QuantLink::None,
            Quant::Scales {
                axis,
                group_size,
                scales,
            } => QuantLink::Scales {
                axis,
                group_size,
                scales: scales.index(),
            },
            Quant::ScalesOuter {
                axis,
                group_size,
                scales,
                outer,
            } => QuantLink::ScalesOuter {
                axis,
                group_size,
                scales: scales.index(),
                outer: outer.index(),
            },
        }
    }
}

/// Whether a payload can be viewed in place in a memory map of its file
/// (a typed slice or typed array over the file's bytes, no copy), and why
/// not. A map starts on a page, so the file offset decides.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum InPlace {
    /// It can.
    Yes,
    /// The payload's offset is not a multiple of its element size.
    Misaligned {
        /// The payload's offset.
        offset: u64,
        /// The element size it needs to be a multiple of.
        align: usize,
    },
    /// Elements wider than a byte, on a big-endian host: the bytes are
    /// little-endian, so they must be swapped (copied).
    BigEndianHost,
}

impl InPlace {
    /// The verdict for a payload at `offset` whose elements need `align`,
    /// on this host.
    #[doc(hidden)]
    pub fn of(offset: u64, align: usize) -> InPlace {
        InPlace::on_host(offset, align, HOST_IS_LITTLE_ENDIAN)
    }

    /// The verdict on a host of the given byte order.
    #[doc(hidden)]
    pub fn on_host(offset: u64, align: usize, little_endian_host: bool) -> InPlace {
        if align > 1 && !little_endian_host {
            InPlace::BigEndianHost
        } else if !offset.is_multiple_of(align as u64) {
            InPlace::Misaligned { offset, align }
        } else {
            InPlace::Yes
        }
    }

    /// Whether it can.
    #[doc(hidden)]
    pub const fn is_yes(&self) -> bool {
        matches!(self, InPlace::Yes)
    }

    /// Why not, in a few words (`""` when it can).
    pub const fn reason(&self) -> &'static str {
        match self {
            InPlace::Yes => "",
            InPlace::Misaligned { .. } => "misaligned",
            InPlace::BigEndianHost => "big-endian host",
        }
    }
}

/// Everything known about one tensor without reading its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorFacts {
    /// Its directory in [`Inspection::directories`].
    pub directory: usize,
    /// Its index within that directory (what quantization links use).
    pub index: usize,
    /// Its name, when its directory names its tensors.
    pub name: Option<String>,
    /// Its dtype.
    pub dtype: TensorDtype,
    /// Dimensions, outermost first.
    pub shape: Vec<u64>,
    /// The element count; `None` when the shape's product passes 64 bits
    /// (a GGUF block type packs several elements a byte).
    pub elements: Option<u64>,
    /// Absolute offset of its payload in its file.
    pub offset: u64,
    /// The payload's length.
    pub length: u64,
    /// An opaque dtype's layout name (a ggml block type: `Q4_K`).
    pub layout: Option<String>,
    /// An opaque dtype's block size in bytes (0 otherwise).
    pub block_size: u32,
    /// Quantization links.
    pub quant: QuantLink,
    /// Whether the payload can be viewed in place, on this host.
    pub in_place: InPlace,
}

impl TensorFacts {
    /// The facts of `t`, a tensor of directory `directory` whose payload
    /// region starts at absolute offset `payload_offset` of its file.
    #[doc(hidden)]
    pub fn of_view(directory: usize, payload_offset: u64, t: &TensorView<'_>) -> TensorFacts {
        let dtype = TensorDtype::Kiln(t.dtype());
        let offset = payload_offset.saturating_add(t.byte_offset());
        TensorFacts {
            directory,
            index: t.index(),
            name: t.name().map(String::from),
            in_place: InPlace::of(offset, dtype.element_align()),
            dtype,
            shape: t.shape().to_vec(),
            elements: Some(t.element_count()),
            offset,
            length: t.byte_length(),
            layout: t.layout().map(String::from),
            block_size: t.block_size(),
            quant: QuantLink::of(t.quant()),
        }
    }

    /// The dtype as a person reads it: a closed dtype's name (`f32`), an
    /// opaque dtype's layout (`Q4_K`, or `opaque(4108)` without one), a
    /// foreign dtype's own name (`F4`).
    pub fn dtype_name(&self) -> String {
        match (&self.dtype, &self.layout) {
            (TensorDtype::Kiln(DtypeCode::Closed(d)), _) => d.name().into(),
            (TensorDtype::Kiln(DtypeCode::Opaque(_)), Some(layout)) => layout.clone(),
            (TensorDtype::Kiln(DtypeCode::Opaque(code)), None) => {
                let mut s = String::from("opaque(");
                crate::text::push_decimal(&mut s, (*code).into());
                s.push(')');
                s
            }
            (TensorDtype::Foreign(name), _) => name.clone(),
        }
    }

    /// The payload's absolute byte range in its file.
    #[doc(hidden)]
    pub fn range(&self) -> core::ops::Range<u64> {
        self.offset..self.offset.saturating_add(self.length)
    }
}

/// One directory of a model: a `tensors` value of a Kiln message, or a
/// safetensors or GGUF file's tensors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectoryFacts {
    /// Where its `tensors` value is in the message; `None` for a
    /// safetensors or GGUF file's tensors.
    pub path: Option<Path>,
    /// The file that holds it, in [`Inspection::files`].
    pub file: usize,
    /// The source file its tensors came from, when a model has several:
    /// a shard of a set, or the shard a converted set's tensors were read
    /// from.
    pub source: Option<String>,
    /// Absolute offset of the block in its file (of the data section for
    /// safetensors and GGUF).
    pub offset: u64,
    /// The block's length.
    pub length: u64,
    /// Absolute offset of its payload region.
    pub payload_offset: u64,
    /// Its first tensor in [`Inspection::tensors`].
    pub first: usize,
    /// How many tensors it has.
    pub count: usize,
    /// Whether it names its tensors.
    pub named: bool,
    /// Whether the names are in strictly increasing byte order.
    pub names_sorted: bool,
}

/// Everything a tool shows of a model file or a set of files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inspection {
    /// What the caller calls it: the file as given, or the set.
    pub name: String,
    /// The format of its files.
    pub format: Format,
    /// Its files, in set order.
    pub files: Vec<FileFacts>,
    /// A Kiln file's type and framing.
    pub kiln: Option<KilnFacts>,
    /// A GGUF file's header (or that of the GGUF file a Kiln message was
    /// converted from).
    pub gguf: Option<GgufFacts>,
    /// The metadata entries.
    pub metadata: Vec<Meta>,
    /// Entries left out past [`MAX_METADATA`].
    pub omitted: u64,
    /// Every directory, in file and wire order.
    pub directories: Vec<DirectoryFacts>,
    /// Every tensor, by directory, in wire order within each.
    pub tensors: Vec<TensorFacts>,
    /// The order to list tensors in (indexes into [`Inspection::tensors`]), when
    /// it is not wire order: a converted model lists its tensors in its
    /// source file's order.
    pub order: Vec<usize>,
    /// A Kiln file's record image: its bytes outside the payload regions,
    /// each `tensors` block replaced by the empty directory (a valid
    /// message of the same type, which metadata is read from).
    pub record: Vec<u8>,
}

/// Most metadata entries a model keeps from a Kiln value; a value with
/// millions of small fields is summarized ([`Inspection::omitted`]).
pub const MAX_METADATA: usize = 10_000;

impl Inspection {
    /// The total length of its files.
    #[doc(hidden)]
    pub fn bytes(&self) -> u64 {
        self.files
            .iter()
            .fold(0u64, |sum, f| sum.saturating_add(f.bytes))
    }

    /// Tensor `index` of directory `directory`.
    #[doc(hidden)]
    pub fn tensor_in(&self, directory: usize, index: usize) -> Option<&TensorFacts> {
        let d = self.directories.get(directory)?;
        if index >= d.count {
            return None;
        }
        self.tensors.get(d.first.checked_add(index)?)
    }

    /// Where tensor `index` of directory `directory` is in
    /// [`Inspection::tensors`].
    #[doc(hidden)]
    pub fn position_of(&self, directory: usize, index: usize) -> Option<usize> {
        let d = self.directories.get(directory)?;
        (index < d.count).then_some(d.first.checked_add(index)?)
    }

    /// The tensors' positions in [`Inspection::tensors`], in listing order.
    #[doc(hidden)]
    pub fn listing(&self) -> impl Iterator<Item = usize> + '_ {
        let wire = 0..if self.order.is_empty() {
            self.tensors.len()
        } else {
            0
        };
        wire.chain(self.order.iter().copied())
    }

    /// The path text of a tensor's directory (`""` for a bare directory),
    /// or `None` for a foreign file's tensors.
    #[doc(hidden)]
    pub fn path_of(&self, t: &TensorFacts) -> Option<String> {
        let path = self.directories.get(t.directory)?.path.as_ref()?;
        Some(path.text())
    }

    /// The source file of a tensor, in a model of several files.
    #[doc(hidden)]
    pub fn source_of(&self, t: &TensorFacts) -> Option<&str> {
        self.directories.get(t.directory)?.source.as_deref()
    }

    /// The positions in [`Inspection::tensors`] of the tensors `t`'s
    /// quantization links point to: scales, then outer.
    #[doc(hidden)]
    pub fn links_of(&self, t: &TensorFacts) -> (Option<usize>, Option<usize>) {
        let at = |i: usize| self.position_of(t.directory, i);
        match t.quant {
            QuantLink::None => (None, None),
            QuantLink::Scales { scales, .. } => (at(scales), None),
            QuantLink::ScalesOuter { scales, outer, .. } => (at(scales), at(outer)),
        }
    }
}
