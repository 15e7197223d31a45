//! A small GGUF reader and writer of our own.
//!
//! [`Gguf::parse`] reads a little-endian GGUF file of version 2 or 3 from a
//! byte slice and borrows everything from it: keys, raw metadata values and
//! tensor data. Before it sizes anything from a count or a length it checks
//! that the bytes left could hold that many elements of the smallest legal
//! size, so a hostile header cannot make it allocate or loop past the file.
//! It checks what llama.cpp's `gguf.cpp` checks (unique keys and tensor
//! names, known value and tensor types, `general.alignment` a u32 power of
//! two, tensor data placed in tensor-info order at aligned offsets, every
//! tensor inside the file) and more (UTF-8 strings, bool bytes 0 or 1,
//! no bytes after the last tensor's padding).
//!
//! The writer (used by [`crate::kiln_to_gguf`]) writes the canonical
//! layout that both llama.cpp and gguf-py write: header, metadata, tensor
//! infos, zero padding to the alignment, then each tensor's data followed
//! by zero padding to the alignment. A file with no tensors is padded too, as both write it; the
//! unpadded form (gguf-py's vocab-only path, which stops after the
//! metadata) is read, and comes back with the padding.
//!
//! Why not a crate: the GGUF crates on crates.io read through `Read`/`Seek`
//! into owned values (`gguf-rs`), or accept only version 3 with 1 to 4
//! dimensions and ASCII keys (`gguf-rs-lib`), and none keeps the metadata
//! order, value types and nested arrays exactly enough to write the same
//! file back from borrowed slices. GGUF readers have a history of
//! memory-safety advisories from unchecked counts; a few hundred lines that
//! bound every count by the remaining bytes are easier to trust.

pub(crate) mod cursor;
pub mod ggml;
pub mod value;

use std::collections::HashSet;
use std::io::Write;

use cursor::Cursor;
pub use ggml::{GgmlType, GGML_TYPES, OPAQUE_BASE};
pub use value::{ValueType, MAX_ARRAY_DEPTH, NESTED_ARRAY_TYPE};

use crate::error::{Error, Result};
use crate::sink::WriteSink;

/// ASCII `GGUF`.
pub const MAGIC: [u8; 4] = *b"GGUF";
/// Tensor data alignment when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;
/// The metadata key that sets the alignment.
pub const ALIGNMENT_KEY: &str = "general.alignment";
/// Most dimensions a tensor may have here: Kiln's rank limit (ggml itself
/// uses at most 4).
pub const MAX_DIMS: u32 = 8;

/// One metadata pair, borrowed from the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetadataKv<'a> {
    /// The key.
    pub key: &'a str,
    /// The value's GGUF type.
    pub value_type: ValueType,
    /// The value exactly as GGUF stores it after the type word.
    pub raw: &'a [u8],
    /// Offset of `raw` in the file.
    pub offset: u64,
}

impl MetadataKv<'_> {
    /// The value as a Kiln value, as the GGUF message stores it: its Kiln
    /// type text (`u32`, `list<str>`, ...) and its Frozen bytes. Decode
    /// them with that type text to show the value.
    pub fn kiln_value(&self) -> Result<(String, Vec<u8>)> {
        let mut c = Cursor::starting_at(self.raw, 0);
        let mut bytes = Vec::with_capacity(self.raw.len());
        let text = value::gguf_to_kiln(&mut c, self.value_type, 0, &mut bytes)
            .map_err(|e| e.in_key(self.key))?;
        Ok((text, bytes))
    }
}

/// One tensor, borrowed from the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo<'a> {
    /// The tensor's name.
    pub name: &'a str,
    /// Dimensions in GGUF order: innermost (fastest-varying) first.
    pub dims: Vec<u64>,
    /// The ggml type.
    pub ggml: &'static GgmlType,
    /// Offset of the data from the start of the data section.
    pub offset: u64,
    /// The tensor's bytes.
    pub data: &'a [u8],
}

/// A checked GGUF file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gguf<'a> {
    /// 2 or 3 (the two share one little-endian layout).
    pub version: u32,
    /// Tensor data alignment: `general.alignment`, or 32.
    pub alignment: u64,
    /// Metadata pairs in file order.
    pub metadata: Vec<MetadataKv<'a>>,
    /// Tensors in tensor-info order.
    pub tensors: Vec<TensorInfo<'a>>,
}

fn align_up(n: u64, alignment: u64) -> Option<u64> {
    n.checked_add(alignment - 1)
        .map(|n| n / alignment * alignment)
}

