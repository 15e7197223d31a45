//! `Directory::parse`: the one gate. It runs the check order of `spec/kiln-v2.md`
//! section 14, steps 1 to 12, each step over every descriptor before the next starts,
//! so that a block with several faults reports the same first fault in
//! every reader. Nothing is allocated; the cost is proportional to the
//! tensor count, the name bytes and the alignment gaps, plus one pass over
//! bool payloads (the format requires their bytes to be checked).

use super::descriptor::*;
use super::names;
use super::rules;
use super::Directory;
use crate::error::{Code, Error, Result};
use crate::limits::Limits;
use crate::wire::{check_cap, check_fits};

/// How the block sits in the caller's buffer.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum Placement {
    /// The buffer is this one block: bytes after it are TRAILING.
    Standalone,
    /// The block is a `tensors` field: bytes after it belong to the next
    /// field.
    Field,
}

fn fault(code: Code, fault: &'static str, at: u64) -> Error {
    Error::wire(code, fault, usize::try_from(at).unwrap_or(usize::MAX))
}

/// `N` bytes at `at`, or zeros past the end (callers have checked length).
fn bytes_at<const N: usize>(buf: &[u8], at: usize) -> [u8; N] {
    buf.get(at..)
        .and_then(<[u8]>::first_chunk::<N>)
        .copied()
        .unwrap_or([0u8; N])
}

fn u16_at(buf: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(bytes_at(buf, at))
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes_at(buf, at))
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes_at(buf, at))
}

pub(crate) fn parse<'a>(
    buf: &'a [u8],
    limits: Limits,
    placement: Placement,
    trusted: bool,
    scratch: Option<&mut [u32]>,
) -> Result<Directory<'a>> {
    // Step 1: magic, and a whole header.
    if buf.len() < MAGIC.len() {
        return Err(fault(
            Code::Eof,
            "fewer than 4 bytes for the directory magic",
            0,
        ));
    }
    if buf.get(..4) != Some(&MAGIC[..]) {
        return Err(fault(Code::Frame, "directory magic is not KLNT", 0));
    }
    if (buf.len() as u64) < HEADER_LEN {
        return Err(fault(
            Code::Eof,
            "fewer than 64 bytes for the directory header",
            4,
        ));
    }

    // Step 2: version, flags, reserved header bytes.
    let version = buf.get(4).copied().unwrap_or(0);
    let flags = buf.get(5).copied().unwrap_or(0);
    if version != DIRECTORY_VERSION {
        return Err(fault(Code::Frame, "directory version is not 2", 4));
    }
    if flags & !(FLAG_NAMES | FLAG_LITTLE_ENDIAN) != 0 {
        return Err(fault(Code::Frame, "unknown directory flag bit", 5));
    }
    if flags & FLAG_LITTLE_ENDIAN == 0 {
        return Err(fault(Code::Frame, "little-endian flag is clear", 5));
    }
    let reserved = buf.get(6..8).into_iter().chain(buf.get(32..64)).flatten();
    if reserved.clone().any(|&b| b != 0) {
        let at = if u16_at(buf, 6) != 0 { 6 } else { 32 };
        return Err(fault(Code::Frame, "nonzero reserved header byte", at));
    }

    // Step 3: caps, before anything is sized by the claims.
    let tensor_count = u32_at(buf, 8);
    let name_bytes = u32_at(buf, 12);
    let payload_bytes = u64_at(buf, 16);
    let directory_bytes = u64_at(buf, 24);
    check_cap(
        tensor_count.into(),
        limits.count_cap,
        "tensor count above the cap",
        8,
    )?;
    check_cap(
        name_bytes.into(),
        limits.byte_cap,
        "name heap above the byte cap",
        12,
    )?;

    // Step 4: directory_bytes agrees with the count and the heap. The sum
    // of a u32 times 128 and a u32 cannot overflow a u64.
    let expected_directory = u64::from(tensor_count)
        .saturating_mul(DESCRIPTOR_LEN)
        .saturating_add(u64::from(name_bytes));
    if directory_bytes != expected_directory {
        return Err(fault(
            Code::Type,
            "directory_bytes is not tensor_count * 128 + name_bytes",
            24,
        ));
    }

    // Step 5: descriptors and heap lie inside the buffer.
    check_fits(
        tensor_count.into(),
        DESCRIPTOR_LEN,
        HEADER_LEN.saturating_add(name_bytes.into()),
        buf.len(),
        "directory extends past the end of the buffer",
        8,
    )?;

    // Step 6: the whole block lies inside the buffer.
    let heap_end = HEADER_LEN.saturating_add(directory_bytes);
    let payload_base = align_up(heap_end).unwrap_or(u64::MAX);
    let block_len = payload_base.checked_add(payload_bytes).ok_or(fault(
        Code::Limit,
        "payload_base + payload_bytes overflows 64 bits",
        16,
    ))?;
    if block_len > buf.len() as u64 {
        return Err(fault(
            Code::Eof,
            "payload region extends past the end of the buffer",
            16,
        ));
    }
    // Every offset below is inside `buf`, so it fits in usize.
    let as_usize = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    let block = buf.get(..as_usize(block_len)).unwrap_or(&[]);

    // Step 7: padding between the heap and the payloads is zero.
    let padding = block
        .get(as_usize(heap_end)..as_usize(payload_base))
        .unwrap_or(&[]);
    if let Some(i) = padding.iter().position(|&b| b != 0) {
        return Err(fault(
            Code::Type,
            "nonzero padding byte before the payloads",
            heap_end.saturating_add(i as u64),
        ));
    }

    let mut dir = Directory {
        block,
        offset: 0,
        tensor_count,
        name_bytes,
        payload_base: as_usize(payload_base),
        flags,
        names_sorted: false,
    };

    dir.names_sorted = check_names(&dir, trusted, scratch)?;
    check_shapes_and_ranges(&dir, payload_bytes)?;
    check_canonical_placement(&dir, payload_bytes)?;
    check_payload_bits_and_quant(&dir, trusted)?;

    // Step 12: a standalone block is the whole buffer.
    if placement == Placement::Standalone && buf.len() > block.len() {
        return Err(fault(
            Code::Trailing,
            "bytes after the end of the directory block",
            block_len,
        ));
    }
    Ok(dir)
}

