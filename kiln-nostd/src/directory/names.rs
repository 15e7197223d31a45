//! Tensor names: the uniqueness rule (step 8d) and lookup by name.
//!
//! Work is bounded for every count. When the names are already in strictly
//! increasing byte order (a dict of tensors, and every file our converters
//! write), one pass proves them unique; with `alloc` the parse then hashes
//! them for lookups all the same (one pass, see below), and without it
//! lookups are binary searches with no index at all. Otherwise the indices
//! are sorted by name:
//!
//! - with the `alloc` feature, in a hash table (a vector): one pass, or a
//!   sort, O(n log n), when hostile names collide;
//! - in caller scratch ([`Directory::parse_with_scratch`], one `u32` per
//!   tensor): O(n log n) with no allocator;
//! - otherwise, without an allocator or `small-code`: in a fixed
//!   256-entry stack buffer (512 bytes): names are inserted in order into a sorted
//!   chunk of up to 256 (binary search, then a shift), so a repeat inside
//!   the chunk is found as it is inserted; every later name is then
//!   binary-searched in the chunk, and the next chunk starts. O(n log n)
//!   up to 256 names, O(n² / 256 · log 256) beyond. No method does better
//!   with constant extra memory over read-only bytes, which is why the
//!   scratch path exists;
//! - with the `small-code` feature (what a firmware short of flash builds)
//!   and without an allocator or scratch: each name against every earlier
//!   one, n(n - 1)/2 name comparisons (4,950 for 100 unsorted names, about
//!   500,000 for 1,000), in a fraction of the chunked sort's code.
//!   Such a firmware's blocks are small, and sorted names (what every
//!   converter of ours writes) never get here; a firmware that must accept
//!   large unsorted directories passes scratch.
//!
//! The 16-bit heap offsets cap a directory at 65,535 names, so every path
//! is bounded.
//!
//! A directory that names its tensors has at most 65,535 of them (every
//! name is at least one byte at a distinct 16-bit offset), so a tensor
//! index of a named directory fits in a `u16`.
//!
//! Lookups: with `alloc`, [`Directory::by_name`] probes the hash table
//! the parse built, which the parsed directory keeps, whatever the order
//! of the names (for names out of order, the one the uniqueness check
//! built, or its sorted order); where no table is kept (no allocator, a
//! directory not parsed, sorted names that collide too much) it
//! binary-searches sorted names with no storage at all, comparing eight
//! bytes at a time; [`Directory::index_names`]
//! (alloc) builds a hash table of tensor indices (each with a fingerprint
//! of its name's hash) in one pass, O(1) per lookup, sorted names or not;
//! [`Directory::index_names_in`] sorts indices into the caller's storage.
//! The hash table bounds its own work: every name sits at most
//! [`MAX_PROBE`] slots from where its hash puts it, and names that collide
//! more than that (hostile names can) make the index fall back to the
//! sorted order, so building and every lookup stay bounded whatever the
//! names are.

use core::cmp::Ordering;

use super::{Directory, TensorView};
use crate::error::{Error, Refusal, Result};

/// Stack scratch for sorting names without an allocator.
#[cfg(all(not(feature = "alloc"), not(feature = "small-code")))]
const STACK_NAMES: usize = 256;

/// The first tensor whose name repeats an earlier one (the smallest `i`
/// with `name(i) == name(j)` for some `j < i`), and whether the names are
/// in strictly increasing byte order. `name(i)` empty means unnamed;
/// unnamed tensors take no part. (The builder checks the order as it
/// walks its specs and calls [`first_repeat_unordered`] itself; the
/// tests check both paths against each other through this.)
#[cfg(test)]
pub(crate) fn first_repeat<'n>(
    count: u32,
    name: impl Fn(u32) -> &'n [u8],
    scratch: Option<&mut [u32]>,
) -> (Option<u32>, bool) {
    let increasing = (1..count).all(|i| name(i.saturating_sub(1)) < name(i));
    if increasing {
        return (None, true);
    }
    (first_repeat_unordered(count, name, scratch).0, false)
}

/// [`first_repeat`] for names known not to be in increasing order, with
/// the lookup table the check built on the way (with `alloc`; see
/// [`ParsedNames`]).
#[cfg_attr(feature = "small-code", inline(never))] // only for names out of order: out of line, not in the parse
pub(crate) fn first_repeat_unordered<'n>(
    count: u32,
    name: impl Fn(u32) -> &'n [u8],
    scratch: Option<&mut [u32]>,
) -> (Option<u32>, ParsedNames) {
    // Caller scratch large enough: one sort, O(n log n), no allocator.
    if let Some(order) = scratch.and_then(|s| s.get_mut(..count as usize)) {
        for (slot, i) in order.iter_mut().zip(0..count) {
            *slot = i;
        }
        sort_by_name(order, &name);
        let repeat = repeat_in_sorted(order, &name);
        // With an allocator the sorted order is kept for lookups (unnamed
        // tensors, which sort first, left out); without one there is
        // nowhere to keep it.
        #[cfg(feature = "alloc")]
        let parsed = ParsedNames::sorted(order.iter().copied().filter(|&i| !name(i).is_empty()));
        #[cfg(not(feature = "alloc"))]
        let parsed = ParsedNames;
        return (repeat, parsed);
    }
    first_repeat_unsorted(count, &name)
}

#[cfg(feature = "alloc")]
fn first_repeat_unsorted<'n>(
    count: u32,
    name: &impl Fn(u32) -> &'n [u8],
) -> (Option<u32>, ParsedNames) {
    // A hash table finds the first repeat in one pass in index order (the
    // first name that meets an equal one already in the table is the
    // answer), and is kept for lookups; names that collide past MAX_PROBE
    // fall back to the sort, which is kept instead.
    if let Some((found, table)) = first_repeat_hashed(count, name) {
        return (found, ParsedNames::hashed(table));
    }
    let mut order: alloc::vec::Vec<u32> = (0..count).filter(|&i| !name(i).is_empty()).collect();
    sort_by_name(&mut order, name);
    let repeat = repeat_in_sorted(&order, name);
    (repeat, ParsedNames::sorted(order))
}

#[cfg(all(not(feature = "alloc"), feature = "small-code"))]
fn first_repeat_unsorted<'n>(
    count: u32,
    name: &impl Fn(u32) -> &'n [u8],
) -> (Option<u32>, ParsedNames) {
    (first_repeat_pairwise(count, name), ParsedNames)
}

/// The first repeat by comparing each name with every earlier one:
/// n(n - 1)/2 comparisons, the least code (`small-code` without an allocator
/// or scratch; see the module docs).
#[cfg(any(test, all(not(feature = "alloc"), feature = "small-code")))]
fn first_repeat_pairwise<'n>(count: u32, name: &impl Fn(u32) -> &'n [u8]) -> Option<u32> {
    (1..count).find(|&i| {
        let this = name(i);
        !this.is_empty() && (0..i).any(|j| name(j) == this)
    })
}

#[cfg(all(not(feature = "alloc"), not(feature = "small-code")))]
fn first_repeat_unsorted<'n>(
    count: u32,
    name: &impl Fn(u32) -> &'n [u8],
) -> (Option<u32>, ParsedNames) {
    (first_repeat_chunked(count, name), ParsedNames)
}

