//! What the subcommands share: reading the input (a memory-mapped file or
//! standard input), failures with their exit status, type text, and sizes
//! for people.

use std::fs::File;
use std::io::{Read, Write};
use std::ops::Deref;
use std::path::Path;
use std::process::ExitCode;

use kiln_convert::MessageType;
use kiln_nostd::{frame, CompiledType, Kind, Limits, TOOL_NODES};

/// The input bytes: a read-only memory map of the file.
pub enum Input {
    /// An empty file (which cannot be mapped), or nothing read.
    Empty,
    /// A file, mapped.
    Mapped(memmap2::Mmap),
    /// Standard input, read whole.
    Read(Vec<u8>),
}

impl Deref for Input {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Input::Empty => &[],
            Input::Mapped(map) => map,
            Input::Read(bytes) => bytes,
        }
    }
}

/// Maps the file at `path` read-only.
pub fn map_input(path: &Path) -> std::io::Result<Input> {
    let file = File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(Input::Empty);
    }
    // SAFETY: `Mmap::map` is unsafe because the file can change underneath
    // the map while we hold it, and Rust assumes the bytes behind a `&[u8]`
    // do not change. If another process truncates the file during the
    // command, touching a page past the new end raises SIGBUS and kills
    // `kiln`; if it writes to the file, the bytes used may
    // differ from the bytes that were checked, and a name checked as UTF-8
    // might not be UTF-8 any more when it is copied (formally undefined
    // behaviour for a `&str`; in practice the copy carries the new bytes).
    // The map's length is fixed when it is made and every read of it is
    // bounds-checked against that length, so a change cannot make us read
    // outside the map. We accept this, as ripgrep and the
    // safetensors crate do for their maps: converting a file that another
    // process is changing is not supported, and the worst outcomes are a
    // crash or a wrong output, never a read of unrelated memory. In return
    // a multi-gigabyte input is never copied into memory.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    #[cfg(unix)]
    {
        // Only a hint for the kernel's read-ahead; a refusal changes nothing.
        let _ = map.advise(memmap2::Advice::Sequential);
    }
    Ok(Input::Mapped(map))
}

/// Reads FILE: `-` is standard input, anything else is mapped.
pub fn read_input(file: &str) -> Result<Input, Failure> {
    if file == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::io(file, "read", &e))?;
        return Ok(Input::Read(bytes));
    }
    map_input(Path::new(file)).map_err(|e| Failure::io(file, "read", &e))
}

/// Largest type a person types: the tools' one cap (kiln-cli, kiln-convert
/// and the browser module accept the same types). The table lives on the
/// heap.
pub const TYPE_NODES: usize = TOOL_NODES;

/// A compiled type, on the heap.
pub type Type<'t> = Box<CompiledType<'t, TYPE_NODES>>;

/// Compiles canonical type text (see [`canonical_type`] for text a person
/// typed).
pub fn compile(text: &str) -> Result<Type<'_>, Failure> {
    compile_type(text).map_err(|e| Failure::usage(format!("bad type text {text:?}: {e}")))
}

/// [`compile`], with the core's error.
pub fn compile_type(text: &str) -> kiln_nostd::Result<Type<'_>> {
    CompiledType::parse(text).map(Box::new)
}

/// Type text as a person types it, made canonical: spaces around the
/// punctuation `{ } < > : ,` are dropped and a struct's last field may
/// leave out its comma (`struct{ id: u32, name: str }`). The result is the
/// canonical text, whose hash is what a frame carries; the core parser
/// itself takes canonical text only. A space inside a name is refused.
pub fn canonical_type(text: &str) -> Result<String, Failure> {
    let bad = |why: &str| Failure::usage(format!("bad type text {text:?}: {why}"));
    let punct = |c: char| matches!(c, '{' | '}' | '<' | '>' | ':' | ',');
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            let before = out.chars().last().is_some_and(punct);
            let after = chars.peek().copied().is_some_and(punct);
            if !before && !after {
                return Err(bad("a space inside a name"));
            }
            continue;
        }
        if c == '}' && !matches!(out.chars().last(), Some('{' | ',')) {
            out.push(',');
        }
        out.push(c);
    }
    let ty: Type<'_> = CompiledType::parse(&out)
        .map(Box::new)
        .map_err(|e| bad(&e.to_string()))?;
    Ok(ty.to_string())
}

