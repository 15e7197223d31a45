//! # kiln-nostd: the Kiln v2 codec core
//!
//! Kiln is a positional little-endian encoding for records whose schema the
//! program already knows and which carry numeric arrays. This crate reads
//! and writes it with no allocator: values are borrowed from the caller's
//! buffer or copied into storage whose capacity is in its type, and every
//! claimed count is checked against the bytes that remain before it sizes
//! anything. The format is described in `spec/kiln-v2.md` of the
//! repository; a few words used below:
//!
//! - **type text**: a Kiln type written out, e.g.
//!   `struct{id:i64,readings:list<f32>,}`. A Rust type has one
//!   ([`Frozen::SCHEMA`]); run-time code parses it ([`CompiledType`]).
//! - **frame**: 16 bytes before a value (`KLN0`, a profile byte, and the
//!   FNV-1a hash of the type text). Reading a framed value checks that hash
//!   against the type you read it as, the **destination type**, and stops
//!   with `SCHEMA` before reading a field when they differ.
//! - **wire code**: one of the eight error codes (`FRAME LIMIT EOF TYPE
//!   UTF8 TRAILING SCHEMA DEPTH`) every Kiln reader gives for the same bad
//!   bytes. Anything else is a **refusal** of this API ([`Refusal`]).
//!
//! ## Example: one struct writes and reads a message
//!
//! ```
//! # #[cfg(feature = "derive")] fn main() {
//! use kiln_nostd::{from_bytes, to_slice, Directory, Frozen, TensorSpec};
//!
//! // The schema (and its hash) comes from the field types.
//! #[derive(Frozen)]
//! struct Batch<'a> { id: i64, name: &'a str, batch: Directory<'a> }
//! assert_eq!(Batch::SCHEMA.to_string(), "struct{id:i64,name:str,batch:tensors,}");
//!
//! // Writing: the tensors are built into a checked directory first.
//! let weights = [1.0f32, -2.0, 0.5];
//! let mut block = [0u8; 512];
//! let batch = Directory::build(&[TensorSpec::from_host(&[3], &weights).named("w")], &mut block).unwrap();
//! let mut buf = [0u8; 1024];
//! let message = to_slice(&Batch { id: 7, name: "probe", batch }, &mut buf).unwrap();
//!
//! // Reading: borrowed from `message`, nothing allocated.
//! let decoded: Batch = from_bytes(message).unwrap();
//! assert_eq!((decoded.id, decoded.name), (7, "probe"));
//! let w = decoded.batch.by_name("w").unwrap();
//! let mut scratch = [0f32; 3];
//! assert_eq!(w.view_or_copy(&mut scratch).unwrap(), &weights); // in place, or one copy
//! # }
//! # #[cfg(not(feature = "derive"))] fn main() {}
//! ```
//!
//! ## Framing
//!
//! A frame lets the reader refuse bytes written for another type. Every
//! entry point has a framed twin:
//!
//! | bare | framed |
//! |---|---|
//! | [`to_slice`] | [`to_frame_slice`] |
//! | [`to_vec`] (`alloc`) | [`to_frame_vec`] (`alloc`) |
//! | [`encoded_len`] | [`framed_len`] (16 more) |
//! | [`from_bytes`] / [`from_bytes_with`] | [`from_frame`] / [`from_frame_with`] |
//! | [`from_bytes_into`] (into caller storage) | [`from_frame_into`] |
//! | [`check`] with [`Options::BARE`] | [`check`] with [`Options::FRAMED`] |
//!
//! ```
//! # #[cfg(feature = "derive")] fn main() {
//! use kiln_nostd::{framed_len, from_frame, to_frame_slice, Frozen, PodList};
//!
//! #[derive(Frozen, Debug, PartialEq)]
//! struct Telemetry<'a> { id: u32, readings: PodList<'a, f32> }
//!
//! let sent = Telemetry { id: 3, readings: PodList::from_slice(&[20.5, 21.0]) };
//! let mut buf = [0u8; 64];
//! let frame = to_frame_slice(&sent, &mut buf).unwrap();
//! assert_eq!(frame.len(), framed_len(&sent).unwrap());
//! let got: Telemetry = from_frame(frame).unwrap();
//! assert_eq!(got, sent);
//! // Bytes with a frame given to the bare reader: the error says so.
//! let err = kiln_nostd::from_bytes::<Telemetry>(frame).unwrap_err();
//! assert!(err.looks_framed());
//! # }
//! # #[cfg(not(feature = "derive"))] fn main() {}
//! ```
//!
//! ## Kiln types and Rust types
//!
//! Each Kiln type, the Rust type that writes it, and the types that read it:
//! borrowed from the buffer (no copy), in storage whose capacity is in the
//! type (no allocator), or owned (feature `alloc`). The same Rust type can
//! usually both write and read, so one struct serves both sides.
//!
//! | Kiln type | write | read, borrowed | read, fixed capacity | read, owned (`alloc`) |
//! |---|---|---|---|---|
//! | `bool`, `i8` … `u64`, `f32`, `f64` | the Rust scalar | the Rust scalar | | |
//! | `int`, `uint` | [`Int`], [`Uint`] (a bare `i64` is the Kiln `i64`) | same | | |
//! | `str` | `&str`, `heapless::String<N>`, `String` | `&'a str` | `heapless::String<N>` | `String` |
//! | `list<u8>` (bytes) | `&[u8]`, `heapless::Vec<u8, N>`, `Vec<u8>` | `&'a [u8]` | `heapless::Vec<u8, N>` | `Vec<u8>` |
//! | `list<T>`, `T` a number | [`PodList::from_slice`]`(&[T])`, `[T; N]`, `heapless::Vec`, `Vec` | [`PodList<'a, T>`](PodList) (zero-copy when aligned) | `heapless::Vec<T, N>`, `[T; N]` | `Vec<T>` |
//! | `list<T>`, other `T` | `[T; N]`, `heapless::Vec<T, N>`, `Vec<T>`, [`ListView`] | [`ListView<'a, T>`](ListView) | `heapless::Vec<T, N>`, `[T; N]` | `Vec<T>` |
//! | `opt<T>` | `Option<T>` | `Option<T>` | | |
//! | `dict<str,V>` | `heapless::LinearMap<K, V, N>`, `BTreeMap<String, V>`, [`DictView`] | [`DictView<'a, V>`](DictView) | `heapless::LinearMap<&'a str \| heapless::String<K>, V, N>` | `BTreeMap<String, V>` |
//! | `struct{...}` | `#[derive(Frozen)]` (feature `derive`) | same | | |
//! | `tensors` | [`Directory`] (from [`Directory::build`]) | [`Directory<'a>`](Directory) | | |
//! | any, known at run time | [`Value`] (`alloc`) | [`decode_value`] (with spans), [`check()`] | | [`Value`] |
//!
//! - `&'a [f32]` is not a field type: a list's bytes in a message are
//!   little-endian and need not be aligned, so a borrowed `list<f32>` is
//!   [`PodList`], whose [`PodList::view_or_copy`] gives `&[f32]`.
//! - Only written: [`Tensors`] (`&[TensorSpec]`), the builder's input for
//!   a standalone block; a struct field of type `tensors` is a
//!   [`Directory`], which [`Directory::build`] makes from specs. `[T]`
//!   (unsized) writes; read it as one of the list types.
//! - `[T; N]` reads exactly `N` elements; another count is a
//!   [`Refusal::Capacity`].
//! - heapless is re-exported ([`heapless`], version 0.9): use
//!   `kiln_nostd::heapless::Vec<T, N>` so the versions always match.
//! - A fixed-capacity container smaller than a count the bytes allow is a
//!   [`Refusal::Capacity`], never a wire code: the bytes are not at fault.
//!
//! ## Zero-copy views and alignment
//!
//! A view such as [`TensorView::as_slice`] gives `&[f32]` over the buffer
//! itself. It needs a little-endian host and an address aligned for the
//! element; otherwise it is refused ([`Refusal::BigEndianHost`],
//! [`Refusal::Misaligned`]), never wrong. Payloads sit at multiples of 64
//! from the start of their directory block, so:
//!
//! - a bare directory in an aligned buffer ([`AlignedBytes`] with `alloc`,
//!   or a memory-mapped file) can be viewed in place, every tensor;
//! - inside a message, a `tensors` field starts where the previous fields
//!   end, and a `list<f32>` right after its count, so alignment depends on
//!   what came before; [`TensorView::is_aligned_at_offset`] says which.
//!
//! [`TensorView::view_or_copy`] and [`PodList::view_or_copy`] take a
//! scratch slice and return a view when they can and a copy when they
//! must: the call to use when you do not control where the bytes are.
//! [`TensorView::copy_into_f32`] widens `f16` and `bf16` exactly.
//!
//! ## Errors
//!
//! Every failure is one [`Error`]: `Copy`, 48 bytes, no allocation. It
//! carries the wire [`Code`] or the [`Refusal`], the rule broken in words,
//! the byte offset, the tensor index, and where known the numbers
//! ([`Detail`]): bytes needed and available (for a refusal of the caller's
//! buffer too), a count and its cap, the expected and found schema hashes,
//! the tensor's dtype and the one asked for. `Display` gives all of it in
//! one line:
//! `EOF: list count beyond the bytes that remain (needs 64 bytes, 12
//! remain) at byte 8`.
//!
//! ## Where things are
//!
//! The root holds what a program names; a module holds one concern that
//! has more than a few items of its own:
//!
//! | where | concern |
//! |---|---|
//! | [`Reader`], [`Writer`], [`Sink`] (at the root) | bounds-checked reader, the allocation rule, writer and sinks |
//! | [`Encode`], [`Decode`], [`Frozen`] (at the root) | scalars, strings, lists, opts, dicts, structs |
//! | [`Directory`], [`TensorView`], [`TensorSpec`] (at the root) | the tensor directory: parse, views, name index, the canonical builder |
//! | [`CompiledType`], [`Schema`] (at the root) | type text compiled once, and its schema hash |
//! | [`Value`], [`decode_value`], [`encode_value`] (at the root, `inspect`) | dynamic values: one tree, borrowed with spans when decoded, owned when built |
//! | [`frame`] | the 16-byte frame and its schema hash check |
//! | [`stream`] | the same check as bytes arrive, reading only what the rules read: streams, ranges, `embedded-io` |
//! | [`inspect`](mod@inspect) (`inspect`) | the inspection model: value tree, paths, directory and tensor facts |
//! | [`json`] (`inspect`) | the Kiln JSON form of a value, one writer for every tool |
//! | [`order`] | byte order: zero-copy views and swapping copies |
//! | `io_write` (`embedded-io`, `embedded-io-async`) | streaming encode to embedded-io writers |
//! | `envelope` (`envelope`) | a link envelope outside the format: COBS framing and a CRC-32C |
//!
//! ## Features
//!
//! - `alloc`: `Vec`, `String`, `BTreeMap` impls, [`to_vec`], owned payload
//!   copies, [`Value`], [`AlignedBytes`]; includes `inspect`.
//! - `inspect`: the value tree ([`Value`]) and the inspection model
//!   ([`inspect`](mod@inspect)) alone, with an allocator but without the
//!   rest of `alloc` (the browser module's choice, for its size).
//! - `std`: `alloc`, plus [`IoSink`] (any `std::io::Write`) and
//!   [`AlignedBytes::read_file`].
//! - `derive`: `#[derive(Frozen)]` (the kiln-derive crate) implements
//!   [`Frozen`], [`Encode`] and [`Decode`] for a struct with named fields
//!   from its field types.
//! - `defmt`: `defmt::Format` for errors and plain types.
//! - `embedded-io`, `embedded-io-async`: streaming check and decode from an
//!   `embedded-io` 0.6 reader ([`stream::check_from`],
//!   [`stream::decode_from`] and their async twins), payloads handed to a
//!   sink as they arrive, in a scratch buffer the caller sizes.
//! - `no-error-text`: errors keep their code, offset and tensor but
//!   neither the sentence nor the numbers ([`Error::fault`] is empty,
//!   [`Error::detail`] is [`Detail::None`]; the error is three words on a
//!   32-bit microcontroller), for firmware short of flash (the benchmark
//!   table's footprint rows give the saving, with and without a `tensors`
//!   field).
//! - `small-code`: the smaller of two equivalent directory checks (no
//!   one-pass shortcut, unsorted names compared pairwise without an
//!   allocator or scratch, the envelope's CRC without a table): the same
//!   verdicts and codes in less flash, for firmware.
//! - `embedded-io`, `embedded-io-async`: `io_write::to_writer` and
//!   `io_write::to_async_writer` encode to a UART or USB writer with no
//!   buffer for the message.
//! - `envelope`: the `envelope` module, COBS framing and a CRC-32C per
//!   message for byte links (not part of the format, which has no
//!   checksum).

