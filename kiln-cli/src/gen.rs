//! `kiln gen [--name NAME] SCHEMA.json`: a Rust module of
//! `#[derive(Frozen)]` structs for a JSON Schema (the subset in
//! `schema_json`).

use std::process::ExitCode;

use crate::common::{read_input, unknown_option, ArgWalk, Failure};
use crate::schema_json::{Schema, Ty};

pub const USAGE: &str = "usage: kiln gen [--name NAME] SCHEMA.json";

const HELP: &str = "\
Prints a Rust module of #[derive(kiln_nostd::Frozen)] structs for a JSON
Schema, one struct per object schema.

usage: kiln gen [--name NAME] SCHEMA.json

  SCHEMA.json  the schema; - for standard input
  --name NAME  the root struct's name (default: from \"title\", else Record)

The subset (the wire text's \"Dynamic values\"): boolean; integer (int, or
format int8..int64, uint8..uint64); number (f64, format float f32); string
(str, format binary list<u8>); array with items; object with properties
(a struct, fields in document order; with \"required\" the others are opt);
object with only additionalProperties (dict<str,V>); $ref to #/$defs/Name.
Rust types: bool, i8..u64, kiln_nostd::Int/Uint, f32, f64, String, Vec<u8>,
Vec<T>, Option<T>, kiln_nostd::DictView<'a, V> (a borrowed dict: decode and
re-encode, not build). Anything else is an error naming its JSON pointer.
The module needs kiln-nostd with the `alloc` and `derive` features.
`kiln type` prints the root's Kiln type text and hash.

Exit status: 0 printed; 1 the schema is not JSON or leaves the subset (one
`error:` line with the byte offset and the JSON pointer); 2 usage or I/O.

example:
  kiln gen --name Reading schema.json > src/reading.rs";

/// Reads FILE as a schema; failures as one line.
pub fn read_schema(file: &str) -> Result<Schema, Failure> {
    let input = read_input(file)?;
    let doc = std::str::from_utf8(&input)
        .map_err(|e| Failure::invalid(format!("{file}: at byte {}: not UTF-8", e.valid_up_to())))?;
    Schema::read(doc).map_err(|e| Failure::invalid(format!("{file}: {e}")))
}

fn generate(name: Option<&str>, file: &str) -> Result<String, Failure> {
    let mut schema = read_schema(file)?;
    let Ty::Struct(root) = schema.root else {
        return Err(Failure::invalid(format!(
            "{file}: the root schema is not an object, so there is no struct to generate \
             (its type is {})",
            schema.type_text(&schema.root)
        )));
    };
    if let Some(name) = name {
        let valid = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(Failure::usage(format!(
                "--name {name:?} is not a Rust type name"
            )));
        }
        if schema
            .structs
            .iter()
            .enumerate()
            .any(|(i, s)| i != root && s.name == name)
        {
            return Err(Failure::usage(format!(
                "--name {name:?}: another struct of the schema has that name"
            )));
        }
        if let Some(s) = schema.structs.get_mut(root) {
            s.name = name.to_string();
        }
    }
    Ok(schema.rust_module(file))
}

/// Runs `kiln gen` with the arguments after `gen`.
pub fn run(args: &[String]) -> ExitCode {
    let mut name = None;
    let mut walk = ArgWalk::new(args);
    while let Some(flag) = walk.next_option() {
        match flag {
            "--help" | "-h" => {
                println!("{HELP}");
                return ExitCode::SUCCESS;
            }
            "--name" => match walk.value(flag) {
                Ok(n) => name = Some(n),
                Err(e) => return Failure::usage(format!("{e}\n{USAGE}")).exit(),
            },
            _ => return Failure::usage(format!("{}\n{USAGE}", unknown_option(flag))).exit(),
        }
    }
    let file = match walk.one("SCHEMA") {
        Ok(Some(file)) => file,
        Ok(None) => return Failure::usage(format!("missing SCHEMA\n{USAGE}")).exit(),
        Err(e) => return Failure::usage(format!("{e}\n{USAGE}")).exit(),
    };
    match generate(name, file) {
        Ok(module) => {
            print!("{module}");
            ExitCode::SUCCESS
        }
        Err(failure) => failure.exit(),
    }
}