/// Canonical type text for `--type TEXT`, and a note on standard error
/// when TEXT was not already canonical, so the canonical form (the one to
/// use in code, whose hash frames carry) is printed back.
pub fn type_arg(text: &str) -> Result<String, Failure> {
    let canonical = canonical_type(text)?;
    if canonical != text {
        eprintln!("kiln: type text read as {canonical}");
    }
    Ok(canonical)
}

/// How to read a Kiln value: its canonical type text, whether it is framed,
/// the caps, and the conversion message type it is, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    pub type_text: String,
    pub framed: bool,
    pub limits: Limits,
    pub message: Option<MessageType>,
    /// The core's known type, when the type is one.
    pub known: Option<kiln_nostd::inspect::KnownType>,
}

impl Reading {
    /// The walker's options.
    pub fn options(&self) -> kiln_nostd::Options {
        kiln_nostd::Options {
            framing: if self.framed {
                kiln_nostd::Framing::Framed
            } else {
                kiln_nostd::Framing::Bare
            },
            limits: self.limits,
        }
    }
}

/// What the flags say, each `None` when not given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadFlags {
    /// `--type TEXT`, as typed.
    pub type_text: Option<String>,
    /// `--framed` (true) or `--bare` (false).
    pub framed: Option<bool>,
    /// `--cap N`.
    pub limits: Option<Limits>,
}

