//! Frozen values: the [`Frozen`], [`Encode`] and [`Decode`] traits and their
//! implementations for scalars, strings, lists, optionals, dicts and
//! structs. The tensor directory implements them beside [`crate::Directory`].
//!
//! Decoding never allocates: a value is borrowed from the buffer
//! (`&str`, [`ListView`], [`PodList`], [`DictView`]) or copied into
//! storage whose capacity is part of its type (`heapless::Vec<T, N>`,
//! `heapless::String<N>`, `heapless::LinearMap<K, V, N>`). A count above
//! that capacity is LIMIT before any element is read, exactly like a count
//! above the cap of [`crate::Limits`].

use core::marker::PhantomData;

use crate::error::{Code, Error, Refusal, Result};
use crate::frame;
use crate::order::{self, Element};
use crate::schema::{Scalar, Schema};
use crate::wire::{check_capacity, Reader, Sink, Writer};

/// A Rust type with a Kiln type. Its canonical type text, schema hash and
/// minimum wire size follow from [`Frozen::SCHEMA`] at compile time.
///
/// Which Rust type goes with which Kiln type: the table "Kiln types and
/// Rust types" in the crate docs.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Kiln type",
    label = "no Kiln type for this Rust type",
    note = "kiln-nostd's crate docs, \"Kiln types and Rust types\", list the Rust type for every Kiln type (e.g. `list<f32>` is `PodList<'a, f32>`, `str` is `&'a str` or `heapless::String<N>`); structs use `#[derive(Frozen)]`",
    note = "heapless containers must be kiln_nostd::heapless (heapless 0.9), not another version of the crate"
)]
pub trait Frozen {
    /// The Kiln type of `Self`.
    const SCHEMA: Schema;
    /// FNV-1a 64 hash of the canonical type text, as a frame carries it.
    const HASH: u64 = Self::SCHEMA.hash();
    /// The fewest bytes a value can take; the allocation rule's `m`.
    /// Hidden: the decoders' business, from [`Frozen::SCHEMA`].
    #[doc(hidden)]
    const MIN_SIZE: u64 = Self::SCHEMA.min_size();
    /// Whether every value takes zero bytes (`struct{}` and structs of
    /// such): a list of them is bounded by the count cap alone, so decoders
    /// read one element and repeat it instead of reading `count`. Hidden,
    /// as [`Frozen::MIN_SIZE`] is.
    #[doc(hidden)]
    const ZERO_SIZE: bool = Self::SCHEMA.is_zero_size();
}

/// Writes a value's canonical bytes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written as Kiln",
    note = "the crate docs' table \"Kiln types and Rust types\" says which types write each Kiln type"
)]
pub trait Encode: Frozen {
    /// Appends the value to `w`.
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()>;

    /// Appends `items` one after another: the elements of a list. Fixed-width
    /// numbers write all their bytes at once (one copy on a little-endian
    /// host); every other type encodes each element.
    #[doc(hidden)]
    fn encode_many<S: Sink>(items: &[Self], w: &mut Writer<S>) -> Result<()>
    where
        Self: Sized,
    {
        items.iter().try_for_each(|item| item.encode(w))
    }

    /// The text of a `str` value (its bytes after the length word), for
    /// encoders that write a run of strings with one bounds check; `None`
    /// for every other value, which then encodes itself.
    #[doc(hidden)]
    #[inline]
    fn str_bytes(&self) -> Option<&[u8]> {
        None
    }
}

/// Reads a value, checking every rule of the format on the way.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read from Kiln bytes",
    note = "the crate docs' table \"Kiln types and Rust types\" says which types read each Kiln type: borrowed (`&'a str`, `PodList`, `ListView`, `DictView`, `Directory`), fixed-capacity (`heapless::Vec<T, N>`), or owned with `alloc` (`Vec<T>`, `String`, `BTreeMap`); a `tensors` field is read as `Directory<'a>`, and `Tensors` is only the builder's input"
)]
pub trait Decode<'de>: Frozen + Sized {
    /// Reads one value from `r`.
    fn decode(r: &mut Reader<'de>) -> Result<Self>;

    /// Appends `count` elements read from `r` to `out`: the elements of a
    /// list whose count has passed the allocation rule. Fixed-width numbers
    /// copy their bytes at once (one copy on a little-endian host); every
    /// other type decodes each element.
    #[doc(hidden)]
    #[cfg(feature = "alloc")]
    fn decode_many(r: &mut Reader<'de>, count: u32, out: &mut alloc::vec::Vec<Self>) -> Result<()> {
        decode_elements(r, count, |item| {
            out.push(item);
            Ok(())
        })
    }

    /// A value that [`Decode::decode_into`] may overwrite: a cheap one
    /// (zero, `""`, `None`, an empty `heapless::Vec`), or `None` for a type
    /// that has none. A derived struct whose fields all have one is built
    /// first and its fields decoded where they lie.
    #[doc(hidden)]
    #[inline]
    fn placeholder() -> Option<Self> {
        None
    }

    /// Reads one value over `place`, storage the caller already has (see
    /// [`from_bytes_into`]). The default reads a value and moves it there;
    /// a large value (`heapless::Vec`, a derived struct) is filled where it
    /// lies, so it is not copied from temporary to temporary (on a
    /// microcontroller those copies of a 132-byte vector cost a `memcpy`
    /// helper). The checks and the verdict are those of
    /// [`Decode::decode`]. On an error `place` holds some value of the
    /// type, not a meaningful one.
    #[inline]
    fn decode_into(r: &mut Reader<'de>, place: &mut Self) -> Result<()> {
        *place = Self::decode(r)?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Entry points

/// Decodes a standalone value under the default caps: the value must use
/// the whole buffer.
pub fn from_bytes<'de, T: Decode<'de>>(buf: &'de [u8]) -> Result<T> {
    from_bytes_with(buf, crate::Limits::DEFAULT)
}

/// Decodes a standalone value under `limits`.
pub fn from_bytes_with<'de, T: Decode<'de>>(buf: &'de [u8], limits: crate::Limits) -> Result<T> {
    let mut r = Reader::new(buf, limits);
    T::decode(&mut r)
        .and_then(|value| r.finish().map(|()| value))
        .map_err(|e| frame::hint_if_framed(e, buf, crate::Options::BARE))
}

/// Decodes a standalone value into `place`, storage the caller owns, under
/// the default caps: the firmware's way to read each message into the same
/// record with nothing moved or copied on the way. A derived struct is
/// filled field by field where it lies. Same checks and verdict as
/// [`from_bytes`]; on an error `place` holds some value of its type, not a
/// meaningful one.
///
/// ```
/// # #[cfg(feature = "derive")] fn main() {
/// use kiln_nostd::{from_bytes_into, heapless, to_slice, Frozen};
///
/// #[derive(Frozen)]
/// struct Reading { id: u32, values: heapless::Vec<f32, 8> }
///
/// let mut buf = [0u8; 64];
/// let sent = Reading { id: 3, values: heapless::Vec::from_slice(&[1.5, 2.0]).unwrap() };
/// let bytes = to_slice(&sent, &mut buf).unwrap();
/// let mut record = Reading { id: 0, values: heapless::Vec::new() }; // reused for every message
/// from_bytes_into(bytes, &mut record).unwrap();
/// assert_eq!((record.id, &record.values[..]), (3, &[1.5, 2.0][..]));
/// # }
/// # #[cfg(not(feature = "derive"))] fn main() {}
/// ```
pub fn from_bytes_into<'de, T: Decode<'de>>(buf: &'de [u8], place: &mut T) -> Result<()> {
    from_bytes_into_with(buf, crate::Limits::DEFAULT, place)
}

/// [`from_bytes_into`] under `limits`.
pub fn from_bytes_into_with<'de, T: Decode<'de>>(
    buf: &'de [u8],
    limits: crate::Limits,
    place: &mut T,
) -> Result<()> {
    let mut r = Reader::new(buf, limits);
    T::decode_into(&mut r, place)
        .and_then(|()| r.finish())
        .map_err(|e| frame::hint_if_framed(e, buf, crate::Options::BARE))
}

/// Encodes `value` into the start of `buf` and returns the bytes written.
/// A buffer that is too small is refused; [`encoded_len`] gives the size.
pub fn to_slice<'a, T: Encode + ?Sized>(value: &T, buf: &'a mut [u8]) -> Result<&'a mut [u8]> {
    let available = buf.len();
    let mut w = Writer::new(crate::wire::SliceSink::new(buf));
    match value.encode(&mut w) {
        Ok(()) => Ok(w.into_sink().into_written()),
        Err(e) => Err(with_whole_length(e, available, || encoded_len(value))),
    }
}

