//! The browser module's allocator (feature `module` on wasm32): blocks of
//! power-of-two sizes, one free list per size, carved from memory the
//! module grows and never returned to it.
//!
//! The module allocates few blocks that matter: the checker's scratch
//! (up to 64 MiB, growing eightfold when too small), the directory heads,
//! a few small ones per tensor (name, shape), and the JSON text of the
//! tensor table, which grows by doubling. Size classes serve that in a
//! few hundred bytes of code, where dlmalloc, a general-purpose
//! allocator, costs the module about 6 KiB. The price is memory: a block
//! is up to twice what was asked, and a freed block is reused only for
//! its own size (the module test checks that opening the same file again
//! takes no more memory). A `realloc`
//! within its block's size keeps the block.
//!
//! Blocks are aligned to their size up to a wasm page (64 KiB), so a block
//! of a size suits every layout of that size; a larger alignment is
//! refused (a null pointer).

use core::alloc::{GlobalAlloc, Layout};
use core::cell::Cell;
use core::ptr;

/// A wasm page: what memory grows by.
pub const PAGE: usize = 64 << 10;

/// The smallest block: room for the free list's link, and the alignment
/// of every small block.
const MIN_BLOCK: usize = 16;

/// Size classes: block sizes 2^0 .. 2^(CLASSES - 1) (those below
/// [`MIN_BLOCK`] are never used).
const CLASSES: usize = usize::BITS as usize;

/// Where fresh memory comes from.
pub trait Memory {
    /// Grows memory by `pages` wasm pages: the address of the first new
    /// byte, or `None` when memory cannot grow.
    fn grow(&self, pages: usize) -> Option<usize>;
}

/// The wasm module's linear memory.
#[cfg(all(target_arch = "wasm32", feature = "module"))]
pub struct Linear;

#[cfg(all(target_arch = "wasm32", feature = "module"))]
impl Memory for Linear {
    fn grow(&self, pages: usize) -> Option<usize> {
        let before = core::arch::wasm32::memory_grow(0, pages);
        // usize::MAX: memory did not grow.
        before.checked_mul(PAGE)
    }
}

/// The allocator: a free list per block size, and the unused end of the
/// memory grown so far.
pub struct SizeClasses<M> {
    /// The first free block of each size (0: none); a free block's first
    /// word is the address of the next.
    free: [Cell<usize>; CLASSES],
    /// The unused memory: `top..end`.
    top: Cell<usize>,
    end: Cell<usize>,
    memory: M,
}

// SAFETY: a wasm32 module built without the `atomics` target feature runs
// on one thread, so the `Cell`s are never reached from two threads at once.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
unsafe impl<M> Sync for SizeClasses<M> {}

impl<M: Memory> SizeClasses<M> {
    /// An allocator that has grown no memory yet.
    pub const fn new(memory: M) -> Self {
        SizeClasses {
            free: [const { Cell::new(0) }; CLASSES],
            top: Cell::new(0),
            end: Cell::new(0),
            memory,
        }
    }

    /// A block of class `class` (2^class bytes): a freed one, or fresh
    /// memory; 0 when memory cannot grow.
    fn take(&self, class: usize) -> usize {
        let Some(head) = self.free.get(class) else {
            return 0;
        };
        let block = head.get();
        if block == 0 {
            let size = 1usize << class;
            return self.fresh(size, size.min(PAGE)).unwrap_or(0);
        }
        // SAFETY: `block` is on the free list of its class: a block this
        // allocator handed out, of at least MIN_BLOCK bytes aligned to at
        // least MIN_BLOCK, that its owner gave back (so nothing else reads
        // or writes it); `give` wrote the next link in its first word.
        head.set(unsafe { ptr::read(block as *const usize) });
        block
    }

    /// Puts `block`, of class `class`, on its free list.
    ///
    /// # Safety
    ///
    /// `block` was handed out by `take(class)` and is no longer used.
    unsafe fn give(&self, block: usize, class: usize) {
        if let Some(head) = self.free.get(class) {
            // SAFETY: the caller gives back a block of this class, which
            // holds at least MIN_BLOCK bytes aligned to at least
            // MIN_BLOCK: room for one aligned word, which nothing else
            // uses now.
            unsafe { ptr::write(block as *mut usize, head.get()) };
            head.set(block);
        }
    }

    /// `size` bytes aligned to `align` (a power of two up to [`PAGE`])
    /// from the unused memory, grown when it is too short.
    fn fresh(&self, size: usize, align: usize) -> Option<usize> {
        let mut start = align_up(self.top.get(), align)?;
        if start.checked_add(size)? > self.end.get() {
            // Enough pages whether or not the new memory follows the old.
            let pages = size.checked_add(align)?.div_ceil(PAGE);
            let base = self.memory.grow(pages)?;
            if base != self.end.get() {
                self.top.set(base);
            }
            self.end.set(base.checked_add(pages.checked_mul(PAGE)?)?);
            start = align_up(self.top.get(), align)?;
        }
        self.top.set(start.checked_add(size)?);
        Some(start)
    }
}

