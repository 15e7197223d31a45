//! A model update on an nRF51822 (Cortex-M0, 256K flash, 32K RAM; qemu's
//! microbit machine, memory/microbit.x) under qemu, through the
//! `kiln-update` library: two slots and two state pages in the NVMC's
//! flash (its `NorFlash`, src/nrf51.rs). At boot the current model is
//! found; then each transfer on UART0 (enveloped chunks: COBS frames, each
//! with its CRC-32C) is received into the slot not in use, checked as it
//! streams, read back and made current by one state record; the model
//! current at the end is read in place and one tensor used zero-copy from
//! flash. tests/firmware/update-run.sh sends the transfers (the models
//! from update/make_model.py, the Python reference; the frames from
//! kiln-nostd's `model_transfer` example) and reads the verdict:
//!
//! exit 0  every transfer installed; the last model current and used
//! exit 2  a transfer refused, and the model current before it still
//!         current and used (or none, on a flash that had none)
//! exit 1  anything else (a fault, a refused model current, no valid model
//!         where there was one, a model whose values are not the sent ones)
//!
//! With `cut=N` on its semihosting command line, the program resets the
//! board at the Nth flash operation of the second transfer (a write is
//! left half done), as a power cut would; the boot after it reports the
//! model current and uses it.

#![no_std]
#![no_main]

use core::mem::MaybeUninit;

use embedded_storage::nor_flash::{ErrorType, NorFlash, NorFlashErrorKind, ReadNorFlash};
use kiln_firmware::nrf51::{IdleTimer, Nvmc, Uart};
use kiln_firmware::{entry, exit_failure, exit_success, report, stack};
use kiln_nostd::envelope::{CHECK_LEN, CHUNK_HEADER_LEN};
use kiln_nostd::{from_bytes_into, CompiledType, Directory, Frozen, Options};
use kiln_update::{boot, Current, Installed, Layout, Refused, Updater};

/// The model's type, as the sender writes it.
const MODEL_TYPE: &str = "struct{version:u32,layer:tensors,note:str,}";
/// Nodes of MODEL_TYPE's compiled table: `check` would reserve its default
/// 128-node table on the stack (about 11 KB).
const MODEL_NODES: usize = 4;
/// Containers MODEL_TYPE nests: the struct (a `tensors` block is not a
/// container of the depth rule). No value of a type nests deeper than its
/// type text, so a streaming checker that follows this many, not the
/// format's 64, refuses no model of this type, and its state is a few
/// hundred bytes instead of 3.4 KB.
const MODEL_DEPTH: usize = 1;

/// The flash above the program: two state pages, then two 64 KiB slots to
/// the end of the flash.
const STATE_BASE: u32 = 0x1_F800;
const SLOT_SIZE: u32 = 0x1_0000;
const FLASH_END: usize = 0x4_0000;

/// The largest chunk the sender puts in a frame (update-run.sh sends 250:
/// not a multiple of the flash word, so that words span chunks).
const CHUNK: usize = 250;
/// The envelope decoder's buffer: one frame's message (a chunk, its
/// header) and its CRC.
const FRAME: usize = CHUNK + CHUNK_HEADER_LEN + CHECK_LEN;
/// The streaming checker's scratch: the model's directory head (64 bytes
/// of header, 128 per tensor, the names) and a few bytes; the report
/// prints what this model needs.
const SCRATCH: usize = 512;
/// A link quiet this long (microseconds) ends a transfer, or the session
/// between transfers.
const QUIET: u32 = 3_000_000;

/// The note the sender writes after the tensors (its length makes the
/// message end inside a flash word).
const SENT_NOTE: &str = "kiln model update";

/// The model, read in place: everything borrows the stored bytes.
#[derive(Frozen)]
struct Model<'a> {
    version: u32,
    layer: Directory<'a>,
    note: &'a str,
}

/// The weight matrix's shape, as the sender writes it.
const ROWS: usize = 96;
const COLS: usize = 128;

