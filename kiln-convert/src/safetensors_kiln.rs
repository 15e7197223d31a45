//! safetensors ⇄ Kiln.
//!
//! Reading uses the `safetensors` crate's own checks
//! ([`SafeTensors::read_metadata`]); writing builds the header from the
//! crate's own `Metadata` and its `Serialize`, in the order its writer
//! uses, so the header bytes are exactly the ones its writer makes.
//! Payloads never go through a buffer of the whole file: they are written
//! once, from the input slice straight into the output writer.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use kiln_nostd::{frame, Dtype, DtypeCode, Encode, Quant, TensorSpec, Tensors};
use safetensors::tensor::{Metadata, SafeTensorError, SafeTensors, TensorInfo, View};

use crate::error::{Error, Result};
use crate::heap::check_heap;
use crate::message::{self, MessageType, LIMITS};
use crate::sink::WriteSink;
use crate::Summary;

/// The Kiln dtype of a safetensors dtype, for the dtypes Kiln has.
pub fn kiln_dtype(d: safetensors::Dtype) -> Option<Dtype> {
    use safetensors::Dtype as S;
    Some(match d {
        S::F64 => Dtype::F64,
        S::F32 => Dtype::F32,
        S::F16 => Dtype::F16,
        S::BF16 => Dtype::Bf16,
        S::F8_E4M3 => Dtype::F8E4M3,
        S::F8_E5M2 => Dtype::F8E5M2,
        S::F8_E8M0 => Dtype::E8M0,
        S::BOOL => Dtype::Bool,
        S::I8 => Dtype::I8,
        S::U8 => Dtype::U8,
        S::I16 => Dtype::I16,
        S::U16 => Dtype::U16,
        S::I32 => Dtype::I32,
        S::U32 => Dtype::U32,
        S::I64 => Dtype::I64,
        S::U64 => Dtype::U64,
        _ => return None,
    })
}

/// The safetensors dtype of a Kiln dtype, for the dtypes safetensors has
/// (the inverse of [`kiln_dtype`]).
pub fn safetensors_dtype(d: Dtype) -> Option<safetensors::Dtype> {
    use safetensors::Dtype as S;
    Some(match d {
        Dtype::F64 => S::F64,
        Dtype::F32 => S::F32,
        Dtype::F16 => S::F16,
        Dtype::Bf16 => S::BF16,
        Dtype::F8E4M3 => S::F8_E4M3,
        Dtype::F8E5M2 => S::F8_E5M2,
        Dtype::E8M0 => S::F8_E8M0,
        Dtype::Bool => S::BOOL,
        Dtype::I8 => S::I8,
        Dtype::U8 => S::U8,
        Dtype::I16 => S::I16,
        Dtype::U16 => S::U16,
        Dtype::I32 => S::I32,
        Dtype::U32 => S::U32,
        Dtype::I64 => S::I64,
        Dtype::U64 => S::U64,
        Dtype::I4 | Dtype::U4 | Dtype::E2M1 => return None,
    })
}

