//! Opening a file read by ranges: the core's incremental checker says
//! which bytes it needs, and only those are read.
//!
//! [`open`] drives [`kiln_nostd::stream::Checker`] over a [`ReadAt`]
//! source (a buffer, a browser `Blob` read by `slice()`, HTTP Range
//! requests): each [`Need::Bytes`] is read into the checker's scratch,
//! each [`Need::Payload`] (payload bytes no rule reads) is skipped and
//! never read. Which bytes those are is the core's knowledge alone; this
//! module knows no offset of the format. The checker keeps the *record
//! image* (the message's bytes outside the payload regions, each
//! `tensors` block replaced by the empty directory) and hands over each
//! block's head as it checks it, with the path of its `tensors` value
//! ([`Checker::path`]); each tensor's facts come from its head
//! ([`kiln_nostd::inspect::head_facts`]). The value tree, which only the
//! inspector shows (feature `inspector`), is the core's walk of the image
//! ([`kiln_nostd::inspect`]), whose directories must be the checked ones.
//!
//! Memory: the scratch holds the image and the largest head, and grows
//! (the check starts again) only when the checker refuses it as too small,
//! up to [`MAX_SCRATCH`]; the heads are kept (the tensor table). A file's
//! size does not enter: a 6 GiB file of 300 tensors opens in well under a
//! megabyte of wasm memory. Offsets are `u64`: a file may be larger than
//! wasm32's address space.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::Range;

use kiln_nostd::inspect::{head_facts, Path, Seg, TensorFacts};
use kiln_nostd::schema::TOOL_NODES;
use kiln_nostd::stream::{Checker, Need, Step};
#[cfg(feature = "inspector")]
use kiln_nostd::Value;
use kiln_nostd::Width;
use kiln_nostd::{CompiledType, Detail, Error, Framing, Limits, Options, Refusal, Result};

pub use kiln_nostd::stream::ReadAt;

/// The first scratch a check of a large file is given.
pub const FIRST_SCRATCH: usize = 256 << 10;

/// The largest scratch: the record image (every byte outside the payload
/// regions) plus the largest directory head must fit in it. A file that
/// needs more is refused (`Capacity`).
pub const MAX_SCRATCH: usize = 64 << 20;

/// How many nodes the type text may compile to: the tools' one cap, so
/// the browser accepts every type `kiln check` accepts.
pub const TYPE_NODES: usize = TOOL_NODES;

/// One `tensors` value of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectoryInfo {
    /// Where it is in the value.
    pub path: Path,
    /// Absolute offset of the block in the file.
    pub offset: u64,
    /// The block's length.
    pub length: u64,
    /// Absolute offset of its payload region.
    pub payload_offset: u64,
    /// Index of its first tensor in [`Opened::tensors`].
    pub first: usize,
    /// How many tensors.
    pub count: usize,
    /// Whether it names its tensors.
    pub named: bool,
    /// Whether the names are in increasing byte order.
    pub names_sorted: bool,
    /// Where its (empty) stand-in starts in [`Opened::image`].
    #[cfg(feature = "inspector")]
    pub image_offset: usize,
}

/// One tensor: the core's facts and where its payload is in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// Every fact of the descriptor (its `range` is empty: see `offset`).
    pub facts: TensorFacts,
    /// Absolute offset of the payload in the file.
    pub offset: u64,
    /// The payload's length.
    pub length: u64,
}

impl Tensor {
    /// The payload's absolute byte range.
    pub fn range(&self) -> Range<u64> {
        self.offset..self.offset.saturating_add(self.length)
    }
}

/// A file that passed every check.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    /// Canonical type text.
    pub type_text: String,
    /// Whether it starts with a frame.
    pub framed: bool,
    /// The type's schema hash (what a frame must carry).
    pub hash: u64,
    /// File length.
    pub len: u64,
    /// The value's outline, with spans in [`Opened::image`] (the
    /// inspector's `value()`).
    #[cfg(feature = "inspector")]
    pub value: Value<'static>,
    /// The record image: the bytes outside the payload regions (what the
    /// value's outline points into).
    #[cfg(feature = "inspector")]
    pub image: Vec<u8>,
    /// Every `tensors` value, in wire order.
    pub directories: Vec<DirectoryInfo>,
    /// Every tensor of every directory, in wire order.
    pub tensors: Vec<Tensor>,
    /// Bytes read from the source.
    pub read: u64,
    /// How many reads.
    pub requests: u64,
    /// Payload bytes skipped (never read).
    pub skipped: u64,
    /// The scratch the check ran with.
    pub scratch: usize,
    /// The file's format: `kiln`, or (opened by the inspector module from
    /// a head) `safetensors` or `gguf`.
    pub format: &'static str,
    /// A foreign file's metadata pairs, for display: key, type, value.
    pub metadata: Vec<[String; 3]>,
}

/// The result of a failed open: the error, and how much was read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Failed {
    /// The error: a wire code or a refusal (bad type text, a read that
    /// failed).
    pub error: Error,
    /// Bytes read from the source.
    pub read: u64,
}

