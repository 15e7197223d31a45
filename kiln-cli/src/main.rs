//! `kiln`: the Kiln command line.
//!
//! ```text
//! kiln check [--type TYPE] [--framed] [--cap N] FILE
//! ```
//!
//! Checks that FILE (`-` for standard input) is one valid value of TYPE
//! (canonical type text, default `tensors`). Prints `ok` and exits 0 when
//! the bytes are accepted; prints `error: CODE: detail` on stderr and exits
//! 1 when they are rejected, CODE being one of the eight wire codes; exits 2
//! on a usage or I/O error.

use std::io::Read;
use std::process::ExitCode;

use kiln_nostd::{CompiledType, Framing, Kind, Limits, Options};

const USAGE: &str = "usage: kiln check [--type TYPE] [--framed] [--cap N] FILE";

/// A parsed `kiln check` command line.
#[derive(Debug, PartialEq)]
struct CheckArgs {
    type_text: String,
    framed: bool,
    limits: Limits,
    file: String,
}

fn parse_args(args: &[String]) -> Result<CheckArgs, String> {
    let mut args = args.iter();
    match args.next().map(String::as_str) {
        Some("check") => {}
        Some(other) => return Err(format!("unknown command '{other}'")),
        None => return Err("missing command".into()),
    }
    let mut parsed = CheckArgs {
        type_text: "tensors".into(),
        framed: false,
        limits: Limits::DEFAULT,
        file: String::new(),
    };
    let mut file = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--type" => {
                parsed.type_text = args.next().ok_or("--type needs a value")?.clone();
            }
            "--framed" => parsed.framed = true,
            "--cap" => {
                let cap: u64 = args
                    .next()
                    .ok_or("--cap needs a value")?
                    .parse()
                    .map_err(|_| "--cap takes a whole number")?;
                parsed.limits = Limits::uniform_checked(cap).map_err(|e| e.to_string())?;
            }
            flag if flag.starts_with("--") => return Err(format!("unknown option '{flag}'")),
            path => {
                if file.replace(path.to_string()).is_some() {
                    return Err("more than one FILE".into());
                }
            }
        }
    }
    parsed.file = file.ok_or("missing FILE")?;
    Ok(parsed)
}

fn read_input(file: &str) -> std::io::Result<Vec<u8>> {
    if file == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes)?;
        Ok(bytes)
    } else {
        std::fs::read(file)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match parse_args(&args) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("kiln: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let bytes = match read_input(&parsed.file) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("kiln: cannot read {}: {e}", parsed.file);
            return ExitCode::from(2);
        }
    };
    let framing = if parsed.framed {
        Framing::Framed
    } else {
        Framing::Bare
    };
    let options = Options {
        framing,
        limits: parsed.limits,
    };
    let checked = CompiledType::<1024>::parse(&parsed.type_text)
        .map(Box::new)
        .and_then(|ty| ty.check(&bytes, options));
    match checked {
        Ok(()) => {
            println!("ok");
            ExitCode::SUCCESS
        }
        Err(e) => match e.kind() {
            Kind::Wire(code) => {
                // Display starts with the code; print it in the documented form.
                let detail = e.to_string();
                let detail = detail
                    .strip_prefix(code.as_str())
                    .and_then(|d| d.strip_prefix(": "))
                    .unwrap_or(&detail);
                eprintln!("error: {code}: {detail}");
                ExitCode::from(1)
            }
            Kind::Refused(_) => {
                eprintln!("kiln: {e}\n{USAGE}");
                ExitCode::from(2)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn defaults_to_tensors_and_default_caps() {
        let parsed = parse_args(&args(&["check", "f.bin"])).unwrap();
        assert_eq!(parsed.type_text, "tensors");
        assert!(!parsed.framed);
        assert_eq!(parsed.limits, Limits::DEFAULT);
        assert_eq!(parsed.file, "f.bin");
    }

    #[test]
    fn reads_every_option() {
        let parsed = parse_args(&args(&[
            "check", "--type", "list<u8>", "--framed", "--cap", "4", "-",
        ]))
        .unwrap();
        assert_eq!(parsed.type_text, "list<u8>");
        assert!(parsed.framed);
        assert_eq!(parsed.limits, Limits::uniform(4));
        assert_eq!(parsed.file, "-");
    }

    #[test]
    fn rejects_bad_usage() {
        for bad in [
            &["check"][..],
            &["check", "--cap", "x", "f"],
            &["check", "--cap", "4294967296", "f"],
            &["check", "a", "b"],
            &["check", "--bogus", "f"],
            &["frob", "f"],
            &[],
        ] {
            assert!(parse_args(&args(bad)).is_err(), "{bad:?}");
        }
    }
}