impl ReadFlags {
    /// Takes `flag` (and its value from `walk`) when it is one of the
    /// reading flags `kiln check` and `kiln decode` share; false when it
    /// is not, for the command's own flags.
    pub fn take(&mut self, flag: &str, walk: &mut ArgWalk<'_>) -> Result<bool, String> {
        match flag {
            "--type" => self.type_text = Some(walk.value(flag)?.into()),
            "--framed" => self.framed = Some(true),
            "--bare" => self.framed = Some(false),
            "--cap" => self.limits = Some(walk.cap(flag)?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// How to read `bytes`: the flags decide what they give; the bytes decide
/// the rest, as `kiln inspect` does. A frame is recognised by its magic
/// (a frame cut inside its 16 bytes too, so that the check says where it
/// ends); a frame whose hash is one of the conversion message types gives
/// that type and the wire-maximum caps; a bare value without `--type` is a
/// tensor directory.
///
/// Refused here, as invalid input: a frame whose hash names no type this
/// tool knows, without `--type` (SCHEMA at byte 8, after the frame's own
/// bytes are checked in their order, as `kiln convert` checks them); a
/// safetensors or GGUF file read as a directory (FRAME at byte 0, naming
/// the format).
pub fn reading(bytes: &[u8], flags: &ReadFlags, file: &str) -> Result<Reading, Failure> {
    let type_text = flags.type_text.as_deref().map(type_arg).transpose()?;
    let bare = flags.framed == Some(false) || frame::peek(bytes).is_none();
    if type_text.is_none() && bare && !bytes.starts_with(&frame::FRAME_MAGIC) {
        if let Some(found) = foreign_format(bytes, file) {
            return Err(Failure::foreign(
                file,
                found,
                "use `kiln inspect` to read it or `kiln convert` to convert it to Kiln",
            ));
        }
    }
    // The core's one rule, as every tool reads a Kiln file; a frame whose
    // hash names no type it knows is said in the command line's words
    // (the type is given with --type), whatever the core's text.
    let core =
        kiln_nostd::inspect::recognise(bytes, type_text.as_deref(), flags.framed, flags.limits)
            .map_err(|e| match (e.code(), frame::peek(bytes)) {
                (Some(kiln_nostd::Code::Schema), Some(info)) => unknown_hash(file, info.hash),
                _ => Failure::kiln(file, e),
            })?;
    let message = core.known.map(|k| match k.converted_from {
        kiln_convert::Format::Gguf => MessageType::Gguf,
        _ => MessageType::Safetensors,
    });
    Ok(Reading {
        known: core.known,
        type_text: core.type_text,
        framed: core.framed,
        limits: core.limits,
        message,
    })
}

/// A frame whose schema hash names no type this tool knows: neither a
/// `--type` nor one of the message types `kiln convert` writes.
fn unknown_hash(file: &str, hash: u64) -> Failure {
    let known: Vec<String> = kiln_nostd::inspect::KNOWN_TYPES
        .iter()
        .map(|k| format!("{:#018x}", k.hash))
        .collect();
    Failure::invalid(
        file,
        "SCHEMA",
        &format!(
            "the frame's schema hash {hash:#018x} does not name a type this tool knows (the \
             message types `kiln convert` writes are {}), and a hash does not tell its type: \
             give the type with --type TYPE",
            known.join(" and ")
        ),
        Some(8),
    )
}

/// How a file is named in an error line: `standard input` for `-`.
pub fn file_name(file: &str) -> &str {
    if file == "-" {
        "standard input"
    } else {
        file
    }
}

/// Runs a subcommand the way every one of them runs: parse its arguments
/// (`Ok(None)` asks for `--help`), do the work, and turn the outcome into the
/// documented exit status (0, 1 for invalid input, 2 for usage or I/O).
pub fn run_subcommand<A>(
    args: &[String],
    parse: impl FnOnce(&[String]) -> Result<Option<A>, String>,
    help: &str,
    usage: &str,
    work: impl FnOnce(&A) -> Result<(), Failure>,
) -> ExitCode {
    match parse(args) {
        Ok(Some(parsed)) => match work(&parsed) {
            Ok(()) => ExitCode::SUCCESS,
            Err(failure) => failure.exit(),
        },
        Ok(None) => match print(&format!("{help}\n")) {
            Ok(()) => ExitCode::SUCCESS,
            Err(failure) => failure.exit(),
        },
        Err(message) => Failure::usage(format!("{message}\n{usage}")).exit(),
    }
}

/// A command that did not succeed: its one line for standard error and
/// its exit status. Every error line of every command is made here, in
/// one of two shapes (docs/cli.md, "Errors"):
///
/// - invalid input, exit status 1: `error: FILE: CODE: sentence at byte N`
///   (no ` at byte N` when the fault has no one place);
/// - usage or I/O, exit status 2: `kiln: FILE: reason`, or `kiln: reason`
///   when no file is concerned (a bad flag adds the usage line).
#[derive(Debug)]
pub struct Failure {
    /// The line, without its newline.
    pub message: String,
    /// 1 invalid input, 2 usage or I/O.
    pub status: u8,
    /// Invalid input: its code (a wire code or one of [`code`]), the
    /// sentence and the byte offset the line names.
    pub invalid: Option<Invalid>,
}

/// What an invalid-input [`Failure`] says, in parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// A wire code (`EOF`, `FRAME`, ...) or one of [`code`].
    pub code: String,
    /// What is wrong, in the core's words.
    pub sentence: String,
    /// The byte the fault is at, when it has one place.
    pub offset: Option<u64>,
}

/// The codes of invalid input that are not wire codes (docs/cli.md).
pub mod code {
    /// A safetensors file its reader refuses.
    pub const SAFETENSORS: &str = "safetensors";
    /// A GGUF file its reader refuses.
    pub const GGUF: &str = "GGUF";
    /// A valid Kiln message that breaks a rule of the conversion message
    /// (spec/conversion.md) that the wire rules do not have.
    pub const CONVERSION: &str = "conversion";
    /// Valid input the target format cannot hold.
    pub const UNSUPPORTED: &str = "unsupported";
    /// A JSON document (a value for `kiln encode`, a schema for `kiln gen`
    /// and `kiln type`) that is not what the command reads.
    pub const JSON: &str = "JSON";
}

impl Failure {
    /// The input is invalid: exit status 1, `error: FILE: CODE: sentence
    /// at byte N`. FILE is as given (`standard input` for `-`); CODE a wire
    /// code or one of [`code`].
    pub fn invalid(file: &str, code: &str, sentence: &str, offset: Option<u64>) -> Failure {
        let sentence = sentence.trim();
        let sentence = if sentence.is_empty() {
            "the bytes break a rule of the format"
        } else {
            sentence
        };
        let mut message = format!("error: {}: {code}: {sentence}", file_name(file));
        if let Some(offset) = offset {
            message.push_str(&format!(" at byte {offset}"));
        }
        Failure {
            message,
            status: 1,
            invalid: Some(Invalid {
                code: code.into(),
                sentence: sentence.into(),
                offset,
            }),
        }
    }

    /// A usage error: exit status 2, `kiln: reason`.
    pub fn usage(reason: impl Into<String>) -> Failure {
        Failure {
            message: format!("kiln: {}", reason.into()),
            status: 2,
            invalid: None,
        }
    }

    /// FILE cannot be used as asked (it cannot be read or written, or a
    /// request on it cannot be met): exit status 2, `kiln: FILE: reason`.
    pub fn file(file: &str, reason: impl std::fmt::Display) -> Failure {
        Failure::usage(format!("{}: {reason}", file_name(file)))
    }

    /// An I/O error on FILE while `doing` it (`read`, `write`): `kiln:
    /// FILE: cannot read: why`.
    pub fn io(file: &str, doing: &str, e: &std::io::Error) -> Failure {
        Failure::file(file, format!("cannot {doing}: {e}"))
    }

    /// A Kiln error from reading FILE: a wire fault is invalid input with
    /// its code and offset, an API refusal a [`Failure::file`].
    pub fn kiln(file: &str, e: kiln_nostd::Error) -> Failure {
        match e.kind() {
            Kind::Wire(code) => {
                Failure::invalid(file, code.as_str(), &kiln_sentence(&e), e.offset())
            }
            Kind::Refused(_) => Failure::file(file, e),
        }
    }

    /// A kiln-convert error from reading INPUT (and, for `kiln convert`,
    /// writing OUTPUT): a safetensors, GGUF or Kiln fault is invalid input
    /// (the format's code, or the wire code), in the file of a set that
    /// holds it when there is one; a write that failed is an I/O error on
    /// OUTPUT.
    pub fn convert(e: &kiln_convert::Error, input: &str, output: Option<&str>) -> Failure {
        use kiln_convert::ErrorKind;
        let file = match e.file() {
            Some(name) => Path::new(input)
                .with_file_name(name)
                .to_string_lossy()
                .into_owned(),
            None => input.to_string(),
        };
        let fault = e.fault();
        let (code, sentence) = match e.kind() {
            ErrorKind::Io => {
                return Failure::file(output.unwrap_or(input), format!("cannot write: {fault}"))
            }
            ErrorKind::Safetensors => (code::SAFETENSORS, fault),
            ErrorKind::Gguf => (code::GGUF, fault),
            ErrorKind::Kiln => match e.kiln_code() {
                Some(wire) => {
                    let rest = fault
                        .strip_prefix(wire.as_str())
                        .and_then(|r| r.strip_prefix(": "))
                        .unwrap_or(fault);
                    (wire.as_str(), rest)
                }
                None => (code::CONVERSION, fault),
            },
            _ => (code::UNSUPPORTED, fault),
        };
        Failure::invalid(&file, code, sentence, e.offset())
    }

    /// A JSON document that is not what the command reads: code `JSON`,
    /// at the byte of the document where it was found.
    pub fn json(file: &str, e: &crate::jsontext::JsonError) -> Failure {
        Failure::invalid(file, code::JSON, &e.message, Some(e.offset as u64))
    }

    /// A JSON document that is not UTF-8.
    pub fn not_utf8(file: &str, e: &std::str::Utf8Error) -> Failure {
        Failure::invalid(
            file,
            code::JSON,
            "the document is not UTF-8",
            Some(e.valid_up_to() as u64),
        )
    }

    /// FILE holds a safetensors or GGUF file (`format`) where Kiln was
    /// asked for: a FRAME fault at byte 0 (what the core says of those
    /// bytes) whose sentence names the format and what to do instead.
    pub fn foreign(file: &str, found: Foreign, instead: &str) -> Failure {
        let what = match found {
            Foreign::Content(format) => format!("the file is a {format} file, not Kiln"),
            Foreign::Name(format) => format!(
                "the file is named as a {format} file and is not Kiln (neither KLN0 nor KLNT \
                 starts it)"
            ),
        };
        Failure::invalid(file, "FRAME", &format!("{what}: {instead}"), Some(0))
    }

    /// Prints the line and gives the exit status.
    pub fn exit(self) -> ExitCode {
        eprintln!("{}", self.message);
        ExitCode::from(self.status)
    }
}

/// The sentence of a Kiln error: what `Display` says between the code
/// (or the refusal's name) and the offset, with anything it adds after
/// the offset (a hint) moved before it, so that a line ends with ` at
/// byte N`.
pub fn kiln_sentence(e: &kiln_nostd::Error) -> String {
    let text = e.to_string();
    let name = match e.kind() {
        Kind::Wire(code) => code.as_str().to_string(),
        Kind::Refused(refusal) => format!("refused ({})", refusal.as_str()),
    };
    let rest = text.strip_prefix(name.as_str()).unwrap_or(&text);
    let mut rest = rest.strip_prefix(':').unwrap_or(rest).trim().to_string();
    if let Some(offset) = e.offset() {
        let at = format!("at byte {offset}");
        if let Some(i) = rest.rfind(&at) {
            rest.replace_range(i..i + at.len(), "");
            rest = rest.replacen(" ;", ";", 1).trim().to_string();
        }
    }
    rest
}

/// A safetensors or GGUF file where a Kiln one was expected, known by its
/// content or, when the content says nothing, by its name.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Foreign {
    Content(&'static str),
    Name(&'static str),
}

/// Which foreign format `bytes` hold, by their content alone: the GGUF
/// magic, or a safetensors header (an 8-byte length, then `{`); `None`
/// for bytes that start with a Kiln magic, or that neither format starts.
pub fn foreign_content(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&frame::FRAME_MAGIC) || bytes.starts_with(&kiln_nostd::DIRECTORY_MAGIC) {
        return None;
    }
    if bytes.starts_with(&kiln_convert::gguf::MAGIC) {
        return Some(code::GGUF);
    }
    (bytes.get(8) == Some(&b'{')).then_some(code::SAFETENSORS)
}

/// [`foreign_content`], else the name FILE ends in (`.safetensors`,
/// `.gguf`) when the bytes do not start with a Kiln magic.
pub fn foreign_format(bytes: &[u8], file: &str) -> Option<Foreign> {
    if let Some(format) = foreign_content(bytes) {
        return Some(Foreign::Content(format));
    }
    if bytes.starts_with(&frame::FRAME_MAGIC) || bytes.starts_with(&kiln_nostd::DIRECTORY_MAGIC) {
        return None;
    }
    let ext = Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("safetensors") => Some(Foreign::Name(code::SAFETENSORS)),
        Some("gguf") => Some(Foreign::Name(code::GGUF)),
        _ => None,
    }
}

/// The outcome of writing standard output: a reader that stopped early
/// (`kiln inspect big.gguf | head`) is not an error.
pub fn output_result(written: std::io::Result<()>) -> Result<(), Failure> {
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::io("standard output", "write", &e))
        }
        _ => Ok(()),
    }
}

