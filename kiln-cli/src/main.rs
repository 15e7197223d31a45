//! `kiln`: the Kiln command line (the commands are in the library,
//! `src/lib.rs`).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    kiln_cli::run(&args)
}
