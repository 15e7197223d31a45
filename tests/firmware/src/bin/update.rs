//! A model update on an nRF51822 (Cortex-M0, 256K flash, 32K RAM; qemu's
//! microbit machine, memory/microbit.x) under qemu: the model, larger than
//! the RAM, arrives over UART0 as enveloped chunks (COBS frames, each with
//! its CRC-32C, src/update.rs), each checked as it streams and written to
//! flash as it arrives (the NVMC, which qemu emulates); once the last chunk
//! is in and the flash reads back with the sent CRC-32C it is marked valid
//! in a flag page; then it is read in place and one tensor is used
//! zero-copy from flash. tests/firmware/update-run.sh sends the transfers
//! (the model from update/make_model.py, the Python reference; the frames
//! from kiln-nostd's `model_transfer` example) and reads the verdict:
//!
//! exit 0  stored, checked, marked valid, used: every weight as sent
//! exit 2  refused before anything was marked valid
//! exit 1  anything else (a fault, a valid flag on a refused model, a
//!         stored model whose values are not the sent ones)

#![no_std]
#![no_main]

use kiln_firmware::nrf51::{IdleTimer, Nvmc, Uart};
use kiln_firmware::update::{Flash, FlashWriter, Receiver, Refused, Stored, VALID};
use kiln_firmware::{entry, exit_failure, exit_success, report, stack};
use kiln_nostd::envelope::{checksum, CHECK_LEN, CHUNK_HEADER_LEN};
use kiln_nostd::{from_bytes_into, CompiledType, Directory, Frozen, Options};

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

/// The flag page: its first word is [`VALID`] once a stored model passed
/// the check, its second the model's length. Then the model region, to the
/// end of the flash.
const FLAG_PAGE: usize = 0x1_FC00;
const MODEL_BASE: usize = 0x2_0000;
const MODEL_SIZE: usize = 0x4_0000 - MODEL_BASE;

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
/// A link quiet this long (microseconds) ends the transfer: a sender that
/// stopped early is refused, not waited for.
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

/// The weights the sender writes: row r, column c.
fn sent_weight(r: usize, c: usize) -> f32 {
    ((r * COLS + c) % 97) as f32 * 0.25 - 12.0
}

/// Reads `len` bytes of flash at `address`.
fn flash_bytes(address: usize, len: usize) -> &'static [u8] {
    // SAFETY: [address, address + len) lies in the on-chip flash, which is
    // memory-mapped and readable; it is outside the program image, and
    // nothing writes it while the slice is used (the program ends first).
    unsafe { core::slice::from_raw_parts(address as *const u8, len) }
}

fn flag() -> (u32, usize) {
    let words = flash_bytes(FLAG_PAGE, 8);
    let word = |i: usize| u32::from_le_bytes([words[i], words[i + 1], words[i + 2], words[i + 3]]);
    (word(0), word(4) as usize)
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

/// Receives one transfer into the model region, a byte at a time as the
/// UART gives them, until the model is stored, refused, or the link is
/// quiet for [`QUIET`].
fn receive<F: Flash>(
    uart: &mut Uart,
    receiver: &mut Receiver<'_, F, MODEL_NODES, MODEL_DEPTH>,
) -> Result<Stored, Refused> {
    let mut quiet = IdleTimer::start(QUIET);
    loop {
        let Some(byte) = uart.read_byte_within(&mut quiet) else {
            return Err(receiver.link_ended());
        };
        if let Some(stored) = receiver.on_link_bytes(&[byte])? {
            return Ok(stored);
        }
    }
}

/// The stored model read back from flash, if its CRC-32C is the sent one.
fn read_back(stored: Stored) -> Result<&'static [u8], Refused> {
    let bytes = flash_bytes(MODEL_BASE, stored.len);
    match checksum(bytes) {
        read if read == stored.digest => Ok(bytes),
        read => Err(Refused::Stored {
            sent: stored.digest,
            read,
        }),
    }
}

