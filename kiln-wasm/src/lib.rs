//! # kiln-wasm: Kiln files in JavaScript, payloads as typed arrays
//!
//! A wasm-bindgen module over kiln-nostd. JavaScript opens a Kiln file (a
//! bare tensor directory, a converted model, a framed message; its type
//! text only when the bytes cannot tell it), gets every tensor's facts in
//! the core's one JSON form (the objects `kiln inspect --json` prints),
//! and each tensor's payload as a typed array over the bytes it already
//! holds.
//!
//! ```js
//! import init, { KilnFile } from "./pkg/kiln_wasm.js";   // www/pkg/, built by scripts/www.sh
//! await init();
//! // A file of any size, read by ranges: `read` returns a promise.
//! const read = (offset, length) => file.slice(offset, offset + length).arrayBuffer().then((b) => new Uint8Array(b));
//! const kiln = await KilnFile.openReader(file.size, read);   // a converted model needs no type
//! for (const t of kiln.tensors()) console.log(t.path, t.name, t.dtype, t.shape);
//! const [at, len] = kiln.elementBytes(3, 0, 16);               // the bytes of 16 elements
//! const shown = kiln.widenBytes(3, await read(at, len), 0, 16); // f16, bf16, f8, e2m1, ... as Float32Array
//! // Or bytes in memory, viewed in place:
//! const mem = KilnFile.open(bytes, { type: "struct{id:i64,name:str,batch:tensors,}" });
//! const { array, copied } = mem.view(0);   // e.g. a Float32Array over `bytes.buffer`
//! ```
//!
//! ## The core module and the inspector's
//!
//! Without features this crate is the *core*: what another page embeds to
//! open a Kiln file (in memory or by ranges), list its directories and
//! tensors, view payloads as typed arrays, widen them for display, and
//! read `peekFrame` and `schemaHash`. The feature `inspector`, enabled
//! only by kiln-wasm-inspect, adds what the inspector alone shows: the
//! whole JSON form with the metadata (`KilnFile.json()`), the tensors as
//! rows made on demand from columns (`tensorRows()`, `tensorColumns()`;
//! the rows are `js/rows.js`, which the page imports too) and the chunked
//! comparison of two tensors (module `compare`, `TensorDiff`).
//!
//! The TypeScript types (`www/pkg/kiln_wasm.d.ts`) are wasm-bindgen's,
//! with the shapes of the plain objects (`TensorInfo`, `DirectoryInfo`,
//! `FileHeader`, `ReadStats`, `OpenOptions`, `TensorView`, `KilnError`)
//! added through a `typescript_custom_section`, so no hand-written
//! `.d.ts` is needed.
//!
//! ## Reading only what the check reads, asynchronously
//!
//! Both opens run the core's sans-I/O opener
//! ([`kiln_nostd::inspect::KilnOpener`]): it names each range its rules
//! read (frame, values outside tensor payloads, each directory's head,
//! alignment gaps, `bool` payloads, packed tails), planned so that a file
//! of thousands of tensors is a few reads, and skips payload interiors,
//! which are never read. `openReader` drives it from JavaScript a step at
//! a time (`KilnOpener`: `next()`, `give()`, `finish()`), awaiting each
//! read, so the same code serves `Blob.slice().arrayBuffer()`, `fetch`
//! with `Range` and `fs.promises`; an `AbortSignal` in the options stops
//! it. Wasm memory holds the checker's scratch (the record image and the
//! largest directory head) and the heads, never a payload.
//!
//! `open` takes bytes already in memory and keeps them in the caller's
//! buffer: every view is a typed array over that buffer, not over wasm
//! memory, so a growth of wasm memory (which detaches its `ArrayBuffer`)
//! never empties a view. The one way a view can go stale is the caller's
//! own: transferring or detaching its buffer; every call checks that the
//! buffer still has the file's length and throws `code: "Detached"`
//! otherwise.
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
//! `KilnFile.widen` turns a range of elements of any closed dtype into
//! `f32` for display, through [`kiln_nostd::widen`]. Kiln stores bits and
//! never dequantizes: no scale tensor is applied.
//!
//! ## Errors
//!
//! Every failure is thrown as a JS `Error` whose `code` is one of the
//! eight wire codes (`EOF`, `TYPE`, ...) or the name of a refusal
//! (`BadTypeText`, `Misaligned`, `Detached`, `NoSuchTensor`, `Aborted`,
//! ...), with `offset`, the absolute byte offset in the file where the
//! fault was found, when it is known.
//!
//! The Rust logic is in plain functions ([`open`]) that the host tests
//! run; the `#[wasm_bindgen]` layer ([`KilnFile`]) only converts.
//!
//! ## Size
//!
//! The core module's budget after `wasm-opt -Oz` is in `scripts/www.sh`
//! (`docs/browser.md` says what its bytes are). What keeps it small:
//!
//! - the core module never reads metadata or writes the value JSON form,
//!   so neither is linked (nor `core::fmt`'s float formatting);
//! - the crate is an rlib, and scripts/www.sh links the module with
//!   `cargo rustc --crate-type cdylib` under a `wasm-release` profile
//!   (opt-level "z", fat LTO, one codegen unit, abort on panic);
//! - the browser build (feature `module`) is `no_std` with a panic
//!   handler that traps, so no panic message is linked;
//! - its allocator is a few hundred bytes of size classes (module `heap`,
//!   the crate's one `unsafe`), not dlmalloc;
//! - the JS imports are few: the global object is one import, not
//!   `js_sys::global`'s four.

// The browser module (feature `module`) is no_std: its panic handler traps
// without formatting; every other build (host, tests) has std.
#![cfg_attr(all(feature = "module", target_arch = "wasm32"), no_std)]
// The one `unsafe` is the browser module's allocator (module `heap`).
#![deny(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;

// The browser module is no_std, so it names its allocator: size classes
// over wasm memory (module `heap`).
#[cfg(all(target_arch = "wasm32", feature = "module"))]
#[global_allocator]
static ALLOCATOR: heap::SizeClasses<heap::Linear> = heap::SizeClasses::new(heap::Linear);

#[cfg(feature = "inspector")]
pub mod compare;
#[cfg(any(test, all(target_arch = "wasm32", feature = "module")))]
#[allow(unsafe_code)]
mod heap;
mod js;
pub mod open;

#[cfg(feature = "inspector")]
pub use compare::{DiffSummary, TensorDiff};
pub use js::{
    drive, error_value, kiln_error, length_of, ranges_value, JsKilnOpener, KilnFile, OpenOptions,
};

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
