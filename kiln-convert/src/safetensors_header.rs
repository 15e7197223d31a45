//! Reading a safetensors header, fast, with the safetensors crate as the
//! authority on what a header is.
//!
//! The crate's [`SafeTensors::read_metadata`] parses the JSON into a map of
//! owned strings and then checks it; for a model of tens of thousands of
//! tensors that is most of the time of a conversion. [`read_header`] first
//! tries a strict reader of its own that borrows every name straight from
//! the header bytes and parses dtype, shape and data offsets directly. That
//! reader accepts only a subset of what the crate accepts (plain JSON
//! strings without escapes, integers without sign, fraction or exponent, a
//! tensor object of exactly `dtype`, `shape` and `data_offsets`, a
//! `__metadata__` object of strings, no repeated key) and within it runs
//! every check the crate runs. Anything outside the subset, and every
//! header it would refuse, goes to the crate, so the verdict and the error
//! are always the crate's. A differential test (`tests/header_differential.rs`)
//! and the fuzz target `header` compare the two readers.
//!
//! Only the header bytes and the file's length are needed: a reader of a
//! file's head (the browser, a remote file) passes the first `8 + n` bytes
//! and the length.

use std::borrow::Cow;

use safetensors::tensor::{Metadata, SafeTensorError, SafeTensors};
use safetensors::Dtype;

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
    pub data_offsets: (usize, usize),
}

/// A checked safetensors header: what [`SafeTensors::read_metadata`] says
/// of a file, with names borrowed where they can be.
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

/// Why the crate refused a header (see [`read_header`]).
#[derive(Debug)]
pub(crate) enum Refused {
    /// The crate's own error.
    Crate(SafeTensorError),
    /// The bytes given end before the header does, though the file is long
    /// enough to hold it: a head reader passed too short a prefix.
    ShortHead { needed: usize },
}

/// Reads the header of a safetensors file of `file_len` bytes from `head`,
/// its first bytes (at least `8 + n`; the whole file will do). Accepts
/// exactly what [`SafeTensors::read_metadata`] accepts of the whole file,
/// and gives the same facts.
pub(crate) fn read_header(head: &[u8], file_len: u64) -> Result<SafetensorsHeader<'_>, Refused> {
    if let Some(header) = fast(head, file_len) {
        return Ok(header);
    }
    by_crate(head, file_len)
}

/// The crate's verdict, and its facts turned into ours.
fn by_crate(head: &[u8], file_len: u64) -> Result<SafetensorsHeader<'_>, Refused> {
    let whole = head.len() as u64 == file_len;
    let (n, meta) = if whole {
        SafeTensors::read_metadata(head).map_err(Refused::Crate)?
    } else {
        let n = header_len(head).map_err(Refused::Crate)?;
        let stop = n
            .checked_add(8)
            .ok_or(Refused::Crate(SafeTensorError::InvalidHeaderLength))?;
        if stop as u64 > file_len {
            return Err(Refused::Crate(SafeTensorError::InvalidHeaderLength));
        }
        let head = head
            .get(..stop)
            .ok_or(Refused::ShortHead { needed: stop })?;
        // On the head alone the crate's last check (the data ends at the
        // end of the file) fails for any file with data; that error means
        // every other check passed, so the metadata is then rebuilt from
        // the JSON, and the length check made against `file_len`.
        let meta = match SafeTensors::read_metadata(head) {
            Ok((_, meta)) => meta,
            Err(SafeTensorError::MetadataIncompleteBuffer) => {
                let text = std::str::from_utf8(&head[8..]).map_err(SafeTensorError::InvalidHeader);
                let text = text.map_err(Refused::Crate)?;
                serde_json::from_str::<Metadata>(text)
                    .map_err(|e| Refused::Crate(SafeTensorError::InvalidHeaderDeserialization(e)))?
            }
            Err(e) => return Err(Refused::Crate(e)),
        };
        let end: usize = meta
            .tensors()
            .values()
            .map(|t| t.data_offsets.1)
            .max()
            .unwrap_or(0);
        if end as u64 + stop as u64 != file_len {
            return Err(Refused::Crate(SafeTensorError::MetadataIncompleteBuffer));
        }
        (n, meta)
    };
    let mut dims = Vec::new();
    let mut tensors: Vec<HeaderTensor<'_>> = meta
        .tensors()
        .into_iter()
        .map(|(name, info)| {
            let at = dims.len() as u32;
            dims.extend(info.shape.iter().map(|&d| d as u64));
            HeaderTensor {
                name: Cow::Owned(name),
                dtype: info.dtype,
                dims: (at, info.shape.len() as u32),
                data_offsets: info.data_offsets,
            }
        })
        .collect();
    tensors.sort_unstable_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    let metadata = meta.metadata().as_ref().map(|m| {
        let mut pairs: Vec<_> = m
            .iter()
            .map(|(k, v)| (Cow::Owned(k.clone()), Cow::Owned(v.clone())))
            .collect();
        pairs.sort_unstable();
        pairs
    });
    Ok(SafetensorsHeader {
        header_len: n,
        metadata,
        tensors,
        dims,
    })
}