/// The first repeat in fixed stack storage (no allocator, no scratch, not
/// `small-code`; see the module docs).
#[cfg(all(not(feature = "alloc"), not(feature = "small-code")))]
fn first_repeat_chunked<'n>(count: u32, name: &impl Fn(u32) -> &'n [u8]) -> Option<u32> {
    // Chunks of STACK_NAMES indices, in order. Each is sorted by inserting
    // its indices one by one, in index order: the first whose name equals
    // one already there is the chunk's first repeat. Then every later name
    // is looked up in the sorted chunk. Only indices below the first repeat
    // found so far can give an earlier one, so the work stops there. A
    // named directory has fewer than 65,536 tensors: indices fit in u16.
    let mut chunk: [u16; STACK_NAMES] = core::array::from_fn(|i| i as u16);
    let mut first = count;
    let mut start = 0u32;
    while start < first {
        let end = start.saturating_add(STACK_NAMES as u32).min(first);
        let mut len = 0usize;
        for i in start..end {
            let this = name(i);
            if this.is_empty() {
                continue;
            }
            match find_name(chunk.get(..len).unwrap_or_default(), this, name) {
                Ok(_) => {
                    first = i;
                    break;
                }
                Err(at) => {
                    // Shift the larger names up one and put `i` at `at`.
                    let mut pos = len;
                    while pos > at {
                        let (Some(&prev), Some(slot_pos)) = (chunk.get(pos - 1), Some(pos)) else {
                            break;
                        };
                        if let Some(slot) = chunk.get_mut(slot_pos) {
                            *slot = prev;
                        }
                        pos -= 1;
                    }
                    if let Some(slot) = chunk.get_mut(at) {
                        *slot = i as u16;
                    }
                    len += 1;
                }
            }
        }
        let sorted = chunk.get(..len).unwrap_or_default();
        for later in end..first {
            let this = name(later);
            if !this.is_empty() && find_name(sorted, this, name).is_ok() {
                first = later;
                break;
            }
        }
        start = end;
    }
    (first < count).then_some(first)
}

/// Where `this` is, or would go, among the indices of `sorted` (in name
/// order): one function for both searches of [`first_repeat_unsorted`].
#[cfg(all(not(feature = "alloc"), not(feature = "small-code")))]
fn find_name<'n>(
    sorted: &[u16],
    this: &[u8],
    name: &impl Fn(u32) -> &'n [u8],
) -> Result<usize, usize> {
    sorted.binary_search_by(|&j| name(u32::from(j)).cmp(this))
}

/// The first repeat by hashing, with the table, or `None` when some name
/// would sit more than [`MAX_PROBE`] slots from its hash's slot.
#[cfg(feature = "alloc")]
fn first_repeat_hashed<'n>(
    count: u32,
    name: &impl Fn(u32) -> &'n [u8],
) -> Option<(Option<u32>, alloc::vec::Vec<u64>)> {
    let slots = (count as usize)
        .saturating_mul(2)
        .next_power_of_two()
        .max(8);
    let mask = slots.wrapping_sub(1);
    // Each entry: the index plus one in the low half (0 is an empty slot,
    // so the table is allocated zeroed rather than filled), the hash's top
    // half above it, so that a probe reads a name only when the hashes
    // agree.
    let mut table = alloc::vec![0u64; slots];
    for i in 0..count {
        let this = name(i);
        if this.is_empty() {
            continue;
        }
        let hash = hash_name(this);
        let tag = hash & !u64::from(u32::MAX);
        let mut slot = home(hash, mask);
        let mut placed = false;
        for _ in 0..MAX_PROBE {
            let entry = table.get_mut(slot)?;
            if *entry == 0 {
                *entry = tag | u64::from(i).wrapping_add(1);
                placed = true;
                break;
            }
            if *entry & !u64::from(u32::MAX) == tag && name((*entry as u32).wrapping_sub(1)) == this
            {
                return Some((Some(i), table));
            }
            slot = slot.wrapping_add(1) & mask;
        }
        if !placed {
            return None;
        }
    }
    Some((None, table))
}

/// Sorts indices by name bytes, then by index (so that equal names are in
/// index order).
fn sort_by_name<'n>(order: &mut [u32], name: &impl Fn(u32) -> &'n [u8]) {
    sort(order, |&a, &b| name(a).cmp(name(b)).then(a.cmp(&b)));
}

/// Sorts in place. With an allocator, the standard library's sort. Without
/// one (firmware), a heapsort: O(n log n) with no scratch and no panic
/// path (core's sorts keep one for comparators that are not total orders,
/// which the firmware's no-panic link would reject).
fn sort<T: Copy>(v: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    #[cfg(feature = "alloc")]
    v.sort_unstable_by(cmp);
    #[cfg(not(feature = "alloc"))]
    heapsort(v, cmp);
}

#[cfg(not(feature = "alloc"))]
fn heapsort<T: Copy>(v: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    // Moves v[root] down until both children are not greater, within v[..end].
    let sift_down = |v: &mut [T], mut root: usize, end: usize| loop {
        let left = root.saturating_mul(2).saturating_add(1);
        if left >= end {
            return;
        }
        let right = left.saturating_add(1);
        let child = match (v.get(left), v.get(right)) {
            (Some(l), Some(r)) if right < end && cmp(l, r) == Ordering::Less => right,
            _ => left,
        };
        match (v.get(root), v.get(child)) {
            (Some(p), Some(c)) if cmp(p, c) == Ordering::Less => swap(v, root, child),
            _ => return,
        }
        root = child;
    };
    let len = v.len();
    for root in (0..len / 2).rev() {
        sift_down(v, root, len);
    }
    for end in (1..len).rev() {
        swap(v, 0, end);
        sift_down(v, 0, end);
    }
}

/// `v.swap(a, b)` where the bounds are visibly checked first, so the
/// optimizer drops `swap`'s own panic path.
#[cfg(not(feature = "alloc"))]
fn swap<T>(v: &mut [T], a: usize, b: usize) {
    if a < v.len() && b < v.len() {
        v.swap(a, b);
    }
}

/// In index order sorted by (name, index): the smallest index that has an
/// equal name before it.
fn repeat_in_sorted<'n>(order: &[u32], name: &impl Fn(u32) -> &'n [u8]) -> Option<u32> {
    order
        .windows(2)
        .filter_map(|pair| match pair {
            [a, b] if !name(*a).is_empty() && name(*a) == name(*b) => Some(*b),
            _ => None,
        })
        .min()
}

/// The bytewise order of two names: `<[u8]>::cmp` (a `memcmp` call) with
/// `small-code`, the smallest code; [`cmp_bytes`] otherwise.
#[inline] // per descriptor in the parse loop
pub(crate) fn cmp_names(a: &[u8], b: &[u8]) -> Ordering {
    #[cfg(feature = "small-code")]
    return a.cmp(b);
    #[cfg(not(feature = "small-code"))]
    cmp_bytes(a, b)
}

