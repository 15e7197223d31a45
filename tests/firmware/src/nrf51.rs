//! The nRF51822 peripherals the model update uses, by register (nRF51
//! Series Reference Manual v3.0): UART0 to receive, polled, TIMER0 for the
//! receive timeout, and the NVMC to erase and write the flash. qemu's
//! microbit machine emulates all three, the flash with its NOR rule (a
//! write only clears bits; erased reads 0xFF), the timer on qemu's
//! virtual clock (host time).

use core::ptr::{read_volatile, write_volatile};

use embedded_storage::nor_flash::{
    check_erase, check_read, check_write, ErrorType, NorFlash, NorFlashErrorKind, ReadNorFlash,
};

/// UART0's registers.
mod uart {
    pub const BASE: usize = 0x4000_2000;
    pub const STARTRX: usize = BASE;
    pub const RXDRDY: usize = BASE + 0x108;
    pub const ENABLE: usize = BASE + 0x500;
    pub const PSELRXD: usize = BASE + 0x514;
    pub const RXD: usize = BASE + 0x518;
    pub const BAUDRATE: usize = BASE + 0x524;
    /// ENABLE's value that turns the UART on.
    pub const ENABLED: u32 = 4;
    /// BAUDRATE's value for 115200 baud.
    pub const BAUD_115200: u32 = 0x01D7_E000;
    /// The micro:bit's USB serial RX pin (P0.25).
    pub const RX_PIN: u32 = 25;
}

/// TIMER0's registers.
mod timer {
    pub const BASE: usize = 0x4000_8000;
    pub const START: usize = BASE;
    pub const CLEAR: usize = BASE + 0x00C;
    pub const COMPARE0: usize = BASE + 0x140;
    pub const MODE: usize = BASE + 0x504;
    pub const BITMODE: usize = BASE + 0x508;
    pub const PRESCALER: usize = BASE + 0x510;
    pub const CC0: usize = BASE + 0x540;
    /// MODE: a timer (not a counter of COUNT tasks).
    pub const TIMER: u32 = 0;
    /// BITMODE: 32 bits.
    pub const BITS_32: u32 = 3;
    /// PRESCALER: 16 MHz / 2^4, one tick a microsecond.
    pub const MICROSECONDS: u32 = 4;
}

/// The NVMC's registers.
mod nvmc {
    pub const BASE: usize = 0x4001_E000;
    pub const READY: usize = BASE + 0x400;
    pub const CONFIG: usize = BASE + 0x504;
    pub const ERASEPAGE: usize = BASE + 0x508;
    pub const READ_ONLY: u32 = 0;
    pub const WRITE: u32 = 1;
    pub const ERASE: u32 = 2;
}

/// The Cortex-M0 core's reset request (ARMv6-M Architecture Reference
/// Manual, B3.2.6): AIRCR with its write key and SYSRESETREQ.
mod scb {
    pub const AIRCR: usize = 0xE000_ED0C;
    pub const VECTKEY_SYSRESETREQ: u32 = 0x05FA_0004;
}

/// Resets the board, as a power cut would (RAM is kept on the nRF51, the
/// program starts again from its reset vector). Written by register, not
/// through the cortex-m crate, so this module builds for every core the
/// firmware crate does; it runs only on the micro:bit.
pub fn system_reset() -> ! {
    write_register(scb::AIRCR, scb::VECTKEY_SYSRESETREQ);
    // The reset takes a few cycles to happen.
    loop {
        core::hint::spin_loop();
    }
}

fn write_register(address: usize, value: u32) {
    // SAFETY: `address` is one of the registers above (the nRF51's
    // peripherals, the core's AIRCR), a word-aligned MMIO address; writing
    // it has no effect on memory the program owns.
    unsafe { write_volatile(address as *mut u32, value) }
}

fn read_register(address: usize) -> u32 {
    // SAFETY: as in write_register, for a read.
    unsafe { read_volatile(address as *const u32) }
}

/// UART0 as a byte receiver, polled (no interrupt).
pub struct Uart(());

