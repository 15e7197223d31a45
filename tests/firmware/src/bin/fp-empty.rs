//! Footprint baseline: the runtime, the panic handler and the exit, with
//! no decoder. The other `fp-*` bins are measured over this one.

#![no_std]
#![no_main]

use core::hint::black_box;
use cortex_m_rt::entry;
use kiln_firmware::footprint;

#[entry]
fn main() -> ! {
    footprint::start();
    let message = black_box(footprint::kiln_record());
    footprint::finish(black_box(message.len()) == 34)
}
