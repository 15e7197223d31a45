//! A safetensors or GGUF file opened from its head shows what the same
//! file shows converted to Kiln: the same tensors (name, dtype, shape,
//! element count, layout) and, through the same display conversions, the
//! same values; and the open reads the head alone.

use kiln_convert::head::open_head;
use kiln_convert::{convert, Format, LIMITS};
use kiln_nostd::Framing;
use kiln_wasm::open::{element_bytes, open, widen_range, Tensor};
use kiln_wasm_inspect::opened;

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../samples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn shown(t: &Tensor, file: &[u8]) -> Result<Vec<f32>, String> {
    let (range, _, _) = element_bytes(t, 0, 64).map_err(|e| e.to_string())?;
    let bytes = &file[range.start as usize..range.end as usize];
    widen_range(t, bytes, 0, 64).map_err(|e| e.to_string())
}

#[test]
fn a_head_shows_what_its_conversion_shows() {
    for (name, format, ty) in [
        (
            "tiny.safetensors",
            Format::Safetensors,
            kiln_convert::SAFETENSORS_MESSAGE,
        ),
        ("tiny.gguf", Format::Gguf, kiln_convert::GGUF_MESSAGE),
    ] {
        let file = sample(name);
        let (head, reads) = open_head(format, file.len() as u64, |at, buf| {
            buf.copy_from_slice(&file[at as usize..at as usize + buf.len()]);
            Ok(())
        })
        .unwrap();
        assert_eq!(
            reads.bytes,
            file.len() as u64,
            "a small file is one first read"
        );
        let model = opened(&head, reads.bytes, reads.requests);
        assert_eq!(
            model.format,
            if format == Format::Gguf {
                "gguf"
            } else {
                "safetensors"
            }
        );
        assert_eq!(model.directories.len(), 1);
        assert!(model.tensors.iter().all(|t| t.offset >= head.head_len));

        let mut kiln = Vec::new();
        convert(format, Format::Kiln, &file, &mut kiln).unwrap();
        let converted = open(&kiln[..], ty, Framing::Framed, LIMITS).unwrap();
        assert_eq!(model.tensors.len(), converted.tensors.len(), "{name}");
        for t in &model.tensors {
            let name_of = |t: &Tensor| t.facts.name.clone();
            let c = converted
                .tensors
                .iter()
                .find(|c| name_of(c) == name_of(t))
                .unwrap_or_else(|| panic!("{:?} not converted", t.facts.name));
            assert_eq!(t.facts.dtype, c.facts.dtype, "{:?}", t.facts.name);
            assert_eq!(t.facts.shape, c.facts.shape, "{:?}", t.facts.name);
            assert_eq!(t.facts.elements, c.facts.elements, "{:?}", t.facts.name);
            assert_eq!(t.facts.layout, c.facts.layout, "{:?}", t.facts.name);
            assert_eq!(t.facts.block_size, c.facts.block_size, "{:?}", t.facts.name);
            assert_eq!(t.length, c.length, "{:?}", t.facts.name);
            let bytes = |t: &Tensor, f: &[u8]| {
                f[t.offset as usize..(t.offset + t.length) as usize].to_vec()
            };
            assert_eq!(bytes(t, &file), bytes(c, &kiln), "{:?}", t.facts.name);
            let (a, b) = (shown(t, &file), shown(c, &kiln));
            assert_eq!(a.is_ok(), b.is_ok(), "{:?}", t.facts.name);
            if let (Ok(a), Ok(b)) = (a, b) {
                assert_eq!(
                    a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                );
            }
        }
    }
}
