//! A simulated NOR flash that can lose power (feature `sim`), for host
//! tests of an update path: erased bytes read 0xFF, a write only clears
//! bits, and after a set number of operations the power goes: that
//! operation is torn (some of its bytes done, one byte half done, the
//! rest untouched) and every later one fails until [`SimFlash::restart`].
//!
//! ```
//! use embedded_storage::nor_flash::NorFlash;
//! use kiln_update::sim::SimFlash;
//!
//! let mut flash = SimFlash::<4, 1024>::new(8 * 1024);
//! flash.cut_power_after(1);
//! flash.erase(0, 1024).unwrap();
//! assert!(flash.write(0, &[0; 16]).is_err()); // torn
//! assert!(flash.write(16, &[0; 4]).is_err()); // no power
//! flash.restart();
//! assert!(flash.bytes()[16..20].iter().all(|&b| b == 0xFF));
//! ```

extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use embedded_storage::nor_flash::{
    check_erase, check_read, check_write, ErrorType, NorFlash, NorFlashError, NorFlashErrorKind,
    ReadNorFlash,
};

/// Why a simulated operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimError {
    /// Misaligned or out of bounds, as `embedded-storage` defines them.
    Args(NorFlashErrorKind),
    /// The power went during or before this operation.
    PowerCut,
}

impl NorFlashError for SimError {
    fn kind(&self) -> NorFlashErrorKind {
        match self {
            SimError::Args(kind) => *kind,
            SimError::PowerCut => NorFlashErrorKind::Other,
        }
    }
}

/// A NOR flash of `W`-byte write units and `E`-byte erase pages in RAM.
#[derive(Clone, Debug)]
pub struct SimFlash<const W: usize = 4, const E: usize = 1024> {
    bytes: Vec<u8>,
    operations: u64,
    cut_after: Option<u64>,
    powered: bool,
    overwrites: u64,
    seed: u64,
}

impl<const W: usize, const E: usize> SimFlash<W, E> {
    /// A flash of `capacity` bytes, erased.
    pub fn new(capacity: usize) -> Self {
        SimFlash {
            bytes: vec![0xFF; capacity],
            operations: 0,
            cut_after: None,
            powered: true,
            overwrites: 0,
            seed: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// Lets `n` more erase or write operations complete; the next is torn
    /// and every one after fails. `seed` picks where the torn one stops.
    pub fn cut_power_after(&mut self, n: u64) {
        self.cut_after = Some(self.operations + n);
    }

    /// Sets what the torn operation's cut point is drawn from.
    pub fn seed(&mut self, seed: u64) {
        self.seed = seed | 1;
    }

    /// Power back on, as after a reset: the bytes are what the cut left,
    /// operations work again, and no cut is set.
    pub fn restart(&mut self) {
        self.powered = true;
        self.cut_after = None;
    }

    /// Erase and write operations so far.
    pub fn operations(&self) -> u64 {
        self.operations
    }

    /// Whether the power went.
    pub fn was_cut(&self) -> bool {
        !self.powered
    }

    /// Writes that reached a byte not erased (a bug in the caller: real
    /// NOR flash ANDs the bits, and the data is wrong).
    pub fn overwrites(&self) -> u64 {
        self.overwrites
    }

    /// The flash as a processor maps it.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The flash, for a test that stores a starting state by hand.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64: deterministic per seed, so a failing cut replays.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed
    }

    /// Counts an operation: `Ok(None)` to run it whole, `Ok(Some(n))` to
    /// tear it after `n` of its `len` bytes, `Err` with no power.
    fn power(&mut self, len: usize) -> Result<Option<usize>, SimError> {
        if !self.powered {
            return Err(SimError::PowerCut);
        }
        let index = self.operations;
        self.operations += 1;
        if self.cut_after == Some(index) {
            self.powered = false;
            let done = (self.next_random() % (len as u64 + 1)) as usize;
            return Ok(Some(done));
        }
        Ok(None)
    }
}

impl<const W: usize, const E: usize> ErrorType for SimFlash<W, E> {
    type Error = SimError;
}

impl<const W: usize, const E: usize> ReadNorFlash for SimFlash<W, E> {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), SimError> {
        if !self.powered {
            return Err(SimError::PowerCut);
        }
        check_read(self, offset, bytes.len()).map_err(SimError::Args)?;
        let at = offset as usize;
        bytes.copy_from_slice(&self.bytes[at..at + bytes.len()]);
        Ok(())
    }

    fn capacity(&self) -> usize {
        self.bytes.len()
    }
}

impl<const W: usize, const E: usize> NorFlash for SimFlash<W, E> {
    const WRITE_SIZE: usize = W;
    const ERASE_SIZE: usize = E;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), SimError> {
        check_erase(self, from, to).map_err(SimError::Args)?;
        let range = from as usize..to as usize;
        match self.power(range.len())? {
            None => self.bytes[range].fill(0xFF),
            Some(done) => {
                // Erased up to the cut; the byte at it has some bits set.
                let cut = range.start + done;
                self.bytes[range.start..cut].fill(0xFF);
                if cut < range.end {
                    let bits = self.next_random() as u8;
                    self.bytes[cut] |= bits;
                }
                return Err(SimError::PowerCut);
            }
        }
        Ok(())
    }

    fn write(&mut self, offset: u32, data: &[u8]) -> Result<(), SimError> {
        check_write(self, offset, data.len()).map_err(SimError::Args)?;
        let at = offset as usize;
        let torn = self.power(data.len())?;
        let done = torn.unwrap_or(data.len());
        for (i, &byte) in data[..done].iter().enumerate() {
            let old = self.bytes[at + i];
            if old != 0xFF {
                self.overwrites += 1;
            }
            self.bytes[at + i] = old & byte;
        }
        if torn.is_some() {
            if done < data.len() {
                // Some of the byte's bits cleared, not all.
                let keep = self.next_random() as u8;
                self.bytes[at + done] &= data[done] | keep;
            }
            return Err(SimError::PowerCut);
        }
        Ok(())
    }
}

// The same flash behind embedded-storage-async's traits: every operation
// completes at once, so an async updater's test needs no executor beyond
// a poll loop.
#[cfg(feature = "embedded-storage-async")]
impl<const W: usize, const E: usize> embedded_storage_async::nor_flash::ReadNorFlash
    for SimFlash<W, E>
{
    const READ_SIZE: usize = 1;

    async fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), SimError> {
        ReadNorFlash::read(self, offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.bytes.len()
    }
}

#[cfg(feature = "embedded-storage-async")]
impl<const W: usize, const E: usize> embedded_storage_async::nor_flash::NorFlash
    for SimFlash<W, E>
{
    const WRITE_SIZE: usize = W;
    const ERASE_SIZE: usize = E;

    async fn erase(&mut self, from: u32, to: u32) -> Result<(), SimError> {
        NorFlash::erase(self, from, to)
    }

    async fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), SimError> {
        NorFlash::write(self, offset, bytes)
    }
}
