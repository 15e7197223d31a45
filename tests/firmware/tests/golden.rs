//! Every golden case of spec/kiln-v2-cases.json through
//! `kiln_nostd::check` on the emulated Cortex-M3, plus the typed decode of
//! the in-struct message. Run with `cargo test` from tests/firmware.

#![no_std]
#![no_main]

use kiln_firmware as _; // panic and fault handlers, defmt logger

#[defmt_test::tests]
mod tests {
    use kiln_firmware::golden::{by_name, CASES};
    use kiln_firmware::stack;
    use kiln_nostd::{check, from_bytes, Code, Directory, Frozen};

    #[derive(Frozen)]
    struct Batch<'a> {
        id: i64,
        batch: Directory<'a>,
    }

    #[init]
    fn init() {
        stack::paint();
    }

    #[test]
    fn table_has_every_case() {
        defmt::info!("{} golden cases embedded", CASES.len());
        assert!(CASES.len() >= 200);
        for code in Code::ALL {
            assert!(
                CASES.iter().any(|case| case.expect == Some(code)),
                "no case expects {}",
                code
            );
        }
        assert!(CASES.iter().any(|case| case.expect.is_none()));
    }

    #[test]
    fn every_golden_verdict() {
        let mut failed = 0usize;
        for case in CASES {
            let got = check(case.ty, case.bytes, case.options());
            let verdict = match got {
                Ok(()) => None,
                Err(e) => match e.code() {
                    Some(code) => Some(code),
                    None => {
                        defmt::error!("{}: refused instead of a verdict: {}", case.name, e);
                        failed += 1;
                        continue;
                    }
                },
            };
            if verdict == case.expect {
                defmt::debug!("{}: ok", case.name);
            } else {
                defmt::error!("{}: expected {}, got {}", case.name, case.expect, got);
                failed += 1;
            }
        }
        defmt::info!("golden: {} passed, {} failed", CASES.len() - failed, failed);
        assert_eq!(failed, 0);
    }

    #[test]
    fn typed_decode_in_struct() {
        let case = by_name("kiln-v2-in-struct").unwrap();
        let batch: Batch = from_bytes(case.bytes).unwrap();
        assert_eq!(batch.id, 7);
        let mut values = [0f32; 2];
        assert_eq!(batch.batch.get(0).unwrap().copy_into(&mut values), Ok(2));
        assert_eq!(values, [1.0, -2.0]);
    }

    #[test]
    fn stack_use_fits() {
        let used = stack::high_water();
        defmt::info!("stack high-water mark: {} of {} bytes", used, stack::size());
        assert!(used < stack::size() / 2);
    }
}
