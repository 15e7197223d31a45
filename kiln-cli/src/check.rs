//! `kiln check [--type TYPE] [--framed|--bare] [--cap N] FILE`
//!
//! Checks that FILE (`-` for standard input) is one valid value of TYPE.
//! Prints `ok` and exits 0 when the bytes are accepted; prints one line
//! `error: FILE: CODE: detail` on stderr and exits 1 when they are
//! rejected, CODE being one of the eight wire codes; exits 2 on a usage or
//! I/O error. The type, framing and caps come from the flags and, where
//! they say nothing, from the bytes, as for `kiln decode` and `kiln
//! inspect` ([`crate::common::reading`]).

use std::process::ExitCode;

use crate::common::{
    compile, print, read_input, reading, unknown_option, ArgWalk, Failure, ReadFlags,
};

pub const USAGE: &str = "usage: kiln check [--type TYPE] [--framed|--bare] [--cap N] FILE";

const HELP: &str = "\
Checks that FILE (- for standard input) is one valid Kiln value of TYPE.

usage: kiln check [--type TYPE] [--framed|--bare] [--cap N] FILE

  --type TYPE  type text; spaces and a missing last comma are fine, and the
               canonical form is printed back (default: tensors; for a
               framed message of a type `kiln convert` writes, that type,
               known from the frame's hash)
  --framed     the value starts with a 16-byte frame whose hash must match
               TYPE (default: when the bytes start with the frame magic KLN0)
  --bare       read the bytes as a bare value even if they start with KLN0
  --cap N      count cap and byte-run cap (default 16777216; 4294967295
               when the type comes from a converted message's frame)

Prints `ok` and exits 0 when the bytes are accepted; prints
`error: FILE: CODE: detail` on stderr and exits 1 when they are rejected
(FILE is `standard input` for -); exits 2 on a usage or I/O error.

examples:
  kiln check model.kiln                 # a converted model: type from its frame
  kiln check --type 'struct{ id: i64, batch: tensors }' message.kiln";

/// A parsed `kiln check` command line.
#[derive(Debug, PartialEq)]
struct CheckArgs {
    flags: ReadFlags,
    file: String,
}

fn parse_args(args: &[String]) -> Result<Option<CheckArgs>, String> {
    let mut parsed = CheckArgs {
        flags: ReadFlags::default(),
        file: String::new(),
    };
    let mut walk = ArgWalk::new(args);
    while let Some(flag) = walk.next_option() {
        match flag {
            "--help" | "-h" => return Ok(None),
            _ if parsed.flags.take(flag, &mut walk)? => {}
            _ => return Err(unknown_option(flag)),
        }
    }
    parsed.file = walk.one("FILE")?.ok_or("missing FILE")?.into();
    Ok(Some(parsed))
}

fn check(args: &CheckArgs) -> Result<(), Failure> {
    let input = read_input(&args.file)?;
    let reading = reading(&input, &args.flags, &args.file)?;
    let ty = compile(&reading.type_text)?;
    ty.check(&input, reading.options())
        .map_err(|e| Failure::kiln(&args.file, e))?;
    print("ok\n")
}

/// Runs `kiln check` with the arguments after `check`.
pub fn run(args: &[String]) -> ExitCode {
    crate::common::run_subcommand(args, parse_args, HELP, USAGE, check)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::strings;
    use kiln_nostd::Limits;

    fn check_args(list: &[&str]) -> CheckArgs {
        parse_args(&strings(list)).unwrap().unwrap()
    }

    #[test]
    fn flags_left_out_are_none() {
        let parsed = check_args(&["f.bin"]);
        assert_eq!(parsed.flags, ReadFlags::default());
        assert_eq!(parsed.file, "f.bin");
    }

    #[test]
    fn reads_every_option() {
        let parsed = check_args(&["--type", "list<u8>", "--framed", "--cap", "4", "-"]);
        assert_eq!(parsed.flags.type_text.as_deref(), Some("list<u8>"));
        assert_eq!(parsed.flags.framed, Some(true));
        assert_eq!(parsed.flags.limits, Some(Limits::uniform(4)));
        assert_eq!(parsed.file, "-");
        assert_eq!(check_args(&["--bare", "f"]).flags.framed, Some(false));
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
        assert!(matches!(parse_args(&strings(&["--help"])), Ok(None)));
    }
}
