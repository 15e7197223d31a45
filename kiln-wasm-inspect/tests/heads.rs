//! A safetensors or GGUF file opened from its head shows what the same
//! file shows converted to Kiln: the same tensors in the same order
//! (name, dtype, shape, element count, layout, bytes), the same metadata
//! entries and, through the same display conversions, the same values;
//! and the open reads the head alone.

use kiln_convert::{convert, Format};
use kiln_nostd::inspect::{Inspection, ReadStats};
use kiln_wasm::open::{element_bytes, widen_range};
use kiln_wasm::OpenOptions;
use kiln_wasm_inspect::FileOpener;

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../samples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Opens `file` through the inspector's opener, giving every read.
pub fn opened(file: &[u8], name: &str) -> (Inspection, ReadStats) {
    let options = OpenOptions {
        type_text: None,
        framed: None,
        limits: None,
        name: name.into(),
    };
    let mut opener = FileOpener::new(file.len() as u64, options);
    loop {
        let reads = opener.next_reads().unwrap();
        if reads.is_empty() {
            break;
        }
        for r in reads {
            opener
                .give(r.start, &file[r.start as usize..r.end as usize])
                .unwrap();
        }
    }
    opener.finish().unwrap()
}

fn shown(t: &kiln_nostd::inspect::TensorFacts, file: &[u8]) -> Result<Vec<f32>, String> {
    let (range, _, _) = element_bytes(t, 0, 64).map_err(|e| e.to_string())?;
    let bytes = &file[range.start as usize..range.end as usize];
    widen_range(t, bytes, 0, 64).map_err(|e| e.to_string())
}

#[test]
fn a_head_shows_what_its_conversion_shows() {
    for (name, format) in [
        ("tiny.safetensors", Format::Safetensors),
        ("tiny.gguf", Format::Gguf),
    ] {
        let file = sample(name);
        let (model, reads) = opened(&file, name);
        assert_eq!(
            reads.bytes,
            file.len() as u64,
            "a small file is one first read"
        );
        assert_eq!(reads.requests, 1);
        assert_eq!(model.format, format);
        assert_eq!(model.directories.len(), 1);
        let data = model.directories[0].payload_offset;
        assert!(model.tensors.iter().all(|t| t.offset >= data));

        let mut kiln = Vec::new();
        convert(format, Format::Kiln, &file, &mut kiln).unwrap();
        let (converted, _) = opened(&kiln, "converted.kiln");
        assert_eq!(
            converted.kiln.as_ref().and_then(|k| k.converted_from),
            Some(format),
            "recognised by its hash, with no type given"
        );
        assert_eq!(converted.metadata, model.metadata, "{name}");
        assert_eq!(converted.gguf, model.gguf, "{name}");
        let listed = |m: &Inspection| -> Vec<Option<String>> {
            m.listing().map(|i| m.tensors[i].name.clone()).collect()
        };
        assert_eq!(listed(&model), listed(&converted), "{name}: one order");
        for (i, j) in model.listing().zip(converted.listing()) {
            let (t, c) = (&model.tensors[i], &converted.tensors[j]);
            assert_eq!(
                (
                    &t.dtype,
                    &t.shape,
                    t.elements,
                    &t.layout,
                    t.block_size,
                    t.length
                ),
                (
                    &c.dtype,
                    &c.shape,
                    c.elements,
                    &c.layout,
                    c.block_size,
                    c.length
                ),
                "{:?}",
                t.name
            );
            assert_eq!(t.dtype_name(), c.dtype_name());
            let bytes = |t: &kiln_nostd::inspect::TensorFacts, f: &[u8]| {
                f[t.offset as usize..(t.offset + t.length) as usize].to_vec()
            };
            assert_eq!(bytes(t, &file), bytes(c, &kiln), "{:?}", t.name);
            let (a, b) = (shown(t, &file), shown(c, &kiln));
            assert_eq!(a.is_ok(), b.is_ok(), "{:?}", t.name);
            if let (Ok(a), Ok(b)) = (a, b) {
                assert_eq!(
                    a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                );
            }
        }
    }
}
