//! Writes the inspector's bundled samples, www/samples/, through the
//! encoder (TensorSpec, Directory::build, #[derive(Frozen)]), and
//! www/samples/samples.json, which the page lists and the tests read:
//!
//!     cargo run -q -p kiln-wasm --example make_samples            # www/samples/
//!     cargo run -q -p kiln-wasm --example make_samples -- --big F # a 256 MiB file
//!     cargo run -q -p kiln-wasm --example make_samples -- --many F # 10,000 tensors
//!     cargo run -q -p kiln-wasm --example make_samples -- --thousand F # 1,000 tensors
//!     cargo run -q -p kiln-wasm --example make_samples -- --sparse F # 6 GiB, sparse
//!     cargo run -q -p kiln-wasm --example make_samples -- --sparse-safetensors F
//!     cargo run -q -p kiln-wasm --example make_samples -- --sparse-gguf F # the same in those formats
//!
//! www/samples/compare/ holds two models that differ in known ways, one
//! of them also as a set of three files (samples/compare.rs);
//! www/samples/shards/ a three-shard safetensors checkpoint with its
//! index, and an index that disagrees with it (samples/shards.rs).
//!
//! Deterministic: the test command runs it and requires no change.

use std::fs;
use std::path::Path;

use heapless::LinearMap;
use kiln_nostd::Dtype;
use kiln_nostd::{
    bf16, check, f16, to_frame_vec, to_vec, Directory, Frozen, Options, QuantSpec, TensorSpec,
    Tensors,
};
use serde_json::{json, Value};

#[path = "samples/compare.rs"]
mod compare;
#[path = "samples/gguf_split.rs"]
mod gguf_split;
#[path = "samples/shards.rs"]
mod shards;

/// f32 values in little-endian bytes.
fn le<T: Copy, const W: usize>(values: &[T], f: impl Fn(T) -> [u8; W]) -> Vec<u8> {
    values.iter().flat_map(|&v| f(v)).collect()
}

/// Leaks bytes so that specs can borrow them for the program's life.
fn keep(v: Vec<u8>) -> &'static [u8] {
    Box::leak(v.into_boxed_slice())
}

fn shape(dims: &[u64]) -> &'static [u64] {
    Box::leak(dims.to_vec().into_boxed_slice())
}

/// A smooth pattern, so that heatmaps and histograms show something.
fn wave(n: usize, rows: usize, scale: f32) -> Vec<f32> {
    let cols = n / rows.max(1);
    (0..n)
        .map(|i| {
            let (r, c) = ((i / cols.max(1)) as f32, (i % cols.max(1)) as f32);
            scale * ((r * 0.21).sin() * (c * 0.13).cos() + 0.25 * ((r + c) * 0.05).sin())
        })
        .collect()
}

/// Rounds to a multiple of 1/8 in [-4, 4]: exact in f16, bf16 and f8.
fn eighths(v: &[f32]) -> Vec<f32> {
    v.iter()
        .map(|x| ((x * 8.0).round() / 8.0).clamp(-4.0, 4.0))
        .collect()
}

/// OFP8 E4M3 bits of a value that is a multiple of 1/8 in [-4, 4] with
/// at most 4 significant bits (searched over all 256 codes).
fn to_f8(v: f32, decode: fn(u8) -> f32) -> u8 {
    (0..=255u8)
        .filter(|&b| !decode(b).is_nan())
        .min_by(|&a, &b| (decode(a) - v).abs().total_cmp(&(decode(b) - v).abs()))
        .unwrap_or(0)
}

