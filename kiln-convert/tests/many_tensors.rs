//! Models with more names than one directory holds: a 48-layer,
//! 128-expert mixture-of-experts checkpoint (18,867 tensors) and one of
//! 100,000 tensors convert to Kiln and back byte for byte, every name is
//! found with one call, and every payload of the converted files is read
//! in place from a memory map.

mod common;

use common::*;
use kiln_convert::{convert_with_len, Format, Model};
use safetensors::tensor::TensorView;
use safetensors::Dtype;

fn to_kiln(from: Format, input: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut told = None;
    convert_with_len(from, Format::Kiln, input, &mut out, |len| told = Some(len)).unwrap();
    check_told(from, told, &out);
    out
}

fn back(to: Format, kiln: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut told = None;
    convert_with_len(Format::Kiln, to, kiln, &mut out, |len| told = Some(len)).unwrap();
    check_told(to, told, &out);
    out
}

/// The length told before writing is what was written, for safetensors
/// either way; GGUF's converters tell none.
fn check_told(other: Format, told: Option<u64>, out: &[u8]) {
    match other {
        Format::Safetensors => assert_eq!(told, Some(out.len() as u64)),
        _ => assert_eq!(told, None),
    }
}

/// A safetensors file with `names`, payloads of a few bytes in a mix of
/// dtypes (so both the header's alignment order and Kiln's 64-byte
/// placement are exercised).
fn safetensors_with(names: &[String]) -> Vec<u8> {
    let data: Vec<u8> = (0..64).collect();
    let dtypes = [
        (Dtype::BF16, 2),
        (Dtype::F32, 4),
        (Dtype::F8_E4M3, 1),
        (Dtype::I64, 8),
        (Dtype::U8, 1),
    ];
    let views = names.iter().enumerate().map(|(i, name)| {
        let (dtype, width) = dtypes[i % dtypes.len()];
        let n = 1 + i % 3;
        (
            name.as_str(),
            TensorView::new(dtype, vec![n], &data[..n * width]).unwrap(),
        )
    });
    safetensors::serialize(views, None).unwrap()
}