/// The bytewise order of two names (what `<[u8]>::cmp` gives), eight
/// bytes at a time: names like `layers.17.attn.q_proj.weight` share long
/// prefixes, and this stays inline where a `memcmp` call would not.
#[inline]
pub(crate) fn cmp_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    let (Some(head_a), Some(head_b)) = (a.get(..n), b.get(..n)) else {
        return a.cmp(b);
    };
    let ((words_a, rest_a), (words_b, rest_b)) = (head_a.as_chunks::<8>(), head_b.as_chunks::<8>());
    for (x, y) in words_a.iter().zip(words_b) {
        if x != y {
            return u64::from_be_bytes(*x).cmp(&u64::from_be_bytes(*y));
        }
    }
    // Both remainders have the same length (n % 8), under eight bytes.
    for (x, y) in rest_a.iter().zip(rest_b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// The first eight bytes of `bytes` as a big-endian word, zero-padded:
/// two byte strings whose words differ compare as their words do.
///
/// Built from overlapping reads (the first and the last four bytes, or the
/// first, middle and last byte), not byte by byte: a copy of the bytes
/// into an array becomes a `memcpy` call whose byte stores the following
/// eight-byte load then waits for.
#[inline] // in by_name, which callers instantiate in their own crate
fn word_of(bytes: &[u8]) -> u64 {
    if let Some(word) = bytes.first_chunk::<8>() {
        return u64::from_be_bytes(*word);
    }
    // 0 to 7 bytes: byte k goes to bits 56 - 8k.
    let len = bytes.len();
    let at = |k: usize| 8 * (7 - k as u32);
    match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        (Some(head), Some(tail)) => {
            u64::from(u32::from_be_bytes(*head)) << 32
                | u64::from(u32::from_be_bytes(*tail)) << at(len - 1)
        }
        _ => match bytes {
            [] => 0,
            [first, .., last] | [first @ last] => {
                let middle = bytes.get(len / 2).copied().unwrap_or(0);
                u64::from(*first) << 56
                    | u64::from(middle) << at(len / 2)
                    | u64::from(*last) << at(len - 1)
            }
        },
    }
}

/// A name being looked up, with its last word (the bytes after its last
/// multiple of eight, zero-padded) made once.
struct Needle<'n> {
    bytes: &'n [u8],
    tail: u64,
}

impl<'n> Needle<'n> {
    #[inline] // once per by_name
    fn new(bytes: &'n [u8]) -> Needle<'n> {
        let tail = bytes.len() & !7;
        Needle {
            bytes,
            tail: word_of(bytes.get(tail..).unwrap_or(&[])),
        }
    }
}

/// The word of `block` at `at` when the block ends within eight bytes (the
/// last name of a block without payloads): byte by byte.
#[cold]
#[inline(never)]
fn word_near_end(block: &[u8], at: usize) -> u64 {
    word_of(block.get(at..).unwrap_or(&[]))
}

/// A name of `len` bytes at `at` in `block`.
struct NameAt<'b> {
    block: &'b [u8],
    at: usize,
    len: usize,
}

impl NameAt<'_> {
    /// The name's bytes.
    #[inline] // every probe of by_name
    fn bytes(&self) -> &[u8] {
        let end = self.at.saturating_add(self.len);
        self.block.get(self.at..end).unwrap_or(&[])
    }

    /// Eight bytes of the block from byte `k` of the name as a big-endian
    /// word: past the name's end where the block goes on (it does for all
    /// but the last name of a block without payloads).
    #[inline] // every probe of by_name
    fn raw_word(&self, k: usize) -> u64 {
        let at = self.at.saturating_add(k);
        match self.block.get(at..).and_then(<[u8]>::first_chunk::<8>) {
            Some(word) => u64::from_be_bytes(*word),
            None => word_near_end(self.block, at),
        }
    }

    /// The bytewise order of this name against `needle`: what
    /// `<[u8]>::cmp` gives. Whole words as [`cmp_bytes`] compares them;
    /// then the last 1 to 7 bytes the two have as one word each, read
    /// from the block past the name's end (where the block goes on, as it
    /// does for all but the last name of a block without payloads) and
    /// from the needle's last word, masked.
    #[inline] // every probe of by_name
    fn cmp(&self, needle: &Needle<'_>) -> Ordering {
        let both = self.len.min(needle.bytes.len());
        let whole = both & !7;
        let name = self.bytes().get(..whole).unwrap_or(&[]);
        let pairs = name.chunks_exact(8).zip(needle.bytes.chunks_exact(8));
        for (x, y) in pairs {
            if let (Some(x), Some(y)) = (x.first_chunk::<8>(), y.first_chunk::<8>()) {
                if x != y {
                    return u64::from_be_bytes(*x).cmp(&u64::from_be_bytes(*y));
                }
            }
        }
        let rest = both - whole;
        if rest > 0 {
            let a = self.raw_word(whole);
            let b = match needle.bytes.get(whole..).and_then(<[u8]>::first_chunk::<8>) {
                Some(word) => u64::from_be_bytes(*word),
                None => needle.tail,
            };
            // Keep the `rest` bytes both have (1 to 7).
            let mask = !u64::MAX.wrapping_shr(8 * rest as u32);
            let (a, b) = (a & mask, b & mask);
            if a != b {
                return a.cmp(&b);
            }
        }
        // One is a prefix of the other.
        self.len.cmp(&needle.bytes.len())
    }
}

/// Slots a name may sit past its hash's slot before the hash index gives
/// up and falls back to the sorted order.
#[cfg(feature = "alloc")]
pub const MAX_PROBE: usize = 32;

/// The empty slot of a hash table (a named directory's tensor indices are
/// below 65,535).
#[cfg(feature = "alloc")]
const EMPTY: u16 = u16::MAX;

/// A hash of a name: sixteen bytes at a time, each pair of words folded
/// by one 64 x 64 -> 128-bit multiply (high half xor low half) into the
/// running value; the last partial chunk read as the name's last sixteen
/// bytes (overlapping the one before), a shorter name from overlapping
/// words and halves, so no byte is copied one at a time. A model's names
/// (`model.layers.17.mlp.experts.42.up_proj.weight`) take three folds.
/// Not keyed: colliding names only cost probes, which [`MAX_PROBE`]
/// bounds. Only the hash tables of the `alloc` feature use it.
#[cfg(feature = "alloc")]
#[inline]
fn hash_name(name: &[u8]) -> u64 {
    const K0: u64 = 0xA076_1D64_78BD_642F;
    const K1: u64 = 0xE703_7ED1_A0B4_28DB;
    const K2: u64 = 0x8EBC_6AF0_9C88_C6E3;
    let fold = |a: u64, b: u64| {
        let p = u128::from(a).wrapping_mul(u128::from(b));
        (p as u64) ^ ((p >> 64) as u64)
    };
    let word = |bytes: Option<&[u8; 8]>| bytes.map_or(0, |w| u64::from_le_bytes(*w));
    let len = name.len();
    let mut h = (len as u64) ^ K0;
    if len >= 16 {
        let (chunks, rest) = name.as_chunks::<16>();
        for chunk in chunks {
            let (a, b) = (word(chunk.first_chunk()), word(chunk.last_chunk()));
            h = fold(a ^ K1, b ^ h);
        }
        if !rest.is_empty() {
            if let Some(tail) = name.last_chunk::<16>() {
                let (a, b) = (word(tail.first_chunk()), word(tail.last_chunk()));
                h = fold(a ^ K1, b ^ h);
            }
        }
    } else {
        let (a, b) = if len >= 8 {
            (word(name.first_chunk()), word(name.last_chunk()))
        } else if let (Some(head), Some(tail)) = (name.first_chunk::<4>(), name.last_chunk::<4>()) {
            (
                u64::from(u32::from_le_bytes(*head)),
                u64::from(u32::from_le_bytes(*tail)),
            )
        } else {
            match name {
                [] => (0, 0),
                [first, .., last] | [first @ last] => (
                    u64::from(*first) << 16 | u64::from(name.get(len / 2).copied().unwrap_or(0)),
                    u64::from(*last),
                ),
            }
        };
        h = fold(a ^ K1, b ^ h);
    }
    fold(h ^ K2, (len as u64) ^ K1)
}

/// The fingerprint of a name's hash kept next to its index in a hash
/// table: a probe compares it before reading the name.
#[cfg(feature = "alloc")]
#[inline] // every probe of NameIndex::get
fn fingerprint(hash: u64) -> u16 {
    (hash >> 48) as u16
}

