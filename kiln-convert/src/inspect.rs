//! Converted models and sets of files in the core's inspection model
//! ([`kiln_nostd::inspect::Inspection`]): what this crate knows that the core
//! does not, added to the model once, for every tool.
//!
//! - [`read_converted`]: a Kiln file of one of the two conversion message
//!   types gets its source's metadata (the same entries as the source
//!   file's head gives), the GGUF header of a GGUF conversion, each
//!   directory's source file in a set, and its source's tensor order (the
//!   order of the safetensors file it converts back to; GGUF's tensor-info
//!   order is the message's own).
//! - [`join`]: the models of a safetensors shard set or a GGUF split set,
//!   checked as `kiln convert` checks the set, as one model.
//! - [`inspect_kiln`]: a Kiln file in memory, read into the model with both.

use std::cmp::Ordering;

use kiln_nostd::inspect::{open_bytes, Format, GgufFacts, Inspection, Meta, Reading};
use kiln_nostd::{from_bytes_with, from_frame_with, Decode, DtypeCode, ValueKind};

use crate::error::{Error, Result};
use crate::gguf::{ALIGNMENT_KEY, DEFAULT_ALIGNMENT};
use crate::gguf_kiln::SplitFile;
use crate::head::str_bytes;
use crate::message::{GgufMessage, SafetensorsMessage, LIMITS};
use crate::{foreign_dtype, safetensors_dtype};

/// The model of the Kiln file `bytes` (named `name`), read as `reading`
/// says ([`kiln_nostd::inspect::recognise`]), with its metadata; a
/// converted model read by [`read_converted`] too. A fault of the file is
/// the core's error (its wire code and offset).
pub fn inspect_kiln(
    name: &str,
    bytes: &[u8],
    reading: &Reading,
) -> Result<Inspection, kiln_nostd::Error> {
    let (mut model, _) = open_bytes(name, bytes, reading)?;
    model.read_metadata()?;
    read_converted(&mut model).map_err(|_| {
        kiln_nostd::Error::refused(
            kiln_nostd::Refusal::WrongValue,
            "a checked conversion message does not decode as its type",
        )
    })?;
    Ok(model)
}

fn decode<'a, T: Decode<'a>>(model: &'a Inspection, framed: bool) -> Result<T> {
    let decoded = if framed {
        from_frame_with(&model.record, LIMITS)
    } else {
        from_bytes_with(&model.record, LIMITS)
    };
    decoded.map_err(|e| Error::from_kiln(e, 0, "conversion message"))
}

