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
