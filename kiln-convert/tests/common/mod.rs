//! Hand-built GGUF and safetensors files for the tests that need no Python.
#![allow(dead_code)]

/// Builds GGUF bytes field by field, so tests can also build broken files.
#[derive(Default, Clone)]
pub struct GgufBuilder {
    pub version: u32,
    pub alignment: u64,
    pub kvs: Vec<u8>,
    pub kv_count: u64,
    pub infos: Vec<(String, Vec<u64>, u32, Vec<u8>)>,
}

pub fn gguf_str(s: &[u8]) -> Vec<u8> {
    let mut v = (s.len() as u64).to_le_bytes().to_vec();
    v.extend_from_slice(s);
    v
}

/// A GGUF array value (after the type word).
pub fn array(elem: u32, count: u64, items: &[u8]) -> Vec<u8> {
    let mut v = elem.to_le_bytes().to_vec();
    v.extend(count.to_le_bytes());
    v.extend_from_slice(items);
    v
}

impl GgufBuilder {
    pub fn new() -> Self {
        GgufBuilder {
            version: 3,
            alignment: 32,
            ..Default::default()
        }
    }

    pub fn kv(mut self, key: &str, ty: u32, value: &[u8]) -> Self {
        self.kvs.extend(gguf_str(key.as_bytes()));
        self.kvs.extend(ty.to_le_bytes());
        self.kvs.extend_from_slice(value);
        self.kv_count += 1;
        self
    }

    pub fn tensor(mut self, name: &str, dims: &[u64], ty: u32, data: &[u8]) -> Self {
        self.infos
            .push((name.into(), dims.to_vec(), ty, data.to_vec()));
        self
    }

    /// The canonical layout, as gguf-py and llama.cpp write it.
    pub fn build(&self) -> Vec<u8> {
        let a = self.alignment as usize;
        let pad = |n: usize| n.div_ceil(a) * a - n;
        let mut out = b"GGUF".to_vec();
        out.extend(self.version.to_le_bytes());
        out.extend((self.infos.len() as u64).to_le_bytes());
        out.extend(self.kv_count.to_le_bytes());
        out.extend(&self.kvs);
        let mut offset = 0usize;
        for (name, dims, ty, data) in &self.infos {
            out.extend(gguf_str(name.as_bytes()));
            out.extend((dims.len() as u32).to_le_bytes());
            for d in dims {
                out.extend(d.to_le_bytes());
            }
            out.extend(ty.to_le_bytes());
            out.extend((offset as u64).to_le_bytes());
            offset += data.len() + pad(data.len());
        }
        out.resize(out.len() + pad(out.len()), 0);
        for (_, _, _, data) in &self.infos {
            out.extend(data);
            out.resize(out.len() + pad(data.len()), 0);
        }
        out
    }
}

pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A small GGUF file with every value type, nested and empty arrays,
/// plain and block tensors, a scalar and a zero-sized tensor.
pub fn sample_gguf() -> Vec<u8> {
    let mut strings = gguf_str("a".as_bytes());
    strings.extend(gguf_str("é✓".as_bytes()));
    let mut nested = array(5, 2, &[1, 0, 0, 0, 2, 0, 0, 0]);
    nested.extend(array(8, 1, &gguf_str(b"x")));
    nested.extend(array(0, 0, &[]));
    nested.extend(array(9, 0, &[]));
    let q4k: Vec<u8> = (0..144 * 2).map(|i| (i * 7 % 251) as u8).collect();
    GgufBuilder::new()
        .kv("general.architecture", 8, &gguf_str(b"llama"))
        .kv("u8", 0, &[7])
        .kv("i8", 1, &[0x80])
        .kv("u16", 2, &[1, 2])
        .kv("i16", 3, &[0xff, 0xff])
        .kv("u32", 4, &[1, 2, 3, 4])
        .kv("i32", 5, &[0xfe, 0xff, 0xff, 0xff])
        .kv("f32", 6, &(-0.0f32).to_le_bytes())
        .kv("bool", 7, &[1])
        .kv("ключ", 8, &gguf_str("значение".as_bytes()))
        .kv("u64", 10, &u64::MAX.to_le_bytes())
        .kv("i64", 11, &i64::MIN.to_le_bytes())
        .kv(
            "f64",
            12,
            &f64::from_bits(0x7FF8_0000_0000_0001).to_le_bytes(),
        )
        .kv("strings", 9, &array(8, 2, &strings))
        .kv("bools", 9, &array(7, 3, &[1, 0, 1]))
        .kv("empty", 9, &array(12, 0, &[]))
        .kv("nested", 9, &array(9, 4, &nested))
        .tensor(
            "w.f32",
            &[3, 2],
            0,
            &f32_bytes(&[1.0, -2.0, 3.5, 0.0, -0.0, 9.0]),
        )
        .tensor("w.q4_k", &[256, 2], 12, &q4k)
        .tensor("w.i16", &[5], 25, &[1, 0, 2, 0, 3, 0, 4, 0, 5, 0])
        .tensor("scalar", &[], 0, &f32_bytes(&[1.25]))
        .tensor("empty", &[0, 4], 30, &[])
        .tensor("w.q8_0", &[32], 8, &[3u8; 34])
        .build()
}

