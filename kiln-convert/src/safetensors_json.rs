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

use std::collections::HashMap;

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
        serde_json::to_writer(&mut *json, metadata).map_err(|e| e.to_string())?;
        first = false;
    }
    let mut dtype: Option<(Dtype, Vec<u8>)> = None;
    // Each tensor's data starts where the one before ends: the start's
    // digits are the last end's.
    let mut start = Digits::of(0);
    let mut offset = 0usize;
    for entry in entries {
        let entry = entry?;
        check_extent(&entry).map_err(|refusal| refusal.error().to_string())?;
        offset = offset
            .checked_add(entry.data_len)
            .ok_or_else(|| SafeTensorError::ValidationOverflow.to_string())?;
        if !first {
            json.push(b',');
        }
        first = false;
        string(json, entry.name)?;
        let dtype_text = match &dtype {
            Some((d, text)) if *d == entry.dtype => text,
            _ => {
                let text = serde_json::to_vec(&entry.dtype).map_err(|e| e.to_string())?;
                &dtype.insert((entry.dtype, text)).1
            }
        };
        let end = Digits::of(offset as u64);
        // The rest of the entry goes together into one small buffer, so
        // that the header grows once per tensor.
        let mut rest = Text::new();
        rest.put(b":{\"dtype\":");
        rest.put(dtype_text);
        rest.put(b",\"shape\":[");
        for (i, &d) in entry.shape.as_ref().iter().enumerate() {
            if i > 0 {
                rest.put(b",");
            }
            rest.put(Digits::of(d).as_bytes());
        }
        rest.put(b"],\"data_offsets\":[");
        rest.put(start.as_bytes());
        rest.put(b",");
        rest.put(end.as_bytes());
        rest.put(b"]}");
        json.extend_from_slice(rest.as_bytes());
        start = end;
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
    // A byte of `w` is zero exactly when the result has its high bit
    // set in that byte's place (for the lowest such byte, and no false
    // positive below the first real one; any high bit means some zero).
    let has_zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS != 0;
    let has_below_space = |w: u64| w.wrapping_sub(ONES * 0x20) & !w & HIGHS != 0;
    let mut chunks = s.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        if has_below_space(w) || has_zero(w ^ (ONES * 0x22)) || has_zero(w ^ (ONES * 0x5c)) {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Appends `s` as a JSON string: as it is, between quotes, when nothing
/// in it needs an escape, else through serde_json.
fn string(json: &mut Vec<u8>, s: &str) -> Result<(), String> {
    if needs_escape(s.as_bytes()) {
        return serde_json::to_writer(&mut *json, s).map_err(|e| e.to_string());
    }
    json.reserve(s.len() + 2);
    json.push(b'"');
    json.extend_from_slice(s.as_bytes());
    json.push(b'"');
    Ok(())
}

/// A number in decimal, as serde_json (itoa) writes an integer.
#[derive(Clone, Copy)]
struct Digits {
    bytes: [u8; 20],
    start: usize,
}

impl Digits {
    fn of(mut n: u64) -> Self {
        let mut bytes = [0u8; 20];
        let mut start = bytes.len();
        while let Some(at) = start.checked_sub(1) {
            start = at;
            if let Some(b) = bytes.get_mut(at) {
                *b = b'0' + (n % 10) as u8;
            }
            n /= 10;
            if n == 0 {
                break;
            }
        }
        Digits { bytes, start }
    }

    fn as_bytes(&self) -> &[u8] {
        self.bytes.get(self.start..).unwrap_or_default()
    }
}

/// The text of one header entry after its name, built on the stack. Its
/// capacity holds the longest entry: a dtype name, eight dimensions and
/// two offsets of 20 digits each, and the punctuation.
struct Text {
    bytes: [u8; 320],
    len: usize,
}

impl Text {
    fn new() -> Self {
        Text {
            bytes: [0; 320],
            len: 0,
        }
    }

    /// Appends `s`; what would not fit is left out (never, for the
    /// entries above).
    fn put(&mut self, s: &[u8]) {
        if let Some(to) = self.bytes.get_mut(self.len..self.len + s.len()) {
            to.copy_from_slice(s);
            self.len += s.len();
        }
    }

    fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
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
        for at in 0..20 {
            for b in 0u8..=0x7f {
                let mut s = vec![b'a'; 20];
                s[at] = b;
                let expected = b < 0x20 || b == b'"' || b == b'\\';
                assert_eq!(needs_escape(&s), expected, "byte {b:#x} at {at}");
            }
        }
        assert!(!needs_escape("é → 名前 ünicode".as_bytes()));
    }

    #[test]
    fn writes_numbers_as_serde_json_does() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, u64::MAX / 3, u64::MAX] {
            assert_eq!(Digits::of(n).as_bytes(), n.to_string().as_bytes());
        }
    }
}
