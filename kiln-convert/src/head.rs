//! The heads of safetensors and GGUF files, read into the core's
//! inspection model ([`kiln_nostd::inspect::Inspection`]): the one adapter of
//! foreign files, under `kiln inspect` and the browser inspector.
//!
//! [`read_head`] takes a prefix of a file and the file's total length and
//! gives the [`Inspection`] once the prefix holds the head, or how many bytes
//! are needed ([`Step::Need`]). Every check that needs no payload byte is
//! made (GGUF: by [`GgufHead::read`], which [`Gguf::parse`](crate::gguf::Gguf::parse)
//! is built on; safetensors: the conversions' header reader, the
//! safetensors crate's checks with 64-bit sizes), so the verdict (the
//! error, its kind, offset and words) is the whole-file reader's.
//!
//! A model's tensors are in the order of their data in the file; its
//! metadata entries are the file's pairs, each with the Kiln type and
//! bytes `kiln convert` gives it (safetensors' `__metadata__` as `str`
//! values in key order; GGUF's pairs in file order, through the one GGUF
//! value reader, [`crate::gguf::value`]), so a file and the `.kiln`
//! converted from it have the same entries.
//!
//! [`HeadOpener`] reads a head by ranges, sans-I/O: a first read of
//! [`FIRST_READ`] bytes (most heads, a 32,000-token vocabulary's
//! included), then, for a safetensors header longer than that, its exact
//! rest; for a GGUF head (whose length shows only as it is parsed), four
//! times what is held each time, in pieces that can be in flight
//! together: a head of `n` bytes takes about `log4(n / FIRST_READ)` round
//! trips more.

use std::ops::Range;

pub use kiln_nostd::inspect::FIRST_READ;
use kiln_nostd::inspect::{
    DirectoryFacts, FileFacts, Format, GgufFacts, InPlace, Inspection, Meta, QuantLink, ReadStats,
    TensorDtype, TensorFacts,
};
use kiln_nostd::DtypeCode;

use crate::error::{Error, Result};
use crate::gguf::{GgufHead, HeadRead};
use crate::kiln_dtype;
use crate::safetensors_header::{data_order, header_json, read_header, Refused};
use crate::safetensors_kiln::read_error;

/// The largest head [`HeadOpener`] reads (safetensors caps its header at
/// 100,000,000 bytes; a GGUF head past this is refused rather than held).
pub const MAX_HEAD: u64 = 256 << 20;

/// What a prefix of a file gives.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// The head, checked, as the model.
    Model(Box<Inspection>),
    /// The prefix ends inside the head: the first `n` bytes are needed
    /// (more than the prefix; at most the file). For safetensors `n` is
    /// the head's exact length; for GGUF, a lower bound.
    Need(u64),
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

/// The model of the `format` file `name` of `file_len` bytes, from
/// `prefix`, its first bytes.
pub fn read_head(name: &str, format: Format, prefix: &[u8], file_len: u64) -> Result<Step> {
    match format {
        Format::Safetensors => safetensors_head(name, prefix, file_len),
        Format::Gguf => gguf_head(name, prefix, file_len),
        Format::Kiln => Err(Error::unsupported(
            "a Kiln file is read by kiln-nostd's opener, not by the head reader",
        )),
    }
}

/// The model of a whole safetensors or GGUF file in memory (a memory map:
/// only its head is touched).
pub fn inspect_head(name: &str, format: Format, bytes: &[u8]) -> Result<Inspection> {
    match read_head(name, format, bytes, bytes.len() as u64)? {
        Step::Model(model) => Ok(*model),
        Step::Need(n) => Err(Error::unsupported(format!(
            "the head reader asked for {n} bytes of a file of {}",
            bytes.len()
        ))),
    }
}

/// One directory holding every tensor of a foreign file, whose data
/// section starts at `data_start`.
fn one_directory(name: &str, format: Format, file_len: u64, data_start: u64) -> Inspection {
    Inspection {
        name: name.into(),
        format,
        files: vec![FileFacts {
            name: name.into(),
            bytes: file_len,
        }],
        directories: vec![DirectoryFacts {
            path: None,
            file: 0,
            source: None,
            offset: data_start,
            length: file_len.saturating_sub(data_start),
            payload_offset: data_start,
            first: 0,
            count: 0,
            named: true,
            names_sorted: true,
        }],
        ..Inspection::default()
    }
}

