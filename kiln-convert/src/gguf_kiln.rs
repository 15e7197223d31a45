//! GGUF ⇄ Kiln.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use kiln_nostd::{frame, DtypeCode, Encode, Quant, TensorSpec};

use crate::error::{Error, Result};
use crate::gguf::cursor::Cursor;
use crate::gguf::value::{self, GgufValue};
use crate::gguf::{
    alignment_value, write_gguf, GgmlType, Gguf, GgufOut, TensorOut, ALIGNMENT_KEY,
    DEFAULT_ALIGNMENT,
};
use crate::heap::split;
use crate::inspect::integer_of;
use crate::message::{self, GgufFile, GgufMessage, MessageType, LIMITS};
use crate::model::{Message, Model};
use crate::sink::WriteSink;
use crate::Summary;
use kiln_nostd::inspect::{Inspection, Meta};

/// One GGUF file read for conversion.
struct FileIn<'a> {
    file: &'a str,
    gguf: Gguf<'a>,
    /// Key, Kiln type text, Kiln bytes of each metadata pair.
    entries: Vec<(&'a str, String, Vec<u8>)>,
    shapes: Vec<Vec<u64>>,
}

fn read_file<'a>(file: &'a str, input: &'a [u8]) -> Result<FileIn<'a>> {
    let parsed = Gguf::parse(input)?;
    let mut entries = Vec::with_capacity(parsed.metadata.len());
    for kv in &parsed.metadata {
        let mut c = Cursor::starting_at(input, kv.offset as usize);
        let mut bytes = Vec::with_capacity(kv.raw.len());
        let text = value::gguf_to_kiln(&mut c, kv.value_type, 0, &mut bytes)
            .map_err(|e| e.in_key(kv.key))?;
        entries.push((kv.key, text, bytes));
    }
    let shapes = parsed
        .tensors
        .iter()
        .map(|t| t.dims.iter().rev().copied().collect())
        .collect();
    Ok(FileIn {
        file,
        gguf: parsed,
        entries,
        shapes,
    })
}

/// The integer value of metadata key `key`, if the file has it as an
/// integer: read through the GGUF value reader into its Kiln value, as
/// every other reader of GGUF values reads it.
fn int_key(file: &Gguf<'_>, key: &str) -> Option<i64> {
    let kv = file.metadata.iter().find(|kv| kv.key == key)?;
    let (type_text, bytes) = kv.kiln_value().ok()?;
    let meta = Meta {
        key: key.into(),
        type_text,
        bytes,
    };
    integer_of(&meta).and_then(|n| i64::try_from(n).ok())
}

/// The split keys llama.cpp's gguf-split (and gguf-py's split writer)
/// put in every file of a split set: the file's 0-based number, how many
/// files, and (in the first) how many tensors the set holds.
pub const SPLIT_NO_KEY: &str = "split.no";
/// See [`SPLIT_NO_KEY`].
pub const SPLIT_COUNT_KEY: &str = "split.count";
/// See [`SPLIT_NO_KEY`].
pub const SPLIT_TENSORS_COUNT_KEY: &str = "split.tensors.count";

/// One file of a GGUF split set as the set rule sees it: its name, its
/// split keys, and its tensor names. A head-only reader (the browser
/// inspector's) has all of it without reading a payload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SplitFile<'a> {
    /// The file's name ("" for a lone file given as bytes).
    pub file: &'a str,
    /// [`SPLIT_NO_KEY`], when the file has it as an integer.
    pub split_no: Option<i64>,
    /// [`SPLIT_COUNT_KEY`], when the file has it as an integer.
    pub split_count: Option<i64>,
    /// [`SPLIT_TENSORS_COUNT_KEY`], when the file has it as an integer.
    pub split_tensors_count: Option<i64>,
    /// Its tensors' names, in file order.
    pub tensors: Vec<&'a str>,
}

