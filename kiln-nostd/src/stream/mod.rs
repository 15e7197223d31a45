//! Checking a message as it arrives, reading only what the rules read.
//!
//! [`Checker`] runs [`crate::check()`]'s rules on bytes pushed to it in
//! any pieces, with state bounded by the depth limit and bytes held only in
//! a scratch buffer the caller provides; it says what it needs next
//! ([`Need`]): bytes the rules read, payload bytes they never read (which
//! a reader by ranges skips and a streaming reader passes to its sink), or
//! the input's end. Its verdict, error code and offset are those of the
//! whole-buffer check. [`scratch_for`] gives the exact scratch a message
//! needs, from its bytes. docs/streaming.md in the repository describes the
//! design and the scratch it needs.

mod checker;
#[cfg(feature = "embedded-io")]
mod io;
mod scratch;
mod source;

pub use checker::{Checker, Need, Part, Paused, Report, Step};
#[cfg(feature = "embedded-io")]
pub use io::{check_from, decode_from, Discard, PayloadSink, ReadError};
#[cfg(feature = "embedded-io-async")]
pub use io::{check_from_async, decode_from_async};
pub use scratch::{scratch_bound, scratch_for, Scratch};
pub use source::{check_at, ReadAt};