/// A buffer refusal from a partial encode knows only the bytes up to the
/// write that failed; the counting sink gives the whole length, so the
/// caller learns at once how big a buffer to give.
#[cfg_attr(feature = "no-error-text", inline(always))] // nothing to count without the numbers
pub(crate) fn with_whole_length(
    e: Error,
    available: usize,
    whole_length: impl FnOnce() -> Result<usize>,
) -> Error {
    #[cfg(not(feature = "no-error-text"))]
    if e.refusal() == Some(Refusal::BufferTooSmall) {
        if let Ok(needed) = whole_length() {
            return e.with_detail(crate::error::Detail::Bytes {
                needed: needed as u64,
                available: available as u64,
            });
        }
    }
    #[cfg(feature = "no-error-text")]
    let _ = (available, whole_length);
    e
}

/// The exact length [`to_slice`] writes, from running the encoder into a
/// counting sink.
pub fn encoded_len<T: Encode + ?Sized>(value: &T) -> Result<usize> {
    let mut w = Writer::new(crate::wire::CountingSink::new());
    value.encode(&mut w)?;
    Ok(w.written())
}

/// Encodes `value` into a new vector sized by [`encoded_len`] first, so
/// the bytes are written once with no reallocation.
#[cfg(feature = "alloc")]
pub fn to_vec<T: Encode + ?Sized>(value: &T) -> Result<alloc::vec::Vec<u8>> {
    let mut w = Writer::new(alloc::vec::Vec::with_capacity(encoded_len(value)?));
    value.encode(&mut w)?;
    Ok(w.into_sink())
}

/// Decodes a framed value of type `T` under the default caps: frame checks
/// (SCHEMA when the hash is not `T`'s, before any field is read), the
/// value, then TRAILING for anything after it.
///
/// ```
/// use kiln_nostd::{from_frame, to_frame_slice};
/// let mut buf = [0u8; 32];
/// let framed = to_frame_slice(&7u32, &mut buf).unwrap();
/// assert_eq!(&framed[..4], b"KLN0");
/// assert_eq!(from_frame::<u32>(framed).unwrap(), 7);
/// assert!(from_frame::<u64>(framed).is_err()); // another type's hash: SCHEMA
/// ```
pub fn from_frame<'de, T: Decode<'de>>(buf: &'de [u8]) -> Result<T> {
    from_frame_with(buf, crate::Limits::DEFAULT)
}

/// [`from_frame`] under `limits`.
pub fn from_frame_with<'de, T: Decode<'de>>(buf: &'de [u8], limits: crate::Limits) -> Result<T> {
    frame::open(buf, T::HASH)?;
    let mut r = Reader::starting_at(buf, frame::FRAME_LEN, limits);
    let value = T::decode(&mut r)?;
    r.finish()?;
    Ok(value)
}

/// Decodes a framed value into `place`, storage the caller owns, under the
/// default caps: [`from_frame`] with nothing moved on the way (see
/// [`from_bytes_into`]).
pub fn from_frame_into<'de, T: Decode<'de>>(buf: &'de [u8], place: &mut T) -> Result<()> {
    from_frame_into_with(buf, crate::Limits::DEFAULT, place)
}

/// [`from_frame_into`] under `limits`.
pub fn from_frame_into_with<'de, T: Decode<'de>>(
    buf: &'de [u8],
    limits: crate::Limits,
    place: &mut T,
) -> Result<()> {
    frame::open(buf, T::HASH)?;
    let mut r = Reader::starting_at(buf, frame::FRAME_LEN, limits);
    T::decode_into(&mut r, place)?;
    r.finish()
}

/// Encodes `value` in a frame into the start of `buf`; a buffer that is too
/// small is refused ([`framed_len`] gives the size).
pub fn to_frame_slice<'a, T: Encode + ?Sized>(
    value: &T,
    buf: &'a mut [u8],
) -> Result<&'a mut [u8]> {
    let available = buf.len();
    let mut w = Writer::new(crate::wire::SliceSink::new(buf));
    match frame::write_header(&mut w, T::HASH).and_then(|()| value.encode(&mut w)) {
        Ok(()) => Ok(w.into_sink().into_written()),
        Err(e) => Err(with_whole_length(e, available, || framed_len(value))),
    }
}

/// The exact length [`to_frame_slice`] writes: the 16-byte frame plus the
/// value.
pub fn framed_len<T: Encode + ?Sized>(value: &T) -> Result<usize> {
    let mut w = Writer::new(crate::wire::CountingSink::new());
    frame::write_header(&mut w, T::HASH)?;
    value.encode(&mut w)?;
    Ok(w.written())
}

