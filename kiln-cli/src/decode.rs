//! `kiln decode [--type TYPE] [--framed] [--cap N] [--preview] [--compact] FILE`
//!
//! Prints one Kiln value as JSON, in the form `spec/json.md` defines:
//! 64-bit integers exact, floats bit-exact, bytes and payloads as hex.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use kiln_convert::{MessageType, LIMITS};
use kiln_nostd::{frame, Framing, Limits, Options};

use crate::common::{compile, read_input, unknown_option, ArgWalk, Failure};
use crate::jsonform::{write_value, Style};
use crate::jsontext::JsonOut;

pub const USAGE: &str =
    "usage: kiln decode [--type TYPE] [--framed] [--cap N] [--preview] [--compact] FILE";

const HELP: &str = "\
Prints one Kiln value as JSON (the form of spec/json.md).

usage: kiln decode [--type TYPE] [--framed] [--cap N] [--preview] [--compact] FILE

  FILE         the value's bytes; - for standard input
  --type TYPE  canonical type text (default: tensors; for a framed message
               of one of the two types `kiln convert` writes, that type)
  --framed     the value starts with a 16-byte frame whose hash must match
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
    type_text: Option<String>,
    framed: bool,
    limits: Option<Limits>,
    preview: bool,
    compact: bool,
    file: String,
}

fn parse_args(args: &[String]) -> Result<Option<DecodeArgs>, String> {
    let mut parsed = DecodeArgs {
        type_text: None,
        framed: false,
        limits: None,
        preview: false,
        compact: false,
        file: String::new(),
    };
    let mut walk = ArgWalk::new(args);
    while let Some(flag) = walk.next_option() {
        match flag {
            "--help" | "-h" => return Ok(None),
            "--type" => parsed.type_text = Some(walk.value(flag)?.into()),
            "--framed" => parsed.framed = true,
            "--cap" => parsed.limits = Some(walk.cap(flag)?),
            "--preview" => parsed.preview = true,
            "--compact" => parsed.compact = true,
            _ => return Err(unknown_option(flag)),
        }
    }
    parsed.file = walk.one("FILE")?.ok_or("missing FILE")?.into();
    Ok(Some(parsed))
}

/// The message type of a converted model, from its frame.
pub fn known_message(bytes: &[u8]) -> Option<MessageType> {
    let hash = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
    (bytes.starts_with(&frame::FRAME_MAGIC))
        .then(|| {
            [MessageType::Safetensors, MessageType::Gguf]
                .into_iter()
                .find(|m| m.hash() == hash)
        })
        .flatten()
}

fn decode(args: &DecodeArgs) -> Result<(), Failure> {
    let input = read_input(&args.file)?;
    let (type_text, framed, limits) = match (&args.type_text, known_message(&input)) {
        (Some(text), _) => (text.as_str(), args.framed, args.limits.unwrap_or_default()),
        (None, Some(message)) => (message.type_text(), true, args.limits.unwrap_or(LIMITS)),
        (None, None) => ("tensors", args.framed, args.limits.unwrap_or_default()),
    };
    let ty = compile(type_text)?;
    let options = Options {
        framing: if framed {
            Framing::Framed
        } else {
            Framing::Bare
        },
        limits,
    };
    let value = ty
        .decode_value(&input, options)
        .map_err(|e| Failure::kiln(&args.file, e))?;
    let stdout = std::io::stdout().lock();
    let mut out = JsonOut::new(BufWriter::with_capacity(1 << 16, stdout), !args.compact);
    let style = Style {
        pretty: !args.compact,
        preview: args.preview.then_some(8),
    };
    write_value(ty.root(), &value, &mut out, style)
        .and_then(|()| {
            let mut w = out.into_inner();
            w.write_all(b"\n")?;
            w.flush()
        })
        .map_or_else(|e| crate::common::output_result(Err(e)), Ok)
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
        assert_eq!(args.type_text.as_deref(), Some("u8"));
        assert!(args.framed && args.preview && args.compact);
        assert_eq!(args.file, "-");
        assert!(parse(&[]).is_err());
        assert!(parse(&["a", "b"]).is_err());
        assert!(parse(&["--cap", "x", "a"]).is_err());
        assert_eq!(parse(&["--help"]), Ok(None));
    }
}
