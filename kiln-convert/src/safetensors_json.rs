//! The JSON header of a safetensors file, written byte for byte as the
//! safetensors crate's `Metadata` serializes it through `serde_json`.
//!
//! Going through the crate's `Metadata` costs a `String` and a shape
//! `Vec` per tensor, a hash map of the names and serde's generic
//! machinery, most of a `kiln convert` back to safetensors for a model of
//! many small tensors. This writes
//! the same text straight into the output, in two passes over the
//! tensors: [`Measure`] finds the header's length (which comes first in
//! the file) and makes the checks, [`Writer`] writes it piece by piece, so
//! no buffer the size of the header is ever made. What is not plain text
//! is still done by `serde_json` itself: the metadata map, a name that
//! needs an escape, and each dtype's name (once per dtype), so the bytes
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

/// The most room one entry takes beyond its name's: eight dimensions and
/// two offsets of at most 20 digits, the dtype, the punctuation, and the
/// slack the fixed-size copies of [`Cursor`] write past what they keep.
pub(crate) const ENTRY_ROOM: usize = 320;

/// The text between a name and its first dimension for one dtype,
/// `":{"dtype":"F32","shape":[` (the name's closing quote included), in a
/// fixed-size array so that it is copied in one move; and the dtype's bit
/// width, for the checks.
struct Middle {
    dtype: Dtype,
    text: [u8; MIDDLE_LEN],
    len: usize,
    bits: usize,
}

/// Room for the longest middle (`":{"dtype":"F8_E4M3","shape":[`, 30 bytes).
const MIDDLE_LEN: usize = 48;

/// The text of a header that is the same for many entries, made once:
/// the opening brace with the `__metadata__` member, and each dtype's
/// [`Middle`].
pub(crate) struct HeaderText {
    /// `{`, then `"__metadata__":{...}` when there is metadata.
    open: Vec<u8>,
    /// Whether `open` holds a member (so the first entry takes a comma).
    has_metadata: bool,
    /// Per dtype met so far; there are a handful, so a scan finds one.
    middles: Vec<Middle>,
}

/// What follows the last dimension, up to the first offset.
const AFTER_SHAPE: &[u8; 18] = b"],\"data_offsets\":[";
/// What follows the last offset.
const CLOSE: &[u8; 2] = b"]}";

impl HeaderText {
    /// The text for a header with `metadata`.
    pub(crate) fn new(metadata: Option<&HashMap<String, String>>) -> Result<HeaderText, String> {
        let mut open = b"{".to_vec();
        if let Some(metadata) = metadata {
            open.extend_from_slice(b"\"__metadata__\":");
            // In byte order: the crate writes its HashMap's order, which
            // is random per process, so any order is one it could write,
            // and this one makes the same file on every run.
            let sorted: BTreeMap<&str, &str> = metadata
                .iter()
                .map(|(key, value)| (key.as_str(), value.as_str()))
                .collect();
            serde_json::to_writer(&mut open, &sorted).map_err(|e| e.to_string())?;
        }
        Ok(HeaderText {
            open,
            has_metadata: metadata.is_some(),
            middles: Vec::new(),
        })
    }

    /// The length of the opening brace and the metadata.
    pub(crate) fn open_len(&self) -> usize {
        self.open.len()
    }

    /// The middle of `dtype`.
    #[inline]
    fn middle(&mut self, dtype: Dtype) -> Result<&Middle, String> {
        let at = match self.middles.iter().position(|m| m.dtype == dtype) {
            Some(at) => at,
            None => self.new_middle(dtype)?,
        };
        self.middles
            .get(at)
            .ok_or_else(|| "no text for a dtype".to_string())
    }

    /// Makes the middle of `dtype`; returns where it is kept.
    #[cold]
    fn new_middle(&mut self, dtype: Dtype) -> Result<usize, String> {
        let mut text = b"\":{\"dtype\":".to_vec();
        serde_json::to_writer(&mut text, &dtype).map_err(|e| e.to_string())?;
        text.extend_from_slice(b",\"shape\":[");
        let mut middle = Middle {
            dtype,
            text: [0; MIDDLE_LEN],
            len: text.len(),
            bits: dtype.bitsize(),
        };
        middle
            .text
            .get_mut(..text.len())
            .ok_or_else(|| format!("dtype {dtype} has a name too long for a header"))?
            .copy_from_slice(&text);
        self.middles.push(middle);
        Ok(self.middles.len() - 1)
    }
}