/// Reads the valid model in place and uses its weight tensor zero-copy:
/// y = W x + b for x all ones, and every weight against the sent one.
fn use_model(stored: &'static [u8]) -> bool {
    let mut model = Model {
        version: 0,
        layer: Directory::EMPTY,
        note: "",
    };
    if let Err(e) = from_bytes_into(stored, &mut model) {
        report!("stored model unreadable: {e}");
        return false;
    }
    let (Some(weight), Some(bias)) = (model.layer.by_name("weight"), model.layer.by_name("bias"))
    else {
        report!("stored model lacks weight or bias");
        return false;
    };
    let (Ok(w), Ok(b)) = (weight.as_slice::<f32>(), bias.as_slice::<f32>()) else {
        report!("weight or bias not viewable in place");
        return false;
    };
    let in_flash = |p: usize| (MODEL_BASE..MODEL_BASE + MODEL_SIZE).contains(&p);
    let (rows, cols) = match weight.shape().as_slice() {
        [rows, cols] => (*rows as usize, *cols as usize),
        _ => (0, 0),
    };
    let mut ok = in_flash(w.as_ptr() as usize) && rows == ROWS && cols == COLS && b.len() == rows;
    let mut y0 = 0f32;
    let mut sum = 0f32;
    for r in 0..rows.min(b.len()) {
        let row = &w[r * cols..(r + 1) * cols];
        let mut y = b[r];
        for (c, &value) in row.iter().enumerate() {
            if value != sent_weight(r, c) {
                report!(
                    "weight ({r}, {c}) is {value}, not the {} sent",
                    sent_weight(r, c)
                );
                ok = false;
            }
            y += value;
        }
        if r == 0 {
            y0 = y;
        }
        sum += y;
    }
    report!(
        "model version {} ({:?}): weight {rows}x{cols} f32 viewed in flash at {:#x}, y = Wx + b: y[0] = {y0}, sum = {sum}",
        model.version,
        model.note,
        w.as_ptr() as usize
    );
    ok && model.version == 3 && model.note == SENT_NOTE
}

/// Prints the stack's high-water mark, with `measure` (a build without
/// `report`, so that no formatting but this line's takes stack).
fn peak_stack() {
    let used = stack::high_water();
    #[cfg(feature = "measure")]
    semihosting::println!("peak stack: {used} bytes");
    let _ = used;
}

#[entry]
fn main() -> ! {
    stack::paint();
    if image_end() > FLAG_PAGE {
        report!(
            "program image ends at {:#x}, over the flag page",
            image_end()
        );
        exit_failure()
    }
    let Ok(ty) = CompiledType::<MODEL_NODES>::parse(MODEL_TYPE) else {
        report!("the model's type does not compile");
        exit_failure()
    };
    let mut nvmc = Nvmc::take();
    // Whatever was valid before is not once a new transfer starts.
    nvmc.erase_page(FLAG_PAGE);
    let mut uart = Uart::receiver();
    let mut frame = [0u8; FRAME];
    let mut scratch = [0u8; SCRATCH];
    let mut receiver = Receiver::new(
        FlashWriter::new(nvmc, MODEL_BASE, MODEL_SIZE),
        &ty,
        Options::BARE,
        &mut frame,
        &mut scratch,
    );
    let verdict = receive(&mut uart, &mut receiver).and_then(read_back);
    let counts = receiver.counts();
    report!(
        "link: {} chunks of at most {CHUNK} bytes taken, {} frames refused by the envelope",
        counts.chunks,
        counts.dropped
    );
    let stored = match verdict {
        Ok(stored) => stored,
        Err(refused) => {
            let (word, _) = flag();
            report!("update refused: {refused}; flag word {word:#010x}");
            peak_stack();
            if word == VALID {
                exit_failure()
            }
            semihosting::process::exit(2)
        }
    };
    report!(
        "checked as it streamed (checker scratch needed: {} of {SCRATCH} bytes), flash CRC-32C as sent",
        counts.scratch_needed
    );
    let mut nvmc = Nvmc::take();
    nvmc.write_word(FLAG_PAGE, VALID);
    nvmc.write_word(FLAG_PAGE + 4, stored.len() as u32);
    report!(
        "stored {} bytes at {MODEL_BASE:#x}, checked, marked valid",
        stored.len()
    );

    // As after a reset: the flag says where a valid model is.
    let ok = match flag() {
        (VALID, len) => use_model(flash_bytes(MODEL_BASE, len)),
        (word, _) => {
            report!("flag word {word:#010x} after marking valid");
            false
        }
    };
    peak_stack();
    if ok {
        report!("update: model used in place");
        exit_success()
    } else {
        report!("update: FAILED");
        exit_failure()
    }
}
