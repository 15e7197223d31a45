//! safetensors ⇄ Kiln.
//!
//! Reading gives the verdict of the `safetensors` crate's own checks
//! ([`SafeTensors::read_metadata`] on a 64-bit host), by a faster reader
//! of our own that leaves every header outside its strict subset to a
//! serde reader of the crate's header shapes with 64-bit sizes
//! (`safetensors_header`); writing makes the header text the crate's
//! `Metadata` serializes to (`safetensors_json`), in the order its writer
//! uses, so the header bytes are exactly the ones its writer makes.
//! Payloads never go through a buffer of the whole file: they are written
//! once, from the input slice straight into the output writer.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;

use kiln_nostd::{
    frame, Directory, Dtype, DtypeCode, Encode, Shape, TensorSpec, TensorView, Tensors,
};
use safetensors::tensor::{Metadata, SafeTensorError, SafeTensors, View};

use crate::error::{Error, Result};
use crate::heap::split;
use crate::message::{self, MessageType, SafetensorsFile, SafetensorsMessage, LIMITS};
use crate::model::{self, Message};
use crate::safetensors_header::{
    read_header, HeaderTensor, Refused, SafetensorsHeader, MAX_HEADER_LEN,
};
use crate::safetensors_json::{
    needs_escape, Cursor, Entry, HeaderText, Measure, Writer, ENTRY_ROOM,
};
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
        // Two FP4 (e2m1) values a byte, the first in the low nibble, and a
        // shape that counts the values: Kiln's e2m1 (spec/conversion.md).
        S::F4 => Dtype::E2M1,
        _ => return None,
    })
}

/// The safetensors dtypes Kiln has no dtype for, each carried as an opaque
/// layout: its code, its layout name (the safetensors name, which the
/// inspection shows as the tensor's dtype) and its block in bytes (the
/// smallest whole number of bytes of whole elements). Converting back
/// restores the dtype from all three.
const FOREIGN_LAYOUTS: [(safetensors::Dtype, u16, &str, u32); 5] = [
    (safetensors::Dtype::C64, 8193, "C64", 8),
    (safetensors::Dtype::F6_E2M3, 8194, "F6_E2M3", 3),
    (safetensors::Dtype::F6_E3M2, 8195, "F6_E3M2", 3),
    (safetensors::Dtype::F8_E4M3FNUZ, 8196, "F8_E4M3FNUZ", 1),
    (safetensors::Dtype::F8_E5M2FNUZ, 8197, "F8_E5M2FNUZ", 1),
];

/// The opaque layout that carries safetensors dtype `d` when Kiln has no
/// dtype for it: (code, layout name, block bytes).
pub fn foreign_layout(d: safetensors::Dtype) -> Option<(u16, &'static str, u32)> {
    FOREIGN_LAYOUTS
        .iter()
        .find(|f| f.0 == d)
        .map(|&(_, code, name, block)| (code, name, block))
}

/// The safetensors dtype an opaque layout carries (the inverse of
/// [`foreign_layout`]): the code, the name and the block must all be its.
pub fn foreign_dtype(code: u16, layout: Option<&str>, block: u32) -> Option<safetensors::Dtype> {
    FOREIGN_LAYOUTS
        .iter()
        .find(|f| f.1 == code && Some(f.2) == layout && f.3 == block)
        .map(|f| f.0)
}

/// Whether a tensor of safetensors dtype `d` converts.
fn dtype_converts(d: safetensors::Dtype) -> bool {
    kiln_dtype(d).is_some() || foreign_layout(d).is_some()
}

/// The spec of a tensor of safetensors dtype `d`: a Kiln dtype, or the
/// opaque layout that carries it.
#[inline(always)]
fn spec_of<'a>(d: safetensors::Dtype, shape: &'a [u64], bytes: &'a [u8]) -> Option<TensorSpec<'a>> {
    if let Some(dtype) = kiln_dtype(d) {
        return Some(TensorSpec::new(dtype, shape, bytes));
    }
    let (code, layout, block) = foreign_layout(d)?;
    Some(TensorSpec::opaque(code, layout, block, shape, bytes))
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
        Dtype::E2M1 => S::F4,
        Dtype::I4 | Dtype::U4 => return None,
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

/// Our error for a safetensors file of `file_len` bytes the crate refused,
/// with the offset where we can tell it; `input` holds at least the file's
/// header (the whole file, or its head: see `crate::head`).
pub(crate) fn read_error(input: &[u8], file_len: u64, e: SafeTensorError) -> Error {
    let n = input
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes);
    let header = n
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| input.get(8..8usize.checked_add(n)?))
        .unwrap_or_default();
    let len = file_len;
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
                len.saturating_sub(8 + header.len() as u64)
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
/// where it can be told. [`read_safetensors_header`] gives the same
/// verdict faster, with borrowed names.
pub fn read_safetensors(input: &[u8]) -> Result<(usize, Metadata)> {
    SafeTensors::read_metadata(input).map_err(|e| read_error(input, input.len() as u64, e))
}

/// Reads and checks the header of a safetensors file of `file_len` bytes
/// from `head`, its first bytes: at least the 8-byte length and the JSON
/// header (the whole file will do), so a reader of a file's head needs
/// nothing more. The verdict is [`SafeTensors::read_metadata`]'s on the
/// whole file on a 64-bit host, and so is the error, on every target:
/// offsets and dimensions are 64-bit, so a file past 4 GiB reads on
/// wasm32 too. Names are borrowed from `head` where they have no escapes,
/// tensors sorted by name bytes.
pub fn read_safetensors_header(head: &[u8], file_len: u64) -> Result<SafetensorsHeader<'_>> {
    read_header(head, file_len).map_err(|refused| match refused {
        Refused::Crate(e) => read_error(head, file_len, e),
        Refused::ShortHead { needed } => Error::safetensors(
            Some(head.len() as u64),
            format!(
                "only the first {} bytes were given; the header needs {needed}",
                head.len()
            ),
        ),
    })
}

