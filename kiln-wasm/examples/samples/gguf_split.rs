//! A GGUF split set for the inspector's shard sets (www/samples/shards/):
//! three files named and keyed as llama.cpp's gguf-split writes them
//! (`split.no` u16, `split.count` u16, `split.tensors.count` i32), f32
//! tensors. Checked by kiln-convert's set rule when written.

use std::fs;
use std::path::Path;

use serde_json::{json, Value};

use super::wave;

const ALIGN: usize = 32;

fn string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

/// One GGUF v3 file: metadata pairs (key, type id, value bytes) and f32
/// tensors (name, shape outermost first, values).
fn gguf(pairs: &[(&str, u32, Vec<u8>)], tensors: &[(&str, Vec<u64>, Vec<f32>)]) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend((tensors.len() as u64).to_le_bytes());
    out.extend((pairs.len() as u64).to_le_bytes());
    for (key, ty, value) in pairs {
        string(&mut out, key);
        out.extend(ty.to_le_bytes());
        out.extend(value);
    }
    let mut data = Vec::new();
    for (name, shape, values) in tensors {
        string(&mut out, name);
        out.extend((shape.len() as u32).to_le_bytes());
        // GGUF lists dimensions innermost first.
        for d in shape.iter().rev() {
            out.extend(d.to_le_bytes());
        }
        out.extend(0u32.to_le_bytes()); // GGML_TYPE_F32
        out.extend((data.len() as u64).to_le_bytes());
        data.extend(values.iter().flat_map(|x| x.to_le_bytes()));
        while !data.len().is_multiple_of(ALIGN) {
            data.push(0);
        }
    }
    while !out.len().is_multiple_of(ALIGN) {
        out.push(0);
    }
    out.extend(data);
    out
}

pub fn write_all(out: &Path) -> Value {
    let dir = out.join("shards");
    fs::create_dir_all(&dir).expect("www/samples/shards");
    let parts = [
        vec!["token_embd.weight", "blk.0.attn_q.weight"],
        vec!["blk.0.attn_k.weight", "blk.0.ffn_up.weight"],
        vec!["output_norm.weight", "output.weight"],
    ];
    let total: usize = parts.iter().map(Vec::len).sum();
    let n = parts.len();
    let mut files = Vec::new();
    let mut listed = Vec::new();
    for (i, names) in parts.iter().enumerate() {
        let file = format!("tiny-{:05}-of-{n:05}.gguf", i + 1);
        let mut pairs = vec![
            ("split.no", 2u32, (i as u16).to_le_bytes().to_vec()),
            ("split.count", 2, (n as u16).to_le_bytes().to_vec()),
            (
                "split.tensors.count",
                5,
                (total as i32).to_le_bytes().to_vec(),
            ),
        ];
        if i == 0 {
            let mut name = Vec::new();
            string(&mut name, "tiny split");
            pairs.insert(0, ("general.name", 8, name));
        }
        let tensors: Vec<(&str, Vec<u64>, Vec<f32>)> = names
            .iter()
            .enumerate()
            .map(|(j, &t)| {
                let rows = 4 + 4 * j as u64;
                (
                    t,
                    vec![rows, 8],
                    wave(rows as usize * 8, rows as usize, 0.5 + i as f32),
                )
            })
            .collect();
        let bytes = gguf(&pairs, &tensors);
        fs::write(dir.join(&file), &bytes).expect("write");
        listed.push(json!({ "file": file, "tensors": names }));
        files.push((file, bytes));
    }
    let set: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(f, b)| (f.as_str(), b.as_slice()))
        .collect();
    kiln_convert::check_gguf_set(&set).expect("the split set is valid");
    let error = kiln_convert::check_gguf_set(&set[..2])
        .expect_err("two files of three are refused")
        .to_string();
    // The rule from the heads alone (what the inspector reads) says the same.
    let heads: Vec<kiln_nostd::inspect::Inspection> = files
        .iter()
        .map(|(f, b)| {
            kiln_convert::head::inspect_head(f, kiln_convert::Format::Gguf, b).expect("head")
        })
        .collect();
    let split: Vec<kiln_convert::SplitFile<'_>> = files
        .iter()
        .zip(&heads)
        .map(|((f, _), h)| kiln_convert::SplitFile::of_inspection(f, h))
        .collect();
    kiln_convert::check_gguf_split(&split).expect("the heads agree");
    let by_heads = kiln_convert::check_gguf_split(&split[..2]).expect_err("two of three");
    assert_eq!(by_heads.to_string(), error);
    json!({ "shards": listed, "twoOfThree": error })
}
