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
    frame, Directory, Dtype, DtypeCode, Encode, Quant, Shape, TensorSpec, TensorView, Tensors,
};
use safetensors::tensor::{Metadata, SafeTensorError, SafeTensors, View};

use crate::error::{Error, Result};
use crate::heap::split;
use crate::message::{self, MessageType, SafetensorsFile, SafetensorsMessage, LIMITS};
use crate::model::{Message, Model};
use crate::safetensors_header::{
    read_header, HeaderTensor, Refused, SafetensorsHeader, MAX_HEADER_LEN,
};
use crate::safetensors_json::{header_json, Entry};
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
        for t in self.header.tensors.get(range).unwrap_or_default() {
            // `read_shard` found every tensor to convert: the spec without
            // the words of a refusal, which only `tensor_spec` builds.
            // (Two pushes: one shared push of either spec costs the fast
            // one its constant fields, spilled to meet the other.)
            match plain_spec(self.header, self.data, t) {
                Some(spec) => specs.push(spec),
                None => specs.push(tensor_spec(self.header, self.data, t, what)?),
            }
        }
        Ok(())
    }
}

/// The Kiln dtype of `info`, or a refusal that names the dtype and says
/// what to do.
fn dtype_for(name: &str, dtype: safetensors::Dtype) -> Result<Dtype> {
    kiln_dtype(dtype).ok_or_else(|| {
        Error::unsupported(format!(
            "tensor {name:?} has safetensors dtype {dtype}, which Kiln has no dtype for (Kiln \
             takes F64 F32 F16 BF16 F8_E4M3 F8_E5M2 F8_E8M0 BOOL I8 U8 I16 U16 I32 U32 I64 \
             U64); cast the tensor to one of those (e.g. with torch) before converting"
        ))
    })
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
    let dtype = dtype_for(name, t.dtype)?;
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
    Ok(TensorSpec::new(dtype, shape, bytes).named(name))
}

/// The spec of tensor `t`, as [`tensor_spec`] makes it, or `None` where
/// that refuses (and says why).
#[inline(always)] // the loop body of `specs_into`
fn plain_spec<'a>(
    header: &'a SafetensorsHeader<'a>,
    data: &'a [u8],
    t: &'a HeaderTensor<'a>,
) -> Option<TensorSpec<'a>> {
    let dtype = kiln_dtype(t.dtype)?;
    let shape = header.shape(t);
    if shape.len() > 8 {
        return None;
    }
    let (start, end) = t.data_offsets;
    let bytes = data.get(usize::try_from(start).ok()?..usize::try_from(end).ok()?)?;
    Some(TensorSpec::new(dtype, shape, bytes).named(t.name.as_ref()))
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
    let mut payload_bytes = 0u64;
    for t in &header.tensors {
        let (start, end) = t.data_offsets;
        let converts = kiln_dtype(t.dtype).is_some()
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

/// Writes `shards` as one framed [`SafetensorsMessage`](crate::SafetensorsMessage).
fn write_safetensors_message<W: Write>(
    out: W,
    index_file: &str,
    index: &str,
    shards: &[ShardIn<'_>],
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
    let header = read_safetensors_header(input, input.len() as u64)?;
    let shard = read_shard("", input, &header, "the safetensors file")?;
    write_safetensors_message(out, "", "", &[shard])
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
    write_safetensors_message(out, index_file, index_text, &ins)
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

/// One tensor of a safetensors file, read from a conversion message.
struct FileTensor<'a> {
    name: &'a str,
    dtype: safetensors::Dtype,
    /// Its directory and its index there, for its shape: decoded when the
    /// header is written, not kept (a [`kiln_nostd::Shape`] is 72 bytes, a
    /// [`TensorView`] 64, and for a model of many tensors a list of either
    /// is megabytes of fresh pages to fault in).
    directory: &'a Directory<'a>,
    index: u32,
    data: &'a [u8],
}

impl FileTensor<'_> {
    fn shape(&self) -> Result<Shape, String> {
        let view = self.directory.get(self.index as usize);
        view.map(|t| t.shape())
            .ok_or_else(|| format!("tensor {:?} is not in its directory", self.name))
    }
}

/// The name and safetensors dtype of `t`, once it is checked to be a
/// tensor safetensors can hold.
fn safetensors_facts<'a>(t: &TensorView<'a>) -> Result<(&'a str, safetensors::Dtype)> {
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
    if t.shape().iter().any(|&d| usize::try_from(d).is_err()) {
        return Err(Error::unsupported(format!(
            "tensor {name:?}: a dimension does not fit in memory"
        )));
    }
    Ok((name, dtype))
}

