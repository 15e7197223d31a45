//! The golden cases of `spec/kiln-v2-cases.json`, embedded so the same
//! tests run on every target, read into one shape for every test that
//! walks them.

#![allow(dead_code)]

use kiln_nostd::{Code, Framing, Limits, Options};

/// The file, as the tests embed it.
pub const CASES_JSON: &str = include_str!("../../../spec/kiln-v2-cases.json");

/// One golden case.
pub struct Case {
    pub name: String,
    pub type_text: String,
    pub bytes: Vec<u8>,
    /// `None` for a case every reader accepts.
    pub expect: Option<Code>,
    /// Framing and the case's caps (the default caps where it names none).
    pub options: Options,
}

impl Case {
    pub fn framed(&self) -> bool {
        self.options.is_framed()
    }

    pub fn limits(&self) -> Limits {
        self.options.limits
    }

    /// The verdict as the tests compare it: `Ok` or the code.
    pub fn want(&self) -> Result<(), Option<Code>> {
        self.expect.map_or(Ok(()), |code| Err(Some(code)))
    }
}

/// Every case, in the file's order.
pub fn cases() -> Vec<Case> {
    let json: Vec<serde_json::Value> = serde_json::from_str(CASES_JSON).expect("JSON");
    json.iter()
        .map(|c| {
            let hex = c["hex"].as_str().unwrap();
            let limits = c
                .get("cap")
                .and_then(|c| c.as_u64())
                .map_or(Limits::DEFAULT, |cap| Limits::uniform_checked(cap).unwrap());
            let framing = if c["framed"].as_bool().unwrap() {
                Framing::Framed
            } else {
                Framing::Bare
            };
            Case {
                name: c["name"].as_str().unwrap().into(),
                type_text: c["type"].as_str().unwrap().into(),
                bytes: (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect(),
                expect: match c["expect"].as_str().unwrap() {
                    "accept" => None,
                    code => Some(Code::from_name(code).expect("known code")),
                },
                options: Options { framing, limits },
            }
        })
        .collect()
}