/// Prints `text` on standard output (`println!` would panic when standard
/// output cannot be written).
pub fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    output_result(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

/// A subcommand's arguments, walked once: each parser is a loop over
/// [`ArgWalk::next_option`] with its own options in a `match`; the other
/// arguments (file names; `-` alone is standard input) are kept for
/// [`ArgWalk::one`] or [`ArgWalk::all`].
pub struct ArgWalk<'a> {
    rest: std::slice::Iter<'a, String>,
    positional: Vec<&'a str>,
}

impl<'a> ArgWalk<'a> {
    pub fn new(args: &'a [String]) -> Self {
        ArgWalk {
            rest: args.iter(),
            positional: Vec::new(),
        }
    }

    /// The next option, or `None` once every argument is read.
    pub fn next_option(&mut self) -> Option<&'a str> {
        for arg in self.rest.by_ref() {
            if arg.starts_with('-') && arg.len() > 1 {
                return Some(arg);
            }
            self.positional.push(arg);
        }
        None
    }

    /// The value that follows option `flag`.
    pub fn value(&mut self, flag: &str) -> Result<&'a str, String> {
        self.rest
            .next()
            .map(String::as_str)
            .ok_or_else(|| format!("{flag} needs a value"))
    }

    /// The value of `--cap N`: the caps of every count and length.
    pub fn cap(&mut self, flag: &str) -> Result<Limits, String> {
        let cap: u64 = self
            .value(flag)?
            .parse()
            .map_err(|_| format!("{flag} takes a whole number"))?;
        Limits::uniform_checked(cap).map_err(|e| e.to_string())
    }

    /// The one positional argument, called `what` in errors (FILE,
    /// SCHEMA); `None` when there is none.
    pub fn one(self, what: &str) -> Result<Option<&'a str>, String> {
        match self.positional[..] {
            [] => Ok(None),
            [one] => Ok(Some(one)),
            _ => Err(format!("more than one {what}")),
        }
    }

    /// Every positional argument, in order.
    pub fn all(self) -> Vec<&'a str> {
        self.positional
    }
}

