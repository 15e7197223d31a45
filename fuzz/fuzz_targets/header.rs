//! The safetensors header reader against the safetensors crate: the fast
//! reader accepts only headers the crate accepts, with the same facts
//! (dtype, shape, offsets of every tensor, the metadata), the serde reader
//! accepts what the crate accepts, and the combined reader gives the
//! crate's verdict and error, on the whole file and on its head.
#![no_main]

use kiln_convert::{fast_reader, read_safetensors, read_safetensors_header, serde_reader};
use libfuzzer_sys::fuzz_target;
use safetensors::tensor::SafeTensors;

fuzz_target!(|data: &[u8]| {
    let len = data.len() as u64;
    let crate_says = SafeTensors::read_metadata(data).ok();
    if let Some(fast) = fast_reader(data, len) {
        let Some((n, meta)) = &crate_says else {
            panic!("the fast reader accepted a header the crate refuses");
        };
        assert_eq!(fast.header_len, *n);
        let tensors = meta.tensors();
        assert_eq!(fast.tensors.len(), tensors.len());
        for t in &fast.tensors {
            let info = tensors
                .get(t.name.as_ref())
                .expect("a tensor the crate does not have");
            assert_eq!(t.dtype, info.dtype);
            let shape: Vec<u64> = info.shape.iter().map(|&d| d as u64).collect();
            assert_eq!(fast.shape(t), shape.as_slice());
            let (s, e) = info.data_offsets;
            assert_eq!(t.data_offsets, (s as u64, e as u64));
        }
        let mut theirs: Option<Vec<(String, String)>> = meta.metadata().as_ref().map(|m| {
            let mut v: Vec<_> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            v.sort();
            v
        });
        let ours: Option<Vec<(String, String)>> = fast.metadata.as_ref().map(|m| {
            m.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        });
        assert_eq!(ours, theirs.take());
    }
    assert_eq!(serde_reader(data, len).is_some(), crate_says.is_some());
    let whole = read_safetensors_header(data, len);
    assert_eq!(whole.is_ok(), crate_says.is_some());
    if let (Err(ours), Err(theirs)) = (&whole, read_safetensors(data)) {
        assert_eq!(
            (ours.kind(), ours.offset()),
            (theirs.kind(), theirs.offset())
        );
        // Which tensor an offset fault names can differ between two calls
        // of the crate itself (ties in its hash map's order); any other
        // error is word for word the crate's.
        let offset_fault = "data_offsets do not start where the previous tensor's end";
        let (ours, theirs) = (ours.to_string(), theirs.to_string());
        if !(ours.contains(offset_fault) && theirs.contains(offset_fault)) {
            assert_eq!(ours, theirs);
        }
    }
    if let Some(n) = data
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
    {
        if n <= len - 8 {
            let head = &data[..8 + n as usize];
            assert_eq!(
                read_safetensors_header(head, len).is_ok(),
                crate_says.is_some()
            );
        }
    }
});