impl Uart {
    /// Turns UART0 on at 115200 baud and starts receiving.
    pub fn receiver() -> Uart {
        write_register(uart::PSELRXD, uart::RX_PIN);
        write_register(uart::BAUDRATE, uart::BAUD_115200);
        write_register(uart::ENABLE, uart::ENABLED);
        write_register(uart::STARTRX, 1);
        Uart(())
    }

    /// The next byte, or `None` once `quiet` expires first; each byte
    /// that arrives starts `quiet` again.
    pub fn read_byte_within(&mut self, quiet: &mut IdleTimer) -> Option<u8> {
        while read_register(uart::RXDRDY) == 0 {
            if quiet.expired() {
                return None;
            }
        }
        // Clear the event before reading: the read raises it again when
        // more bytes wait.
        write_register(uart::RXDRDY, 0);
        let byte = read_register(uart::RXD) as u8;
        quiet.restart();
        Some(byte)
    }
}

/// TIMER0 as a timeout: expires a fixed time after its last restart.
pub struct IdleTimer(());

impl IdleTimer {
    /// Starts TIMER0, expiring `micros` microseconds from now.
    pub fn start(micros: u32) -> IdleTimer {
        write_register(timer::MODE, timer::TIMER);
        write_register(timer::BITMODE, timer::BITS_32);
        write_register(timer::PRESCALER, timer::MICROSECONDS);
        write_register(timer::CC0, micros);
        let mut quiet = IdleTimer(());
        quiet.restart();
        write_register(timer::START, 1);
        quiet
    }

    /// Counts the time again from zero.
    pub fn restart(&mut self) {
        write_register(timer::CLEAR, 1);
        write_register(timer::COMPARE0, 0);
    }

    /// Whether the time ran out since the last restart.
    pub fn expired(&self) -> bool {
        read_register(timer::COMPARE0) != 0
    }
}

/// The NVMC writing the on-chip flash.
pub struct Nvmc(());

impl Nvmc {
    /// The flash controller (one per chip; the caller keeps it to one).
    pub fn take() -> Nvmc {
        Nvmc(())
    }

    fn wait_ready() {
        while read_register(nvmc::READY) == 0 {}
    }
}

/// The nRF51's flash: 256 KiB from address 0, 1 KiB pages, 4-byte words.
const FLASH_SIZE: usize = 256 * 1024;

impl ErrorType for Nvmc {
    type Error = NorFlashErrorKind;
}

impl ReadNorFlash for Nvmc {
    const READ_SIZE: usize = 1;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), NorFlashErrorKind> {
        check_read(self, offset, bytes.len())?;
        // SAFETY: check_read keeps [offset, offset + len) inside the
        // on-chip flash, which is memory-mapped from address 0 and always
        // readable; the NVMC is idle between operations (each waits for
        // READY), so the bytes are stable.
        let flash =
            unsafe { core::slice::from_raw_parts(offset as usize as *const u8, bytes.len()) };
        bytes.copy_from_slice(flash);
        Ok(())
    }

    fn capacity(&self) -> usize {
        FLASH_SIZE
    }
}

impl NorFlash for Nvmc {
    const WRITE_SIZE: usize = 4;
    const ERASE_SIZE: usize = 1024;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), NorFlashErrorKind> {
        check_erase(self, from, to)?;
        for page in (from..to).step_by(Self::ERASE_SIZE) {
            write_register(nvmc::CONFIG, nvmc::ERASE);
            Self::wait_ready();
            write_register(nvmc::ERASEPAGE, page);
            Self::wait_ready();
            write_register(nvmc::CONFIG, nvmc::READ_ONLY);
        }
        Ok(())
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), NorFlashErrorKind> {
        check_write(self, offset, bytes.len())?;
        write_register(nvmc::CONFIG, nvmc::WRITE);
        for (i, word) in bytes.chunks_exact(4).enumerate() {
            let address = offset as usize + 4 * i;
            let word = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
            Self::wait_ready();
            // SAFETY: check_write keeps the word inside the flash and
            // word-aligned; the update program checks that its layout lies
            // above its own image, so no code is written; with CONFIG at
            // WRITE the NVMC turns the store into a flash write.
            unsafe { write_volatile(address as *mut u32, word) };
        }
        Self::wait_ready();
        write_register(nvmc::CONFIG, nvmc::READ_ONLY);
        Ok(())
    }
}