impl From<Error> for Failed {
    fn from(error: Error) -> Failed {
        Failed { error, read: 0 }
    }
}

/// Checks the file in `source` as one value of `type_text` (`tensors` for
/// a bare directory), framed or not, reading only what the checker needs,
/// and collects its facts. Same verdict, code and offset as
/// [`kiln_nostd::check()`] on the whole file.
pub fn open<R: ReadAt>(
    mut source: R,
    type_text: &str,
    framing: Framing,
    limits: Limits,
) -> core::result::Result<Opened, Failed> {
    open_source(&mut source, type_text, framing, limits)
}

/// [`open`] through a `dyn` source: one copy of the check loop in the
/// module, whichever sources call it.
fn open_source(
    source: &mut dyn ReadAt,
    type_text: &str,
    framing: Framing,
    limits: Limits,
) -> core::result::Result<Opened, Failed> {
    let ty: alloc::boxed::Box<CompiledType<'_, TYPE_NODES>> =
        alloc::boxed::Box::new(CompiledType::parse(type_text)?);
    let options = Options { framing, limits };
    let len = source.size()?;
    // A small file needs no more scratch than its length (and a parked
    // head's header): a scratch sized by the file, not by the constant.
    let mut size = usize::try_from(len.saturating_add(128))
        .unwrap_or(usize::MAX)
        .min(FIRST_SCRATCH);
    let mut read = 0u64;
    loop {
        match run(&ty, source, options, len, size, &mut read) {
            Err(f) if f.error.refusal() == Some(Refusal::Capacity) && size < MAX_SCRATCH => {
                size = size.saturating_mul(8).min(MAX_SCRATCH);
            }
            Ok(mut opened) => {
                opened.type_text = type_text.into();
                return Ok(opened);
            }
            Err(f) => return Err(f),
        }
    }
}

/// One check with a scratch of `size` bytes; `read` counts every byte read
/// (over the attempts).
fn run(
    ty: &CompiledType<'_, TYPE_NODES>,
    source: &mut dyn ReadAt,
    options: Options,
    len: u64,
    size: usize,
    read: &mut u64,
) -> core::result::Result<Opened, Failed> {
    let mut scratch = vec![0u8; size];
    let mut heads: Vec<Head> = Vec::new();
    let mut checker = Checker::with_len(ty, options, &mut scratch, len).keeping_record();
    let mut requests = 0u64;
    let fail = |error: Error, read: u64| Failed { error, read };
    loop {
        let need = checker.need().map_err(|e| fail(e, *read))?;
        match need {
            Need::Done => break,
            Need::Bytes { at, len, .. } => {
                let buf = checker.unfilled();
                let n = buf.len();
                if n == 0 && len > 0 {
                    return Err(fail(
                        Error::refused(Refusal::Capacity, "the scratch cannot hold the bytes"),
                        *read,
                    ));
                }
                source.read_at(at, buf).map_err(|e| fail(e, *read))?;
                *read = read.saturating_add(n as u64);
                requests += 1;
                checker.filled(n).map_err(|e| fail(e, *read))?;
                let end = checker.position();
                if let Some((_, head)) = checker.take_head() {
                    let start = end.saturating_sub(head.len() as u64);
                    let bytes = head.to_vec();
                    let path = path_of(checker.path());
                    heads.push(Head { start, bytes, path });
                }
            }
            Need::Payload { len, .. } => checker.skip(len).map_err(|e| fail(e, *read))?,
            // A known length never asks for the end; answer it anyway.
            Need::End => checker.end().map_err(|e| fail(e, *read))?,
        }
    }
    let report = checker.report();
    let (directories, tensors) = facts(options.limits, len, heads).map_err(|e| fail(e, *read))?;
    #[cfg(feature = "inspector")]
    let (value, image) = {
        let image = checker
            .into_image()
            .ok_or_else(|| fail(Error::refused(Refusal::Capacity, "no record image"), *read))?
            .to_vec();
        let value = outline(ty, options, &image, &directories).map_err(|e| fail(e, *read))?;
        (value, image)
    };
    Ok(Opened {
        type_text: String::new(),
        framed: options.is_framed(),
        hash: ty.hash(),
        len,
        #[cfg(feature = "inspector")]
        value,
        #[cfg(feature = "inspector")]
        image,
        directories,
        tensors,
        read: *read,
        requests,
        skipped: report.payload,
        scratch: size,
        format: "kiln",
        metadata: Vec::new(),
    })
}

/// A block's head as the checker gave it: where the block starts in the
/// file, the head's bytes, and the path of its `tensors` value.
struct Head {
    start: u64,
    bytes: Vec<u8>,
    path: Path,
}

/// The checker's steps as a [`Path`].
fn path_of<'a>(steps: impl Iterator<Item = Step<'a>>) -> Path {
    let mut path = Path::root();
    for step in steps {
        path.push(match step {
            Step::Field(name) => Seg::Field(name.into()),
            Step::Index(i) => Seg::Index(i),
            Step::Key(key) => Seg::Key(key.into()),
        });
    }
    path
}