/// The length of a header's JSON, entry by entry in the header's order,
/// with the checks `Metadata::new` makes: a header that measures is one
/// [`Writer`] can write, `len` bytes of it.
pub(crate) struct Measure {
    len: usize,
    offset: usize,
    entries: usize,
    /// The last entry's dtype, shape and data length, which passed the
    /// checks, and the length of its text from the name's closing quote to
    /// the first offset: the next entry of the same run needs neither.
    run: (RunKey, usize),
    run_len: usize,
    /// The last entry's end, and its digits: the next one's start.
    end_digits: usize,
}

impl Measure {
    /// Nothing measured yet: the braces and the metadata.
    pub(crate) fn new(text: &HeaderText) -> Measure {
        Measure {
            len: text.open.len() + 1,
            offset: 0,
            entries: 0,
            run: (RunKey::NONE, 0),
            run_len: 0,
            end_digits: 1,
        }
    }

    /// Adds the next entry, after the ones added before it. `raw` says
    /// that its name needs no escape (see [`needs_escape`]). An entry the
    /// crate would refuse gives the crate's error, and the measure must
    /// not be used after that.
    #[inline(always)] // one pass's whole loop body: kept in its registers
    pub(crate) fn add<S: AsRef<[u64]>>(
        &mut self,
        text: &mut HeaderText,
        entry: &Entry<'_, S>,
        raw: bool,
    ) -> Result<(), String> {
        let comma = usize::from(self.entries > 0 || text.has_metadata);
        let shape = entry.shape.as_ref();
        if !(self.run.1 == entry.data_len && self.run.0.is(entry.dtype, shape)) {
            let middle = text.middle(entry.dtype)?;
            check_extent(shape, middle.bits, entry.data_len)
                .map_err(|refusal| refusal.error().to_string())?;
            let mut dims = shape.len().saturating_sub(1);
            for &d in shape {
                dims += digits(d);
            }
            self.run_len = (middle.len - 1) + dims + AFTER_SHAPE.len();
            self.run = (
                RunKey::of(entry.dtype, shape).unwrap_or(RunKey::NONE),
                entry.data_len,
            );
        }
        self.offset = self
            .offset
            .checked_add(entry.data_len)
            .ok_or_else(|| SafeTensorError::ValidationOverflow.to_string())?;
        let name = if raw {
            entry.name.len() + 2
        } else {
            escaped_len(entry.name)?
        };
        let end_digits = digits(self.offset as u64);
        self.len += comma + name + self.run_len + self.end_digits + 1 + end_digits + CLOSE.len();
        self.end_digits = end_digits;
        self.entries += 1;
        Ok(())
    }

    /// The JSON's length (without the 8-byte length or the padding).
    pub(crate) fn json_len(&self) -> usize {
        self.len
    }
}

/// Writes a header's JSON that a [`Measure`] measured, entry by entry in
/// the same order, through [`Cursor`]s the caller gives each piece.
pub(crate) struct Writer {
    offset: usize,
    first: bool,
    /// The digits of the last entry's end, which are the next one's start.
    last_end: Digits,
    /// The last entry's text from its name's closing quote to its first
    /// offset: a model's tensors come in long runs of one dtype and shape.
    run: Run,
}

/// A dtype and a shape, for the text between a name and its offsets.
#[derive(Copy, Clone, PartialEq, Eq)]
struct RunKey {
    dtype: Option<Dtype>,
    rank: usize,
    dims: [u64; 8],
}

impl RunKey {
    const NONE: RunKey = RunKey {
        dtype: None,
        rank: 0,
        dims: [0; 8],
    };

    #[inline]
    fn is(&self, dtype: Dtype, shape: &[u64]) -> bool {
        self.dtype == Some(dtype)
            && self.rank == shape.len()
            && shape.iter().zip(&self.dims).all(|(a, b)| a == b)
    }

    /// The key of `dtype` and `shape`; `None` past eight dimensions.
    fn of(dtype: Dtype, shape: &[u64]) -> Option<RunKey> {
        let mut dims = [0; 8];
        dims.get_mut(..shape.len())?.copy_from_slice(shape);
        Some(RunKey {
            dtype: Some(dtype),
            rank: shape.len(),
            dims,
        })
    }
}

/// The text from a name's closing quote to the first offset for one
/// [`RunKey`], when it fits in [`RUN_LEN`] bytes.
struct Run {
    key: RunKey,
    text: [u8; RUN_LEN],
    len: usize,
}

/// Room for a run's text: a dtype and a few dimensions.
const RUN_LEN: usize = 64;