/// The error for an option no subcommand has.
pub fn unknown_option(flag: &str) -> String {
    format!("unknown option '{flag}'")
}

/// Owned arguments for the parsers' unit tests.
#[cfg(test)]
pub fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A byte count for people: `512 B`, `1.5 KiB`, `86.7 MiB`, `3.8 GiB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value >= 100.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A count for people: `384`, `11.7M`, `2.1G`.
pub fn human_count(n: u64) -> String {
    if n < 10_000 {
        return n.to_string();
    }
    let (value, unit) = if n < 1_000_000 {
        (n as f64 / 1e3, "K")
    } else if n < 1_000_000_000 {
        (n as f64 / 1e6, "M")
    } else if n < 1_000_000_000_000 {
        (n as f64 / 1e9, "G")
    } else {
        (n as f64 / 1e12, "T")
    };
    format!("{value:.1}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_for_people() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(90_868_376), "86.7 MiB");
        assert_eq!(human_size(5 << 30), "5.0 GiB");
        assert_eq!(human_count(384), "384");
        assert_eq!(human_count(11_720_448), "11.7M");
    }

    #[test]
    fn type_text_as_typed_is_made_canonical() {
        let ok = |t: &str| canonical_type(t).unwrap();
        assert_eq!(
            ok("struct{ id: u32, name: str }"),
            "struct{id:u32,name:str,}"
        );
        assert_eq!(ok(" list < struct{a:u8} > "), "list<struct{a:u8,}>");
        assert_eq!(ok("struct{}"), "struct{}");
        assert_eq!(
            ok("struct{a:struct{b:u8},c:dict<str, opt<f32>>}"),
            "struct{a:struct{b:u8,},c:dict<str,opt<f32>>,}"
        );
        assert_eq!(ok("tensors"), "tensors");
        for bad in ["struct{na me:u8}", "list<", "struct{a:u8,,}", "u 8"] {
            assert!(canonical_type(bad).is_err(), "{bad}");
        }
    }
}