/// One safetensors file read for conversion: its checked header and data
/// section, every tensor already known to convert. The tensor specs are
/// made one directory at a time ([`ShardIn::specs_into`]), into one
/// buffer the size of a directory: a table of every tensor's spec at once
/// is megabytes for a large model, and each of its pages is a page fault
/// that costs more than filling the spec.
struct ShardIn<'a> {
    file: &'a str,
    metadata: Vec<(&'a str, &'a str)>,
    header: &'a SafetensorsHeader<'a>,
    data: &'a [u8],
    payload_bytes: u64,
}

impl<'a> ShardIn<'a> {
    fn names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.header.tensors.iter().map(|t| t.name.as_ref())
    }

    /// Replaces `specs` by the specs of tensors `range` (of the sorted
    /// names), the Kiln dtype, shape and payload of each.
    fn specs_into(
        &self,
        range: std::ops::Range<usize>,
        specs: &mut Vec<TensorSpec<'a>>,
        what: &str,
    ) -> Result<()> {
        specs.clear();
        let tensors = self.header.tensors.get(range).unwrap_or_default();
        // `read_shard` found every tensor to convert: the spec without the
        // words of a refusal, which only `tensor_spec` builds. One `extend`
        // over the slice, which knows its length: no room check a spec.
        let mut all = true;
        specs.extend(tensors.iter().map(|t| {
            plain_spec(self.header, self.data, t).unwrap_or_else(|| {
                all = false;
                TensorSpec::new(Dtype::U8, &[], &[])
            })
        }));
        if !all {
            // Never taken (see above): the refusal, in `tensor_spec`'s words.
            specs.clear();
            for t in tensors {
                specs.push(tensor_spec(self.header, self.data, t, what)?);
            }
        }
        Ok(())
    }
}

/// Refuses a dtype that neither converts to a Kiln dtype nor travels as an
/// opaque layout (one the pinned safetensors does not define).
fn dtype_for(name: &str, dtype: safetensors::Dtype) -> Result<()> {
    if dtype_converts(dtype) {
        return Ok(());
    }
    Err(Error::unsupported(format!(
        "tensor {name:?} has safetensors dtype {dtype}, which this converter does not know"
    )))
}

/// The spec of tensor `t` of `header`, its payload in `data` (the data
/// section), or why it does not convert.
fn tensor_spec<'a>(
    header: &'a SafetensorsHeader<'a>,
    data: &'a [u8],
    t: &'a HeaderTensor<'a>,
    what: &str,
) -> Result<TensorSpec<'a>> {
    let name = t.name.as_ref();
    dtype_for(name, t.dtype)?;
    let shape = header.shape(t);
    if shape.len() > 8 {
        return Err(Error::unsupported(format!(
            "{what}: tensor {name:?} has {} dimensions; a Kiln tensor has at most 8",
            shape.len()
        )));
    }
    let (start, end) = t.data_offsets;
    let range = usize::try_from(start).ok().zip(usize::try_from(end).ok());
    let bytes = range.and_then(|(s, e)| data.get(s..e)).ok_or_else(|| {
        Error::safetensors(
            Some(header.data_start() as u64),
            format!("{what}: tensor {name:?} lies outside the data"),
        )
    })?;
    spec_of(t.dtype, shape, bytes)
        .map(|spec| spec.named(name))
        .ok_or_else(|| Error::unsupported(format!("tensor {name:?}: dtype {}", t.dtype)))
}

/// The spec of tensor `t`, as [`tensor_spec`] makes it, or `None` where
/// that refuses (and says why).
#[inline(always)] // the loop body of `specs_into`
fn plain_spec<'a>(
    header: &'a SafetensorsHeader<'a>,
    data: &'a [u8],
    t: &'a HeaderTensor<'a>,
) -> Option<TensorSpec<'a>> {
    let shape = header.shape(t);
    if shape.len() > 8 {
        return None;
    }
    let (start, end) = t.data_offsets;
    let bytes = data.get(usize::try_from(start).ok()?..usize::try_from(end).ok()?)?;
    Some(spec_of(t.dtype, shape, bytes)?.named(t.name.as_ref()))
}

/// Checks that every tensor of `header` converts (the errors of
/// [`tensor_spec`], found before anything is written).
fn read_shard<'a>(
    file: &'a str,
    input: &'a [u8],
    header: &'a SafetensorsHeader<'a>,
    what: &str,
) -> Result<ShardIn<'a>> {
    let data = input.get(header.data_start()..).unwrap_or_default();
    let metadata = header
        .metadata
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_ref(), v.as_ref()))
        .collect();
    // A checked header's tensors cover its data section, which they
    // tile: when every dtype and rank converts and the section is there,
    // so does every tensor, without a walk.
    #[cfg(not(feature = "small-code"))]
    if header.dtypes().all(dtype_converts)
        && header.max_rank() <= 8
        && header.data_len() <= data.len() as u64
    {
        return Ok(ShardIn {
            file,
            metadata,
            header,
            data,
            payload_bytes: header.data_len(),
        });
    }
    let mut payload_bytes = 0u64;
    for t in &header.tensors {
        let (start, end) = t.data_offsets;
        let converts = dtype_converts(t.dtype)
            && header.shape(t).len() <= 8
            && start <= end
            && end <= data.len() as u64;
        if !converts {
            // The refusal, in the words of the spec that is made later.
            tensor_spec(header, data, t, what)?;
        }
        payload_bytes += end.saturating_sub(start);
    }
    Ok(ShardIn {
        file,
        metadata,
        header,
        data,
        payload_bytes,
    })
}

/// What a shard is called in messages.
fn shard_what(file: &str) -> String {
    if file.is_empty() {
        "the safetensors file".to_string()
    } else {
        format!("shard {file:?}")
    }
}

