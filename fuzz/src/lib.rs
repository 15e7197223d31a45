//! What the fuzz targets share: the type texts they read bytes against,
//! the small header at the front of each input, and verdicts.
//!
//! Inputs of the `check`, `walk_value` and `slow` targets are
//! `[type index][flags][cap: u32 LE][bytes...]`: the type is line
//! `index % lines` of `fuzz/types.txt` (every type of the golden cases,
//! then nested zero-size types, deep nesting past the limit, dicts and
//! `tensors` fields), flag bit 0 asks for a frame, and a cap of 0 means
//! the default caps. `fuzz/seeds.py` writes every golden case in that form.

use std::sync::OnceLock;

use kiln_nostd::{CompiledType, Error, Limits, Options};

/// Nodes a type of `types.txt` may compile to (the deepest has 200).
pub const NODES: usize = 512;

/// A compiled type of `types.txt`.
pub type Ty<'t> = CompiledType<'t, NODES>;

/// The type texts, one a line.
pub fn types() -> &'static [&'static str] {
    static TYPES: OnceLock<Vec<&'static str>> = OnceLock::new();
    TYPES.get_or_init(|| {
        include_str!("../types.txt")
            .lines()
            .filter(|l| !l.is_empty())
            .collect()
    })
}

/// One input of a typed target, split.
#[derive(Debug)]
pub struct Input<'a> {
    /// Canonical type text.
    pub type_text: &'static str,
    /// Framing and caps.
    pub options: Options,
    /// The bytes to read.
    pub bytes: &'a [u8],
}

/// Splits `[type][flags][cap u32][bytes]`; `None` when the header is short.
pub fn split(data: &[u8]) -> Option<Input<'_>> {
    let (header, bytes) = data.split_first_chunk::<6>()?;
    let types = types();
    let type_text = types[usize::from(header[0]) % types.len()];
    let cap = u32::from_le_bytes([header[2], header[3], header[4], header[5]]);
    let limits = if cap == 0 {
        Limits::DEFAULT
    } else {
        Limits::uniform(cap)
    };
    let options = if header[1] & 1 == 1 {
        Options::FRAMED
    } else {
        Options::BARE
    }
    .with_limits(limits);
    Some(Input {
        type_text,
        options,
        bytes,
    })
}

/// What a reader said about some bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted.
    Accept,
    /// One of the eight wire codes.
    Wire(kiln_nostd::Code),
    /// A refusal of the API (capacity, alignment...), not a wire verdict.
    Refused(kiln_nostd::Refusal),
}

/// The verdict of a result, after checking that an error's offset lies
/// inside the buffer it is about.
pub fn verdict<T>(result: &Result<T, Error>, len: usize) -> Verdict {
    match result {
        Ok(_) => Verdict::Accept,
        Err(e) => {
            if let Some(offset) = e.offset() {
                assert!(
                    offset <= len as u64,
                    "error offset {offset} past {len} bytes: {e}"
                );
            }
            match (e.code(), e.refusal()) {
                (Some(code), _) => Verdict::Wire(code),
                (None, Some(refusal)) => Verdict::Refused(refusal),
                (None, None) => panic!("an error with neither a code nor a refusal: {e}"),
            }
        }
    }
}