fn check_model(source: &[u8], from: Format, names: &[String], label: &str) {
    let kiln = to_kiln(from, source);
    let mapped = MappedFile::new(label, &kiln);
    let model = Model::open(&mapped.map).unwrap();
    assert_eq!(model.len(), names.len());
    assert!(
        model.directories().len() > 1,
        "{label}: {} directories",
        model.directories().len()
    );
    for d in model.directories() {
        assert_eq!(d.offset() % 64, 0);
    }
    for name in names {
        let t = model.tensor(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(t.name(), Some(name.as_str()));
    }
    assert!(model
        .tensor("model.layers.0.mlp.experts.999999.up_proj.weight")
        .is_none());
    let viewed = view_every_payload(&mapped.map);
    assert!(viewed > names.len() / 2, "{label}: {viewed} viewed");
    assert_eq!(back(from, &mapped.map), source, "{label} comes back");
}

#[test]
fn a_48_layer_128_expert_moe_converts_there_and_back() {
    let names = moe_names();
    assert_eq!(names.len(), 18_867);
    let name_bytes: usize = names.iter().map(String::len).sum();
    assert!(name_bytes > 13 * 65_535, "{name_bytes} bytes of names");
    check_model(
        &safetensors_with(&names),
        Format::Safetensors,
        &names,
        "moe.kiln",
    );
}

#[test]
fn a_gguf_in_model_order_with_18_867_tensors_converts_there_and_back() {
    let names = moe_names();
    let mut gguf = GgufBuilder::new();
    for (i, name) in names.iter().enumerate() {
        // F32 and F16 (four and two bytes) and Q8_0 blocks, in model order.
        gguf = match i % 3 {
            0 => gguf.tensor(name, &[2], 0, &f32_bytes(&[1.0, 2.0])),
            1 => gguf.tensor(name, &[2], 1, &[0, 60, 0, 188]),
            _ => gguf.tensor(name, &[32], 8, &[1u8; 34]),
        };
    }
    let source = gguf.build();
    check_model(&source, Format::Gguf, &names, "moe-gguf.kiln");
    // The directories keep GGUF's order.
    let kiln = to_kiln(Format::Gguf, &source);
    let model = Model::open(&kiln).unwrap();
    let order: Vec<&str> = model.tensors().map(|t| t.name().unwrap()).collect();
    assert_eq!(order, names);
}

#[test]
fn one_hundred_thousand_tensors_convert_there_and_back() {
    let names = many_names(100_000);
    check_model(
        &safetensors_with(&names),
        Format::Safetensors,
        &names,
        "100k.kiln",
    );
}

/// Three shards and an index in memory: to one Kiln file and back, the
/// checks a tool can run on the set alone, and a weight_map that puts a
/// tensor in the wrong shard refused with the tensor and both files.
#[test]
fn a_sharded_checkpoint_in_memory() {
    use kiln_convert::{
        check_safetensors_set, kiln_to_safetensors_set, safetensors_index_files,
        safetensors_set_to_kiln,
    };
    let names = moe_names();
    let files: Vec<String> = (1..=3)
        .map(|i| format!("model-{i:05}-of-00003.safetensors"))
        .collect();
    let chunks: Vec<&[String]> = names.chunks(names.len().div_ceil(3)).collect();
    let shards: Vec<Vec<u8>> = chunks.iter().map(|c| safetensors_with(c)).collect();
    let mut map = serde_json::Map::new();
    for (file, chunk) in files.iter().zip(&chunks) {
        for n in chunk.iter() {
            map.insert(n.clone(), file.clone().into());
        }
    }
    let index =
        serde_json::to_vec_pretty(&serde_json::json!({"metadata": {}, "weight_map": map})).unwrap();
    assert_eq!(safetensors_index_files(&index).unwrap(), files);
    let set: Vec<(&str, &[u8])> = files
        .iter()
        .zip(&shards)
        .map(|(f, b)| (f.as_str(), b.as_slice()))
        .collect();
    let listed = check_safetensors_set(&index, &set).unwrap();
    assert_eq!(listed.iter().map(|(_, n)| n.len()).sum::<usize>(), 18_867);
    // The same rule from the shards' names alone (what a head-only reader has).
    let heads: Vec<(&str, Vec<&str>)> = listed
        .iter()
        .map(|(f, n)| (f.as_str(), n.iter().map(String::as_str).collect()))
        .collect();
    let heads: Vec<(&str, &[&str])> = heads.iter().map(|(f, n)| (*f, n.as_slice())).collect();
    kiln_convert::check_safetensors_index(&index, &heads).unwrap();

    let mut kiln = Vec::new();
    safetensors_set_to_kiln("model.safetensors.index.json", &index, &set, &mut kiln).unwrap();
    let model = Model::open(&kiln).unwrap();
    assert_eq!(model.files(), files.as_slice());
    let (file, _) = model.locate(&chunks[1][5]).unwrap();
    assert_eq!(file, files[1]);
    view_every_payload(&MappedFile::new("sharded.kiln", &kiln).map);
    assert!(kiln_convert::kiln_to_safetensors(&kiln, Vec::new()).is_err());

    let mut out: std::collections::BTreeMap<String, Vec<u8>> = Default::default();
    let written = std::cell::RefCell::new(&mut out);
    struct Into<'a, 'b>(
        &'a std::cell::RefCell<&'b mut std::collections::BTreeMap<String, Vec<u8>>>,
        String,
    );
    impl std::io::Write for Into<'_, '_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .borrow_mut()
                .entry(self.1.clone())
                .or_default()
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    kiln_to_safetensors_set(&kiln, |name| Ok(Into(&written, name.to_string()))).unwrap();
    assert_eq!(out.len(), 4);
    assert_eq!(out["model.safetensors.index.json"], index);
    for (file, bytes) in files.iter().zip(&shards) {
        assert_eq!(&out[file], bytes, "{file}");
    }

    let moved = chunks[0][0].clone();
    map.insert(moved.clone(), files[2].clone().into());
    let bad = serde_json::to_vec(&serde_json::json!({"weight_map": map})).unwrap();
    let e = check_safetensors_set(&bad, &set).unwrap_err().to_string();
    assert!(e.contains(&format!("{moved:?}")), "{e}");
    assert!(e.contains(&files[0]) && e.contains(&files[2]), "{e}");
    let by_heads = kiln_convert::check_safetensors_index(&bad, &heads).unwrap_err();
    assert_eq!(
        by_heads.to_string(),
        e,
        "the head-only rule says what the whole-file check says"
    );
    let e = safetensors_set_to_kiln("i.json", &bad, &set, Vec::new()).unwrap_err();
    assert!(e.to_string().contains(&files[2]), "{e}");
}
