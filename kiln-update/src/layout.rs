//! Where the update keeps things in flash: two state pages and two model
//! slots, each on erase-page boundaries, checked once against the flash's
//! sizes so that no later operation can be misaligned or out of bounds.

use core::fmt;
use core::ops::Range;

use embedded_storage::nor_flash::NorFlash;

/// The largest write and read unit the updater supports: its staging and
/// read-back buffers are this long (two of them, on the stack of the call
/// that owns the updater). NOR flashes write 1 to 32 bytes at a time.
pub const UNIT_MAX: usize = 64;

/// Two state pages and two slots of one size, each starting on an erase
/// page and not overlapping, inside the flash.
///
/// The state pages alternate: each update writes its record to the page
/// that does not hold the current one, so erasing that page (the step a
/// power cut can tear) never touches the record in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Layout {
    state: [u32; 2],
    slots: [u32; 2],
    slot_size: u32,
    erase_size: u32,
}

/// Why a layout does not fit a flash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum LayoutError {
    /// A region does not start on an erase page, or the slot size is not a
    /// whole number of erase pages.
    Unaligned {
        /// The offending offset or size.
        value: u32,
        /// The flash's erase page.
        erase_size: u32,
    },
    /// A region runs past the end of the flash.
    OutOfFlash {
        /// Where the region ends.
        end: u64,
        /// The flash's capacity.
        capacity: u64,
    },
    /// Two regions share bytes.
    Overlap,
    /// The slot size is zero.
    EmptySlot,
    /// The flash's write or read unit is larger than [`UNIT_MAX`], or does
    /// not divide it or the erase page.
    Unit {
        /// The flash's write or read unit.
        unit: usize,
    },
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::Unaligned { value, erase_size } => write!(
                f,
                "{value:#x} is not on an erase page of {erase_size} bytes"
            ),
            LayoutError::OutOfFlash { end, capacity } => write!(
                f,
                "a region ends at {end:#x}, past the flash's {capacity:#x} bytes"
            ),
            LayoutError::Overlap => f.write_str("two regions of the layout overlap"),
            LayoutError::EmptySlot => f.write_str("the slots have no bytes"),
            LayoutError::Unit { unit } => write!(
                f,
                "the flash's {unit}-byte unit does not divide the updater's {UNIT_MAX}"
            ),
        }
    }
}

impl core::error::Error for LayoutError {}

impl Layout {
    /// The regions back to back from `base`: state page 0, state page 1,
    /// slot 0, slot 1 (`slot_size` bytes each).
    pub fn contiguous<F: NorFlash>(
        flash: &F,
        base: u32,
        slot_size: u32,
    ) -> Result<Self, LayoutError> {
        let page = F::ERASE_SIZE as u64;
        let at = |n: u64| u32::try_from(u64::from(base) + n).unwrap_or(u32::MAX);
        let slot0 = 2 * page;
        let slot1 = slot0 + u64::from(slot_size);
        Self::new(flash, [at(0), at(page)], [at(slot0), at(slot1)], slot_size)
    }

    /// A layout of regions where the product wants them.
    pub fn new<F: NorFlash>(
        flash: &F,
        state: [u32; 2],
        slots: [u32; 2],
        slot_size: u32,
    ) -> Result<Self, LayoutError> {
        for unit in [F::WRITE_SIZE, F::READ_SIZE] {
            if unit == 0
                || unit > UNIT_MAX
                || !UNIT_MAX.is_multiple_of(unit)
                || !F::ERASE_SIZE.is_multiple_of(unit)
            {
                return Err(LayoutError::Unit { unit });
            }
        }
        let erase_size = u32::try_from(F::ERASE_SIZE).unwrap_or(u32::MAX);
        if slot_size == 0 {
            return Err(LayoutError::EmptySlot);
        }
        let layout = Layout {
            state,
            slots,
            slot_size,
            erase_size,
        };
        let regions = layout.regions();
        for region in &regions {
            for value in [region.start as u32, (region.end - region.start) as u32] {
                if erase_size == 0 || !value.is_multiple_of(erase_size) {
                    return Err(LayoutError::Unaligned { value, erase_size });
                }
            }
            if region.end > flash.capacity() as u64 {
                return Err(LayoutError::OutOfFlash {
                    end: region.end,
                    capacity: flash.capacity() as u64,
                });
            }
        }
        for (i, a) in regions.iter().enumerate() {
            if regions[i + 1..]
                .iter()
                .any(|b| a.start < b.end && b.start < a.end)
            {
                return Err(LayoutError::Overlap);
            }
        }
        Ok(layout)
    }

    /// The four regions in 64 bits (no sum can wrap).
    fn regions(&self) -> [Range<u64>; 4] {
        let region = |start: u32, len: u32| u64::from(start)..u64::from(start) + u64::from(len);
        [
            region(self.state[0], self.erase_size),
            region(self.state[1], self.erase_size),
            region(self.slots[0], self.slot_size),
            region(self.slots[1], self.slot_size),
        ]
    }

    /// The offset of state page `page` (0 or 1).
    pub fn state_page(&self, page: usize) -> u32 {
        self.state[page & 1]
    }

    /// The offset of slot `slot` (0 or 1).
    pub fn slot(&self, slot: usize) -> u32 {
        self.slots[slot & 1]
    }

    /// Bytes in each slot: the largest model an update takes.
    pub fn slot_size(&self) -> u32 {
        self.slot_size
    }

    /// The flash's erase page, as the layout was checked against.
    pub fn erase_size(&self) -> u32 {
        self.erase_size
    }
}
