//! The two Kiln message types this crate writes, as `#[derive(Frozen)]`
//! structs that tools import, and the writer of their aligned directories.
//!
//! Both hold the source files of a model (one file, or every shard of a
//! sharded checkpoint or split set), each file's tensors in as many
//! directories as its names need ([`AlignedTensors`]). The 16-byte frame
//! carries the FNV-1a hash of the type text, so a reader tells the two
//! apart (and refuses anything else) before it reads a field.
//!
//! Zero-copy: every directory block starts at an absolute offset in the
//! message that is a multiple of 64, and a block places every payload at a
//! multiple of 64 from its start, so every payload of every tensor lies at
//! a file offset that is a multiple of 64, whatever the metadata. Frozen
//! inserts no padding, so the types carry it: the `align` field before
//! each directory is a `list<u8>` of zeros whose length puts the block
//! that follows on the boundary. The writer chooses that length; a reader
//! refuses a non-zero byte in it or a block it leaves off the boundary.

use kiln_nostd::{
    frame, DictView, Directory, Encode, Frozen, Limits, TensorSpec, Tensors, Writer, WIRE_MAX,
};

use crate::error::{Error, Result};

/// One directory of a converted file, placed at a multiple of 64 bytes.
#[derive(Frozen, Clone, Debug)]
pub struct AlignedTensors<'a> {
    /// Zero bytes, as many as put `tensors` at a multiple of 64 from the
    /// start of the message (0 to 63).
    pub align: &'a [u8],
    /// The tensors: at most 64 KiB of names per directory.
    pub tensors: Directory<'a>,
}

/// One safetensors file of a converted model.
#[derive(Frozen, Clone, Debug)]
pub struct SafetensorsFile<'a> {
    /// The shard's file name as the index names it; empty for a model that
    /// was one file.
    pub file: &'a str,
    /// Its `__metadata__` (keys in byte order; empty when absent).
    pub metadata: DictView<'a, &'a str>,
    /// Its tensors sorted by name, split over as many directories as the
    /// names need.
    pub directories: Vec<AlignedTensors<'a>>,
}

/// What a safetensors file, or a sharded safetensors checkpoint, becomes.
#[derive(Frozen, Clone, Debug)]
pub struct SafetensorsMessage<'a> {
    /// The index file's name (`model.safetensors.index.json`); empty for
    /// one file.
    pub index_file: &'a str,
    /// The index file's bytes as they were read (JSON); empty for one file.
    pub index: &'a str,
    /// The files, in the order of their names.
    pub files: Vec<SafetensorsFile<'a>>,
}

/// One GGUF metadata pair: key, the Kiln type text of the value (see
/// [`crate::gguf::value`]), the value's Kiln bytes.
#[derive(Frozen, Clone, Debug)]
pub struct GgufPair<'a> {
    /// The key.
    pub key: &'a str,
    /// Kiln type text of the value, which names its GGUF type.
    pub value_type: &'a str,
    /// The value's Kiln bytes.
    pub value: &'a [u8],
}

/// One GGUF file of a converted model.
#[derive(Frozen, Clone, Debug)]
pub struct GgufFile<'a> {
    /// The file's name in a split set (`model-00001-of-00003.gguf`); empty
    /// for a model that was one file.
    pub file: &'a str,
    /// The GGUF version.
    pub version: u32,
    /// Every metadata pair in file order.
    pub metadata: Vec<GgufPair<'a>>,
    /// The tensors in file order, split over as many directories as the
    /// names need.
    pub directories: Vec<AlignedTensors<'a>>,
}

/// What a GGUF file, or a GGUF split set, becomes.
#[derive(Frozen, Clone, Debug)]
pub struct GgufMessage<'a> {
    /// The files, in split order.
    pub files: Vec<GgufFile<'a>>,
}

/// The type text of [`SafetensorsMessage`].
pub const SAFETENSORS_MESSAGE: &str = "struct{index_file:str,index:str,files:list<struct{file:str,metadata:dict<str,str>,directories:list<struct{align:list<u8>,tensors:tensors,}>,}>,}";

/// The type text of [`GgufMessage`].
pub const GGUF_MESSAGE: &str = "struct{files:list<struct{file:str,version:u32,metadata:list<struct{key:str,value_type:str,value:list<u8>,}>,directories:list<struct{align:list<u8>,tensors:tensors,}>,}>,}";