/// Byte offset in the file of (1-based) `line` and `column` of the JSON
/// header that starts at byte 8.
fn json_offset(header: &[u8], line: usize, column: usize) -> u64 {
    let line_start: usize = header
        .split(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    (8 + line_start + column.saturating_sub(1)) as u64
}

/// Our error for a safetensors file the crate refused, with the offset
/// where we can tell it.
fn read_error(input: &[u8], e: SafeTensorError) -> Error {
    let n = input
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes);
    let header = n
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| input.get(8..8usize.checked_add(n)?))
        .unwrap_or_default();
    let len = input.len();
    match e {
        SafeTensorError::HeaderTooSmall => Error::safetensors(
            Some(0),
            format!("the file has {len} bytes, fewer than the 8 of its header length"),
        ),
        SafeTensorError::HeaderTooLarge => Error::safetensors(
            Some(0),
            format!(
                "header length {} is above the safetensors limit of 100,000,000 bytes",
                n.unwrap_or(0)
            ),
        ),
        SafeTensorError::InvalidHeaderLength => Error::safetensors(
            Some(0),
            format!(
                "header length {} runs past the end of the {len}-byte file",
                n.unwrap_or(0)
            ),
        ),
        SafeTensorError::InvalidHeader(utf8) => Error::safetensors(
            Some(8 + utf8.valid_up_to() as u64),
            "the JSON header is not UTF-8",
        ),
        SafeTensorError::InvalidHeaderDeserialization(json) => {
            if let Some(err) = unknown_dtype(header) {
                return err;
            }
            Error::safetensors(
                Some(json_offset(header, json.line(), json.column())),
                format!("the JSON header is not a safetensors header: {json}"),
            )
        }
        SafeTensorError::InvalidOffset(name) => Error::safetensors(
            Some(8),
            format!(
                "tensor {name:?}: its data_offsets do not start where the previous tensor's end \
                 (safetensors data must cover the data section in order, without gaps)"
            ),
        ),
        SafeTensorError::MetadataIncompleteBuffer => Error::safetensors(
            Some(8 + header.len() as u64),
            format!(
                "the tensors' data_offsets do not end at the end of the file ({} data bytes follow the header)",
                len.saturating_sub(8 + header.len())
            ),
        ),
        other => Error::safetensors(Some(8), format!("the header is not valid: {other}")),
    }
}

/// A tensor whose dtype string safetensors does not know, named.
fn unknown_dtype(header: &[u8]) -> Option<Error> {
    let serde_json::Value::Object(map) = serde_json::from_slice(header).ok()? else {
        return None;
    };
    map.iter()
        .filter(|(name, _)| name.as_str() != "__metadata__")
        .find_map(|(name, info)| {
            let dtype = info.get("dtype")?;
            serde_json::from_value::<safetensors::Dtype>(dtype.clone())
                .is_err()
                .then(|| {
                    Error::safetensors(
                        Some(8),
                        format!(
                            "tensor {name:?} has dtype {dtype}, which safetensors does not define"
                        ),
                    )
                })
        })
}

/// Reads and checks a safetensors header with the safetensors crate's own
/// checks: the header's JSON length and its [`Metadata`] (tensor
/// dtypes, shapes, data offsets, `__metadata__`). The data section starts
/// at byte `8 + length`. A refusal is one [`Error`] with the byte offset
/// where it can be told.
pub fn read_safetensors(input: &[u8]) -> Result<(usize, Metadata)> {
    SafeTensors::read_metadata(input).map_err(|e| read_error(input, e))
}

/// Converts a safetensors file to one framed Kiln message of type
/// [`message::SAFETENSORS_MESSAGE`], written to `out`.
///
/// `__metadata__` becomes the `metadata` dict (empty when absent). The
/// tensors go into the directory sorted by name bytes, each payload copied
/// once from `input` to `out`, bit for bit.
pub fn safetensors_to_kiln<W: Write>(input: &[u8], out: W) -> Result<Summary> {
    let (n, meta) = read_safetensors(input)?;
    let data = input.get(8 + n..).unwrap_or_default();
    let metadata: BTreeMap<&str, &str> = meta
        .metadata()
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let infos = meta.tensors();
    let mut names: Vec<&str> = infos.keys().map(String::as_str).collect();
    names.sort_unstable();

    let mut shapes = Vec::with_capacity(names.len());
    let mut dtypes = Vec::with_capacity(names.len());
    for &name in &names {
        let info = infos[name];
        let dtype = kiln_dtype(info.dtype).ok_or_else(|| {
            Error::unsupported(format!(
                "tensor {name:?} has safetensors dtype {}, which has no Kiln dtype (Kiln takes \
                 F64 F32 F16 BF16 F8_E4M3 F8_E5M2 F8_E8M0 BOOL I8 U8 I16 U16 I32 U32 I64 U64)",
                info.dtype
            ))
        })?;
        if info.shape.len() > 8 {
            return Err(Error::unsupported(format!(
                "tensor {name:?} has {} dimensions; a Kiln tensor has at most 8",
                info.shape.len()
            )));
        }
        dtypes.push(dtype);
        shapes.push(info.shape.iter().map(|&d| d as u64).collect::<Vec<u64>>());
    }
    check_heap(names.iter().map(|&n| (n, None)), "the safetensors file")?;

    let mut specs = Vec::with_capacity(names.len());
    let mut payload_bytes = 0u64;
    for ((&name, shape), &dtype) in names.iter().zip(&shapes).zip(&dtypes) {
        let (start, end) = infos[name].data_offsets;
        let bytes = data.get(start..end).ok_or_else(|| {
            Error::safetensors(
                Some(8 + n as u64),
                format!("tensor {name:?} lies outside the data"),
            )
        })?;
        payload_bytes += bytes.len() as u64;
        specs.push(TensorSpec::new(dtype, shape, bytes).named(name));
    }

    let written = crate::sink::write_message(out, |w| {
        frame::write_header(w, MessageType::Safetensors.hash())?;
        w.count(metadata.len(), LIMITS.count_cap)?;
        for (k, v) in &metadata {
            k.encode(w)?;
            v.encode(w)?;
        }
        Tensors(&specs).encode(w)
    })?;
    Ok(Summary {
        tensors: specs.len(),
        metadata: metadata.len(),
        payload_bytes,
        written,
    })
}

