//! `kiln encode [--type TYPE] [--framed] [--cap N] [-o OUT] [FILE]`
//!
//! Reads one value as JSON (the form of `spec/json.md`) and writes its
//! canonical Kiln bytes: dict keys sorted, the directory laid out
//! canonically.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use kiln_nostd::{Framing, Kind, Limits, Options};

use crate::common::{compile, kiln_sentence, read_input, unknown_option, ArgWalk, Failure};
use crate::jsonform::read_document;

pub const USAGE: &str = "usage: kiln encode [--type TYPE] [--framed] [--cap N] [-o OUT] [FILE]";

const HELP: &str = "\
Reads one value as JSON (the form of spec/json.md) and writes its canonical
Kiln bytes.

usage: kiln encode [--type TYPE] [--framed] [--cap N] [-o OUT] [FILE]

  FILE         the JSON; standard input when absent or -
  --type TYPE  type text; spaces and a missing last comma are fine, and the
               canonical form is printed back (default: tensors)
  --framed     write the 16-byte frame with the type's hash first
  --cap N      count cap and byte-run cap (default 16777216)
  -o OUT       write the bytes to OUT (default: standard output, which must
               not be a terminal)

The JSON is what `kiln decode` prints (without --preview): an integer is a
JSON number up to 2^53-1 or a decimal string (i64 u64 int uint are written as
strings), an f32/f64 a number or \"NaN\", \"Infinity\", \"-Infinity\", \"0x\"
and its bits; list<u8> and payloads hex; dict keys in any order (they are
sorted); every struct field present, no other member.

Exit status: 0 written; 1 the JSON is not a value of the type (one `error:`
line with the byte offset in the JSON and the path in the value); 2 usage or
I/O error.

examples:
  echo '{\"id\":\"7\",\"batch\":[]}' | kiln encode --type 'struct{id:i64,batch:tensors,}' -o m.kiln
  kiln decode --type T --framed m.kiln | kiln encode --type T --framed -o same.kiln";

#[derive(Debug, PartialEq)]
struct EncodeArgs {
    type_text: String,
    framed: bool,
    limits: Limits,
    output: Option<String>,
    file: String,
}

fn parse_args(args: &[String]) -> Result<Option<EncodeArgs>, String> {
    let mut parsed = EncodeArgs {
        type_text: "tensors".into(),
        framed: false,
        limits: Limits::DEFAULT,
        output: None,
        file: "-".into(),
    };
    let mut walk = ArgWalk::new(args);
    while let Some(flag) = walk.next_option() {
        match flag {
            "--help" | "-h" => return Ok(None),
            "--type" => parsed.type_text = walk.value(flag)?.into(),
            "--framed" => parsed.framed = true,
            "--cap" => parsed.limits = walk.cap(flag)?,
            "-o" | "--output" => parsed.output = Some(walk.value(flag)?.into()),
            _ => return Err(unknown_option(flag)),
        }
    }
    if let Some(file) = walk.one("FILE")? {
        parsed.file = file.into();
    }
    Ok(Some(parsed))
}

fn encode(args: &EncodeArgs) -> Result<(), Failure> {
    if args.output.is_none() && std::io::stdout().is_terminal() {
        return Err(Failure::usage(
            "the output is binary: give -o OUT, or redirect standard output",
        ));
    }
    let type_text = crate::common::type_arg(&args.type_text)?;
    let ty = compile(&type_text)?;
    let input = read_input(&args.file)?;
    let file = args.file.as_str();
    let doc = std::str::from_utf8(&input).map_err(|e| Failure::not_utf8(file, &e))?;
    let value = read_document(ty.root(), doc).map_err(|e| Failure::json(file, &e))?;
    let options = Options {
        framing: if args.framed {
            Framing::Framed
        } else {
            Framing::Bare
        },
        limits: args.limits,
    };
    // The value read from the JSON breaks a rule only its bytes can (a
    // cap): its offset would be in the bytes not written, so none is given.
    let bytes = ty
        .encode_value(&value, options)
        .map_err(|e| match e.kind() {
            Kind::Wire(code) => Failure::invalid(
                file,
                code.as_str(),
                &format!("the value cannot be encoded: {}", kiln_sentence(&e)),
                None,
            ),
            Kind::Refused(_) => Failure::invalid(
                file,
                crate::common::code::JSON,
                &format!("the value cannot be encoded: {}", kiln_sentence(&e)),
                None,
            ),
        })?;
    match &args.output {
        Some(path) => std::fs::write(path, &bytes).map_err(|e| Failure::io(path, "write", &e)),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .map_err(|e| Failure::io("standard output", "write", &e))
        }
    }
}

/// Runs `kiln encode` with the arguments after `encode`.
pub fn run(args: &[String]) -> ExitCode {
    crate::common::run_subcommand(args, parse_args, HELP, USAGE, encode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::strings;

    fn parse(list: &[&str]) -> Result<Option<EncodeArgs>, String> {
        parse_args(&strings(list))
    }

    #[test]
    fn options() {
        let args = parse(&["--type", "u8", "--framed", "-o", "x.kiln"])
            .unwrap()
            .unwrap();
        assert_eq!(args.type_text, "u8");
        assert_eq!(
            (args.framed, args.output.as_deref(), args.file.as_str()),
            (true, Some("x.kiln"), "-")
        );
        assert!(parse(&["a", "b"]).is_err());
        assert!(parse(&["-o"]).is_err());
        assert!(parse(&["--bogus"]).is_err());
        assert_eq!(parse(&["-h"]), Ok(None));
    }
}
