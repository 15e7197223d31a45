//! # kiln-wasm: Kiln files in JavaScript, payloads as typed arrays
//!
//! A wasm-bindgen module over kiln-nostd. JavaScript opens a bare tensor
//! directory, a framed message or a plain message (given its type text),
//! gets the facts of every tensor in every `tensors` field, the message's
//! other values as plain JS values, and each tensor's payload as a typed
//! array over the bytes it already holds.
//!
//! ```js
//! import init, { KilnFile } from "./pkg/kiln_wasm.js";   // www/pkg/, built by scripts/www.sh
//! await init();
//! const bytes = new Uint8Array(await file.arrayBuffer());
//! const kiln = KilnFile.open(bytes, "struct{id:i64,name:str,batch:tensors,}", true);
//! // or KilnFile.openDirectory(bytes), or KilnFile.open(bytes, typeText, false)
//! for (const t of kiln.tensors()) console.log(t.path, t.name, t.dtype, t.shape);
//! const { array, copied } = kiln.view(0);   // e.g. a Float32Array over `bytes.buffer`
//! const shown = kiln.widen(3, 0, 16);       // f16, bf16, f8, e2m1, ... as Float32Array
//! kiln.value();                              // { id: -7n, name: "...", batch: { $tensors: 0, ... } }
//! ```
//!
//! The TypeScript types (`www/pkg/kiln_wasm.d.ts`) are wasm-bindgen's,
//! with the shapes of the plain objects (`TensorInfo`, `DirectoryInfo`,
//! `TensorView`, `FileHeader`, `KilnValue`, `KilnError`) added through a
//! `typescript_custom_section` and `unchecked_return_type`, so no
//! hand-written `.d.ts` is needed.
//!
//! ## Where the file's bytes live: the caller's `ArrayBuffer`
//!
//! The bytes stay in the caller's own buffer (the `ArrayBuffer` that
//! `File.arrayBuffer()` or `fetch` gave it), and every view is a typed
//! array over that buffer. Only what the checker reads is copied into
//! wasm memory for the check ([`mod@open`]): the bytes outside tensor
//! payloads, the alignment gaps, `bool` payloads and each payload's last
//! byte. The other payload bytes are never copied: checking a 256 MiB
//! model copies 64 KiB. (The check runs over a zero-filled stand-in of
//! the file's length in wasm memory, freed when `open` returns; its pages
//! are reused by the next open.)
//!
//! The other choice, copying the file into wasm memory, was rejected for
//! two reasons:
//!
//! - **Staleness.** When wasm memory grows (any allocation can grow it),
//!   its `ArrayBuffer` is detached and every typed array over it silently
//!   becomes empty. A view over the caller's buffer does not depend on
//!   wasm memory at all: it stays valid for as long as the caller keeps
//!   the buffer, across any number of calls and any growth.
//! - **Memory.** The file would sit in wasm memory (which never shrinks)
//!   in addition to the copy the page read from disk.
//!
//! The one way a view can go stale is the caller's own: transferring or
//! detaching its buffer (`postMessage` with a transfer list,
//! `ArrayBuffer.prototype.transfer`). Every call checks that the buffer
//! still has the file's length and throws `code: "Detached"` otherwise,
//! rather than hand out an empty array. Display conversions
//! ([`KilnFile::widen`]) return arrays in JS memory, never views of wasm
//! memory.
//!
//! ## Zero copy, and when it is a copy
//!
//! A payload's offset is a multiple of 64 from the start of its
//! directory, but the directory may sit anywhere in a message (after a
//! string of odd length, say). A JS typed array needs its byte offset to
//! be a multiple of its element size, so a payload whose *absolute*
//! offset is misaligned for its element type is copied into a new typed
//! array; the result says which happened (`copied`, `reason`).
//!
//! ## Display conversions
//!
//! [`KilnFile::widen`] turns a range of elements of any closed dtype into
//! `f32` for display, through [`kiln_nostd::widen`]. Kiln stores bits and
//! never dequantizes: no scale tensor is applied.
//!
//! ## Errors
//!
//! Every failure is thrown as a JS `Error` whose `code` is one of the
//! eight wire codes (`EOF`, `TYPE`, ...) or the name of a refusal
//! (`BadTypeText`, `Misaligned`, `Detached`, `NoSuchTensor`, ...), with
//! `offset`, the absolute byte offset in the file where the fault was
//! found, when it is known.
//!
//! The Rust logic is in plain functions ([`open()`]) that the host tests
//! run; the `#[wasm_bindgen]` layer ([`KilnFile`]) only converts.
//!
//! ## Size
//!
//! The module must stay under 64 KiB after `wasm-opt -Oz` (scripts/www.sh
//! checks it); it is about 57 KiB. What keeps it there: the crate is an
//! rlib, and scripts/www.sh links the module with `cargo rustc
//! --crate-type cdylib` under a `wasm-release` profile (opt-level "z",
//! fat LTO, one codegen unit, abort on panic); the browser build (feature
//! `module`) is `no_std` with a panic handler that traps, so no panic
//! message and little of `core::fmt` is linked (std's allocator, dlmalloc,
//! is named explicitly); and messages are built without `format!`. No
//! `unsafe` is needed for any of it.

// The browser module (feature `module`) is no_std: its panic handler traps
// without formatting; every other build (host, tests) has std.
#![cfg_attr(all(feature = "module", target_arch = "wasm32"), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;

// The browser module is no_std, so it names its allocator: dlmalloc, the
// one std itself uses on wasm32.
#[cfg(all(target_arch = "wasm32", feature = "module"))]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

mod js;
pub mod open;

pub use js::KilnFile;
pub use kiln_nostd::inspect::{DirectoryFacts, TensorFacts};
pub use open::{open, Opened, ReadAt, Tensor};

/// A panic traps. Nothing in this crate is meant to panic (every index
/// into input is checked); if something does, the call throws a
/// `RuntimeError: unreachable` in JS and no message is formatted.
#[cfg(all(target_arch = "wasm32", feature = "module"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

/// The wire format version this layer speaks.
pub const WIRE_VERSION: u8 = kiln_nostd::DIRECTORY_VERSION;
