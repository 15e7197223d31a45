//! The heads of safetensors and GGUF files, read from their first bytes
//! alone: what an inspector shows before any payload is read.
//!
//! [`read_head`] takes a prefix of a file and the file's total length and
//! answers either [`Step::Need`] (the first `n` bytes are needed) or the
//! [`Head`]: the format, the metadata pairs for display, and each
//! tensor's name, dtype or ggml block layout, shape and absolute byte
//! range. Every check that needs no payload byte is made (GGUF: by
//! [`GgufHead::read`], which [`Gguf::parse`](crate::gguf::Gguf::parse) is
//! built on; safetensors: the conversions' header reader, the safetensors
//! crate's checks with 64-bit sizes, see [`safetensors_head`]), so the
//! verdict (the error, its kind, offset and words) is the whole-file
//! reader's once the prefix holds the head.
//!
//! What a head needs: safetensors, 8 bytes, then `8 + n` (its JSON
//! header); GGUF, everything up to the end of its tensor infos, which
//! may take several growing reads (a tokenizer vocabulary can be
//! megabytes). [`open_head`] drives those reads over any read-at-offset
//! function, so a file of any size is opened by reading about its head.

use std::ops::Range;

use kiln_nostd::DtypeCode;

use crate::error::{Error, Result};
use crate::gguf::{GgmlType, GgufHead, HeadRead, MetadataKv, ValueType};
use crate::safetensors_header::{data_order, read_header, Refused};
use crate::safetensors_kiln::read_error;
use crate::{kiln_dtype, Format};

/// The first read of a head: most safetensors headers and small GGUF
/// heads fit in it.
pub const FIRST_READ: u64 = 64 << 10;

/// The largest head [`open_head`] reads (safetensors caps its header at
/// 100,000,000 bytes; a GGUF head past this is refused rather than held).
pub const MAX_HEAD: u64 = 256 << 20;

/// Values of a metadata array shown before "…".
const SHOWN_ITEMS: usize = 16;
/// Characters of a string value shown before "…".
const SHOWN_CHARS: usize = 240;

/// What a prefix of a file gives.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// The head, checked.
    Head(Head),
    /// The prefix ends inside the head: the first `n` bytes are needed
    /// (more than the prefix, at most the file).
    Need(u64),
}

/// A block layout of a GGUF quantized tensor.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// ggml's name for it, e.g. `Q4_K`.
    pub name: &'static str,
    /// Elements per block.
    pub block_elements: u64,
    /// Bytes per block.
    pub block_bytes: u64,
}

/// One tensor of a head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadTensor {
    /// Its name.
    pub name: String,
    /// The Kiln dtype its bytes are (the one a conversion gives it): a
    /// closed dtype, or for a GGUF block type the opaque `4096 + id`.
    /// `None` for a safetensors dtype Kiln has no dtype for.
    pub dtype: Option<DtypeCode>,
    /// The format's own name for the dtype (`F16`, `BF16`, `Q4_K`, ...).
    pub format_dtype: String,
    /// The block layout of a GGUF block type.
    pub layout: Option<Layout>,
    /// Dimensions, outermost first (GGUF's are reversed).
    pub shape: Vec<u64>,
    /// Element count.
    pub elements: u64,
    /// Absolute byte range of its data in the file.
    pub range: Range<u64>,
}

/// One metadata pair, for display.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadPair {
    /// The key.
    pub key: String,
    /// The value's type in the format's words (`string`, `u32`,
    /// `array<string>[151936]`).
    pub value_type: String,
    /// The value as text, long strings and arrays shortened with "…".
    pub value: String,
}

/// The head of a safetensors or GGUF file.
#[derive(Clone, Debug, PartialEq)]
pub struct Head {
    /// [`Format::Safetensors`] or [`Format::Gguf`].
    pub format: Format,
    /// The GGUF version (0 for safetensors).
    pub version: u32,
    /// GGUF's tensor data alignment (0 for safetensors).
    pub alignment: u64,
    /// The bytes the head spans: `8 + n` for safetensors, the end of the
    /// tensor infos for GGUF.
    pub head_len: u64,
    /// The file's length.
    pub file_len: u64,
    /// Metadata pairs: file order for GGUF, key order for safetensors'
    /// `__metadata__`.
    pub metadata: Vec<HeadPair>,
    /// Tensors in the order of their data in the file.
    pub tensors: Vec<HeadTensor>,
}