/// Encodes `value` in a frame into a new vector.
#[cfg(feature = "alloc")]
pub fn to_frame_vec<T: Encode + ?Sized>(value: &T) -> Result<alloc::vec::Vec<u8>> {
    let len = encoded_len(value)?.saturating_add(frame::FRAME_LEN);
    let mut w = Writer::new(alloc::vec::Vec::with_capacity(len));
    frame::write_header(&mut w, T::HASH)?;
    value.encode(&mut w)?;
    Ok(w.into_sink())
}

// ---------------------------------------------------------------------------
// Scalars

impl Frozen for bool {
    const SCHEMA: Schema = Schema::Scalar(Scalar::Bool);
}

impl Encode for bool {
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        w.u8(u8::from(*self))
    }
}

impl<'de> Decode<'de> for bool {
    #[inline]
    fn placeholder() -> Option<Self> {
        Some(false)
    }
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let at = r.position();
        match r.u8("bool")? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Error::wire(Code::Type, "bool byte other than 0 or 1", at)),
        }
    }
}

macro_rules! fixed_width {
    ($($ty:ty => $scalar:ident),* $(,)?) => {$(
        impl Frozen for $ty {
            const SCHEMA: Schema = Schema::Scalar(Scalar::$scalar);
        }
        impl Encode for $ty {
            #[inline] // one store behind one bounds check
            fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
                w.put(&self.to_le_bytes())
            }
            fn encode_many<S: Sink>(items: &[Self], w: &mut Writer<S>) -> Result<()> {
                order::write_le(items, w)
            }
        }
        impl<'de> Decode<'de> for $ty {
            #[inline]
            fn decode(r: &mut Reader<'de>) -> Result<Self> {
                r.array(stringify!($ty)).map(<$ty>::from_le_bytes)
            }
            #[inline]
            fn placeholder() -> Option<Self> {
                Some(<$ty>::default())
            }
            #[cfg(feature = "alloc")]
            fn decode_many(
                r: &mut Reader<'de>,
                count: u32,
                out: &mut alloc::vec::Vec<Self>,
            ) -> Result<()> {
                // The claim proved count * width bytes remain, so the
                // storage below is bounded by the buffer.
                let len = (count as usize).saturating_mul(core::mem::size_of::<$ty>());
                let bytes = r.take(len, "list count beyond the bytes that remain")?;
                let start = out.len();
                out.resize(start.saturating_add(count as usize), <$ty>::default());
                order::copy_into(bytes, out.get_mut(start..).unwrap_or_default()).map(drop)
            }
        }
    )*};
}

// f32 and f64 go through from_le_bytes/to_le_bytes, which move bits and
// never values: NaN payloads and the sign of zero survive.
fixed_width! {
    i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, f32 => F32, f64 => F64,
}

/// The Kiln `int` type: the bytes of an `i64` under its own type name (and
/// so its own schema hash). A bare Rust `i64` is the Kiln `i64`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Int(pub i64);

/// The Kiln `uint` type: the bytes of a `u64` under its own type name.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Uint(pub u64);

macro_rules! named_wide {
    ($($ty:ident($inner:ty) => $scalar:ident),*) => {$(
        impl Frozen for $ty {
            const SCHEMA: Schema = Schema::Scalar(Scalar::$scalar);
        }
        impl Encode for $ty {
            fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
                self.0.encode(w)
            }
        }
        impl<'de> Decode<'de> for $ty {
            #[inline]
            fn decode(r: &mut Reader<'de>) -> Result<Self> {
                <$inner>::decode(r).map($ty)
            }
            #[inline]
            fn placeholder() -> Option<Self> {
                Some($ty(0))
            }
        }
    )*};
}

named_wide!(Int(i64) => Int, Uint(u64) => Uint);

// ---------------------------------------------------------------------------
// Strings and bytes

impl Frozen for str {
    const SCHEMA: Schema = Schema::Str;
}

impl Encode for str {
    #[inline] // a few instructions around one copy: a map writes eight of them
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        w.byte_run(self.as_bytes())
    }
    #[inline]
    fn str_bytes(&self) -> Option<&[u8]> {
        Some(self.as_bytes())
    }
}

impl Frozen for &str {
    const SCHEMA: Schema = Schema::Str;
}

impl Encode for &str {
    #[inline] // a few instructions around one copy: a map writes eight of them
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        (**self).encode(w)
    }
    #[inline]
    fn str_bytes(&self) -> Option<&[u8]> {
        Some(self.as_bytes())
    }
}

impl<'de> Decode<'de> for &'de str {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        r.str()
    }
    #[inline]
    fn placeholder() -> Option<Self> {
        Some("")
    }
}

const BYTES: Schema = Schema::List(&Schema::Scalar(Scalar::U8));

impl Frozen for &[u8] {
    const SCHEMA: Schema = BYTES;
}

impl Encode for &[u8] {
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        (**self).encode(w)
    }
}

impl<'de> Decode<'de> for &'de [u8] {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        r.nested(|r| r.byte_run("list<u8> length beyond the bytes that remain"))
    }
}

impl<const N: usize> Frozen for heapless::String<N> {
    const SCHEMA: Schema = Schema::Str;
}

impl<const N: usize> Encode for heapless::String<N> {
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        w.byte_run(self.as_bytes())
    }
    #[inline]
    fn str_bytes(&self) -> Option<&[u8]> {
        Some(self.as_bytes())
    }
}

impl<'de, const N: usize> Decode<'de> for heapless::String<N> {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let at = r.position();
        let text = r.str()?;
        check_capacity(
            text.len() as u64,
            N,
            "string length above the heapless::String capacity",
            at,
        )?;
        let mut out = heapless::String::new();
        out.push_str(text).map_err(|_| {
            Error::refused(Refusal::Capacity, "string longer than its storage").at(at)
        })?;
        Ok(out)
    }
}

// ---------------------------------------------------------------------------
// Lists

/// Reads a list's count under its cap (the byte cap for `list<u8>`), then
/// refuses a count above a storage capacity (`usize::MAX` for none).
fn claim_list<T: Frozen>(r: &mut Reader<'_>, storage: usize) -> Result<u32> {
    let at = r.position();
    let cap = list_cap_of::<T>(r.limits());
    let count = r.claim(cap, T::MIN_SIZE, "list count beyond the bytes that remain")?;
    check_capacity(
        u64::from(count),
        storage,
        "list count above the storage capacity",
        at,
    )?;
    Ok(count)
}