#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::todo,
    clippy::unimplemented
)]

#[cfg(feature = "inspect")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

// `#[derive(Frozen)]`, in the macro namespace next to the trait. Generated
// code names `::kiln_nostd`, which this crate's own tests must resolve too.
#[cfg(feature = "derive")]
pub use kiln_derive::Frozen;
extern crate self as kiln_nostd;

#[cfg(feature = "alloc")]
mod aligned;
mod check;
mod directory;
mod dtype;
mod element;
#[cfg(feature = "envelope")]
pub mod envelope;
mod error;
pub mod frame;
mod frozen;
#[cfg(feature = "inspect")]
pub mod inspect;
#[cfg(any(feature = "embedded-io", feature = "embedded-io-async"))]
pub mod io_write;
#[cfg(feature = "inspect")]
pub mod json;
mod limits;
pub mod order;
#[cfg(feature = "inspect")]
mod path;
mod schema;
pub mod stream;
#[cfg(feature = "inspect")]
mod text;
#[cfg(feature = "inspect")]
mod value;
mod walk;
// Elements widened to `f32` for display: the tools' plumbing under
// `TensorView::widen_into`, hidden.
#[doc(hidden)]
pub mod widen;
mod wire;

#[cfg(feature = "alloc")]
pub use aligned::AlignedBytes;
/// The bytemuck crate (1.x): `Pod` casts behind the zero-copy views.
pub use bytemuck;
pub use check::check;
pub use directory::{
    Directory, NameIndex, Payload, Quant, QuantSpec, Shape, TensorIter, TensorSpec, TensorView,
    Tensors,
};
#[cfg(feature = "alloc")]
pub use directory::{NameTable, RepeatedName};
#[doc(hidden)]
pub use dtype::PayloadRule;
pub use dtype::{Dtype, DtypeCode, Width};
pub use element::Element;
pub use error::{Code, Detail, Error, Kind, Refusal, Result};
pub use frozen::{
    encoded_len, framed_len, from_bytes, from_bytes_into, from_bytes_into_with, from_bytes_with,
    from_frame, from_frame_into, from_frame_into_with, from_frame_with, to_frame_slice, to_slice,
    Decode, DictKey, DictView, Empty, Encode, Frozen, Int, ListIter, ListView, PodList, Uint,
};
#[cfg(feature = "alloc")]
pub use frozen::{to_frame_vec, to_vec};
/// The half crate (2.x), whose `f16` and `bf16` are element types (at the
/// root). Hidden: nothing else of it is this crate's API.
#[doc(hidden)]
pub use half;
pub use half::{bf16, f16};
/// The heapless crate (0.9) this crate's fixed-capacity impls are for: use
/// `kiln_nostd::heapless::Vec<T, N>` so that the version always matches.
pub use heapless;
pub use limits::{Framing, Limits, Options, DEFAULT_CAP, WIRE_MAX};
pub use schema::{
    CompiledType, Field, NodeKind, Scalar, Schema, TypeRef, DEFAULT_NODES, MAX_TYPE_NESTING,
    SCHEMA_NODES, TOOL_NODES,
};
#[cfg(feature = "inspect")]
pub use value::{decode_value, encode_value, Value, ValueKind};
#[cfg(feature = "std")]
pub use wire::IoSink;
pub use wire::{CountingSink, Reader, Sink, SliceSink, Writer, MAX_DEPTH};

// The walker: the plumbing under `check`, the value tree and the
// inspection model, which are the public readers. Hidden, still callable:
// the tests, the differential harness and the fuzzers drive it directly.
#[doc(hidden)]
pub use walk::{walk, Ignore, ScalarValue, Span, Visitor};

/// What `#[derive(Frozen)]`'s generated code calls. Not a stable API:
/// a hand-written impl runs its fields inside [`Writer::nested`] and
/// [`Reader::nested`] instead, as a derived one does.
#[doc(hidden)]
pub mod __private {
    pub use crate::frozen::{
        decode_derived, decode_derived_into, decode_struct, decodes_in_place, encode_struct,
    };
}

/// The directory version this crate reads and writes.
#[doc(hidden)]
pub const DIRECTORY_VERSION: u8 = directory::DIRECTORY_VERSION;

/// The four bytes a tensor directory block starts with (`KLNT`): how a
/// tool tells a standalone block from a message before parsing it.
pub const DIRECTORY_MAGIC: [u8; 4] = directory::MAGIC;

/// The README's example, compiled and run with the doc tests.
#[cfg(all(doctest, feature = "derive"))]
#[doc = include_str!("../README.md")]
struct ReadmeExample;