/// Reads and checks the value of `general.alignment`: a u32 power of two.
pub(crate) fn alignment_value(ty: ValueType, raw: &[u8]) -> Result<u64, String> {
    if ty != ValueType::U32 {
        return Err(format!(
            "{ALIGNMENT_KEY} has type {}, not UINT32",
            ty.name()
        ));
    }
    let value = raw
        .try_into()
        .map(u32::from_le_bytes)
        .map_err(|_| format!("{ALIGNMENT_KEY} is cut short"))?;
    if value == 0 || !value.is_power_of_two() {
        return Err(format!("{ALIGNMENT_KEY} is {value}, not a power of two"));
    }
    Ok(u64::from(value))
}

/// One tensor of a GGUF head: its info and where its data lies in the
/// file (the data itself is not read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorHead<'a> {
    /// The tensor's name.
    pub name: &'a str,
    /// Dimensions in GGUF order: innermost (fastest-varying) first.
    pub dims: Vec<u64>,
    /// The ggml type.
    pub ggml: &'static GgmlType,
    /// Offset of the data from the start of the data section.
    pub offset: u64,
    /// Absolute offset of the data in the file.
    pub start: u64,
    /// The data's length in bytes.
    pub len: u64,
}

/// A checked GGUF head: everything before the data section, with every
/// check of [`Gguf::parse`], including those that need only the file's
/// length (each tensor inside the file, nothing after the last one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgufHead<'a> {
    /// 2 or 3.
    pub version: u32,
    /// Tensor data alignment: `general.alignment`, or 32.
    pub alignment: u64,
    /// Metadata pairs in file order.
    pub metadata: Vec<MetadataKv<'a>>,
    /// Tensors in tensor-info order.
    pub tensors: Vec<TensorHead<'a>>,
    /// Where the tensor infos end: the bytes the head was read from.
    pub head_len: u64,
}

/// What [`GgufHead::read`] makes of a prefix of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadRead<'a> {
    /// The head, checked.
    Head(GgufHead<'a>),
    /// The prefix ends inside the head: at least this many bytes of the
    /// file are needed (more than the prefix holds, at most the file).
    Need(u64),
}

