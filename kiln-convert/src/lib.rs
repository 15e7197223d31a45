//! # kiln-convert: model files in and out of Kiln
//!
//! Converts safetensors and GGUF files to one framed Kiln v2 message each,
//! and those messages back, so that every tensor keeps its bytes, dtype
//! and shape and every metadata pair its value and type.
//!
//! Every conversion takes the whole input as a byte slice (the command line
//! memory-maps the file, so nothing is read into memory up front) and
//! writes through any [`std::io::Write`]. Each payload is written once,
//! straight from the input slice into the output: the Kiln builder writes
//! through a [`WriteSink`], the safetensors and GGUF writers through the
//! same buffered writer. Nothing here touches the file system, so the
//! same functions can run in a browser.
//!
//! | from | to | function | message type |
//! |---|---|---|---|
//! | safetensors | Kiln | [`safetensors_to_kiln`] | [`SafetensorsMessage`] |
//! | a safetensors index and its shards | Kiln | [`safetensors_set_to_kiln`] | [`SafetensorsMessage`] |
//! | Kiln | safetensors | [`kiln_to_safetensors`], [`kiln_to_safetensors_set`] | |
//! | GGUF | Kiln | [`gguf_to_kiln`] | [`GgufMessage`] |
//! | a GGUF split set | Kiln | [`gguf_set_to_kiln`] | [`GgufMessage`] |
//! | Kiln | GGUF | [`kiln_to_gguf`], [`kiln_to_gguf_set`] | |
//!
//! Every payload of a converted file lies at a multiple of 64 bytes from
//! the file's start ([`PAYLOAD_ALIGN`]), so a memory map of it reads every
//! tensor in place; a model's names go into as many directories as they
//! need. [`Model::open`] checks a converted file once and
//! [`Model::tensor`] finds any tensor by name in one hash lookup.
//!
//! `spec/conversion.md` in the repository describes both message types,
//! the alignment rule, the dtype mappings and the opaque dtype codes of
//! the ggml block types.
//!
//! ## Example
//!
//! ```
//! use kiln_convert::{convert, Format};
//!
//! // A safetensors file with one f32 tensor, as the safetensors crate writes it.
//! let data = [0u8, 0, 128, 63, 0, 0, 0, 192];
//! let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2], &data).unwrap();
//! let original = safetensors::serialize([("w", view)], None).unwrap();
//!
//! let mut kiln = Vec::new();
//! let summary = convert(Format::Safetensors, Format::Kiln, &original, &mut kiln).unwrap();
//! assert_eq!(summary.tensors, 1);
//! assert!(kiln_nostd::check(kiln_convert::SAFETENSORS_MESSAGE, &kiln, kiln_nostd::Options::FRAMED.with_limits(kiln_convert::LIMITS)).is_ok());
//!
//! let mut back = Vec::new();
//! convert(Format::Kiln, Format::Safetensors, &kiln, &mut back).unwrap();
//! assert_eq!(back, original);
//! ```
//!
//! ## Errors
//!
//! A truncated, corrupt or wrong-format input gives one [`Error`]: its
//! [`ErrorKind`] (which input format is wrong, or that the target cannot
//! hold the input, or that writing failed), what is wrong in words, and the
//! byte offset in the input when there is one. Nothing reachable from input
//! bytes panics, and every count in a GGUF file is bounded by the bytes that
//! remain before anything is allocated from it.

#![deny(missing_docs)]
// One block is allowed, in the safetensors header reader: a name whose
// bytes it found all ASCII becomes a `str` without a second UTF-8 pass.
#![deny(unsafe_code)]

mod error;
pub mod gguf;
mod gguf_kiln;
pub mod head;
mod heap;
pub mod inspect;
mod message;
mod model;
mod safetensors_header;
mod safetensors_json;
mod safetensors_kiln;
mod sink;

use std::io::Write;
use std::path::Path;