fn model() -> (Vec<u8>, Value) {
    use kiln_nostd::widen::{f8e4m3_to_f32, f8e5m2_to_f32};
    let embed = wave(64 * 48, 64, 1.0);
    let q = eighths(&wave(48 * 48, 48, 2.0));
    let k = eighths(&wave(48 * 48, 48, 1.5));
    let up = eighths(&wave(96 * 48, 96, 3.0));
    let down = eighths(&wave(48 * 96, 48, 3.0));
    let norm: Vec<f64> = (0..48).map(|i| 1.0 + i as f64 / 64.0).collect();
    let mut specs = vec![
        TensorSpec::new(Dtype::F32, &[64, 48], keep(le(&embed, f32::to_le_bytes)))
            .named("embed.weight"),
        TensorSpec::new(
            Dtype::F16,
            &[48, 48],
            keep(le(&q, |x| f16::from_f32(x).to_bits().to_le_bytes())),
        )
        .named("layers.0.attn.q.weight"),
        TensorSpec::new(
            Dtype::Bf16,
            &[48, 48],
            keep(le(&k, |x| bf16::from_f32(x).to_bits().to_le_bytes())),
        )
        .named("layers.0.attn.k.weight"),
        TensorSpec::new(
            Dtype::F8E4M3,
            &[96, 48],
            keep(up.iter().map(|&x| to_f8(x, f8e4m3_to_f32)).collect()),
        )
        .named("layers.0.mlp.up.weight"),
        TensorSpec::new(
            Dtype::F8E5M2,
            &[48, 96],
            keep(down.iter().map(|&x| to_f8(x, f8e5m2_to_f32)).collect()),
        )
        .named("layers.0.mlp.down.weight"),
        TensorSpec::new(Dtype::F64, &[48], keep(le(&norm, f64::to_le_bytes)))
            .named("layers.0.norm.weight"),
    ];
    let small: Vec<(&str, Dtype, Vec<u64>, Vec<u8>)> = vec![
        (
            "layers.0.attn.mask",
            Dtype::Bool,
            vec![4, 4],
            (0..16).map(|i| u8::from(i % 5 != 0)).collect(),
        ),
        (
            "quant.i8",
            Dtype::I8,
            vec![32],
            (0..32).map(|i: i32| (i * 7 - 100) as i8 as u8).collect(),
        ),
        (
            "quant.u8",
            Dtype::U8,
            vec![32],
            (0..32u8).map(|i| i * 8).collect(),
        ),
        (
            "stats.i16",
            Dtype::I16,
            vec![8],
            le(&[-300i16, -2, -1, 0, 1, 2, 300, i16::MIN], i16::to_le_bytes),
        ),
        (
            "stats.u16",
            Dtype::U16,
            vec![8],
            le(
                &[0u16, 1, 2, 3, 1000, 2000, 40000, u16::MAX],
                u16::to_le_bytes,
            ),
        ),
        (
            "stats.i32",
            Dtype::I32,
            vec![6],
            le(&[-70000i32, -1, 0, 1, 70000, 123456], i32::to_le_bytes),
        ),
        (
            "stats.u32",
            Dtype::U32,
            vec![6],
            le(&[0u32, 1, 2, 3, 4_000_000, 7], u32::to_le_bytes),
        ),
        (
            "tokens.i64",
            Dtype::I64,
            vec![5],
            le(&[-5i64, 0, 7, 1 << 40, -(1 << 50)], i64::to_le_bytes),
        ),
        (
            "hashes.u64",
            Dtype::U64,
            vec![3],
            le(&[1u64, 1 << 52, 0xfff], u64::to_le_bytes),
        ),
        (
            "packed.i4",
            Dtype::I4,
            vec![15],
            vec![0xf1, 0x72, 0x98, 0x03, 0xe4, 0x5d, 0xa6, 0x07],
        ),
        (
            "packed.u4",
            Dtype::U4,
            vec![16],
            vec![0x21, 0x43, 0x65, 0x87, 0xa9, 0xcb, 0xed, 0x0f],
        ),
        (
            "mx.e2m1",
            Dtype::E2M1,
            vec![16],
            vec![0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe],
        ),
        ("mx.e8m0", Dtype::E8M0, vec![4], vec![127, 128, 126, 130]),
    ];
    for (name, dtype, dims, bytes) in small {
        specs.push(TensorSpec::new(dtype, shape(&dims), keep(bytes)).named(Box::leak(name.into())));
    }
    let file = to_vec(&Tensors(&specs)).expect("model");
    (file, json!({}))
}