impl<'a> GgufHead<'a> {
    /// Reads and checks the head of a GGUF file of `file_len` bytes from
    /// `prefix`, its first bytes. Given the whole file, the verdict is that
    /// of [`Gguf::parse`]; given less, it is the same verdict once the
    /// prefix holds the head, and [`HeadRead::Need`] before, unless a check
    /// fails on the bytes already held (as it would over the whole file).
    pub fn read(prefix: &'a [u8], file_len: u64) -> Result<HeadRead<'a>> {
        let mut c = Cursor::over_prefix(prefix, file_len);
        match read_head(&mut c, file_len) {
            Ok(head) => Ok(HeadRead::Head(head)),
            Err(e) => match c.needs() {
                Some(n) => Ok(HeadRead::Need(n)),
                None => Err(e),
            },
        }
    }
}

fn read_head<'a>(c: &mut Cursor<'a>, file_len: u64) -> Result<GgufHead<'a>> {
    let magic = c.array::<4>("magic")?;
    if magic != MAGIC {
        return Err(Error::gguf(
            0,
            format!("not a GGUF file: the first 4 bytes are {magic:02x?}, not \"GGUF\""),
        ));
    }
    let version = c.u32("version")?;
    match version {
        2 | 3 => {}
        1 => {
            return Err(Error::gguf(
                4,
                "GGUF version 1 (32-bit counts) is not supported; llama.cpp dropped it in 2023",
            ))
        }
        v if (1..=3).contains(&v.swap_bytes()) => {
            return Err(Error::gguf(
                4,
                "big-endian GGUF is not supported: Kiln payloads are little-endian",
            ))
        }
        v => return Err(Error::gguf(4, format!("unknown GGUF version {v}"))),
    }
    let tensors_at = c.at();
    let tensor_count = c.u64("tensor count")?;
    let kv_count = c.u64("metadata count")?;
    // Each metadata pair takes at least 13 bytes (empty key, type, one
    // byte of value), each tensor info at least 24 (empty name, no
    // dimensions, type, offset): both claims must fit together.
    let need = kv_count
        .checked_mul(13)
        .zip(tensor_count.checked_mul(24))
        .and_then(|(a, b)| a.checked_add(b));
    if need.is_none_or(|need| need > c.remaining()) {
        return Err(Error::gguf(
            tensors_at,
            format!(
                "{tensor_count} tensors and {kv_count} metadata pairs cannot fit in the {} bytes left",
                c.remaining()
            ),
        ));
    }
    let kv_count = c.claim(kv_count, 13, tensors_at + 8, "metadata count")?;
    let tensor_count = c.claim(tensor_count, 24, tensors_at, "tensor count")?;

    // Capacities are bounded by the bytes held, not the file's length:
    // a prefix of a large file holds few of the claimed entries.
    let held = |c: &Cursor<'_>, min: u64| usize::try_from(c.held() / min).unwrap_or(usize::MAX);
    let mut metadata = Vec::with_capacity(kv_count.min(held(c, 13)));
    let mut keys = HashSet::with_capacity(kv_count.min(held(c, 13)));
    let mut alignment = DEFAULT_ALIGNMENT;
    for _ in 0..kv_count {
        let key_at = c.at();
        let key = c.string("metadata key")?;
        if !keys.insert(key) {
            return Err(Error::gguf(
                key_at,
                format!("metadata key {key:?} appears twice"),
            ));
        }
        let type_at = c.at();
        let id = c.u32("value type")?;
        let value_type = ValueType::from_id(id).ok_or_else(|| {
            Error::gguf(
                type_at,
                format!("metadata key {key:?} has value type {id}, not a GGUF type"),
            )
        })?;
        let start = c.pos();
        value::gguf_to_kiln(c, value_type, 0, &mut value::Discard::default())
            .map_err(|e| e.in_key(key))?;
        let raw = c.held_range(start);
        if key == ALIGNMENT_KEY {
            alignment =
                alignment_value(value_type, raw).map_err(|what| Error::gguf(start as u64, what))?;
        }
        metadata.push(MetadataKv {
            key,
            value_type,
            raw,
            offset: start as u64,
        });
    }

    let mut infos = Vec::with_capacity(tensor_count.min(held(c, 24)));
    let mut names = HashSet::with_capacity(tensor_count.min(held(c, 24)));
    for _ in 0..tensor_count {
        let info_at = c.at();
        let name = c.string("tensor name")?;
        if !names.insert(name) {
            return Err(Error::gguf(
                info_at,
                format!("tensor name {name:?} appears twice"),
            ));
        }
        let dims_at = c.at();
        let n_dims = c.u32("dimension count")?;
        if n_dims > MAX_DIMS {
            return Err(Error::gguf(
                dims_at,
                format!("tensor {name:?} has {n_dims} dimensions; at most {MAX_DIMS} fit in Kiln"),
            ));
        }
        let mut dims = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            dims.push(c.u64("dimension")?);
        }
        let type_at = c.at();
        let id = c.u32("tensor type")?;
        let ggml = GgmlType::from_id(id).ok_or_else(|| {
            let what = match ggml::removed_name(id) {
                Some(old) => format!("{old}, which ggml has removed"),
                None => "not a ggml type this converter knows".into(),
            };
            Error::gguf(type_at, format!("tensor {name:?} has type {id} ({what})"))
        })?;
        let offset_at = c.at();
        let offset = c.u64("tensor data offset")?;
        infos.push((name, dims, ggml, offset, dims_at, offset_at));
    }

    // The data section starts at the next multiple of the alignment
    // (when there are tensors) and each tensor follows the previous
    // one, padded to the alignment, as gguf.cpp requires.
    let header_end = c.at();
    let data_start = align_up(header_end, alignment)
        .ok_or_else(|| Error::gguf(header_end, "data section offset overflows"))?;
    let mut tensors = Vec::with_capacity(infos.len());
    let mut running = 0u64;
    let mut end = header_end;
    for (name, dims, ggml, offset, dims_at, offset_at) in infos {
        let len = ggml.byte_len(&dims).map_err(|what| {
            Error::gguf(
                dims_at,
                format!(
                    "tensor {name:?} of type {} and dimensions {dims:?}: {what}",
                    ggml.name
                ),
            )
        })?;
        if offset != running {
            return Err(Error::gguf(
                offset_at,
                format!(
                    "tensor {name:?} has data offset {offset}, expected {running}: GGUF places \
                     tensor data in tensor-info order, each padded to {alignment} bytes"
                ),
            ));
        }
        let start = data_start.checked_add(offset);
        let stop = start.and_then(|s| s.checked_add(len));
        let (Some(start), Some(stop)) = (start, stop) else {
            return Err(Error::gguf(
                offset_at,
                format!("tensor {name:?}: data end overflows"),
            ));
        };
        if stop > file_len {
            return Err(Error::gguf(
                start.min(file_len),
                format!(
                    "tensor {name:?} needs bytes {start}..{stop}, but the file ends at byte {file_len}"
                ),
            ));
        }
        running = offset
            .checked_add(len)
            .and_then(|n| align_up(n, alignment))
            .ok_or_else(|| Error::gguf(offset_at, "data section size overflows"))?;
        end = stop;
        tensors.push(TensorHead {
            name,
            dims,
            ggml,
            offset,
            start,
            len,
        });
    }
    // Only padding may follow the last tensor (or the tensor infos).
    let padded_end = align_up(end, alignment).unwrap_or(u64::MAX);
    if file_len > padded_end {
        return Err(Error::gguf(
            padded_end,
            format!(
                "{} bytes after the end of the {}",
                file_len - padded_end,
                if tensors.is_empty() {
                    "tensor infos and their padding"
                } else {
                    "last tensor and its padding"
                }
            ),
        ));
    }
    Ok(GgufHead {
        version,
        alignment,
        metadata,
        tensors,
        head_len: header_end,
    })
}