/// The first slot of `hash` in a table of `mask + 1` slots.
#[cfg(feature = "alloc")]
#[inline]
fn home(hash: u64, mask: usize) -> usize {
    (hash as usize) & mask
}

// ---------------------------------------------------------------------------
// The lookup table a parse keeps

/// The lookup table a parse builds, kept in the [`Directory`] so that
/// [`Directory::by_name`] is one hash probe whatever the order of the
/// names, and never a linear scan: with `alloc`, the hash table of the
/// names (for names out of byte order, the one the uniqueness check built,
/// or the sorted order it fell back to), shared behind an [`Arc`] so that
/// a clone of a directory is a reference count, not a copy of the table;
/// without `alloc`, nothing (lookups binary-search sorted names, and scan
/// the few unsorted names of a firmware message).
///
/// It is a function of the block's bytes, so it takes no part in
/// equality.
///
/// [`Arc`]: alloc::sync::Arc
#[cfg(feature = "alloc")]
#[derive(Clone, Default)]
pub(crate) struct ParsedNames(Option<alloc::sync::Arc<NameSlots>>);

/// Nothing to keep without an allocator.
#[cfg(not(feature = "alloc"))]
#[derive(Clone, Default)]
pub(crate) struct ParsedNames;

/// The table behind [`ParsedNames`].
#[cfg(feature = "alloc")]
enum NameSlots {
    /// Slots of `hash & !u32::MAX | (index + 1)`, 0 empty, each at most
    /// [`MAX_PROBE`] past its hash's slot (as `first_repeat_hashed`
    /// builds them).
    Hashed(alloc::vec::Vec<u64>),
    /// The named tensors' indices in name order.
    Sorted(alloc::vec::Vec<u32>),
}

impl ParsedNames {
    /// No table: no names, no allocator, or not parsed yet.
    pub(crate) const NONE: ParsedNames = {
        #[cfg(feature = "alloc")]
        let none = ParsedNames(None);
        #[cfg(not(feature = "alloc"))]
        let none = ParsedNames;
        none
    };

    #[cfg(feature = "alloc")]
    fn hashed(table: alloc::vec::Vec<u64>) -> ParsedNames {
        ParsedNames(Some(alloc::sync::Arc::new(NameSlots::Hashed(table))))
    }

    #[cfg(feature = "alloc")]
    fn sorted(order: impl IntoIterator<Item = u32>) -> ParsedNames {
        let order = order.into_iter().collect();
        ParsedNames(Some(alloc::sync::Arc::new(NameSlots::Sorted(order))))
    }

    /// The table of names in strictly increasing byte order (they are
    /// unique): the hash table, or none when some name would sit more than
    /// [`MAX_PROBE`] slots from its hash's slot (hostile names can), where
    /// [`Directory::by_name`] binary-searches the sorted names instead.
    #[cfg(feature = "alloc")]
    pub(crate) fn of_sorted<'n>(count: u32, name: impl Fn(u32) -> &'n [u8]) -> ParsedNames {
        match first_repeat_hashed(count, &name) {
            Some((None, table)) => ParsedNames::hashed(table),
            _ => ParsedNames::NONE,
        }
    }

    /// Whether a table is kept.
    pub(crate) const fn is_kept(&self) -> bool {
        #[cfg(feature = "alloc")]
        return self.0.is_some();
        #[cfg(not(feature = "alloc"))]
        false
    }

    /// The index of the tensor named `needle` (not empty) through the
    /// table, `Err(())` when no table is kept.
    #[cfg(feature = "alloc")]
    #[inline]
    fn find<'n>(
        &self,
        needle: &[u8],
        name: impl Fn(u32) -> &'n [u8],
    ) -> core::result::Result<Option<u32>, ()> {
        let Some(slots) = self.0.as_deref() else {
            return Err(());
        };
        Ok(match slots {
            NameSlots::Hashed(table) => {
                let mask = table.len().wrapping_sub(1);
                let hash = hash_name(needle);
                let tag = hash & !u64::from(u32::MAX);
                let mut slot = home(hash, mask);
                let mut found = None;
                for _ in 0..MAX_PROBE {
                    let Some(&entry) = table.get(slot) else {
                        break;
                    };
                    if entry == 0 {
                        break;
                    }
                    let index = (entry as u32).wrapping_sub(1);
                    if entry & !u64::from(u32::MAX) == tag && compared(name(index)) == needle {
                        found = Some(index);
                        break;
                    }
                    slot = slot.wrapping_add(1) & mask;
                }
                found
            }
            NameSlots::Sorted(order) => order
                .binary_search_by(|&i| cmp_bytes(compared(name(i)), needle))
                .ok()
                .and_then(|at| order.get(at).copied()),
        })
    }
}