/// `at` rounded up to a multiple of `align` (a power of two).
fn align_up(at: usize, align: usize) -> Option<usize> {
    Some(at.checked_add(align - 1)? & !(align - 1))
}

/// The class of the block that serves `layout`: its size and alignment
/// rounded up to a power of two, at least [`MIN_BLOCK`]; `None` for an
/// alignment above a page or a size no block can have.
fn class_of(layout: Layout) -> Option<usize> {
    if layout.align() > PAGE {
        return None;
    }
    let size = layout.size().max(layout.align()).max(MIN_BLOCK);
    Some(size.checked_next_power_of_two()?.trailing_zeros() as usize)
}

// SAFETY: every block handed out is a distinct range of memory this
// allocator grew (fresh memory is carved once; a freed block returns to
// its class's list and is handed out again only after its owner freed it),
// at least `layout.size()` bytes and aligned to its size up to a page,
// which covers `layout.align()` (alignments above a page are refused).
unsafe impl<M: Memory> GlobalAlloc for SizeClasses<M> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        class_of(layout).map_or(0, |class| self.take(class)) as *mut u8
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class_of(layout) else {
            return ptr::null_mut();
        };
        let top = self.top.get();
        let block = self.take(class) as *mut u8;
        // Fresh memory (carved from the unused end, which then moved) is
        // zero: wasm memory grows zeroed, and nothing was carved from it
        // before. A reused block is not.
        if self.top.get() == top && !block.is_null() {
            // SAFETY: `block` was just handed out for `layout`: at least
            // `layout.size()` writable bytes that nothing else uses.
            unsafe { ptr::write_bytes(block, 0, layout.size()) };
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        if let Some(class) = class_of(layout) {
            // SAFETY: the caller gives back a block allocated for
            // `layout`, which `alloc` served from this class.
            unsafe { self.give(block as usize, class) };
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees that `new_size`, rounded up to
        // `layout.align()`, does not overflow isize.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if class_of(new).is_some() && class_of(new) == class_of(layout) {
            return block;
        }
        // SAFETY: `new` has a nonzero size (the caller's guarantee) and
        // the alignment of a valid layout.
        let moved = unsafe { self.alloc(new) };
        if !moved.is_null() {
            // SAFETY: both blocks are live, distinct, and hold at least
            // the smaller of the two sizes; the old one is given back
            // once its bytes are copied.
            unsafe {
                ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                self.dealloc(block, layout);
            }
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory over a host buffer: `pages` wasm pages, page-aligned, handed
    /// out in order; with `gap`, a page is skipped between growths (memory
    /// that does not follow the old).
    struct HostMemory {
        base: usize,
        pages: usize,
        used: Cell<usize>,
        gap: bool,
        _buffer: Vec<u8>,
    }

    impl HostMemory {
        fn new(pages: usize, gap: bool) -> Self {
            let buffer = vec![0u8; (pages + 1) * PAGE];
            let base = align_up(buffer.as_ptr() as usize, PAGE).unwrap();
            HostMemory {
                base,
                pages,
                used: Cell::new(0),
                gap,
                _buffer: buffer,
            }
        }
    }

    impl Memory for HostMemory {
        fn grow(&self, pages: usize) -> Option<usize> {
            let at = self.used.get() + usize::from(self.gap && self.used.get() > 0);
            if at + pages > self.pages {
                return None;
            }
            self.used.set(at + pages);
            Some(self.base + at * PAGE)
        }
    }

    /// A small deterministic generator.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    struct Live {
        at: *mut u8,
        layout: Layout,
        fill: u8,
    }

    fn intact(block: &Live) -> bool {
        // SAFETY: a live block of `layout.size()` bytes, written by the test.
        let bytes = unsafe { core::slice::from_raw_parts(block.at, block.layout.size()) };
        bytes.iter().all(|&b| b == block.fill)
    }

    fn fill(block: &Live) {
        // SAFETY: as in `intact`.
        unsafe { ptr::write_bytes(block.at, block.fill, block.layout.size()) };
    }

    /// Random allocations, frees, reallocs and zeroed allocations of sizes
    /// from a byte to a few pages and alignments up to a page: every block
    /// is aligned, zeroed when asked, keeps its bytes (across a realloc
    /// too) and overlaps no other live block; freed memory is reused.
    #[test]
    fn blocks_are_aligned_distinct_and_keep_their_bytes() {
        for gap in [false, true] {
            let heap = SizeClasses::new(HostMemory::new(512, gap));
            let mut rng = Rng(0x2545_F491_4F6C_DD1D);
            let mut live: Vec<Live> = Vec::new();
            for step in 0..10_000u32 {
                let action = rng.below(10);
                if action < 4 || live.is_empty() {
                    let size = match rng.below(4) {
                        0 => 1 + rng.below(16),
                        1 => 1 + rng.below(300),
                        2 => 1 + rng.below(5000),
                        _ => 1 + rng.below(3 * PAGE as u64),
                    } as usize;
                    let widest = if rng.below(50) == 0 { 17 } else { 4 };
                    let align = 1usize << rng.below(widest);
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let zeroed = rng.below(3) == 0;
                    // SAFETY: a layout of nonzero size.
                    let at = unsafe {
                        if zeroed {
                            heap.alloc_zeroed(layout)
                        } else {
                            heap.alloc(layout)
                        }
                    };
                    assert!(!at.is_null(), "step {step}: out of memory");
                    assert_eq!(at as usize % align, 0, "step {step}: {layout:?}");
                    let block = Live {
                        at,
                        layout,
                        fill: step as u8 | 1,
                    };
                    if zeroed {
                        let block = Live { fill: 0, ..block };
                        assert!(intact(&block), "step {step}: not zeroed");
                    }
                    fill(&block);
                    live.push(block);
                } else if action < 8 {
                    let block = live.swap_remove(rng.below(live.len() as u64) as usize);
                    assert!(intact(&block), "step {step}: a block lost its bytes");
                    // SAFETY: a live block allocated with this layout.
                    unsafe { heap.dealloc(block.at, block.layout) };
                } else {
                    let i = rng.below(live.len() as u64) as usize;
                    let new_size = 1 + rng.below(2 * live[i].layout.size() as u64 + 64) as usize;
                    let old = &live[i];
                    assert!(intact(old), "step {step}: a block lost its bytes");
                    // SAFETY: a live block allocated with this layout, and
                    // a nonzero size.
                    let at = unsafe { heap.realloc(old.at, old.layout, new_size) };
                    assert!(!at.is_null(), "step {step}: out of memory");
                    let kept = old.layout.size().min(new_size);
                    // SAFETY: `kept` bytes of the live block.
                    let bytes = unsafe { core::slice::from_raw_parts(at, kept) };
                    assert!(bytes.iter().all(|&b| b == old.fill), "step {step}: realloc");
                    let layout = Layout::from_size_align(new_size, old.layout.align()).unwrap();
                    live[i] = Live {
                        at,
                        layout,
                        fill: old.fill,
                    };
                    fill(&live[i]);
                }
                if step % 1000 == 0 {
                    let mut spans: Vec<(usize, usize)> = live
                        .iter()
                        .map(|b| (b.at as usize, b.at as usize + b.layout.size()))
                        .collect();
                    spans.sort();
                    assert!(
                        spans.windows(2).all(|w| w[0].1 <= w[1].0),
                        "step {step}: overlap"
                    );
                    assert!(
                        live.iter().all(intact),
                        "step {step}: a block lost its bytes"
                    );
                }
            }
            println!(
                "gap {gap}: {} live blocks, {} pages grown",
                live.len(),
                heap.memory.used.get()
            );
        }
    }

    /// A block given back is the next one handed out for its size: opening
    /// files one after another reuses the same memory.
    #[test]
    fn freed_blocks_are_reused_and_memory_stops_growing() {
        let heap = SizeClasses::new(HostMemory::new(64, false));
        let scratch = Layout::from_size_align(256 << 10, 1).unwrap();
        let name = Layout::from_size_align(24, 1).unwrap();
        for round in 0..100 {
            // SAFETY: layouts of nonzero size; each block is given back
            // with its layout.
            unsafe {
                let a = heap.alloc_zeroed(scratch);
                let names: Vec<*mut u8> = (0..1000).map(|_| heap.alloc(name)).collect();
                assert!(!a.is_null() && names.iter().all(|p| !p.is_null()));
                ptr::write_bytes(a, 7, scratch.size());
                for p in names {
                    heap.dealloc(p, name);
                }
                heap.dealloc(a, scratch);
            }
            if round == 0 {
                assert!(heap.memory.used.get() <= 6, "{}", heap.memory.used.get());
            }
        }
        assert!(
            heap.memory.used.get() <= 6,
            "{} pages",
            heap.memory.used.get()
        );
        // A block reused for a zeroed allocation is zeroed.
        // SAFETY: a layout of nonzero size, given back.
        unsafe {
            let a = heap.alloc_zeroed(scratch);
            let bytes = core::slice::from_raw_parts(a, scratch.size());
            assert!(bytes.iter().all(|&b| b == 0));
            heap.dealloc(a, scratch);
        }
        // Memory that cannot grow: a null pointer, not a panic.
        let big = Layout::from_size_align(64 * PAGE, 1).unwrap();
        // SAFETY: a layout of nonzero size.
        assert!(unsafe { heap.alloc(big) }.is_null());
        let wide = Layout::from_size_align(16, 2 * PAGE).unwrap();
        // SAFETY: as above.
        assert!(unsafe { heap.alloc(wide) }.is_null());
    }
}
