//! Splitting a model's tensors over directories: a Kiln directory
//! addresses its name heap with u16 offsets (0xFFFF means "absent"), so
//! one directory holds at most 64 KiB of names. A model with more (a
//! mixture-of-experts model has megabytes) gets as many directories as it
//! needs, cut in its own tensor order, so reading the directories one
//! after the other gives the tensors in the source order.

use std::ops::Range;

use crate::error::{Error, Result};

/// Largest heap offset a present name may start at (0xFFFF is "absent").
pub const MAX_NAME_OFFSET: u64 = 0xFFFE;

/// Heap bytes one directory is filled to: every name and layout name then
/// starts at or below [`MAX_NAME_OFFSET`] (each is at least one byte).
const HEAP_BUDGET: u64 = MAX_NAME_OFFSET + 1;

/// Cuts `(name, layout)` pairs, in directory order, into consecutive
/// ranges whose heaps (names, then layout names) each fit one directory;
/// always at least one range (empty for no tensors). `what` names the
/// input, for the message when a single name cannot fit.
pub(crate) fn split<'a, I>(entries: I, what: &str) -> Result<Vec<Range<usize>>>
where
    I: Iterator<Item = (&'a str, Option<&'a str>)>,
{
    let mut ranges = Vec::new();
    let (mut start, mut used, mut count) = (0usize, 0u64, 0usize);
    for (i, (name, layout)) in entries.enumerate() {
        if name.is_empty() {
            return Err(Error::unsupported(format!(
                "{what} has a tensor with an empty name; Kiln names are at least one byte"
            )));
        }
        let need = name.len() as u64 + layout.map_or(0, |l| l.len() as u64);
        if need > HEAP_BUDGET {
            return Err(Error::unsupported(format!(
                "{what} has a tensor name of {} bytes (with its layout name); a Kiln name is \
                 at most 65,535 bytes",
                need
            )));
        }
        if used + need > HEAP_BUDGET {
            ranges.push(start..i);
            (start, used) = (i, 0);
        }
        used += need;
        count = i + 1;
    }
    ranges.push(start..count);
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heap_that_fits_is_one_directory() {
        let names = ["a".repeat(65_534), "b".into()];
        let r = split(names.iter().map(|n| (n.as_str(), None)), "x").unwrap();
        assert_eq!(r, vec![0..2]);
        assert_eq!(split(std::iter::empty(), "x").unwrap(), vec![0..0]);
    }

    #[test]
    fn names_past_64_kib_start_a_new_directory() {
        let names = ["a".repeat(65_535), "b".into(), "c".into()];
        let r = split(names.iter().map(|n| (n.as_str(), None)), "x").unwrap();
        assert_eq!(r, vec![0..1, 1..3]);
        let long = ["a".repeat(65_536)];
        let err = split(long.iter().map(|n| (n.as_str(), None)), "x").unwrap_err();
        assert!(err.to_string().contains("65536 bytes"), "{err}");
    }

    #[test]
    fn layout_names_count_with_their_tensor() {
        let names: Vec<String> = (0..2700)
            .map(|i| format!("blk.{i:04}.attn_q.weight"))
            .collect();
        let r = split(names.iter().map(|n| (n.as_str(), Some("Q4_K"))), "x").unwrap();
        // 22 + 4 = 26 bytes each: 2520 fit in 65,535.
        assert_eq!(r, vec![0..2520, 2520..2700]);
    }
}