/// The weights the sender writes in model `version` (update/make_model.py):
/// row r, column c.
fn sent_weight(version: u32, r: usize, c: usize) -> f32 {
    let i = r * COLS + c;
    match version {
        2 => (i % 89) as f32 * 0.5 - 20.0,
        _ => (i % 97) as f32 * 0.25 - 12.0,
    }
}

/// The flash of the layout as the processor maps it: from the first state
/// page to the end of the flash.
fn mapped_flash() -> &'static [u8] {
    // SAFETY: the nRF51's 256 KiB of flash are memory-mapped from address
    // 0 and always readable, so [STATE_BASE, 256 KiB) is. The slice is read
    // only between flash operations (an update runs to its end before a
    // model is used), so no byte under it changes while it is read.
    unsafe {
        core::slice::from_raw_parts(
            STATE_BASE as usize as *const u8,
            FLASH_END - STATE_BASE as usize,
        )
    }
}

/// The end of the program's image in flash (text, read-only data and the
/// initial values of .data), from cortex-m-rt's linker symbols.
fn image_end() -> usize {
    extern "C" {
        static __sidata: u8;
        static __sdata: u8;
        static __edata: u8;
    }
    // Only the symbols' addresses are taken (no read).
    let (load, start, end) = (
        core::ptr::addr_of!(__sidata) as usize,
        core::ptr::addr_of!(__sdata) as usize,
        core::ptr::addr_of!(__edata) as usize,
    );
    load + (end - start)
}

/// The power cut of the test: set in RAM that the start-up code does not
/// initialise (`.uninit`), so it survives the board's reset and the boot
/// after it knows a cut happened, and where.
#[link_section = ".uninit.KILN_CUT"]
static mut CUT_MARK: MaybeUninit<[u32; 2]> = MaybeUninit::uninit();
const CUT_MAGIC: u32 = 0x4355_5421;

fn cut_mark() -> Option<u32> {
    // SAFETY: one thread, no interrupt handler touches CUT_MARK; any bit
    // pattern is a valid [u32; 2] (qemu starts RAM at zero; a board's RAM
    // holds garbage, which the magic word tells from a mark).
    let [magic, at] = unsafe {
        core::ptr::addr_of!(CUT_MARK)
            .cast::<[u32; 2]>()
            .read_volatile()
    };
    (magic == CUT_MAGIC).then_some(at)
}

fn set_cut_mark(mark: Option<u32>) {
    let words = match mark {
        Some(at) => [CUT_MAGIC, at],
        None => [0, 0],
    };
    // SAFETY: as in cut_mark; the write is volatile so that it is done
    // before the reset that follows it.
    unsafe {
        core::ptr::addr_of_mut!(CUT_MARK)
            .cast::<[u32; 2]>()
            .write_volatile(words)
    };
}

/// The power-cut point on the command line (`cut=N`), if any.
fn cut_argument() -> Option<u32> {
    #[cfg(feature = "report")]
    {
        let args = semihosting::experimental::env::args::<64>().ok()?;
        for arg in &args {
            let Ok(arg) = arg else { continue };
            if let Some(n) = arg.strip_prefix("cut=") {
                return n.parse().ok();
            }
        }
    }
    None
}

/// The NVMC, counting its erase and write operations; at operation `cut`
/// it resets the board as a power cut would (a write half done first).
struct CutFlash<'f> {
    nvmc: &'f mut Nvmc,
    operations: u32,
    cut: Option<u32>,
}

impl CutFlash<'_> {
    fn operation(&mut self) -> bool {
        let index = self.operations;
        self.operations += 1;
        self.cut == Some(index)
    }

    fn power_cut(&self, what: &str) -> ! {
        report!(
            "power cut at flash operation {} ({what})",
            self.operations - 1
        );
        set_cut_mark(Some(self.operations - 1));
        kiln_firmware::nrf51::system_reset()
    }
}

impl ErrorType for CutFlash<'_> {
    type Error = NorFlashErrorKind;
}

impl ReadNorFlash for CutFlash<'_> {
    const READ_SIZE: usize = Nvmc::READ_SIZE;

    fn read(&mut self, offset: u32, bytes: &mut [u8]) -> Result<(), NorFlashErrorKind> {
        self.nvmc.read(offset, bytes)
    }

    fn capacity(&self) -> usize {
        self.nvmc.capacity()
    }
}