/// The exact length of the message [`write_safetensors_message`] writes
/// for `shards` cut into directories at `ranges`, from the lengths of its
/// strings, names and payloads; `None` when it overflows.
fn safetensors_message_len(
    index_file: &str,
    index: &str,
    shards: &[ShardIn<'_>],
    ranges: &[Vec<std::ops::Range<usize>>],
) -> Option<u64> {
    use kiln_nostd::encoded_len;
    use message::COUNT_LEN;
    let small = |value: &str| encoded_len(value).ok().map(|n| n as u64);
    // A count before the list of files and before each metadata dict.
    let mut len = frame::FRAME_LEN as u64 + small(index_file)? + small(index)? + COUNT_LEN;
    for (shard, cuts) in shards.iter().zip(ranges) {
        len = len.checked_add(small(shard.file)? + COUNT_LEN)?;
        for (k, v) in &shard.metadata {
            len = len.checked_add(small(k)? + small(v)?)?;
        }
        let blocks = cuts
            .iter()
            .map(|cut| {
                let tensors = shard.header.tensors.get(cut.clone())?;
                Tensors::block_len(tensors.iter().map(|t| {
                    let (start, end) = t.data_offsets;
                    (t.name.len() as u64, end - start)
                }))
            })
            .collect::<Option<Vec<u64>>>()?;
        len = len.checked_add(message::directories_len(len, blocks)?)?;
    }
    Some(len)
}

/// Writes `shards` as one framed [`SafetensorsMessage`](crate::SafetensorsMessage);
/// tells `on_len` its length first.
fn write_safetensors_message<W: Write>(
    out: W,
    index_file: &str,
    index: &str,
    shards: &[ShardIn<'_>],
    on_len: impl FnOnce(u64),
) -> Result<Summary> {
    let mut ranges = Vec::with_capacity(shards.len());
    let mut summary = Summary::default();
    for shard in shards {
        ranges.push(split(
            shard.names().map(|n| (n, None)),
            &shard_what(shard.file),
        )?);
        summary.tensors += shard.header.tensors.len();
        summary.metadata += shard.metadata.len();
        summary.payload_bytes += shard.payload_bytes;
    }
    let expected = safetensors_message_len(index_file, index, shards, &ranges);
    if let Some(len) = expected {
        on_len(len);
    }
    let longest = ranges.iter().flatten().map(|r| r.len()).max().unwrap_or(0);
    let mut specs = Vec::with_capacity(longest);
    let mut failed = None;
    let written = crate::sink::write_message(out, |w| {
        frame::write_header(w, MessageType::Safetensors.hash())?;
        index_file.encode(w)?;
        index.encode(w)?;
        w.count(shards.len(), LIMITS.count_cap)?;
        for (shard, cuts) in shards.iter().zip(&ranges) {
            shard.file.encode(w)?;
            w.count(shard.metadata.len(), LIMITS.count_cap)?;
            for (k, v) in &shard.metadata {
                k.encode(w)?;
                v.encode(w)?;
            }
            let what = shard_what(shard.file);
            message::write_directories_with(w, cuts.len(), |i, w| {
                let range = cuts.get(i).cloned().unwrap_or_default();
                if let Err(e) = shard.specs_into(range, &mut specs, &what) {
                    // Never taken: read_shard made every spec once.
                    failed = Some(e);
                    return Err(kiln_nostd::Error::refused(
                        kiln_nostd::Refusal::NotEncodable,
                        "a tensor does not convert",
                    ));
                }
                Tensors(&specs).encode(w)
            })?;
        }
        Ok(())
    });
    if let Some(e) = failed {
        return Err(e);
    }
    summary.written = written?;
    // Computed apart from the encoder: the two must agree (every
    // conversion test runs this check).
    debug_assert!(
        expected.is_none_or(|len| len == summary.written),
        "message length {expected:?}, written {}",
        summary.written
    );
    Ok(summary)
}

/// Converts a safetensors file to one framed Kiln message
/// ([`SafetensorsMessage`](crate::SafetensorsMessage) with one file),
/// written to `out`.
///
/// `__metadata__` becomes the `metadata` dict (empty when absent). The
/// tensors go into directories sorted by name bytes (as many directories
/// as 64 KiB name heaps need), each payload copied once from `input` to
/// `out`, bit for bit, at a file offset that is a multiple of 64.
pub fn safetensors_to_kiln<W: Write>(input: &[u8], out: W) -> Result<Summary> {
    safetensors_to_kiln_with(input, out, |_| {})
}

/// [`safetensors_to_kiln`], telling `on_len` the output's length before
/// the first byte is written.
pub(crate) fn safetensors_to_kiln_with<W: Write>(
    input: &[u8],
    out: W,
    on_len: impl FnOnce(u64),
) -> Result<Summary> {
    let header = read_safetensors_header(input, input.len() as u64)?;
    let shard = read_shard("", input, &header, "the safetensors file")?;
    write_safetensors_message(out, "", "", &[shard], on_len)
}

/// The shard files a `model.safetensors.index.json` names in its
/// `weight_map`, each once, sorted: the files to read for
/// [`safetensors_set_to_kiln`]. Every name must be a plain file name.
pub fn safetensors_index_files(index: &[u8]) -> Result<Vec<String>> {
    let map = weight_map(index)?;
    let mut files: Vec<String> = map.values().map(|f| f.to_string()).collect();
    files.sort_unstable();
    files.dedup();
    for f in &files {
        message::check_file_name(f)?;
    }
    Ok(files)
}

/// The `weight_map` of an index: tensor name to shard file.
fn weight_map(index: &[u8]) -> Result<HashMap<String, String>> {
    let refused = |what: &str| {
        Error::safetensors(
            None,
            format!(
                "the index is not a safetensors index (JSON with a weight_map of tensor name \
                 to file): {what}"
            ),
        )
    };
    let value: serde_json::Value =
        serde_json::from_slice(index).map_err(|e| refused(&e.to_string()))?;
    let map = value
        .get("weight_map")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| refused("no weight_map object"))?;
    map.iter()
        .map(|(name, file)| match file.as_str() {
            Some(f) => Ok((name.clone(), f.to_string())),
            None => Err(refused(&format!(
                "the weight_map entry of {name:?} is not a file name"
            ))),
        })
        .collect()
}

/// Checks that `weight_map` says exactly which shard holds each tensor:
/// every tensor of every shard is in the map under its own shard, and
/// every entry of the map is in the shard it names. `shards` gives each
/// shard's file name and its tensor names.
fn check_weight_map<'a>(
    map: &HashMap<String, String>,
    shards: impl Iterator<Item = (&'a str, Vec<&'a str>)>,
) -> Result<()> {
    let mut held: HashMap<&str, &str> = HashMap::new();
    for (file, names) in shards {
        for name in names {
            if let Some(other) = held.insert(name, file) {
                return Err(Error::safetensors(
                    None,
                    format!("tensor {name:?} is in both shard {other:?} and shard {file:?}"),
                ));
            }
            match map.get(name) {
                Some(f) if f == file => {}
                Some(f) => {
                    return Err(Error::safetensors(
                        None,
                        format!(
                            "tensor {name:?} is in shard {file:?}, but the index's weight_map \
                             puts it in {f:?}"
                        ),
                    ))
                }
                None => {
                    return Err(Error::safetensors(
                        None,
                        format!(
                            "tensor {name:?} is in shard {file:?}, but the index's weight_map \
                             does not list it"
                        ),
                    ))
                }
            }
        }
    }
    if held.len() != map.len() {
        let mut missing: Vec<(&String, &String)> = map
            .iter()
            .filter(|(name, _)| !held.contains_key(name.as_str()))
            .collect();
        missing.sort();
        if let Some((name, file)) = missing.first() {
            return Err(Error::safetensors(
                None,
                format!(
                    "the index's weight_map puts tensor {name:?} in {file:?}, which does not \
                     hold it"
                ),
            ));
        }
    }
    Ok(())
}