/// A borrowed tensor of a Kiln directory as a safetensors [`View`].
#[derive(Clone, Debug)]
pub struct BorrowedView<'a> {
    dtype: safetensors::Dtype,
    shape: Vec<usize>,
    data: &'a [u8],
}

impl View for BorrowedView<'_> {
    fn dtype(&self) -> safetensors::Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// The contents of a Kiln message of type
/// [`message::SAFETENSORS_MESSAGE`]: its metadata, and each tensor as a
/// safetensors [`View`] borrowing the message's bytes, in directory order.
/// Hand these to `safetensors::serialize` or `serialize_to_file`.
pub type SafetensorsParts<'a> = (
    Option<HashMap<String, String>>,
    Vec<(&'a str, BorrowedView<'a>)>,
);

/// Reads a Kiln message of type [`message::SAFETENSORS_MESSAGE`] into
/// safetensors views; nothing is copied. An empty `metadata` dict gives
/// `None` (no `__metadata__`).
pub fn kiln_safetensors_parts(input: &[u8]) -> Result<SafetensorsParts<'_>> {
    let mut fields = message::open(input, MessageType::Safetensors)?;
    let count = fields.u32()?;
    let mut metadata = HashMap::new();
    for _ in 0..count {
        let key = fields.str()?;
        let value = fields.str()?;
        metadata.insert(key.to_string(), value.to_string());
    }
    let dir = fields.directory()?;
    let mut views = Vec::with_capacity(dir.len());
    for t in &dir {
        let name = t.name().ok_or_else(|| {
            Error::unsupported(format!(
                "tensor {} has no name; safetensors needs one",
                t.index()
            ))
        })?;
        let dtype = match t.dtype() {
            DtypeCode::Closed(d) => safetensors_dtype(d),
            DtypeCode::Opaque(_) => None,
        }
        .ok_or_else(|| {
            Error::unsupported(format!(
                "tensor {name:?} has Kiln dtype {}, which safetensors has no dtype for",
                dtype_name(t.dtype(), t.layout())
            ))
        })?;
        if t.quant() != Quant::None {
            return Err(Error::unsupported(format!(
                "tensor {name:?} links scale tensors; safetensors cannot record that"
            )));
        }
        let shape = t
            .shape()
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| {
                Error::unsupported(format!(
                    "tensor {name:?}: a dimension does not fit in memory"
                ))
            })?;
        views.push((
            name,
            BorrowedView {
                dtype,
                shape,
                data: t.bytes(),
            },
        ));
    }
    let metadata = (!metadata.is_empty()).then_some(metadata);
    Ok((metadata, views))
}

