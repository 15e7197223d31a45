//! Generates the Rust modules of the JSON Schemas in `tests/gen/` with the
//! same code `kiln gen` runs, into `$OUT_DIR/gen/NAME.rs`, so that
//! `tests/gen.rs` compiles them (`include!`) and round-trips values through
//! them. The test also runs the `kiln` binary on each schema and requires
//! its output to equal the file compiled here, byte for byte.

// Only the schema reader and the module writer are used here.
#![allow(dead_code)]

#[path = "src/jsontext.rs"]
mod jsontext;
#[path = "src/schema_json.rs"]
mod schema_json;

use std::path::Path;

fn main() {
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("gen");
    std::fs::create_dir_all(&out).expect("create OUT_DIR/gen");
    println!("cargo::rerun-if-changed=tests/gen");
    println!("cargo::rerun-if-changed=src/jsontext.rs");
    println!("cargo::rerun-if-changed=src/schema_json.rs");
    let mut names: Vec<_> = std::fs::read_dir("tests/gen")
        .expect("tests/gen")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    for path in names {
        let source = format!("tests/gen/{}", path.file_name().unwrap().to_string_lossy());
        let doc = std::fs::read_to_string(&path).expect("read a schema");
        let schema = schema_json::Schema::read(&doc).unwrap_or_else(|e| panic!("{source}: {e}"));
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        std::fs::write(out.join(format!("{stem}.rs")), schema.rust_module(&source))
            .expect("write a module");
    }
}
