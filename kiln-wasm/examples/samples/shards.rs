//! A sharded safetensors checkpoint for the inspector's shard sets
//! (www/samples/shards/): three shards, their `model.safetensors.index.json`,
//! and in `bad/` an index whose weight_map puts one tensor in the wrong
//! shard; beside them a GGUF split set (gguf_split.rs). `shards.json`
//! lists each file's tensors and the errors the bad sets must give, from
//! kiln-convert's own set checks.

use std::fs;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::wave;

/// One safetensors file of f32 tensors, written as the format says: the
/// header's length (u64 LE), its JSON padded with spaces to 8 bytes, the data.
fn safetensors(tensors: &[(&str, Vec<u64>, Vec<f32>)]) -> Vec<u8> {
    let mut header = Map::new();
    let mut data = Vec::new();
    for (name, shape, values) in tensors {
        let start = data.len();
        data.extend(values.iter().flat_map(|x| x.to_le_bytes()));
        header.insert(
            (*name).into(),
            json!({ "dtype": "F32", "shape": shape, "data_offsets": [start, data.len()] }),
        );
    }
    let mut text = serde_json::to_vec(&Value::Object(header)).expect("json");
    while !text.len().is_multiple_of(8) {
        text.push(b' ');
    }
    let mut out = (text.len() as u64).to_le_bytes().to_vec();
    out.extend(text);
    out.extend(data);
    out
}

pub fn write_all(out: &Path) {
    let dir = out.join("shards");
    fs::create_dir_all(dir.join("bad")).expect("www/samples/shards");
    let layers = [
        vec!["model.embed_tokens.weight", "model.layers.0.attn.q.weight"],
        vec![
            "model.layers.0.attn.k.weight",
            "model.layers.0.mlp.up.weight",
        ],
        vec![
            "model.layers.1.attn.q.weight",
            "model.norm.weight",
            "lm_head.weight",
        ],
    ];
    let files: Vec<String> = (1..=layers.len())
        .map(|i| format!("model-{i:05}-of-{:05}.safetensors", layers.len()))
        .collect();
    let mut map = Map::new();
    let mut shards = Vec::new();
    let mut listed = Vec::new();
    for (k, (file, names)) in files.iter().zip(&layers).enumerate() {
        let tensors: Vec<(&str, Vec<u64>, Vec<f32>)> = names
            .iter()
            .enumerate()
            .map(|(j, &n)| {
                let rows = 8 + 4 * j as u64;
                (
                    n,
                    vec![rows, 16],
                    wave(rows as usize * 16, rows as usize, 1.0 + k as f32),
                )
            })
            .collect();
        let bytes = safetensors(&tensors);
        fs::write(dir.join(file), &bytes).expect("write");
        for n in names {
            map.insert((*n).into(), json!(file));
        }
        shards.push((file.as_str(), bytes));
        listed.push(json!({ "file": file, "tensors": names }));
    }
    let index = json!({ "metadata": { "total_size": 0 }, "weight_map": map.clone() });
    let index = serde_json::to_vec_pretty(&index).expect("json");
    fs::write(dir.join("model.safetensors.index.json"), &index).expect("write");
    let set: Vec<(&str, &[u8])> = shards.iter().map(|(f, b)| (*f, b.as_slice())).collect();
    kiln_convert::check_safetensors_set(&index, &set).expect("the set is valid");

    // The bad index: the second shard's first tensor put in the third.
    let moved = layers[1][0];
    map.insert(moved.into(), json!(files[2]));
    let bad = serde_json::to_vec_pretty(&json!({ "weight_map": map })).expect("json");
    fs::write(dir.join("bad/model.safetensors.index.json"), &bad).expect("write");
    let error = kiln_convert::check_safetensors_set(&bad, &set)
        .expect_err("the bad index is refused")
        .to_string();
    assert!(error.contains(moved) && error.contains(&files[1]) && error.contains(&files[2]));
    // The rule from the shards' heads alone (what the inspector reads) says the same.
    let names: Vec<(&str, &[&str])> = files
        .iter()
        .zip(&layers)
        .map(|(f, n)| (f.as_str(), n.as_slice()))
        .collect();
    kiln_convert::check_safetensors_index(&index, &names).expect("the heads agree");
    let by_heads = kiln_convert::check_safetensors_index(&bad, &names).expect_err("bad index");
    assert_eq!(by_heads.to_string(), error);

    let manifest = json!({
        "gguf": super::gguf_split::write_all(out),
        "index": "model.safetensors.index.json", "shards": listed,
        "bad": { "index": "bad/model.safetensors.index.json", "tensor": moved, "in": files[1], "indexSays": files[2], "error": error },
    });
    let text = serde_json::to_string_pretty(&manifest).expect("json") + "\n";
    fs::write(dir.join("shards.json"), text).expect("write");
}
