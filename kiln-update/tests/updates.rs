//! The updater's verdicts: what installs, what is refused, and that a
//! refusal leaves the model that was current.

mod common;

use common::{booted, frames, model, transfer, ty, update, Model, CHUNK, DEPTH, NODES};
use kiln_nostd::envelope::{CHECK_LEN, CHUNK_HEADER_LEN};
use kiln_nostd::Options;
use kiln_update::sim::SimFlash;
use kiln_update::{boot, Layout, LayoutError, Refused, Updater};

type Flash = SimFlash<4, 1024>;

fn device() -> (Flash, Layout) {
    let flash = Flash::new(64 * 1024);
    let layout = Layout::contiguous(&flash, 4096, 16 * 1024).unwrap();
    (flash, layout)
}

#[test]
fn a_fresh_flash_has_no_model() {
    let (mut flash, layout) = device();
    assert_eq!(boot(&mut flash, &layout).unwrap(), None);
}

#[test]
fn updates_alternate_slots_and_state_pages() {
    let (mut flash, layout) = device();
    for version in 1..=5u32 {
        let sent = model(version, 64);
        let installed = update(&mut flash, &layout, &transfer(&sent), 1).unwrap();
        assert_eq!(installed.current.sequence(), version);
        assert_eq!(installed.current.slot(), (version as usize - 1) % 2);
        assert_eq!(installed.current.state_page(), (version as usize - 1) % 2);
        let (current, bytes, got) = booted(&mut flash, &layout).unwrap();
        assert_eq!((current, &bytes, got), (installed.current, &sent, version));
        assert_eq!(current.offset(), layout.slot(current.slot()));
    }
    assert_eq!(flash.overwrites(), 0);
}

#[test]
fn the_model_is_viewed_in_place() {
    let (mut flash, layout) = device();
    let sent = model(7, 64);
    update(&mut flash, &layout, &transfer(&sent), 4096).unwrap();
    let current = boot(&mut flash, &layout).unwrap().unwrap();
    let bytes = current.bytes(flash.bytes(), 0).unwrap();
    let model: Model<'_> = kiln_nostd::from_bytes(bytes).unwrap();
    let weight = model
        .layer
        .by_name("weight")
        .unwrap()
        .as_slice::<f32>()
        .unwrap();
    let in_flash = flash.bytes().as_ptr_range();
    assert!(in_flash.contains(&weight.as_ptr().cast()));
    assert_eq!(weight.len(), 64 * 32);
}

/// Installs version 1, then runs `link` as a second update: it must be
/// refused as `expect` says, and version 1 stay current.
fn refused_keeps_old(link: &[u8], expect: impl Fn(&Refused) -> bool) {
    let (mut flash, layout) = device();
    let old = model(1, 64);
    update(&mut flash, &layout, &transfer(&old), 64).unwrap();
    let refused = update(&mut flash, &layout, link, 33).unwrap_err();
    assert!(expect(&refused), "refused as {refused:?}");
    let (_, bytes, version) = booted(&mut flash, &layout).unwrap();
    assert_eq!((bytes, version), (old, 1));
}

#[test]
fn a_frame_lost_on_the_link_is_refused() {
    let link = transfer(&model(2, 64));
    // Cut a byte out of the second frame: its CRC fails, the third chunk
    // is then out of order.
    let second = link.iter().skip(1).position(|&b| b == 0).unwrap() + 4;
    let mut lost = link.clone();
    lost.remove(second);
    refused_keeps_old(
        &lost,
        |r| matches!(r, Refused::Chunk { expected, dropped: Some(_), .. } if *expected == CHUNK as u32),
    );
}

#[test]
fn a_link_that_stops_is_short() {
    let link = transfer(&model(2, 64));
    refused_keeps_old(&link[..link.len() / 2], |r| {
        matches!(
            r,
            Refused::Short {
                announced: Some(_),
                ..
            }
        )
    });
}

#[test]
fn a_model_larger_than_a_slot_is_refused_at_once() {
    refused_keeps_old(
        &transfer(&model(2, 200)),
        |r| matches!(r, Refused::TooLarge { slot, .. } if *slot == 16 * 1024),
    );
}

#[test]
fn an_invalid_model_with_good_crcs_is_refused_by_the_check() {
    let mut bad = model(2, 64);
    // The note's first byte: not UTF-8.
    let at = bad.len() - "kiln model update".len();
    bad[at] = 0xFF;
    refused_keeps_old(
        &transfer(&bad),
        |r| matches!(r, Refused::Invalid(e) if e.code() == Some(kiln_nostd::Code::Utf8)),
    );
}

#[test]
fn noise_between_frames_is_passed_over() {
    let sent = model(2, 64);
    let mut noisy = vec![0x55, 0x13, 0x00, 0x77];
    for frame in frames(&sent) {
        noisy.extend_from_slice(&frame);
        noisy.extend_from_slice(&[0x42, 0x99]);
    }
    let (mut flash, layout) = device();
    let installed = update(&mut flash, &layout, &noisy, 7).unwrap();
    assert!(installed.counts.dropped > 0);
    assert_eq!(booted(&mut flash, &layout).unwrap().1, sent);
}

#[test]
fn a_slot_changed_after_install_is_not_used() {
    let (mut flash, layout) = device();
    let old = model(1, 64);
    update(&mut flash, &layout, &transfer(&old), 64).unwrap();
    let new = model(2, 64);
    let installed = update(&mut flash, &layout, &transfer(&new), 64).unwrap();
    // A bit of the new model changed, as wear or a stray write would: its
    // CRC no longer matches, so boot falls back to the older record, whose
    // slot still holds the old model.
    let at = installed.current.offset() as usize + 100;
    flash.bytes_mut()[at] ^= 0x01;
    let (_, bytes, version) = booted(&mut flash, &layout).unwrap();
    assert_eq!((bytes, version), (old, 1));
}

#[test]
fn an_ended_updater_takes_nothing_more() {
    let (mut flash, layout) = device();
    let ty = ty();
    let mut frame = [0u8; CHUNK + CHUNK_HEADER_LEN + CHECK_LEN];
    let mut scratch = [0u8; 1024];
    let mut updater = Updater::<_, NODES, DEPTH>::new(
        &mut flash,
        layout,
        None,
        &ty,
        Options::BARE,
        &mut frame,
        &mut scratch,
    );
    assert!(updater
        .on_link_bytes(&transfer(&model(1, 8)))
        .unwrap()
        .is_some());
    assert_eq!(updater.on_link_bytes(&[0]), Err(Refused::Ended));
}

#[test]
fn layouts_that_do_not_fit_are_refused() {
    let flash = Flash::new(64 * 1024);
    assert!(matches!(
        Layout::contiguous(&flash, 100, 16 * 1024),
        Err(LayoutError::Unaligned { value: 100, .. })
    ));
    assert!(matches!(
        Layout::contiguous(&flash, 0, 1000),
        Err(LayoutError::Unaligned { .. })
    ));
    assert!(matches!(
        Layout::contiguous(&flash, 0, 32 * 1024),
        Err(LayoutError::OutOfFlash { .. })
    ));
    assert!(matches!(
        Layout::new(&flash, [0, 1024], [2048, 3072], 2048),
        Err(LayoutError::Overlap)
    ));
    assert!(matches!(
        Layout::contiguous(&flash, 0, 0),
        Err(LayoutError::EmptySlot)
    ));
    assert!(Layout::contiguous(&SimFlash::<128, 4096>::new(65536), 0, 4096).is_err());
}
