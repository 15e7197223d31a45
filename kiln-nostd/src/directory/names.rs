//! Tensor names: the uniqueness rule (step 8d) and lookup by name.
//!
//! Work is bounded for every count. When the names are already in strictly
//! increasing byte order (a dict of tensors, and every file our converters
//! write), one pass proves them unique and lookups are binary searches
//! with no index at all. Otherwise the indices are sorted by name:
//!
//! - with the `alloc` feature, in a vector: O(n log n);
//! - in caller scratch ([`Directory::parse_with_scratch`], one `u32` per
//!   tensor): O(n log n) with no allocator;
//! - otherwise, without an allocator, in a fixed 256-entry stack buffer
//!   (1 KiB): O(n log n) up to 256 names; a larger unsorted directory is
//!   checked chunk by chunk (each chunk sorted, every later name
//!   binary-searched in it), O(n² / 256 · log 256). No method does better
//!   with constant extra memory over read-only bytes, which is why the
//!   scratch path exists; the 16-bit heap offsets cap a directory at 65,535
//!   names, so even this path is bounded.
//!
//! A directory that names its tensors has at most 65,535 of them (every
//! name is at least one byte at a distinct 16-bit offset), so a tensor
//! index of a named directory fits in a `u16`.

use core::cmp::Ordering;

use super::{Directory, TensorView};
use crate::error::{Error, Refusal, Result};

/// Stack scratch for sorting names without an allocator.
#[cfg(not(feature = "alloc"))]
const STACK_NAMES: usize = 256;

/// The first tensor whose name repeats an earlier one (the smallest `i`
/// with `name(i) == name(j)` for some `j < i`), and whether the names are
/// in strictly increasing byte order. `name(i)` empty means unnamed;
/// unnamed tensors take no part.
pub(crate) fn first_repeat<'n>(
    count: u32,
    name: impl Fn(u32) -> &'n [u8],
    scratch: Option<&mut [u32]>,
) -> (Option<u32>, bool) {
    let increasing = (1..count).all(|i| name(i.saturating_sub(1)) < name(i));
    if increasing {
        return (None, true);
    }
    // Caller scratch large enough: one sort, O(n log n), no allocator.
    if let Some(order) = scratch.and_then(|s| s.get_mut(..count as usize)) {
        for (slot, i) in order.iter_mut().zip(0..count) {
            *slot = i;
        }
        sort_by_name(order, &name);
        return (repeat_in_sorted(order, &name), false);
    }
    (first_repeat_unsorted(count, &name), false)
}

#[cfg(feature = "alloc")]
fn first_repeat_unsorted<'n>(count: u32, name: &impl Fn(u32) -> &'n [u8]) -> Option<u32> {
    let mut order: alloc::vec::Vec<u32> = (0..count).filter(|&i| !name(i).is_empty()).collect();
    sort_by_name(&mut order, name);
    repeat_in_sorted(&order, name)
}

#[cfg(not(feature = "alloc"))]
fn first_repeat_unsorted<'n>(count: u32, name: &impl Fn(u32) -> &'n [u8]) -> Option<u32> {
    let mut scratch = [0u32; STACK_NAMES];
    let mut first: Option<u32> = None;
    let mut keep = |candidate: Option<u32>| {
        if let Some(c) = candidate {
            first = Some(first.map_or(c, |f| f.min(c)));
        }
    };
    let mut start = 0u32;
    while start < count {
        let end = start.saturating_add(STACK_NAMES as u32).min(count);
        let chunk = scratch
            .get_mut(..(end - start) as usize)
            .unwrap_or_default();
        for (slot, i) in chunk.iter_mut().zip(start..end) {
            *slot = i;
        }
        sort_by_name(chunk, name);
        keep(repeat_in_sorted(chunk, name));
        // A later name equal to one in this chunk repeats it.
        for later in end..count {
            let this = name(later);
            if !this.is_empty() && chunk.binary_search_by(|&j| name(j).cmp(this)).is_ok() {
                keep(Some(later));
                break;
            }
        }
        start = end;
    }
    first
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

// ---------------------------------------------------------------------------
// Lookup

impl<'a> Directory<'a> {
    /// The tensor named `name`. Unnamed tensors have no name, so `""` finds
    /// nothing.
    ///
    /// A binary search, O(log n), when the names are in increasing byte
    /// order ([`Directory::names_sorted`]); otherwise a linear scan, which
    /// is the simplest path for the handful of tensors of a firmware
    /// message. For repeated lookups in a large unsorted directory, build a
    /// [`NameIndex`] once ([`Directory::index_names_in`], or
    /// [`Directory::index_names`] with `alloc`).
    pub fn by_name(&self, name: &str) -> Option<TensorView<'a>> {
        if name.is_empty() || !self.has_names() {
            return None;
        }
        let index = if self.names_sorted() {
            let mut low = 0u32;
            let mut high = self.tensor_count;
            let mut found = None;
            while low < high {
                let mid = low + (high - low) / 2;
                match self.name_at(mid).cmp(name.as_bytes()) {
                    Ordering::Less => low = mid + 1,
                    Ordering::Greater => high = mid,
                    Ordering::Equal => {
                        found = Some(mid);
                        break;
                    }
                }
            }
            found?
        } else {
            (0..self.tensor_count).find(|&i| self.name_at(i) == name.as_bytes())?
        };
        self.get(index as usize)
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
                dir: *self,
                order: &[],
            });
        }
        let order = storage.get_mut(..self.len()).ok_or(Error::refused(
            Refusal::Capacity,
            "name index storage smaller than the tensor count",
        ))?;
        self.fill_order(order);
        Ok(NameIndex {
            dir: *self,
            order: &*order,
        })
    }

    /// Builds an index for O(log n) lookups by name, in a vector.
    #[cfg(feature = "alloc")]
    pub fn index_names(&self) -> NameIndex<'a, alloc::vec::Vec<u16>> {
        let mut order = alloc::vec::Vec::new();
        if !self.names_sorted() && self.has_names() {
            order.resize(self.len(), 0);
            self.fill_order(&mut order);
        }
        NameIndex { dir: *self, order }
    }

    /// Tensor indices sorted by name. A named directory has at most 65,535
    /// tensors, so every index fits in a `u16`.
    fn fill_order(&self, order: &mut [u16]) {
        for (slot, i) in order.iter_mut().zip(0u16..) {
            *slot = i;
        }
        sort(order, |&a, &b| {
            self.name_at(u32::from(a)).cmp(self.name_at(u32::from(b)))
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
    /// Tensor indices in name order; empty when the directory's own order
    /// is already by name.
    order: S,
}

impl<'a, S: AsRef<[u16]>> NameIndex<'a, S> {
    /// The tensor named `name`, in O(log n).
    pub fn get(&self, name: &str) -> Option<TensorView<'a>> {
        let order = self.order.as_ref();
        if order.is_empty() {
            return self.dir.by_name(name);
        }
        let at = order
            .binary_search_by(|&i| self.dir.name_at(u32::from(i)).cmp(name.as_bytes()))
            .ok()?;
        let index = order.get(at)?;
        self.dir.get(usize::from(*index))
    }

    /// The directory this index looks into.
    pub const fn directory(&self) -> &Directory<'a> {
        &self.dir
    }
}