fn mxfp4() -> Vec<u8> {
    // MXFP4: 32 e2m1 elements per e8m0 scale along the last axis.
    let data: Vec<u8> = (0..8 * 64 / 2)
        .map(|i| ((i * 37 + 11) % 256) as u8 & 0x77)
        .collect();
    let scales: Vec<u8> = (0..16).map(|i| 120 + (i % 9) as u8).collect();
    // NVFP4-shaped: 16 e2m1 per f8e4m3 scale, plus one f32 outer scale.
    let gate: Vec<u8> = (0..4 * 32 / 2)
        .map(|i| ((i * 53 + 5) % 256) as u8)
        .collect();
    let gate_scales: Vec<u8> = vec![0x38, 0x40, 0x30, 0x3c, 0x38, 0x44, 0x34, 0x38];
    let specs = [
        TensorSpec::new(Dtype::E2M1, &[8, 64], keep(data))
            .named("blk.0.ffn_up.weight")
            .quantized(QuantSpec::Scales {
                axis: 1,
                group_size: 32,
                scales: 1,
            }),
        TensorSpec::new(Dtype::E8M0, &[8, 2], keep(scales)).named("blk.0.ffn_up.weight.scales"),
        TensorSpec::new(Dtype::E2M1, &[4, 32], keep(gate))
            .named("blk.0.ffn_gate.weight")
            .quantized(QuantSpec::ScalesOuter {
                axis: 1,
                group_size: 16,
                scales: 3,
                outer: 4,
            }),
        TensorSpec::new(Dtype::F8E4M3, &[4, 2], keep(gate_scales))
            .named("blk.0.ffn_gate.weight.scales"),
        TensorSpec::new(Dtype::F32, &[1], keep(le(&[0.0125f32], f32::to_le_bytes)))
            .named("blk.0.ffn_gate.weight.outer"),
    ];
    to_vec(&Tensors(&specs)).expect("mxfp4")
}

fn q4k() -> Vec<u8> {
    // Two Q4_K super-blocks of 144 bytes (256 weights each), as GGUF
    // stores them; Kiln keeps the bytes and the layout name.
    let blocks: Vec<u8> = (0..288).map(|i| ((i * 29 + 3) % 251) as u8).collect();
    let norm: Vec<f32> = (0..16).map(|i| 1.0 - i as f32 / 32.0).collect();
    let specs = [
        TensorSpec::opaque(4096 + 12, "Q4_K", 144, &[512], keep(blocks))
            .named("blk.0.attn_q.weight"),
        TensorSpec::new(Dtype::F32, &[16], keep(le(&norm, f32::to_le_bytes)))
            .named("blk.0.attn_norm.weight"),
    ];
    to_vec(&Tensors(&specs)).expect("q4k")
}

#[derive(Frozen)]
struct Layer<'a> {
    name: &'a str,
    w: Directory<'a>,
}

#[derive(Frozen)]
struct Record<'a> {
    id: i64,
    name: &'a str,
    labels: Vec<&'a str>,
    scores: LinearMap<&'a str, f64, 4>,
    layers: Vec<Layer<'a>>,
    batch: Directory<'a>,
}

const RECORD_ID: i64 = 9_007_199_254_740_993; // 2^53 + 1: needs a BigInt

