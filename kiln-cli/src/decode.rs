//! `kiln decode [--type TYPE] [--framed|--bare] [--cap N] [--preview] [--compact] FILE`
//!
//! Prints one Kiln value as JSON, in the form `spec/json.md` defines:
//! 64-bit integers exact, floats bit-exact, bytes and payloads as hex.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use crate::common::{compile, read_input, reading, unknown_option, ArgWalk, Failure, ReadFlags};
use kiln_nostd::json::{write_value, Style};

use crate::inspect::FmtWriter;

pub const USAGE: &str =
    "usage: kiln decode [--type TYPE] [--framed|--bare] [--cap N] [--preview] [--compact] FILE";

const HELP: &str = "\
Prints one Kiln value as JSON (the form of spec/json.md).

usage: kiln decode [--type TYPE] [--framed|--bare] [--cap N] [--preview] [--compact] FILE

  FILE         the value's bytes; - for standard input
  --type TYPE  type text; spaces and a missing last comma are fine, and
               the canonical form is printed back (default: tensors; for a
               framed message of a type `kiln convert` writes, that type,
               known from the frame's hash)
  --framed     the value starts with a 16-byte frame whose hash must match
               (default: when the bytes start with the frame magic KLN0)
  --bare       read the bytes as a bare value even if they start with KLN0
  --cap N      count cap and byte-run cap (default 16777216; 4294967295
               when the type comes from a converted message's frame)
  --preview    each tensor shows its first 8 values instead of its whole
               payload, for reading (such JSON does not encode back)
  --compact    one line instead of two-space indentation

64-bit integers (i64 u64 int uint) are strings, f32/f64 numbers with their
shortest exact digits (NaN, infinities and NaN payloads as strings), list<u8>
and tensor payloads lowercase hex, opt absent null, a dict or struct an
object in wire order. `kiln encode` turns the JSON back into the same bytes.

Exit status: 0 printed; 1 the bytes are not one valid value (one `error:`
line with the wire code and byte offset); 2 usage or I/O error.

examples:
  kiln decode --type 'struct{id:i64,batch:tensors,}' samples/batch.kiln
  kiln decode --preview model.kiln        # a converted model, payloads cut short";

#[derive(Debug, PartialEq)]
struct DecodeArgs {
    flags: ReadFlags,
    preview: bool,
    compact: bool,
    file: String,
}

fn parse_args(args: &[String]) -> Result<Option<DecodeArgs>, String> {
    let mut parsed = DecodeArgs {
        flags: ReadFlags::default(),
        preview: false,
        compact: false,
        file: String::new(),
    };
    let mut walk = ArgWalk::new(args);
    while let Some(flag) = walk.next_option() {
        match flag {
            "--help" | "-h" => return Ok(None),
            "--preview" => parsed.preview = true,
            "--compact" => parsed.compact = true,
            _ if parsed.flags.take(flag, &mut walk)? => {}
            _ => return Err(unknown_option(flag)),
        }
    }
    parsed.file = walk.one("FILE")?.ok_or("missing FILE")?.into();
    Ok(Some(parsed))
}

fn decode(args: &DecodeArgs) -> Result<(), Failure> {
    let input = read_input(&args.file)?;
    let reading = reading(&input, &args.flags, &args.file)?;
    let ty = compile(&reading.type_text)?;
    let value = ty
        .decode_value(&input, reading.options())
        .map_err(|e| Failure::kiln(&args.file, e))?;
    let stdout = std::io::stdout().lock();
    let mut w = BufWriter::with_capacity(1 << 16, stdout);
    let style = Style {
        pretty: !args.compact,
        preview: args.preview.then_some(8),
    };
    let mut out = FmtWriter {
        inner: &mut w,
        error: None,
    };
    let written = match write_value(ty.root(), &value, style, &mut out) {
        Ok(()) => Ok(()),
        Err(e) => Err(out
            .error
            .take()
            .unwrap_or_else(|| std::io::Error::other(e.to_string()))),
    };
    crate::common::output_result(written.and_then(|()| {
        w.write_all(b"\n")?;
        w.flush()
    }))
}

/// Runs `kiln decode` with the arguments after `decode`.
pub fn run(args: &[String]) -> ExitCode {
    crate::common::run_subcommand(args, parse_args, HELP, USAGE, decode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::strings;

    fn parse(list: &[&str]) -> Result<Option<DecodeArgs>, String> {
        parse_args(&strings(list))
    }

    #[test]
    fn options() {
        let args = parse(&["--type", "u8", "--framed", "--preview", "--compact", "-"])
            .unwrap()
            .unwrap();
        assert_eq!(args.flags.type_text.as_deref(), Some("u8"));
        assert_eq!(args.flags.framed, Some(true));
        assert!(args.preview && args.compact);
        assert_eq!(args.file, "-");
        let args = parse(&["--bare", "f"]).unwrap().unwrap();
        assert_eq!(args.flags.framed, Some(false));
        assert!(parse(&[]).is_err());
        assert!(parse(&["a", "b"]).is_err());
        assert!(parse(&["--cap", "x", "a"]).is_err());
        assert_eq!(parse(&["--help"]), Ok(None));
    }
}