/// Decodes `count` elements into `push`. Elements of a zero-size type are
/// all the same value: the first is read from `r` (it may still be too
/// deep), the others from an empty reader, within the message's budget of
/// zero-size values ([`Reader::spend_zero_size`]).
fn decode_elements<'de, T: Decode<'de>>(
    r: &mut Reader<'de>,
    count: u32,
    mut push: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    if T::ZERO_SIZE {
        if count == 0 {
            return Ok(());
        }
        r.spend_zero_size(count)?;
        push(T::decode(r)?)?;
        let mut nothing = Reader::new(&[], r.limits());
        for _ in 1..count {
            push(T::decode(&mut nothing)?)?;
        }
        return Ok(());
    }
    for _ in 0..count {
        push(T::decode(r)?)?;
    }
    Ok(())
}

/// Checks `count` elements without keeping them (for views).
fn skip_elements<'de, T: Decode<'de>>(r: &mut Reader<'de>, count: u32) -> Result<()> {
    if T::ZERO_SIZE {
        return match count {
            0 => Ok(()),
            _ => T::decode(r).map(drop),
        };
    }
    for _ in 0..count {
        T::decode(r)?;
    }
    Ok(())
}

/// [`list_cap`] for a list of `T`.
#[inline]
fn list_cap_of<T: Frozen>(limits: crate::Limits) -> u32 {
    // Known at compile time: no comparison of schemas when encoding.
    list_cap(
        limits,
        const { matches!(T::SCHEMA, Schema::Scalar(Scalar::U8)) },
    )
}

/// The cap on a list's count: the byte cap for `list<u8>` (a byte run),
/// the count cap for every other list.
pub(crate) fn list_cap(limits: crate::Limits, of_u8: bool) -> u32 {
    if of_u8 {
        limits.byte_cap
    } else {
        limits.count_cap
    }
}

#[inline] // a count and the elements: inlined where the list is a field
fn encode_list<T: Encode, S: Sink>(w: &mut Writer<S>, items: &[T]) -> Result<()> {
    let cap = list_cap_of::<T>(w.limits());
    w.nested(|w| {
        w.count(items.len(), cap)?;
        T::encode_many(items, w)
    })
}

impl<T: Frozen, const N: usize> Frozen for heapless::Vec<T, N> {
    const SCHEMA: Schema = Schema::List(&T::SCHEMA);
}

impl<T: Encode, const N: usize> Encode for heapless::Vec<T, N> {
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        encode_list(w, self.as_slice())
    }
}

impl<'de, T: Decode<'de>, const N: usize> Decode<'de> for heapless::Vec<T, N> {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let mut out = heapless::Vec::new();
        Self::decode_into(r, &mut out)?;
        Ok(out)
    }
    #[inline]
    fn placeholder() -> Option<Self> {
        Some(heapless::Vec::new())
    }
    fn decode_into(r: &mut Reader<'de>, out: &mut Self) -> Result<()> {
        out.clear();
        r.nested(|r| {
            let count = claim_list::<T>(r, N)?;
            decode_elements(r, count, |item| {
                out.push(item)
                    .map_err(|_| Error::refused(Refusal::Capacity, "list longer than its storage"))
            })
        })
    }
}

impl<T: Frozen> Frozen for [T] {
    const SCHEMA: Schema = Schema::List(&T::SCHEMA);
}

impl<T: Encode> Encode for [T] {
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        encode_list(w, self)
    }
}

impl<T: Frozen, const N: usize> Frozen for [T; N] {
    const SCHEMA: Schema = Schema::List(&T::SCHEMA);
}

impl<T: Encode, const N: usize> Encode for [T; N] {
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        encode_list(w, self.as_slice())
    }
}

impl<'de, T: Decode<'de>, const N: usize> Decode<'de> for [T; N] {
    /// A `list<T>` of exactly `N` elements. Any other count is a storage
    /// refusal ([`Refusal::Capacity`]): the bytes may be valid, but an array
    /// holds exactly `N`.
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let at = r.position();
        let items = heapless::Vec::<T, N>::decode(r)?;
        items.into_array().map_err(|_| {
            Error::refused(Refusal::Capacity, "list count is not the array's length").at(at)
        })
    }
}

/// A borrowed `list<T>`, checked in full when decoded and read again, lazily,
/// when iterated. Stores nothing per element.
#[derive(Clone, Debug)]
pub struct ListView<'de, T> {
    bytes: &'de [u8],
    count: u32,
    reader: Reader<'de>,
    _element: PhantomData<T>,
}

impl<'de, T> ListView<'de, T> {
    /// How many elements the list holds.
    pub const fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the list is empty.
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The encoded elements (without the count word).
    #[doc(hidden)]
    pub const fn as_bytes(&self) -> &'de [u8] {
        self.bytes
    }
}

impl<'de, T: Decode<'de>> ListView<'de, T> {
    /// The elements, decoded one at a time from the borrowed bytes.
    pub fn iter(&self) -> ListIter<'de, T> {
        ListIter {
            reader: self.reader.clone(),
            left: self.count,
            _element: PhantomData,
        }
    }
}

impl<'de, T: Decode<'de>> IntoIterator for &ListView<'de, T> {
    type Item = T;
    type IntoIter = ListIter<'de, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Iterator over a [`ListView`].
#[derive(Clone, Debug)]
pub struct ListIter<'de, T> {
    reader: Reader<'de>,
    left: u32,
    _element: PhantomData<T>,
}

impl<'de, T: Decode<'de>> Iterator for ListIter<'de, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.left = self.left.checked_sub(1)?;
        // Every element was checked when the view was decoded, so this
        // cannot fail; if it somehow did, the iteration ends.
        T::decode(&mut self.reader).ok()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl<T: Frozen> Frozen for ListView<'_, T> {
    const SCHEMA: Schema = Schema::List(&T::SCHEMA);
}

impl<'de, T: Decode<'de>> Decode<'de> for ListView<'de, T> {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        r.nested(|r| {
            let count = claim_list::<T>(r, usize::MAX)?;
            let start = r.position();
            skip_elements::<T>(r, count)?;
            let end = r.position();
            Ok(ListView {
                bytes: r.buffer().get(start..end).unwrap_or(&[]),
                count,
                reader: r.window(start, end),
                _element: PhantomData,
            })
        })
    }
}

impl<'de, T: Decode<'de> + Encode> Encode for ListView<'de, T> {
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        let cap = list_cap_of::<T>(w.limits());
        w.nested(|w| {
            w.count(self.len(), cap)?;
            self.iter().try_for_each(|item| item.encode(w))
        })
    }
}

