//! The updater and the boot-time reader over `embedded-storage-async`'s
//! [`NorFlash`] (feature `embedded-storage-async`): the same session,
//! plans and records as the blocking ones ([`crate::blocking`]), with each
//! flash operation awaited.

use embedded_storage::nor_flash::NorFlashError;
use embedded_storage_async::nor_flash::NorFlash;
use kiln_nostd::envelope::Checksum;
use kiln_nostd::{CompiledType, Options};

use crate::commit::{self, Current, Installed, Session};
use crate::layout::{Layout, UNIT_MAX};
use crate::plan::Plan;
use crate::record::{Record, RECORD_LEN};
use crate::transfer::{LinkCounts, Refused};

/// The current model, found once at boot; as [`crate::boot`].
pub async fn boot<F: NorFlash>(flash: &mut F, layout: &Layout) -> Result<Option<Current>, Refused> {
    let mut records = [None, None];
    for (page, record) in records.iter_mut().enumerate() {
        *record = read_record(flash, layout.state_page(page)).await?;
    }
    for (page, record) in commit::newest_first(records) {
        if !commit::fits(&record, layout) {
            continue;
        }
        let at = layout.slot(record.slot as usize);
        if slot_digest(flash, at, record.len).await? == record.digest {
            return Ok(Some(Current::new(record, page, at)));
        }
    }
    Ok(None)
}

/// [`crate::Updater`] over an async flash.
pub struct AsyncUpdater<'a, F: NorFlash, const N: usize, const D: usize> {
    flash: F,
    session: Session<'a, N, D>,
}

impl<'a, F: NorFlash, const N: usize, const D: usize> AsyncUpdater<'a, F, N, D> {
    /// As [`crate::Updater::new`].
    pub fn new(
        flash: F,
        layout: Layout,
        current: Option<Current>,
        ty: &'a CompiledType<'static, N>,
        options: Options,
        frame: &'a mut [u8],
        scratch: &'a mut [u8],
    ) -> Self {
        AsyncUpdater {
            flash,
            session: Session::new(layout, current, F::WRITE_SIZE, ty, options, frame, scratch),
        }
    }

    /// As [`crate::Updater::on_link_bytes`].
    pub async fn on_link_bytes(&mut self, mut bytes: &[u8]) -> Result<Option<Installed>, Refused> {
        while !bytes.is_empty() {
            let (used, event) = self.session.next(bytes);
            bytes = bytes.get(used..).unwrap_or_default();
            let Some(step) = event else { continue };
            let (plan, complete) = step?;
            if let Err(refused) = run(&mut self.flash, plan).await {
                self.session.ended = true;
                return Err(refused);
            }
            if let Some((len, digest)) = complete {
                return self.install(len, digest).await.map(Some);
            }
        }
        Ok(None)
    }

    /// As [`crate::Updater::link_ended`].
    pub fn link_ended(&mut self) -> Refused {
        self.session.ended = true;
        self.session.transfer.short()
    }

    /// What the updater saw of the link so far.
    pub fn counts(&self) -> LinkCounts {
        self.session.transfer.counts
    }

    /// Gives the flash back.
    pub fn into_flash(self) -> F {
        self.flash
    }

    async fn install(&mut self, len: u32, digest: u32) -> Result<Installed, Refused> {
        run(&mut self.flash, self.session.finish()).await?;
        let layout = self.session.layout;
        let at = layout.slot(self.session.target);
        let read = slot_digest(&mut self.flash, at, len).await?;
        if read != digest {
            return Err(Refused::Stored { sent: digest, read });
        }
        let (page, record, bytes, padded) = self.session.record(len, digest, F::WRITE_SIZE);
        let page_at = layout.state_page(page);
        flash_op(
            self.flash
                .erase(page_at, page_at + layout.erase_size())
                .await,
        )?;
        flash_op(self.flash.write(page_at, &bytes[..padded]).await)?;
        if read_record(&mut self.flash, page_at).await? != Some(record) {
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

async fn run<F: NorFlash>(flash: &mut F, plan: Plan<'_>) -> Result<(), Refused> {
    if let Some((from, to)) = plan.erase {
        flash_op(flash.erase(from, to).await)?;
    }
    for (at, bytes) in plan.staged.into_iter().chain(plan.body) {
        flash_op(flash.write(at, bytes).await)?;
    }
    Ok(())
}

async fn read_record<F: NorFlash>(flash: &mut F, at: u32) -> Result<Option<Record>, Refused> {
    let mut buf = [0u8; UNIT_MAX];
    flash_op(
        flash
            .read(at, &mut buf[..commit::read_len(RECORD_LEN, F::READ_SIZE)])
            .await,
    )?;
    Ok(commit::decode_record(&buf))
}

async fn slot_digest<F: NorFlash>(flash: &mut F, at: u32, len: u32) -> Result<u32, Refused> {
    let mut buf = [0u8; UNIT_MAX];
    let mut digest = Checksum::new();
    let mut done = 0u32;
    while done < len {
        let want = (len - done).min(UNIT_MAX as u32) as usize;
        flash_op(
            flash
                .read(at + done, &mut buf[..commit::read_len(want, F::READ_SIZE)])
                .await,
        )?;
        digest.update(&buf[..want]);
        done += want as u32;
    }
    Ok(digest.finish())
}
