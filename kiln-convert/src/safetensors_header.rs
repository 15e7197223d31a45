//! Reading a safetensors header, fast, by the safetensors crate's rules,
//! with 64-bit sizes on every target: the one header reader of the
//! conversions and of a file's head (`crate::head`, the browser).
//!
//! The crate's [`SafeTensors::read_metadata`](safetensors::SafeTensors::read_metadata)
//! parses the JSON into a map of owned strings and then checks it; for a
//! model of tens of thousands of tensors that is most of the time of a
//! conversion. And its `Metadata` holds offsets and dimensions as `usize`,
//! which on a 32-bit target (wasm32) cannot hold the offsets of a file
//! past 4 GiB: there it refuses such a header with "expected usize".
//!
//! [`read_header`] first tries a strict reader that borrows every name
//! straight from the header bytes and parses dtype, shape and data offsets
//! directly. That reader accepts only a subset of what the crate accepts
//! (plain JSON strings without escapes, integers without sign, fraction or
//! exponent, a tensor object of exactly `dtype`, `shape` and
//! `data_offsets`, a `__metadata__` object of strings, no repeated key)
//! and within it runs every check the crate runs. Anything outside the
//! subset, and every header it would refuse, goes to a reader of the
//! crate's own shapes (`HashMetadata`, `TensorInfo`, the crate's
//! [`Dtype`]) through serde_json as the crate reads them, with 64-bit
//! sizes, checked by the crate's rules in the crate's order, its faults the
//! crate's [`SafeTensorError`]s: the verdict and the error of the crate on
//! a 64-bit host, on every target. A differential test
//! (`tests/header_differential.rs`) and the fuzz target `header` compare
//! both readers with the crate; `tests/head.rs` compares the errors with
//! the crate's on every prefix of the fixtures and hostile headers.
//!
//! Only the header bytes and the file's length are needed: a reader of a
//! file's head (the browser, a remote file) passes the first `8 + n` bytes
//! and the length, and is told how many bytes it lacks.

use std::borrow::Cow;
use std::collections::HashMap;

use safetensors::tensor::SafeTensorError;
use safetensors::Dtype;
use serde::{de, Deserialize, Deserializer};

/// The safetensors crate's header limit.
pub(crate) const MAX_HEADER_LEN: usize = 100_000_000;

/// One tensor of a safetensors header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderTensor<'a> {
    /// The name, borrowed from the header when it has no escapes.
    pub name: Cow<'a, str>,
    /// The dtype.
    pub dtype: Dtype,
    /// Where the shape lies in the header's dims: start and rank.
    dims: (u32, u32),
    /// Start and end of the payload, relative to the data section.
    pub data_offsets: (u64, u64),
}

/// A checked safetensors header: what [`SafeTensors::read_metadata`](safetensors::SafeTensors::read_metadata)
/// says of a file on a 64-bit host, with names borrowed where they can be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SafetensorsHeader<'a> {
    /// The JSON header's length `n`; the data section starts at `8 + n`.
    pub header_len: usize,
    /// `__metadata__`, sorted by key; `None` when absent.
    pub metadata: Option<Vec<(Cow<'a, str>, Cow<'a, str>)>>,
    /// The tensors, sorted by name bytes.
    pub tensors: Vec<HeaderTensor<'a>>,
    /// Every tensor's dimensions, end to end.
    dims: Vec<u64>,
}

impl SafetensorsHeader<'_> {
    /// The dimensions of `tensor` (a tensor of this header).
    pub fn shape(&self, tensor: &HeaderTensor<'_>) -> &[u64] {
        let (start, len) = tensor.dims;
        let (start, len) = (start as usize, len as usize);
        self.dims.get(start..start + len).unwrap_or_default()
    }

    /// Where the data section starts in the file.
    pub fn data_start(&self) -> usize {
        8 + self.header_len
    }
}

/// Why a header was not read (see [`read_header`]).
#[derive(Debug)]
pub(crate) enum Refused {
    /// A fault, as the crate's error (the one it gives on a 64-bit host).
    Crate(SafeTensorError),
    /// The bytes given end before the header does, though the file is long
    /// enough to hold it: the first `needed` bytes are needed.
    ShortHead { needed: u64 },
}

