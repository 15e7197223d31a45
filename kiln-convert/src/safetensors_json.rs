//! The JSON header of a safetensors file, written byte for byte as the
//! safetensors crate's `Metadata` serializes it through `serde_json`.
//!
//! Going through the crate's `Metadata` costs a `String` and a shape
//! `Vec` per tensor, a hash map of the names and serde's generic
//! machinery: for a model of 18,867 small tensors that was some 45 M
//! instructions, most of a `kiln convert` back to safetensors. This writes
//! the same text straight into one buffer. What is not plain text is still
//! done by `serde_json` itself: the metadata map, a name that needs an
//! escape, and each dtype's name (once per run of one dtype), so the bytes
//! cannot drift from the crate's. The checks `Metadata::new` makes on the
//! tensors (element count times bit width is a whole number of bytes and
//! equals the payload's length) are made here too, with the crate's error.

use std::collections::{BTreeMap, HashMap};

use safetensors::tensor::SafeTensorError;
use safetensors::Dtype;

/// One tensor's entry in the header; `S` holds its dimensions (a Kiln
/// [`kiln_nostd::Shape`]).
pub(crate) struct Entry<'a, S> {
    pub name: &'a str,
    pub dtype: Dtype,
    pub shape: S,
    pub data_len: usize,
}

/// Appends the header JSON (without the 8-byte length or the padding) of
/// `entries`, laid end to end in this order from offset 0, after
/// `metadata` when there is one, to `json`. An entry that could not be
/// made stops the header with its error.
pub(crate) fn header_json<'a, S: AsRef<[u64]>>(
    json: &mut Vec<u8>,
    metadata: Option<&HashMap<String, String>>,
    entries: impl Iterator<Item = Result<Entry<'a, S>, String>>,
) -> Result<(), String> {
    json.push(b'{');
    let mut first = true;
    if let Some(metadata) = metadata {
        json.extend_from_slice(b"\"__metadata__\":");
        // In byte order: the crate writes its HashMap's order, which is
        // random per process, so any order is one it could write, and this
        // one makes the same file on every run.
        let sorted: BTreeMap<&str, &str> = metadata
            .iter()
            .map(|(key, value)| (key.as_str(), value.as_str()))
            .collect();
        serde_json::to_writer(&mut *json, &sorted).map_err(|e| e.to_string())?;
        first = false;
    }
    let mut dtype: Option<(Dtype, Vec<u8>)> = None;
    // Each tensor's data starts where the one before ends: the start's
    // digits are the last end's, copied from where they lie in `json`.
    let mut last_end: Option<core::ops::Range<usize>> = None;
    let mut offset = 0usize;
    for entry in entries {
        let entry = entry?;
        check_extent(&entry).map_err(|refusal| refusal.error().to_string())?;
        offset = offset
            .checked_add(entry.data_len)
            .ok_or_else(|| SafeTensorError::ValidationOverflow.to_string())?;
        let dtype_text = match &dtype {
            Some((d, text)) if *d == entry.dtype => text,
            _ => {
                let text = serde_json::to_vec(&entry.dtype).map_err(|e| e.to_string())?;
                &dtype.insert((entry.dtype, text)).1
            }
        };
        // Room for the whole entry (eight dimensions and two offsets of at
        // most 20 digits, and the punctuation), so that it grows once.
        json.reserve(entry.name.len() + dtype_text.len() + 256);
        if !first {
            json.push(b',');
        }
        first = false;
        string(json, entry.name)?;
        json.extend_from_slice(b":{\"dtype\":");
        json.extend_from_slice(dtype_text);
        json.extend_from_slice(b",\"shape\":[");
        for (i, &d) in entry.shape.as_ref().iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            decimal(json, d);
        }
        json.extend_from_slice(b"],\"data_offsets\":[");
        match last_end.take() {
            Some(digits) => json.extend_from_within(digits),
            None => json.push(b'0'),
        }
        json.push(b',');
        let at = json.len();
        decimal(json, offset as u64);
        last_end = Some(at..json.len());
        json.extend_from_slice(b"]}");
    }
    json.push(b'}');
    Ok(())
}

/// Why `Metadata::new` would refuse a tensor.
enum Refusal {
    Overflow,
    Misaligned,
    Length,
}

