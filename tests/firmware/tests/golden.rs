//! The golden suite on the emulated core: every case of
//! spec/kiln-v2-cases.json through `kiln_nostd::check`, then through the
//! typed decoders wherever the case's type has a Rust type here (accepted
//! cases written again must give the same bytes), the typed decode of the
//! in-struct message, and the stack it all took. The same program on every
//! target (`cargo test --target T` from tests/firmware); it reports as
//! plain text over semihosting and exits with status 0 only when every
//! check holds.

#![no_std]
#![no_main]

use kiln_firmware::golden::{by_name, Case, CASES};
use kiln_firmware::{entry, exit_failure, exit_success, report, stack};
use kiln_nostd::{
    check, from_bytes, from_bytes_with, from_frame_with, to_frame_slice, to_slice, Code, Decode,
    Encode,
};

include!("../../../kiln-nostd/tests/support/golden_types.rs");

/// Room to write an accepted case again: the largest case and a frame.
const REWRITE: usize = 4096 + 64;

/// What a typed decode found: the case's verdict, or a fault of the typed
/// path itself (a refusal where the case has a verdict, an accepted value
/// that does not write back the same).
enum Typed {
    Verdict(Option<Code>),
    Refused,
    NotCanonical,
}

fn typed<'a, T: Decode<'a> + Encode>(case: &'a Case, scratch: &mut [u8]) -> Typed {
    let limits = case.options().limits;
    let value: Result<T, _> = if case.framed {
        from_frame_with(case.bytes, limits)
    } else {
        from_bytes_with(case.bytes, limits)
    };
    let value = match value {
        Ok(value) => value,
        Err(e) => {
            return e
                .code()
                .map_or(Typed::Refused, |code| Typed::Verdict(Some(code)))
        }
    };
    let written = if case.framed {
        to_frame_slice(&value, scratch)
    } else {
        to_slice(&value, scratch)
    };
    match written {
        Ok(bytes) if bytes == case.bytes => Typed::Verdict(None),
        _ => Typed::NotCanonical,
    }
}

/// The typed result, or `None` when no Rust type here has that type text.
fn typed_verdict(case: &Case, scratch: &mut [u8]) -> Option<Typed> {
    with_golden_type!(case.ty, typed(case, scratch))
}

/// Every code and an accepted case are in the table.
fn table_has_every_case() -> bool {
    report!("{} golden cases embedded", CASES.len());
    let mut ok = CASES.len() >= 200;
    for code in Code::ALL {
        if !CASES.iter().any(|case| case.expect == Some(code)) {
            report!("no case expects {code:?}");
            ok = false;
        }
    }
    ok && CASES.iter().any(|case| case.expect.is_none())
}

/// `check` gives every case its verdict and code.
fn every_golden_verdict() -> bool {
    let mut failed = 0usize;
    for case in CASES {
        let got = check(case.ty, case.bytes, case.options());
        let verdict = match &got {
            Ok(()) => None,
            Err(e) => match e.code() {
                Some(code) => Some(code),
                None => {
                    report!("{}: refused instead of a verdict: {e}", case.name);
                    failed += 1;
                    continue;
                }
            },
        };
        if verdict != case.expect {
            report!("{}: expected {:?}, got {got:?}", case.name, case.expect);
            failed += 1;
        }
    }
    report!("check: {} passed, {failed} failed", CASES.len() - failed);
    failed == 0
}

/// The typed decoders agree with every case they can express, and cover at
/// least nine cases in ten (only the deeply nested DEPTH probes have no
/// Rust type here).
fn typed_decoders_agree() -> bool {
    let mut scratch = [0u8; REWRITE];
    let (mut covered, mut failed) = (0usize, 0usize);
    for case in CASES {
        let Some(got) = typed_verdict(case, &mut scratch) else {
            if case.ty.matches('<').count() < 63 {
                report!("{}: no typed decoder for {}", case.name, case.ty);
                failed += 1;
            }
            continue;
        };
        covered += 1;
        match got {
            Typed::Verdict(verdict) if verdict == case.expect => {}
            Typed::Verdict(verdict) => {
                report!(
                    "{}: typed: expected {:?}, got {verdict:?}",
                    case.name,
                    case.expect
                );
                failed += 1;
            }
            Typed::Refused => {
                report!("{}: typed: refused instead of a verdict", case.name);
                failed += 1;
            }
            Typed::NotCanonical => {
                report!("{}: typed: written again, not the same bytes", case.name);
                failed += 1;
            }
        }
    }
    report!(
        "typed: {} of {} cases covered, {failed} failed",
        covered,
        CASES.len()
    );
    failed == 0 && covered * 10 >= CASES.len() * 9
}

/// The in-struct message read into its struct, the tensor copied out.
fn typed_decode_in_struct() -> bool {
    let Some(case) = by_name("kiln-v2-in-struct") else {
        return false;
    };
    let Ok(batch) = from_bytes::<IdBatch>(case.bytes) else {
        return false;
    };
    let mut values = [0f32; 2];
    let copied = batch.batch.get(0).map(|t| t.copy_into(&mut values));
    report!("in-struct: id {}, tensor 0 {values:?}", batch.id);
    batch.id == 7 && copied == Some(Ok(2)) && values == [1.0, -2.0]
}

#[entry]
fn main() -> ! {
    let mut ok = true;
    let mut peak = 0;
    for (name, test) in [
        ("table_has_every_case", table_has_every_case as fn() -> bool),
        ("every_golden_verdict", every_golden_verdict),
        ("typed_decoders_agree", typed_decoders_agree),
        ("typed_decode_in_struct", typed_decode_in_struct),
    ] {
        stack::paint();
        let passed = test();
        let used = stack::high_water();
        peak = peak.max(used);
        report!(
            "test {name} ... {} (stack {used} bytes)",
            if passed { "ok" } else { "FAILED" }
        );
        ok &= passed;
    }
    report!("stack high-water mark: {peak} of {} bytes", stack::size());
    // Painted words left at the bottom: the stack never ran into the
    // statics below it (an overflow there would corrupt them silently).
    ok &= peak + 1024 <= stack::size();
    if ok {
        report!("golden suite: all tests passed");
        exit_success()
    } else {
        report!("golden suite: FAILED");
        exit_failure()
    }
}
