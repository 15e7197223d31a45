//! The one limit of a Kiln directory that real model files can reach: the
//! name heap is addressed by u16 offsets, and 0xFFFF means "absent", so
//! every tensor name and layout name must start below byte 65,535 of the
//! heap. The heap holds all tensor names in order, then all layout names.
//!
//! A file whose names do not fit is refused, not split over several
//! directories: one input file stays one Kiln message of one fixed type, so
//! converting back needs no list-of-directories type and no rule for where
//! to cut. The refusal says how many tensors would fit.

use crate::error::{Error, Result};

/// Largest heap offset a present name may start at (0xFFFF is "absent").
pub const MAX_NAME_OFFSET: u64 = 0xFFFE;

/// Checks that `(name, layout)` pairs, in directory order, give a heap the
/// builder can address. `what` names the input, for the message.
pub(crate) fn check_heap<'a, I>(entries: I, what: &str) -> Result<()>
where
    I: Clone + Iterator<Item = (&'a str, Option<&'a str>)>,
{
    for (name, _) in entries.clone() {
        if name.is_empty() {
            return Err(Error::unsupported(format!(
                "{what} has a tensor with an empty name; Kiln names are at least one byte"
            )));
        }
        if name.len() > usize::from(u16::MAX) {
            return Err(Error::unsupported(format!(
                "{what} has a tensor name of {} bytes; a Kiln name is at most 65,535 bytes",
                name.len()
            )));
        }
    }
    if fits(entries.clone()) {
        return Ok(());
    }
    // The longest prefix of tensors whose own heap fits.
    let all: Vec<_> = entries.collect();
    let (mut lo, mut hi) = (0usize, all.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(all.iter().take(mid).copied()) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let heap = |n: usize| -> u64 {
        all.iter()
            .take(n)
            .map(|(name, layout)| (name.len() + layout.map_or(0, str::len)) as u64)
            .sum()
    };
    let layouts = all.iter().filter(|(_, l)| l.is_some()).count();
    Err(Error::unsupported(format!(
        "{what} has {} tensors whose names{} need a {}-byte name heap, but a Kiln \
         directory addresses its heap with u16 offsets, so every name must start \
         below byte 65,535: only the first {lo} tensors ({} heap bytes) would fit. \
         Refused rather than split over several directories, so that one file stays \
         one Kiln message",
        all.len(),
        if layouts > 0 {
            format!(" and {layouts} layout names")
        } else {
            String::new()
        },
        heap(all.len()),
        heap(lo),
    )))
}

/// Whether every present slot starts at or below [`MAX_NAME_OFFSET`].
fn fits<'a>(entries: impl Clone + Iterator<Item = (&'a str, Option<&'a str>)>) -> bool {
    let mut cursor = 0u64;
    for (name, _) in entries.clone() {
        if cursor > MAX_NAME_OFFSET {
            return false;
        }
        cursor += name.len() as u64;
    }
    for layout in entries.filter_map(|(_, layout)| layout) {
        if cursor > MAX_NAME_OFFSET || layout.len() > usize::from(u16::MAX) {
            return false;
        }
        cursor += layout.len() as u64;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heap_that_fits_passes() {
        let names = ["a".repeat(65_534), "b".into()];
        assert!(check_heap(names.iter().map(|n| (n.as_str(), None)), "x").is_ok());
    }

    #[test]
    fn a_name_at_offset_0xffff_is_refused_with_the_count_that_fits() {
        let names = ["a".repeat(65_535), "b".into(), "c".into()];
        let err = check_heap(names.iter().map(|n| (n.as_str(), None)), "x").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("only the first 1 tensors (65535 heap bytes)"),
            "{text}"
        );
        assert!(text.contains("3 tensors"), "{text}");
    }

    #[test]
    fn layout_names_count_after_every_tensor_name() {
        let names: Vec<String> = (0..2000)
            .map(|i| format!("blk.{i:04}.attn_q.weight"))
            .collect();
        // 2000 names of 21 bytes = 42,000 bytes; layouts of 4 bytes each
        // push the last ones past 65,534 only when there are enough.
        let ok = check_heap(names.iter().map(|n| (n.as_str(), Some("Q4_K"))), "x");
        assert!(ok.is_ok());
        let many: Vec<String> = (0..2700)
            .map(|i| format!("blk.{i:04}.attn_q.weight"))
            .collect();
        let err = check_heap(many.iter().map(|n| (n.as_str(), Some("Q4_K"))), "x").unwrap_err();
        assert!(err.to_string().contains("2700 layout names"), "{err}");
    }
}