/// Reads the header of a safetensors file of `file_len` bytes from `head`,
/// its first bytes (at least `8 + n`; the whole file will do). Accepts
/// exactly what [`SafeTensors::read_metadata`](safetensors::SafeTensors::read_metadata)
/// accepts of the whole file on a 64-bit host, gives the same facts, and
/// refuses with the same error.
pub(crate) fn read_header(head: &[u8], file_len: u64) -> Result<SafetensorsHeader<'_>, Refused> {
    let json = header_json(head, file_len)?;
    if let Some(header) = fast(json, file_len) {
        return Ok(header);
    }
    by_serde(json, file_len).map_err(Refused::Crate)
}

/// The JSON header's bytes, after the checks the crate makes before it
/// reads them (in its order), or how many bytes are needed.
fn header_json(head: &[u8], file_len: u64) -> Result<&[u8], Refused> {
    let Some(word) = head.first_chunk::<8>() else {
        if file_len < 8 {
            return Err(Refused::Crate(SafeTensorError::HeaderTooSmall));
        }
        return Err(Refused::ShortHead { needed: 8 });
    };
    let n = u64::from_le_bytes(*word);
    if n > MAX_HEADER_LEN as u64 {
        return Err(Refused::Crate(SafeTensorError::HeaderTooLarge));
    }
    let stop = n + 8;
    if stop > file_len {
        return Err(Refused::Crate(SafeTensorError::InvalidHeaderLength));
    }
    // stop <= MAX_HEADER_LEN + 8: a usize on every target.
    head.get(8..stop as usize)
        .ok_or(Refused::ShortHead { needed: stop })
}

/// A size in a safetensors header: the crate's `usize`, 64 bits wide on
/// every target (its error words are those of `usize`).
#[derive(Copy, Clone, Debug)]
struct Size(u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Size, D::Error> {
        struct Sizes;
        impl de::Visitor<'_> for Sizes {
            type Value = Size;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("usize")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
                Ok(Size(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
                u64::try_from(v)
                    .map(Size)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
        }
        d.deserialize_u64(Sizes)
    }
}

/// The safetensors crate's `TensorInfo`, with 64-bit sizes (the name is
/// the crate's: serde's error words carry it).
#[derive(Deserialize)]
struct TensorInfo {
    dtype: Dtype,
    shape: Vec<Size>,
    data_offsets: (Size, Size),
}

/// The safetensors crate's header shape, with 64-bit sizes.
#[derive(Deserialize)]
struct HashMetadata {
    #[serde(rename = "__metadata__")]
    metadata: Option<HashMap<String, String>>,
    #[serde(flatten)]
    tensors: HashMap<String, TensorInfo>,
}

/// The reader of every header outside the fast subset: the crate's
/// `read_metadata` with 64-bit sizes, its checks in its order, on the JSON
/// header `json` of a file of `file_len` bytes.
fn by_serde(json: &[u8], file_len: u64) -> Result<SafetensorsHeader<'static>, SafeTensorError> {
    let text = std::str::from_utf8(json).map_err(SafeTensorError::InvalidHeader)?;
    let read: HashMetadata =
        serde_json::from_str(text).map_err(SafeTensorError::InvalidHeaderDeserialization)?;
    let mut dims = Vec::new();
    let mut tensors: Vec<HeaderTensor<'static>> = read
        .tensors
        .into_iter()
        .map(|(name, info)| {
            let at = dims.len() as u32;
            dims.extend(info.shape.iter().map(|d| d.0));
            HeaderTensor {
                name: Cow::Owned(name),
                dtype: info.dtype,
                dims: (at, info.shape.len() as u32),
                data_offsets: (info.data_offsets.0 .0, info.data_offsets.1 .0),
            }
        })
        .collect();
    sort_by_name(&mut tensors);
    let metadata = read.metadata.map(|m| {
        let mut pairs: Vec<_> = m
            .into_iter()
            .map(|(k, v)| (Cow::Owned(k), Cow::Owned(v)))
            .collect();
        sort_pairs(&mut pairs);
        pairs
    });
    let header = SafetensorsHeader {
        header_len: json.len(),
        metadata,
        tensors,
        dims,
    };
    check(&header, file_len)?;
    Ok(header)
}