/// Checks a sharded safetensors checkpoint without converting it: every
/// shard is a valid safetensors file and the index's `weight_map` agrees
/// with their contents. Returns each shard's tensor names (sorted), in the
/// order of `shards`: what a tool that shows the whole model (`kiln
/// inspect` of an index) lists.
pub fn check_safetensors_set(
    index: &[u8],
    shards: &[(&str, &[u8])],
) -> Result<Vec<(String, Vec<String>)>> {
    let map = weight_map(index)?;
    let mut listed = Vec::with_capacity(shards.len());
    for (file, bytes) in shards {
        message::check_file_name(file)?;
        let header =
            read_safetensors_header(bytes, bytes.len() as u64).map_err(|e| e.in_file(file))?;
        let names: Vec<String> = header.tensors.iter().map(|t| t.name.to_string()).collect();
        listed.push((file.to_string(), names));
    }
    check_weight_map(
        &map,
        listed
            .iter()
            .map(|(f, names)| (f.as_str(), names.iter().map(String::as_str).collect())),
    )?;
    Ok(listed)
}

/// The set rule of [`check_safetensors_set`] from the shards' tensor names
/// alone (each shard's head already read and checked, as the browser
/// inspector reads them): every shard name a plain file name, and the
/// index's `weight_map` agreeing with the shards, tensor by tensor. The
/// same error, naming the tensor and the files, as the whole-file check.
pub fn check_safetensors_index(index: &[u8], shards: &[(&str, &[&str])]) -> Result<()> {
    let map = weight_map(index)?;
    for (file, _) in shards {
        message::check_file_name(file)?;
    }
    check_weight_map(&map, shards.iter().map(|(f, names)| (*f, names.to_vec())))
}

/// Converts a sharded safetensors checkpoint to one framed Kiln message:
/// `index` is the bytes of the index file named `index_file` (kept as
/// they are, so the index is written back byte for byte), `shards` every
/// file that [`safetensors_index_files`] lists, as (file name, bytes).
/// The weight_map must agree with the shards' contents; a disagreement is
/// an error naming the tensor and the file.
pub fn safetensors_set_to_kiln<W: Write>(
    index_file: &str,
    index: &[u8],
    shards: &[(&str, &[u8])],
    out: W,
) -> Result<Summary> {
    message::check_file_name(index_file)?;
    let index_text = std::str::from_utf8(index)
        .map_err(|_| Error::safetensors(None, "the index file is not UTF-8"))?;
    let map = weight_map(index)?;
    let mut headers = Vec::with_capacity(shards.len());
    for (file, bytes) in shards {
        message::check_file_name(file)?;
        let header =
            read_safetensors_header(bytes, bytes.len() as u64).map_err(|e| e.in_file(file))?;
        headers.push(header);
    }
    let mut ins = Vec::with_capacity(shards.len());
    for ((file, bytes), header) in shards.iter().zip(&headers) {
        let what = format!("shard {file:?}");
        ins.push(read_shard(file, bytes, header, &what)?);
    }
    check_weight_map(&map, ins.iter().map(|s| (s.file, s.names().collect())))?;
    write_safetensors_message(out, index_file, index_text, &ins, |_| {})
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

/// The contents of one safetensors file of a converted Kiln file: its
/// metadata, and each tensor as a safetensors [`View`] borrowing the
/// message's bytes, in directory order. Hand these to
/// `safetensors::serialize` or `serialize_to_file`.
pub type SafetensorsParts<'a> = (
    Option<HashMap<String, String>>,
    Vec<(&'a str, BorrowedView<'a>)>,
);

/// One tensor of a safetensors file, read from a conversion message and
/// checked to be one safetensors can hold.
struct OutTensor<'a> {
    name: &'a str,
    dtype: safetensors::Dtype,
    shape: Shape,
    data: &'a [u8],
}