impl<'a> SplitFile<'a> {
    /// The split keys and tensor names of a parsed GGUF file.
    pub fn of(file: &'a str, gguf: &Gguf<'a>) -> SplitFile<'a> {
        SplitFile {
            file,
            split_no: int_key(gguf, SPLIT_NO_KEY),
            split_count: int_key(gguf, SPLIT_COUNT_KEY),
            split_tensors_count: int_key(gguf, SPLIT_TENSORS_COUNT_KEY),
            tensors: gguf.tensors.iter().map(|t| t.name).collect(),
        }
    }
}

impl<'a> SplitFile<'a> {
    /// The split keys and tensor names of a file's inspection model (a
    /// head the browser read, named `file`). A key counts only with an
    /// integer type, as [`SplitFile::of`] reads it from the parsed file.
    pub fn of_inspection(file: &'a str, model: &'a Inspection) -> SplitFile<'a> {
        let int = |key: &str| {
            let meta = model.metadata.iter().find(|m| m.key == key)?;
            integer_of(meta).and_then(|n| i64::try_from(n).ok())
        };
        SplitFile {
            file,
            split_no: int(SPLIT_NO_KEY),
            split_count: int(SPLIT_COUNT_KEY),
            split_tensors_count: int(SPLIT_TENSORS_COUNT_KEY),
            tensors: model
                .tensors
                .iter()
                .filter_map(|t| t.name.as_deref())
                .collect(),
        }
    }
}