/// Step 8: (a) reserved descriptor bytes, (b) flag rules and every name and
/// layout slice against the canonical heap, (c) UTF-8, (d) unique names.
/// Returns whether the names are in strictly increasing byte order.
fn check_names(dir: &Directory<'_>, trusted: bool, scratch: Option<&mut [u32]>) -> Result<bool> {
    // (a)
    for (i, r) in dir.records() {
        if !r.reserved_clear() {
            return Err(dir.fault_in(i, Code::Frame, "nonzero reserved descriptor byte", 3));
        }
    }

    // (b) The heap is the names in descriptor order, then the layout names
    // in descriptor order, with nothing between or after.
    let named = dir.flags & FLAG_NAMES != 0;
    if named && dir.tensor_count == 0 {
        return Err(fault(Code::Type, "name flag set on an empty directory", 5));
    }
    let heap_len = u64::from(dir.name_bytes);
    let mut cursor: u64 = 0;
    let mut walk = |i: u32, off: u16, len: u16, must_be_present: Option<bool>, field: usize| {
        let present = len != 0;
        if let Some(required) = must_be_present {
            if present != required {
                let fault = if required {
                    "name flag set but this tensor has no name"
                } else {
                    "name flag clear but this tensor has a name"
                };
                return Err(dir.fault_in(i, Code::Type, fault, field));
            }
        }
        if !present {
            if off != NO_OFFSET {
                return Err(dir.fault_in(i, Code::Type, "empty slice with an offset", field));
            }
            return Ok(());
        }
        if off == NO_OFFSET || u64::from(off) != cursor {
            return Err(dir.fault_in(
                i,
                Code::Type,
                "slice is not at its canonical heap offset",
                field,
            ));
        }
        cursor = cursor.saturating_add(u64::from(len));
        if cursor > heap_len {
            return Err(dir.fault_in(i, Code::Type, "slice ends past the name heap", field));
        }
        Ok(())
    };
    for (i, r) in dir.records() {
        walk(i, r.name_off(), r.name_len(), Some(named), 4)?;
    }
    for (i, r) in dir.records() {
        walk(i, r.layout_off(), r.layout_len(), None, 8)?;
    }
    if cursor != heap_len {
        return Err(fault(Code::Type, "name heap has bytes no name uses", 12));
    }

    // (c) Every slice lies inside the heap (b), so an ASCII heap has only
    // UTF-8 slices; otherwise each slice is checked, in order.
    if !trusted && !dir.heap().is_ascii() {
        for (i, r) in dir.records() {
            for (off, len) in [
                (r.name_off(), r.name_len()),
                (r.layout_off(), r.layout_len()),
            ] {
                let bytes = dir.heap_slice(off, len);
                if let Err(e) = core::str::from_utf8(bytes) {
                    let at = dir
                        .heap_start()
                        .saturating_add(usize::from(off))
                        .saturating_add(e.valid_up_to());
                    return Err(Error::wire(Code::Utf8, "name is not UTF-8", at).in_tensor(i));
                }
            }
        }
    }

    // (d) Names in strictly increasing order are unique; only others need
    // the sort.
    if !named {
        return Ok(false);
    }
    let mut previous: &[u8] = &[];
    let increasing = dir.records().all(|(i, r)| {
        let name = dir.heap_slice(r.name_off(), r.name_len());
        let ok = i == 0 || names::cmp_bytes(previous, name).is_lt();
        previous = name;
        ok
    });
    if increasing {
        return Ok(true);
    }
    let (repeat, sorted) = names::first_repeat(dir.tensor_count, |i| dir.name_at(i), scratch);
    if let Some(i) = repeat {
        return Err(dir.fault_in(i, Code::Type, "tensor name repeats an earlier name", 4));
    }
    Ok(sorted)
}