impl<'a> OutTensor<'a> {
    /// `t`, or why safetensors cannot hold it.
    #[inline(always)] // into each pass's loop, where the large result stays in registers
    fn of(t: &TensorView<'a>) -> Result<OutTensor<'a>> {
        let name = t.name().ok_or_else(|| {
            Error::unsupported(format!(
                "tensor {} has no name; safetensors needs one",
                t.index()
            ))
        })?;
        let dtype = st_dtype(t).ok_or_else(|| {
            Error::unsupported(format!(
                "tensor {name:?} has Kiln dtype {}, which safetensors has no dtype for",
                dtype_name(t.dtype(), t.layout())
            ))
        })?;
        if t.is_quantized() {
            return Err(Error::unsupported(format!(
                "tensor {name:?} links scale tensors; safetensors cannot record that"
            )));
        }
        let shape = t.shape();
        if shape.iter().any(|&d| usize::try_from(d).is_err()) {
            return Err(Error::unsupported(format!(
                "tensor {name:?}: a dimension does not fit in memory"
            )));
        }
        Ok(OutTensor {
            name,
            dtype,
            shape,
            data: t.bytes(),
        })
    }

    /// Its entry in the header.
    #[inline]
    fn entry(&self) -> Entry<'a, &[u64]> {
        Entry {
            name: self.name,
            dtype: self.dtype,
            shape: &self.shape,
            data_len: self.data.len(),
        }
    }
}

/// The metadata of one file of a safetensors conversion message; an
/// empty dict gives `None` (no `__metadata__`).
fn file_metadata(file: &SafetensorsFile<'_>) -> Option<HashMap<String, String>> {
    let metadata: HashMap<String, String> = file
        .metadata
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (!metadata.is_empty()).then_some(metadata)
}

/// The parts of one file of a safetensors conversion message.
fn file_parts<'a>(file: &SafetensorsFile<'a>) -> Result<SafetensorsParts<'a>> {
    let count = file.directories.iter().map(|d| d.tensors.len()).sum();
    let mut views = Vec::with_capacity(count);
    for t in file.directories.iter().flat_map(|d| d.tensors.iter()) {
        let t = OutTensor::of(&t)?;
        let view = BorrowedView {
            dtype: t.dtype,
            shape: t.shape.iter().map(|&d| d as usize).collect(),
            data: t.data,
        };
        views.push((t.name, view));
    }
    Ok((file_metadata(file), views))
}

/// The safetensors message of a converted file, opened and checked (as
/// [`Model::open`] checks it; no lookup table is built, since every
/// reader here walks the tensors in order).
fn open_safetensors(input: &[u8]) -> Result<SafetensorsMessage<'_>> {
    match model::open_message(input)? {
        Message::Safetensors(m) => Ok(m),
        Message::Gguf(_) => Err(Error::unsupported(
            "this Kiln file holds a model converted from GGUF; convert it to a .gguf file",
        )),
    }
}

/// Reads a Kiln file converted from one safetensors file into safetensors
/// views; nothing is copied. An empty `metadata` dict gives `None` (no
/// `__metadata__`). A sharded checkpoint is refused (see
/// [`kiln_to_safetensors_set`]).
pub fn kiln_safetensors_parts(input: &[u8]) -> Result<SafetensorsParts<'_>> {
    let message = open_safetensors(input)?;
    match message.files.as_slice() {
        [file] if message.index.is_empty() => file_parts(file),
        files => Err(sharded(files.len())),
    }
}

/// The refusal to write a sharded checkpoint of `files` files as one
/// safetensors file.
fn sharded(files: usize) -> Error {
    Error::unsupported(format!(
        "this Kiln file holds a sharded safetensors checkpoint of {files} files; write them \
         into a folder (kiln convert FILE.kiln OUT/ --shards)"
    ))
}

fn dtype_name(code: DtypeCode, layout: Option<&str>) -> String {
    match code {
        DtypeCode::Closed(d) => d.name().to_string(),
        DtypeCode::Opaque(c) => format!("{c} ({})", layout.unwrap_or("?")),
    }
}

/// The order `safetensors::serialize` writes a file's tensors in: by
/// descending dtype (the crate's order of dtypes, which is by alignment),
/// then by name.
enum Order {
    /// The directories' own order is it.
    Directories,
    /// The names increase through the directories, so taking the tensors
    /// of each dtype in turn (these, descending) in directory order is it:
    /// a walk per dtype, rather than a sort and a table of the tensors.
    ByDtype(Vec<safetensors::Dtype>),
    /// Names in another order: (directory, index) of each tensor, sorted.
    Sorted(Vec<(u32, u32)>),
}

/// The tensors of one file of a safetensors conversion message, each
/// checked to be one safetensors can hold, and the header's order.
struct FileOut<'f, 'a> {
    dirs: Vec<&'f Directory<'a>>,
    /// Per directory: whether no byte of its name heap needs a JSON escape
    /// (one test of each heap, rather than one of each name per pass).
    raw: Vec<bool>,
    order: Order,
    count: usize,
    payload_bytes: u64,
}

/// The safetensors dtype of `t`, when it has one.
fn st_dtype(t: &TensorView<'_>) -> Option<safetensors::Dtype> {
    match t.dtype() {
        DtypeCode::Closed(d) => safetensors_dtype(d),
        DtypeCode::Opaque(code) => foreign_dtype(code, t.layout(), t.block_size()),
    }
}

/// Our error for a header the safetensors writer would refuse.
fn writer_refused(e: String) -> Error {
    Error::unsupported(format!("the safetensors writer refused the tensors: {e}"))
}