impl NorFlash for CutFlash<'_> {
    const WRITE_SIZE: usize = Nvmc::WRITE_SIZE;
    const ERASE_SIZE: usize = Nvmc::ERASE_SIZE;

    fn erase(&mut self, from: u32, to: u32) -> Result<(), NorFlashErrorKind> {
        if self.operation() {
            self.power_cut("an erase, not begun");
        }
        self.nvmc.erase(from, to)
    }

    fn write(&mut self, offset: u32, bytes: &[u8]) -> Result<(), NorFlashErrorKind> {
        if self.operation() {
            let half = bytes.len() / 8 * 4;
            self.nvmc.write(offset, &bytes[..half])?;
            self.power_cut("a write, half done");
        }
        self.nvmc.write(offset, bytes)
    }
}

/// One transfer through a new updater, a byte at a time as the UART gives
/// them, until the model is installed, refused, or the link is quiet.
fn receive(
    uart: &mut Uart,
    flash: CutFlash<'_>,
    layout: Layout,
    current: Option<Current>,
    ty: &CompiledType<'static, MODEL_NODES>,
) -> (Result<Installed, Refused>, u32) {
    let mut frame = [0u8; FRAME];
    let mut scratch = [0u8; SCRATCH];
    let mut updater = Updater::<_, MODEL_NODES, MODEL_DEPTH>::new(
        flash,
        layout,
        current,
        ty,
        Options::BARE,
        &mut frame,
        &mut scratch,
    );
    let mut quiet = IdleTimer::start(QUIET);
    let result = loop {
        let Some(byte) = uart.read_byte_within(&mut quiet) else {
            break Err(updater.link_ended());
        };
        match updater.on_link_bytes(&[byte]) {
            Ok(None) => {}
            Ok(Some(installed)) => break Ok(installed),
            Err(refused) => break Err(refused),
        }
    };
    let counts = updater.counts();
    report!(
        "link: {} chunks of at most {CHUNK} bytes taken, {} frames refused by the envelope",
        counts.chunks,
        counts.dropped
    );
    (result, updater.into_flash().operations)
}

/// Reads the current model in place and uses its weight tensor zero-copy:
/// y = W x + b for x all ones, and every weight against the sent one.
fn use_model(current: &Current) -> bool {
    let Some(bytes) = current.bytes(mapped_flash(), STATE_BASE) else {
        return false;
    };
    let mut model = Model {
        version: 0,
        layer: Directory::EMPTY,
        note: "",
    };
    if let Err(e) = from_bytes_into(bytes, &mut model) {
        report!("current model unreadable: {e}");
        return false;
    }
    let (Some(weight), Some(bias)) = (model.layer.by_name("weight"), model.layer.by_name("bias"))
    else {
        report!("current model lacks weight or bias");
        return false;
    };
    let (Ok(w), Ok(b)) = (weight.as_slice::<f32>(), bias.as_slice::<f32>()) else {
        report!("weight or bias not viewable in place");
        return false;
    };
    let slot = current.offset() as usize..current.offset() as usize + SLOT_SIZE as usize;
    let (rows, cols) = match weight.shape().as_slice() {
        [rows, cols] => (*rows as usize, *cols as usize),
        _ => (0, 0),
    };
    let mut ok =
        slot.contains(&(w.as_ptr() as usize)) && rows == ROWS && cols == COLS && b.len() == rows;
    let mut sum = 0f32;
    for r in 0..rows.min(b.len()) {
        let row = &w[r * cols..(r + 1) * cols];
        let mut y = b[r];
        for (c, &value) in row.iter().enumerate() {
            if value != sent_weight(model.version, r, c) {
                report!(
                    "weight ({r}, {c}) is {value}, not the {} sent",
                    sent_weight(model.version, r, c)
                );
                ok = false;
            }
            y += value;
        }
        sum += y;
    }
    report!(
        "current: model version {} in slot {} (record {}): weight {rows}x{cols} f32 viewed in flash at {:#x}, y = Wx + b: sum = {sum}",
        model.version,
        current.slot(),
        current.sequence(),
        w.as_ptr() as usize
    );
    ok && matches!(model.version, 2 | 3) && model.note == SENT_NOTE
}

