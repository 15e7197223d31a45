//! The Kiln command line (`kiln`), and the same operations for other
//! front ends (the Python package): [`api`].
//!
//! ```text
//! kiln check [--type TYPE] [--framed] [--cap N] FILE
//! kiln convert [--quiet] IN OUT
//! kiln inspect [--type TYPE] [--cap N] [--json] FILE
//! kiln decode [--type TYPE] [--framed] [--cap N] [--preview] [--compact] FILE
//! kiln encode [--type TYPE] [--framed] [--cap N] [-o OUT] [FILE]
//! kiln gen [--name NAME] SCHEMA.json
//! kiln type SCHEMA.json
//! ```
//!
//! One module per subcommand (`check.rs`, `convert.rs`, ...), each with a
//! `run(args) -> ExitCode` taking the arguments after the subcommand's
//! name; [`run`] only dispatches. A new subcommand is a new module and
//! one line in `COMMANDS`.
//!
//! Exit status, for every subcommand: 0 success; 1 the input bytes were
//! rejected (one `error:` line on stderr says why); 2 a usage or I/O error.

use std::process::ExitCode;

pub mod api;
mod check;
mod common;
mod convert;
mod decode;
mod encode;
mod gen;
mod inspect;
mod jsonform;
mod jsontext;
mod schema_json;
mod types;

/// A subcommand: its name, one line of help, its usage line and its entry
/// point.
struct Command {
    name: &'static str,
    about: &'static str,
    usage: &'static str,
    run: fn(&[String]) -> ExitCode,
}

const COMMANDS: &[Command] = &[
    Command {
        name: "check",
        about: "check that a file is one valid Kiln value of a type",
        usage: check::USAGE,
        run: check::run,
    },
    Command {
        name: "convert",
        about: "convert safetensors or GGUF to Kiln, and back",
        usage: convert::USAGE,
        run: convert::run,
    },
    Command {
        name: "inspect",
        about: "show the tensors and metadata of a Kiln, safetensors or GGUF file",
        usage: inspect::USAGE,
        run: inspect::run,
    },
    Command {
        name: "decode",
        about: "print a Kiln value as JSON",
        usage: decode::USAGE,
        run: decode::run,
    },
    Command {
        name: "encode",
        about: "write the Kiln bytes of a JSON value",
        usage: encode::USAGE,
        run: encode::run,
    },
    Command {
        name: "gen",
        about: "print Rust #[derive(Frozen)] structs for a JSON Schema",
        usage: gen::USAGE,
        run: gen::run,
    },
    Command {
        name: "type",
        about: "print the Kiln type text and hash of a JSON Schema",
        usage: types::USAGE,
        run: types::run,
    },
];

fn help() -> String {
    let mut text = String::from("kiln: the Kiln v2 command line\n\ncommands:\n");
    for c in COMMANDS {
        text.push_str(&format!("  {:<9} {}\n", c.name, c.about));
    }
    text.push_str("\nusage:\n");
    for c in COMMANDS {
        text.push_str(&format!("  {}\n", c.usage.trim_start_matches("usage: ")));
    }
    text.push_str("\n`kiln COMMAND --help` describes one command, with examples.\n");
    text.push_str(
        "\nExit status: 0 done; 1 the input is invalid (one line on standard error,\n\
         `error: FILE: CODE: what at byte N`); 2 usage or I/O error (one line,\n\
         `kiln: FILE: reason`). docs/cli.md lists the codes.\n",
    );
    text.push_str(
        "\nexamples:\n  kiln convert model.safetensors model.kiln\n  kiln inspect model.kiln\n  \
         kiln decode --preview model.kiln",
    );
    text
}

/// Runs the command line with `args` (the arguments after the program's
/// name): what `kiln` does.
pub fn run(args: &[String]) -> ExitCode {
    let Some((name, rest)) = args.split_first() else {
        return common::Failure::usage(format!("missing command\n{}", help())).exit();
    };
    if matches!(name.as_str(), "--help" | "-h" | "help") {
        return match common::print(&format!("{}\n", help())) {
            Ok(()) => ExitCode::SUCCESS,
            Err(failure) => failure.exit(),
        };
    }
    match COMMANDS.iter().find(|c| c.name == name) {
        Some(command) => (command.run)(rest),
        None => common::Failure::usage(format!("unknown command '{name}'\n{}", help())).exit(),
    }
}