impl<'f, 'a> FileOut<'f, 'a> {
    /// Checks every tensor of `file` (the first one safetensors cannot
    /// hold, in directory order, is the error), finds the header's order
    /// and measures the header in it (the crate's refusal of the first
    /// tensor in that order that it refuses is the error).
    fn new(file: &'f SafetensorsFile<'a>, text: &mut HeaderText) -> Result<(Self, Measure)> {
        let dirs: Vec<&'f Directory<'a>> = file.directories.iter().map(|d| &d.tensors).collect();
        let raw = dirs.iter().map(|d| !needs_escape(d.name_heap())).collect();
        let names_increase = model::names_increase(dirs.iter().copied());
        let mut out = FileOut {
            dirs,
            raw,
            order: Order::Directories,
            count: 0,
            payload_bytes: 0,
        };
        // One pass in directory order checks every tensor and, as long as
        // that order is the header's (names increasing, dtypes not),
        // measures the header too: what the converter wrote needs no
        // second pass.
        let mut in_order = names_increase;
        let mut measure = Measure::new(text);
        let mut measured = Ok(());
        let mut previous = None;
        let mut dtypes: Vec<safetensors::Dtype> = Vec::new();
        for (dir, &raw) in out.dirs.iter().zip(&out.raw) {
            for t in dir.iter() {
                let t = OutTensor::of(&t)?;
                out.count += 1;
                out.payload_bytes += t.data.len() as u64;
                if previous != Some(t.dtype) {
                    in_order &= previous.is_none_or(|p| p > t.dtype);
                    previous = Some(t.dtype);
                    if !dtypes.contains(&t.dtype) {
                        dtypes.push(t.dtype);
                    }
                }
                if in_order && measured.is_ok() {
                    measured = measure.add(text, &t.entry(), raw);
                }
            }
        }
        if in_order {
            measured.map_err(writer_refused)?;
            return Ok((out, measure));
        }
        out.order = if names_increase {
            dtypes.sort_unstable_by(|l, r| r.cmp(l));
            Order::ByDtype(dtypes)
        } else {
            out.sorted()
        };
        let mut measure = Measure::new(text);
        out.each(|t, raw| {
            let t = OutTensor::of(t)?;
            measure.add(text, &t.entry(), raw).map_err(writer_refused)
        })?;
        Ok((out, measure))
    }

    /// Every tensor, (directory, index), sorted into the header's order.
    fn sorted(&self) -> Order {
        let mut order: Vec<(u32, u32)> = (0u32..)
            .zip(&self.dirs)
            .flat_map(|(d, dir)| (0..dir.len() as u32).map(move |i| (d, i)))
            .collect();
        let key = |&(d, i): &(u32, u32)| {
            let t = self.dirs.get(d as usize)?.get(i as usize)?;
            Some((st_dtype(&t), t.name()))
        };
        // Names are unique, so the order is total and an unstable sort
        // gives the stable sort's result.
        order.sort_unstable_by(|l, r| {
            let (l, r) = (key(l), key(r));
            let dtype = r.map(|(d, _)| d).cmp(&l.map(|(d, _)| d));
            dtype.then(l.map(|(_, n)| n).cmp(&r.map(|(_, n)| n)))
        });
        Order::Sorted(order)
    }

