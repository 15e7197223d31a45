//! Kiln for JavaScript. The wasm-bindgen layer lands with its own issue; for
//! now this crate only proves that the core links into it.

#![forbid(unsafe_code)]

/// The wire format version this layer speaks.
pub const WIRE_VERSION: u8 = kiln_nostd::DIRECTORY_VERSION;
