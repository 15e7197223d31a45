//! The updater and the boot-time reader over `embedded-storage`'s blocking
//! [`NorFlash`].

use embedded_storage::nor_flash::{NorFlash, NorFlashError};
use kiln_nostd::envelope::Checksum;
use kiln_nostd::{CompiledType, Options};

use crate::commit::{self, Current, Installed, Session};
use crate::layout::{Layout, UNIT_MAX};
use crate::plan::Plan;
use crate::record::{Record, RECORD_LEN};
use crate::transfer::{LinkCounts, Refused};

/// The current model, found once at boot: the newer of the two state
/// records whose slot reads back with the record's CRC-32C. `None` on a
/// flash that holds no model yet (or none intact).
///
/// The model's bytes are not run through the Kiln check again: they were
/// checked as they streamed in, and the record was written only after the
/// slot read back with the same CRC-32C, which this call compares again
/// (so a slot changed since, by wear or by hand, is not used). A program
/// that reads the model with `kiln_nostd` runs its view's checks anyway.
pub fn boot<F: NorFlash>(flash: &mut F, layout: &Layout) -> Result<Option<Current>, Refused> {
    let mut records = [None, None];
    for (page, record) in records.iter_mut().enumerate() {
        *record = read_record(flash, layout.state_page(page))?;
    }
    for (page, record) in commit::newest_first(records) {
        if !commit::fits(&record, layout) {
            continue;
        }
        let at = layout.slot(record.slot as usize);
        if slot_digest(flash, at, record.len)? == record.digest {
            return Ok(Some(Current::new(record, page, at)));
        }
    }
    Ok(None)
}

/// Receives one model over a byte link into the slot not in use, checking
/// it as it streams, and makes it current once it is whole, read back and
/// recorded. `N` is the compiled type's node count, `D` the deepest
/// nesting of containers the type allows (the checker holds that many).
pub struct Updater<'a, F: NorFlash, const N: usize, const D: usize> {
    flash: F,
    session: Session<'a, N, D>,
}

impl<'a, F: NorFlash, const N: usize, const D: usize> Updater<'a, F, N, D> {
    /// An update of a model of type `ty` (bare or framed as `options`
    /// say), given what [`boot`] found current. `frame` holds one frame's
    /// message: the largest chunk the sender sends, its 12-byte header and
    /// the 4-byte CRC; `scratch` is the streaming checker's (the model's
    /// directory heads and a few bytes).
    pub fn new(
        flash: F,
        layout: Layout,
        current: Option<Current>,
        ty: &'a CompiledType<'static, N>,
        options: Options,
        frame: &'a mut [u8],
        scratch: &'a mut [u8],
    ) -> Self {
        Updater {
            flash,
            session: Session::new(layout, current, F::WRITE_SIZE, ty, options, frame, scratch),
        }
    }

    /// Takes the next bytes from the link, as it delivered them. Returns
    /// the installed model once the last chunk is in, read back and
    /// recorded; `None` while more are due; or why the update is refused
    /// (then the model that was current still is, and the update has
    /// ended).
    pub fn on_link_bytes(&mut self, mut bytes: &[u8]) -> Result<Option<Installed>, Refused> {
        while !bytes.is_empty() {
            let (used, event) = self.session.next(bytes);
            bytes = bytes.get(used..).unwrap_or_default();
            let Some(step) = event else { continue };
            let (plan, complete) = step?;
            run(&mut self.flash, plan).inspect_err(|_| self.session.ended = true)?;
            if let Some((len, digest)) = complete {
                return self.install(len, digest).map(Some);
            }
        }
        Ok(None)
    }

    /// The link went quiet (a receive timeout): why the update ends.
    pub fn link_ended(&mut self) -> Refused {
        self.session.ended = true;
        self.session.transfer.short()
    }

    /// What the updater saw of the link so far.
    pub fn counts(&self) -> LinkCounts {
        self.session.transfer.counts
    }

    /// The slot this update writes.
    pub fn target_slot(&self) -> usize {
        self.session.target
    }

    /// Gives the flash back.
    pub fn into_flash(self) -> F {
        self.flash
    }

    /// The last unit written, the slot read back against the sent CRC-32C,
    /// the record written to the other state page and read back.
    fn install(&mut self, len: u32, digest: u32) -> Result<Installed, Refused> {
        run(&mut self.flash, self.session.finish())?;
        let layout = self.session.layout;
        let at = layout.slot(self.session.target);
        let read = slot_digest(&mut self.flash, at, len)?;
        if read != digest {
            return Err(Refused::Stored { sent: digest, read });
        }
        let (page, record, bytes, padded) = self.session.record(len, digest, F::WRITE_SIZE);
        let page_at = layout.state_page(page);
        flash_op(self.flash.erase(page_at, page_at + layout.erase_size()))?;
        flash_op(self.flash.write(page_at, &bytes[..padded]))?;
        if read_record(&mut self.flash, page_at)? != Some(record) {
            return Err(Refused::Record);
        }
        Ok(Installed {
            current: Current::new(record, page, at),
            counts: self.session.transfer.counts,
        })
    }
}

fn flash_op<E: NorFlashError>(result: Result<(), E>) -> Result<(), Refused> {
    result.map_err(|e| Refused::Flash(e.kind()))
}

/// Runs one plan: the erase, then the writes.
fn run<F: NorFlash>(flash: &mut F, plan: Plan<'_>) -> Result<(), Refused> {
    if let Some((from, to)) = plan.erase {
        flash_op(flash.erase(from, to))?;
    }
    for (at, bytes) in plan.staged.into_iter().chain(plan.body) {
        flash_op(flash.write(at, bytes))?;
    }
    Ok(())
}

/// The record at the start of a state page, if it holds one.
fn read_record<F: NorFlash>(flash: &mut F, at: u32) -> Result<Option<Record>, Refused> {
    let mut buf = [0u8; UNIT_MAX];
    flash_op(flash.read(at, &mut buf[..commit::read_len(RECORD_LEN, F::READ_SIZE)]))?;
    Ok(commit::decode_record(&buf))
}

/// The CRC-32C of the `len` bytes at `at`, read a buffer at a time.
fn slot_digest<F: NorFlash>(flash: &mut F, at: u32, len: u32) -> Result<u32, Refused> {
    let mut buf = [0u8; UNIT_MAX];
    let mut digest = Checksum::new();
    let mut done = 0u32;
    while done < len {
        let want = (len - done).min(UNIT_MAX as u32) as usize;
        flash_op(flash.read(at + done, &mut buf[..commit::read_len(want, F::READ_SIZE)]))?;
        digest.update(&buf[..want]);
        done += want as u32;
    }
    Ok(digest.finish())
}
