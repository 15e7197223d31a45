//! The async updater: the same flash operations as the blocking one, so
//! the same flash image, and the same recovery from a power cut.

mod common;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use common::{model, transfer, ty, update, CHUNK, DEPTH, NODES};
use kiln_nostd::envelope::{CHECK_LEN, CHUNK_HEADER_LEN};
use kiln_nostd::Options;
use kiln_update::asynch::{self, AsyncUpdater};
use kiln_update::sim::SimFlash;
use kiln_update::{Installed, Layout, Refused};

/// Polls a future to its end: the simulated flash is always ready.
fn block_on<T>(future: impl Future<Output = T>) -> T {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
    }
}

type Flash = SimFlash<4, 1024>;

fn update_async(flash: &mut Flash, layout: &Layout, link: &[u8]) -> Result<Installed, Refused> {
    block_on(async {
        let current = asynch::boot(flash, layout).await?;
        let ty = ty();
        let mut frame = [0u8; CHUNK + CHUNK_HEADER_LEN + CHECK_LEN];
        let mut scratch = [0u8; 1024];
        let mut updater = AsyncUpdater::<_, NODES, DEPTH>::new(
            &mut *flash,
            *layout,
            current,
            &ty,
            Options::BARE,
            &mut frame,
            &mut scratch,
        );
        for piece in link.chunks(61) {
            if let Some(installed) = updater.on_link_bytes(piece).await? {
                return Ok(installed);
            }
        }
        Err(updater.link_ended())
    })
}

#[test]
fn async_and_blocking_leave_the_same_flash() {
    let mut a = Flash::new(64 * 1024);
    let layout = Layout::contiguous(&a, 0, 16 * 1024).unwrap();
    let mut b = a.clone();
    for version in 1..=3 {
        let link = transfer(&model(version, 64));
        let x = update(&mut a, &layout, &link, 61).unwrap();
        let y = update_async(&mut b, &layout, &link).unwrap();
        assert_eq!(x, y);
        assert_eq!(a.bytes(), b.bytes(), "after update {version}");
        assert_eq!(a.operations(), b.operations());
    }
}

#[test]
fn async_power_cut_leaves_a_valid_model() {
    let mut factory = Flash::new(64 * 1024);
    let layout = Layout::contiguous(&factory, 0, 16 * 1024).unwrap();
    let old = model(1, 64);
    let new = model(2, 64);
    update_async(&mut factory, &layout, &transfer(&old)).unwrap();
    let link = transfer(&new);
    let mut whole = factory.clone();
    let start = whole.operations();
    update_async(&mut whole, &layout, &link).unwrap();
    for cut in 0..=whole.operations() - start {
        let mut flash = factory.clone();
        flash.cut_power_after(cut);
        let _ = update_async(&mut flash, &layout, &link);
        flash.restart();
        let current = block_on(asynch::boot(&mut flash, &layout))
            .unwrap()
            .expect("a model");
        let bytes = current.bytes(flash.bytes(), 0).unwrap();
        assert!(bytes == old || bytes == new, "cut after {cut}");
    }
}