// Tests count the names a lookup reads, to prove that none scans.
#[cfg(test)]
std::thread_local! {
    static NAMES_COMPARED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// `name`, counted under test (see `NAMES_COMPARED`).
#[inline(always)]
fn compared(name: &[u8]) -> &[u8] {
    count_read();
    name
}

/// Counts one name read under test (see `NAMES_COMPARED`); nothing
/// otherwise.
#[inline(always)]
fn count_read() {
    #[cfg(test)]
    NAMES_COMPARED.with(|n| n.set(n.get() + 1));
}

impl PartialEq for ParsedNames {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for ParsedNames {}

impl core::fmt::Debug for ParsedNames {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(if self.is_kept() { "kept" } else { "none" })
    }
}

// ---------------------------------------------------------------------------
// Lookup

impl<'a> Directory<'a> {
    /// The tensor named `name`. Unnamed tensors have no name, so `""` finds
    /// nothing.
    ///
    /// With `alloc`, through the hash table the parse built and the
    /// directory keeps, whatever the order of the names: O(1) (O(log n)
    /// through the sorted order kept for names out of order that collide
    /// too much). Where no table is kept (no allocator, a directory built
    /// rather than parsed, or sorted names that collide too much), a
    /// binary search, O(log n), when the names are in increasing byte
    /// order, as converters write them; otherwise a scan, the simplest
    /// path for the handful of tensors of a firmware message without an
    /// allocator: build a [`NameIndex`] in caller storage
    /// ([`Directory::index_names_in`]) for repeated lookups in a large one.
    #[inline]
    pub fn by_name(&self, name: &str) -> Option<TensorView<'a>> {
        if name.is_empty() || !self.has_names() {
            return None;
        }
        let needle = name.as_bytes();
        #[cfg(feature = "alloc")]
        if let Ok(found) = self.names.find(needle, |i| self.name_at(i)) {
            return self.get(found? as usize);
        }
        let index = if self.names_sorted() {
            self.search_sorted(needle)?
        } else {
            self.scan(needle)?
        };
        self.get(index as usize)
    }

    /// Lookup among names not in byte order where no table is kept (no
    /// allocator, or a directory built without a parse): every name in
    /// turn.
    #[inline]
    fn scan(&self, needle: &[u8]) -> Option<u32> {
        (0..self.tensor_count).find(|&i| compared(self.name_at(i)) == needle)
    }

    /// Binary search of sorted names. Each probe reads the name's two
    /// fields from its descriptor and compares the name with the needle
    /// eight bytes at a time ([`NameAt::cmp`]).
    #[inline]
    fn search_sorted(&self, needle: &[u8]) -> Option<u32> {
        let heap_start = self.heap_start();
        let records = self.block.get(..heap_start)?;
        let needle = Needle::new(needle);
        let (mut low, mut high) = (0u32, self.tensor_count);
        while low < high {
            let mid = low + (high - low) / 2;
            let (off, len) = super::name_field(records, mid as usize)?;
            count_read();
            let name = NameAt {
                block: self.block,
                at: heap_start.wrapping_add(off),
                len,
            };
            match name.cmp(&needle) {
                Ordering::Less => low = mid + 1,
                Ordering::Greater => high = mid,
                Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Builds an index for O(log n) lookups by name in `storage`, which
    /// must hold one `u16` per tensor (a directory that names its tensors
    /// has at most 65,535); a smaller `storage` is refused
    /// ([`Refusal::Capacity`]). A directory whose names are already sorted
    /// needs no storage: its index is a binary search over the descriptors.
    ///
    /// ```
    /// use kiln_nostd::{Directory, TensorSpec, Tensors, to_slice};
    /// let (b, a) = ([0u8], [1u8]);
    /// let specs = [
    ///     TensorSpec::from_host(&[1], &b).named("b"),
    ///     TensorSpec::from_host(&[1], &a).named("a"),
    /// ];
    /// let mut buf = [0u8; 512];
    /// let dir = Directory::parse(to_slice(&Tensors(&specs), &mut buf).unwrap()).unwrap();
    /// let mut storage = [0u16; 8];
    /// let index = dir.index_names_in(&mut storage).unwrap();
    /// assert_eq!(index.get("a").unwrap().index(), 1);
    /// assert!(index.get("c").is_none());
    /// ```
    pub fn index_names_in<'s>(&self, storage: &'s mut [u16]) -> Result<NameIndex<'a, &'s [u16]>> {
        if self.names_sorted() || !self.has_names() {
            return Ok(NameIndex {
                dir: self.clone(),
                order: &[],
                hashed: false,
            });
        }
        let order = storage.get_mut(..self.len()).ok_or(Error::refused(
            Refusal::Capacity,
            "name index storage smaller than the tensor count",
        ))?;
        self.fill_order(order);
        Ok(NameIndex {
            dir: self.clone(),
            order: &*order,
            hashed: false,
        })
    }

    /// Builds an index for lookups by name, in a vector (a parsed
    /// directory's own [`Directory::by_name`] already avoids a scan with
    /// `alloc`; this is a second table, with 16-bit slots): a hash table of
    /// tensor indices (two slots per tensor, rounded up to a power of two),
    /// built in one pass over the names, O(1) per lookup whether or not
    /// the names are sorted. Names that collide too much (see the module
    /// docs) get the O(log n) sorted index instead, so the work stays
    /// bounded for any names.
    #[cfg(feature = "alloc")]
    pub fn index_names(&self) -> NameIndex<'a, alloc::vec::Vec<u16>> {
        if !self.has_names() {
            return NameIndex {
                dir: self.clone(),
                order: alloc::vec::Vec::new(),
                hashed: false,
            };
        }
        // Pairs of (tensor index, fingerprint), two slots per tensor.
        let slots = self.len().saturating_mul(2).next_power_of_two().max(8);
        let mut table = alloc::vec![EMPTY; 2 * slots];
        if self.fill_hash(&mut table) {
            return NameIndex {
                dir: self.clone(),
                order: table,
                hashed: true,
            };
        }
        let mut order = alloc::vec::Vec::new();
        if !self.names_sorted() {
            order.resize(self.len(), 0);
            self.fill_order(&mut order);
        }
        NameIndex {
            dir: self.clone(),
            order,
            hashed: false,
        }
    }

    /// Puts every tensor index in `table` (a power of two of slots, each
    /// a pair of index and fingerprint, the index [`EMPTY`]) at or after
    /// its name's hash slot; false when a name would sit more than
    /// [`MAX_PROBE`] slots past it.
    #[cfg(feature = "alloc")]
    fn fill_hash(&self, table: &mut [u16]) -> bool {
        let mask = (table.len() / 2).wrapping_sub(1);
        for (i, r) in self.records() {
            let Ok(index) = u16::try_from(i) else {
                return false;
            };
            let hash = hash_name(self.heap_slice(r.name_off(), r.name_len()));
            let mut slot = home(hash, mask);
            let mut placed = false;
            for _ in 0..MAX_PROBE {
                match table.get_mut(2 * slot..2 * slot + 2) {
                    Some([entry, tag]) if *entry == EMPTY => {
                        (*entry, *tag) = (index, fingerprint(hash));
                        placed = true;
                        break;
                    }
                    Some(_) => slot = slot.wrapping_add(1) & mask,
                    None => return false,
                }
            }
            if !placed {
                return false;
            }
        }
        true
    }

    /// Tensor indices sorted by name. A named directory has at most 65,535
    /// tensors, so every index fits in a `u16`.
    fn fill_order(&self, order: &mut [u16]) {
        for (slot, i) in order.iter_mut().zip(0u16..) {
            *slot = i;
        }
        sort(order, |&a, &b| {
            cmp_bytes(self.name_at(u32::from(a)), self.name_at(u32::from(b)))
        });
    }
}

/// An index of a [`Directory`]'s tensors by name, for O(log n) lookups.
/// `S` is where the sorted tensor indices live: the caller's `&[u16]`, or a
/// `Vec<u16>` with `alloc`. Built by [`Directory::index_names_in`] or
/// [`Directory::index_names`].
#[derive(Clone, Debug)]
pub struct NameIndex<'a, S> {
    dir: Directory<'a>,
    /// Tensor indices: a hash table when `hashed`, else in name order, or
    /// empty when the directory's own order is already by name.
    order: S,
    /// Whether `order` is a hash table (only `index_names`, with `alloc`,
    /// builds one).
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    hashed: bool,
}

impl<'a, S: AsRef<[u16]>> NameIndex<'a, S> {
    /// The tensor named `name`, in O(log n).
    #[inline]
    pub fn get(&self, name: &str) -> Option<TensorView<'a>> {
        let order = self.order.as_ref();
        let needle = name.as_bytes();
        // Only `index_names` (alloc) builds a hash table.
        #[cfg(feature = "alloc")]
        if self.hashed {
            let mask = (order.len() / 2).wrapping_sub(1);
            let hash = hash_name(needle);
            let mut slot = home(hash, mask);
            for _ in 0..MAX_PROBE {
                let &[index, tag] = order.get(2 * slot..)?.first_chunk::<2>()?;
                if index == EMPTY {
                    return None;
                }
                if tag == fingerprint(hash) && self.dir.name_at(u32::from(index)) == needle {
                    return self.dir.get(usize::from(index));
                }
                slot = slot.wrapping_add(1) & mask;
            }
            return None;
        }
        if order.is_empty() {
            return self.dir.by_name(name);
        }
        let at = order
            .binary_search_by(|&i| cmp_bytes(self.dir.name_at(u32::from(i)), needle))
            .ok()?;
        let index = order.get(at)?;
        self.dir.get(usize::from(*index))
    }

    /// The directory this index looks into.
    pub const fn directory(&self) -> &Directory<'a> {
        &self.dir
    }
}

