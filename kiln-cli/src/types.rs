//! `kiln type SCHEMA.json`: the Kiln type text of a JSON Schema and its
//! schema hash.

use std::process::ExitCode;

use crate::common::{print, Failure};
use crate::gen::read_schema;

pub const USAGE: &str = "usage: kiln type SCHEMA.json";

const HELP: &str = "\
Prints the canonical Kiln type text of a JSON Schema (the subset `kiln gen`
reads) on one line and its FNV-1a schema hash on the next: the hash a framed
message of that type carries, and T::SCHEMA / T::HASH of the struct `kiln gen`
writes.

usage: kiln type SCHEMA.json      (- for standard input)

Exit status: 0 printed; 1 the schema is not JSON or leaves the subset;
2 usage or I/O error.

example:
  kiln type schema.json
  kiln check --framed --type \"$(kiln type schema.json | head -1)\" message.kiln";

fn type_of(file: &str) -> Result<(), Failure> {
    let schema = read_schema(file)?;
    print(&format!("{}\n{:#018x}\n", schema.type_text, schema.hash))
}

/// Runs `kiln type` with the arguments after `type`.
pub fn run(args: &[String]) -> ExitCode {
    let outcome = match args {
        [flag] if flag == "--help" || flag == "-h" => print(&format!("{HELP}\n")),
        [file] if !file.starts_with("--") => type_of(file),
        _ => Err(Failure::usage(format!("expected one SCHEMA.json\n{USAGE}"))),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit(),
    }
}
