//! What the subcommands share: reading the input (a memory-mapped file or
//! standard input), failures with their exit status, type text, and sizes
//! for people.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::Path;
use std::process::ExitCode;

use kiln_convert::MessageType;
use kiln_nostd::schema::TOOL_NODES;
use kiln_nostd::{frame, CompiledType, Kind, Limits};

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
            .map_err(|e| Failure::usage(format!("cannot read standard input: {e}")))?;
        return Ok(Input::Read(bytes));
    }
    map_input(Path::new(file)).map_err(|e| Failure::usage(format!("cannot read {file}: {e}")))
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
    CompiledType::parse(text)
        .map(Box::new)
        .map_err(|e| Failure::usage(format!("bad type text {text:?}: {e}")))
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

/// The conversion message type a framed file's frame hash names, if any.
pub fn known_message(bytes: &[u8]) -> Option<MessageType> {
    let info = frame::peek(bytes)?;
    MessageType::of(bytes)
        .ok()
        .filter(|m| m.hash() == info.hash)
}

/// How to read a Kiln value: its canonical type text, whether it is framed,
/// the caps, and the conversion message type it is, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    pub type_text: String,
    pub framed: bool,
    pub limits: Limits,
    pub message: Option<MessageType>,
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
/// (`frame::peek`); a frame whose hash is one of the conversion message
/// types gives that type and the wire-maximum caps; a bare value without
/// `--type` is a tensor directory. A frame of any other type needs
/// `--type` (its hash does not tell the type).
pub fn reading(bytes: &[u8], flags: &ReadFlags, file: &str) -> Result<Reading, Failure> {
    let peeked = frame::peek(bytes);
    let framed = flags.framed.unwrap_or(peeked.is_some());
    let known = known_message(bytes).filter(|_| framed);
    let type_text = match (&flags.type_text, known, peeked) {
        (Some(text), _, _) => type_arg(text)?,
        (None, Some(message), _) => message.type_text().to_string(),
        (None, None, Some(info)) if framed => {
            return Err(Failure::usage(format!(
                "{} is a framed Kiln message of a type other than the ones `kiln convert` \
                 writes (schema hash {:#018x}); the hash does not tell the type: give it with \
                 --type TYPE",
                file_name(file),
                info.hash
            )))
        }
        (None, None, _) => "tensors".to_string(),
    };
    let message = known.filter(|m| m.type_text() == type_text);
    let limits = flags.limits.unwrap_or(if message.is_some() {
        kiln_convert::LIMITS
    } else {
        Limits::DEFAULT
    });
    Ok(Reading {
        type_text,
        framed,
        limits,
        message,
    })
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
        Ok(None) => {
            println!("{help}");
            ExitCode::SUCCESS
        }
        Err(message) => Failure::usage(format!("{message}\n{usage}")).exit(),
    }
}

/// A command that did not succeed: the line to print and the exit status
/// (1: the input is invalid; 2: usage or I/O).
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub status: u8,
}

impl Failure {
    /// The input is not valid: exit status 1, printed as `error: ...`.
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            message: format!("error: {}", message.into()),
            status: 1,
        }
    }

    /// A usage or I/O error: exit status 2, printed as `kiln: ...`.
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: format!("kiln: {}", message.into()),
            status: 2,
        }
    }

    /// A Kiln error from reading FILE: a wire code is invalid input
    /// (`error: FILE: CODE: what at byte N`, the one shape of every
    /// command's error line, docs/cli.md), an API refusal a usage error.
    pub fn kiln(file: &str, e: kiln_nostd::Error) -> Failure {
        let file = file_name(file);
        match e.kind() {
            Kind::Wire(code) => {
                // `CODE: what at byte N`; without error text (feature
                // `no-error-text`) Display is `CODE at byte N`: the line
                // keeps its shape either way.
                let text = e.to_string();
                let rest = text.strip_prefix(code.as_str()).map_or(text.as_str(), |r| {
                    r.strip_prefix(": ").unwrap_or(r.trim_start())
                });
                Failure::invalid(format!("{file}: {code}: {rest}"))
            }
            Kind::Refused(_) => Failure::usage(format!("{file}: {e}")),
        }
    }

    /// Prints the line and gives the exit status.
    pub fn exit(self) -> ExitCode {
        eprintln!("{}", self.message);
        ExitCode::from(self.status)
    }
}

/// The outcome of writing standard output: a reader that stopped early
/// (`kiln inspect big.gguf | head`) is not an error.
pub fn output_result(written: std::io::Result<()>) -> Result<(), Failure> {
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::usage(format!("cannot write standard output: {e}")))
        }
        _ => Ok(()),
    }
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
