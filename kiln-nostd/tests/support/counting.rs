//! A counting global allocator whose counts are per thread.
//!
//! Only allocations made by the thread that measures are counted, and only
//! while it measures: the test harness's other threads (its output capture,
//! other tests running in parallel) may allocate whenever they like without
//! changing the figure. A process-global counter (`stats_alloc`) made
//! `tests/allocation.rs` fail about once in ten runs under qemu-ppc64.
//!
//! Used by `kiln-nostd/tests/allocation.rs`, `kiln-convert/tests/allocation.rs`
//! and `kiln-wasm/tests/allocation.rs` (included with `#[path]`).

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// What one measured region allocated.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Allocated {
    /// Allocations (a `realloc` counts as one).
    pub count: u64,
    /// Bytes of every allocation, a `realloc` counting its new size.
    pub bytes: u64,
    /// The largest number of bytes live at once (allocated in the region
    /// and not yet freed).
    pub peak: u64,
}

thread_local! {
    // `const` initialisers: no lazy initialisation, no destructor, and no
    // allocation of their own inside the allocator.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
    static LIVE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

/// The system allocator, counting the measuring thread's allocations.
pub struct Counting;

fn note(allocated: usize, freed: usize) {
    // `try_with`: never panic inside the allocator, even while the
    // thread's locals are being torn down.
    let _ = MEASURING.try_with(|on| {
        if !on.get() {
            return;
        }
        if allocated > 0 {
            COUNT.with(|c| c.set(c.get() + 1));
            BYTES.with(|b| b.set(b.get() + allocated as u64));
        }
        LIVE.with(|live| {
            let now = live.get() + allocated as i64 - freed as i64;
            live.set(now);
            PEAK.with(|p| p.set(p.get().max(now)));
        });
    });
}

// SAFETY: every method forwards to `System` with the caller's own
// arguments, unchanged, so `System`'s guarantees are this allocator's; the
// only other work is updating thread-local `Cell`s, which neither
// allocates nor unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size(), 0);
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size(), 0);
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, layout.size());
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size, layout.size());
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `body` on this thread and returns what it allocated (its result
/// too). Allocations by other threads are not counted.
pub fn measure<T>(body: impl FnOnce() -> T) -> (T, Allocated) {
    COUNT.with(|c| c.set(0));
    BYTES.with(|b| b.set(0));
    LIVE.with(|l| l.set(0));
    PEAK.with(|p| p.set(0));
    MEASURING.with(|m| m.set(true));
    let result = body();
    MEASURING.with(|m| m.set(false));
    let allocated = Allocated {
        count: COUNT.with(Cell::get),
        bytes: BYTES.with(Cell::get),
        peak: PEAK.with(Cell::get).max(0) as u64,
    };
    (result, allocated)
}

/// Bytes `body` allocated on this thread.
pub fn allocated_by(body: impl FnOnce()) -> u64 {
    measure(body).1.bytes
}
