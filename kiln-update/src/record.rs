//! The state record: which slot holds the current model, its length and
//! CRC-32C, and a sequence number, in 32 bytes with their own CRC-32C.
//!
//! ```text
//! offset  bytes  field (little-endian)
//!      0      4  magic "KLNU"
//!      4      2  record version, 1
//!      6      2  slot, 0 or 1
//!      8      4  sequence: one more than the record it replaces
//!     12      4  model length in bytes
//!     16      4  model CRC-32C (the envelope's checksum)
//!     20      4  the slot's offset in flash when written
//!     24      4  zero
//!     28      4  CRC-32C of bytes 0..28
//! ```
//!
//! The record is written in one flash write after its page is erased. A
//! cut during the erase or the write leaves bytes that fail the magic or
//! the CRC, so the page holds no record and the other page's stays in use.
//! The slot offset makes a record written under another layout fail.

use kiln_nostd::envelope::checksum;

/// Bytes of a record.
pub const RECORD_LEN: usize = 32;

const MAGIC: [u8; 4] = *b"KLNU";
const VERSION: u16 = 1;

/// One decoded state record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Record {
    /// One more than the record it replaced: the newer of two is current.
    pub sequence: u32,
    /// The slot the model is in.
    pub slot: u8,
    /// The model's length.
    pub len: u32,
    /// The model's CRC-32C.
    pub digest: u32,
    /// The slot's offset in flash when the record was written.
    pub slot_offset: u32,
}

impl Record {
    /// The record's 32 bytes.
    pub fn encode(&self) -> [u8; RECORD_LEN] {
        let mut out = [0u8; RECORD_LEN];
        out[0..4].copy_from_slice(&MAGIC);
        out[4..6].copy_from_slice(&VERSION.to_le_bytes());
        out[6..8].copy_from_slice(&u16::from(self.slot).to_le_bytes());
        out[8..12].copy_from_slice(&self.sequence.to_le_bytes());
        out[12..16].copy_from_slice(&self.len.to_le_bytes());
        out[16..20].copy_from_slice(&self.digest.to_le_bytes());
        out[20..24].copy_from_slice(&self.slot_offset.to_le_bytes());
        let crc = checksum(&out[..28]);
        out[28..32].copy_from_slice(&crc.to_le_bytes());
        out
    }

    /// The record in `bytes`, or `None` where they are not one (an erased
    /// page, a torn write, another version).
    pub fn decode(bytes: &[u8; RECORD_LEN]) -> Option<Record> {
        let word =
            |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let half = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        if bytes[0..4] != MAGIC || checksum(&bytes[..28]) != word(28) {
            return None;
        }
        if half(4) != VERSION || half(6) > 1 || word(24) != 0 {
            return None;
        }
        Some(Record {
            sequence: word(8),
            slot: half(6) as u8,
            len: word(12),
            digest: word(16),
            slot_offset: word(20),
        })
    }

    /// Whether this record replaced `other`: its sequence is ahead by less
    /// than half the range, so the count may wrap.
    pub fn is_newer_than(&self, other: &Record) -> bool {
        (self.sequence.wrapping_sub(other.sequence) as i32) > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            sequence: 7,
            slot: 1,
            len: 50_000,
            digest: 0xDEAD_BEEF,
            slot_offset: 0x2_0000,
        }
    }

    #[test]
    fn round_trip() {
        assert_eq!(Record::decode(&record().encode()), Some(record()));
    }

    #[test]
    fn any_changed_bit_is_no_record() {
        let bytes = record().encode();
        for bit in 0..RECORD_LEN * 8 {
            let mut changed = bytes;
            changed[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(Record::decode(&changed), None, "bit {bit}");
        }
        assert_eq!(Record::decode(&[0xFF; RECORD_LEN]), None);
        assert_eq!(Record::decode(&[0; RECORD_LEN]), None);
    }

    #[test]
    fn newer_wraps() {
        let a = record();
        let b = Record { sequence: 8, ..a };
        assert!(b.is_newer_than(&a) && !a.is_newer_than(&b) && !a.is_newer_than(&a));
        let last = Record {
            sequence: u32::MAX,
            ..a
        };
        let first = Record { sequence: 0, ..a };
        assert!(first.is_newer_than(&last));
    }
}
