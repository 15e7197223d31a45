//! `kiln gen [--name NAME] SCHEMA.json`: a Rust module of
//! `#[derive(Frozen)]` structs for a JSON Schema (the subset in
//! `schema_json`).

use std::process::ExitCode;

use crate::common::{
    code, compile_type, print, read_input, unknown_option, ArgWalk, Failure, TYPE_NODES,
};
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

/// A schema read from its file, with its Kiln type compiled.
pub struct SchemaFile {
    pub schema: Schema,
    /// The root's canonical type text.
    pub type_text: String,
    /// The type's schema hash.
    pub hash: u64,
    /// Where the root schema starts in the file.
    pub root_at: u64,
}

/// Reads FILE as a schema and compiles its type under the tools' one cap
/// ([`crate::common::TYPE_NODES`]), so that `kiln gen` and `kiln type`
/// refuse a schema whose type `kiln check --type` would refuse.
pub fn read_schema(file: &str) -> Result<SchemaFile, Failure> {
    let input = read_input(file)?;
    let doc = std::str::from_utf8(&input).map_err(|e| Failure::not_utf8(file, &e))?;
    let schema = Schema::read(doc).map_err(|e| Failure::json(file, &e))?;
    let root_at = (doc.len() - doc.trim_start().len()) as u64;
    let type_text = schema.type_text(&schema.root);
    let hash = compile_type(&type_text)
        .map_err(|e| {
            Failure::invalid(
                file,
                code::JSON,
                &format!(
                    "#: its Kiln type is one no kiln tool reads ({}; the tools compile types \
                     of up to {TYPE_NODES} nodes)",
                    e.fault()
                ),
                Some(root_at),
            )
        })?
        .hash();
    Ok(SchemaFile {
        schema,
        type_text,
        hash,
        root_at,
    })
}

fn generate(name: Option<&str>, file: &str) -> Result<String, Failure> {
    let SchemaFile {
        mut schema,
        type_text,
        root_at,
        ..
    } = read_schema(file)?;
    let Ty::Struct(root) = schema.root else {
        return Err(Failure::invalid(
            file,
            code::JSON,
            &format!(
                "#: the root schema is not an object, so there is no struct to generate (its \
                 type is {type_text})"
            ),
            Some(root_at),
        ));
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

fn finish(outcome: Result<(), Failure>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.exit(),
    }
}

/// Runs `kiln gen` with the arguments after `gen`.
pub fn run(args: &[String]) -> ExitCode {
    let mut name = None;
    let mut walk = ArgWalk::new(args);
    while let Some(flag) = walk.next_option() {
        match flag {
            "--help" | "-h" => return finish(print(&format!("{HELP}\n"))),
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
    finish(generate(name, file).and_then(|module| print(&module)))
}