/// Adds a foreign tensor to the model's one directory.
fn push_tensor(
    model: &mut Inspection,
    name: &str,
    dtype: TensorDtype,
    shape: Vec<u64>,
    range: Range<u64>,
    layout: Option<(&str, u32)>,
) {
    let elements = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    let index = model.tensors.len();
    if let Some(d) = model.directories.first_mut() {
        let sorted = model
            .tensors
            .last()
            .and_then(|t| t.name.as_deref())
            .is_none_or(|last| last.as_bytes() < name.as_bytes());
        d.names_sorted &= sorted;
        d.count += 1;
    }
    model.tensors.push(TensorFacts {
        directory: 0,
        index,
        name: Some(name.into()),
        in_place: InPlace::of(range.start, dtype.element_align()),
        dtype,
        shape,
        elements,
        offset: range.start,
        length: range.end.saturating_sub(range.start),
        layout: layout.map(|(l, _)| l.into()),
        block_size: layout.map_or(0, |(_, b)| b),
        quant: QuantLink::None,
    });
}

/// A `str` value's Kiln bytes: its length word and its UTF-8.
pub(crate) fn str_bytes(s: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(s.len() + 4);
    bytes.extend_from_slice(&(s.len() as u32).to_le_bytes());
    bytes.extend_from_slice(s.as_bytes());
    bytes
}

/// The model of a safetensors file; the verdict of
/// [`read_safetensors`](crate::read_safetensors) on the whole file on a
/// 64-bit host, on every target (the header reader holds offsets and
/// dimensions in 64 bits, where the safetensors crate's `usize` cannot
/// hold the offsets of a file past 4 GiB on wasm32).
pub fn safetensors_head(name: &str, prefix: &[u8], file_len: u64) -> Result<Step> {
    let header = match read_header(prefix, file_len) {
        Ok(header) => header,
        Err(Refused::ShortHead { needed }) => return Ok(Step::Need(needed)),
        Err(Refused::Crate(e)) => return Err(read_error(prefix, file_len, e)),
    };
    let data_start = header.data_start() as u64;
    let mut model = one_directory(name, Format::Safetensors, file_len, data_start);
    // In the order of their data; tensors of no bytes at one offset, by name.
    for (start, end, i) in data_order(&header) {
        let Some(t) = header.tensors.get(i as usize) else {
            continue;
        };
        let dtype = match kiln_dtype(t.dtype) {
            Some(d) => TensorDtype::Kiln(DtypeCode::Closed(d)),
            None => TensorDtype::Foreign(t.dtype.to_string()),
        };
        let range = data_start + start..data_start + end;
        push_tensor(
            &mut model,
            &t.name,
            dtype,
            header.shape(t).to_vec(),
            range,
            None,
        );
    }
    model.metadata = header
        .metadata
        .iter()
        .flatten()
        .map(|(key, v)| Meta {
            key: key.to_string(),
            type_text: "str".into(),
            bytes: str_bytes(v),
        })
        .collect();
    Ok(Step::Model(Box::new(model)))
}