    /// Calls `f` on every tensor in the header's order, with whether its
    /// name needs no escape.
    fn each(&self, mut f: impl FnMut(&TensorView<'a>, bool) -> Result<()>) -> Result<()> {
        let dirs = self.dirs.iter().zip(&self.raw);
        match &self.order {
            Order::Directories => {
                for (dir, &raw) in dirs {
                    for t in dir.iter() {
                        f(&t, raw)?;
                    }
                }
            }
            Order::ByDtype(dtypes) => {
                for &dtype in dtypes {
                    for (dir, &raw) in dirs.clone() {
                        for t in dir.iter().filter(|t| st_dtype(t) == Some(dtype)) {
                            f(&t, raw)?;
                        }
                    }
                }
            }
            Order::Sorted(order) => {
                for &(d, i) in order {
                    let dir = self.dirs.get(d as usize);
                    let raw = self.raw.get(d as usize).copied().unwrap_or(false);
                    if let Some(t) = dir.and_then(|dir| dir.get(i as usize)) {
                        f(&t, raw)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Bytes gathered before they go to the sink: the header's JSON is made
/// in it piece by piece (never as one buffer the header's size, which for
/// a model of many tensors is megabytes of fresh pages), and small
/// payloads are copied into it rather than written one call each.
const STAGE_LEN: usize = 128 << 10;

/// Payloads at least this long go from the input to the sink as they are.
const STAGE_DIRECT: usize = 64 << 10;

/// Bytes on their way to a [`WriteSink`], gathered in a buffer of at most
/// [`STAGE_LEN`] bytes (it grows past that only for an entry with a name
/// longer than that).
struct Stage<W: Write> {
    sink: WriteSink<W>,
    /// Zeroed once; the first `filled` bytes wait for the sink.
    buf: Vec<u8>,
    filled: usize,
    /// How many bytes went to the sink so far.
    sent: usize,
    /// Whether a write did not fit in the room it was given.
    overflowed: bool,
}

impl<W: Write> Stage<W> {
    /// A stage for an output of `len` bytes.
    fn new(out: W, len: u64) -> Stage<W> {
        let room = usize::try_from(len).map_or(STAGE_LEN, |len| len.min(STAGE_LEN));
        Stage {
            sink: WriteSink::new(out),
            buf: vec![0; room],
            filled: 0,
            sent: 0,
            overflowed: false,
        }
    }

    /// Calls `f` with a cursor that has `room` bytes of room.
    #[inline(always)] // as OutTensor::of
    fn write<R>(&mut self, room: usize, f: impl FnOnce(&mut Cursor<'_>) -> R) -> Result<R> {
        if self.buf.len() - self.filled < room {
            self.flush()?;
            if self.buf.len() < room {
                self.buf.resize(room, 0);
            }
        }
        let mut cursor = Cursor::new(self.buf.get_mut(self.filled..).unwrap_or_default());
        let result = f(&mut cursor);
        self.filled += cursor.len();
        self.overflowed |= cursor.overflowed();
        Ok(result)
    }

    /// Sends what is gathered to the sink.
    fn flush(&mut self) -> Result<()> {
        self.sink
            .write_all(self.buf.get(..self.filled).unwrap_or_default())?;
        self.sent += self.filled;
        self.filled = 0;
        Ok(())
    }

    /// Appends `data`: copied when short, else sent as it is.
    #[inline(always)] // the copy of a short payload, in its loop
    fn payload(&mut self, data: &[u8]) -> Result<()> {
        if data.len() < STAGE_DIRECT {
            let end = self.filled + data.len();
            if let Some(to) = self.buf.get_mut(self.filled..end) {
                to.copy_from_slice(data);
                self.filled = end;
                return Ok(());
            }
        }
        self.payload_past_room(data)
    }

    /// [`Stage::payload`] of a long payload, or one past the room left.
    fn payload_past_room(&mut self, data: &[u8]) -> Result<()> {
        if data.len() >= STAGE_DIRECT {
            self.flush()?;
            self.sent += data.len();
            return self.sink.write_all(data);
        }
        self.write(data.len(), |out| out.put(data))
    }

    /// How many bytes came so far.
    fn len(&self) -> usize {
        self.sent + self.filled
    }

    /// Sends the rest and gives back what the sink wrote.
    fn finish(mut self) -> Result<u64> {
        self.flush()?;
        let (_, written) = self.sink.finish()?;
        Ok(written)
    }
}

/// Writes one file of a safetensors conversion message.
///
/// The header is the one `safetensors::serialize` makes for these tensors
/// and metadata (see [`crate::safetensors_json`], which writes the text
/// `Metadata`'s `Serialize` writes and makes the checks `Metadata::new`
/// makes). What is done here is what `serialize` does around it: order the
/// tensors by descending dtype alignment, then by name; lay the offsets end
/// to end; pad the JSON with spaces to a multiple of 8. `serialize` itself
/// is not called because it reserves a buffer the size of the whole file,
/// which for a model larger than memory fails. The header is measured
/// first, so that its length can come first and nothing is written for a
/// file that is refused; then made piece by piece. Tests compare the
/// result with `serialize` and with Python's writer.
fn write_safetensors_file<W: Write>(
    file: &SafetensorsFile<'_>,
    out: W,
    on_len: impl FnOnce(u64),
) -> Result<Summary> {
    let metadata = file_metadata(file);
    let mut text = HeaderText::new(metadata.as_ref()).map_err(writer_refused)?;
    let (tensors, measure) = FileOut::new(file, &mut text)?;
    let json_len = measure.json_len();
    let padded = json_len.next_multiple_of(8);
    if padded > MAX_HEADER_LEN {
        return Err(Error::unsupported(format!(
            "the safetensors header would be {padded} bytes, above the format's limit of 100,000,000"
        )));
    }

    let len = (8 + padded as u64).saturating_add(tensors.payload_bytes);
    on_len(len);
    let mut stage = Stage::new(out, len);
    stage.write(8, |out| out.put(&(padded as u64).to_le_bytes()))?;
    let mut writer = stage.write(text.open_len(), |out| Writer::begin(&text, out))?;
    tensors.each(|t, raw| {
        // The checks of `OutTensor::of` passed in `FileOut::new`: here
        // only the fields the entry holds are read.
        let entry = Entry {
            name: t.name().unwrap_or_default(),
            dtype: st_dtype(t).ok_or_else(|| writer_refused("a dtype changed".to_string()))?,
            shape: t.shape(),
            data_len: t.bytes().len(),
        };
        let name = entry.name.len();
        let room = if raw { name } else { name * 6 } + ENTRY_ROOM;
        stage
            .write(room, |out| writer.entry(&mut text, out, &entry, raw))?
            .map_err(writer_refused)
    })?;
    stage.write(1, |out| writer.end(out))?;
    if stage.len() != 8 + json_len || stage.overflowed {
        return Err(Error::unsupported(format!(
            "the safetensors header came out {} bytes long, not the {json_len} it measured",
            stage.len().wrapping_sub(8)
        )));
    }
    let spaces = padded - json_len;
    stage.write(spaces, |out| out.put(&b"       "[..spaces.min(7)]))?;
    match tensors.order {
        // A plain loop: a view that only gives its bytes is never made
        // whole (through `each`, it is made in memory for the closure).
        Order::Directories => {
            for dir in &tensors.dirs {
                for t in dir.iter() {
                    stage.payload(t.bytes())?;
                }
            }
        }
        _ => tensors.each(|t, _| stage.payload(t.bytes()))?,
    }
    let written = stage.finish()?;
    Ok(Summary {
        tensors: tensors.count,
        metadata: metadata.as_ref().map_or(0, HashMap::len),
        payload_bytes: tensors.payload_bytes,
        written,
    })
}

/// Converts a Kiln file made from one safetensors file back to that file,
/// written to `out`.
///
/// The header is the one `safetensors::serialize` makes for these tensors
/// and metadata (tensors ordered by dtype alignment, then name), the text
/// the crate's own `Metadata` serializes to, so the bytes equal what the
/// safetensors crate writes. The payloads follow in
/// the header's order, each copied once from `input` to `out`.
pub fn kiln_to_safetensors<W: Write>(input: &[u8], out: W) -> Result<Summary> {
    kiln_to_safetensors_with(input, out, |_| {})
}

/// [`kiln_to_safetensors`], telling `on_len` the output's length before
/// the first byte is written.
pub(crate) fn kiln_to_safetensors_with<W: Write>(
    input: &[u8],
    out: W,
    on_len: impl FnOnce(u64),
) -> Result<Summary> {
    let message = open_safetensors(input)?;
    match message.files.as_slice() {
        [file] if message.index.is_empty() => write_safetensors_file(file, out, on_len),
        files => Err(sharded(files.len())),
    }
}

/// Converts a Kiln file made from a sharded safetensors checkpoint back to
/// its shards and its index: `create(name)` gives the writer for each
/// file (shards in name order, then the index). The index is written as
/// it was read, and its weight_map is checked against the shards first.
pub fn kiln_to_safetensors_set<W: Write>(
    input: &[u8],
    mut create: impl FnMut(&str) -> std::io::Result<W>,
) -> Result<Summary> {
    let message = open_safetensors(input)?;
    if message.index.is_empty() {
        return Err(Error::unsupported(
            "this Kiln file holds one safetensors file, not a sharded checkpoint; convert it \
             to a .safetensors file",
        ));
    }
    message::check_file_name(message.index_file)?;
    let map = weight_map(message.index.as_bytes())?;
    fn names<'a>(f: &SafetensorsFile<'a>) -> Vec<&'a str> {
        f.directories
            .iter()
            .flat_map(|d| d.tensors.iter())
            .filter_map(|t| t.name())
            .collect()
    }
    check_weight_map(&map, message.files.iter().map(|f| (f.file, names(f))))?;
    let mut total = Summary::default();
    for file in &message.files {
        message::check_file_name(file.file)?;
        let out = create(file.file).map_err(Error::io)?;
        let s = write_safetensors_file(file, out, |_| {})?;
        total.tensors += s.tensors;
        total.metadata += s.metadata;
        total.payload_bytes += s.payload_bytes;
        total.written += s.written;
    }
    let mut out = create(message.index_file).map_err(Error::io)?;
    out.write_all(message.index.as_bytes())
        .and_then(|()| out.flush())
        .map_err(Error::io)?;
    total.written += message.index.len() as u64;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::write_directories;

    /// A tensor: name, dtype, shape, payload.
    type Tensor<'a> = (&'a str, Dtype, &'a [u64], &'a [u8]);

    /// A one-file safetensors conversion message with these directories,
    /// the names in the order given (the converter never writes them out
    /// of order, a hand-made message may).
    fn message(dirs: &[&[Tensor<'_>]]) -> Vec<u8> {
        let specs: Vec<Vec<TensorSpec<'_>>> = dirs
            .iter()
            .map(|dir| {
                dir.iter()
                    .map(|&(name, dtype, shape, bytes)| {
                        TensorSpec::new(dtype, shape, bytes).named(name)
                    })
                    .collect()
            })
            .collect();
        let groups: Vec<&[TensorSpec<'_>]> = specs.iter().map(Vec::as_slice).collect();
        let mut out = Vec::new();
        crate::sink::write_message(&mut out, |w| {
            frame::write_header(w, MessageType::Safetensors.hash())?;
            "".encode(w)?;
            "".encode(w)?;
            w.count(1, LIMITS.count_cap)?;
            "".encode(w)?;
            w.count(0, LIMITS.count_cap)?;
            write_directories(w, &groups)
        })
        .unwrap();
        out
    }

    /// What the safetensors crate writes for the same tensors.
    fn crate_file(dirs: &[&[Tensor<'_>]]) -> Vec<u8> {
        let views: Vec<_> = dirs
            .iter()
            .flat_map(|dir| dir.iter())
            .map(|&(name, dtype, shape, bytes)| {
                let shape = shape.iter().map(|&d| d as usize).collect();
                let dtype = safetensors_dtype(dtype).unwrap();
                let view = safetensors::tensor::TensorView::new(dtype, shape, bytes).unwrap();
                (name, view)
            })
            .collect();
        safetensors::serialize(views, None).unwrap()
    }

    fn back(kiln: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        kiln_to_safetensors(kiln, &mut out)?;
        Ok(out)
    }

    /// Each way of finding the header's order: the directories' own (one
    /// dtype, names increasing), a walk per dtype (names increasing, dtypes
    /// mixed), a sort (names out of order across directories or inside
    /// one), each against the crate's writer.
    #[test]
    fn every_order_of_names_and_dtypes_comes_back_as_the_crate_writes_it() {
        let four = [1u8, 2, 3, 4];
        let eight = [5u8; 8];
        let cases: [&[&[Tensor<'_>]]; 4] = [
            &[
                &[
                    ("a", Dtype::F32, &[1], &four),
                    ("b", Dtype::F32, &[1], &four),
                ],
                &[("c", Dtype::F32, &[2], &eight)],
            ],
            &[
                &[
                    ("a", Dtype::F16, &[2], &four),
                    ("b", Dtype::F32, &[1], &four),
                ],
                &[
                    ("c", Dtype::F16, &[4], &eight),
                    ("d", Dtype::F64, &[1], &eight),
                ],
            ],
            &[
                &[
                    ("b", Dtype::F32, &[1], &four),
                    ("c", Dtype::F16, &[2], &four),
                ],
                &[
                    ("a", Dtype::Bf16, &[2], &four),
                    ("a.q\"uote", Dtype::F32, &[2], &eight),
                ],
            ],
            &[&[
                ("z", Dtype::U8, &[4], &four),
                ("m", Dtype::F32, &[1], &four),
                ("a", Dtype::U8, &[8], &eight),
            ]],
        ];
        for dirs in cases {
            assert_eq!(back(&message(dirs)).unwrap(), crate_file(dirs));
        }
    }

    /// A name in two directories is refused with the name table's error,
    /// as `Model::open` gives it, whether or not the names increase
    /// within each directory.
    #[test]
    fn a_name_in_two_directories_is_the_open_s_refusal() {
        let four = [1u8, 2, 3, 4];
        let cases: [&[&[Tensor<'_>]]; 2] = [
            &[
                &[("a", Dtype::F32, &[1], &four)],
                &[("a", Dtype::F32, &[1], &four)],
            ],
            &[
                &[
                    ("a", Dtype::F32, &[1], &four),
                    ("b", Dtype::F32, &[1], &four),
                ],
                &[
                    ("b", Dtype::F32, &[1], &four),
                    ("c", Dtype::F32, &[1], &four),
                ],
            ],
        ];
        for dirs in cases {
            let kiln = message(dirs);
            let ours = back(&kiln).unwrap_err();
            let open = crate::Model::open(&kiln).unwrap_err();
            assert_eq!(ours.to_string(), open.to_string());
            assert!(ours.to_string().contains("appears twice"), "{ours}");
        }
    }
}
