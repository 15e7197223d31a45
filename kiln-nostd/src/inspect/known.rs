//! How a Kiln file is read when the caller gives no type: the types a
//! tool knows by their frame hash, and the one rule every tool applies
//! ([`recognise`]), so `kiln check`, `kiln inspect` and the browser
//! modules read the same bytes the same way.

use alloc::string::String;

use super::Format;
use crate::error::{Code, Detail, Error, Result};
use crate::frame;
use crate::limits::{Framing, Limits, Options, WIRE_MAX};

/// A message type a tool recognises by the schema hash in its frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct KnownType {
    /// The format such a message converts back to.
    pub converted_from: Format,
    /// Its canonical type text.
    pub type_text: &'static str,
    /// The schema hash of its type text: what its frame carries (a test
    /// compiles the text and checks it, so a reader recognises a frame
    /// without compiling a type).
    pub hash: u64,
    /// The caps it is written and read with.
    pub limits: Limits,
}

/// The message `kiln convert` writes for a safetensors file or shard set
/// (kiln-convert's `SafetensorsMessage`; `spec/conversion.md`, 2.1). Both
/// caps are the wire maximum: a model's tokenizer can pass the default.
pub const SAFETENSORS_CONVERSION: KnownType = KnownType {
    converted_from: Format::Safetensors,
    type_text: "struct{index_file:str,index:str,files:list<struct{file:str,metadata:dict<str,str>,directories:list<struct{align:list<u8>,tensors:tensors,}>,}>,}",
    hash: 0x6a00_317f_c752_dc09,
    limits: Limits::uniform(WIRE_MAX),
};

/// The message `kiln convert` writes for a GGUF file or split set
/// (kiln-convert's `GgufMessage`; `spec/conversion.md`, 3.1).
pub const GGUF_CONVERSION: KnownType = KnownType {
    converted_from: Format::Gguf,
    type_text: "struct{files:list<struct{file:str,version:u32,metadata:list<struct{key:str,value_type:str,value:list<u8>,}>,directories:list<struct{align:list<u8>,tensors:tensors,}>,}>,}",
    hash: 0xc8f2_c6fe_7560_68f8,
    limits: Limits::uniform(WIRE_MAX),
};

/// Every type a tool recognises by its frame hash.
pub const KNOWN_TYPES: [KnownType; 2] = [SAFETENSORS_CONVERSION, GGUF_CONVERSION];

/// How to read a Kiln file: its type, framing and caps, and the known
/// type it is, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    /// Canonical type text.
    pub type_text: String,
    /// Whether the bytes start with a frame.
    pub framed: bool,
    /// The caps.
    pub limits: Limits,
    /// The known type, when the type is one.
    pub known: Option<KnownType>,
}

impl Reading {
    /// The walker's options.
    pub fn options(&self) -> Options {
        Options {
            framing: if self.framed {
                Framing::Framed
            } else {
                Framing::Bare
            },
            limits: self.limits,
        }
    }
}

/// How to read a Kiln file that starts with `first` (16 bytes are
/// enough): what the caller gives decides (a type, the framing, the
/// caps), and the bytes decide the rest. A frame is recognised by its
/// magic; a frame whose hash is one of [`KNOWN_TYPES`] gives that type
/// and its caps; bytes with no frame and no type given are a tensor
/// directory (`tensors`). A frame of any other hash, with no type given,
/// is SCHEMA at the hash's offset (8): no type the reader knows has it.
///
/// ```
/// use kiln_nostd::inspect::{recognise, SAFETENSORS_CONVERSION};
/// use kiln_nostd::Directory;
///
/// let bare = recognise(Directory::EMPTY.as_bytes(), None, None, None).unwrap();
/// assert_eq!((bare.type_text.as_str(), bare.framed), ("tensors", false));
/// let mut frame = *b"KLN0\0\0\0\0........";
/// frame[8..].copy_from_slice(&SAFETENSORS_CONVERSION.hash.to_le_bytes());
/// let converted = recognise(&frame, None, None, None).unwrap();
/// assert_eq!(converted.known, Some(SAFETENSORS_CONVERSION));
/// frame[8] ^= 1;
/// assert_eq!(recognise(&frame, None, None, None).unwrap_err().offset(), Some(8));
/// ```
pub fn recognise(
    first: &[u8],
    type_text: Option<&str>,
    framed: Option<bool>,
    limits: Option<Limits>,
) -> Result<Reading> {
    let peeked = frame::peek(first);
    // Bytes that start with the frame magic but end before a frame does
    // are read framed: the frame's rules say EOF where they end.
    let cut_frame = peeked.is_none() && first.starts_with(&frame::FRAME_MAGIC);
    let framed = framed.unwrap_or(peeked.is_some() || cut_frame);
    let by_hash = peeked
        .filter(|_| framed)
        .and_then(|info| KNOWN_TYPES.into_iter().find(|k| k.hash == info.hash));
    let (type_text, known) = match (type_text, by_hash, peeked) {
        (Some(text), _, _) => (
            String::from(text),
            KNOWN_TYPES.into_iter().find(|k| k.type_text == text),
        ),
        (None, Some(known), _) => (String::from(known.type_text), Some(known)),
        (None, None, Some(info)) if framed => {
            // The frame's own bytes come first in the check order: a bad
            // profile, flags or reserved bytes are FRAME before the hash.
            frame::open(first, info.hash)?;
            return Err(Error::wire(
                Code::Schema,
                "the frame's schema hash does not name a type this reader knows (the two \
                 message types kiln convert writes), and a hash does not tell its type: \
                 give the type",
                8,
            )
            .with_detail(Detail::UnknownHash { found: info.hash }));
        }
        (None, None, _) => (String::from("tensors"), None),
    };
    let limits = limits.unwrap_or(match known {
        Some(k) => k.limits,
        None => Limits::DEFAULT,
    });
    Ok(Reading {
        type_text,
        framed,
        limits,
        known,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::schema::CompiledType;

    #[test]
    fn the_known_hashes_are_their_texts_hashes() {
        for known in KNOWN_TYPES {
            let ty = CompiledType::<64>::parse(known.type_text).unwrap();
            assert_eq!(ty.hash(), known.hash, "{}", known.type_text);
            assert_eq!(ty.to_string(), known.type_text, "canonical");
        }
        // spec/conversion.md, section 1.
        assert_eq!(SAFETENSORS_CONVERSION.hash, 0x6a00_317f_c752_dc09);
        assert_eq!(GGUF_CONVERSION.hash, 0xc8f2_c6fe_7560_68f8);
    }

    #[test]
    fn a_given_type_wins_and_a_framed_unknown_hash_is_schema() {
        let mut frame = [0u8; 16];
        frame[..4].copy_from_slice(b"KLN0");
        frame[8..].copy_from_slice(&0x1234u64.to_le_bytes());
        let e = recognise(&frame, None, None, None).unwrap_err();
        assert_eq!((e.code(), e.offset()), (Some(Code::Schema), Some(8)));
        let given = recognise(&frame, Some("u8"), None, None).unwrap();
        assert_eq!((given.type_text.as_str(), given.framed), ("u8", true));
        assert_eq!(given.limits, Limits::DEFAULT);
        // Read as bare, the frame's bytes are a directory's (and fail there).
        let bare = recognise(&frame, None, Some(false), None).unwrap();
        assert_eq!(bare.type_text, "tensors");
        let given = recognise(&frame, Some(GGUF_CONVERSION.type_text), None, None).unwrap();
        assert_eq!(given.known, Some(GGUF_CONVERSION));
        assert_eq!(given.limits, GGUF_CONVERSION.limits);
    }
}