/// The header length of the first 8 bytes, with the crate's checks.
fn header_len(head: &[u8]) -> Result<usize, SafeTensorError> {
    let bytes: [u8; 8] = head
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .ok_or(SafeTensorError::HeaderTooSmall)?;
    let n =
        usize::try_from(u64::from_le_bytes(bytes)).map_err(|_| SafeTensorError::HeaderTooLarge)?;
    if n > MAX_HEADER_LEN {
        return Err(SafeTensorError::HeaderTooLarge);
    }
    Ok(n)
}

/// The dtype of each name the crate's `Deserialize` takes. A name not here
/// goes to the crate (which knows it or refuses it); the differential test
/// checks every name against the crate.
pub(crate) fn dtype_of_name(name: &str) -> Option<Dtype> {
    Some(match name {
        "BOOL" => Dtype::BOOL,
        "F4" => Dtype::F4,
        "F6_E2M3" => Dtype::F6_E2M3,
        "F6_E3M2" => Dtype::F6_E3M2,
        "U8" => Dtype::U8,
        "I8" => Dtype::I8,
        "F8_E5M2" => Dtype::F8_E5M2,
        "F8_E4M3" => Dtype::F8_E4M3,
        "F8_E8M0" => Dtype::F8_E8M0,
        "F8_E4M3FNUZ" => Dtype::F8_E4M3FNUZ,
        "F8_E5M2FNUZ" => Dtype::F8_E5M2FNUZ,
        "I16" => Dtype::I16,
        "U16" => Dtype::U16,
        "F16" => Dtype::F16,
        "BF16" => Dtype::BF16,
        "I32" => Dtype::I32,
        "U32" => Dtype::U32,
        "F32" => Dtype::F32,
        "C64" => Dtype::C64,
        "F64" => Dtype::F64,
        "I64" => Dtype::I64,
        "U64" => Dtype::U64,
        _ => return None,
    })
}