/// A safetensors file written by the safetensors crate.
pub fn sample_safetensors(metadata: Option<&[(&str, &str)]>) -> Vec<u8> {
    use safetensors::tensor::TensorView;
    use safetensors::Dtype;
    let a = f32_bytes(&[1.0, -2.0, 0.5, 8.0]);
    let b = [1u8, 0, 1];
    let c: Vec<u8> = (0..24).collect();
    let tensors = vec![
        (
            "weight",
            TensorView::new(Dtype::F32, vec![2, 2], &a).unwrap(),
        ),
        ("mask", TensorView::new(Dtype::BOOL, vec![3], &b).unwrap()),
        (
            "bias.bf16",
            TensorView::new(Dtype::BF16, vec![3, 4], &c).unwrap(),
        ),
        (
            "e8m0",
            TensorView::new(Dtype::F8_E8M0, vec![2], &c[..2]).unwrap(),
        ),
        (
            "scalar",
            TensorView::new(Dtype::I64, vec![], &c[..8]).unwrap(),
        ),
        (
            "zero",
            TensorView::new(Dtype::U16, vec![0, 3], &[]).unwrap(),
        ),
    ];
    let metadata = metadata.map(|m| {
        m.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    });
    safetensors::serialize(tensors, metadata).unwrap()
}

/// The tensor names of a 48-layer mixture-of-experts model with 128
/// experts per layer (the layout of a public 30B checkpoint), in model
/// order: 18,867 names.
pub fn moe_names() -> Vec<String> {
    let mut names = vec!["model.embed_tokens.weight".to_string()];
    for layer in 0..48 {
        let at = |rest: &str| format!("model.layers.{layer}.{rest}");
        names.push(at("input_layernorm.weight"));
        for proj in ["q_proj", "k_proj", "v_proj", "o_proj"] {
            names.push(at(&format!("self_attn.{proj}.weight")));
        }
        names.push(at("self_attn.q_norm.weight"));
        names.push(at("self_attn.k_norm.weight"));
        names.push(at("mlp.gate.weight"));
        for expert in 0..128 {
            for proj in ["gate_proj", "up_proj", "down_proj"] {
                names.push(at(&format!("mlp.experts.{expert}.{proj}.weight")));
            }
        }
        names.push(at("post_attention_layernorm.weight"));
    }
    names.push("model.norm.weight".into());
    names.push("lm_head.weight".into());
    names
}

/// `count` names like a very large expert model's, in model order.
pub fn many_names(count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            let (layer, rest) = (i / 1000, i % 1000);
            let (expert, proj) = (rest / 4, rest % 4);
            let proj = ["gate_proj", "up_proj", "down_proj", "scale"][proj];
            format!("model.layers.{layer}.mlp.experts.{expert}.{proj}.weight")
        })
        .collect()
}

/// Views every payload of a converted file in place: whole-byte numeric
/// dtypes through `as_slice` (refused when misaligned), every other one
/// (bool, f8, e8m0, ggml blocks) checked at a multiple of 64 in the
/// buffer. Returns how many tensors were viewed with `as_slice`.
pub fn view_every_payload(bytes: &[u8]) -> usize {
    use kiln_nostd::{bf16, f16, Dtype, DtypeCode};
    let model = kiln_convert::Model::open(bytes).unwrap();
    let mut viewed = 0;
    for t in model.tensors() {
        let range = t.byte_range();
        assert_eq!(range.start % 64, 0, "{:?} at {}", t.name(), range.start);
        assert_eq!(
            (bytes.as_ptr() as usize + range.start) % 64,
            0,
            "the buffer is not 64-aligned"
        );
        assert_eq!(t.bytes().as_ptr(), bytes[range.clone()].as_ptr());
        let len = match t.dtype() {
            DtypeCode::Closed(Dtype::F64) => t.as_slice::<f64>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::F32) => t.as_slice::<f32>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::F16) => t.as_slice::<f16>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::Bf16) => t.as_slice::<bf16>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::I8) => t.as_slice::<i8>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::U8) => t.as_slice::<u8>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::I16) => t.as_slice::<i16>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::U16) => t.as_slice::<u16>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::I32) => t.as_slice::<i32>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::U32) => t.as_slice::<u32>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::I64) => t.as_slice::<i64>().map(<[_]>::len),
            DtypeCode::Closed(Dtype::U64) => t.as_slice::<u64>().map(<[_]>::len),
            _ => continue,
        };
        assert_eq!(
            len.unwrap_or_else(|e| panic!("{:?}: {e}", t.name())) as u64,
            t.element_count()
        );
        viewed += 1;
    }
    viewed
}

/// Writes `bytes` to a new file in the temporary folder and maps it, as
/// `kiln` maps a model: the view tests then see the file's own offsets.
pub struct MappedFile {
    path: std::path::PathBuf,
    pub map: memmap2::Mmap,
}

impl MappedFile {
    pub fn new(name: &str, bytes: &[u8]) -> MappedFile {
        let path =
            std::env::temp_dir().join(format!("kiln-convert-test-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: the file is this test's own, written above and not
        // changed while mapped.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        MappedFile { path, map }
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
