//! The command line's operations for other front ends (the Python
//! package): `kiln check` of bytes in memory and `kiln convert` of paths,
//! with the same rules, the same recognition of the bytes and the same
//! refusals, returned as a [`Failure`] instead of printed.

use std::path::Path;

pub use crate::common::{code, Failure, Invalid};
pub use kiln_convert::Summary;
pub use kiln_nostd::inspect::{Inspection, Reading};

use crate::common::{compile, reading, ReadFlags};
use crate::convert::{parse_args, run_conversion, Request};

/// `kiln check` of `bytes` (named `file` in refusals): the type, framing
/// and caps from the arguments and, where they are `None`, from the bytes,
/// as the command line reads them. Gives the reading that was checked.
pub fn check_bytes(
    bytes: &[u8],
    file: &str,
    type_text: Option<&str>,
    framed: Option<bool>,
    cap: Option<u32>,
) -> Result<Reading, Failure> {
    let flags = ReadFlags {
        type_text: type_text.map(str::to_owned),
        framed,
        limits: cap.map(kiln_nostd::Limits::uniform),
    };
    let read = reading(bytes, &flags, file)?;
    let ty = compile(&read.type_text)?;
    ty.check(bytes, read.options())
        .map_err(|e| Failure::kiln(file, e))?;
    Ok(Reading {
        known: read.known,
        type_text: read.type_text,
        framed: read.framed,
        limits: read.limits,
    })
}

/// A Kiln file's inspection model, once `kiln check` accepts the file as
/// its bytes say (a converted model's type from its frame): the tensors,
/// directories and metadata `kiln inspect` shows.
pub fn open_kiln(bytes: &[u8], file: &str) -> Result<Inspection, Failure> {
    let read = check_bytes(bytes, file, None, None, None)?;
    kiln_convert::inspect::inspect_kiln(file, bytes, &read).map_err(|e| Failure::kiln(file, e))
}

/// `kiln convert --quiet INPUT OUTPUT` (with `--shards` when `shards`):
/// every conversion the command line does, the formats from the
/// extensions, the output written beside OUTPUT and renamed over it only
/// when the conversion succeeded.
pub fn convert_paths(input: &Path, output: &Path, shards: bool) -> Result<Summary, Failure> {
    let mut args = vec![
        "--quiet".to_owned(),
        input.to_string_lossy().into_owned(),
        output.to_string_lossy().into_owned(),
    ];
    if shards {
        args.push("--shards".into());
    }
    match parse_args(&args).map_err(Failure::usage)? {
        Request::Convert(parsed) => run_conversion(&parsed),
        Request::Help => Err(Failure::usage("no conversion was asked for")),
    }
}