fn dtype_name(code: DtypeCode, layout: Option<&str>) -> String {
    match code {
        DtypeCode::Closed(d) => d.name().to_string(),
        DtypeCode::Opaque(c) => format!("{c} ({})", layout.unwrap_or("?")),
    }
}

/// The safetensors crate's header limit.
const MAX_HEADER_LEN: usize = 100_000_000;

/// The 8-byte length and the JSON header that `safetensors::serialize`
/// writes for `views` and `metadata`, and the tensor names in the order
/// their data follows.
///
/// The header is the crate's own: its [`Metadata`] (which checks the
/// offsets, dtypes and shapes) serialized by its own `Serialize`. What is
/// done here is only what `serialize` does around it: order the tensors by
/// descending dtype alignment, then by name; lay the offsets end to end;
/// pad the JSON with spaces to a multiple of 8. `serialize` itself is not
/// called because it reserves a buffer the size of the whole file, which
/// for a model larger than memory fails. Tests compare the result with
/// `serialize` and with Python's writer.
fn header<'a>(
    views: &[(&'a str, BorrowedView<'_>)],
    metadata: Option<HashMap<String, String>>,
) -> Result<(Vec<u8>, Vec<&'a str>)> {
    let mut sorted: Vec<_> = views.iter().collect();
    sorted.sort_by(|(ln, l), (rn, r)| r.dtype.cmp(&l.dtype).then(ln.cmp(rn)));
    let mut offset = 0usize;
    let mut infos = Vec::with_capacity(sorted.len());
    for (name, view) in &sorted {
        let end = offset
            .checked_add(view.data.len())
            .ok_or_else(|| Error::unsupported("the data section overflows"))?;
        infos.push((
            name.to_string(),
            TensorInfo {
                dtype: view.dtype,
                shape: view.shape.clone(),
                data_offsets: (offset, end),
            },
        ));
        offset = end;
    }
    let refused = |e: &dyn std::fmt::Display| {
        Error::unsupported(format!("the safetensors writer refused the tensors: {e}"))
    };
    let meta = Metadata::new(metadata, infos).map_err(|e| refused(&e))?;
    let mut json = serde_json::to_string(&meta)
        .map_err(|e| refused(&e))?
        .into_bytes();
    json.resize(json.len().next_multiple_of(8), b' ');
    if json.len() > MAX_HEADER_LEN {
        return Err(Error::unsupported(format!(
            "the safetensors header would be {} bytes, above the format's limit of 100,000,000",
            json.len()
        )));
    }
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.append(&mut json);
    Ok((bytes, sorted.into_iter().map(|(name, _)| *name).collect()))
}

/// Converts a Kiln message of type [`message::SAFETENSORS_MESSAGE`] back to
/// a safetensors file, written to `out`.
///
/// The header is the one `safetensors::serialize` makes for these tensors
/// and metadata (tensors ordered by dtype alignment, then name), built
/// from the crate's own `Metadata`, so the bytes equal what the
/// safetensors crate writes. The payloads follow in
/// the header's order, each copied once from `input` to `out`.
pub fn kiln_to_safetensors<W: Write>(input: &[u8], out: W) -> Result<Summary> {
    let (metadata, views) = kiln_safetensors_parts(input)?;
    let metadata_len = metadata.as_ref().map_or(0, HashMap::len);
    let (header, order) = header(&views, metadata)?;
    let by_name: HashMap<&str, &[u8]> = views.iter().map(|(n, v)| (*n, v.data)).collect();

    let mut sink = WriteSink::new(out);
    sink.write_all(&header)?;
    let mut payload_bytes = 0u64;
    for name in &order {
        let data = by_name.get(name).copied().unwrap_or_default();
        sink.write_all(data)?;
        payload_bytes += data.len() as u64;
    }
    let (_, written) = sink.finish()?;
    Ok(Summary {
        tensors: views.len(),
        metadata: metadata_len,
        payload_bytes,
        written,
    })
}