/// The tensors of one file of a safetensors conversion message, in
/// directory order, each checked to be one safetensors can hold.
fn file_tensors<'a>(file: &'a SafetensorsFile<'a>) -> Result<Vec<FileTensor<'a>>> {
    let count = file.directories.iter().map(|d| d.tensors.len()).sum();
    let mut tensors = Vec::with_capacity(count);
    for directory in file.directories.iter().map(|d| &d.tensors) {
        for t in directory.iter() {
            let (name, dtype) = safetensors_facts(&t)?;
            tensors.push(FileTensor {
                name,
                dtype,
                directory,
                index: t.index() as u32,
                data: t.bytes(),
            });
        }
    }
    Ok(tensors)
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
        let (name, dtype) = safetensors_facts(&t)?;
        let view = BorrowedView {
            dtype,
            shape: t.shape().iter().map(|&d| d as usize).collect(),
            data: t.bytes(),
        };
        views.push((name, view));
    }
    Ok((file_metadata(file), views))
}

/// The safetensors message of a converted file, opened and checked.
fn open_safetensors(input: &[u8]) -> Result<SafetensorsMessage<'_>> {
    let model = Model::open(input)?;
    match model.message() {
        Message::Safetensors(m) => Ok(m.clone()),
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

/// The 8-byte length and the JSON header that `safetensors::serialize`
/// writes for `tensors` and `metadata`, and the order their data follows
/// (as indices into `tensors`).
///
/// The JSON is the crate's (see [`crate::safetensors_json`], which writes
/// the text `Metadata`'s `Serialize` writes and makes the checks
/// `Metadata::new` makes). What is done here is what `serialize` does
/// around it: order the tensors by descending dtype alignment, then by
/// name; lay the offsets end to end; pad the JSON with spaces to a
/// multiple of 8. `serialize` itself is not called because it reserves a
/// buffer the size of the whole file, which for a model larger than
/// memory fails. Tests compare the result with `serialize` and with
/// Python's writer.
fn header(
    tensors: &[FileTensor<'_>],
    metadata: Option<&HashMap<String, String>>,
) -> Result<(Vec<u8>, Vec<usize>)> {
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    let key = |i: usize| tensors.get(i).map(|t| (t.dtype, t.name));
    // Names are unique, so the order is total and an unstable sort gives
    // the stable sort's result.
    order.sort_unstable_by(|&l, &r| {
        let (l, r) = (key(l), key(r));
        let dtype = r.map(|(d, _)| d).cmp(&l.map(|(d, _)| d));
        dtype.then(l.map(|(_, n)| n).cmp(&r.map(|(_, n)| n)))
    });
    let entries = order.iter().filter_map(|&i| tensors.get(i)).map(|t| {
        Ok(Entry {
            name: t.name,
            dtype: t.dtype,
            shape: t.shape()?,
            data_len: t.data.len(),
        })
    });
    // The length goes in front once the JSON is written; most of the
    // capacity guessed here is never touched (so never mapped in).
    let mut bytes = Vec::with_capacity(tensors.len().saturating_mul(128).saturating_add(64));
    bytes.extend_from_slice(&[0; 8]);
    header_json(&mut bytes, metadata, entries).map_err(|e| {
        Error::unsupported(format!("the safetensors writer refused the tensors: {e}"))
    })?;
    let padded = (bytes.len() - 8).next_multiple_of(8);
    if padded > MAX_HEADER_LEN {
        return Err(Error::unsupported(format!(
            "the safetensors header would be {padded} bytes, above the format's limit of 100,000,000"
        )));
    }
    bytes.resize(8 + padded, b' ');
    if let Some(len) = bytes.get_mut(..8) {
        len.copy_from_slice(&(padded as u64).to_le_bytes());
    }
    Ok((bytes, order))
}

/// Writes one file of a safetensors conversion message.
fn write_safetensors_file<W: Write>(file: &SafetensorsFile<'_>, out: W) -> Result<Summary> {
    let tensors = file_tensors(file)?;
    let metadata = file_metadata(file);
    let (header, order) = header(&tensors, metadata.as_ref())?;

    let mut sink = WriteSink::new(out);
    sink.write_all(&header)?;
    let mut payload_bytes = 0u64;
    for &i in &order {
        let data = tensors.get(i).map_or(&[][..], |t| t.data);
        sink.write_all(data)?;
        payload_bytes += data.len() as u64;
    }
    let (_, written) = sink.finish()?;
    Ok(Summary {
        tensors: tensors.len(),
        metadata: metadata.as_ref().map_or(0, HashMap::len),
        payload_bytes,
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
    let message = open_safetensors(input)?;
    match message.files.as_slice() {
        [file] if message.index.is_empty() => write_safetensors_file(file, out),
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
        let s = write_safetensors_file(file, out)?;
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
