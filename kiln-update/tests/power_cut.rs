//! Power cut at every flash operation of an update: for every N from 0 to
//! the update's last operation, the power goes after N operations (the
//! N+1th torn part way), the board restarts, and the boot-time reader
//! must find the old model or the new one current, byte for byte, never
//! neither; then the update runs again and installs the new model.

mod common;

use common::{booted, model, transfer, update};
use kiln_update::sim::SimFlash;
use kiln_update::Layout;

/// One sweep; returns (cuts tried, cuts after which a valid model was
/// current).
fn sweep<const W: usize, const E: usize>(rows: usize, seed: u64) -> (u64, u64) {
    let old = model(2, rows);
    let new = model(3, rows);
    let slot = (new.len() as u32).div_ceil(E as u32) * E as u32;
    let mut factory = SimFlash::<W, E>::new(2 * E + 2 * slot as usize);
    let layout = Layout::contiguous(&factory, 0, slot).unwrap();
    // The device as shipped: the old model installed by an update.
    update(&mut factory, &layout, &transfer(&old), 64).expect("the old model installs");
    let link = transfer(&new);

    // The operations of a whole update, uncut.
    let mut whole = factory.clone();
    let start = whole.operations();
    update(&mut whole, &layout, &link, 97).expect("the new model installs");
    let operations = whole.operations() - start;
    assert_eq!(booted(&mut whole, &layout).unwrap().1, new);

    let (mut tried, mut recovered) = (0, 0);
    for cut in 0..=operations {
        let mut flash = factory.clone();
        flash.seed(seed ^ cut.wrapping_mul(0x2545_F491_4F6C_DD1D));
        flash.cut_power_after(cut);
        let result = update(&mut flash, &layout, &link, 97);
        assert_eq!(
            result.is_ok(),
            cut == operations,
            "cut after {cut} of {operations}"
        );
        flash.restart();
        tried += 1;
        let Some((current, bytes, version)) = booted(&mut flash, &layout) else {
            panic!("cut after {cut} of {operations} operations: no valid model");
        };
        assert!(
            (bytes == old && version == 2) || (bytes == new && version == 3),
            "cut after {cut}: the current model (slot {}) is neither the old nor the new one",
            current.slot()
        );
        if cut == operations {
            assert_eq!(
                bytes, new,
                "the update completed, so the new model is current"
            );
        }
        // After the restart the update runs again, whole, and installs.
        update(&mut flash, &layout, &link, 97).expect("the retried update installs");
        assert_eq!(booted(&mut flash, &layout).unwrap().1, new);
        assert_eq!(
            flash.overwrites(),
            0,
            "a write reached bytes that were not erased"
        );
        recovered += 1;
    }
    (tried, recovered)
}

#[test]
fn power_cut_at_every_operation() {
    let mut tried = 0;
    let mut recovered = 0;
    // The nRF51's flash (4-byte words, 1 KiB pages), an STM32-like one
    // (16-byte units, 2 KiB pages) and a byte-writable one (256 B pages).
    for (t, r) in [
        sweep::<4, 1024>(96, 1),
        sweep::<4, 1024>(96, 2),
        sweep::<16, 2048>(96, 3),
        sweep::<1, 256>(24, 4),
    ] {
        tried += t;
        recovered += r;
    }
    println!(
        "power cuts: {tried} tried, {recovered} recovered, {} without a valid model",
        tried - recovered
    );
    assert_eq!(tried, recovered);
    assert!(
        tried > 100,
        "a sweep of {tried} cuts is too short to mean much"
    );
}
