//! # kiln-update: a Kiln model update a product can ship
//!
//! A microcontroller that runs on a Kiln model (weights, a lookup table, a
//! configuration) gets a new one over a byte link (a UART, a radio) and
//! keeps it in flash, larger than its RAM. This crate is that update, with
//! no allocator, over `embedded-storage`'s [`NorFlash`]
//! (and `embedded-storage-async`'s, with the feature of that name):
//!
//! - **two slots**: the new model is written to the slot not in use; the
//!   old one stays current until the new one is whole;
//! - **checked as it streams**: the link's bytes go through kiln-nostd's
//!   envelope (COBS frames, each with its CRC-32C, carrying chunks in
//!   order) and its streaming checker, so a model that is not a valid
//!   value of its type is refused at its first bad byte;
//! - **made current by one record**: once the slot reads back with the
//!   sent CRC-32C, a 32-byte state record (sequence, slot, length, CRC,
//!   its own CRC) is written to the state page that does not hold the
//!   current record. A power cut at any point leaves the old record or the
//!   new one intact, so the device always boots with the old model or the
//!   new one ([`boot`]);
//! - **read in place**: [`Current::bytes`] is the model in the
//!   memory-mapped flash, for `kiln_nostd::from_bytes` and tensor views.
//!
//! Why a crate of its own, not a feature of kiln-nostd: the slot layout and
//! the state record are a product's policy, not the Kiln format, and they
//! bring the `embedded-storage` traits; firmware that only reads Kiln
//! messages does not build them. The format's rules stay in kiln-nostd;
//! this crate calls them.
//!
//! ```
//! # #[cfg(feature = "sim")] fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use kiln_nostd::envelope::{chunks, sealed_len, CHECK_LEN, CHUNK_HEADER_LEN};
//! use kiln_nostd::{CompiledType, Options};
//! use kiln_update::{boot, sim::SimFlash, Layout, Updater};
//!
//! // The board's flash; a layout of two 1 KiB state pages and two 16 KiB slots.
//! let mut flash = SimFlash::<4, 1024>::new(64 * 1024);
//! let layout = Layout::contiguous(&flash, 0, 16 * 1024)?;
//! let current = boot(&mut flash, &layout)?; // None: no model yet
//!
//! // The model's type, and the buffers: one frame, the checker's scratch.
//! static TY: &str = "struct{version:u32,note:str,}";
//! let ty = CompiledType::<4>::parse(TY)?;
//! let mut frame = [0u8; 64 + CHUNK_HEADER_LEN + CHECK_LEN];
//! let mut scratch = [0u8; 64];
//! let mut updater = Updater::<_, 4, 1>::new(
//!     &mut flash, layout, current, &ty, Options::BARE, &mut frame, &mut scratch,
//! );
//!
//! // What the link delivers: the model in enveloped chunks.
//! let model = [3, 0, 0, 0, 5, 0, 0, 0, b'h', b'e', b'l', b'l', b'o'];
//! let mut installed = None;
//! for chunk in chunks(&model, 64)? {
//!     let mut out = [0u8; sealed_len(64 + CHUNK_HEADER_LEN)];
//!     installed = updater.on_link_bytes(chunk.seal(&mut out)?)?;
//! }
//! assert!(installed.is_some());
//!
//! // At the next boot: the model, in place.
//! let current = boot(&mut flash, &layout)?.expect("a model");
//! assert_eq!(current.bytes(flash.bytes(), 0), Some(&model[..]));
//! # Ok(()) }
//! # #[cfg(not(feature = "sim"))] fn main() {}
//! ```
//!
//! The state record ([`record`]) and the flash layout ([`Layout`]) are
//! written out in the modules that own them; `docs/firmware-update.md` of
//! the repository walks through a board's integration and the power-cut
//! test.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod blocking;
mod commit;
mod layout;
mod plan;
pub mod record;
mod transfer;

#[cfg(feature = "embedded-storage-async")]
pub mod asynch;
#[cfg(feature = "sim")]
pub mod sim;

pub use blocking::{boot, Updater};
pub use commit::{Current, Installed};
pub use embedded_storage::nor_flash::NorFlash;
pub use layout::{Layout, LayoutError, UNIT_MAX};
pub use transfer::{LinkCounts, Refused};