/// An index by name over the tensors of several directories, built once:
/// the lookup of a model whose names are split over many blocks (a
/// directory addresses at most 64 KiB of names), whatever order the names
/// are in. Building it also proves every name unique across all of them.
///
/// A hash table of (directory, tensor, fingerprint) slots, two per named
/// tensor: one pass to build, O(1) per lookup. Names that collide more
/// than 32 slots from their hash (hostile names can) get a table sorted by name
/// instead (O(n log n) to build, O(log n) per lookup), so the work stays
/// bounded for any names.
///
/// ```
/// use kiln_nostd::{Directory, NameTable, TensorSpec, Tensors, to_vec};
/// let one = [1u8];
/// let a = to_vec(&Tensors(&[TensorSpec::from_host(&[1], &one).named("b")])).unwrap();
/// let b = to_vec(&Tensors(&[TensorSpec::from_host(&[1], &one).named("a")])).unwrap();
/// let dirs = vec![Directory::parse(&a).unwrap(), Directory::parse(&b).unwrap()];
/// let table = NameTable::new(dirs).unwrap();
/// assert_eq!(table.located("a").map(|(dir, t)| (dir, t.index())), Some((1, 0)));
/// assert!(table.get("c").is_none());
/// ```
#[cfg(feature = "alloc")]
#[derive(Clone, Debug)]
pub struct NameTable<'a> {
    dirs: alloc::vec::Vec<Directory<'a>>,
    /// Hashed: `(dir + 1) << 32 | index << 16 | fingerprint` per slot, or
    /// [`TABLE_EMPTY`]. Sorted: the same entries in name order.
    slots: alloc::vec::Vec<u64>,
    hashed: bool,
    named: usize,
    /// The one directory with names, when only one has any: lookups go
    /// to its own [`Directory::by_name`] and `slots` is empty.
    only: Option<usize>,
}

/// An empty slot of a [`NameTable`]: every entry holds its directory plus
/// one, so zero is free, and the table is allocated zeroed rather than
/// filled.
#[cfg(feature = "alloc")]
const TABLE_EMPTY: u64 = 0;

/// A name that two tensors of a [`NameTable`]'s directories share: the
/// later one, as (directory, tensor index).
#[cfg(feature = "alloc")]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RepeatedName {
    /// Position of the directory in the list given to [`NameTable::new`].
    pub directory: usize,
    /// The tensor's index in that directory.
    pub index: usize,
}

#[cfg(feature = "alloc")]
impl<'a> NameTable<'a> {
    /// Indexes every named tensor of `dirs`, refusing a name that appears
    /// twice (in one directory or across two). Unnamed tensors are left
    /// out. More than `u32::MAX - 1` directories are refused as a repeat
    /// at the first one past it (a message that large cannot exist).
    pub fn new(dirs: alloc::vec::Vec<Directory<'a>>) -> core::result::Result<Self, RepeatedName> {
        let named: usize = dirs
            .iter()
            .filter(|d| d.has_names())
            .map(Directory::len)
            .sum();
        if dirs.len() >= u32::MAX as usize {
            return Err(RepeatedName {
                directory: u32::MAX as usize,
                index: 0,
            });
        }
        let mut table = NameTable {
            dirs,
            slots: alloc::vec::Vec::new(),
            hashed: true,
            named,
            only: None,
        };
        // One directory with names (every model of up to about 1,400
        // tensors): its parse proved them unique and kept a hash table of
        // them, so nothing is hashed again. (One with no table, a
        // directory not parsed, is hashed here: one hash per lookup costs
        // less than a binary search's probes.)
        let mut named_dirs = (0..).zip(&table.dirs).filter(|(_, d)| d.has_names());
        if let (Some((only, d)), None) = (named_dirs.next(), named_dirs.next()) {
            if !d.names.is_kept() {
                return table.hash_all();
            }
            table.only = Some(only);
            return Ok(table);
        }
        table.hash_all()
    }

    /// Hashes every name (the sorted form when they collide too much).
    fn hash_all(mut self) -> core::result::Result<Self, RepeatedName> {
        let slots = self.named.saturating_mul(2).next_power_of_two().max(8);
        self.slots = alloc::vec![TABLE_EMPTY; slots];
        match self.fill_hashed() {
            Some(Ok(())) => Ok(self),
            Some(Err(repeat)) => Err(repeat),
            None => {
                self.hashed = false;
                self.fill_sorted().map(|()| self)
            }
        }
    }

