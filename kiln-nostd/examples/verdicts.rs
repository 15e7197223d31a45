//! Prints `kiln_nostd::check`'s verdict for every case of a JSON case file
//! (the golden-case format), one line each: `accept` or the error code.
//! The differential test (`tests/differential/run.py`) compares these
//! lines with the Python reference's.
//!
//! ```sh
//! cargo run -q -p kiln-nostd --example verdicts -- CASES.json
//! ```

use kiln_nostd::{check, Framing, Limits, Options};

fn main() {
    let path = std::env::args().nth(1).expect("usage: verdicts CASES.json");
    let text = std::fs::read_to_string(&path).expect("readable case file");
    let cases: Vec<serde_json::Value> = serde_json::from_str(&text).expect("a JSON array");
    for case in cases {
        let hex = case["hex"].as_str().expect("hex");
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digits"))
            .collect();
        let limits = case
            .get("cap")
            .and_then(|c| c.as_u64())
            .map_or(Limits::DEFAULT, |cap| {
                Limits::uniform_checked(cap).expect("cap")
            });
        let type_text = case["type"].as_str().expect("type");
        let framing = match case["framed"].as_bool().expect("framed") {
            true => Framing::Framed,
            false => Framing::Bare,
        };
        match check(type_text, &bytes, Options { framing, limits }) {
            Ok(()) => println!("accept"),
            Err(e) => match e.code() {
                Some(code) => println!("{code}"),
                None => println!("refused: {e}"),
            },
        }
    }
}