fn record() -> (Vec<u8>, String) {
    let mut blocks = Vec::new();
    for l in 0..3 {
        let w = wave(16 * 16, 16, 1.0 + l as f32);
        let b = le(&[0.5f32 * (l + 1) as f32; 16], f32::to_le_bytes);
        let specs = [
            TensorSpec::new(Dtype::F32, &[16], keep(b)).named("bias"),
            TensorSpec::new(Dtype::F32, &[16, 16], keep(le(&w, f32::to_le_bytes))).named("weight"),
        ];
        blocks.push(to_vec(&Tensors(&specs)).expect("layer"));
    }
    let pixels: Vec<u8> = (0..32 * 32).map(|i| ((i % 32) * 8) as u8).collect();
    let labels = le(&[3i32, 1, 4, 1], i32::to_le_bytes);
    let batch = to_vec(&Tensors(&[
        TensorSpec::new(Dtype::U8, &[32, 32], keep(pixels)).named("image"),
        TensorSpec::new(Dtype::I32, &[4], keep(labels)).named("labels"),
    ]))
    .expect("batch");
    let mut scores = LinearMap::new();
    for (k, v) in [("recall", 0.875), ("precision", 0.9375), ("loss", 0.03125)] {
        let _ = scores.insert(k, v);
    }
    let parse = |b: &'static [u8]| Directory::parse(b).expect("block");
    let blocks: Vec<&'static [u8]> = blocks.into_iter().map(keep).collect();
    let record = Record {
        id: RECORD_ID,
        name: "probe run 7",
        labels: vec!["cat", "dog", "owl"],
        scores,
        layers: (0..3)
            .map(|l| Layer {
                name: ["in", "mid", "out"][l],
                w: parse(blocks[l]),
            })
            .collect(),
        batch: parse(keep(batch)),
    };
    (
        to_frame_vec(&record).expect("record"),
        Record::SCHEMA.to_string(),
    )
}

/// One 256 MiB f32 tensor (and a small one), for the large-file test.
fn big(path: &Path) {
    let n = 64 << 20;
    let mut values = vec![0f32; n];
    for (i, v) in values.iter_mut().enumerate() {
        *v = ((i % 4099) as f32 - 2049.0) / 64.0;
    }
    values[12345] = f32::NAN;
    values[54321] = f32::INFINITY;
    let bytes: &[u8] = bytemuck_cast(&values);
    let specs = [
        TensorSpec::new(Dtype::F32, &[8192, 8192], bytes).named("big.weight"),
        TensorSpec::new(
            Dtype::F32,
            &[4],
            keep(le(&[1f32, 2.0, 3.0, 4.0], f32::to_le_bytes)),
        )
        .named("small"),
    ];
    fs::write(path, to_vec(&Tensors(&specs)).expect("big")).expect("write");
}

/// Appends to a file, leaving a hole (a sparse region, no disk blocks)
/// wherever the encoder writes zeros or the bytes of `zeros` (the
/// payloads, found by where they are, never by scanning them).
struct SparseSink<'z> {
    file: fs::File,
    zeros: &'z [u8],
    written: usize,
}

impl kiln_nostd::Sink for SparseSink<'_> {
    fn put(&mut self, bytes: &[u8]) -> kiln_nostd::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        let inside = self.zeros.as_ptr_range();
        let io = |_| kiln_nostd::Error::refused(kiln_nostd::Refusal::Io, "write");
        self.written += bytes.len();
        if inside.contains(&bytes.as_ptr()) {
            self.file
                .seek(SeekFrom::Current(bytes.len() as i64))
                .map_err(io)?;
        } else {
            self.file.write_all(bytes).map_err(io)?;
        }
        Ok(())
    }

    fn put_zeros(&mut self, count: usize) -> kiln_nostd::Result<()> {
        use std::io::{Seek, SeekFrom};
        self.written += count;
        self.file
            .seek(SeekFrom::Current(count as i64))
            .map_err(|_| kiln_nostd::Error::refused(kiln_nostd::Refusal::Io, "seek"))?;
        Ok(())
    }

    fn written(&self) -> usize {
        self.written
    }
}