impl Writer {
    /// Writes the opening brace and the metadata (the cursor needs
    /// [`HeaderText::open_len`] bytes of room).
    pub(crate) fn begin(text: &HeaderText, out: &mut Cursor<'_>) -> Writer {
        out.put(&text.open);
        Writer {
            offset: 0,
            first: !text.has_metadata,
            last_end: Digits::of(0),
            run: Run {
                key: RunKey::NONE,
                text: [0; RUN_LEN],
                len: 0,
            },
        }
    }

    /// Writes the next entry, which [`Measure::add`] took (with the same
    /// `raw`) in this place. The cursor needs [`ENTRY_ROOM`] bytes of room
    /// beyond the name's (six times the name's for one with escapes).
    #[inline(always)] // as Measure::add
    pub(crate) fn entry<S: AsRef<[u64]>>(
        &mut self,
        text: &mut HeaderText,
        out: &mut Cursor<'_>,
        entry: &Entry<'_, S>,
        raw: bool,
    ) -> Result<(), String> {
        if !self.first {
            out.byte(b',');
        }
        self.first = false;
        if raw {
            out.byte(b'"');
            out.put(entry.name.as_bytes());
        } else {
            // serde_json writes the quotes; the middle adds the closing one.
            let quoted = escaped(entry.name)?;
            out.put(
                quoted
                    .get(..quoted.len().saturating_sub(1))
                    .unwrap_or_default(),
            );
        }
        let shape = entry.shape.as_ref();
        if !self.run.key.is(entry.dtype, shape) {
            let mut run = [0u8; ENTRY_ROOM];
            let mut at = Cursor::new(&mut run);
            shape_text(text.middle(entry.dtype)?, shape, &mut at);
            let len = at.len();
            match (RunKey::of(entry.dtype, shape), run.get(..RUN_LEN)) {
                (Some(key), Some(kept)) if len <= RUN_LEN => {
                    self.run.text.copy_from_slice(kept);
                    self.run.key = key;
                    self.run.len = len;
                }
                _ => {
                    // Too long to keep: written as it is, and the next
                    // entry makes its own.
                    self.run.key = RunKey::NONE;
                    out.put(run.get(..len).unwrap_or_default());
                }
            }
        }
        if self.run.key.dtype.is_some() {
            out.put_fixed(&self.run.text, self.run.len);
        }
        out.digits(&self.last_end);
        out.byte(b',');
        // Measure found that the offsets do not overflow.
        self.offset = self.offset.saturating_add(entry.data_len);
        self.last_end = Digits::of(self.offset as u64);
        out.digits(&self.last_end);
        out.put_fixed(CLOSE, CLOSE.len());
        Ok(())
    }

    /// Writes the closing brace.
    pub(crate) fn end(self, out: &mut Cursor<'_>) {
        out.byte(b'}');
    }
}

/// Writes the text from a name's closing quote to the first offset: the
/// middle, the dimensions, what follows them.
fn shape_text(middle: &Middle, shape: &[u64], out: &mut Cursor<'_>) {
    out.put_fixed(&middle.text, middle.len);
    let mut dims = shape.iter();
    if let Some(&d) = dims.next() {
        out.digits(&Digits::of(d));
        for &d in dims {
            out.byte(b',');
            out.digits(&Digits::of(d));
        }
    }
    out.put_fixed(AFTER_SHAPE, AFTER_SHAPE.len());
}

/// Where the next bytes go in a buffer that the caller made room in. A
/// write that does not fit is dropped and noted ([`Cursor::overflowed`]),
/// never a panic: the room the callers make is an upper bound, and the
/// length they check at the end would tell.
pub(crate) struct Cursor<'b> {
    buf: &'b mut [u8],
    at: usize,
    overflowed: bool,
}

impl<'b> Cursor<'b> {
    /// A cursor at the start of `buf`.
    pub(crate) fn new(buf: &'b mut [u8]) -> Cursor<'b> {
        Cursor {
            buf,
            at: 0,
            overflowed: false,
        }
    }

    /// How many bytes were written.
    pub(crate) fn len(&self) -> usize {
        self.at
    }

    /// Whether a write did not fit.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    #[inline]
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        match self.buf.get_mut(self.at..self.at + bytes.len()) {
            Some(to) => {
                to.copy_from_slice(bytes);
                self.at += bytes.len();
            }
            None => self.overflowed = true,
        }
    }

    #[inline]
    fn byte(&mut self, b: u8) {
        match self.buf.get_mut(self.at) {
            Some(to) => {
                *to = b;
                self.at += 1;
            }
            None => self.overflowed = true,
        }
    }