/// Adds what a conversion message says to its model (nothing for any other
/// Kiln value): see the [module](self) text. The model's metadata entries
/// become the source's: a set's are its first file's (a GGUF split set
/// repeats its keys in every file; the shards of a safetensors checkpoint
/// carry the same `__metadata__`).
pub fn read_converted(model: &mut Inspection) -> Result<()> {
    let Some(kiln) = &model.kiln else {
        return Ok(());
    };
    let framed = kiln.framed;
    // Per message file: its name and how many directories it has, in
    // wire order (the model's directories are the message's, in order).
    let (files, metadata, gguf): (Vec<(String, usize)>, Vec<Meta>, Option<GgufFacts>) =
        match kiln.converted_from {
            Some(Format::Safetensors) => {
                let message: SafetensorsMessage<'_> = decode(model, framed)?;
                let metadata = message
                    .files
                    .first()
                    .map(|f| {
                        f.metadata
                            .iter()
                            .map(|(key, value)| Meta {
                                key: key.into(),
                                type_text: "str".into(),
                                bytes: str_bytes(value),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let files = message
                    .files
                    .iter()
                    .map(|f| (f.file.to_string(), f.directories.len()))
                    .collect();
                (files, metadata, None)
            }
            Some(Format::Gguf) => {
                let message: GgufMessage<'_> = decode(model, framed)?;
                let first = message.files.first();
                let metadata: Vec<Meta> = first
                    .map(|f| {
                        f.metadata
                            .iter()
                            .map(|p| Meta {
                                key: p.key.into(),
                                type_text: p.value_type.into(),
                                bytes: p.value.to_vec(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let alignment = metadata
                    .iter()
                    .find(|m| m.key == ALIGNMENT_KEY && m.type_text == "u32")
                    .and_then(integer_of)
                    .and_then(|n| u64::try_from(n).ok())
                    .unwrap_or(DEFAULT_ALIGNMENT);
                let gguf = first.map(|f| GgufFacts {
                    version: f.version,
                    alignment,
                });
                let files = message
                    .files
                    .iter()
                    .map(|f| (f.file.to_string(), f.directories.len()))
                    .collect();
                (files, metadata, gguf)
            }
            _ => return Ok(()),
        };
    let several = files.len() > 1 || files.iter().any(|(name, _)| !name.is_empty());
    let mut directories = model.directories.iter_mut();
    for (name, count) in &files {
        for d in directories.by_ref().take(*count) {
            d.source = several.then(|| name.clone());
        }
    }
    model.metadata = metadata;
    model.omitted = 0;
    model.gguf = gguf;
    if model.kiln.as_ref().and_then(|k| k.converted_from) == Some(Format::Safetensors) {
        model.order = safetensors_order(model, &files);
    }
    Ok(())
}

/// A metadata entry's value as an integer, when it is one.
pub(crate) fn integer_of(meta: &Meta) -> Option<i128> {
    match meta.value().ok()?.kind {
        ValueKind::Integer(n) => Some(n),
        _ => None,
    }
}

/// The order `safetensors::serialize` writes a file's tensors in, and so
/// the order of the file a conversion message converts back to: by
/// descending dtype (the crate's order of dtypes, which is by alignment),
/// then by name. A dtype safetensors lacks sorts last.
pub(crate) fn writer_order(
    l: (Option<safetensors::Dtype>, Option<&str>),
    r: (Option<safetensors::Dtype>, Option<&str>),
) -> Ordering {
    r.0.cmp(&l.0).then(l.1.cmp(&r.1))
}

/// Every tensor's position, file by file, each file's in the writer's
/// order.
fn safetensors_order(model: &Inspection, files: &[(String, usize)]) -> Vec<usize> {
    let key = |i: &usize| {
        let t = model.tensors.get(*i);
        let dtype = t.and_then(|t| match t.dtype {
            kiln_nostd::inspect::TensorDtype::Kiln(DtypeCode::Closed(d)) => safetensors_dtype(d),
            kiln_nostd::inspect::TensorDtype::Kiln(DtypeCode::Opaque(code)) => {
                foreign_dtype(code, t.layout.as_deref(), t.block_size)
            }
            kiln_nostd::inspect::TensorDtype::Foreign(_) => None,
        });
        (dtype, t.and_then(|t| t.name.as_deref()))
    };
    let mut order = Vec::with_capacity(model.tensors.len());
    let mut directories = model.directories.iter();
    for (_, count) in files {
        let mut positions: Vec<usize> = directories
            .by_ref()
            .take(*count)
            .flat_map(|d| d.first..d.first + d.count)
            .collect();
        positions.sort_unstable_by(|l, r| writer_order(key(l), key(r)));
        order.extend(positions);
    }
    order
}

/// The models of the files of a set, in set order (each made by the head
/// reader or the browser's opener, named by its file name), as one model
/// named `name`: a safetensors shard set (its `index`, the bytes of
/// `model.safetensors.index.json`, must put every tensor in the shard that
/// holds it and name no tensor a shard lacks) or a GGUF split set (its
/// split keys and names as [`crate::check_gguf_split`] checks them). Each
/// directory keeps its file, whose name becomes its source; the metadata
/// is the first file's.
pub fn join(name: &str, parts: Vec<Inspection>, index: Option<&[u8]>) -> Result<Inspection> {
    let format = parts.first().map(|p| p.format);
    if parts.iter().any(|p| Some(p.format) != format) {
        return Err(Error::unsupported(
            "the files of a set are of one format: safetensors shards or GGUF split files",
        ));
    }
    let names = |p: &Inspection| -> Vec<String> {
        p.tensors.iter().filter_map(|t| t.name.clone()).collect()
    };
    match (format, index) {
        (Some(Format::Safetensors), Some(index)) => {
            let owned: Vec<(String, Vec<String>)> =
                parts.iter().map(|p| (p.name.clone(), names(p))).collect();
            let borrowed: Vec<(&str, Vec<&str>)> = owned
                .iter()
                .map(|(f, n)| (f.as_str(), n.iter().map(String::as_str).collect()))
                .collect();
            let shards: Vec<(&str, &[&str])> =
                borrowed.iter().map(|(f, n)| (*f, n.as_slice())).collect();
            crate::check_safetensors_index(index, &shards)?;
        }
        (Some(Format::Safetensors), None) => {
            return Err(Error::unsupported(
                "a safetensors shard set is read with its model.safetensors.index.json",
            ))
        }
        (Some(Format::Gguf), _) => {
            let split: Vec<SplitFile<'_>> = parts
                .iter()
                .map(|p| SplitFile::of_inspection(&p.name, p))
                .collect();
            crate::check_gguf_split(&split)?;
        }
        _ => {
            return Err(Error::unsupported(
                "a set of files is of safetensors or GGUF files",
            ))
        }
    }
    let mut whole = Inspection {
        name: name.into(),
        format: format.unwrap_or_default(),
        ..Inspection::default()
    };
    for (file, part) in parts.into_iter().enumerate() {
        if file == 0 {
            whole.metadata = part.metadata;
            whole.omitted = part.omitted;
            whole.gguf = part.gguf;
        }
        let shift = whole.directories.len();
        let first = whole.tensors.len();
        whole.files.extend(part.files.into_iter().take(1));
        for mut d in part.directories {
            d.file = file;
            d.source = Some(part.name.clone());
            d.first += first;
            whole.directories.push(d);
        }
        whole.tensors.extend(part.tensors.into_iter().map(|mut t| {
            t.directory += shift;
            t
        }));
    }
    Ok(whole)
}