/// The model of a GGUF file; the verdict of
/// [`Gguf::parse`](crate::gguf::Gguf::parse) on the whole file.
pub fn gguf_head(name: &str, prefix: &[u8], file_len: u64) -> Result<Step> {
    let head = match GgufHead::read(prefix, file_len)? {
        HeadRead::Head(head) => head,
        HeadRead::Need(n) => return Ok(Step::Need(n)),
    };
    let data_start = head
        .head_len
        .div_ceil(head.alignment)
        .saturating_mul(head.alignment)
        .min(file_len);
    let mut model = one_directory(name, Format::Gguf, file_len, data_start);
    model.gguf = Some(GgufFacts {
        version: head.version,
        alignment: head.alignment,
    });
    for t in &head.tensors {
        let code = t.ggml.kiln_dtype();
        // A block type is an opaque dtype with ggml's layout: as `kiln
        // convert` writes it. Block sizes in ggml's table are below 2^32.
        let layout = matches!(code, DtypeCode::Opaque(_))
            .then_some((t.ggml.name, t.ggml.block_bytes as u32));
        let shape = t.dims.iter().rev().copied().collect();
        let range = t.start..t.start + t.len;
        push_tensor(
            &mut model,
            t.name,
            TensorDtype::Kiln(code),
            shape,
            range,
            layout,
        );
    }
    model.metadata = head
        .metadata
        .iter()
        .map(|kv| {
            let (type_text, bytes) = kv.kiln_value()?;
            Ok(Meta {
                key: kv.key.into(),
                type_text,
                bytes,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Step::Model(Box::new(model)))
}

/// Reads a safetensors or GGUF head by ranges; see the [module](self)
/// text. Sans-I/O: [`HeadOpener::next_reads`] names the ranges to read
/// (all may be in flight together), [`HeadOpener::give`] takes each, and
/// [`HeadOpener::finish`] gives the model.
///
/// ```
/// use kiln_convert::head::HeadOpener;
/// use kiln_convert::Format;
///
/// let data = [0u8, 0, 128, 63];
/// let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &data).unwrap();
/// let file = safetensors::serialize([("w", view)], None).unwrap();
/// let mut opener = HeadOpener::new("w.safetensors", Format::Safetensors, file.len() as u64);
/// loop {
///     let reads = opener.next_reads().unwrap();
///     if reads.is_empty() { break; }
///     for r in reads {
///         opener.give(r.start, &file[r.start as usize..r.end as usize]).unwrap();
///     }
/// }
/// let (model, stats) = opener.finish().unwrap();
/// assert_eq!((model.tensors[0].name.as_deref(), stats.requests), (Some("w"), 1));
/// ```
pub struct HeadOpener {
    name: String,
    format: Format,
    file_len: u64,
    /// The file's first bytes, as read so far.
    prefix: Vec<u8>,
    /// Reads asked for: each range, and its bytes once given.
    asked: Vec<(Range<u64>, Option<Vec<u8>>)>,
    model: Option<Inspection>,
    stats: ReadStats,
}

/// The fewest bytes a growing read asks for in one piece.
const MIN_PIECE: u64 = 1 << 20;

/// Bytes `have..target` as the reads after the first ask for them: pieces
/// of at least [`MIN_PIECE`], at most four, in flight together.
fn pieces(have: u64, target: u64) -> Vec<Range<u64>> {
    let piece = (target - have).div_ceil(4).max(MIN_PIECE);
    let mut ranges = Vec::new();
    let mut at = have;
    while at < target {
        let end = at.saturating_add(piece).min(target);
        ranges.push(at..end);
        at = end;
    }
    ranges
}

impl HeadOpener {
    /// An opener of the `format` file `name`, `file_len` bytes long.
    pub fn new(name: &str, format: Format, file_len: u64) -> HeadOpener {
        HeadOpener {
            name: name.into(),
            format,
            file_len,
            prefix: Vec::new(),
            asked: Vec::new(),
            model: None,
            stats: ReadStats::default(),
        }
    }

    /// The ranges to read next, in file order, or none once the head is
    /// read: then [`HeadOpener::finish`]. Ranges asked for and not yet
    /// given are asked again.
    pub fn next_reads(&mut self) -> Result<Vec<Range<u64>>> {
        if !self.asked.is_empty() {
            return Ok(self
                .asked
                .iter()
                .filter(|(_, got)| got.is_none())
                .map(|(r, _)| r.clone())
                .collect());
        }
        if self.model.is_some() {
            return Ok(Vec::new());
        }
        let have = self.prefix.len() as u64;
        let target = if self.stats.requests == 0 {
            FIRST_READ.min(self.file_len)
        } else {
            match read_head(&self.name, self.format, &self.prefix, self.file_len)? {
                Step::Model(model) => {
                    self.model = Some(*model);
                    return Ok(Vec::new());
                }
                Step::Need(n) if n <= have => {
                    return Err(Error::unsupported(
                        "the head reader asked for bytes it holds",
                    ))
                }
                // A safetensors header says its length: exactly that. A
                // GGUF head shows its length only as it is parsed: four
                // times what is held, so the round trips grow with the
                // logarithm of the head's size.
                Step::Need(n) if self.format == Format::Safetensors => n,
                Step::Need(n) => n.max(have.saturating_mul(4)),
            }
        }
        .min(self.file_len);
        if target > MAX_HEAD {
            return Err(Error::unsupported(format!(
                "the file's head needs more than the {MAX_HEAD} bytes an inspector holds"
            )));
        }
        if target <= have {
            // An empty file: nothing to read, and its verdict from nothing.
            return match read_head(&self.name, self.format, &self.prefix, self.file_len)? {
                Step::Model(model) => {
                    self.model = Some(*model);
                    Ok(Vec::new())
                }
                Step::Need(_) => Err(Error::unsupported(
                    "the head reader asked for bytes past the file",
                )),
            };
        }
        // The first read is one request (a URL's first answer also gives
        // the file's length); later ones are pieces.
        let ranges = if self.stats.requests == 0 {
            std::iter::once(0..target).collect()
        } else {
            pieces(have, target)
        };
        self.asked = ranges.iter().map(|r| (r.clone(), None)).collect();
        Ok(ranges)
    }

    /// The reads that will follow the first when the file's first bytes
    /// are `start` (the beginning of the first read, as it arrives): for
    /// a safetensors header longer than the first read, the rest of it,
    /// exactly as [`HeadOpener::next_reads`] will ask for it; none when
    /// the first bytes do not say (a GGUF head, a Kiln file, a header the
    /// first read holds, a length the reader refuses). A URL source
    /// starts these as soon as the first read's first bytes arrive, so
    /// the rest of a long safetensors header comes while the first read
    /// still does, not after it.
    pub fn reads_after_first(start: &[u8], file_len: u64) -> Vec<Range<u64>> {
        let first = FIRST_READ.min(file_len);
        if sniff(start) != Some(Format::Safetensors) {
            return Vec::new();
        }
        let head_len = match header_json(start, file_len) {
            Err(Refused::ShortHead { needed }) => needed,
            Ok(json) => 8 + json.len() as u64,
            Err(Refused::Crate(_)) => return Vec::new(),
        };
        if head_len <= first || head_len > MAX_HEAD {
            return Vec::new();
        }
        pieces(first, head_len)
    }

    /// The bytes of one range [`HeadOpener::next_reads`] named, read from
    /// `at`: exactly that range, or it is refused.
    pub fn give(&mut self, at: u64, bytes: &[u8]) -> Result<()> {
        let slot = self
            .asked
            .iter_mut()
            .find(|(r, got)| r.start == at && got.is_none())
            .ok_or_else(|| Error::unsupported("the bytes given are not a range asked for"))?;
        if bytes.len() as u64 != slot.0.end - slot.0.start {
            return Err(Error::unsupported(format!(
                "a read of {} bytes at {at} returned {}",
                slot.0.end - slot.0.start,
                bytes.len()
            )));
        }
        slot.1 = Some(bytes.to_vec());
        self.stats.bytes += bytes.len() as u64;
        self.stats.requests += 1;
        if self.asked.iter().all(|(_, got)| got.is_some()) {
            for (_, got) in std::mem::take(&mut self.asked) {
                self.prefix.extend_from_slice(&got.unwrap_or_default());
            }
        }
        Ok(())
    }

    /// The model, once [`HeadOpener::next_reads`] named no more ranges,
    /// and what was read.
    pub fn finish(self) -> Result<(Inspection, ReadStats)> {
        let mut stats = self.stats;
        stats.skipped = self.file_len.saturating_sub(stats.bytes);
        stats.scratch = self.prefix.len();
        match self.model {
            Some(model) => Ok((model, stats)),
            None => Err(Error::unsupported("finish before the head is read")),
        }
    }
}