/// Step 9: per descriptor, dtype, rank, shape, lengths and range; then, over
/// all of them, overlap.
fn check_shapes_and_ranges(dir: &Directory<'_>, payload_bytes: u64) -> Result<()> {
    for (i, r) in dir.records() {
        rules::check_shape_and_range(r, payload_bytes)
            .map_err(|e| e.shifted(dir.record_start(i)).in_tensor(i))?;
    }
    // Nonzero ranges in increasing offset order overlap exactly when one
    // starts before the previous one ends. Ranges out of order cannot be
    // canonical, so they are reported here with the same code.
    let mut previous_end: u64 = 0;
    for (i, r) in dir.records() {
        if r.byte_length() == 0 {
            continue;
        }
        if r.byte_offset() < previous_end {
            return Err(dir.fault_in(
                i,
                Code::Type,
                "payload range overlaps another or is out of order",
                32,
            ));
        }
        previous_end = r.range_end().unwrap_or(u64::MAX);
    }
    Ok(())
}

/// Step 10: greedy 64-aligned offsets, payload_bytes equal to the running
/// end, and zero bytes in every gap.
fn check_canonical_placement(dir: &Directory<'_>, payload_bytes: u64) -> Result<()> {
    let mut end: u64 = 0;
    for (i, r) in dir.records() {
        let offset = align_up(end).unwrap_or(u64::MAX);
        if r.byte_offset() != offset {
            return Err(dir.fault_in(
                i,
                Code::Type,
                "payload offset is not the canonical placement",
                32,
            ));
        }
        if offset != end {
            let gap = dir.payload_region(end, offset);
            // The OR of the gap is one vector loop; only a nonzero gap is
            // searched for the byte to report.
            let any = gap.iter().fold(0u8, |acc, &b| acc | b) != 0;
            if let Some(k) = gap.iter().position(|&b| any && b != 0) {
                let at = dir
                    .payload_base
                    .saturating_add(usize::try_from(end).unwrap_or(usize::MAX))
                    .saturating_add(k);
                return Err(
                    Error::wire(Code::Type, "nonzero byte in an alignment gap", at).in_tensor(i),
                );
            }
        }
        end = r.range_end().unwrap_or(u64::MAX);
    }
    if payload_bytes != end {
        return Err(fault(
            Code::Type,
            "payload_bytes is not the end of the last payload",
            16,
        ));
    }
    Ok(())
}

/// Step 11: bool bytes, odd packed tails, then quantization.
fn check_payload_bits_and_quant(dir: &Directory<'_>, trusted: bool) -> Result<()> {
    for (i, r) in dir.records() {
        // Only bool and packed payloads have bits to check.
        if matches!(r.dtype(), 7 | 16..=18) {
            let payload = dir.payload_region(r.byte_offset(), r.range_end().unwrap_or(0));
            // Inside the block, so the payload's start fits in usize.
            let start = usize::try_from(r.byte_offset())
                .unwrap_or(usize::MAX)
                .saturating_add(dir.payload_base);
            rules::check_payload_bits(r, payload).map_err(|e| e.shifted(start).in_tensor(i))?;
        }
    }
    if trusted {
        return Ok(());
    }
    for (i, r) in dir.records() {
        rules::check_quant(i, r, dir.tensor_count, |j| {
            (j < dir.tensor_count).then(|| dir.record(j)).flatten()
        })
        .map_err(|e| e.shifted(dir.record_start(i)).in_tensor(i))?;
    }
    Ok(())
}