    /// Writes the first `len` of `bytes`: all `N` are copied (one move
    /// of a constant size, not a call), and those past `len` are written
    /// over next.
    #[inline]
    fn put_fixed<const N: usize>(&mut self, bytes: &[u8; N], len: usize) {
        match self
            .buf
            .get_mut(self.at..)
            .and_then(<[u8]>::first_chunk_mut::<N>)
        {
            Some(to) if len <= N => {
                *to = *bytes;
                self.at += len;
            }
            _ => self.put(bytes.get(..len).unwrap_or(bytes)),
        }
    }

    #[inline]
    fn digits(&mut self, digits: &Digits) {
        self.put_fixed(&digits.bytes, digits.len);
    }
}

/// Appends the header JSON (without the 8-byte length or the padding) of
/// `entries`, laid end to end in this order from offset 0, after
/// `metadata` when there is one, to `json`: a [`Measure`] then a
/// [`Writer`] over them, as the converter uses them. An entry that could
/// not be made stops the header with its error.
#[cfg(test)]
pub(crate) fn header_json<S: AsRef<[u64]>>(
    json: &mut Vec<u8>,
    metadata: Option<&HashMap<String, String>>,
    entries: &[Entry<'_, S>],
) -> Result<(), String> {
    let mut text = HeaderText::new(metadata)?;
    let mut measure = Measure::new(&text);
    for entry in entries {
        measure.add(&mut text, entry, !needs_escape(entry.name.as_bytes()))?;
    }
    let at = json.len();
    let room: usize = entries
        .iter()
        .map(|e| e.name.len() * 6 + ENTRY_ROOM)
        .sum::<usize>()
        + text.open_len()
        + 1;
    json.resize(at + room, 0);
    let mut out = Cursor::new(json.get_mut(at..).unwrap_or_default());
    let mut writer = Writer::begin(&text, &mut out);
    for entry in entries {
        writer.entry(
            &mut text,
            &mut out,
            entry,
            !needs_escape(entry.name.as_bytes()),
        )?;
    }
    writer.end(&mut out);
    assert!(!out.overflowed());
    let len = out.len();
    assert_eq!(len, measure.json_len(), "the measure is exact");
    json.truncate(at + len);
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

/// The check `Metadata::new` makes of one tensor: its elements of `bits`
/// bits fill a whole number of bytes, exactly `data_len` of them.
#[inline]
fn check_extent(shape: &[u64], bits: usize, data_len: usize) -> Result<(), Refusal> {
    let mut elements = 1usize;
    for &d in shape {
        elements = usize::try_from(d)
            .ok()
            .and_then(|d| elements.checked_mul(d))
            .ok_or(Refusal::Overflow)?;
    }
    let bits = elements.checked_mul(bits).ok_or(Refusal::Overflow)?;
    if bits % 8 != 0 {
        return Err(Refusal::Misaligned);
    }
    if bits / 8 != data_len {
        return Err(Refusal::Length);
    }
    Ok(())
}

/// Whether serde_json escapes any byte of `s`: `"`, `\` and the control
/// characters below U+0020. No early exit: a fold over every byte is a
/// few vector instructions per sixteen bytes (a whole name heap goes
/// through it), which a search that stops at the first hit is not.
pub(crate) fn needs_escape(s: &[u8]) -> bool {
    let escaped = |b: u8| u8::from(b < 0x20) | u8::from(b == b'"') | u8::from(b == b'\\');
    s.iter().fold(0, |found, &b| found | escaped(b)) != 0
}

/// `s` as serde_json writes it, quotes included. (Into a buffer of its
/// own rather than through a [`Cursor`]: a cursor whose address is never
/// taken stays in registers.)
#[cold]
fn escaped(s: &str) -> Result<Vec<u8>, String> {
    serde_json::to_vec(s).map_err(|e| e.to_string())
}

/// The length of `s` as serde_json writes it, quotes included.
fn escaped_len(s: &str) -> Result<usize, String> {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, s).map_err(|e| e.to_string())?;
    Ok(count.0)
}

/// How many decimal digits `n` has: from its bit length (times log10 2,
/// as 1233 / 4096), one more when it reaches the next power of ten.
#[inline]
fn digits(n: u64) -> usize {
    const POWERS: [u64; 20] = {
        let mut powers = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            powers[i] = powers[i - 1] * 10;
            i += 1;
        }
        powers
    };
    // (`n | 1`: zero has one digit, as one does.)
    let bits = 64 - (n | 1).leading_zeros() as usize;
    let guess = (bits * 1233) >> 12;
    guess + usize::from(POWERS.get(guess).is_some_and(|&p| (n | 1) >= p))
}