/// The directories and tensors, from the heads.
fn facts(limits: Limits, len: u64, heads: Vec<Head>) -> Result<(Vec<DirectoryInfo>, Vec<Tensor>)> {
    let mut directories = Vec::with_capacity(heads.len());
    let mut tensors = Vec::new();
    // The record image holds each block as the empty directory: the bytes
    // of the blocks before this one, less that stand-in, are not in it.
    #[cfg(feature = "inspector")]
    let mut left_out = 0u64;
    for (index, Head { start, bytes, path }) in heads.into_iter().enumerate() {
        let block = head_facts(&bytes, index, limits)?;
        let payload_offset = start.saturating_add(block.head_len);
        let first = tensors.len();
        let count = block.tensors.len();
        for (facts, offset, length) in block.tensors {
            tensors.push(Tensor {
                facts,
                offset: payload_offset.saturating_add(offset),
                length,
            });
        }
        let length = block.head_len.saturating_add(block.payload_bytes);
        if start.saturating_add(length) > len {
            return Err(Error::refused(
                Refusal::WrongValue,
                "a checked block lies past the end",
            ));
        }
        #[cfg(feature = "inspector")]
        let image_offset = usize::try_from(start.saturating_sub(left_out)).unwrap_or(usize::MAX);
        #[cfg(feature = "inspector")]
        {
            left_out = left_out.saturating_add(length.saturating_sub(STAND_IN));
        }
        directories.push(DirectoryInfo {
            path,
            offset: start,
            length,
            payload_offset,
            first,
            count,
            named: block.named,
            names_sorted: block.names_sorted,
            #[cfg(feature = "inspector")]
            image_offset,
        });
    }
    Ok((directories, tensors))
}

/// The length of the empty directory that stands in for each block in the
/// record image.
#[cfg(feature = "inspector")]
const STAND_IN: u64 = kiln_nostd::Directory::EMPTY.as_bytes().len() as u64;

/// The value's outline, from the core's walk of the record image (the
/// inspector's tree); its directories must be the checked ones, at the
/// same paths and places.
#[cfg(feature = "inspector")]
fn outline(
    ty: &CompiledType<'_, TYPE_NODES>,
    options: Options,
    image: &[u8],
    directories: &[DirectoryInfo],
) -> Result<Value<'static>> {
    let seen = kiln_nostd::inspect::inspect(ty, image, options)?;
    let same = seen.directories.len() == directories.len()
        && seen
            .directories
            .iter()
            .zip(directories)
            .all(|(walked, checked)| {
                walked.path == checked.path && walked.span.start == checked.image_offset
            });
    if !same {
        return Err(Error::refused(
            Refusal::WrongValue,
            "the image's directories are not the checked heads",
        ));
    }
    Ok(seen.value.into_outline())
}

/// Refusal for a range of elements outside a tensor.
pub fn out_of_range() -> Error {
    Error::refused(
        Refusal::WrongElementType,
        "element range outside the tensor",
    )
}

/// The payload bytes (absolute in the file) that hold elements
/// `first..first + count` of a tensor, the index of element `first` within
/// them, and the element count they span: what [`widen_range`] needs, so
/// that a caller reads only those bytes.
pub fn element_bytes(t: &Tensor, first: u64, count: u64) -> Result<(Range<u64>, u64, u64)> {
    let dtype = t.facts.dtype.closed().ok_or(
        Error::refused(
            Refusal::WrongElementType,
            "an opaque dtype has no elements to widen",
        )
        .with_detail(Detail::Dtypes {
            tensor: t.facts.dtype.code(),
            requested: 0,
        }),
    )?;
    let count = count.min(t.facts.elements.saturating_sub(first));
    // `first` comes from a JS number: anything up to u64::MAX, so every
    // step is checked (an overflow is a range outside the tensor).
    let last = first.checked_add(count).ok_or_else(out_of_range)?;
    let (start, end, skip) = match dtype.width() {
        Width::Bytes(w) => {
            let w = u64::from(w);
            let bytes = |n: u64| n.checked_mul(w).ok_or_else(out_of_range);
            (bytes(first)?, bytes(last)?, 0)
        }
        Width::Nibbles => (first / 2, last.div_ceil(2), first % 2),
    };
    if end > t.length || start > end {
        return Err(out_of_range());
    }
    Ok((t.offset + start..t.offset + end, skip, count + skip))
}

/// Widens `count` elements starting at `first` for display, given the
/// bytes [`element_bytes`] named. Bits only: no scale is applied.
pub fn widen_range(t: &Tensor, bytes: &[u8], first: u64, count: u64) -> Result<Vec<f32>> {
    let dtype = t.facts.dtype.closed().ok_or(out_of_range())?;
    let (range, skip, total) = element_bytes(t, first, count)?;
    if (bytes.len() as u64) < range.end - range.start {
        return Err(out_of_range());
    }
    let n = usize::try_from(total - skip).map_err(|_| out_of_range())?;
    let mut out = vec![0f32; n];
    let written = kiln_nostd::widen::widen_into(dtype, bytes, total, skip, &mut out)?;
    out.truncate(written);
    Ok(out)
}