/// A 6 GiB model written sparse (real heads, zero payloads: no disk
/// blocks): 300 f16 matrices of 4096 x 2688 (21 MiB each), one of
/// 1024 x 1024, then a small f32 tensor of real values at the end of the
/// file, for the end-to-end
/// test of a file far larger than wasm memory.
fn sparse(path: &Path) {
    let shape = [4096u64, 2688];
    let zeros = vec![0u8; (shape[0] * shape[1] * 2) as usize];
    let kinds = [
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "up_proj",
        "down_proj",
    ];
    let names: Vec<String> = (0..300)
        .map(|i| format!("model.layers.{:02}.{}.weight", i / 6, kinds[i % 6]))
        .collect();
    let tail: Vec<f32> = (0..4096).map(|i| (i as f32 - 2048.0) / 256.0).collect();
    let mut specs: Vec<TensorSpec<'_>> = names
        .iter()
        .map(|n| TensorSpec::new(Dtype::F16, &shape, &zeros).named(n))
        .collect();
    // One 1 M-element matrix (the speed row of a 1 M-element histogram).
    let mega = [1024u64, 1024];
    specs.push(TensorSpec::new(Dtype::F16, &mega, &zeros[..1 << 21]).named("lm_head.weight"));
    specs.push(TensorSpec::from_host(&[4096], &tail).named("model.norm.weight"));
    let file = fs::File::create(path).expect("create");
    let mut w = kiln_nostd::Writer::new(SparseSink {
        file,
        zeros: &zeros,
        written: 0,
    });
    kiln_nostd::Encode::encode(&Tensors(&specs), &mut w).expect("encode");
    let sink = w.into_sink();
    let end = std::io::Seek::stream_position(&mut &sink.file).expect("position");
    sink.file.set_len(end).expect("length");
}

/// The names of the sparse models' 300 f16 matrices of 4096 x 2688
/// (21 MiB each).
fn sparse_names() -> Vec<String> {
    let kinds = [
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "up_proj",
        "down_proj",
    ];
    (0..300)
        .map(|i| format!("model.layers.{:02}.{}.weight", i / 6, kinds[i % 6]))
        .collect()
}

/// The last tensor of the sparse models: 4096 f32 values from -8 up.
fn sparse_tail() -> Vec<u8> {
    (0..4096)
        .flat_map(|i| ((i as f32 - 2048.0) / 256.0).to_le_bytes())
        .collect()
}

/// Writes `head`, then `tail` at `tail_at`, and sets the length to `len`:
/// everything else is a hole.
fn write_sparse(path: &Path, head: &[u8], tail_at: u64, tail: &[u8], len: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = fs::File::create(path).expect("create");
    file.write_all(head).expect("head");
    file.seek(SeekFrom::Start(tail_at)).expect("seek");
    file.write_all(tail).expect("tail");
    file.set_len(len).expect("length");
}

/// The 6 GiB sparse model as a safetensors file: a real header (with
/// `__metadata__`), zero payloads, the 1024 x 1024 f16 matrix and the
/// f32 tail last.
fn sparse_safetensors(path: &Path) {
    let mut header = serde_json::Map::new();
    header.insert(
        "__metadata__".into(),
        json!({ "format": "pt", "source": "kiln sparse test model" }),
    );
    let mut at = 0u64;
    let mut put = |name: &str, dtype: &str, shape: &[u64], bytes: u64| {
        header.insert(
            name.into(),
            json!({ "dtype": dtype, "shape": shape, "data_offsets": [at, at + bytes] }),
        );
        at += bytes;
    };
    for name in sparse_names() {
        put(&name, "F16", &[4096, 2688], 4096 * 2688 * 2);
    }
    put("lm_head.weight", "F16", &[1024, 1024], 1 << 21);
    put("model.norm.weight", "F32", &[4096], 4096 * 4);
    let mut json = serde_json::to_vec(&Value::Object(header)).expect("json");
    json.resize(json.len().div_ceil(8) * 8, b' ');
    let mut head = (json.len() as u64).to_le_bytes().to_vec();
    head.extend(&json);
    let data = head.len() as u64;
    let tail = sparse_tail();
    write_sparse(path, &head, data + at - tail.len() as u64, &tail, data + at);
}