pub use crate::error::{Error, ErrorKind, Result};
pub use crate::gguf_kiln::{
    check_gguf_set, check_gguf_split, gguf_set_to_kiln, gguf_split_names, gguf_to_kiln,
    kiln_to_gguf, kiln_to_gguf_set, SplitFile, SPLIT_COUNT_KEY, SPLIT_NO_KEY,
    SPLIT_TENSORS_COUNT_KEY,
};
pub use crate::heap::MAX_NAME_OFFSET;
pub use crate::message::{
    check_file_name, AlignedTensors, GgufFile, GgufMessage, GgufPair, MessageType, SafetensorsFile,
    SafetensorsMessage, GGUF_MESSAGE, LIMITS, PAYLOAD_ALIGN, SAFETENSORS_MESSAGE,
};
pub use crate::model::{Message, Model};
/// The two safetensors header readers apart, for the differential test
/// and the fuzz target (not for use: [`read_safetensors_header`] is the
/// reader).
#[doc(hidden)]
pub use crate::safetensors_header::{fast_reader, serde_reader};
pub use crate::safetensors_header::{HeaderTensor, SafetensorsHeader};
pub use crate::safetensors_kiln::{
    check_safetensors_index, check_safetensors_set, foreign_dtype, foreign_layout, kiln_dtype,
    kiln_safetensors_parts, kiln_to_safetensors, kiln_to_safetensors_set, read_safetensors,
    read_safetensors_header, safetensors_dtype, safetensors_index_files, safetensors_set_to_kiln,
    safetensors_to_kiln, BorrowedView, SafetensorsParts,
};
pub use crate::sink::{WriteSink, BUFFER_LEN, LOAN_LEN, WRITE_ALIGN};

/// What a conversion wrote.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct Summary {
    /// Tensors converted.
    pub tensors: usize,
    /// Metadata pairs converted.
    pub metadata: usize,
    /// Payload bytes copied (without padding).
    pub payload_bytes: u64,
    /// Bytes written to the output.
    pub written: u64,
}

/// A file format this crate reads and writes: the core's
/// ([`kiln_nostd::inspect::Format`]), one type for every tool.
pub use kiln_nostd::inspect::Format;

/// The format a file name's extension names (`.safetensors`, `.gguf`,
/// `.kiln`, in any letter case).
pub fn format_of_path(path: &Path) -> Option<Format> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "safetensors" => Format::Safetensors,
        "gguf" => Format::Gguf,
        "kiln" => Format::Kiln,
        _ => return None,
    })
}

/// Converts `input` in format `from` to format `to`, written to `out`.
/// One side must be Kiln and the other not.
pub fn convert<W: Write>(from: Format, to: Format, input: &[u8], out: W) -> Result<Summary> {
    convert_with_len(from, to, input, out, |_| {})
}

/// [`convert`], telling `on_len` the exact length of the output before the
/// first byte is written, where the converter knows it then (safetensors
/// to Kiln and back; not GGUF, whose converters find it as they write). A
/// caller writing a file can reserve the file's space with it.
pub fn convert_with_len<W: Write>(
    from: Format,
    to: Format,
    input: &[u8],
    out: W,
    on_len: impl FnOnce(u64),
) -> Result<Summary> {
    match (from, to) {
        (Format::Safetensors, Format::Kiln) => {
            safetensors_kiln::safetensors_to_kiln_with(input, out, on_len)
        }
        (Format::Gguf, Format::Kiln) => gguf_to_kiln(input, out),
        (Format::Kiln, Format::Safetensors) => {
            safetensors_kiln::kiln_to_safetensors_with(input, out, on_len)
        }
        (Format::Kiln, Format::Gguf) => kiln_to_gguf(input, out),
        (from, to) => Err(Error::unsupported(format!(
            "{} to {}: one side of a conversion must be Kiln and the other safetensors or GGUF",
            from.title(),
            to.title()
        ))),
    }
}