/// The strict reader: `Some` only for a header the crate accepts, with the
/// facts the crate gives; `None` for anything else (outside the subset,
/// or refused), which the crate then decides.
fn fast(head: &[u8], file_len: u64) -> Option<SafetensorsHeader<'_>> {
    let n = header_len(head).ok()?;
    let stop = n.checked_add(8)?;
    let text = std::str::from_utf8(head.get(8..stop)?).ok()?;
    let mut p = Json {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut header = SafetensorsHeader {
        header_len: n,
        metadata: None,
        tensors: Vec::new(),
        dims: Vec::new(),
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
    // Repeated names: the crate keeps the last; left to it.
    header
        .tensors
        .sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    if header.tensors.windows(2).any(|w| w[0].name == w[1].name) {
        return None;
    }
    if let Some(m) = &mut header.metadata {
        m.sort_by(|a, b| a.0.cmp(&b.0));
        if m.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
    }
    // The crate's checks: sorted by offsets, the tensors cover the data
    // section end to end, each exactly its elements' bytes.
    for t in &header.tensors {
        let (s, e) = t.data_offsets;
        if e < s {
            return None;
        }
        let elements = header
            .shape(t)
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d as usize))?;
        let bits = elements.checked_mul(t.dtype.bitsize())?;
        if bits % 8 != 0 || e - s != bits / 8 {
            return None;
        }
    }
    let mut ranges: Vec<(usize, usize)> = header.tensors.iter().map(|t| t.data_offsets).collect();
    ranges.sort_unstable();
    let mut end = 0usize;
    for (s, e) in ranges {
        if s != end {
            return None;
        }
        end = e;
    }
    (end.checked_add(stop)? as u64 == file_len).then_some(header)
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
    // Non-zero exactly when some byte of `x` is below `n` (n <= 128).
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    let zero = |x: u64| below(x, 1);
    let mut at = 0;
    for chunk in bytes.chunks_exact(8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let stop = below(x, 0x20)
            | zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\')));
        if stop != 0 {
            break;
        }
        at += 8;
    }
    at + bytes
        .get(at..)
        .unwrap_or_default()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(bytes.len() - at)
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
    fn eat(&mut self, b: u8) -> bool {
        self.skip_space();
        if self.bytes.get(self.at) == Some(&b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

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
        // backslash starts an escape, left to the crate.
        if rest.get(len) != Some(&b'"') {
            return None;
        }
        self.at = start + len + 1;
        // The text is UTF-8 and a quote is never inside a character.
        self.text.get(start..start + len)
    }

    /// An unsigned integer as serde_json reads one into a `usize`: digits,
    /// no leading zero, no fraction or exponent, no overflow.
    fn usize(&mut self) -> Option<usize> {
        self.skip_space();
        self.digits()
    }

    /// [`Json::usize`] with no white space before it.
    fn digits(&mut self) -> Option<usize> {
        let rest = self.bytes.get(self.at..)?;
        // Up to 19 digits: no u64 overflow. A longer number (or one past
        // usize) goes to the crate.
        let (mut value, mut len) = (0u64, 0usize);
        for &b in rest {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            if len == 19 {
                return None;
            }
            value = value * 10 + u64::from(digit);
            len += 1;
        }
        let leading_zero = len > 1 && rest.first() == Some(&b'0');
        let float = matches!(rest.get(len), Some(b'.' | b'e' | b'E'));
        if len == 0 || leading_zero || float {
            return None;
        }
        self.at += len;
        usize::try_from(value).ok()
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

    /// Consumes `literal` if the text continues with it, byte for byte.
    fn literal(&mut self, literal: &[u8]) -> bool {
        let found = self
            .bytes
            .get(self.at..)
            .is_some_and(|rest| rest.starts_with(literal));
        if found {
            self.at += literal.len();
        }
        found
    }

    /// A tensor object exactly as the safetensors writers print one
    /// (`{"dtype":"F32","shape":[4],"data_offsets":[0,16]}`, no white
    /// space): read without looking for keys. `None` when the text is laid
    /// out any other way (the cursor then is anywhere).
    fn compact_tensor(&mut self, name: &'a str, dims: &mut Vec<u64>) -> Option<HeaderTensor<'a>> {
        let at = dims.len();
        if !self.literal(b"{\"dtype\":\"") {
            return None;
        }
        let rest = self.bytes.get(self.at..)?;
        let len = rest.iter().take(16).position(|&b| b == b'"')?;
        let dtype = dtype_of_name(self.text.get(self.at..self.at + len)?)?;
        self.at += len;
        if !self.literal(b"\",\"shape\":[") {
            return None;
        }
        if !self.literal(b"]") {
            loop {
                dims.push(self.digits()? as u64);
                if self.literal(b"]") {
                    break;
                }
                if !self.literal(b",") {
                    return None;
                }
            }
        }
        if !self.literal(b",\"data_offsets\":[") {
            return None;
        }
        let s = self.digits()?;
        if !self.literal(b",") {
            return None;
        }
        let e = self.digits()?;
        if !self.literal(b"]}") {
            return None;
        }
        Some(HeaderTensor {
            name: Cow::Borrowed(name),
            dtype,
            dims: (
                u32::try_from(at).ok()?,
                u32::try_from(dims.len() - at).ok()?,
            ),
            data_offsets: (s, e),
        })
    }

    /// One tensor object: [`Json::compact_tensor`] when it is laid out as
    /// the writers lay it out, else [`Json::any_tensor`].
    fn tensor(&mut self, name: &'a str, dims: &mut Vec<u64>) -> Option<HeaderTensor<'a>> {
        self.skip_space();
        let (at, dims_len) = (self.at, dims.len());
        if let Some(t) = self.compact_tensor(name, dims) {
            return Some(t);
        }
        self.at = at;
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
                            dims.push(self.usize()? as u64);
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
                    let s = self.usize()?;
                    self.expect(b',')?;
                    let e = self.usize()?;
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
/// crate), for the differential test and the fuzz target.
#[doc(hidden)]
pub fn fast_reader(head: &[u8], file_len: u64) -> Option<SafetensorsHeader<'_>> {
    fast(head, file_len)
}

/// The crate's verdict alone, in our form, for the differential test and
/// the fuzz target.
#[doc(hidden)]
pub fn crate_reader(head: &[u8], file_len: u64) -> Option<SafetensorsHeader<'_>> {
    by_crate(head, file_len).ok()
}
