//! The converters' readers: safetensors and GGUF files to Kiln, Kiln
//! messages to safetensors and GGUF (the first byte picks the direction).
//! Whatever a reader accepts converts into a message that `check` accepts
//! under the message type, and that message converts back.
#![no_main]

use kiln_convert::{convert, Format, GGUF_MESSAGE, LIMITS, SAFETENSORS_MESSAGE};
use kiln_nostd::{check, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, input)) = data.split_first() else {
        return;
    };
    let (from, to, message) = match selector % 4 {
        0 => (Format::Safetensors, Format::Kiln, SAFETENSORS_MESSAGE),
        1 => (Format::Gguf, Format::Kiln, GGUF_MESSAGE),
        2 => (Format::Kiln, Format::Safetensors, SAFETENSORS_MESSAGE),
        _ => (Format::Kiln, Format::Gguf, GGUF_MESSAGE),
    };
    let mut out = Vec::new();
    let Ok(summary) = convert(from, to, input, &mut out) else {
        return;
    };
    assert_eq!(summary.written, out.len() as u64);
    if to == Format::Kiln {
        if let Err(e) = check(message, &out, Options::FRAMED.with_limits(LIMITS)) {
            panic!("the converter wrote a message check refuses: {e}");
        }
        let mut back = Vec::new();
        if let Err(e) = convert(Format::Kiln, from, &out, &mut back) {
            panic!("a message the converter wrote does not convert back: {e}");
        }
    }
});
