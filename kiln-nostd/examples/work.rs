//! Runs one reader over one input, for counting its work with
//! `valgrind --tool=callgrind` (instructions are deterministic; wall time
//! is not). `scripts/stages/bounds.sh` runs it on the inputs that once took
//! unbounded time and fails above a bound.
//!
//! ```sh
//! cargo build --release -p kiln-nostd --features alloc --example work
//! valgrind --tool=callgrind target/release/examples/work MODE TYPE FILE
//! ```
//!
//! MODE: `check` (run-time type text), `value` (dynamic values, then
//! encoding them again), `views` (`ListView<ListView<Empty>>`, for
//! `list<list<struct{}>>`), `directory` (`Directory::parse`, then an index
//! of the names and a lookup of every name). Prints the verdict.

use kiln_nostd::{
    check, decode_value, encode_value, from_bytes, Directory, Empty, ListView, Options,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, mode, type_text, file] = &args[..] else {
        panic!("usage: work MODE TYPE FILE");
    };
    let bytes = std::fs::read(file).expect("readable input");
    let verdict = match mode.as_str() {
        "check" => check(type_text, &bytes, Options::BARE).map(|()| String::new()),
        "value" => decode_value(type_text, &bytes, Options::BARE).and_then(|value| {
            let again = encode_value(type_text, &value, Options::BARE)?;
            assert_eq!(again, bytes);
            Ok(String::new())
        }),
        "views" => from_bytes::<ListView<ListView<Empty>>>(&bytes)
            .map(|lists| format!(" ({} lists)", lists.len())),
        "directory" => Directory::parse(&bytes).map(|dir| {
            let index = dir.index_names();
            let found = dir
                .iter()
                .filter(|t| {
                    let name = t.name().expect("named");
                    index.get(name).map(|v| v.index()) == Some(t.index())
                })
                .count();
            assert_eq!(found, dir.len());
            format!(" ({} tensors, every name found)", dir.len())
        }),
        other => panic!("unknown mode {other}"),
    };
    match verdict {
        Ok(detail) => println!("ok{detail}"),
        Err(e) => println!("error: {e}"),
    }
}