/// The format a file's first bytes say: `GGUF` magic, a Kiln frame or
/// directory magic, or a safetensors header (an 8-byte length and then
/// `{`). Needs 9 bytes for safetensors.
pub fn sniff(prefix: &[u8]) -> Option<Format> {
    match prefix.get(..4)? {
        b"GGUF" => Some(Format::Gguf),
        b"KLN0" | b"KLNT" => Some(Format::Kiln),
        _ if prefix.get(8) == Some(&b'{') => Some(Format::Safetensors),
        _ => None,
    }
}

/// The head of a `format` file of `file_len` bytes, from `prefix`, its
/// first bytes.
pub fn read_head(format: Format, prefix: &[u8], file_len: u64) -> Result<Step> {
    match format {
        Format::Safetensors => safetensors_head(prefix, file_len),
        Format::Gguf => gguf_head(prefix, file_len),
        Format::Kiln => Err(Error::unsupported(
            "a Kiln file's head is read by kiln-nostd's checker, not here",
        )),
    }
}

/// The head of a safetensors file; the verdict of
/// [`read_safetensors`](crate::read_safetensors) on the whole file on a
/// 64-bit host, on every target.
///
/// The header is read by the conversions' own header reader
/// ([`read_safetensors_header`](crate::read_safetensors_header)), which
/// holds offsets and dimensions in 64 bits: the safetensors crate's
/// `Metadata` holds them as `usize`, which on a 32-bit target (wasm32)
/// cannot hold the offsets of a file past 4 GiB. The tests check the
/// verdict against [`read_safetensors`](crate::read_safetensors) on every
/// prefix of the fixtures and hostile headers.
pub fn safetensors_head(prefix: &[u8], file_len: u64) -> Result<Step> {
    let header = match read_header(prefix, file_len) {
        Ok(header) => header,
        Err(Refused::ShortHead { needed }) => return Ok(Step::Need(needed)),
        Err(Refused::Crate(e)) => return Err(read_error(prefix, file_len, e)),
    };
    let data_start = header.data_start() as u64;
    // In the order of their data; tensors of no bytes at one offset, by name.
    let tensors = data_order(&header)
        .into_iter()
        .filter_map(|(start, end, i)| {
            let t = header.tensors.get(i as usize)?;
            let shape = header.shape(t).to_vec();
            Some(HeadTensor {
                dtype: kiln_dtype(t.dtype).map(DtypeCode::Closed),
                format_dtype: t.dtype.to_string(),
                layout: None,
                elements: shape.iter().product(),
                shape,
                range: data_start + start..data_start + end,
                name: t.name.to_string(),
            })
        })
        .collect();
    let metadata = header
        .metadata
        .iter()
        .flatten()
        .map(|(key, v)| HeadPair {
            key: key.to_string(),
            value_type: "string".into(),
            value: shown_str(v),
        })
        .collect();
    Ok(Step::Head(Head {
        format: Format::Safetensors,
        version: 0,
        alignment: 0,
        head_len: data_start,
        file_len,
        metadata,
        tensors,
    }))
}

/// The head of a GGUF file; the verdict of
/// [`Gguf::parse`](crate::gguf::Gguf::parse) on the whole file.
pub fn gguf_head(prefix: &[u8], file_len: u64) -> Result<Step> {
    let head = match GgufHead::read(prefix, file_len)? {
        HeadRead::Head(head) => head,
        HeadRead::Need(n) => return Ok(Step::Need(n)),
    };
    let tensors = head
        .tensors
        .iter()
        .map(|t| HeadTensor {
            name: t.name.into(),
            dtype: Some(t.ggml.kiln_dtype()),
            format_dtype: t.ggml.name.into(),
            layout: layout_of(t.ggml),
            shape: t.dims.iter().rev().copied().collect(),
            // A block type packs several elements a byte, so the count
            // may pass 64 bits where the byte length does not.
            elements: t.dims.iter().fold(1u64, |a, &d| a.saturating_mul(d)),
            range: t.start..t.start + t.len,
        })
        .collect();
    Ok(Step::Head(Head {
        format: Format::Gguf,
        version: head.version,
        alignment: head.alignment,
        head_len: head.head_len,
        file_len,
        metadata: head.metadata.iter().map(gguf_pair).collect(),
        tensors,
    }))
}

fn layout_of(ggml: &'static GgmlType) -> Option<Layout> {
    ggml.closed.is_none().then_some(Layout {
        name: ggml.name,
        block_elements: ggml.block_elements,
        block_bytes: ggml.block_bytes,
    })
}

/// What [`open_head`] read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct HeadReads {
    /// Bytes read.
    pub bytes: u64,
    /// How many reads.
    pub requests: u64,
}

