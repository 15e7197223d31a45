//! The fast safetensors header reader against the safetensors crate: the
//! fast reader accepts only headers the crate accepts, with the same facts
//! (dtype, shape, offsets of every tensor, the metadata), and the combined
//! reader gives the crate's verdict, on the whole file and on its head.
#![no_main]

use kiln_convert::{crate_reader, fast_reader, read_safetensors_header};
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
            assert_eq!(t.data_offsets, info.data_offsets);
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
    assert_eq!(crate_reader(data, len).is_some(), crate_says.is_some());
    assert_eq!(
        read_safetensors_header(data, len).is_ok(),
        crate_says.is_some()
    );
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
