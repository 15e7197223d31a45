//! Hostile counts allocate nothing. A counting global allocator watches the
//! decoders; it counts per thread (`support/counting.rs`), so the harness's
//! other threads and other tests cannot change a figure.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/counting.rs"]
mod counting;

use counting::{allocated_by, Counting};
use kiln_nostd::{check, from_bytes, Code, Directory, Frozen, ListView, Options};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Debug, Frozen)]
struct AB<'a> {
    a: i64,
    b: &'a str,
}

fn hostile_list(count: u32) -> Vec<u8> {
    count.to_le_bytes().to_vec()
}

fn hostile_directory(count: u32) -> Vec<u8> {
    let mut block = vec![0u8; 64];
    block[..6].copy_from_slice(b"KLNT\x02\x02");
    block[8..12].copy_from_slice(&count.to_le_bytes());
    block[24..32].copy_from_slice(&(u64::from(count) * 128).to_le_bytes());
    block
}

#[test]
fn hostile_counts_allocate_nothing() {
    let list = hostile_list(16_777_216);
    let directory = hostile_directory(16_777_216);
    let capped = hostile_directory(16_777_217);

    let bytes = allocated_by(|| {
        // Borrowed views and the run-time check: no allocation at all.
        let r = from_bytes::<ListView<AB>>(&list);
        assert_eq!(r.unwrap_err().code(), Some(Code::Eof));
        let r = check("list<struct{a:i64,b:str,}>", &list, Options::BARE);
        assert_eq!(r.unwrap_err().code(), Some(Code::Eof));
        assert_eq!(
            Directory::parse(&directory).unwrap_err().code(),
            Some(Code::Eof)
        );
        assert_eq!(
            Directory::parse(&capped).unwrap_err().code(),
            Some(Code::Limit)
        );
        let r = check("list<tensors>", &list, Options::BARE);
        assert_eq!(r.unwrap_err().code(), Some(Code::Eof));
    });
    assert_eq!(bytes, 0, "views and check allocated {bytes} bytes");

    // Owned containers (alloc feature): the count is refused before any
    // storage is reserved for it.
    #[cfg(feature = "alloc")]
    {
        let bytes = allocated_by(|| {
            let r = from_bytes::<Vec<AB>>(&list);
            assert_eq!(r.unwrap_err().code(), Some(Code::Eof));
            let r = from_bytes::<Vec<u64>>(&hostile_list(u32::MAX));
            assert_eq!(r.unwrap_err().code(), Some(Code::Limit));
        });
        // Only the test's own `hostile_list` vector (4 bytes) is allocated.
        assert!(bytes <= 4, "owned decode allocated {bytes} bytes");
    }

    // Sanity: the allocator really counts.
    let bytes = allocated_by(|| drop(std::hint::black_box(vec![0u8; 1000])));
    assert!(bytes >= 1000);
}