/// Two decimal digits for each of 0 through 99.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// A number in decimal, as serde_json (itoa) writes an integer: its
/// digits from the first byte on, made two at a time from the last,
/// without the `fmt` machinery.
#[derive(Copy, Clone)]
struct Digits {
    bytes: [u8; 20],
    len: usize,
}

impl Digits {
    #[inline]
    fn of(mut n: u64) -> Digits {
        let len = digits(n);
        let mut bytes = [b'0'; 20];
        let mut end = len;
        let pair = |bytes: &mut [u8; 20], end: usize, p: u64| {
            let p = p as usize * 2;
            if let (Some(to), Some(digits)) = (
                end.checked_sub(2)
                    .and_then(|at| bytes.get_mut(at..))
                    .and_then(<[u8]>::first_chunk_mut::<2>),
                PAIRS.get(p..).and_then(<[u8]>::first_chunk::<2>),
            ) {
                *to = *digits;
            }
        };
        while n >= 100 {
            pair(&mut bytes, end, n % 100);
            end = end.wrapping_sub(2);
            n /= 100;
        }
        if n >= 10 {
            pair(&mut bytes, end, n);
        } else if let Some(to) = end.checked_sub(1).and_then(|at| bytes.get_mut(at)) {
            *to = b'0' + n as u8;
        }
        Digits { bytes, len }
    }

    #[cfg(test)]
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
        let entries: Vec<_> = tensors
            .iter()
            .map(|(name, dtype, shape, len)| Entry {
                name,
                dtype: *dtype,
                shape: shape.as_slice(),
                data_len: *len,
            })
            .collect();
        header_json(&mut json, metadata, &entries)?;
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

    /// Runs of one dtype and shape (whose text is kept from entry to
    /// entry), broken by others, a shape too long to keep, escaped names
    /// inside a run, and offsets that cross powers of ten.
    #[test]
    fn runs_of_one_dtype_and_shape_are_written_as_the_crate_writes_them() {
        let long = vec![1, 1, 1, 1, 1, 1, 7, 12_345_678_901_234];
        let runs: [(Dtype, Vec<u64>, usize); 7] = [
            (Dtype::F32, vec![4], 40),
            (Dtype::F32, vec![2, 3], 3),
            (Dtype::BF16, vec![2, 3], 5),
            (Dtype::F32, vec![4], 1),
            (Dtype::F32, long.clone(), 2),
            (Dtype::F32, long, 1),
            (Dtype::U8, vec![], 30),
        ];
        let mut names = vec![];
        let mut tensors = vec![];
        for (dtype, shape, count) in runs {
            for _ in 0..count {
                let i = names.len();
                names.push(if i % 17 == 5 {
                    format!("quote\"{i}")
                } else {
                    format!("model.layers.{i}.weight")
                });
                let elements: u64 = shape.iter().product();
                let len = (elements as usize * dtype.bitsize()).div_ceil(8);
                tensors.push((dtype, shape.clone(), len));
            }
        }
        let tensors: Vec<_> = names
            .iter()
            .zip(tensors)
            .map(|(name, (dtype, shape, len))| (name.as_str(), dtype, shape, len))
            .collect();
        assert_eq!(
            String::from_utf8(our_json(None, &tensors).unwrap()).unwrap(),
            String::from_utf8(crate_json(None, &tensors).unwrap()).unwrap()
        );
        // A refusal inside a run: the same shape with a payload one byte
        // short is still checked, with the crate's error.
        let mut short = tensors.clone();
        short[3].3 -= 1;
        assert_eq!(
            our_json(None, &short).unwrap_err(),
            crate_json(None, &short).unwrap_err()
        );
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
        for len in [1, 5, 8, 13, 15, 16, 17, 20, 31, 32, 33, 47] {
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
        let mut numbers = vec![u64::MAX / 3, u64::MAX, u64::MAX - 1];
        for power in 0..20 {
            let p = 10u64.pow(power);
            numbers.extend([p - 1, p, p + 1, p.wrapping_mul(7).wrapping_add(3)]);
        }
        for n in numbers {
            assert_eq!(Digits::of(n).as_bytes(), n.to_string().as_bytes());
            assert_eq!(digits(n), n.to_string().len(), "{n}");
        }
    }

    #[test]
    fn measures_escaped_names_as_serde_json_writes_them() {
        for name in ["plain", "q\"uote", "tab\t", "\u{1}\u{1f}\u{7f}", "é\\"] {
            assert_eq!(
                escaped_len(name).unwrap(),
                serde_json::to_string(name).unwrap().len(),
                "{name:?}"
            );
        }
    }
}