/// A `list<T>` of fixed-width numbers (`f32`, `u16`, ...): the payload is
/// the array. One type both reads and writes: decoded, it borrows the
/// list's little-endian bytes from the message; built with
/// [`PodList::from_slice`], it borrows host numbers to write (swapped on a
/// big-endian host).
///
/// Read it in place ([`PodList::as_slice`]: little-endian host and aligned
/// address only), in place or else copied once ([`PodList::view_or_copy`]),
/// copied ([`PodList::copy_into`], every host), or one element at a time
/// ([`PodList::get`], [`PodList::iter`]).
#[derive(Copy, Clone, Debug)]
pub struct PodList<'a, T> {
    elements: PodElements<'a, T>,
    /// Absolute offset of the first element in the decoded buffer (0 for
    /// host numbers).
    offset: usize,
}

#[derive(Copy, Clone, Debug)]
enum PodElements<'a, T> {
    /// Little-endian bytes of a decoded list.
    Wire(&'a [u8]),
    /// Host numbers to write.
    Host(&'a [T]),
}

impl<'a, T: Element> PodList<'a, T> {
    /// A list of host numbers, to write (or to compare with a decoded one).
    pub const fn from_slice(values: &'a [T]) -> PodList<'a, T> {
        PodList {
            elements: PodElements::Host(values),
            offset: 0,
        }
    }

    /// How many elements.
    pub fn len(&self) -> usize {
        match self.elements {
            PodElements::Wire(bytes) => bytes.len() / T::WIDTH,
            PodElements::Host(values) => values.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The little-endian element bytes of a decoded list (`None` for host
    /// numbers, whose bytes are in host order).
    #[doc(hidden)]
    pub const fn as_bytes(&self) -> Option<&'a [u8]> {
        match self.elements {
            PodElements::Wire(bytes) => Some(bytes),
            PodElements::Host(_) => None,
        }
    }

    /// Absolute byte range of a decoded list's elements in the decoded
    /// buffer (`None` for host numbers).
    #[doc(hidden)]
    pub fn byte_range(&self) -> Option<core::ops::Range<usize>> {
        self.as_bytes()
            .map(|bytes| self.offset..self.offset.saturating_add(bytes.len()))
    }

    /// The elements in place, without copying. For a decoded list this is
    /// refused on a big-endian host ([`Refusal::BigEndianHost`]) or when
    /// the elements' address is not aligned for `T` ([`Refusal::Misaligned`]):
    /// never a wrong number.
    pub fn as_slice(&self) -> Result<&'a [T]> {
        match self.elements {
            PodElements::Wire(bytes) => order::view(bytes),
            PodElements::Host(values) => Ok(values),
        }
    }

    /// The elements in place when [`PodList::as_slice`] allows it, else
    /// copied once into `scratch` (swapping on a big-endian host): one call
    /// that works on every host and at every address. `scratch` must hold
    /// [`PodList::len`] elements when a copy is needed.
    pub fn view_or_copy<'s>(&self, scratch: &'s mut [T]) -> Result<&'s [T]>
    where
        'a: 's,
    {
        match self.as_slice() {
            Ok(view) => Ok(view),
            Err(_) => {
                let count = self.copy_into(scratch)?;
                Ok(scratch.get(..count).unwrap_or_default())
            }
        }
    }

    /// Copies the elements into `out` (swapping on a big-endian host);
    /// returns how many.
    pub fn copy_into(&self, out: &mut [T]) -> Result<usize> {
        match self.elements {
            PodElements::Wire(bytes) => order::copy_into(bytes, out),
            PodElements::Host(values) => {
                let available = out.len();
                let target = out.get_mut(..values.len()).ok_or(
                    Error::refused(
                        Refusal::BufferTooSmall,
                        "output slice shorter than the element count",
                    )
                    .with_detail(order::slice_bytes::<T>(values.len(), available)),
                )?;
                target.copy_from_slice(values);
                Ok(values.len())
            }
        }
    }

    /// Element `index`, on any host.
    pub fn get(&self, index: usize) -> Option<T> {
        match self.elements {
            PodElements::Wire(bytes) => order::get(bytes, index),
            PodElements::Host(values) => values.get(index).copied(),
        }
    }

    /// The elements, one at a time, on any host.
    pub fn iter(&self) -> impl Iterator<Item = T> + 'a {
        let this = *self;
        (0..this.len()).filter_map(move |i| this.get(i))
    }
}

impl<T: Element> PartialEq for PodList<'_, T> {
    /// Element by element, whatever each side borrows.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Frozen> Frozen for PodList<'_, T> {
    const SCHEMA: Schema = Schema::List(&T::SCHEMA);
}

impl<'de, T: Frozen + Element> Decode<'de> for PodList<'de, T> {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        r.nested(|r| {
            let count = claim_list::<T>(r, usize::MAX)?;
            // The claim proved count * width bytes remain.
            let len = (count as usize).saturating_mul(T::WIDTH);
            let offset = r.position();
            let bytes = r.take(len, "list count beyond the bytes that remain")?;
            Ok(PodList {
                elements: PodElements::Wire(bytes),
                offset,
            })
        })
    }
}

impl<T: Frozen + Element> Encode for PodList<'_, T> {
    #[inline] // a count and one copy: inlined into the struct that holds it
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        let cap = list_cap_of::<T>(w.limits());
        w.nested(|w| {
            let bytes = match self.elements {
                PodElements::Wire(bytes) => bytes,
                PodElements::Host(values) if order::HOST_IS_LITTLE_ENDIAN => {
                    bytemuck::cast_slice(values)
                }
                PodElements::Host(values) => {
                    w.count(self.len(), cap)?;
                    return order::write_le(values, w);
                }
            };
            // The count word and the elements' bytes behind one bounds
            // check.
            w.counted_run(self.len(), cap, bytes)
        })
    }
}

// ---------------------------------------------------------------------------
// Optionals

impl<T: Frozen> Frozen for Option<T> {
    const SCHEMA: Schema = Schema::Opt(&T::SCHEMA);
}

impl<T: Encode> Encode for Option<T> {
    #[inline] // a tag byte and the value: inlined into the struct that holds it
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        w.nested(|w| match self {
            None => w.u8(0),
            Some(value) => {
                w.u8(1)?;
                value.encode(w)
            }
        })
    }
}

impl<'de, T: Decode<'de>> Decode<'de> for Option<T> {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        read_opt(r, |r, _, present| match present {
            true => T::decode(r).map(Some),
            false => Ok(None),
        })
    }
    #[inline]
    fn placeholder() -> Option<Self> {
        Some(None)
    }
}

