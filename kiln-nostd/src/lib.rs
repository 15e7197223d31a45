//! # kiln-nostd: the Kiln v2 codec core
//!
//! Kiln is a positional little-endian encoding for records whose schema the
//! program already knows and which carry numeric arrays. This crate reads
//! and writes it with no allocator: values are borrowed from the caller's
//! buffer or copied into storage whose capacity is in its type, and every
//! claimed count is checked against the bytes that remain before it sizes
//! anything.
//!
//! One module per concern of the format:
//!
//! | module | concern |
//! |---|---|
//! | [`wire`] | bounds-checked reader, the allocation rule, writer and sinks |
//! | [`frozen`] | `Encode`/`Decode` for scalars, strings, lists, opts, dicts, structs |
//! | [`directory`] | the tensor directory: `Directory::parse`, views, the canonical builder |
//! | [`frame`] | the 16-byte frame and its schema hash check |
//! | [`schema`] | type text, schema hash, minimum sizes |
//! | [`order`] | byte order: zero-copy views, swapping copies and writers |
//! | [`check()`] | validating bytes against run-time type text |
//!
//! ## Example
//!
//! One struct both writes and reads a `struct{id:i64,name:str,batch:tensors,}`
//! message; reading borrows everything and allocates nothing.
//!
//! ```
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
//! // Reading: borrowed from `message`.
//! let decoded: Batch = from_bytes(message).unwrap();
//! assert_eq!((decoded.id, decoded.name), (7, "probe"));
//! let w = decoded.batch.by_name("w").unwrap();
//! assert_eq!(w.shape(), &[3]);
//! let mut values = [0f32; 3];
//! w.copy_into(&mut values).unwrap(); // swaps on a big-endian host
//! assert_eq!(values, weights);
//! ```
//!
//! ## Features
//!
//! - `alloc`: `Vec`/`String` impls, `to_vec`, owned payload copies.
//! - `defmt`: `defmt::Format` for errors and plain types.
//! - `derive`: `#[derive(Frozen)]` (the kiln-derive crate) implements
//!   [`Frozen`], [`Encode`] and [`Decode`] for a struct with named fields
//!   from its field types; the example above uses it.

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

#[cfg(feature = "alloc")]
extern crate alloc;

// `#[derive(Frozen)]`, in the macro namespace next to the trait. Generated
// code names `::kiln_nostd`, which this crate's own tests must resolve too.
#[cfg(feature = "derive")]
pub use kiln_derive::Frozen;
extern crate self as kiln_nostd;

mod check;
pub mod directory;
pub mod dtype;
mod error;
pub mod frame;
pub mod frozen;
mod limits;
pub mod order;
pub mod schema;
#[cfg(feature = "alloc")]
pub mod value;
pub mod walk;
pub mod widen;
pub mod wire;

pub use check::check;
pub use directory::{
    Directory, NameIndex, Payload, Quant, QuantSpec, TensorSpec, TensorView, Tensors,
};
pub use dtype::{Dtype, DtypeCode};
pub use error::{Code, Detail, Error, Kind, Refusal, Result};
#[cfg(feature = "alloc")]
pub use frame::to_frame_vec;
pub use frame::{framed_len, from_frame, from_frame_with, to_frame_slice};
#[cfg(feature = "alloc")]
pub use frozen::to_vec;
pub use frozen::{
    decode_struct, encode_struct, encoded_len, from_bytes, from_bytes_with, to_slice, Decode,
    DictView, Empty, Encode, Frozen, Int, ListView, PodList, Uint,
};
pub use half::{bf16, f16};
pub use limits::{Framing, Limits, Options, DEFAULT_CAP, WIRE_MAX};
pub use order::Element;
pub use schema::{CompiledType, Field, Scalar, Schema};
#[cfg(feature = "alloc")]
pub use value::{decode_value, encode_value, Value};
pub use walk::{walk, Visitor};
pub use wire::{CountingSink, Reader, Sink, SliceSink, Writer};

/// The directory version this crate reads and writes.
pub const DIRECTORY_VERSION: u8 = directory::DIRECTORY_VERSION;
