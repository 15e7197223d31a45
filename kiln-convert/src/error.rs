//! One error value for every failure: which input format was wrong (or
//! which output could not be written), what was wrong, and where.

use core::fmt;

/// What kind of failure an [`Error`] is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input is not a valid safetensors file.
    Safetensors,
    /// The input is not a valid GGUF file.
    Gguf,
    /// The input is not a valid Kiln message of a type this crate reads.
    /// [`Error::kiln_code`] gives the wire code when the bytes break a
    /// rule of the format.
    Kiln,
    /// The input is valid, but the target format cannot hold it (a dtype
    /// with no counterpart, a name heap too large for one directory, ...).
    Unsupported,
    /// Writing the output failed.
    Io,
}

impl ErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Safetensors => "invalid safetensors input",
            ErrorKind::Gguf => "invalid GGUF input",
            ErrorKind::Kiln => "invalid Kiln input",
            ErrorKind::Unsupported => "cannot convert",
            ErrorKind::Io => "cannot write the output",
        }
    }
}

/// A conversion failure: its kind, a sentence saying what is wrong, and
/// the byte offset in the input where it was found, when there is one.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    offset: Option<u64>,
    message: String,
    kiln_code: Option<kiln_nostd::Code>,
    io: Option<std::io::Error>,
    /// The file of a set the fault is in ([`Error::file`]), and where its
    /// name's prefix ends in `message`.
    file: Option<(String, usize)>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, offset: Option<u64>, message: impl Into<String>) -> Error {
        Error {
            kind,
            offset,
            message: message.into(),
            kiln_code: None,
            io: None,
            file: None,
        }
    }

    pub(crate) fn gguf(offset: u64, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Gguf, Some(offset), message)
    }

    pub(crate) fn safetensors(offset: Option<u64>, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Safetensors, offset, message)
    }

    pub(crate) fn kiln(offset: Option<u64>, message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Kiln, offset, message)
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Unsupported, None, message)
    }

    /// A Kiln wire fault or refusal found at `base` + its own offset.
    pub(crate) fn from_kiln(e: kiln_nostd::Error, base: usize, context: &str) -> Error {
        let offset = e.offset().map(|o| o.saturating_add(base as u64));
        let mut message = String::from(context);
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(e.fault());
        match e.kind() {
            kiln_nostd::Kind::Wire(code) => {
                let mut err = Error::kiln(offset, format!("{code}: {message}"));
                err.kiln_code = Some(code);
                err
            }
            kiln_nostd::Kind::Refused(_) => Error::unsupported(message),
        }
    }

    pub(crate) fn with_code(mut self, code: kiln_nostd::Code) -> Error {
        self.kiln_code = Some(code);
        self
    }

    /// The same error, its message prefixed with the metadata key it
    /// concerns (after the file's name, if it has one).
    pub(crate) fn in_key(mut self, key: &str) -> Error {
        let at = self.file.as_ref().map_or(0, |(_, len)| *len);
        self.message.insert_str(
            at.min(self.message.len()),
            &format!("metadata key {key:?}: "),
        );
        self
    }

    /// The same error, its message prefixed with the file of a set it
    /// concerns.
    pub(crate) fn in_file(mut self, file: &str) -> Error {
        let prefix = format!("file {file:?}: ");
        self.file = Some((file.to_string(), prefix.len()));
        self.message = prefix + &self.message;
        self
    }

    pub(crate) fn io(e: std::io::Error) -> Error {
        Error {
            kind: ErrorKind::Io,
            offset: None,
            message: e.to_string(),
            kiln_code: None,
            io: Some(e),
            file: None,
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Byte offset in the input where the fault was found.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// What is wrong, in words (without the kind and the offset).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What is wrong, in words, without the name of the file of a set
    /// that [`Error::message`] starts with (a tool that names the file
    /// itself, from [`Error::file`], prints this).
    pub fn fault(&self) -> &str {
        let start = self.file.as_ref().map_or(0, |(_, len)| *len);
        self.message.get(start..).unwrap_or(&self.message)
    }

    /// The name of the file of a set (a shard of a sharded checkpoint, a
    /// file of a GGUF split set) that holds the fault, as the set names
    /// it; [`Error::offset`] then counts from that file's first byte.
    /// `None` for a fault in a single input, or in the set as a whole.
    pub fn file(&self) -> Option<&str> {
        self.file.as_ref().map(|(name, _)| name.as_str())
    }

    /// The Kiln wire code, for a Kiln input that breaks a rule of the
    /// format.
    pub fn kiln_code(&self) -> Option<kiln_nostd::Code> {
        self.kiln_code
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.as_str())?;
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.io
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::io(e)
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_in_a_file_of_a_set_names_the_file_apart() {
        let e = Error::gguf(7, "bad magic").in_key("k").in_file("b.gguf");
        assert_eq!(
            e.message(),
            "file \"b.gguf\": metadata key \"k\": bad magic"
        );
        assert_eq!(e.fault(), "metadata key \"k\": bad magic");
        assert_eq!(e.file(), Some("b.gguf"));
        let e = Error::gguf(7, "bad magic").in_file("b.gguf").in_key("k");
        assert_eq!(
            e.message(),
            "file \"b.gguf\": metadata key \"k\": bad magic"
        );
        assert_eq!(e.fault(), "metadata key \"k\": bad magic");
        let alone = Error::gguf(7, "bad magic");
        assert_eq!((alone.fault(), alone.file()), ("bad magic", None));
    }
}