/// Caps used to write and read these messages: the wire maxima. A model's
/// tokenizer list can pass the 16 MiB default byte cap; every count is
/// still bounded by the bytes that remain. `kiln check` reads such a
/// message with `--cap 4294967295`.
pub const LIMITS: Limits = Limits::uniform(WIRE_MAX);

/// The alignment every payload of a converted file has, as an absolute
/// offset in the file.
pub const PAYLOAD_ALIGN: usize = 64;

/// Which of the two message types a Kiln file holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MessageType {
    /// [`SafetensorsMessage`].
    Safetensors,
    /// [`GgufMessage`].
    Gguf,
}

impl MessageType {
    /// The canonical type text.
    pub fn type_text(self) -> &'static str {
        match self {
            MessageType::Safetensors => SAFETENSORS_MESSAGE,
            MessageType::Gguf => GGUF_MESSAGE,
        }
    }

    /// The schema hash the frame carries.
    pub fn hash(self) -> u64 {
        match self {
            MessageType::Safetensors => SafetensorsMessage::HASH,
            MessageType::Gguf => GgufMessage::HASH,
        }
    }

    /// The file format this message type converts back to.
    pub fn format_name(self) -> &'static str {
        match self {
            MessageType::Safetensors => "safetensors",
            MessageType::Gguf => "GGUF",
        }
    }

    /// Reads the frame of a Kiln file and says which message type it
    /// holds.
    pub fn of(input: &[u8]) -> Result<MessageType> {
        let types = [MessageType::Safetensors, MessageType::Gguf];
        let mut last = None;
        for ty in types {
            match frame::open(input, ty.hash()) {
                Ok(_) => return Ok(ty),
                Err(e) if e.code() == Some(kiln_nostd::Code::Schema) => last = Some(e),
                Err(e) => return Err(Error::from_kiln(e, 0, "")),
            }
        }
        let found = frame::peek(input).map_or(0, |f| f.hash);
        let offset = last.and_then(|e| e.offset()).unwrap_or(8);
        Err(Error::kiln(
            Some(offset),
            format!(
                "SCHEMA: the frame's schema hash {found:#018x} is neither the safetensors \
                 conversion message ({:#018x}) nor the GGUF one ({:#018x}), the two message \
                 types convert reads (spec/conversion.md)",
                MessageType::Safetensors.hash(),
                MessageType::Gguf.hash()
            ),
        )
        .with_code(kiln_nostd::Code::Schema))
    }
}