/// The 6 GiB sparse model as a GGUF file: metadata with a 32,000-token
/// vocabulary (a head of several hundred KB, read in growing reads), the
/// 300 f16 matrices, a Q4_K matrix, a Q8_0 vector with real blocks, the
/// 1024 x 1024 f16 matrix and the f32 tail.
fn sparse_gguf(path: &Path) {
    let s = |v: &mut Vec<u8>, text: &str| {
        v.extend((text.len() as u64).to_le_bytes());
        v.extend(text.as_bytes());
    };
    let mut kv = Vec::new();
    for (key, value) in [
        ("general.architecture", "llama"),
        ("general.name", "kiln sparse test model"),
    ] {
        s(&mut kv, key);
        kv.extend(8u32.to_le_bytes());
        s(&mut kv, value);
    }
    s(&mut kv, "llama.context_length");
    kv.extend(4u32.to_le_bytes());
    kv.extend(4096u32.to_le_bytes());
    s(&mut kv, "tokenizer.ggml.tokens");
    kv.extend(9u32.to_le_bytes());
    kv.extend(8u32.to_le_bytes());
    kv.extend(32_000u64.to_le_bytes());
    for i in 0..32_000 {
        s(&mut kv, &format!("▁token{i}"));
    }
    let pairs = 4u64;
    // (name, GGUF dims innermost first, ggml type, bytes)
    // The Q8_0 vector first: its real bytes follow the head, the rest of
    // the file is a hole up to the tail.
    let mut tensors: Vec<(String, Vec<u64>, u32, u64)> =
        vec![("blk.q8_0.weight".into(), vec![256], 8, 256 / 32 * 34)];
    tensors.extend(
        sparse_names()
            .into_iter()
            .map(|n| (n, vec![2688, 4096], 1, 4096 * 2688 * 2)),
    );
    tensors.push((
        "blk.q4_k.weight".into(),
        vec![4096, 512],
        12,
        4096 / 256 * 144 * 512,
    ));
    tensors.push(("lm_head.weight".into(), vec![1024, 1024], 1, 1 << 21));
    tensors.push(("model.norm.weight".into(), vec![4096], 0, 4096 * 4));
    let mut head = b"GGUF".to_vec();
    head.extend(3u32.to_le_bytes());
    head.extend((tensors.len() as u64).to_le_bytes());
    head.extend(pairs.to_le_bytes());
    head.extend(&kv);
    let mut offset = 0u64;
    for (_, _, _, bytes) in &tensors {
        offset += bytes.div_ceil(32) * 32;
    }
    let end = offset;
    offset = 0;
    for (name, dims, ty, bytes) in &tensors {
        s(&mut head, name);
        head.extend((dims.len() as u32).to_le_bytes());
        for d in dims {
            head.extend(d.to_le_bytes());
        }
        head.extend(ty.to_le_bytes());
        head.extend(offset.to_le_bytes());
        offset += bytes.div_ceil(32) * 32;
    }
    let data = (head.len() as u64).div_ceil(32) * 32;
    // The Q8_0 blocks: an f16 scale of 1.0, then 32 quants of i - 16.
    let mut q8 = Vec::new();
    for _ in 0..8 {
        q8.extend(f16::from_f32(1.0).to_le_bytes());
        q8.extend((0..32).map(|i| (i as i8 - 16) as u8));
    }
    head.resize(data as usize, 0);
    head.extend(&q8);
    let tail = sparse_tail();
    let last = end - 4096 * 4;
    write_sparse(path, &head, data + last, &tail, data + last + 4096 * 4);
}

