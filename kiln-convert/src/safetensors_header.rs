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
    /// Every tensor's dimensions, end to end (tensors of one shape in a
    /// row may share theirs).
    dims: Vec<u64>,
    #[cfg(not(feature = "small-code"))]
    /// What its tensors hold, so that a converter needs no walk of them.
    tally: Tally,
}

/// The facts of a header's tensors that a converter checks: which dtypes,
/// the largest rank, and the data section's length.
#[cfg(not(feature = "small-code"))]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Tally {
    /// The dtypes of the tensors, one bit each ([`dtype_bit`]).
    dtypes: u32,
    /// The largest rank of a tensor.
    max_rank: u32,
    /// The length of the data section (where the last tensor ends).
    data_len: u64,
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

    #[cfg(not(feature = "small-code"))]
    /// The length of the data section: every tensor's data lies in its
    /// first bytes, and covers them.
    pub(crate) fn data_len(&self) -> u64 {
        self.tally.data_len
    }

    #[cfg(not(feature = "small-code"))]
    /// The largest rank of a tensor (0 when there is none).
    pub(crate) fn max_rank(&self) -> usize {
        self.tally.max_rank as usize
    }

    #[cfg(not(feature = "small-code"))]
    /// Every dtype some tensor has, each once.
    pub(crate) fn dtypes(&self) -> impl Iterator<Item = Dtype> + '_ {
        DTYPES
            .iter()
            .zip(0..)
            .filter(|&(_, i)| self.tally.dtypes & (1 << i) != 0)
            .map(|(&d, _)| d)
    }

    #[cfg(not(feature = "small-code"))]
    /// Notes tensor `t` in [`SafetensorsHeader::dtypes`] and
    /// [`SafetensorsHeader::max_rank`].
    fn note(&mut self, dtype: Dtype, rank: u32) {
        self.tally.dtypes |= dtype_bit(dtype);
        self.tally.max_rank = self.tally.max_rank.max(rank);
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
pub(crate) fn header_json(head: &[u8], file_len: u64) -> Result<&[u8], Refused> {
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
    #[cfg_attr(feature = "small-code", allow(unused_mut))]
    let mut header = SafetensorsHeader {
        header_len: json.len(),
        metadata,
        tensors,
        dims,
        #[cfg(not(feature = "small-code"))]
        tally: Tally::default(),
    };
    #[cfg(not(feature = "small-code"))]
    for i in 0..header.tensors.len() {
        if let Some(t) = header.tensors.get(i) {
            let (dtype, rank) = (t.dtype, t.dims.1);
            header.note(dtype, rank);
        }
    }
    let _data_len = check(&header, file_len)?;
    #[cfg(not(feature = "small-code"))]
    {
        header.tally.data_len = _data_len;
    }
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

/// Whether tensor `t`, of `shape`, starts at `end` and holds exactly its
/// elements' bytes, in whole bytes.
#[inline(always)]
fn follows(end: u64, t: &HeaderTensor<'_>, shape: &[u64]) -> bool {
    let (s, e) = t.data_offsets;
    match bits(shape, t.dtype) {
        Some(bits) => s == end && e >= s && bits % 8 == 0 && bits / 8 == e - s,
        None => false,
    }
}

/// The end of the data when, in name order, every tensor [`follows`] the
/// one before (the first starts at 0); `None` otherwise. Such an order is
/// sorted by offsets (ties by name): it is [`data_order`], and every check
/// of [`check`] passes in it.
fn end_in_name_order(header: &SafetensorsHeader<'_>) -> Option<u64> {
    let mut end = 0u64;
    for t in &header.tensors {
        if !follows(end, t, header.shape(t)) {
            return None;
        }
        end = t.data_offsets.1;
    }
    Some(end)
}

/// The checks of the crate's `Metadata::validate` and `read_metadata`
/// after the JSON, in their order: in the order of the data, each tensor
/// starts where the one before ends, its elements fill whole bytes and
/// exactly its bytes; the last ends at the end of the file. A file of one
/// dtype has its data in name order: checked in that order first, sorted
/// only when that fails.
fn check(header: &SafetensorsHeader<'_>, file_len: u64) -> Result<u64, SafeTensorError> {
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
    Ok(end)
}

/// The dtype names the crate's `Deserialize` takes, and their dtypes. A
/// name not here goes to [`by_serde`] (which knows it or refuses it); the
/// differential test checks every name against the crate.
macro_rules! dtype_names {
    ($($name:literal => $dtype:ident,)*) => {
        #[cfg(not(feature = "small-code"))]
        /// Every dtype the crate takes, in the order of their bits
        /// ([`dtype_bit`]).
        const DTYPES: [Dtype; 22] = [$(Dtype::$dtype,)*];

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

#[cfg(not(feature = "small-code"))]
/// The bit of `dtype` in [`SafetensorsHeader`]'s set of dtypes: its
/// place in [`DTYPES`].
fn dtype_bit(dtype: Dtype) -> u32 {
    DTYPES
        .iter()
        .position(|&d| d == dtype)
        .map_or(0, |i| 1 << i)
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
///
/// The writers write tensors in name order with their data in that
/// order, one tensor object much like the next: whether they did is found
/// while reading ([`InOrder`]), so such a header needs neither a sort nor
/// a second walk over its tensors; a name is compared with the last one
/// and scanned only from where they differ ([`Json::key`]); a tensor
/// object that starts as the last one did is matched in one compare
/// ([`TensorHead`]). In the default build a run of such entries is read
/// by one loop (`Json::writers_entries`), where an entry of the last
/// one's dtype and shape whose data follows the last one's matches the
/// last one's text up to its end offset in one compare, and a name of
/// ASCII bytes needs no UTF-8 check of its own.
fn fast(json: &[u8], file_len: u64) -> Option<SafetensorsHeader<'_>> {
    let n = json.len();
    // The small build checks the whole header once; the default build
    // checks each string as it reads it (a name of ASCII bytes by the
    // words its scan loads anyway), so the header streams through the
    // cache once. Every other byte the reader takes is one it matched
    // against ASCII text, so the header it accepts is UTF-8 either way.
    #[cfg(feature = "small-code")]
    let text = std::str::from_utf8(json).ok()?;
    let mut p = Json {
        #[cfg(feature = "small-code")]
        text,
        bytes: json,
        at: 0,
        head: None,
    };
    // A tensor takes some 50 bytes or more of JSON (`"t":{"dtype":"U8",
    // "shape":[],"data_offsets":[0,0]}`): room for every tensor of the
    // header at once, bounded by the bytes present.
    let mut header = SafetensorsHeader {
        header_len: n,
        metadata: None,
        tensors: Vec::with_capacity(n / 64),
        dims: Vec::with_capacity(n / 64),
        #[cfg(not(feature = "small-code"))]
        tally: Tally::default(),
    };
    let mut order = InOrder::new();
    p.expect(b'{')?;
    if !p.eat(b'}') {
        loop {
            // `small-code` reads every entry part by part: the same
            // verdicts, without the loop's code (the browser's module).
            #[cfg(not(feature = "small-code"))]
            let in_loop = p.writers_entries(&mut header, &mut order);
            #[cfg(feature = "small-code")]
            let in_loop = false;
            if !in_loop {
                let key = p.key(order.last_name)?;
                p.expect(b':')?;
                if key.text == "__metadata__" {
                    if header.metadata.is_some() {
                        return None;
                    }
                    header.metadata = Some(p.string_map()?);
                } else {
                    let t = p.tensor(key.text, &mut header.dims)?;
                    order.push(&key, &t, header.shape(&t));
                    #[cfg(not(feature = "small-code"))]
                    header.note(t.dtype, t.dims.1);
                    header.tensors.push(t);
                }
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
    // Sorted by name bytes. Repeated names (the crate keeps the last) are
    // left to [`by_serde`].
    if !order.names {
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
    let _data_len = match order.end() {
        // What [`check`] finds of such a header, without a second walk.
        Some(end) => {
            ((header.data_start() as u64).checked_add(end) == Some(file_len)).then_some(end)
        }
        None => check(&header, file_len).ok(),
    }?;
    #[cfg(not(feature = "small-code"))]
    {
        header.tally.data_len = _data_len;
    }
    Some(header)
}

/// Whether the tensors read so far are in name order (each name after the
/// one before) with their data in that order ([`follows`] the one before):
/// then they are what [`end_in_name_order`] walks the sorted tensors for.
struct InOrder {
    /// Start and length in the JSON of the last tensor's name.
    last_name: Option<(usize, usize)>,
    /// Every name after the one before.
    names: bool,
    /// Every tensor's data follows the one before's.
    data: bool,
    /// Where the last tensor's data ends.
    end: u64,
}

impl InOrder {
    fn new() -> InOrder {
        InOrder {
            last_name: None,
            names: true,
            data: true,
            end: 0,
        }
    }

    /// The next tensor `t`, of name `key` and shape `shape`.
    #[inline(always)]
    fn push(&mut self, key: &Key<'_>, t: &HeaderTensor<'_>, shape: &[u64]) {
        self.names &= key.after_last;
        self.data &= follows(self.end, t, shape);
        self.end = t.data_offsets.1;
        self.last_name = Some((key.start, key.text.len()));
    }

    /// [`end_in_name_order`] of the sorted tensors, when they were read in
    /// name order (else `None`).
    fn end(&self) -> Option<u64> {
        (self.names && self.data).then_some(self.end)
    }
}

/// What [`Json::writers_entries`] keeps from one entry for the next.
#[cfg(not(feature = "small-code"))]
struct WritersRun {
    /// The last name is all ASCII.
    last_ascii: bool,
    /// The text from a name's closing quote to its first dimension,
    /// `":{"dtype":"F32","shape":[`, of the last entry read by parts.
    head: Option<TensorHead>,
    /// The last entry's text from its name's closing quote to its start,
    /// then the last end and a comma: the text of the next entry when it
    /// has the same dtype and shape and its data follows.
    last_text: [u8; 72],
    /// Its length (zero: none).
    last_len: usize,
    /// The length of its text before the start.
    fixed_len: usize,
    /// The facts of an entry of that text.
    facts: EntryFacts,
    /// The last start read by [`Json::entry_parts`].
    start: u64,
}

/// What a tensor entry's text says, apart from its name and offsets.
#[cfg(not(feature = "small-code"))]
#[derive(Clone, Copy)]
struct EntryFacts {
    dtype: Dtype,
    /// Its dims in the header's dims: start and rank.
    dims: (u32, u32),
    /// The bytes its elements fill, when whole and within 64 bits.
    bytes: Option<u64>,
}

/// The keys of a tensor object.
enum TensorKey {
    Dtype,
    Shape,
    DataOffsets,
}

/// Eight bytes read as one little-endian word, for the scans of eight
/// bytes at a time: `0x01` in every byte.
const ONES: u64 = u64::from_le_bytes([0x01; 8]);
/// The high bit of every byte of a word.
const HIGH: u64 = ONES * 0x80;

/// The first eight bytes of `bytes` as a little-endian word; bytes past
/// the end read as zero (a byte no scan goes past: it is a control
/// character and not a digit).
#[inline(always)]
fn word_of(bytes: &[u8]) -> u64 {
    match bytes.first_chunk::<8>() {
        Some(w) => u64::from_le_bytes(*w),
        None => word_near_end(bytes),
    }
}

/// [`word_of`] of fewer than eight bytes.
#[cold]
#[inline(never)]
fn word_near_end(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    for (to, from) in w.iter_mut().zip(bytes) {
        *to = *from;
    }
    u64::from_le_bytes(w)
}

/// The index of the byte of a word that holds its lowest set bit (8 when
/// none is set).
#[inline(always)]
fn first_byte(x: u64) -> usize {
    (x.trailing_zeros() / 8) as usize
}

/// Bytes up to the first quote, backslash or control character of
/// `bytes` (all of them when there is none), eight at a time: a name of a
/// large model is some 50 bytes.
#[inline(always)]
fn string_len(bytes: &[u8]) -> usize {
    let (words, tail) = bytes.as_chunks::<8>();
    for (i, w) in words.iter().enumerate() {
        let stops = string_stops(u64::from_le_bytes(*w));
        if stops != 0 {
            return 8 * i + first_byte(stops);
        }
    }
    // The tail read as a word, zeros after it: a zero byte is a stop.
    let mut w = [0u8; 8];
    for (to, from) in w.iter_mut().zip(tail) {
        *to = *from;
    }
    8 * words.len() + first_byte(string_stops(u64::from_le_bytes(w)))
}

/// The high bit set in the first byte of `x` that is a quote, a backslash
/// or a control character (and maybe in bytes after it); zero when there
/// is none.
#[inline(always)]
fn string_stops(x: u64) -> u64 {
    // Nonzero exactly when some byte of `x` is below `n` (n <= 128); the
    // lowest set bit is in the first such byte (a borrow only runs from a
    // lower byte that is below `n` into higher ones).
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    // `x ^ 0x02..` turns a quote (0x22) into 0x20 and keeps every byte
    // below 0x20 below it (and every other byte at or above): one test
    // finds both; a second finds the backslash.
    below(x ^ (ONES * 0x02), 0x21) | below(x ^ (ONES * u64::from(b'\\')), 1)
}

/// [`string_len`] of `bytes` from `from` on, and the OR of the words it
/// read (all from `from` to past the stop), whose high bits say whether
/// those bytes can hold one of 0x80 or above. Not inlined: the loop keeps
/// its constants in registers.
#[cfg(not(feature = "small-code"))]
#[inline(never)]
fn string_end(bytes: &[u8], from: usize) -> (usize, u64) {
    let mut high = 0u64;
    let mut at = from;
    while let Some(w) = bytes.get(at..at + 8) {
        let w = u64::from_le_bytes(w.try_into().unwrap_or_default());
        high |= w;
        let stops = string_stops(w);
        if stops != 0 {
            return (at + first_byte(stops), high);
        }
        at += 8;
    }
    // The last bytes, zeros after them: a zero byte is a stop.
    let w = word_of(bytes.get(at..).unwrap_or_default());
    (at + first_byte(string_stops(w)), high | w)
}

/// How many bytes `bytes` and `last` have in common at their start,
/// compared in whole words of `last`: where they first differ, or the
/// bytes of those words when they do not differ in them.
#[inline(always)]
fn same_words(bytes: &[u8], last: &[u8]) -> usize {
    let (words, _) = bytes.as_chunks::<8>();
    let (last_words, _) = last.as_chunks::<8>();
    for (i, (w, l)) in words.iter().zip(last_words).enumerate() {
        let (w, l) = (u64::from_le_bytes(*w), u64::from_le_bytes(*l));
        if w != l {
            // Little-endian: the first byte that differs is the lowest.
            return 8 * i + first_byte(w ^ l);
        }
    }
    8 * words.len().min(last_words.len())
}

/// The digits that `bytes` start with, as serde_json reads an unsigned
/// integer into a 64-bit size, and how many bytes they take: no leading
/// zero, no overflow. Up to 19 digits (no u64 overflow); a longer number
/// goes to [`by_serde`], and so does one with a fraction or an exponent,
/// which the caller finds in the byte after (see [`number`]).
///
/// The first eight bytes are read as one word: which are digits, and
/// their value, take a few word operations where a loop takes several per
/// digit (the offsets of a large file have six to twelve digits).
#[inline(always)]
fn digits(bytes: &[u8]) -> Option<(u64, usize)> {
    let x = word_of(bytes);
    // The high bit of every byte that is not a digit (0x30..=0x39): below
    // 0x30 the subtraction borrows, above 0x39 the addition reaches 0x80,
    // from 0x80 the byte has it; a carry or borrow only runs from such a
    // byte into later ones, so the first is exact.
    let not_digit = (x.wrapping_add(ONES * 0x46) | x.wrapping_sub(ONES * 0x30) | x) & HIGH;
    let len = first_byte(not_digit);
    if len == 0 || (len > 1 && x & 0xff == u64::from(b'0')) {
        return None;
    }
    if len == 1 {
        // A dimension mostly.
        return Some(((x & 0xff) - u64::from(b'0'), 1));
    }
    // The digits' values, first digit lowest, moved up so that zeros (as
    // leading zeros) fill the low bytes; then pairs of digits, fours and
    // eights are summed within the word.
    let v = x.wrapping_sub(ONES * 0x30) << (8 * (8 - len));
    let v = (v * 10 + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v * 100 + (v >> 16)) & 0x0000_ffff_0000_ffff;
    let mut value = (v * 10000 + (v >> 32)) & 0xffff_ffff;
    if len < 8 {
        return Some((value, len));
    }
    let mut len = 8;
    while let Some(digit) = bytes.get(len).map(|b| b.wrapping_sub(b'0')) {
        if digit > 9 {
            break;
        }
        if len == 19 {
            return None;
        }
        value = value * 10 + u64::from(digit);
        len += 1;
    }
    Some((value, len))
}

/// The unsigned integer that `bytes` start with, as serde_json reads one
/// into a 64-bit size, and how many bytes it takes: [`digits`] not
/// followed by a fraction or an exponent.
#[inline(always)]
fn number(bytes: &[u8]) -> Option<(u64, usize)> {
    let (value, len) = digits(bytes)?;
    if matches!(bytes.get(len), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    Some((value, len))
}

/// A key of the header object, and how it sorts after the last tensor's.
struct Key<'a> {
    text: &'a str,
    /// Where its text starts in the JSON.
    start: usize,
    /// The name sorts after the last tensor's (bytewise; true for the
    /// first).
    after_last: bool,
}

/// A cursor over JSON text, for the strict subset.
struct Json<'a> {
    /// The header as text (checked once, in the small build).
    #[cfg(feature = "small-code")]
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// The start of the last compact tensor object read.
    head: Option<TensorHead>,
}

/// The start of a compact tensor object, `{"dtype":"F32","shape":[`, as
/// four words, zeros after its end: the tensors of a model mostly share
/// it, and one compare of four words finds it, where its parts take a
/// compare each and the dtype a search.
struct TensorHead {
    words: [u64; 4],
    /// The bits of its bytes in each word (zero past its end).
    masks: [u64; 4],
    /// Its length (at most 32).
    len: usize,
    dtype: Dtype,
}

impl TensorHead {
    /// The first `len` bytes of `r`, of a compact tensor object of
    /// `dtype`; `None` when `r` has fewer than 32 bytes, or `len` is more.
    fn of(r: &[u8], len: usize, dtype: Dtype) -> Option<TensorHead> {
        let words = words_of(r.first_chunk::<32>()?);
        let masks = [0, 1, 2, 3].map(|i| mask(len.saturating_sub(8 * i)));
        (len <= 32).then_some(TensorHead {
            words: [0, 1, 2, 3].map(|i| words[i] & masks[i]),
            masks,
            len,
            dtype,
        })
    }

    /// Its dtype and the bytes after it when `r` starts with it.
    #[inline(always)]
    fn matches<'r>(&self, r: &'r [u8]) -> Option<(Dtype, &'r [u8])> {
        let w = words_of(r.first_chunk::<32>()?);
        let differ = ((w[0] ^ self.words[0]) & self.masks[0])
            | ((w[1] ^ self.words[1]) & self.masks[1])
            | ((w[2] ^ self.words[2]) & self.masks[2])
            | ((w[3] ^ self.words[3]) & self.masks[3]);
        if differ != 0 {
            return None;
        }
        Some((self.dtype, r.get(self.len..)?))
    }
}

/// 32 bytes as four little-endian words.
#[inline(always)]
fn words_of(bytes: &[u8; 32]) -> [u64; 4] {
    let (words, _) = bytes.as_chunks::<8>();
    [0, 1, 2, 3].map(|i| words.get(i).map_or(0, |w| u64::from_le_bytes(*w)))
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

    /// The text of a plain string (no escapes, no control characters)
    /// whose text starts at `start`, just after its opening quote; the
    /// closing quote at `start + text.len()`.
    #[inline(always)]
    fn string_at(&self, start: usize) -> Option<&'a str> {
        let len = string_len(self.bytes.get(start..)?);
        // serde_json refuses a raw control character in a string; a
        // backslash starts an escape, left to [`by_serde`].
        if self.bytes.get(start + len) != Some(&b'"') {
            return None;
        }
        self.str_at(start, len)
    }

    /// The `len` bytes at `start`, the text of a string, as `str`: `None`
    /// when they are not UTF-8 (the crate's error is [`by_serde`]'s).
    #[inline(always)]
    fn str_at(&self, start: usize, len: usize) -> Option<&'a str> {
        // The text is UTF-8 and a quote is never inside a character.
        #[cfg(feature = "small-code")]
        return self.text.get(start..start + len);
        #[cfg(not(feature = "small-code"))]
        return std::str::from_utf8(self.bytes.get(start..start + len)?).ok();
    }

    /// A plain string (see [`Json::string_at`]), borrowed.
    fn string(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        let text = self.string_at(self.at)?;
        self.at += text.len() + 1;
        Some(text)
    }

    /// A key of the header object (a plain string), and whether it sorts
    /// after `last`, the last tensor name (start and length).
    ///
    /// The names of a model share long prefixes, and the bytes it shares
    /// with `last` need no scan for the closing quote (`last` has none):
    /// first the two are compared eight bytes at a time, then the rest is
    /// scanned. The place where they first differ also says which sorts
    /// first.
    #[inline(always)]
    fn key(&mut self, last: Option<(usize, usize)>) -> Option<Key<'a>> {
        self.expect(b'"')?;
        let key = self.name_at(self.at, last)?;
        self.at += key.text.len() + 1;
        Some(key)
    }

    /// The key whose text starts at `start` (see [`Json::key`]); the
    /// cursor does not move.
    #[inline(always)]
    fn name_at(&self, start: usize, last: Option<(usize, usize)>) -> Option<Key<'a>> {
        let rest = self.bytes.get(start..)?;
        let last = match last {
            Some((at, len)) => Some(self.bytes.get(at..at + len)?),
            None => None,
        };
        let same = same_words(rest, last.unwrap_or_default());
        let len = same + string_len(rest.get(same..)?);
        // serde_json refuses a raw control character in a string; a
        // backslash starts an escape, left to [`by_serde`].
        if rest.get(len) != Some(&b'"') {
            return None;
        }
        let text = self.str_at(start, len)?;
        let after_last = match last {
            None => true,
            // They differ at `same`, inside `last`: the name is longer,
            // with a greater byte there.
            Some(last) if same < last.len() & !7 => len > same && rest.get(same) > last.get(same),
            Some(last) => text.as_bytes().get(same..) > last.get(same..),
        };
        Some(Key {
            text,
            start,
            after_last,
        })
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

    /// An unsigned integer (see [`number`]) after any white space.
    fn size(&mut self) -> Option<u64> {
        self.skip_space();
        let (value, len) = number(self.bytes.get(self.at..)?)?;
        self.at += len;
        Some(value)
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

    /// The start of a compact tensor object up to its first dimension,
    /// `{"dtype":"F32","shape":[`, at the start of `r`: its dtype and the
    /// bytes after it. A dtype name of up to 8 bytes is read as one word; a
    /// longer one goes to [`Json::any_tensor`].
    #[inline(always)]
    fn tensor_head<'r>(&mut self, r: &'r [u8]) -> Option<(Dtype, &'r [u8])> {
        if let Some(found) = self.head.as_ref().and_then(|h| h.matches(r)) {
            return Some(found);
        }
        let after = r.strip_prefix(b"{\"dtype\":\"")?;
        let w = word_of(after);
        let quote = (w ^ (ONES * u64::from(b'"'))).wrapping_sub(ONES)
            & !(w ^ (ONES * u64::from(b'"')))
            & HIGH;
        let len = first_byte(quote);
        if len == 8 {
            return None;
        }
        let dtype = dtype_of_word(w & mask(len))?;
        let after = after.get(len + 1..)?.strip_prefix(b",\"shape\":[")?;
        if let Some(head) = TensorHead::of(r, r.len() - after.len(), dtype) {
            self.head = Some(head);
        }
        Some((dtype, after))
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
        let (dtype, mut r) = self.tensor_head(r)?;
        if let Some(rest) = r.strip_prefix(b"]") {
            r = rest;
        } else {
            loop {
                let (dim, len) = digits(r)?;
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
        let (s, len) = digits(r)?;
        let r = r.get(len..)?.strip_prefix(b",")?;
        let (e, len) = digits(r)?;
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

    /// Tensor entries exactly as the writers write them, one after
    /// another: `"name":{"dtype":...}` and the `,` after each, in one loop.
    /// It stops before an entry laid out any other way (or `__metadata__`),
    /// and after one that no `,` follows: then `true`.
    #[cfg(not(feature = "small-code"))]
    #[inline(never)]
    fn writers_entries(&mut self, header: &mut SafetensorsHeader<'a>, order: &mut InOrder) -> bool {
        let mut run = WritersRun {
            last_ascii: order
                .last_name
                .and_then(|(at, len)| self.bytes.get(at..at + len))
                .is_none_or(<[u8]>::is_ascii),
            head: None,
            last_text: [0; 72],
            last_len: 0,
            fixed_len: 0,
            facts: EntryFacts {
                dtype: Dtype::BOOL,
                dims: (0, 0),
                bytes: None,
            },
            start: 0,
        };
        loop {
            let at = self.at;
            let dims_len = header.dims.len();
            let Some((t, parts)) = self.writers_entry(&mut run, order, &mut header.dims) else {
                self.at = at;
                header.dims.truncate(dims_len);
                return false;
            };
            // An entry of the last one's text has its dtype and rank.
            if parts {
                header.note(t.dtype, t.dims.1);
            }
            header.tensors.push(t);
            if self.bytes.get(self.at) != Some(&b',') {
                return true;
            }
            self.at += 1;
        }
    }

    /// One entry of [`Json::writers_entries`], its facts added to `order`,
    /// and whether it was read by [`Json::entry_parts`]; `None` when it is laid out any other way (the cursor, `order` and
    /// `run` may have moved; `dims` may have grown).
    #[cfg(not(feature = "small-code"))]
    #[inline(always)]
    fn writers_entry(
        &mut self,
        run: &mut WritersRun,
        order: &mut InOrder,
        dims: &mut Vec<u64>,
    ) -> Option<(HeaderTensor<'a>, bool)> {
        let bytes = self.bytes;
        if bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let rest = bytes.get(start..)?;
        let last = match order.last_name {
            Some((at, len)) => bytes.get(at..at + len)?,
            None => &[],
        };
        // The bytes shared with the last name hold no quote, backslash or
        // control character: the scan for the closing quote starts where
        // the two differ, and so does the compare that sorts them.
        let same = same_words(rest, last);
        let (name_len, high) = string_end(rest, same);
        let name_bytes = rest.get(..name_len)?;
        let ascii = run.last_ascii && high & HIGH == 0;
        let name = if ascii {
            // SAFETY: every byte of `name_bytes` is below 0x80, so they
            // are UTF-8. Those before `same` are the last name's, which
            // were all below 0x80 (`run.last_ascii`); those from `same` on
            // lie in the words OR-ed into `high`, whose high bits are
            // clear.
            #[allow(unsafe_code)]
            unsafe {
                std::str::from_utf8_unchecked(name_bytes)
            }
        } else {
            std::str::from_utf8(name_bytes).ok()?
        };
        run.last_ascii = ascii || name_bytes.is_ascii();
        if name_len == 12 && name == "__metadata__" {
            return None;
        }
        // Name order: the first difference is at `same` or within the 8
        // bytes from it (both names compared there as big-endian words,
        // zero past their ends: no name holds a zero byte).
        let after_last = match order.last_name {
            None => true,
            // They differ at `same`, inside both.
            Some((_, last_len)) if same < name_len.min(last_len) => rest.get(same) > last.get(same),
            Some((_, last_len)) => {
                let here = word_of(rest.get(same..)?) & mask(name_len - same);
                let there = word_of(last.get(same..)?) & mask(last_len - same);
                here.swap_bytes() > there.swap_bytes()
            }
        };
        // From the closing quote to the end's first digit: mostly the
        // last entry's text, with the last end as the start.
        let r = rest.get(name_len..)?;
        let begin = order.end;
        let last_len = run.last_len;
        let (facts, start_ok, fixed_len, after, parts) = if last_len != 0
            && r.get(..last_len) == run.last_text.get(..last_len)
        {
            (run.facts, true, run.fixed_len, r.get(last_len..)?, false)
        } else {
            let (facts, s, fixed_len, after) = Self::entry_parts(run, r, dims)?;
            // The text up to the start, for the next entry.
            run.last_len = 0;
            if let (Some(to), Some(from)) = (run.last_text.get_mut(..fixed_len), r.get(..fixed_len))
            {
                to.copy_from_slice(from);
            }
            run.facts = facts;
            run.fixed_len = fixed_len;
            (facts, s == begin, fixed_len, after, true)
        };
        let (end, len) = digits(after)?;
        let r = after.get(len..)?.strip_prefix(b"]}")?;
        // This end and a comma after the fixed text: the next entry's start
        // when its data follows.
        run.last_len = 0;
        if len < 8 {
            if let Some(to) = run.last_text.get_mut(fixed_len..fixed_len + 8) {
                let word = (word_of(after) & mask(len)) | (u64::from(b',') << (8 * len));
                to.copy_from_slice(&word.to_le_bytes());
                run.last_len = fixed_len + len + 1;
            }
        }
        order.data &= start_ok && end >= begin && facts.bytes == Some(end - begin);
        order.names &= after_last;
        order.end = end;
        order.last_name = Some((start, name_len));
        self.at = bytes.len() - r.len();
        // The start: `begin` when `start_ok`, else the data is out of
        // order and the start was read by `entry_parts`.
        let s = if start_ok { begin } else { run.start };
        let t = HeaderTensor {
            name: Cow::Borrowed(name),
            dtype: facts.dtype,
            dims: facts.dims,
            data_offsets: (s, end),
        };
        Some((t, parts))
    }

    /// The parts of an entry after its name, from the closing quote `r`
    /// on: `":{"dtype":"F32","shape":[...],"data_offsets":[` and the start
    /// and comma after it (the start kept in `run.start`). Its facts, the
    /// start, the length of the text before the start, and the bytes
    /// after the comma.
    #[cfg(not(feature = "small-code"))]
    #[inline(never)]
    fn entry_parts<'r>(
        run: &mut WritersRun,
        r: &'r [u8],
        dims: &mut Vec<u64>,
    ) -> Option<(EntryFacts, u64, usize, &'r [u8])> {
        let whole = r;
        // `":{"dtype":"F32","shape":[`, mostly the last entry's.
        let (dtype, bitsize, mut r) = match run.head.as_ref().and_then(|h| h.matches(r)) {
            Some((dtype, after)) => (dtype, dtype.bitsize() as u64, after),
            None => {
                let after = r.strip_prefix(b"\":{\"dtype\":\"")?;
                let w = word_of(after);
                let quote = first_byte(
                    (w ^ (ONES * u64::from(b'"'))).wrapping_sub(ONES)
                        & !(w ^ (ONES * u64::from(b'"')))
                        & HIGH,
                );
                if quote == 8 {
                    return None;
                }
                let dtype = dtype_of_word(w & mask(quote))?;
                let after = after.get(quote + 1..)?.strip_prefix(b",\"shape\":[")?;
                run.head = TensorHead::of(r, r.len() - after.len(), dtype);
                (dtype, dtype.bitsize() as u64, after)
            }
        };
        // The dims, and the elements they hold (`None` past 64 bits).
        let at = dims.len();
        let mut elements = Some(1u64);
        if let [b']', rest @ ..] = r {
            r = rest;
        } else {
            loop {
                let (d, len) = digits(r)?;
                dims.push(d);
                elements = elements.and_then(|n| n.checked_mul(d));
                match r.get(len..)? {
                    [b']', rest @ ..] => {
                        r = rest;
                        break;
                    }
                    [b',', rest @ ..] => r = rest,
                    _ => return None,
                }
            }
        }
        let r = r.strip_prefix(b",\"data_offsets\":[")?;
        let fixed_len = whole.len() - r.len();
        let (s, len) = digits(r)?;
        let r = r.get(len..)?.strip_prefix(b",")?;
        run.start = s;
        let facts = EntryFacts {
            dtype,
            // The dims' count is below the header's length, below 2^32.
            dims: (at as u32, (dims.len() - at) as u32),
            bytes: elements
                .and_then(|n| n.checked_mul(bitsize))
                .filter(|bits| bits % 8 == 0)
                .map(|bits| bits / 8),
        };
        Some((facts, s, fixed_len, r))
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

/// The low `n` bytes of a word set (`n` at most 8).
#[inline(always)]
const fn mask(n: usize) -> u64 {
    if n >= 8 {
        u64::MAX
    } else {
        (1 << (8 * n)) - 1
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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`number`] one digit at a time, as serde_json reads a size.
    fn number_by_digit(bytes: &[u8]) -> Option<(u64, usize)> {
        let len = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        let digits = bytes.get(..len)?;
        let plain = len > 0 && len <= 19 && !(len > 1 && digits[0] == b'0');
        let next = bytes.get(len);
        if !plain || matches!(next, Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let value = std::str::from_utf8(digits).ok()?.parse().ok()?;
        Some((value, len))
    }

    /// A file of `entries` (name, dtype, shape text, start, end) in the
    /// order given, zero data up to the largest end.
    #[cfg(not(feature = "small-code"))]
    fn file_of(entries: &[(&str, &str, &str, u64, u64)]) -> Vec<u8> {
        let texts: Vec<String> = entries
            .iter()
            .map(|(name, dtype, shape, s, e)| {
                format!("\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{shape}],\"data_offsets\":[{s},{e}]}}")
            })
            .collect();
        let json = format!("{{{}}}", texts.join(","));
        let data = entries.iter().map(|e| e.4).max().unwrap_or(0);
        let mut file = (json.len() as u64).to_le_bytes().to_vec();
        file.extend(json.as_bytes());
        file.resize(file.len() + data as usize, 0);
        file
    }

    #[cfg(not(feature = "small-code"))]
    #[test]
    fn a_header_tallies_the_dtypes_ranks_and_data_of_its_tensors() {
        let files = [
            // The writers' order, one entry's text repeated, then others.
            file_of(&[
                ("a", "F32", "4", 0, 16),
                ("b", "F32", "4", 16, 32),
                ("c", "BF16", "2,2", 32, 40),
                ("d", "BF16", "2,2", 40, 48),
                ("e", "U8", "1,1,1,1,1,1,1,1,1", 48, 49),
                ("f", "F32", "", 49, 53),
            ]),
            // Names out of order, data out of order: the second walk.
            file_of(&[("z", "I64", "1", 8, 16), ("y", "F16", "2,2", 0, 8)]),
            // A dtype Kiln lacks, a tensor of no bytes.
            file_of(&[("m", "F8_E5M2FNUZ", "3", 0, 3), ("n", "F64", "0", 3, 3)]),
            file_of(&[]),
        ];
        for file in &files {
            let len = file.len() as u64;
            let fast = fast_reader(file, len).unwrap();
            let serde = serde_reader(file, len).unwrap();
            for header in [&fast, &serde] {
                let mut dtypes: Vec<Dtype> = header.tensors.iter().map(|t| t.dtype).collect();
                dtypes.sort();
                dtypes.dedup();
                let mut tallied: Vec<Dtype> = header.dtypes().collect();
                tallied.sort();
                assert_eq!(tallied, dtypes);
                let rank = header.tensors.iter().map(|t| header.shape(t).len()).max();
                assert_eq!(header.max_rank(), rank.unwrap_or(0));
                let bytes: u64 = header
                    .tensors
                    .iter()
                    .map(|t| t.data_offsets.1 - t.data_offsets.0)
                    .sum();
                assert_eq!(header.data_len(), bytes);
                assert_eq!(header.data_len(), len - header.data_start() as u64);
            }
        }
    }

    #[test]
    fn numbers_read_as_one_digit_at_a_time() {
        let mut texts: Vec<String> = Vec::new();
        for len in 0..=22 {
            for lead in ["1", "9", "0"] {
                let digits: String = lead
                    .chars()
                    .chain("8765432109876543210987".chars())
                    .take(len)
                    .collect();
                for after in ["", ",", "]", ".5", "e3", "E", "x", "\u{e9}", "\0", "/", ":"] {
                    texts.push(format!("{digits}{after}"));
                }
            }
        }
        texts.extend(["18446744073709551615", "9999999999999999999", "10000000"].map(String::from));
        for text in &texts {
            // Alone (the end of the bytes within a word) and with more
            // bytes after it.
            for bytes in [text.clone(), format!("{text}        ")] {
                assert_eq!(
                    number(bytes.as_bytes()),
                    number_by_digit(bytes.as_bytes()),
                    "{bytes:?}"
                );
            }
        }
    }

    #[test]
    fn string_lengths_stop_where_a_byte_scan_stops() {
        let stops = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
        let alphabet = [
            b'a', b'"', b'\\', 0x00, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xc3, 0xff,
        ];
        for len in 0..=20 {
            for &stop in &alphabet {
                for at in 0..=len {
                    let mut bytes = vec![b'x'; len];
                    if let Some(b) = bytes.get_mut(at) {
                        *b = stop;
                    }
                    let expected = bytes.iter().position(|&b| stops(b)).unwrap_or(len);
                    assert_eq!(string_len(&bytes), expected, "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn shared_words_end_where_the_names_first_differ() {
        let names = [
            "",
            "a",
            "abcdefg",
            "abcdefgh",
            "abcdefgi",
            "abcdefghabcdefgh",
            "abcdefghabcdefgx",
        ];
        for a in names {
            for b in names {
                let same = same_words(a.as_bytes(), b.as_bytes());
                let first_differ = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
                // The first difference when it is in whole words of both,
                // else all their whole words.
                let whole = 8 * (a.len() / 8).min(b.len() / 8);
                assert_eq!(same, first_differ.min(whole), "{a:?} {b:?}");
            }
        }
    }
}