/// Checks that each directory of `dirs` sits where the alignment rule puts
/// it: zeros only in `align`, and the block at a multiple of
/// [`PAYLOAD_ALIGN`]. `file` names the file for the message.
pub(crate) fn check_alignment(dirs: &[AlignedTensors<'_>], file: &str) -> Result<()> {
    for (i, dir) in dirs.iter().enumerate() {
        let at = dir.tensors.offset();
        let pad_at = at.saturating_sub(dir.align.len());
        let where_ = if file.is_empty() {
            format!("directory {i}")
        } else {
            format!("directory {i} of file {file:?}")
        };
        if let Some(k) = dir.align.iter().position(|&b| b != 0) {
            return Err(Error::kiln(
                Some((pad_at + k) as u64),
                format!(
                    "conversion message: the alignment field before {where_} holds a non-zero \
                     byte; it must be zeros"
                ),
            ));
        }
        if at % PAYLOAD_ALIGN != 0 {
            return Err(Error::kiln(
                Some(at as u64),
                format!(
                    "conversion message: {where_} starts at byte {at}, not a multiple of \
                     {PAYLOAD_ALIGN}: its alignment field of {} bytes misplaces it, so its \
                     payloads could not be read in place",
                    dir.align.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Zeros for the alignment field.
const ZEROS: [u8; PAYLOAD_ALIGN] = [0; PAYLOAD_ALIGN];

/// Writes `groups` as a `list<struct{align:list<u8>,tensors:tensors,}>`,
/// each block at a multiple of [`PAYLOAD_ALIGN`] from the start of the
/// message (the writer counts from the frame's first byte).
pub(crate) fn write_directories<S: kiln_nostd::Sink>(
    w: &mut Writer<S>,
    groups: &[&[TensorSpec<'_>]],
) -> kiln_nostd::Result<()> {
    write_directories_with(w, groups.len(), |i, w| {
        Tensors(groups.get(i).copied().unwrap_or_default()).encode(w)
    })
}

/// [`write_directories`] of `count` directories, each block written by
/// `block(i, w)` (the caller makes each directory's specs when it is its
/// turn, into one buffer).
pub(crate) fn write_directories_with<S: kiln_nostd::Sink>(
    w: &mut Writer<S>,
    count: usize,
    mut block: impl FnMut(usize, &mut Writer<S>) -> kiln_nostd::Result<()>,
) -> kiln_nostd::Result<()> {
    w.count(count, LIMITS.count_cap)?;
    for i in 0..count {
        // The block starts after the field's 4-byte count and its zeros.
        let after_count = w.written().wrapping_add(4);
        let pad = after_count.wrapping_neg() % PAYLOAD_ALIGN;
        w.byte_run(ZEROS.get(..pad).unwrap_or_default())?;
        block(i, w)?;
    }
    Ok(())
}

/// The length of the u32 count a list, dict, string or byte run starts
/// with ([`Writer::count`]).
pub(crate) const COUNT_LEN: u64 = 4;

/// The length [`write_directories_with`] writes for blocks of
/// `block_lens` bytes, starting `at` bytes into the message: the list's
/// count, then each block's alignment field (its count and zeros) and the
/// block. `None` when a length overflows.
pub(crate) fn directories_len(at: u64, block_lens: impl IntoIterator<Item = u64>) -> Option<u64> {
    let mut end = at.checked_add(COUNT_LEN)?;
    for block in block_lens {
        let after_count = end.checked_add(COUNT_LEN)?;
        let pad = after_count.wrapping_neg() % PAYLOAD_ALIGN as u64;
        end = after_count.checked_add(pad)?.checked_add(block)?;
    }
    end.checked_sub(at)
}

/// A file name the converter reads or writes beside the others of a
/// model: one plain name, never a path (`a/b`, `..`) a crafted index or
/// Kiln file could use to reach outside the model's folder.
pub fn check_file_name(name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\\', '\0'])
        || name.starts_with('.')
        || name.contains(':');
    if bad {
        return Err(Error::unsupported(format!(
            "file name {name:?} is not a plain file name (no folder, no leading dot); a \
             model's files must sit side by side"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_texts_are_the_derived_structs() {
        assert_eq!(SafetensorsMessage::SCHEMA.to_string(), SAFETENSORS_MESSAGE);
        assert_eq!(GgufMessage::SCHEMA.to_string(), GGUF_MESSAGE);
        for ty in [MessageType::Safetensors, MessageType::Gguf] {
            assert_eq!(frame::hash_of_text(ty.type_text()).ok(), Some(ty.hash()));
        }
        assert_ne!(MessageType::Safetensors.hash(), MessageType::Gguf.hash());
        // The hashes spec/conversion.md lists.
        assert_eq!(MessageType::Safetensors.hash(), 0x6a00317fc752dc09);
        assert_eq!(MessageType::Gguf.hash(), 0xc8f2c6fe756068f8);
    }

    #[test]
    fn a_frame_of_another_type_is_schema() {
        let mut buf = b"KLN0\0\0\0\0".to_vec();
        buf.extend(0x1234u64.to_le_bytes());
        let err = MessageType::of(&buf).unwrap_err();
        assert_eq!(err.kiln_code(), Some(kiln_nostd::Code::Schema));
        assert_eq!(err.offset(), Some(8));
        let err = MessageType::of(b"KLN").unwrap_err();
        assert_eq!(err.kiln_code(), Some(kiln_nostd::Code::Eof));
        let err = MessageType::of(b"GGUF\x03\0\0\0").unwrap_err();
        assert_eq!(err.kiln_code(), Some(kiln_nostd::Code::Frame));
    }

    #[test]
    fn file_names_are_plain() {
        for ok in ["model-00001-of-00003.safetensors", "a.gguf", "x y.json"] {
            assert!(check_file_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", ".", "..", "../x", "a/b", "a\\b", ".hidden", "c:x", "a\0",
        ] {
            assert!(check_file_name(bad).is_err(), "{bad:?}");
        }
    }
}