/// Prints the stack's high-water mark, with `measure` (a build without
/// `report`, so that no formatting but this line's takes stack).
fn peak_stack() {
    let used = stack::high_water();
    #[cfg(feature = "measure")]
    semihosting::println!("peak stack: {used} bytes");
    let _ = used;
}

/// Boots as the product would: the current model, used.
fn boot_and_use(nvmc: &mut Nvmc, layout: &Layout) -> Option<Current> {
    match boot(nvmc, layout) {
        Ok(Some(current)) => use_model(&current).then_some(current),
        Ok(None) => {
            report!("current: no model");
            None
        }
        Err(e) => {
            report!("boot: {e}");
            None
        }
    }
}

#[entry]
fn main() -> ! {
    stack::paint();
    if image_end() > STATE_BASE as usize {
        report!(
            "program image ends at {:#x}, over the state pages",
            image_end()
        );
        exit_failure()
    }
    let Ok(ty) = CompiledType::<MODEL_NODES>::parse(MODEL_TYPE) else {
        report!("the model's type does not compile");
        exit_failure()
    };
    let mut nvmc = Nvmc::take();
    let Ok(layout) = Layout::contiguous(&nvmc, STATE_BASE, SLOT_SIZE) else {
        report!("the layout does not fit the flash");
        exit_failure()
    };

    // The boot after a power cut of the test: a valid model must be
    // current, the old or the new one.
    if let Some(at) = cut_mark() {
        set_cut_mark(None);
        report!("restarted after a power cut at flash operation {at} of the second transfer");
        match boot_and_use(&mut nvmc, &layout) {
            Some(_) => {
                report!("update: a valid model after the power cut");
                exit_success()
            }
            None => {
                report!("update: FAILED: no valid model after the power cut");
                exit_failure()
            }
        }
    }
    let cut = cut_argument();

    let mut current = match boot(&mut nvmc, &layout) {
        Ok(current) => current,
        Err(e) => {
            report!("boot: {e}");
            exit_failure()
        }
    };
    let mut uart = Uart::receiver();
    let mut installed = 0u32;
    loop {
        let flash = CutFlash {
            nvmc: &mut nvmc,
            operations: 0,
            cut: cut.filter(|_| installed == 1),
        };
        let (result, operations) = receive(&mut uart, flash, layout, current, &ty);
        match result {
            Ok(new) => {
                installed += 1;
                report!(
                    "transfer {installed}: {} bytes into slot {}, checked as it streamed (checker scratch needed: {} of {SCRATCH} bytes), read back, current as record {} after {operations} flash operations",
                    new.current.len(),
                    new.current.slot(),
                    new.counts.scratch_needed,
                    new.current.sequence()
                );
                if !use_model(&new.current) {
                    report!("update: FAILED: the installed model is not the one sent");
                    exit_failure()
                }
                current = Some(new.current);
            }
            // The link went quiet between transfers: the session is over.
            Err(Refused::Short {
                announced: None, ..
            }) if installed > 0 => break,
            Err(refused) => {
                report!("update refused: {refused}");
                // As after a reset: the model current before the transfer.
                let now = boot_and_use(&mut nvmc, &layout);
                peak_stack();
                if now.map(|c| c.sequence()) == current.map(|c| c.sequence()) {
                    report!("update: the model current before is still current");
                    semihosting::process::exit(2)
                }
                report!("update: FAILED: the current model changed on a refused transfer");
                exit_failure()
            }
        }
    }

    // As after a reset: the record says where the current model is.
    let now = boot_and_use(&mut nvmc, &layout);
    peak_stack();
    if now.is_some() && now == current {
        report!("update: model used in place");
        exit_success()
    } else {
        report!("update: FAILED");
        exit_failure()
    }
}