/// Sorts tensors by name bytes (one sort for both readers).
fn sort_by_name(tensors: &mut [HeaderTensor<'_>]) {
    tensors.sort_unstable_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
}

/// Sorts metadata pairs by key (one sort for both readers).
fn sort_pairs(pairs: &mut [(Cow<'_, str>, Cow<'_, str>)]) {
    pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
}

/// The tensors in the order of their data: `(start, end, index)`, `index`
/// into [`SafetensorsHeader::tensors`], sorted; tensors of no bytes at one
/// offset by name. The crate checks the tensors in the order of their
/// offsets, its ties in its hash map's order, which varies from run to
/// run; here they go by name, so the tensor an error names is always the
/// same.
pub(crate) fn data_order(header: &SafetensorsHeader<'_>) -> Vec<(u64, u64, u32)> {
    let mut order: Vec<(u64, u64, u32)> = header
        .tensors
        .iter()
        .zip(0u32..)
        .map(|(t, i)| (t.data_offsets.0, t.data_offsets.1, i))
        .collect();
    order.sort_unstable();
    order
}

/// The bits a tensor of `shape` and `dtype` holds; `None` past 64 bits.
#[inline(always)]
fn bits(shape: &[u64], dtype: Dtype) -> Option<u64> {
    shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .and_then(|n| n.checked_mul(dtype.bitsize() as u64))
}

/// The bytes a tensor of `shape` and `dtype` holds, or the crate's error.
fn byte_len(shape: &[u64], dtype: Dtype) -> Result<u64, SafeTensorError> {
    let bits = bits(shape, dtype).ok_or(SafeTensorError::ValidationOverflow)?;
    if bits % 8 != 0 {
        return Err(SafeTensorError::MisalignedSlice);
    }
    Ok(bits / 8)
}

/// The end of the data when, in name order, every tensor starts where the
/// one before ends and holds exactly its elements' bytes; `None` otherwise.
/// Such an order is sorted by offsets (ties by name): it is
/// [`data_order`], and every check of [`check`] passes in it.
fn end_in_name_order(header: &SafetensorsHeader<'_>) -> Option<u64> {
    let mut end = 0u64;
    for t in &header.tensors {
        let (s, e) = t.data_offsets;
        let bits = bits(header.shape(t), t.dtype)?;
        if s != end || e < s || bits % 8 != 0 || bits / 8 != e - s {
            return None;
        }
        end = e;
    }
    Some(end)
}

/// The checks of the crate's `Metadata::validate` and `read_metadata`
/// after the JSON, in their order: in the order of the data, each tensor
/// starts where the one before ends, its elements fill whole bytes and
/// exactly its bytes; the last ends at the end of the file. A file of one
/// dtype has its data in name order: checked in that order first, sorted
/// only when that fails.
fn check(header: &SafetensorsHeader<'_>, file_len: u64) -> Result<(), SafeTensorError> {
    let end = match end_in_name_order(header) {
        Some(end) => end,
        None => {
            let mut end = 0u64;
            for (s, e, i) in data_order(header) {
                let Some(t) = header.tensors.get(i as usize) else {
                    continue;
                };
                if s != end || e < s {
                    return Err(SafeTensorError::InvalidOffset(t.name.to_string()));
                }
                end = e;
                if e - s != byte_len(header.shape(t), t.dtype)? {
                    return Err(SafeTensorError::TensorInvalidInfo);
                }
            }
            end
        }
    };
    if (header.data_start() as u64).checked_add(end) != Some(file_len) {
        return Err(SafeTensorError::MetadataIncompleteBuffer);
    }
    Ok(())
}

/// The dtype names the crate's `Deserialize` takes, and their dtypes. A
/// name not here goes to [`by_serde`] (which knows it or refuses it); the
/// differential test checks every name against the crate.
macro_rules! dtype_names {
    ($($name:literal => $dtype:ident,)*) => {
        /// The dtype of `name`, a dtype name the crate takes.
        pub(crate) fn dtype_of_name(name: &str) -> Option<Dtype> {
            Some(match name {
                $($name => Dtype::$dtype,)*
                _ => return None,
            })
        }

        /// [`dtype_of_name`] of a name of at most 8 bytes given as
        /// [`word`] of its bytes: compares of one machine word, no string
        /// compare.
        fn dtype_of_word(word: u64) -> Option<Dtype> {
            $(
                if $name.len() <= 8 && word == self::word($name.as_bytes()) {
                    return Some(Dtype::$dtype);
                }
            )*
            None
        }
    };
}

dtype_names! {
    "BOOL" => BOOL,
    "F4" => F4,
    "F6_E2M3" => F6_E2M3,
    "F6_E3M2" => F6_E3M2,
    "U8" => U8,
    "I8" => I8,
    "F8_E5M2" => F8_E5M2,
    "F8_E4M3" => F8_E4M3,
    "F8_E8M0" => F8_E8M0,
    "F8_E4M3FNUZ" => F8_E4M3FNUZ,
    "F8_E5M2FNUZ" => F8_E5M2FNUZ,
    "I16" => I16,
    "U16" => U16,
    "F16" => F16,
    "BF16" => BF16,
    "I32" => I32,
    "U32" => U32,
    "F32" => F32,
    "C64" => C64,
    "F64" => F64,
    "I64" => I64,
    "U64" => U64,
}

/// The first (up to) 8 bytes of `bytes` as a little-endian word, zero
/// above them. No name holds a zero byte, so two names of at most 8 bytes
/// have the same word exactly when they are equal.
const fn word(bytes: &[u8]) -> u64 {
    let mut w = 0u64;
    let mut i = 0;
    while i < bytes.len() && i < 8 {
        w |= (bytes[i] as u64) << (8 * i);
        i += 1;
    }
    w
}

/// The strict reader, on the JSON header `json` of a file of `file_len`
/// bytes: `Some` only for a header the crate accepts, with the facts the
/// crate gives; `None` for anything else (outside the subset, or refused),
/// which [`by_serde`] then decides.
fn fast(json: &[u8], file_len: u64) -> Option<SafetensorsHeader<'_>> {
    let n = json.len();
    let text = std::str::from_utf8(json).ok()?;
    let mut p = Json {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    // A tensor takes some 50 bytes or more of JSON (`"t":{"dtype":"U8",
    // "shape":[],"data_offsets":[0,0]}`): room for every tensor of the
    // header at once, bounded by the bytes present.
    let mut header = SafetensorsHeader {
        header_len: n,
        metadata: None,
        tensors: Vec::with_capacity(n / 64),
        dims: Vec::with_capacity(n / 64),
    };
    p.expect(b'{')?;
    if !p.eat(b'}') {
        loop {
            let key = p.string()?;
            p.expect(b':')?;
            if key == "__metadata__" {
                if header.metadata.is_some() {
                    return None;
                }
                header.metadata = Some(p.string_map()?);
            } else {
                let t = p.tensor(key, &mut header.dims)?;
                header.tensors.push(t);
            }
            if p.eat(b'}') {
                break;
            }
            p.expect(b',')?;
        }
    }
    p.skip_space();
    if p.at != p.bytes.len() {
        return None;
    }
    // Sorted by name bytes. The writers write names in order, so a check
    // that they already are (which also finds no repeat) is usually all.
    // Repeated names (the crate keeps the last) are left to [`by_serde`].
    let by_name =
        |a: &HeaderTensor<'_>, b: &HeaderTensor<'_>| a.name.as_bytes() < b.name.as_bytes();
    if !header.tensors.is_sorted_by(by_name) {
        sort_by_name(&mut header.tensors);
        if header.tensors.windows(2).any(|w| w[0].name == w[1].name) {
            return None;
        }
    }
    if let Some(m) = &mut header.metadata {
        sort_pairs(m);
        if m.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
    }
    // A refusal is left to [`by_serde`], which gives the error.
    check(&header, file_len).ok()?;
    Some(header)
}

/// The keys of a tensor object.
enum TensorKey {
    Dtype,
    Shape,
    DataOffsets,
}

/// Bytes up to the first quote, backslash or control character of
/// `bytes` (all of them when there is none). Eight bytes at a time: a name
/// of a large model is some 50 bytes.
fn string_len(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    // Nonzero exactly when some byte of `x` is below `n` (n <= 128); the
    // lowest set bit is in the first such byte (a borrow only runs from a
    // lower byte that is below `n` into higher ones).
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        // `x ^ 0x02..` turns a quote (0x22) into 0x20 and keeps every
        // byte below 0x20 below it (and every other byte at or above):
        // one test finds both; a second finds the backslash.
        let stop = below(x ^ (ONES * 0x02), 0x21) | below(x ^ (ONES * u64::from(b'\\')), 1);
        if stop != 0 {
            return at + (stop.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + chunks
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(chunks.remainder().len())
}

/// The unsigned integer that `bytes` start with, as serde_json reads one
/// into a 64-bit size, and how many bytes it takes: digits, no leading
/// zero, no fraction or exponent, no overflow. Up to 19 digits (no u64
/// overflow); a longer number goes to [`by_serde`].
#[inline(always)]
fn number(bytes: &[u8]) -> Option<(u64, usize)> {
    let (mut value, mut len) = (0u64, 0usize);
    let next = loop {
        let Some(&b) = bytes.get(len) else {
            break None;
        };
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            break Some(b);
        }
        if len == 19 {
            return None;
        }
        value = value * 10 + u64::from(digit);
        len += 1;
    };
    let leading_zero = len > 1 && bytes.first() == Some(&b'0');
    if len == 0 || leading_zero || matches!(next, Some(b'.' | b'e' | b'E')) {
        return None;
    }
    Some((value, len))
}

/// A cursor over JSON text, for the strict subset.
struct Json<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Json<'a> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// Skips white space; then consumes `b` if it is next.
    #[inline(always)]
    fn eat(&mut self, b: u8) -> bool {
        // The writers put no white space between tokens: one compare.
        if self.bytes.get(self.at) == Some(&b) {
            self.at += 1;
            return true;
        }
        self.skip_space();
        if self.bytes.get(self.at) == Some(&b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    #[inline(always)]
    fn expect(&mut self, b: u8) -> Option<()> {
        self.eat(b).then_some(())
    }

    /// A string without escapes or control characters, borrowed.
    fn string(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let start = self.at;
        let rest = self.bytes.get(start..)?;
        let len = string_len(rest);
        // serde_json refuses a raw control character in a string; a
        // backslash starts an escape, left to [`by_serde`].
        if rest.get(len) != Some(&b'"') {
            return None;
        }
        self.at = start + len + 1;
        // The text is UTF-8 and a quote is never inside a character.
        self.text.get(start..start + len)
    }

    /// An unsigned integer (see [`number`]) after any white space.
    fn size(&mut self) -> Option<u64> {
        self.skip_space();
        let (value, len) = number(self.bytes.get(self.at..)?)?;
        self.at += len;
        Some(value)
    }

    /// `{"key": "value", ...}`: strings only.
    fn string_map(&mut self) -> Option<Vec<(Cow<'a, str>, Cow<'a, str>)>> {
        let mut pairs = Vec::new();
        self.expect(b'{')?;
        if self.eat(b'}') {
            return Some(pairs);
        }
        loop {
            let key = self.string()?;
            self.expect(b':')?;
            let value = self.string()?;
            pairs.push((Cow::Borrowed(key), Cow::Borrowed(value)));
            if self.eat(b'}') {
                return Some(pairs);
            }
            self.expect(b',')?;
        }
    }

    /// One of the three keys of a tensor object, matched in place.
    fn tensor_key(&mut self) -> Option<TensorKey> {
        self.expect(b'"')?;
        let rest = self.bytes.get(self.at..)?;
        let (key, len) = if rest.starts_with(b"dtype\"") {
            (TensorKey::Dtype, 6)
        } else if rest.starts_with(b"shape\"") {
            (TensorKey::Shape, 6)
        } else if rest.starts_with(b"data_offsets\"") {
            (TensorKey::DataOffsets, 13)
        } else {
            return None;
        };
        self.at += len;
        Some(key)
    }

    /// A tensor object exactly as the safetensors writers print one
    /// (`{"dtype":"F32","shape":[4],"data_offsets":[0,16]}`, no white
    /// space): read without looking for keys, on a slice that only moves
    /// forward. `None` when the text is laid out any other way (the cursor
    /// has not moved; `dims` may have grown).
    #[inline(always)]
    fn compact_tensor(&mut self, name: &'a str, dims: &mut Vec<u64>) -> Option<HeaderTensor<'a>> {
        let at = dims.len();
        let r = self.bytes.get(self.at..)?;
        let r = r.strip_prefix(b"{\"dtype\":\"")?;
        // The dtype name and the quote after it: a name of up to 8 bytes
        // is read as one word (the 11 bytes of `","shape":[` follow it, so
        // the word is there to load); a longer one by name.
        let (dtype, r) = match r.first_chunk::<8>() {
            Some(w) => {
                let w = u64::from_le_bytes(*w);
                let quote = (w ^ (u64::from_le_bytes([b'"'; 8])))
                    .wrapping_sub(u64::from_le_bytes([1; 8]))
                    & !(w ^ u64::from_le_bytes([b'"'; 8]))
                    & u64::from_le_bytes([0x80; 8]);
                if quote == 0 {
                    let len = r.iter().take(16).position(|&b| b == b'"')?;
                    let name = std::str::from_utf8(r.get(..len)?).ok()?;
                    (dtype_of_name(name)?, r.get(len..)?)
                } else {
                    let len = (quote.trailing_zeros() / 8) as usize;
                    let mask = (1u64 << (8 * len)).wrapping_sub(1);
                    (dtype_of_word(w & mask)?, r.get(len..)?)
                }
            }
            None => return None,
        };
        let mut r = r.strip_prefix(b"\",\"shape\":[")?;
        if let Some(rest) = r.strip_prefix(b"]") {
            r = rest;
        } else {
            loop {
                let (dim, len) = number(r)?;
                dims.push(dim);
                match r.get(len..)?.split_first()? {
                    (b']', rest) => {
                        r = rest;
                        break;
                    }
                    (b',', rest) => r = rest,
                    _ => return None,
                }
            }
        }
        let r = r.strip_prefix(b",\"data_offsets\":[")?;
        let (s, len) = number(r)?;
        let r = r.get(len..)?.strip_prefix(b",")?;
        let (e, len) = number(r)?;
        let r = r.get(len..)?.strip_prefix(b"]}")?;
        let tensor = HeaderTensor {
            name: Cow::Borrowed(name),
            dtype,
            dims: (
                u32::try_from(at).ok()?,
                u32::try_from(dims.len() - at).ok()?,
            ),
            data_offsets: (s, e),
        };
        self.at = self.bytes.len() - r.len();
        Some(tensor)
    }

    /// One tensor object: [`Json::compact_tensor`] when it is laid out as
    /// the writers lay it out, else [`Json::any_tensor`].
    #[inline(always)]
    fn tensor(&mut self, name: &'a str, dims: &mut Vec<u64>) -> Option<HeaderTensor<'a>> {
        let dims_len = dims.len();
        if let Some(t) = self.compact_tensor(name, dims) {
            return Some(t);
        }
        dims.truncate(dims_len);
        self.any_tensor(name, dims)
    }

    /// `{"dtype": ..., "shape": [...], "data_offsets": [s, e]}`, each key
    /// once, in any order, no other key; the dims appended to `dims`.
    fn any_tensor(&mut self, name: &'a str, dims: &mut Vec<u64>) -> Option<HeaderTensor<'a>> {
        let (mut dtype, mut shape, mut offsets) = (None, None, None);
        self.expect(b'{')?;
        loop {
            let key = self.tensor_key()?;
            self.expect(b':')?;
            match key {
                TensorKey::Dtype if dtype.is_none() => {
                    let text = self.string()?;
                    dtype = Some(dtype_of_name(text)?);
                }
                TensorKey::Shape if shape.is_none() => {
                    let at = dims.len();
                    self.expect(b'[')?;
                    if !self.eat(b']') {
                        loop {
                            dims.push(self.size()?);
                            if self.eat(b']') {
                                break;
                            }
                            self.expect(b',')?;
                        }
                    }
                    let len = u32::try_from(dims.len() - at).ok()?;
                    shape = Some((u32::try_from(at).ok()?, len));
                }
                TensorKey::DataOffsets if offsets.is_none() => {
                    self.expect(b'[')?;
                    let s = self.size()?;
                    self.expect(b',')?;
                    let e = self.size()?;
                    self.expect(b']')?;
                    offsets = Some((s, e));
                }
                _ => return None,
            }
            if self.eat(b'}') {
                break;
            }
            self.expect(b',')?;
        }
        Some(HeaderTensor {
            name: Cow::Borrowed(name),
            dtype: dtype?,
            dims: shape?,
            data_offsets: offsets?,
        })
    }
}

/// The fast reader's verdict alone (`None`: it left the header to the
/// serde reader), for the differential test and the fuzz target.
#[doc(hidden)]
pub fn fast_reader(head: &[u8], file_len: u64) -> Option<SafetensorsHeader<'_>> {
    fast(header_json(head, file_len).ok()?, file_len)
}

/// The serde reader's verdict alone (the one for every header outside the
/// fast subset), for the differential test and the fuzz target.
#[doc(hidden)]
pub fn serde_reader(head: &[u8], file_len: u64) -> Option<SafetensorsHeader<'static>> {
    by_serde(header_json(head, file_len).ok()?, file_len).ok()
}