fn check_split_set(files: &[FileIn<'_>]) -> Result<()> {
    let split: Vec<SplitFile<'_>> = files
        .iter()
        .map(|f| SplitFile::of(f.file, &f.gguf))
        .collect();
    check_gguf_split(&split)
}

/// Checks the split keys of `files` (a whole set in order, or one file)
/// and that tensor names are unique across the set: `split.count` the
/// number of files, `split.no` each file's place (0-based),
/// `split.tensors.count` the tensors of all, no name in two files. The
/// rule [`check_gguf_set`] and [`gguf_set_to_kiln`] apply, for a reader
/// that has only the files' heads.
pub fn check_gguf_split(files: &[SplitFile<'_>]) -> Result<()> {
    let n = files.len() as i64;
    let total: usize = files.iter().map(|f| f.tensors.len()).sum();
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for (i, f) in (0i64..).zip(files) {
        let name = f.file;
        let count = f.split_count;
        let label = if name.is_empty() {
            "the GGUF file"
        } else {
            name
        };
        match count {
            Some(c) if c != n && n == 1 => {
                return Err(Error::unsupported(format!(
                    "{label} is file {} of a split set of {c} ({SPLIT_COUNT_KEY}); give kiln \
                     convert the set's first file, named like MODEL-00001-of-{c:05}.gguf, with \
                     the others beside it",
                    f.split_no.unwrap_or(0) + 1
                )))
            }
            Some(c) if c != n => {
                return Err(Error::unsupported(format!(
                    "{label}: {SPLIT_COUNT_KEY} is {c}, but the set has {n} files"
                )))
            }
            None if n > 1 => {
                return Err(Error::unsupported(format!(
                    "{label} has no {SPLIT_COUNT_KEY} key, so it is not part of a split set"
                )))
            }
            _ => {}
        }
        if n > 1 {
            let no = f.split_no;
            if no != Some(i) {
                return Err(Error::unsupported(format!(
                    "{label}: {SPLIT_NO_KEY} is {}, but it is file {} of the set (0-based)",
                    no.map_or("missing".to_string(), |v| v.to_string()),
                    i
                )));
            }
        }
        if let Some(t) = f.split_tensors_count {
            if t != total as i64 {
                return Err(Error::unsupported(format!(
                    "{label}: {SPLIT_TENSORS_COUNT_KEY} is {t}, but the set holds {total} tensors"
                )));
            }
        }
        for t in &f.tensors {
            if let Some(other) = seen.insert(t, label) {
                return Err(Error::unsupported(format!(
                    "tensor {t:?} is in both {other} and {label}; names are unique across a \
                     split set"
                )));
            }
        }
    }
    Ok(())
}

/// Writes `files` as one framed [`GgufMessage`](crate::GgufMessage).
fn write_gguf_message<W: Write>(out: W, files: &[FileIn<'_>]) -> Result<Summary> {
    let mut summary = Summary::default();
    let mut all_specs = Vec::with_capacity(files.len());
    let mut all_ranges = Vec::with_capacity(files.len());
    for f in files {
        let layout =
            |t: &crate::gguf::TensorInfo<'_>| t.ggml.closed.is_none().then_some(t.ggml.name);
        let what = if f.file.is_empty() {
            "the GGUF file".to_string()
        } else {
            format!("GGUF file {:?}", f.file)
        };
        let tensors = &f.gguf.tensors;
        all_ranges.push(split(tensors.iter().map(|t| (t.name, layout(t))), &what)?);
        let mut specs = Vec::with_capacity(tensors.len());
        for (t, shape) in tensors.iter().zip(&f.shapes) {
            summary.payload_bytes += t.data.len() as u64;
            let spec = match t.ggml.kiln_dtype() {
                DtypeCode::Closed(d) => TensorSpec::new(d, shape, t.data),
                DtypeCode::Opaque(code) => {
                    // Block sizes in the table are below 2^32.
                    TensorSpec::opaque(code, t.ggml.name, t.ggml.block_bytes as u32, shape, t.data)
                }
            };
            specs.push(spec.named(t.name));
        }
        summary.tensors += specs.len();
        summary.metadata += f.entries.len();
        all_specs.push(specs);
    }
    summary.written = crate::sink::write_message(out, |w| {
        frame::write_header(w, MessageType::Gguf.hash())?;
        w.count(files.len(), LIMITS.count_cap)?;
        for ((f, specs), cuts) in files.iter().zip(&all_specs).zip(&all_ranges) {
            f.file.encode(w)?;
            w.u32(f.gguf.version)?;
            w.count(f.entries.len(), LIMITS.count_cap)?;
            for (key, text, bytes) in &f.entries {
                key.encode(w)?;
                text.as_str().encode(w)?;
                w.byte_run(bytes)?;
            }
            let groups: Vec<&[TensorSpec<'_>]> = cuts
                .iter()
                .map(|r| specs.get(r.clone()).unwrap_or_default())
                .collect();
            message::write_directories(w, &groups)?;
        }
        Ok(())
    })?;
    Ok(summary)
}

/// Converts a GGUF file to one framed Kiln message
/// ([`GgufMessage`](crate::GgufMessage) with one file), written to `out`.
///
/// Every metadata pair is kept in file order with its GGUF type (as the
/// Kiln type text of its value, see [`crate::gguf::value`]). The tensors go
/// into directories in GGUF order (as many as 64 KiB name heaps need):
/// plain types as closed dtypes, block types as opaque dtype
/// `4096 + ggml id` with the ggml type name as the layout name and the
/// block's bytes as the block size. GGUF's dimensions (innermost first)
/// become Kiln's shape (outermost first). Each payload is copied once
/// from `input` to `out`, to a file offset that is a multiple of 64. A
/// file of a split set (`split.count` above 1) is refused: convert the set
/// with [`gguf_set_to_kiln`].
pub fn gguf_to_kiln<W: Write>(input: &[u8], out: W) -> Result<Summary> {
    gguf_set_to_kiln(&[("", input)], out)
}

/// The file names of the GGUF split set whose first file is named
/// `first` (`MODEL-00001-of-00003.gguf`, as llama.cpp's gguf-split and
/// gguf-py name them), in order; `None` when the name is not a split
/// set's first file.
pub fn gguf_split_names(first: &str) -> Option<Vec<String>> {
    let stem = first.strip_suffix(".gguf")?;
    let (head, count) = stem.rsplit_once("-of-")?;
    let (prefix, no) = head.rsplit_once('-')?;
    let digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(count) || no != "00001" {
        return None;
    }
    let n: u32 = count.parse().ok()?;
    (n >= 1).then(|| {
        (1..=n)
            .map(|i| format!("{prefix}-{i:05}-of-{n:05}.gguf"))
            .collect()
    })
}

/// Checks a GGUF split set without converting it (every file valid GGUF,
/// the split keys agreeing with the set, no name in two files) and gives
/// each file parsed, in order: what a tool that shows the whole model
/// (`kiln inspect` of a split set's first file) lists.
pub fn check_gguf_set<'a>(files: &[(&'a str, &'a [u8])]) -> Result<Vec<Gguf<'a>>> {
    let mut ins = Vec::with_capacity(files.len());
    for (name, bytes) in files {
        message::check_file_name(name)?;
        ins.push(read_file(name, bytes).map_err(|e| e.in_file(name))?);
    }
    check_split_set(&ins)?;
    Ok(ins.into_iter().map(|f| f.gguf).collect())
}

/// Converts a GGUF split set to one framed Kiln message: `files` is every
/// file of the set in order, as (file name, bytes). The split keys must
/// agree with the set (`split.count` the number of files, `split.no` each
/// file's place, `split.tensors.count` the tensors of all), and no tensor
/// name may appear in two files.
pub fn gguf_set_to_kiln<W: Write>(files: &[(&str, &[u8])], out: W) -> Result<Summary> {
    let mut ins = Vec::with_capacity(files.len());
    for (name, bytes) in files {
        if files.len() > 1 {
            message::check_file_name(name)?;
        }
        ins.push(read_file(name, bytes).map_err(|e| {
            if name.is_empty() {
                e
            } else {
                e.in_file(name)
            }
        })?);
    }
    check_split_set(&ins)?;
    write_gguf_message(out, &ins)
}

/// Reads one file of a GGUF conversion message into what the GGUF writer
/// needs; tensor data stays borrowed.
fn kiln_gguf_parts<'a>(input: &[u8], file: &GgufFile<'a>) -> Result<GgufOut<'a>> {
    let version = file.version;
    if !(2..=3).contains(&version) {
        return Err(Error::kiln(
            None,
            format!("GGUF version {version}: only versions 2 and 3 can be written"),
        ));
    }
    let mut metadata = Vec::with_capacity(file.metadata.len());
    let mut keys = HashSet::new();
    let mut alignment = DEFAULT_ALIGNMENT;
    for pair in &file.metadata {
        let key = pair.key;
        if !keys.insert(key) {
            return Err(Error::kiln(
                None,
                format!("metadata key {key:?} appears twice; GGUF keys are unique"),
            ));
        }
        // Where the value's bytes start in the message, for errors.
        let value_at = (pair.value.as_ptr() as usize).wrapping_sub(input.as_ptr() as usize);
        let value: GgufValue = value::kiln_to_gguf(key, pair.value_type, pair.value, value_at, 0)?;
        if key == ALIGNMENT_KEY {
            alignment = alignment_value(value.ty, &value.bytes)
                .map_err(|what| Error::kiln(Some(value_at as u64), what))?;
        }
        metadata.push((key, value));
    }
    let count = file.directories.iter().map(|d| d.tensors.len()).sum();
    let mut tensors = Vec::with_capacity(count);
    for t in file.directories.iter().flat_map(|d| d.tensors.iter()) {
        let name = t.name().ok_or_else(|| {
            Error::unsupported(format!("tensor {} has no name; GGUF needs one", t.index()))
        })?;
        let ggml = GgmlType::from_kiln(t.dtype()).ok_or_else(|| {
            Error::unsupported(format!(
                "tensor {name:?} has Kiln dtype {}, which has no ggml type",
                match t.dtype() {
                    DtypeCode::Closed(d) => d.name().to_string(),
                    DtypeCode::Opaque(c) => format!("{c}"),
                }
            ))
        })?;
        if ggml.closed.is_none()
            && (t.layout() != Some(ggml.name) || u64::from(t.block_size()) != ggml.block_bytes)
        {
            return Err(Error::unsupported(format!(
                "tensor {name:?}: opaque dtype {} stands for ggml {} (block of {} bytes), but \
                 the tensor says layout {:?} with blocks of {} bytes",
                t.dtype().code(),
                ggml.name,
                ggml.block_bytes,
                t.layout().unwrap_or(""),
                t.block_size()
            )));
        }
        if t.quant() != Quant::None {
            return Err(Error::unsupported(format!(
                "tensor {name:?} links scale tensors; GGUF cannot record that"
            )));
        }
        let dims: Vec<u64> = t.shape().iter().rev().copied().collect();
        let expected = ggml.byte_len(&dims).map_err(|what| {
            Error::unsupported(format!(
                "tensor {name:?} of ggml type {} and shape {:?}: {what}",
                ggml.name,
                t.shape()
            ))
        })?;
        if expected != t.bytes().len() as u64 {
            return Err(Error::unsupported(format!(
                "tensor {name:?} of ggml type {} and shape {:?} needs {expected} bytes, not {}",
                ggml.name,
                t.shape(),
                t.bytes().len()
            )));
        }
        tensors.push(TensorOut {
            name,
            dims,
            ggml,
            data: t.bytes(),
        });
    }
    Ok(GgufOut {
        version,
        alignment,
        metadata,
        tensors,
    })
}

/// The GGUF message of a converted file, opened and checked.
fn open_gguf(input: &[u8]) -> Result<GgufMessage<'_>> {
    let model = Model::open(input)?;
    match model.message() {
        Message::Gguf(m) => Ok(m.clone()),
        Message::Safetensors(_) => Err(Error::unsupported(
            "this Kiln file holds a model converted from safetensors; convert it to a \
             .safetensors file",
        )),
    }
}

fn write_one<W: Write>(input: &[u8], file: &GgufFile<'_>, out: W) -> Result<Summary> {
    let parts = kiln_gguf_parts(input, file)?;
    let mut sink = WriteSink::new(out);
    write_gguf(&parts, &mut sink)?;
    let (_, written) = sink.finish()?;
    Ok(Summary {
        tensors: parts.tensors.len(),
        metadata: parts.metadata.len(),
        payload_bytes: parts.tensors.iter().map(|t| t.data.len() as u64).sum(),
        written,
    })
}

/// Converts a Kiln file made from one GGUF file back to that file, written
/// to `out`: the same version, metadata pairs in the same order with the
/// same types, tensors in the same order with the same types and
/// dimensions, data at the same aligned offsets. A split set is refused
/// (see [`kiln_to_gguf_set`]).
pub fn kiln_to_gguf<W: Write>(input: &[u8], out: W) -> Result<Summary> {
    let message = open_gguf(input)?;
    match message.files.as_slice() {
        [file] if file.file.is_empty() => write_one(input, file, out),
        files => Err(Error::unsupported(format!(
            "this Kiln file holds a GGUF split set of {} files; write them into a folder \
             (kiln convert FILE.kiln OUT/ --shards)",
            files.len()
        ))),
    }
}

/// Converts a Kiln file made from a GGUF split set back to its files:
/// `create(name)` gives the writer for each, in split order.
pub fn kiln_to_gguf_set<W: Write>(
    input: &[u8],
    mut create: impl FnMut(&str) -> std::io::Result<W>,
) -> Result<Summary> {
    let message = open_gguf(input)?;
    if message.files.iter().any(|f| f.file.is_empty()) {
        return Err(Error::unsupported(
            "this Kiln file holds one GGUF file, not a split set; convert it to a .gguf file",
        ));
    }
    let mut total = Summary::default();
    for file in &message.files {
        message::check_file_name(file.file)?;
        let s = write_one(input, file, create(file.file).map_err(Error::io)?)?;
        total.tensors += s.tensors;
        total.metadata += s.metadata;
        total.payload_bytes += s.payload_bytes;
        total.written += s.written;
    }
    Ok(total)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn part<'a>(file: &'a str, no: i64, count: i64, tensors: &[&'a str]) -> SplitFile<'a> {
        SplitFile {
            file,
            split_no: Some(no),
            split_count: Some(count),
            split_tensors_count: (no == 0).then_some(3),
            tensors: tensors.to_vec(),
        }
    }

    #[test]
    fn a_split_set_from_its_heads() {
        let a = part("m-00001-of-00002.gguf", 0, 2, &["x", "y"]);
        let b = part("m-00002-of-00002.gguf", 1, 2, &["z"]);
        check_gguf_split(&[a.clone(), b.clone()]).unwrap();
        let e = check_gguf_split(&[b.clone(), a.clone()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("m-00002-of-00002.gguf: split.no is 1, but it is file 0"),
            "{e}"
        );
        let e = check_gguf_split(std::slice::from_ref(&a))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is file 1 of a split set of 2"), "{e}");
        let dup = part("m-00002-of-00002.gguf", 1, 2, &["x"]);
        let e = check_gguf_split(&[a.clone(), dup]).unwrap_err().to_string();
        assert!(
            e.contains("tensor \"x\" is in both m-00001-of-00002.gguf and m-00002-of-00002.gguf"),
            "{e}"
        );
        let more = part("m-00002-of-00002.gguf", 1, 2, &["z", "w"]);
        let e = check_gguf_split(&[a.clone(), more])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("split.tensors.count is 3, but the set holds 4 tensors"),
            "{e}"
        );
        let lone = SplitFile {
            file: "one.gguf",
            tensors: vec!["x"],
            ..SplitFile::default()
        };
        check_gguf_split(std::slice::from_ref(&lone)).unwrap();
        let e = check_gguf_split(&[a, lone]).unwrap_err().to_string();
        assert!(e.contains("one.gguf has no split.count key"), "{e}");
    }

    #[test]
    fn split_keys_from_an_inspection() {
        use kiln_nostd::inspect::{Meta, TensorDtype, TensorFacts};
        let pair = |key: &str, type_text: &str, bytes: Vec<u8>| Meta {
            key: key.into(),
            type_text: type_text.into(),
            bytes,
        };
        let tensor = |name: &str| TensorFacts {
            directory: 0,
            index: 0,
            name: Some(name.into()),
            dtype: TensorDtype::Foreign("F32".into()),
            shape: vec![1],
            elements: Some(1),
            offset: 0,
            length: 4,
            layout: None,
            block_size: 0,
            quant: kiln_nostd::inspect::QuantLink::None,
            in_place: kiln_nostd::inspect::InPlace::Yes,
        };
        let model = Inspection {
            metadata: vec![
                pair("general.name", "str", crate::head::str_bytes("m")),
                pair(SPLIT_NO_KEY, "u16", 1u16.to_le_bytes().to_vec()),
                pair(SPLIT_COUNT_KEY, "str", crate::head::str_bytes("2")),
                pair(SPLIT_TENSORS_COUNT_KEY, "i32", 5i32.to_le_bytes().to_vec()),
            ],
            tensors: vec![tensor("a"), tensor("b")],
            ..Inspection::default()
        };
        let split = SplitFile::of_inspection("m-00002-of-00002.gguf", &model);
        assert_eq!(
            split,
            SplitFile {
                file: "m-00002-of-00002.gguf",
                split_no: Some(1),
                // A string is not a split key's value.
                split_count: None,
                split_tensors_count: Some(5),
                tensors: vec!["a", "b"],
            }
        );
    }
}
