//! `check` (the walker with a visitor that does nothing) and the frame,
//! over every type of `fuzz/types.txt`: nested zero-size types, deep
//! nesting at and past the limit, dicts, `tensors` fields. The same
//! verdict from a table of the default size where the type fits, the
//! frame check's own code when it fails, acceptance kept under wider caps,
//! and type text itself parsed from the bytes.
#![no_main]

use kiln_fuzz::{split, verdict, Ty, Verdict};
use kiln_nostd::{frame, CompiledType, Limits, Options, DEFAULT_NODES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(input) = split(data) else { return };
    let len = input.bytes.len();
    let ty = Ty::parse(input.type_text).expect("types.txt parses");
    let v = verdict(&ty.check(input.bytes, input.options), len);

    if let Ok(small) = CompiledType::<DEFAULT_NODES>::parse(input.type_text) {
        assert_eq!(small.hash(), ty.hash());
        assert_eq!(
            verdict(
                &kiln_nostd::check(input.type_text, input.bytes, input.options),
                len
            ),
            v
        );
    }
    if input.options.is_framed() {
        if let Err(e) = frame::open(input.bytes, ty.hash()) {
            assert_eq!(Some(v), e.code().map(Verdict::Wire), "{e}");
        }
    }
    if v == Verdict::Accept {
        let wide = input.options.with_limits(Limits::uniform(u32::MAX));
        assert_eq!(verdict(&ty.check(input.bytes, wide), len), Verdict::Accept);
    }
    // The bytes as type text: parsing never panics, and a type that parses
    // checks the empty buffer and its own hash without trouble.
    if let Ok(text) = std::str::from_utf8(input.bytes) {
        if let Ok(t) = Ty::parse(text) {
            let _ = t.check(&[], Options::BARE);
            let _ = t.check(&t.hash().to_le_bytes(), Options::FRAMED);
        }
    }
});