/// Reads an `opt<T>`: one container, a tag byte 0 or 1; `body` gets the
/// tag's offset and whether the value is present, and reads it. Shared by
/// the typed decoders and the walker.
pub(crate) fn read_opt<'de, T>(
    r: &mut Reader<'de>,
    body: impl FnOnce(&mut Reader<'de>, usize, bool) -> Result<T>,
) -> Result<T> {
    r.nested(|r| {
        let at = r.position();
        match r.u8("opt tag")? {
            0 => body(r, at, false),
            1 => body(r, at, true),
            _ => Err(Error::wire(Code::Type, "opt tag other than 0 or 1", at)),
        }
    })
}

// ---------------------------------------------------------------------------
// Dicts

/// What [`read_dict`] tells its caller.
pub(crate) enum DictEvent<'de> {
    /// The count word at `at` passed the allocation rule.
    Begin { at: usize, count: u32 },
    /// A key at `key_at` (its length word), in order; read its value now.
    Pair { key: &'de str, key_at: usize },
}

/// The EOF of a dict count beyond the bytes that remain.
pub(crate) const DICT_BEYOND: &str = "dict count beyond the bytes that remain";

/// The key order rule: a dict key whose length word is at `key_at` is
/// greater, byte by byte, than the key before it (none for the first).
#[inline]
pub(crate) fn check_key_order(previous: Option<&[u8]>, key: &[u8], key_at: usize) -> Result<()> {
    if previous.is_some_and(|p| p >= key) {
        return Err(Error::wire(
            Code::Type,
            "dict key not greater than the key before it",
            key_at,
        ));
    }
    Ok(())
}

/// Reads a dict: its count under the count cap with `m = 4 + value_min`,
/// a refusal when the count is above a `storage` capacity (`usize::MAX`
/// for none), then pairs whose keys strictly increase in bytewise order.
/// `each` hears the count, then each key, and reads each value. Shared by
/// the typed decoders and the walker.
pub(crate) fn read_dict<'de>(
    r: &mut Reader<'de>,
    storage: usize,
    value_min: u64,
    mut each: impl FnMut(&mut Reader<'de>, DictEvent<'de>) -> Result<()>,
) -> Result<u32> {
    r.nested(|r| {
        let at = r.position();
        let pair_min = value_min.saturating_add(4);
        let count = r.claim(r.limits().count_cap, pair_min, DICT_BEYOND)?;
        check_capacity(
            u64::from(count),
            storage,
            "dict count above the storage capacity",
            at,
        )?;
        each(r, DictEvent::Begin { at, count })?;
        let mut previous: Option<&'de str> = None;
        for _ in 0..count {
            let key_at = r.position();
            let key = r.str()?;
            check_key_order(previous.map(str::as_bytes), key.as_bytes(), key_at)?;
            previous = Some(key);
            each(r, DictEvent::Pair { key, key_at })?;
        }
        Ok(count)
    })
}

fn decode_dict<'de, V: Decode<'de>>(
    r: &mut Reader<'de>,
    storage: usize,
    mut each: impl FnMut(&'de str, V) -> Result<()>,
) -> Result<u32> {
    read_dict(r, storage, V::MIN_SIZE, |r, event| match event {
        DictEvent::Begin { .. } => Ok(()),
        DictEvent::Pair { key, .. } => each(key, V::decode(r)?),
    })
}

/// A borrowed `dict<str,V>`, checked in full when decoded; iterates its
/// pairs in key order without storing them.
#[derive(Clone, Debug)]
pub struct DictView<'de, V> {
    count: u32,
    reader: Reader<'de>,
    _value: PhantomData<V>,
}

impl<'de, V: Decode<'de>> DictView<'de, V> {
    /// How many pairs.
    pub const fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether there are none.
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The pairs, in strictly increasing key order.
    pub fn iter(&self) -> impl Iterator<Item = (&'de str, V)> + '_ {
        let mut reader = self.reader.clone();
        (0..self.count).map_while(move |_| {
            let key = reader.str().ok()?;
            Some((key, V::decode(&mut reader).ok()?))
        })
    }

    /// The value under `key` (a linear scan that stops early, keys being
    /// sorted).
    pub fn get(&self, key: &str) -> Option<V> {
        self.iter()
            .take_while(|(k, _)| k.as_bytes() <= key.as_bytes())
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}

impl<V: Frozen> Frozen for DictView<'_, V> {
    const SCHEMA: Schema = Schema::Dict(&V::SCHEMA);
}

impl<'de, V: Decode<'de>> Decode<'de> for DictView<'de, V> {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        // The pairs start after the count word, one container deeper.
        let pairs_start = r.position().saturating_add(4);
        let count = decode_dict::<V>(r, usize::MAX, |_, _| Ok(()))?;
        let mut reader = r.window(pairs_start, r.position());
        reader.enter()?;
        Ok(DictView {
            count,
            reader,
            _value: PhantomData,
        })
    }
}

impl<'de, V: Decode<'de> + Encode> Encode for DictView<'de, V> {
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        w.nested(|w| {
            w.count(self.len(), w.limits().count_cap)?;
            self.iter().try_for_each(|(k, v)| {
                k.encode(w)?;
                v.encode(w)
            })
        })
    }
}

/// Dict keys stored in a `heapless::LinearMap`: anything that can be built
/// from a borrowed `&str` and read back as one.
pub trait DictKey: Sized {
    /// The key's text.
    fn as_key(&self) -> &str;
    /// Builds a key, or `None` when the text does not fit its storage.
    fn from_key(key: &str) -> Option<Self>;
}

impl DictKey for &str {
    fn as_key(&self) -> &str {
        self
    }
    fn from_key(_: &str) -> Option<Self> {
        // Borrowed keys are built by the decoder directly.
        None
    }
}

impl<const N: usize> DictKey for heapless::String<N> {
    fn as_key(&self) -> &str {
        self.as_str()
    }
    fn from_key(key: &str) -> Option<Self> {
        let mut out = heapless::String::new();
        out.push_str(key).ok()?;
        Some(out)
    }
}

impl<K, V: Frozen, const N: usize> Frozen for heapless::LinearMap<K, V, N> {
    const SCHEMA: Schema = Schema::Dict(&V::SCHEMA);
}

impl<K: DictKey + Eq, V: Encode, const N: usize> Encode for heapless::LinearMap<K, V, N> {
    /// Writes the pairs sorted by the bytes of their keys, whatever order
    /// they were inserted in.
    #[inline] // the in-order path is a few loops; the sort is out of line
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        // Keys already in strictly increasing order (inserted sorted, as a
        // map filled from a sorted source is) are written as they lie: no
        // copy of the pairs, no sort, and no check for repeats, which
        // strict order rules out. The same pass measures the pairs when
        // the values are strings.
        let mut in_order = true;
        let mut measure = StrPairs::<V>::new();
        let mut last: &[u8] = &[];
        for (i, (k, v)) in self.iter().enumerate() {
            let key = k.as_key().as_bytes();
            if i > 0 && !key_less(last, key) {
                in_order = false;
                break;
            }
            last = key;
            measure.add(key, v);
        }
        if in_order {
            return w.nested(|w| {
                if measure.put(w, self.len(), || self.iter()) {
                    return Ok(());
                }
                w.count(self.len(), w.limits().count_cap)?;
                self.iter().try_for_each(|(k, v)| {
                    k.as_key().encode(w)?;
                    v.encode(w)
                })
            });
        }
        encode_sorted(self, w)
    }
}