impl Refusal {
    /// The crate's error for it.
    fn error(self) -> SafeTensorError {
        match self {
            Refusal::Overflow => SafeTensorError::ValidationOverflow,
            Refusal::Misaligned => SafeTensorError::MisalignedSlice,
            Refusal::Length => SafeTensorError::TensorInvalidInfo,
        }
    }
}

/// The check `Metadata::new` makes of one tensor: its elements fill a
/// whole number of bytes, exactly `data_len` of them.
fn check_extent<S: AsRef<[u64]>>(entry: &Entry<'_, S>) -> Result<(), Refusal> {
    let elements = entry
        .shape
        .as_ref()
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
        .ok_or(Refusal::Overflow)?;
    let bits = elements
        .checked_mul(entry.dtype.bitsize())
        .ok_or(Refusal::Overflow)?;
    if bits % 8 != 0 {
        return Err(Refusal::Misaligned);
    }
    if bits / 8 != entry.data_len {
        return Err(Refusal::Length);
    }
    Ok(())
}

/// Whether serde_json escapes any byte of `s`: `"`, `\` and the control
/// characters below U+0020, looked for eight bytes at a time.
fn needs_escape(s: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The high bit of a byte's place is set where that byte is below 0x20,
    // or (after the xor) zero: exact as "any such byte", since a borrow
    // only carries out of a byte that is itself one.
    let flags = |w: u64| {
        let (quote, backslash) = (w ^ (ONES * 0x22), w ^ (ONES * 0x5c));
        (w.wrapping_sub(ONES * 0x20) & !w)
            | (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
    };
    let word = |chunk: &[u8]| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        u64::from_le_bytes(bytes)
    };
    let mut chunks = s.chunks_exact(8);
    let mut found = 0;
    for chunk in &mut chunks {
        found |= flags(word(chunk));
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        match s.len().checked_sub(8).and_then(|at| s.get(at..)) {
            // The last eight bytes, overlapping the words before.
            Some(last) => found |= flags(word(last)),
            None => return tail.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\'),
        }
    }
    found & HIGHS != 0
}

/// Appends `s` as a JSON string: as it is, between quotes, when nothing
/// in it needs an escape, else through serde_json.
fn string(json: &mut Vec<u8>, s: &str) -> Result<(), String> {
    if needs_escape(s.as_bytes()) {
        return serde_json::to_writer(&mut *json, s).map_err(|e| e.to_string());
    }
    json.push(b'"');
    json.extend_from_slice(s.as_bytes());
    json.push(b'"');
    Ok(())
}