impl<'a> Gguf<'a> {
    /// Reads and checks a whole GGUF file: its head ([`GgufHead::read`]
    /// over all of it), each tensor's data borrowed from `input`.
    pub fn parse(input: &'a [u8]) -> Result<Gguf<'a>> {
        let file_len = input.len() as u64;
        let head = match GgufHead::read(input, file_len)? {
            HeadRead::Head(head) => head,
            // The whole file is held: no read can run past it.
            HeadRead::Need(n) => {
                return Err(Error::gguf(file_len, format!("the head needs {n} bytes")))
            }
        };
        let tensors = head
            .tensors
            .into_iter()
            .map(|t| TensorInfo {
                name: t.name,
                // Inside the file (checked), so inside usize.
                data: input
                    .get(t.start as usize..(t.start + t.len) as usize)
                    .unwrap_or_default(),
                dims: t.dims,
                ggml: t.ggml,
                offset: t.offset,
            })
            .collect();
        Ok(Gguf {
            version: head.version,
            alignment: head.alignment,
            metadata: head.metadata,
            tensors,
        })
    }
}

/// What [`write_gguf`] writes: borrowed names and data, owned encodings.
#[derive(Clone, Debug)]
pub(crate) struct GgufOut<'a> {
    pub version: u32,
    pub alignment: u64,
    pub metadata: Vec<(&'a str, value::GgufValue)>,
    pub tensors: Vec<TensorOut<'a>>,
}

#[derive(Clone, Debug)]
pub(crate) struct TensorOut<'a> {
    pub name: &'a str,
    /// GGUF order, innermost first.
    pub dims: Vec<u64>,
    pub ggml: &'static GgmlType,
    pub data: &'a [u8],
}

fn gguf_str<W: Write>(out: &mut WriteSink<W>, s: &str) -> Result<()> {
    out.write_all(&(s.len() as u64).to_le_bytes())?;
    out.write_all(s.as_bytes())
}

/// Writes the canonical GGUF layout of `file`.
pub(crate) fn write_gguf<W: Write>(file: &GgufOut<'_>, out: &mut WriteSink<W>) -> Result<()> {
    let a = file.alignment;
    let overflow = || Error::unsupported("GGUF data section size overflows 64 bits");
    out.write_all(&MAGIC)?;
    out.write_all(&file.version.to_le_bytes())?;
    out.write_all(&(file.tensors.len() as u64).to_le_bytes())?;
    out.write_all(&(file.metadata.len() as u64).to_le_bytes())?;
    for (key, value) in &file.metadata {
        gguf_str(out, key)?;
        out.write_all(&value.ty.id().to_le_bytes())?;
        out.write_all(&value.bytes)?;
    }
    let mut running = 0u64;
    for t in &file.tensors {
        gguf_str(out, t.name)?;
        out.write_all(&(t.dims.len() as u32).to_le_bytes())?;
        for d in &t.dims {
            out.write_all(&d.to_le_bytes())?;
        }
        out.write_all(&t.ggml.id.to_le_bytes())?;
        out.write_all(&running.to_le_bytes())?;
        running = running
            .checked_add(t.data.len() as u64)
            .and_then(|n| align_up(n, a))
            .ok_or_else(overflow)?;
    }
    let here = out.written_len();
    out.write_zeros((align_up(here, a).ok_or_else(overflow)? - here) as usize)?;
    for t in &file.tensors {
        out.write_all(t.data)?;
        let len = t.data.len() as u64;
        out.write_zeros((align_up(len, a).ok_or_else(overflow)? - len) as usize)?;
    }
    Ok(())
}
