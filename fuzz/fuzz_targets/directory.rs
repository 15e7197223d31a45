//! `Directory::parse` (checked, under default and widest caps),
//! `parse_prefix` and `parse_trusted` on raw bytes, every accessor of an
//! accepted block, and the canonical rebuild: an accepted block, rebuilt
//! from its views, is the same bytes.
#![no_main]

use kiln_fuzz::{verdict, Verdict};
use kiln_nostd::{Code, Directory, Limits, TensorSpec, TensorView, Tensors};
use libfuzzer_sys::fuzz_target;

fn exercise(dir: &Directory<'_>, len: usize) {
    assert!(dir.block_len() <= len);
    for (i, t) in dir.iter().enumerate() {
        assert_eq!(t.index(), i);
        let range = t.byte_range();
        assert!(range.start <= range.end && range.end <= len);
        assert_eq!(t.bytes().len() as u64, t.byte_length());
        let _ = (
            t.name(),
            t.layout(),
            t.shape(),
            t.element_count(),
            t.quant(),
        );
        let _ = (
            t.dtype(),
            t.closed_dtype(),
            t.element_align(),
            t.is_aligned_at_offset(),
        );
        let mut out = [0f32; 8];
        let _ = t.widen_into(t.element_count().saturating_sub(4), &mut out);
        let _ = t.widen_into(0, &mut out);
        let mut words = [0u16; 4];
        let _ = t.copy_into(&mut words);
        let _ = t.as_slice::<f32>();
    }
    let _ = dir.get(dir.len());
}

fn rebuild(dir: &Directory<'_>) -> Vec<u8> {
    let views: Vec<TensorView<'_>> = dir.iter().collect();
    // A spec borrows its shape, so the shapes live beside the views.
    let shapes: Vec<_> = views.iter().map(|t| t.shape()).collect();
    let specs: Vec<TensorSpec<'_>> = views
        .iter()
        .zip(&shapes)
        .map(|(t, shape)| t.to_spec(shape))
        .collect();
    kiln_nostd::to_vec(&Tensors(&specs)).expect("an accepted block can be written again")
}

fuzz_target!(|data: &[u8]| {
    let checked = Directory::parse(data);
    let wide = Directory::parse_with(data, Limits::uniform(u32::MAX));
    let prefix = Directory::parse_prefix(data, Limits::DEFAULT);
    let trusted = Directory::parse_trusted(data, Limits::DEFAULT);
    let v = verdict(&checked, data.len());
    let _ = verdict(&wide, data.len());
    let _ = verdict(&trusted, data.len());
    match &prefix {
        Ok(p) => {
            // The block alone is accepted; anything after it is TRAILING.
            let block = &data[..p.block_len()];
            assert!(Directory::parse(block).is_ok());
            if p.block_len() == data.len() {
                assert_eq!(v, Verdict::Accept);
            } else {
                assert_eq!(v, Verdict::Wire(Code::Trailing));
            }
        }
        Err(e) => assert_eq!(Some(v), e.code().map(Verdict::Wire)),
    }
    if let Ok(dir) = &trusted {
        exercise(dir, data.len());
    }
    if let Ok(dir) = &checked {
        // Wider caps and the trusted reader accept what the checked reader does.
        assert!(
            wide.is_ok(),
            "accepted under the default caps, not under wider ones"
        );
        let t = trusted
            .as_ref()
            .expect("the trusted reader accepts a checked block");
        assert_eq!((t.len(), t.block_len()), (dir.len(), dir.block_len()));
        exercise(dir, data.len());
        for t in dir.iter() {
            if let Some(name) = t.name() {
                assert_eq!(dir.by_name(name).map(|v| v.index()), Some(t.index()));
            }
        }
        let index = dir.index_names();
        for t in dir.iter() {
            if let Some(name) = t.name() {
                assert_eq!(index.get(name).map(|v| v.index()), Some(t.index()));
            }
        }
        assert_eq!(rebuild(dir), data, "the canonical layout is unique");
    }
});
