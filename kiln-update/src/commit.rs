//! The rules of the two slots and the two state pages, shared by the
//! blocking and the async updater: which slot an update writes, which page
//! its record goes to, which record is current.

use kiln_nostd::envelope::Decoder;
use kiln_nostd::{CompiledType, Options};

use crate::layout::{Layout, UNIT_MAX};
use crate::plan::{Plan, SlotWriter};
use crate::record::{Record, RECORD_LEN};
use crate::transfer::{LinkCounts, Refused, Transfer};

/// The model in use: where it is in flash and what its record says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Current {
    record: Record,
    page: usize,
    offset: u32,
}

impl Current {
    pub(crate) fn new(record: Record, page: usize, offset: u32) -> Self {
        Current {
            record,
            page,
            offset,
        }
    }

    /// The slot the model is in (0 or 1).
    pub fn slot(&self) -> usize {
        self.record.slot as usize
    }

    /// The model's offset in flash.
    pub fn offset(&self) -> u32 {
        self.offset
    }

    /// The model's length in bytes.
    pub fn len(&self) -> usize {
        self.record.len as usize
    }

    /// Whether the model has no bytes (never: an update refuses an empty
    /// model's transfer, which no Kiln type allows).
    pub fn is_empty(&self) -> bool {
        self.record.len == 0
    }

    /// The model's CRC-32C.
    pub fn digest(&self) -> u32 {
        self.record.digest
    }

    /// How many updates were installed before this one (its record's
    /// sequence; the first is 1).
    pub fn sequence(&self) -> u32 {
        self.record.sequence
    }

    /// The state page that holds its record.
    pub fn state_page(&self) -> usize {
        self.page
    }

    /// The model's bytes, viewed in place in `mapped`: flash as the
    /// processor maps it, `mapped[0]` being the byte at flash offset
    /// `from`. (A chip that maps its flash at address 0 cannot make a slice
    /// that starts there, so a board maps from its layout's first region.)
    /// `None` if `mapped` does not cover the model.
    pub fn bytes<'f>(&self, mapped: &'f [u8], from: u32) -> Option<&'f [u8]> {
        let start = (self.offset as usize).checked_sub(from as usize)?;
        mapped.get(start..start.checked_add(self.len())?)
    }
}

/// A model installed: checked as it streamed, read back, recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Installed {
    /// The model now current.
    pub current: Current,
    /// What the transfer saw of the link.
    pub counts: LinkCounts,
}

/// The slot an update writes: the one the current model is not in.
pub(crate) fn target_slot(current: Option<&Current>) -> usize {
    current.map_or(0, |c| 1 - c.slot())
}

/// The records of the two state pages, the newer first.
pub(crate) fn newest_first(records: [Option<Record>; 2]) -> impl Iterator<Item = (usize, Record)> {
    let mut pages = [(0, records[0]), (1, records[1])];
    if let [(_, Some(a)), (_, Some(b))] = pages {
        if b.is_newer_than(&a) {
            pages.swap(0, 1);
        }
    }
    pages
        .into_iter()
        .filter_map(|(page, record)| record.map(|r| (page, r)))
}

/// Whether a record describes a model inside its slot under `layout`.
pub(crate) fn fits(record: &Record, layout: &Layout) -> bool {
    record.slot_offset == layout.slot(record.slot as usize) && record.len <= layout.slot_size()
}

/// The record that makes a model in `slot` current, and the state page it
/// goes to: the one the current record is not on, so erasing it cannot
/// tear the record in use.
pub(crate) fn next_record(
    current: Option<&Current>,
    slot: usize,
    len: u32,
    digest: u32,
    offset: u32,
) -> (usize, Record) {
    let page = current.map_or(0, |c| 1 - c.state_page());
    let record = Record {
        sequence: current.map_or(1, |c| c.sequence().wrapping_add(1)),
        slot: slot as u8,
        len,
        digest,
        slot_offset: offset,
    };
    (page, record)
}

/// The record's bytes padded with the erased value to whole write units,
/// and that length.
pub(crate) fn record_bytes(record: &Record, write_size: usize) -> ([u8; UNIT_MAX], usize) {
    let mut bytes = [0xFF; UNIT_MAX];
    bytes[..RECORD_LEN].copy_from_slice(&record.encode());
    (bytes, RECORD_LEN.div_ceil(write_size) * write_size)
}

/// A chunk's flash operations, and whether it completed the model (its
/// length and CRC-32C).
pub(crate) type Step<'s> = (Plan<'s>, Option<(u32, u32)>);

/// An update without its flash: the envelope's decoder, the transfer, the
/// slot's writer and the slots' rules. The blocking and the async updater
/// run its plans on their flash.
pub(crate) struct Session<'a, const N: usize, const D: usize> {
    pub layout: Layout,
    pub current: Option<Current>,
    pub target: usize,
    frames: Decoder<'a>,
    pub transfer: Transfer<'a, N, D>,
    writer: SlotWriter,
    pub ended: bool,
}

impl<'a, const N: usize, const D: usize> Session<'a, N, D> {
    pub fn new(
        layout: Layout,
        current: Option<Current>,
        write_size: usize,
        ty: &'a CompiledType<'static, N>,
        options: Options,
        frame: &'a mut [u8],
        scratch: &'a mut [u8],
    ) -> Self {
        let target = target_slot(current.as_ref());
        Session {
            writer: SlotWriter::new(layout.slot(target), write_size, layout.erase_size()),
            layout,
            current,
            target,
            frames: Decoder::new(frame),
            transfer: Transfer::new(ty, options, scratch, layout.slot_size()),
            ended: false,
        }
    }

    /// Feeds link bytes to the envelope up to the end of the next frame:
    /// the bytes used, and if the frame held a chunk, its step or the
    /// refusal (which ends the session).
    pub fn next(&mut self, bytes: &[u8]) -> (usize, Option<Result<Step<'_>, Refused>>) {
        if self.ended {
            return (bytes.len(), Some(Err(Refused::Ended)));
        }
        let (used, event) = self.frames.feed(bytes);
        let step = match event {
            None => None,
            Some(Err(e)) => {
                self.transfer.dropped(e);
                None
            }
            Some(Ok(message)) => Some(match self.transfer.take(message) {
                Ok(taken) => {
                    self.ended |= taken.complete.is_some();
                    Ok((self.writer.plan(taken.bytes), taken.complete))
                }
                Err(refused) => {
                    self.ended = true;
                    Err(refused)
                }
            }),
        };
        (used, step)
    }

    /// The operations that store the last partial unit.
    pub fn finish(&mut self) -> Plan<'_> {
        self.writer.finish()
    }

    /// The record that makes the received model current, its state page's
    /// offset, and its bytes padded to whole write units.
    pub fn record(
        &self,
        len: u32,
        digest: u32,
        write_size: usize,
    ) -> (usize, Record, [u8; UNIT_MAX], usize) {
        let at = self.layout.slot(self.target);
        let (page, record) = next_record(self.current.as_ref(), self.target, len, digest, at);
        let (bytes, padded) = record_bytes(&record, write_size);
        (page, record, bytes, padded)
    }
}

/// `len` rounded up to whole read units.
pub(crate) fn read_len(len: usize, read_size: usize) -> usize {
    len.div_ceil(read_size) * read_size
}

/// The record in the first bytes of a read buffer.
pub(crate) fn decode_record(buf: &[u8; UNIT_MAX]) -> Option<Record> {
    let mut bytes = [0u8; RECORD_LEN];
    bytes.copy_from_slice(&buf[..RECORD_LEN]);
    Record::decode(&bytes)
}