/// A dict whose keys are not in strictly increasing order: its pairs
/// sorted by key into a list of references, refused when a key repeats.
/// Out of line: the encoder of a dict already in order (the common case,
/// inlined where it is called) does not carry the sort.
#[inline(never)]
fn encode_sorted<K, V, S, const N: usize>(
    map: &heapless::LinearMap<K, V, N>,
    w: &mut Writer<S>,
) -> Result<()>
where
    K: DictKey + Eq,
    V: Encode,
    S: Sink,
{
    let mut sorted: heapless::Vec<(&K, &V), N> = map.iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.as_key().as_bytes().cmp(b.0.as_key().as_bytes()));
    let repeated = sorted
        .windows(2)
        .any(|pair| matches!(pair, [a, b] if a.0.as_key() == b.0.as_key()));
    if repeated {
        return Err(Error::refused(Refusal::NotEncodable, "dict keys repeat"));
    }
    w.nested(|w| {
        let mut measure = StrPairs::<V>::new();
        for (k, v) in &sorted {
            measure.add(k.as_key().as_bytes(), v);
        }
        if measure.put(w, sorted.len(), || sorted.iter().copied()) {
            return Ok(());
        }
        w.count(sorted.len(), w.limits().count_cap)?;
        sorted.iter().try_for_each(|(k, v)| {
            k.as_key().encode(w)?;
            v.encode(w)
        })
    })
}

/// Whether key `a` comes before key `b` in byte order. Keys that differ in
/// their first byte (most keys of a small map) are told apart by it, with
/// no call to compare the rest.
#[inline]
fn key_less(a: &[u8], b: &[u8]) -> bool {
    match (a.first(), b.first()) {
        (Some(x), Some(y)) if x != y => x < y,
        _ => a < b,
    }
}

/// The measure of a dict whose values are strings (`V` is a `str` type),
/// taken pair by pair, to write it behind one bounds check
/// ([`StrPairs::put`]). For any other value type it measures nothing and
/// the dict is written pair by pair.
struct StrPairs<V> {
    /// The count word and each key's and value's length word and bytes
    /// (saturating).
    total: u64,
    /// Every key's and value's length or-ed together: at most the byte cap
    /// when each is.
    lengths: usize,
    /// Whether every value gave its text.
    texts: bool,
    value: PhantomData<V>,
}

impl<V: Encode> StrPairs<V> {
    const STR: bool = matches!(V::SCHEMA, Schema::Str);

    #[inline]
    fn new() -> Self {
        StrPairs {
            total: 4,
            lengths: 0,
            texts: Self::STR,
            value: PhantomData,
        }
    }

    #[inline]
    fn add(&mut self, key: &[u8], value: &V) {
        if !Self::STR {
            return;
        }
        match value.str_bytes() {
            Some(value) => {
                self.lengths |= key.len() | value.len();
                // Wraps only when a length is over any u32 byte cap, and
                // then `put` declines on `lengths`.
                let pair = (key.len() as u64)
                    .wrapping_add(value.len() as u64)
                    .wrapping_add(8);
                self.total = self.total.saturating_add(pair);
            }
            None => self.texts = false,
        }
    }

    /// Writes the count word and the pairs `pairs` gives (the ones
    /// measured, in the same order) through one loan of exactly their
    /// bytes from the sink ([`Writer::put_whole`]), the keys and values
    /// copied inline. Returns `false`, having written nothing, when that
    /// does not apply (another value type, a count or length over its cap,
    /// a sink that does not lend, too little room); the caller then writes
    /// the same bytes pair by pair, with its refusals.
    #[inline]
    fn put<'p, K, S, I>(&self, w: &mut Writer<S>, count: usize, pairs: impl Fn() -> I) -> bool
    where
        K: DictKey + 'p,
        V: 'p,
        S: Sink,
        I: Iterator<Item = (&'p K, &'p V)>,
    {
        let limits = w.limits();
        // One compare: a count at most the u32 cap fits in the word.
        if count as u64 > u64::from(limits.count_cap) {
            return false;
        }
        let count = count as u32;
        if !self.texts || self.lengths > limits.byte_cap as usize {
            return false;
        }
        let Ok(total) = usize::try_from(self.total) else {
            return false;
        };
        w.put_whole(total, |out| {
            let Some((word, mut out)) = out.split_first_chunk_mut::<4>() else {
                return;
            };
            *word = count.to_le_bytes();
            for (k, v) in pairs() {
                out = put_run_into(out, k.as_key().as_bytes());
                out = put_run_into(out, v.str_bytes().unwrap_or_default());
            }
        })
    }
}

/// Writes `bytes`' length word and `bytes` at the start of `out`; returns
/// the rest. The caller measured `out` for them.
#[inline(always)]
fn put_run_into<'o>(out: &'o mut [u8], bytes: &[u8]) -> &'o mut [u8] {
    let Some((run, rest)) = out.split_at_mut_checked(bytes.len().wrapping_add(4)) else {
        return &mut [];
    };
    let Some((word, slot)) = run.split_first_chunk_mut::<4>() else {
        return &mut [];
    };
    // At most the byte cap, a u32: checked when the pairs were measured.
    *word = (bytes.len() as u32).to_le_bytes();
    crate::wire::copy_short(slot, bytes);
    rest
}

fn map_full() -> Error {
    Error::refused(Refusal::Capacity, "dict longer than its storage")
}

impl<'de, V: Decode<'de>, const N: usize> Decode<'de> for heapless::LinearMap<&'de str, V, N> {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let mut out = heapless::LinearMap::new();
        decode_dict::<V>(r, N, |key, value| {
            out.insert(key, value).map(drop).map_err(|_| map_full())
        })?;
        Ok(out)
    }
}

impl<'de, V: Decode<'de>, const K: usize, const N: usize> Decode<'de>
    for heapless::LinearMap<heapless::String<K>, V, N>
{
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        let mut out = heapless::LinearMap::new();
        decode_dict::<V>(r, N, |key, value| {
            let key = heapless::String::from_key(key).ok_or(Error::refused(
                Refusal::Capacity,
                "dict key longer than its heapless::String storage",
            ))?;
            out.insert(key, value).map(drop).map_err(|_| map_full())
        })?;
        Ok(out)
    }
}

