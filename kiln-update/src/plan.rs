//! The flash operations that put a model's bytes into a slot, planned
//! without touching the flash, so the blocking and the async updater run
//! the same plan.
//!
//! Bytes arrive in chunks of any length; the flash writes whole units
//! (`WRITE_SIZE`) at unit-aligned offsets into erased bytes. Per chunk the
//! plan is at most: erase the pages the writes reach that are not erased
//! yet, write the unit completed from the bytes staged by the previous
//! chunk, write the whole units of this chunk straight from its bytes.
//! What is left (less than a unit) is staged for the next chunk.

use crate::layout::UNIT_MAX;

/// At most one erase and two writes, in this order.
#[derive(Debug, Default)]
pub(crate) struct Plan<'a> {
    /// Erase `[from, to)`.
    pub erase: Option<(u32, u32)>,
    /// The unit completed across chunks.
    pub staged: Option<(u32, &'a [u8])>,
    /// Whole units from the chunk itself.
    pub body: Option<(u32, &'a [u8])>,
}

/// Where the model's bytes have reached in their slot.
#[derive(Debug)]
pub(crate) struct SlotWriter {
    /// The slot's offset in flash.
    base: u32,
    /// The flash's write unit and erase page.
    unit: usize,
    page: u32,
    /// Bytes taken (staged ones included).
    taken: u32,
    /// Bytes of the slot erased, from its start.
    erased: u32,
    /// The bytes of the next unit that arrived so far.
    staged: [u8; UNIT_MAX],
    staged_len: usize,
    /// A completed unit while its write is planned.
    out: [u8; UNIT_MAX],
}

impl SlotWriter {
    pub fn new(base: u32, unit: usize, page: u32) -> Self {
        SlotWriter {
            base,
            unit,
            page,
            taken: 0,
            erased: 0,
            staged: [0xFF; UNIT_MAX],
            staged_len: 0,
            out: [0xFF; UNIT_MAX],
        }
    }

    /// The operations that store `bytes` after those taken. The caller
    /// keeps the total inside the slot (the transfer refuses a model larger
    /// than the slot at its first chunk).
    pub fn plan<'a>(&'a mut self, mut bytes: &'a [u8]) -> Plan<'a> {
        let unit = self.unit;
        // Offsets from the slot's start.
        let first = self.taken - self.staged_len as u32;
        let mut staged = None;
        if self.staged_len > 0 {
            let take = (unit - self.staged_len).min(bytes.len());
            self.staged[self.staged_len..self.staged_len + take].copy_from_slice(&bytes[..take]);
            self.staged_len += take;
            self.taken += take as u32;
            bytes = &bytes[take..];
            if self.staged_len == unit {
                self.out[..unit].copy_from_slice(&self.staged[..unit]);
                self.staged_len = 0;
                staged = Some(first);
            } else {
                // The chunk ended inside the unit: nothing to write yet.
                return Plan::default();
            }
        }
        let whole = bytes.len() / unit * unit;
        let body_at = self.taken;
        let (body, rest) = bytes.split_at(whole);
        self.taken += whole as u32;
        self.staged[..rest.len()].copy_from_slice(rest);
        self.staged_len = rest.len();
        self.taken += rest.len() as u32;

        let start = staged.unwrap_or(body_at);
        let end = body_at + whole as u32;
        let erase = (end > start).then(|| self.erase_to(end)).flatten();
        Plan {
            erase,
            staged: staged.map(|at| (self.base + at, &self.out[..unit])),
            body: (whole > 0).then_some((self.base + body_at, body)),
        }
    }

    /// The operations that store the last partial unit, padded with the
    /// erased value so the padding programs no bit.
    pub fn finish(&mut self) -> Plan<'_> {
        if self.staged_len == 0 {
            return Plan::default();
        }
        let unit = self.unit;
        let at = self.taken - self.staged_len as u32;
        self.out[..unit].fill(0xFF);
        self.out[..self.staged_len].copy_from_slice(&self.staged[..self.staged_len]);
        self.staged_len = 0;
        let erase = self.erase_to(at + unit as u32);
        Plan {
            erase,
            staged: Some((self.base + at, &self.out[..unit])),
            body: None,
        }
    }

    /// The erase that brings the erased prefix of the slot to `end`, if
    /// it is not there yet.
    fn erase_to(&mut self, end: u32) -> Option<(u32, u32)> {
        if end <= self.erased {
            return None;
        }
        let from = self.erased;
        self.erased = end.div_ceil(self.page) * self.page;
        Some((self.base + from, self.base + self.erased))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs plans on a flash image, checking each write's alignment and
    /// that it lands on erased bytes.
    fn store(chunks: &[&[u8]], unit: usize, page: u32) -> [u8; 4096] {
        let mut flash = [0u8; 4096];
        let mut writer = SlotWriter::new(1024, unit, page);
        let run = |plan: Plan<'_>, flash: &mut [u8; 4096]| {
            if let Some((from, to)) = plan.erase {
                assert!(from.is_multiple_of(page) && to.is_multiple_of(page));
                flash[from as usize..to as usize].fill(0xFF);
            }
            for (at, bytes) in plan.staged.into_iter().chain(plan.body) {
                assert!((at as usize).is_multiple_of(unit) && bytes.len().is_multiple_of(unit));
                let target = &mut flash[at as usize..at as usize + bytes.len()];
                assert!(
                    target.iter().all(|&b| b == 0xFF),
                    "write over unerased bytes at {at}"
                );
                target.copy_from_slice(bytes);
            }
        };
        for chunk in chunks {
            let plan = writer.plan(chunk);
            run(plan, &mut flash);
        }
        let plan = writer.finish();
        run(plan, &mut flash);
        flash
    }

    #[test]
    fn chunks_of_any_length_land_in_order() {
        let model: [u8; 1500] = core::array::from_fn(|i| (i % 251) as u8);
        for unit in [1, 4, 8, 16, 64] {
            for size in [1, 3, 7, 250, 1500] {
                let chunks: [&[u8]; 1500] = core::array::from_fn(|i| {
                    let at = (i * size).min(1500);
                    &model[at..(at + size).min(1500)]
                });
                let flash = store(&chunks, unit, 256);
                assert_eq!(&flash[1024..2524], &model[..], "unit {unit} chunk {size}");
                let padded = 1500usize.div_ceil(unit) * unit;
                assert!(flash[2524..1024 + padded].iter().all(|&b| b == 0xFF));
            }
        }
    }
}