/// Reads the head of a `format` file of `file_len` bytes through
/// `read(offset, buf)` (fill `buf` with the bytes at `offset`): first
/// [`FIRST_READ`] bytes (or the file), then, while the head needs more,
/// the bytes up to what it needs or a quarter more than held, whichever
/// is larger. Each read appends: no byte is read twice, and the bytes
/// read are at most the head plus a quarter of it plus [`FIRST_READ`].
pub fn open_head(
    format: Format,
    file_len: u64,
    mut read: impl FnMut(u64, &mut [u8]) -> Result<()>,
) -> Result<(Head, HeadReads)> {
    let mut prefix: Vec<u8> = Vec::new();
    let mut reads = HeadReads::default();
    let mut want = FIRST_READ.min(file_len);
    loop {
        if want > prefix.len() as u64 {
            let have = prefix.len();
            let grown = usize::try_from(want).map_err(|_| too_large(want))?;
            prefix.resize(grown, 0);
            read(have as u64, &mut prefix[have..])?;
            reads.bytes += (grown - have) as u64;
            reads.requests += 1;
        }
        match read_head(format, &prefix, file_len)? {
            Step::Head(head) => return Ok((head, reads)),
            Step::Need(n) => {
                let have = prefix.len() as u64;
                if n <= have {
                    return Err(Error::unsupported(
                        "the head reader asked for bytes it holds",
                    ));
                }
                let next = n.max(have + have / 4).min(file_len);
                if next > MAX_HEAD {
                    return Err(too_large(n));
                }
                want = next;
            }
        }
    }
}

fn too_large(n: u64) -> Error {
    Error::unsupported(format!(
        "the file's head needs {n} bytes, more than the {MAX_HEAD} an inspector holds"
    ))
}

// ---------------------------------------------------------------------------
// Metadata values for display

fn shown_str(s: &str) -> String {
    match s.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

fn gguf_pair(kv: &MetadataKv<'_>) -> HeadPair {
    let mut r = Raw(kv.raw);
    let (value_type, value) = if kv.value_type == ValueType::Array {
        let elem = r.u32().and_then(ValueType::from_id);
        let count = r.u64().unwrap_or(0);
        let type_name = elem.map_or("?", gguf_type_name);
        let mut items = Vec::new();
        if let Some(elem) = elem {
            for _ in 0..count.min(SHOWN_ITEMS as u64) {
                match one_value(&mut r, elem) {
                    Some(text) => items.push(text),
                    None => break,
                }
            }
        }
        let more = if count > items.len() as u64 {
            ", …"
        } else {
            ""
        };
        (
            format!("array<{type_name}>[{count}]"),
            format!("[{}{more}]", items.join(", ")),
        )
    } else {
        (
            gguf_type_name(kv.value_type).to_string(),
            one_value(&mut r, kv.value_type).unwrap_or_default(),
        )
    };
    HeadPair {
        key: kv.key.into(),
        value_type,
        value,
    }
}

fn gguf_type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::String => "string",
        ValueType::Array => "array",
        other => other.element_text(),
    }
}

/// Bytes of a value the GGUF reader has checked.
struct Raw<'a>(&'a [u8]);

impl<'a> Raw<'a> {
    fn take(&mut self, n: u64) -> Option<&'a [u8]> {
        let n = usize::try_from(n).ok()?;
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N as u64)?.try_into().ok()
    }
    fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }
}

/// One value of type `t` as text; an inner array is shown by its type and
/// length and skipped.
fn one_value(r: &mut Raw<'_>, t: ValueType) -> Option<String> {
    Some(match t {
        ValueType::U8 => r.array::<1>()?[0].to_string(),
        ValueType::I8 => (r.array::<1>()?[0] as i8).to_string(),
        ValueType::U16 => u16::from_le_bytes(r.array()?).to_string(),
        ValueType::I16 => i16::from_le_bytes(r.array()?).to_string(),
        ValueType::U32 => r.u32()?.to_string(),
        ValueType::I32 => i32::from_le_bytes(r.array()?).to_string(),
        ValueType::F32 => f32::from_le_bytes(r.array()?).to_string(),
        ValueType::Bool => (r.array::<1>()?[0] != 0).to_string(),
        ValueType::U64 => r.u64()?.to_string(),
        ValueType::I64 => i64::from_le_bytes(r.array()?).to_string(),
        ValueType::F64 => f64::from_le_bytes(r.array()?).to_string(),
        ValueType::String => {
            let len = r.u64()?;
            let s = core::str::from_utf8(r.take(len)?).ok()?;
            format!("{:?}", shown_str(s))
        }
        ValueType::Array => {
            let elem = ValueType::from_id(r.u32()?)?;
            let count = r.u64()?;
            for _ in 0..count {
                one_value(r, elem)?;
            }
            format!("array<{}>[{count}]", gguf_type_name(elem))
        }
    })
}