    /// The entries of every named tensor, in directory order.
    fn entries(&self) -> impl Iterator<Item = u64> + '_ {
        (0u64..).zip(&self.dirs).flat_map(|(d, dir)| {
            let count = if dir.has_names() { dir.tensor_count } else { 0 };
            (0..count).map(move |i| (d + 1) << 32 | u64::from(i) << 16)
        })
    }

    fn name_of(&self, entry: u64) -> &'a [u8] {
        match self.dirs.get(((entry >> 32) as usize).wrapping_sub(1)) {
            Some(dir) => dir.name_at((entry >> 16) as u32 & 0xFFFF),
            None => &[],
        }
    }

    fn repeat(entry: u64) -> RepeatedName {
        RepeatedName {
            directory: ((entry >> 32) as usize).wrapping_sub(1),
            index: ((entry >> 16) & 0xFFFF) as usize,
        }
    }

    /// `None` when some name would sit more than [`MAX_PROBE`] slots past
    /// its hash's slot. Walks each directory's descriptors and heap
    /// directly (the hot loop of a model's open); a name is read back from
    /// its entry only when a fingerprint matches.
    fn fill_hashed(&mut self) -> Option<core::result::Result<(), RepeatedName>> {
        let mask = self.slots.len().wrapping_sub(1);
        let mut slots = core::mem::take(&mut self.slots);
        let mut outcome = Some(Ok(()));
        'dirs: for (d, dir) in (0u64..).zip(&self.dirs) {
            if !dir.has_names() {
                continue;
            }
            let (records, heap) = dir
                .block
                .split_at_checked(dir.heap_start())
                .unwrap_or((&[], &[]));
            'names: for i in 0..dir.tensor_count {
                let name = super::name_in(records, heap, i as usize);
                let hash = hash_name(name);
                let entry = (d + 1) << 32 | u64::from(i) << 16;
                let tagged = entry | u64::from(fingerprint(hash));
                let mut slot = home(hash, mask);
                for _ in 0..MAX_PROBE {
                    let Some(held) = slots.get_mut(slot) else {
                        break;
                    };
                    if *held == TABLE_EMPTY {
                        *held = tagged;
                        continue 'names;
                    }
                    if *held as u16 == tagged as u16 && self.name_of(*held) == name {
                        outcome = Some(Err(Self::repeat(entry)));
                        break 'dirs;
                    }
                    slot = slot.wrapping_add(1) & mask;
                }
                outcome = None;
                break 'dirs;
            }
        }
        self.slots = slots;
        outcome
    }

    fn fill_sorted(&mut self) -> core::result::Result<(), RepeatedName> {
        let mut order: alloc::vec::Vec<u64> = self.entries().collect();
        order
            .sort_unstable_by(|&a, &b| cmp_bytes(self.name_of(a), self.name_of(b)).then(a.cmp(&b)));
        let first = order
            .windows(2)
            .filter_map(|pair| match pair {
                [a, b] if self.name_of(*a) == self.name_of(*b) => Some(*b),
                _ => None,
            })
            .min();
        if let Some(entry) = first {
            return Err(Self::repeat(entry));
        }
        self.slots = order;
        Ok(())
    }

    /// The tensor named `name`.
    #[inline]
    pub fn get(&self, name: &str) -> Option<TensorView<'a>> {
        self.located(name).map(|(_, view)| view)
    }

    /// The tensor named `name` and the position of its directory.
    #[inline]
    #[doc(hidden)]
    pub fn located(&self, name: &str) -> Option<(usize, TensorView<'a>)> {
        let needle = name.as_bytes();
        if needle.is_empty() {
            return None;
        }
        if let Some(only) = self.only {
            return Some((only, self.dirs.get(only)?.by_name(name)?));
        }
        let entry = if self.hashed {
            let mask = self.slots.len().wrapping_sub(1);
            let hash = hash_name(needle);
            let tag = fingerprint(hash);
            let mut slot = home(hash, mask);
            let mut found = None;
            for _ in 0..MAX_PROBE {
                let held = *self.slots.get(slot)?;
                if held == TABLE_EMPTY {
                    return None;
                }
                if held as u16 == tag && self.name_of(held) == needle {
                    found = Some(held);
                    break;
                }
                slot = slot.wrapping_add(1) & mask;
            }
            found?
        } else {
            let at = self
                .slots
                .binary_search_by(|&e| cmp_bytes(self.name_of(e), needle))
                .ok()?;
            *self.slots.get(at)?
        };
        let dir = ((entry >> 32) as usize).wrapping_sub(1);
        let view = self.dirs.get(dir)?.get(((entry >> 16) & 0xFFFF) as usize)?;
        Some((dir, view))
    }

    /// The directories, in the order given.
    pub fn directories(&self) -> &[Directory<'a>] {
        &self.dirs
    }

    /// How many named tensors the table holds.
    pub const fn len(&self) -> usize {
        self.named
    }

    /// Whether it holds none.
    pub const fn is_empty(&self) -> bool {
        self.named == 0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, clippy::unwrap_used)]

    use super::*;

    /// The first repeat, by comparing every pair.
    fn naive(names: &[&[u8]]) -> Option<u32> {
        (0..names.len()).find_map(|i| {
            let earlier = names.get(..i).unwrap_or_default();
            (!names[i].is_empty() && earlier.contains(&names[i])).then_some(i as u32)
        })
    }

    /// Repeats near and far apart (across the 256-name chunks of the
    /// no-allocator path), unnamed tensors, and none at all; names of each
    /// count in shuffled order.
    /// A table too small to hold every name within MAX_PROBE slots of
    /// its hash's slot is refused, and `index_names` then uses the sorted
    /// order (lookups still find every name).
    #[cfg(feature = "alloc")]
    #[test]
    fn a_full_hash_table_falls_back() {
        use crate::{to_vec, TensorSpec, Tensors};
        let one = [1u8];
        let names: Vec<String> = (0..40).map(|i| format!("w{}", 39 - i)).collect();
        let specs: Vec<TensorSpec> = names
            .iter()
            .map(|n| TensorSpec::new(crate::Dtype::U8, &[1], &one).named(n))
            .collect();
        let block = to_vec(&Tensors(&specs)).unwrap();
        let dir = Directory::parse(&block).unwrap();
        assert!(!dir.names_sorted());
        let mut small = vec![EMPTY; 2 * 4];
        assert!(!dir.fill_hash(&mut small));
        let mut enough = vec![EMPTY; 2 * 128];
        assert!(dir.fill_hash(&mut enough));
        let index = dir.index_names();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(index.get(n).map(|t| t.index()), Some(i));
        }
        assert!(index.get("w40").is_none());
    }

    /// A name table over several directories finds every name in both of
    /// its forms (hashed, and the sorted fallback hostile names get), and
    /// refuses a name two directories share, naming the later one.
    #[cfg(feature = "alloc")]
    #[test]
    fn a_name_table_spans_directories() {
        use crate::{to_vec, TensorSpec, Tensors};
        let one = [1u8];
        let block = |names: &[String]| {
            let specs: Vec<TensorSpec> = names
                .iter()
                .map(|n| TensorSpec::new(crate::Dtype::U8, &[1], &one).named(n))
                .collect();
            to_vec(&Tensors(&specs)).unwrap()
        };
        let a: Vec<String> = (0..300).map(|i| format!("layers.{i}.w")).collect();
        let b: Vec<String> = (0..300).rev().map(|i| format!("layers.{i}.b")).collect();
        let (ba, bb) = (block(&a), block(&b));
        let dirs = vec![
            Directory::parse(&ba).unwrap(),
            Directory::parse(&bb).unwrap(),
        ];
        let hashed = NameTable::new(dirs.clone()).unwrap();
        assert!(hashed.hashed);
        let mut sorted = NameTable {
            dirs: dirs.clone(),
            slots: Vec::new(),
            hashed: false,
            named: 600,
            only: None,
        };
        sorted.fill_sorted().unwrap();
        for table in [&hashed, &sorted] {
            assert_eq!(table.len(), 600);
            for (d, names) in [(0, &a), (1, &b)] {
                for (i, n) in names.iter().enumerate() {
                    let (dir, view) = table.located(n).unwrap();
                    assert_eq!((dir, view.index()), (d, i), "{n}");
                }
            }
            assert!(table.get("layers.300.w").is_none());
            assert!(table.get("").is_none());
        }
        let mut c = a[..5].to_vec();
        c.push(b[7].clone());
        let bc = block(&c);
        let with_repeat = vec![
            dirs[0].clone(),
            dirs[1].clone(),
            Directory::parse(&bc).unwrap(),
        ];
        let want = RepeatedName {
            directory: 2,
            index: 0,
        };
        assert_eq!(NameTable::new(with_repeat.clone()).unwrap_err(), want);
        let mut sorted = NameTable {
            dirs: with_repeat,
            slots: Vec::new(),
            hashed: false,
            named: 606,
            only: None,
        };
        // The sorted form reports the smallest repeated entry: directory 2's
        // first tensor repeats directory 0's.
        assert_eq!(sorted.fill_sorted().unwrap_err(), want);
    }

    /// The names one lookup by name reads, counted through `compared` and
    /// each probe of the binary search.
    fn names_read(dir: &Directory<'_>, name: &str) -> (usize, Option<usize>) {
        NAMES_COMPARED.with(|n| n.set(0));
        let found = dir.by_name(name).map(|v| v.index());
        (NAMES_COMPARED.with(core::cell::Cell::get), found)
    }

    /// With `alloc`, `by_name` on names in model order (not byte order)
    /// reads at most a few names per lookup, through the table the parse
    /// kept: a scan would read hundreds. Also through the sorted order the
    /// parse keeps when it was given scratch, and through a clone.
    #[cfg(feature = "alloc")]
    #[test]
    fn lookups_in_model_order_are_not_scans() {
        use crate::{to_vec, TensorSpec, Tensors};
        let one = [1u8];
        let names: Vec<String> = (0..1000)
            .map(|i| {
                format!(
                    "model.layers.{}.mlp.experts.{}.up_proj.weight",
                    i / 10,
                    i % 10
                )
            })
            .collect();
        let specs: Vec<TensorSpec> = names
            .iter()
            .map(|n| TensorSpec::new(crate::Dtype::U8, &[1], &one).named(n))
            .collect();
        let block = to_vec(&Tensors(&specs)).unwrap();
        let parsed = Directory::parse(&block).unwrap();
        assert!(!parsed.names_sorted());
        let mut scratch = vec![0u32; names.len()];
        let with_scratch =
            Directory::parse_with_scratch(&block, crate::Limits::DEFAULT, &mut scratch).unwrap();
        for dir in [parsed.clone(), with_scratch] {
            let mut most = 0;
            for (i, n) in names.iter().enumerate() {
                let (read, found) = names_read(&dir, n);
                assert_eq!(found, Some(i), "{n}");
                most = most.max(read);
            }
            // Hashed: one read per matching fingerprint; sorted: about
            // log2(1000) = 10 probes, plus the match.
            assert!(most <= 12, "a lookup read {most} names");
            let (read, found) = names_read(&dir, "model.layers.100.mlp.experts.0.up_proj.weight");
            assert_eq!(found, None);
            assert!(read <= 12, "a miss read {read} names");
        }
        // A directory known only by its fields (no parse) scans, which the
        // counter sees: the bound above is one a scan does not meet.
        let lean = parsed.lean().full();
        let (read, found) = names_read(&lean, names.last().unwrap());
        assert_eq!((read, found), (1000, Some(999)));
    }

    /// A standalone block of one-byte `u8` tensors named `names`, in
    /// that order (no allocator needed).
    fn block_of(names: &[String]) -> Vec<u8> {
        use crate::{to_slice, TensorSpec, Tensors};
        let one = [1u8];
        let specs: Vec<TensorSpec> = names
            .iter()
            .map(|n| TensorSpec::new(crate::Dtype::U8, &[1], &one).named(n))
            .collect();
        let mut buf = vec![0u8; 64 + names.len() * (128 + 64) + names.len() * 64];
        let len = to_slice(&Tensors(&specs), &mut buf).unwrap().len();
        buf.truncate(len);
        buf
    }

    /// Names in byte order, as converters write them: long names sharing
    /// long prefixes at 1,000, short ones at 10,000 (the most the 16-bit
    /// heap offsets allow at that count). `by_name` finds every name at
    /// its index and nothing for names that are not there (before the
    /// first, after the last, between two, a prefix, a longer name).
    /// With `alloc` it goes through the hash table the parse kept, at most
    /// a couple of names read per lookup where the binary search reads
    /// about log2(n) (10 to 14); without it, through the binary search,
    /// never a scan. A directory with no table (known by its fields only)
    /// binary-searches with `alloc` too.
    #[test]
    fn sorted_lookups_find_every_name() {
        let long: Vec<String> = {
            let mut v: Vec<String> = (0..1000)
                .map(|i| {
                    format!(
                        "model.layers.{}.mlp.experts.{}.up_proj.weight",
                        i / 10,
                        i % 10
                    )
                })
                .collect();
            v.sort();
            v
        };
        let short: Vec<String> = {
            let mut v: Vec<String> = (0..10_000).map(|i| format!("t{i}")).collect();
            v.sort();
            v
        };
        let misses = [
            "",
            "a",
            "model.layers.0.mlp.experts.0.up_proj.weigh",
            "model.layers.0.mlp.experts.0.up_proj.weightt",
            "model.layers.100.mlp.experts.0.up_proj.weight",
            "model.layers.17.mlp.experts.4.up_proj.weight.",
            "t",
            "t10000",
            "t0000",
            "t99999",
            "u",
            "\u{ff}",
        ];
        for names in [&long, &short] {
            let block = block_of(names);
            let dir = Directory::parse(&block).unwrap();
            assert!(dir.names_sorted());
            assert_eq!(dir.names.is_kept(), cfg!(feature = "alloc"));
            let log2 = usize::BITS - names.len().leading_zeros();
            let mut scratch = vec![0u32; names.len()];
            let with_scratch =
                Directory::parse_with_scratch(&block, crate::Limits::DEFAULT, &mut scratch)
                    .unwrap();
            for d in [dir.clone(), with_scratch] {
                let mut most = 0;
                for (i, n) in names.iter().enumerate() {
                    let (read, found) = names_read(&d, n);
                    assert_eq!(found, Some(i), "{n}");
                    assert!(read >= 1, "{n}: found without reading a name");
                    most = most.max(read);
                }
                let bound = if cfg!(feature = "alloc") {
                    2
                } else {
                    log2 as usize
                };
                assert!(most <= bound, "a lookup read {most} names");
                for miss in misses {
                    let (read, found) = names_read(&d, miss);
                    assert_eq!(found, None, "{miss:?}");
                    assert!(read <= bound, "a miss of {miss:?} read {read} names");
                }
            }
            // Known by its fields only: no table, so the binary search,
            // which reads more names than the table's bound.
            let lean = dir.lean().full();
            assert!(!lean.names.is_kept());
            let mut most = 0;
            for (i, n) in names.iter().enumerate() {
                let (read, found) = names_read(&lean, n);
                assert_eq!(found, Some(i), "{n}");
                most = most.max(read);
            }
            assert!(most > 2 && most <= log2 as usize, "{most}");
            for miss in misses {
                assert_eq!(lean.by_name(miss), None, "{miss:?}");
            }
        }
    }

    #[test]
    fn first_repeat_finds_the_first_repeat() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for count in [0usize, 1, 2, 3, 255, 256, 257, 600, 1000] {
            let mut base: Vec<Vec<u8>> = (0..count).map(|i| format!("n{i}").into_bytes()).collect();
            for i in (1..count).rev() {
                base.swap(i, (next() % (i as u64 + 1)) as usize);
            }
            let mut variants = vec![base.clone()];
            for _ in 0..6 {
                if count < 2 {
                    break;
                }
                let mut v = base.clone();
                let (a, b) = (
                    (next() % count as u64) as usize,
                    (next() % count as u64) as usize,
                );
                v[b] = v[a].clone();
                if next() % 3 == 0 {
                    let c = (next() % count as u64) as usize;
                    v[c] = Vec::new();
                }
                variants.push(v);
            }
            for v in &variants {
                let names: Vec<&[u8]> = v.iter().map(Vec::as_slice).collect();
                let name = |i: u32| names[i as usize];
                let want = naive(&names);
                assert_eq!(first_repeat(count as u32, name, None).0, want, "{count}");
                assert_eq!(first_repeat_pairwise(count as u32, &name), want, "{count}");
                let mut scratch = vec![0u32; count];
                assert_eq!(first_repeat(count as u32, name, Some(&mut scratch)).0, want);
            }
        }
    }

    /// `NameAt::cmp` and `cmp_bytes` give `<[u8]>::cmp` for names with
    /// zero bytes, shared prefixes and every length around a word, read
    /// from anywhere in a block, its last bytes included.
    #[test]
    fn word_of_pads_with_zeros() {
        for len in 0..=9 {
            let bytes: Vec<u8> = (1..=len as u8).map(|b| b * 17).collect();
            let mut padded = [0u8; 8];
            for (slot, &b) in padded.iter_mut().zip(&bytes) {
                *slot = b;
            }
            assert_eq!(word_of(&bytes), u64::from_be_bytes(padded), "{len}");
        }
    }

    #[test]
    fn word_compares_are_byte_compares() {
        let alphabet: &[&[u8]] = &[
            b"",
            b"\0",
            b"a",
            b"a\0",
            b"ab",
            b"abcdefg",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefghi",
            b"abcdefgz",
            b"layers.1",
            b"layers.17.attn.q_proj.weight",
            b"layers.17.attn.k_proj.weight",
            b"layers.17.attn.q_proj.weigh",
            b"\xff\xff",
            b"t1",
            b"t10",
            b"t9999",
            b"abcdefghabcdefgh",
            b"abcdefghabcdefgh\0",
        ];
        for &name in alphabet {
            // The name at the very end of the block, and with bytes after it.
            for after in [
                &b""[..],
                b"\xff\xff\xff\xff\xff\xff\xff\xff\xff",
                b"\0\0\0\0\0\0\0\0",
            ] {
                let mut block = b"xyz".to_vec();
                block.extend_from_slice(name);
                block.extend_from_slice(after);
                let at = NameAt {
                    block: &block,
                    at: 3,
                    len: name.len(),
                };
                for &needle in alphabet {
                    assert_eq!(
                        at.cmp(&Needle::new(needle)),
                        name.cmp(needle),
                        "{name:?} {needle:?}"
                    );
                    assert_eq!(cmp_bytes(name, needle), name.cmp(needle));
                }
            }
        }
    }
}