/// `count` small tensors of several dtypes (10,000 names fit the 64 KiB
/// heap).
fn many(path: &Path, count: usize) {
    let kinds = ['q', 'k', 'v', 'o', 'u', 'd', 'g', 'n', 's', 'b'];
    let names: Vec<String> = (0..count)
        .map(|i| format!("{:04}{}", i / 10, kinds[i % 10]))
        .collect();
    let dtypes = [Dtype::F32, Dtype::F16, Dtype::Bf16, Dtype::I8, Dtype::U8];
    let specs: Vec<TensorSpec<'_>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let dtype = dtypes[i % dtypes.len()];
            let n = 4 + (i % 13) as u64;
            let width = match dtype {
                Dtype::F32 => 4,
                Dtype::F16 | Dtype::Bf16 => 2,
                _ => 1,
            };
            let bytes = keep(
                (0..n * width)
                    .map(|b| (b as usize * 7 + i) as u8 & 0x3f)
                    .collect(),
            );
            TensorSpec::new(dtype, shape(&[n]), bytes).named(name)
        })
        .collect();
    fs::write(path, to_vec(&Tensors(&specs)).expect("many")).expect("write");
}

fn bytemuck_cast(v: &[f32]) -> &'static [u8] {
    keep(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}

fn widen_first(dir: &Directory<'_>, name: &str, n: usize) -> Vec<f32> {
    let t = dir.by_name(name).expect("tensor");
    let mut out = vec![0f32; n.min(t.element_count() as usize)];
    let got = t.widen_into(0, &mut out).expect("widen");
    out.truncate(got);
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, path] = args.as_slice() {
        match flag.as_str() {
            "--big" => return big(Path::new(path)),
            "--many" => return many(Path::new(path), 10_000),
            "--thousand" => return many(Path::new(path), 1_000),
            "--sparse" => return sparse(Path::new(path)),
            "--sparse-safetensors" => return sparse_safetensors(Path::new(path)),
            "--sparse-gguf" => return sparse_gguf(Path::new(path)),
            _ => {}
        }
    }
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../www/samples");
    fs::create_dir_all(&out).expect("www/samples");
    let mut manifest = Vec::new();

    let (model, _) = model();
    let dir = Directory::parse(&model).expect("model parses");
    let mut values = serde_json::Map::new();
    for t in &dir {
        let name = t.name().expect("named");
        let v = widen_first(&dir, name, 8);
        // JSON has no NaN: the samples hold none in their first 8 values.
        values.insert(
            name.into(),
            json!(v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>()),
        );
    }
    manifest.push(json!({
        "file": "model.kiln", "type": "tensors", "framed": false, "expect": "accept",
        "title": "Model: 19 named tensors, one per dtype",
        "description": "A bare directory shaped like a checkpoint: embeddings, attention and MLP weights in f32, f16, bf16 and f8, and a small tensor of every other dtype.",
        "values": values,
    }));
    fs::write(out.join("model.kiln"), &model).expect("write");

    let mx = mxfp4();
    manifest.push(json!({
        "file": "mxfp4.kiln", "type": "tensors", "framed": false, "expect": "accept",
        "title": "MXFP4 and NVFP4-shaped quantized blocks",
        "description": "e2m1 weights with e8m0 scales per 32 elements (scheme 1), and e2m1 with f8e4m3 scales per 16 and an f32 outer scale (scheme 2).",
    }));
    fs::write(out.join("mxfp4.kiln"), &mx).expect("write");

    let q = q4k();
    manifest.push(json!({
        "file": "q4k.kiln", "type": "tensors", "framed": false, "expect": "accept",
        "title": "Opaque Q4_K block (GGUF)",
        "description": "Two 144-byte Q4_K super-blocks stored as opaque dtype 4108 with their layout name, next to an f32 norm.",
    }));
    fs::write(out.join("q4k.kiln"), &q).expect("write");

    let (rec, ty) = record();
    assert!(check(&ty, &rec, Options::FRAMED).is_ok());
    manifest.push(json!({
        "file": "record.kiln", "type": ty, "framed": true, "expect": "accept",
        "title": "Framed record: id, name, labels, scores and tensors",
        "description": "A struct message with a 64-bit id, a string, a list, a dict, three layers each with a tensors field, and a batch; the batch payloads sit at offsets a Float32Array cannot start at, so their views are copies.",
        "id": RECORD_ID.to_string(),
        "paths": ["layers[0].w", "layers[1].w", "layers[2].w", "batch"],
    }));
    fs::write(out.join("record.kiln"), &rec).expect("write");

    // Invalid: the model with a bool byte of 2.
    let mask = dir
        .by_name("layers.0.attn.mask")
        .expect("mask")
        .byte_range();
    let mut bad = model.clone();
    bad[mask.start + 5] = 2;
    let err = check("tensors", &bad, Options::BARE).expect_err("invalid");
    // The fault is reported at the bad byte itself.
    assert_eq!(err.offset(), Some(mask.start as u64 + 5));
    manifest.push(json!({
        "file": "invalid.kiln", "type": "tensors", "framed": false,
        "expect": err.kind_name(), "offset": err.offset(),
        "title": "Invalid: a bool byte of 2",
        "description": "The model sample with one byte of its bool mask set to 2: the file fails validation with TYPE, reported at that byte.",
    }));
    fs::write(out.join("invalid.kiln"), &bad).expect("write");

    // The two tiny model files of samples/ as `kiln convert` writes them:
    // the page knows a converted file by its frame's hash, and every
    // payload lies at a file offset that is a multiple of 64, so each
    // whole-byte tensor is viewed in place, never copied.
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    for (source, from, ty, title) in [
        (
            "tiny.safetensors",
            kiln_convert::Format::Safetensors,
            kiln_convert::SAFETENSORS_MESSAGE,
            "Converted from safetensors: samples/tiny.safetensors",
        ),
        (
            "tiny.gguf",
            kiln_convert::Format::Gguf,
            kiln_convert::GGUF_MESSAGE,
            "Converted from GGUF: samples/tiny.gguf",
        ),
    ] {
        let input = fs::read(models.join(source)).expect("sample model");
        let mut kiln = Vec::new();
        kiln_convert::convert(from, kiln_convert::Format::Kiln, &input, &mut kiln)
            .expect("converts");
        let file = format!("{}.kiln", source.replace('.', "-"));
        manifest.push(json!({
            "file": file, "type": ty, "framed": true, "expect": "accept",
            "title": title, "converted": true,
            "description": "A model converted by kiln convert: its metadata and tensors, every payload at a multiple of 64 bytes in the file.",
        }));
        fs::write(out.join(&file), &kiln).expect("write");
    }

    // The same two files as they are: the inspector opens them from their
    // heads.
    for (source, format) in [("tiny.safetensors", "safetensors"), ("tiny.gguf", "gguf")] {
        fs::copy(models.join(source), out.join(source)).expect("copy");
        let name = if format == "gguf" {
            "GGUF"
        } else {
            "safetensors"
        };
        manifest.push(json!({
            "file": source, "type": "tensors", "framed": false, "format": format, "expect": "accept",
            "title": format!("{name}: samples/{source}, opened as it is"),
            "description": "A model file opened directly: its head read and checked by kiln-convert's reader in wasm, its tensors' values read when shown.",
        }));
    }

    let text = serde_json::to_string_pretty(&Value::Array(manifest)).expect("json") + "\n";
    fs::write(out.join("samples.json"), text).expect("write");

    // Two models that differ in known ways, and one of them as a set.
    compare::write_all(&out);
    // A sharded safetensors checkpoint with its index, and a bad index.
    shards::write_all(&out);
}