// ---------------------------------------------------------------------------
// Structs

/// Helpers a struct's `Encode`/`Decode` impls call (what
/// `#[derive(Frozen)]` generates, or a hand-written impl): a struct is one
/// container holding its fields in declaration order.
pub fn encode_struct<S: Sink>(
    w: &mut Writer<S>,
    fields: impl FnOnce(&mut Writer<S>) -> Result<()>,
) -> Result<()> {
    w.nested(fields)
}

/// See [`encode_struct`].
pub fn decode_struct<'de, T>(
    r: &mut Reader<'de>,
    fields: impl FnOnce(&mut Reader<'de>) -> Result<T>,
) -> Result<T> {
    r.nested(fields)
}

/// What `#[derive(Frozen)]` calls: [`decode_struct`] given the same field
/// reads twice. When every field of `T` has a fixed width (scalars, and
/// structs of them) and all its bytes are there, `exact` runs over a
/// reader of exactly those bytes: their length is then a constant the
/// optimizer sees, so no field read keeps a bounds check of its own.
/// Otherwise `checked` runs, as [`decode_struct`] would, and reports the
/// same errors. Each closure has one call site, so each is inlined (two
/// calls of one closure would not be).
#[doc(hidden)]
#[inline] // the closures must be inlined into it for the fast path to fold
pub fn decode_derived<'de, T: Frozen>(
    r: &mut Reader<'de>,
    exact: impl FnOnce(&mut Reader<'de>) -> Result<T>,
    checked: impl FnOnce(&mut Reader<'de>) -> Result<T>,
) -> Result<T> {
    r.nested(|r| {
        if const { T::SCHEMA.is_fixed_size() } {
            // MIN_SIZE is the exact size of such a struct.
            let size = usize::try_from(T::MIN_SIZE).unwrap_or(usize::MAX);
            if let Some(value) = r.exactly(size, exact) {
                return value;
            }
        }
        checked(r)
    })
}

/// Whether `#[derive(Frozen)]` decodes `T` in place when its fields allow
/// ([`decode_derived_into`]): not when every field has a fixed width, since
/// [`decode_derived`] reads those with one bounds check.
#[doc(hidden)]
pub const fn decodes_in_place<T: Frozen>() -> bool {
    !T::SCHEMA.is_fixed_size()
}

/// What `#[derive(Frozen)]` calls for a struct whose fields all have a
/// [`Decode::placeholder`] and are not all of fixed width: the struct
/// `out`, built from the placeholders, gets its fields decoded where they
/// lie by `fields` (one [`Decode::decode_into`] each), one container deep.
#[doc(hidden)]
#[inline] // one call site per derived struct
pub fn decode_derived_into<'de, T>(
    r: &mut Reader<'de>,
    out: &mut T,
    fields: impl FnOnce(&mut Reader<'de>, &mut T) -> Result<()>,
) -> Result<()> {
    r.nested(|r| fields(r, out))
}

/// `struct{}`: zero bytes on the wire, still one container deep.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Empty;

impl Frozen for Empty {
    const SCHEMA: Schema = Schema::Struct(&[]);
}

impl Encode for Empty {
    fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
        encode_struct(w, |_| Ok(()))
    }
}

impl<'de> Decode<'de> for Empty {
    fn decode(r: &mut Reader<'de>) -> Result<Self> {
        decode_struct(r, |_| Ok(Empty))
    }
}

// ---------------------------------------------------------------------------
// Owned containers

/// The most a decoder reserves up front for a `Vec`, as serde's cautious
/// size hint does: the allocation rule proves `count * m` bytes remain, but
/// `m` can be far below `size_of::<T>()`, so a larger claim grows the
/// vector as elements actually arrive.
#[cfg(feature = "inspect")] // the owned decoders, alloc and the value tree
pub(crate) const MAX_PREALLOCATION: usize = 1024 * 1024;

/// How many elements of `T` to reserve for a checked `count`.
#[cfg(feature = "inspect")]
pub(crate) fn cautious_capacity<T>(count: u32) -> usize {
    let per_element = core::mem::size_of::<T>().max(1);
    (count as usize).min(MAX_PREALLOCATION / per_element)
}

#[cfg(feature = "alloc")]
mod owned {
    use super::*;
    use alloc::string::String;
    use alloc::vec::Vec;

    impl Frozen for String {
        const SCHEMA: Schema = Schema::Str;
    }

    impl Encode for String {
        fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
            w.byte_run(self.as_bytes())
        }
        #[inline]
        fn str_bytes(&self) -> Option<&[u8]> {
            Some(self.as_bytes())
        }
    }

    impl<'de> Decode<'de> for String {
        fn decode(r: &mut Reader<'de>) -> Result<Self> {
            r.str().map(String::from)
        }
    }

    impl<T: Frozen> Frozen for Vec<T> {
        const SCHEMA: Schema = Schema::List(&T::SCHEMA);
    }

    impl<T: Encode> Encode for Vec<T> {
        fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
            encode_list(w, self.as_slice())
        }
    }

    impl<V: Frozen> Frozen for alloc::collections::BTreeMap<String, V> {
        const SCHEMA: Schema = Schema::Dict(&V::SCHEMA);
    }

    impl<V: Encode> Encode for alloc::collections::BTreeMap<String, V> {
        /// A `BTreeMap<String, _>` iterates in key byte order (`String`'s
        /// `Ord` is bytewise), which is the wire's order.
        fn encode<S: Sink>(&self, w: &mut Writer<S>) -> Result<()> {
            w.nested(|w| {
                w.count(self.len(), w.limits().count_cap)?;
                self.iter().try_for_each(|(k, v)| {
                    w.byte_run(k.as_bytes())?;
                    v.encode(w)
                })
            })
        }
    }

    impl<'de, V: Decode<'de>> Decode<'de> for alloc::collections::BTreeMap<String, V> {
        fn decode(r: &mut Reader<'de>) -> Result<Self> {
            let mut out = alloc::collections::BTreeMap::new();
            decode_dict::<V>(r, usize::MAX, |key, value| {
                out.insert(String::from(key), value);
                Ok(())
            })?;
            Ok(out)
        }
    }

    impl<'de, T: Decode<'de>> Decode<'de> for Vec<T> {
        fn decode(r: &mut Reader<'de>) -> Result<Self> {
            r.nested(|r| {
                let count = claim_list::<T>(r, usize::MAX)?;
                let mut out = Vec::with_capacity(cautious_capacity::<T>(count));
                T::decode_many(r, count, &mut out)?;
                Ok(out)
            })
        }
    }
}