/// Appends `n` in decimal, as serde_json (itoa) writes an integer.
fn decimal(json: &mut Vec<u8>, mut n: u64) {
    if n < 10 {
        json.push(b'0' + n as u8);
        return;
    }
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    for digit in digits.iter_mut().rev() {
        *digit = b'0' + (n % 10) as u8;
        start -= 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    json.extend_from_slice(digits.get(start..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use safetensors::tensor::{Metadata, TensorInfo};

    /// What the crate writes: its `Metadata`, serialized by serde_json.
    fn crate_json(
        metadata: Option<HashMap<String, String>>,
        tensors: &[(&str, Dtype, Vec<u64>, usize)],
    ) -> Result<Vec<u8>, String> {
        let mut offset = 0;
        let infos = tensors
            .iter()
            .map(|(name, dtype, shape, len)| {
                let info = TensorInfo {
                    dtype: *dtype,
                    shape: shape.iter().map(|&d| d as usize).collect(),
                    data_offsets: (offset, offset + len),
                };
                offset += len;
                (name.to_string(), info)
            })
            .collect();
        let meta = Metadata::new(metadata, infos).map_err(|e| e.to_string())?;
        serde_json::to_vec(&meta).map_err(|e| e.to_string())
    }

    fn our_json(
        metadata: Option<&HashMap<String, String>>,
        tensors: &[(&str, Dtype, Vec<u64>, usize)],
    ) -> Result<Vec<u8>, String> {
        let mut json = vec![];
        let entries = tensors.iter().map(|(name, dtype, shape, len)| {
            Ok(Entry {
                name,
                dtype: *dtype,
                shape: shape.as_slice(),
                data_len: *len,
            })
        });
        header_json(&mut json, metadata, entries)?;
        Ok(json)
    }

    #[test]
    fn writes_what_the_crate_writes() {
        let names = [
            "w",
            "model.layers.17.mlp.experts.42.up_proj.weight",
            "quote\"in",
            "back\\slash.and.a.longer.tail",
            "tab\tnewline\ncontrol\u{1}\u{1f}end",
            "del\u{7f}and é ünicode → 名前",
            "exactly8",
            "sixteen_bytes_ab",
            "",
        ];
        let dtypes = [
            Dtype::F32,
            Dtype::F32,
            Dtype::BF16,
            Dtype::U8,
            Dtype::F64,
            Dtype::F4,
        ];
        let mut tensors = vec![];
        for (i, name) in names.iter().enumerate() {
            let dtype = dtypes[i % dtypes.len()];
            let shape: Vec<u64> = match i % 3 {
                0 => vec![],
                1 => vec![4],
                _ => vec![2, 3, 12_345_678_901],
            };
            let elements: u64 = shape.iter().product();
            let len = (elements as usize * dtype.bitsize()).div_ceil(8);
            tensors.push((*name, dtype, shape, len));
        }
        let ours = our_json(None, &tensors).unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            String::from_utf8(crate_json(None, &tensors).unwrap()).unwrap()
        );
        // With metadata (one pair, so that the map's order is the only one).
        let metadata: HashMap<String, String> =
            [("format".to_string(), "pt \"x\"\n".to_string())].into();
        assert_eq!(
            our_json(Some(&metadata), &tensors).unwrap(),
            crate_json(Some(metadata.clone()), &tensors).unwrap()
        );
        assert_eq!(
            our_json(Some(&metadata), &[]).unwrap(),
            crate_json(Some(metadata), &[]).unwrap()
        );
        assert_eq!(our_json(None, &[]).unwrap(), b"{}");
    }

    #[test]
    fn metadata_keys_are_written_in_byte_order() {
        let metadata: HashMap<String, String> = ["format", "b", "a\"q", "Z", "é", "a"]
            .iter()
            .map(|k| (k.to_string(), format!("v{k}")))
            .collect();
        let tensors = [("w", Dtype::F32, vec![2], 8)];
        let ours = our_json(Some(&metadata), &tensors).unwrap();
        let theirs = crate_json(Some(metadata.clone()), &tensors).unwrap();
        // The same object as the crate's, in one order of the keys.
        let parsed = |bytes: &[u8]| serde_json::from_slice::<serde_json::Value>(bytes).unwrap();
        assert_eq!(parsed(&ours), parsed(&theirs));
        let text = String::from_utf8(ours).unwrap();
        let at = |key: &str| {
            text.find(&format!("{}:", serde_json::to_string(key).unwrap()))
                .unwrap()
        };
        let mut keys: Vec<&str> = metadata.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert!(keys.windows(2).all(|w| at(w[0]) < at(w[1])), "{text}");
    }

    #[test]
    fn refuses_what_the_crate_refuses() {
        let cases = [
            // Three 4-bit elements are not a whole number of bytes.
            ("odd", Dtype::F4, vec![3], 2),
            // Four f32 elements are 16 bytes, not 15.
            ("short", Dtype::F32, vec![4], 15),
            // The element count overflows.
            ("huge", Dtype::F32, vec![u64::MAX / 2, 4], 16),
        ];
        for (name, dtype, shape, len) in cases {
            let tensors = [(name, dtype, shape, len)];
            let ours = our_json(None, &tensors).unwrap_err();
            assert_eq!(ours, crate_json(None, &tensors).unwrap_err(), "{name}");
        }
    }

    #[test]
    fn finds_every_byte_serde_json_escapes() {
        for len in [1, 5, 8, 13, 16, 20] {
            for at in 0..len {
                for b in 0u8..=0x7f {
                    let mut s = vec![b'a'; len];
                    s[at] = b;
                    let expected = b < 0x20 || b == b'"' || b == b'\\';
                    assert_eq!(needs_escape(&s), expected, "byte {b:#x} at {at} of {len}");
                }
            }
        }
        assert!(!needs_escape(b""));
        assert!(!needs_escape("é → 名前 ünicode".as_bytes()));
    }

    #[test]
    fn writes_numbers_as_serde_json_does() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, u64::MAX / 3, u64::MAX] {
            let mut json = b"x".to_vec();
            decimal(&mut json, n);
            assert_eq!(json, format!("x{n}").as_bytes());
        }
    }
}
