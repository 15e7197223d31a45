//! `kiln check [--type TYPE] [--framed] [--cap N] FILE`
//!
//! Checks that FILE (`-` for standard input) is one valid value of TYPE
//! (canonical type text, default `tensors`). Prints `ok` and exits 0 when
//! the bytes are accepted; prints `error: CODE: detail` on stderr and exits
//! 1 when they are rejected, CODE being one of the eight wire codes; exits 2
//! on a usage or I/O error.

use std::io::Read;
use std::process::ExitCode;

use kiln_nostd::{CompiledType, Framing, Kind, Limits, Options};

use crate::common::{unknown_option, ArgWalk};

pub const USAGE: &str = "usage: kiln check [--type TYPE] [--framed] [--cap N] FILE";

const HELP: &str = "\
Checks that FILE (- for standard input) is one valid Kiln value of TYPE.

usage: kiln check [--type TYPE] [--framed] [--cap N] FILE

  --type TYPE  canonical type text (default: tensors)
  --framed     the value starts with a 16-byte frame whose hash must match TYPE
  --cap N      count cap and byte-run cap (default 16777216)

Prints `ok` and exits 0 when the bytes are accepted; prints
`error: CODE: detail` on stderr and exits 1 when they are rejected; exits 2
on a usage or I/O error.

example:
  kiln check --framed --cap 4294967295 \\
    --type 'struct{metadata:dict<str,str>,tensors:tensors,}' model.kiln";

/// A parsed `kiln check` command line.
#[derive(Debug, PartialEq)]
struct CheckArgs {
    type_text: String,
    framed: bool,
    limits: Limits,
    file: String,
}

/// What the arguments after `check` ask for.
#[derive(Debug, PartialEq)]
enum Request {
    Help,
    Check(CheckArgs),
}

fn parse_args(args: &[String]) -> Result<Request, String> {
    let mut parsed = CheckArgs {
        type_text: "tensors".into(),
        framed: false,
        limits: Limits::DEFAULT,
        file: String::new(),
    };
    let mut walk = ArgWalk::new(args);
    while let Some(flag) = walk.next_option() {
        match flag {
            "--help" | "-h" => return Ok(Request::Help),
            "--type" => parsed.type_text = walk.value(flag)?.into(),
            "--framed" => parsed.framed = true,
            "--cap" => parsed.limits = walk.cap(flag)?,
            _ => return Err(unknown_option(flag)),
        }
    }
    parsed.file = walk.one("FILE")?.ok_or("missing FILE")?.into();
    Ok(Request::Check(parsed))
}

fn read_input(file: &str) -> std::io::Result<Vec<u8>> {
    if file == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes)?;
        Ok(bytes)
    } else {
        std::fs::read(file)
    }
}

/// Runs `kiln check` with the arguments after `check`.
pub fn run(args: &[String]) -> ExitCode {
    let parsed = match parse_args(args) {
        Ok(Request::Check(parsed)) => parsed,
        Ok(Request::Help) => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("kiln: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let bytes = match read_input(&parsed.file) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("kiln: cannot read {}: {e}", parsed.file);
            return ExitCode::from(2);
        }
    };
    let framing = if parsed.framed {
        Framing::Framed
    } else {
        Framing::Bare
    };
    let options = Options {
        framing,
        limits: parsed.limits,
    };
    // Type text of any size a person types: the table lives on the heap.
    let checked = CompiledType::<4096>::parse(&parsed.type_text)
        .map(Box::new)
        .and_then(|ty| ty.check(&bytes, options));
    match checked {
        Ok(()) => {
            println!("ok");
            ExitCode::SUCCESS
        }
        Err(e) => match e.kind() {
            Kind::Wire(code) => {
                // Display starts with the code; print it in the documented form.
                let detail = e.to_string();
                let detail = detail
                    .strip_prefix(code.as_str())
                    .and_then(|d| d.strip_prefix(": "))
                    .unwrap_or(&detail);
                eprintln!("error: {code}: {detail}");
                ExitCode::from(1)
            }
            Kind::Refused(_) => {
                eprintln!("kiln: {e}\n{USAGE}");
                ExitCode::from(2)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::strings;

    fn check_args(list: &[&str]) -> CheckArgs {
        match parse_args(&strings(list)).unwrap() {
            Request::Check(parsed) => parsed,
            Request::Help => panic!("help"),
        }
    }

    #[test]
    fn defaults_to_tensors_and_default_caps() {
        let parsed = check_args(&["f.bin"]);
        assert_eq!(parsed.type_text, "tensors");
        assert!(!parsed.framed);
        assert_eq!(parsed.limits, Limits::DEFAULT);
        assert_eq!(parsed.file, "f.bin");
    }

    #[test]
    fn reads_every_option() {
        let parsed = check_args(&["--type", "list<u8>", "--framed", "--cap", "4", "-"]);
        assert_eq!(parsed.type_text, "list<u8>");
        assert!(parsed.framed);
        assert_eq!(parsed.limits, Limits::uniform(4));
        assert_eq!(parsed.file, "-");
    }

    #[test]
    fn rejects_bad_usage() {
        for bad in [
            &[][..],
            &["--cap", "x", "f"],
            &["--cap", "4294967296", "f"],
            &["a", "b"],
            &["--bogus", "f"],
        ] {
            assert!(parse_args(&strings(bad)).is_err(), "{bad:?}");
        }
        assert_eq!(parse_args(&strings(&["--help"])), Ok(Request::Help));
    }
}
