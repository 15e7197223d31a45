//! The two Kiln message types this crate writes, and a reader for them.
//!
//! Both are one framed Frozen struct: the 16-byte frame carries the
//! FNV-1a hash of the type text, so a reader tells the two apart (and
//! refuses anything else) before it reads a field.

use kiln_nostd::{frame, Directory, Limits, WIRE_MAX};

use crate::error::{Error, Result};

/// The message a safetensors file becomes: its `__metadata__` as a dict
/// (keys in byte order), then one directory with the tensors sorted by
/// name.
pub const SAFETENSORS_MESSAGE: &str = "struct{metadata:dict<str,str>,tensors:tensors,}";

/// The message a GGUF file becomes: the GGUF version, every metadata pair
/// in file order (key, Kiln type text of the value, the value's Kiln
/// bytes), then one directory with the tensors in GGUF order.
pub const GGUF_MESSAGE: &str =
    "struct{version:u32,metadata:list<struct{key:str,type:str,value:list<u8>,}>,tensors:tensors,}";

/// Caps used to write and read these messages: the wire maxima. A model's
/// tokenizer list can pass the 16 MiB default byte cap; every count is
/// still bounded by the bytes that remain. `kiln check` reads such a
/// message with `--cap 4294967295`.
pub const LIMITS: Limits = Limits::uniform(WIRE_MAX);

/// Which of the two message types a Kiln file holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MessageType {
    /// [`SAFETENSORS_MESSAGE`].
    Safetensors,
    /// [`GGUF_MESSAGE`].
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
        // The texts are constants that parse (a unit test checks it).
        frame::hash_of_text(self.type_text()).unwrap_or(0)
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
                Err(e) => return Err(Error::from_kiln(e, 0, "frame")),
            }
        }
        let found = input
            .get(8..16)
            .and_then(|h| h.try_into().ok())
            .map(u64::from_le_bytes)
            .unwrap_or(0);
        let offset = last.and_then(|e| e.offset()).unwrap_or(8);
        Err(Error::kiln(
            Some(offset),
            format!(
                "SCHEMA: the frame's schema hash {found:#018x} is neither {SAFETENSORS_MESSAGE} \
                 ({:#018x}) nor {GGUF_MESSAGE} ({:#018x}), the two message types convert reads",
                MessageType::Safetensors.hash(),
                MessageType::Gguf.hash()
            ),
        )
        .with_code(kiln_nostd::Code::Schema))
    }
}

/// Checks `input` as one framed message of type `ty` (every rule of the
/// format, under [`LIMITS`]) and returns a reader at its first field.
pub(crate) fn open(input: &[u8], ty: MessageType) -> Result<Fields<'_>> {
    let found = MessageType::of(input)?;
    if found != ty {
        return Err(Error::unsupported(format!(
            "this Kiln file holds a message converted from {} ({}); convert it to a .{} file",
            found.format_name(),
            found.type_text(),
            if found == MessageType::Gguf {
                "gguf"
            } else {
                "safetensors"
            },
        )));
    }
    kiln_nostd::check(
        ty.type_text(),
        input,
        kiln_nostd::Options::FRAMED.with_limits(LIMITS),
    )
    .map_err(|e| Error::from_kiln(e, 0, ty.type_text()))?;
    Ok(Fields {
        buf: input,
        pos: frame::FRAME_LEN,
    })
}

/// Reads the fields of a message that [`open`] has checked. Reads are
/// still bounds-checked: a miss is an error, never a panic.
pub(crate) struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    fn short(&self) -> Error {
        Error::kiln(Some(self.pos as u64), "message is cut short")
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        let bytes = self
            .pos
            .checked_add(len)
            .and_then(|end| self.buf.get(self.pos..end))
            .ok_or_else(|| self.short())?;
        self.pos += len;
        Ok(bytes)
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        let bytes: [u8; 4] = self.take(4)?.try_into().map_err(|_| self.short())?;
        Ok(u32::from_le_bytes(bytes))
    }

    /// A `list<u8>`.
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8]> {
        let len = self.u32()? as usize;
        self.take(len)
    }

    /// A `str`.
    pub(crate) fn str(&mut self) -> Result<&'a str> {
        let at = self.pos;
        core::str::from_utf8(self.bytes()?)
            .map_err(|_| Error::kiln(Some(at as u64), "UTF8: string is not UTF-8"))
    }

    /// A `tensors` field.
    pub(crate) fn directory(&mut self) -> Result<Directory<'a>> {
        let at = self.pos;
        let rest = self.buf.get(at..).ok_or_else(|| self.short())?;
        let dir = Directory::parse_prefix(rest, LIMITS)
            .map_err(|e| Error::from_kiln(e, at, "tensor directory"))?;
        self.take(dir.block_len())?;
        Ok(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_texts_parse_and_hash_apart() {
        for ty in [MessageType::Safetensors, MessageType::Gguf] {
            assert_eq!(frame::hash_of_text(ty.type_text()).ok(), Some(ty.hash()));
        }
        assert_ne!(MessageType::Safetensors.hash(), MessageType::Gguf.hash());
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
}
