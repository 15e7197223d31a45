//! The data every case runs on: model-like tensor directories (and the
//! safetensors file of the same tensors), a 64 MiB f32 tensor, and the
//! Frozen records, each with the same Rust data on every side.

use std::collections::BTreeMap;

use kiln_nostd::{heapless, Dtype, Frozen, PodList, TensorSpec, Tensors};
use safetensors::tensor::TensorView as StView;
use serde::{Deserialize, Serialize};

/// A small deterministic generator (xorshift64*), so every run and every
/// side sees the same tensors.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low + 1)
    }

    /// Shuffles `v` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

/// What the tensors are called.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Names {
    /// `layers.17.attn.q_proj.weight` and its nine siblings per layer
    /// (about 25 bytes each).
    Model,
    /// `t0` to `t9999`: a directory's name heap has 16-bit offsets, so
    /// 10,000 names fit only when they average under about 6.5 bytes.
    Short,
    /// `model.layers.5.mlp.experts.42.up_proj.weight`: a mixture of
    /// experts' names (64 experts of three projections a layer, about 45
    /// bytes each, long shared prefixes), up to about 1,400 a directory.
    Long,
}

const PROJECTIONS: [&str; 3] = ["gate_proj", "up_proj", "down_proj"];

/// The order of the descriptors in the Kiln block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Order {
    /// By name bytes, as `kiln convert` and a dict of tensors write them:
    /// `Directory::by_name` uses the hash table the timed parse built
    /// after proving the names unique in one pass.
    Sorted,
    /// Layer by layer, as a model lists them (not byte order): lookups go
    /// through `Directory::by_name`, which uses the hash table the timed
    /// parse built for its uniqueness check.
    Model,
}

/// How big the payloads are.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Payloads {
    /// 8 to 4,096 elements each, f32, bf16 and f16 mixed.
    Model,
    /// Every tensor f32 of this many bytes.
    Fixed(usize),
}

const SUFFIXES: [&str; 10] = [
    "attn.q_proj.weight",
    "attn.k_proj.weight",
    "attn.v_proj.weight",
    "attn.o_proj.weight",
    "attn.q_proj.bias",
    "mlp.gate_proj.weight",
    "mlp.up_proj.weight",
    "mlp.down_proj.weight",
    "attn_norm.weight",
    "mlp_norm.weight",
];

/// One tensor's description, before it is written.
pub struct Spec {
    /// The tensor's name.
    pub name: String,
    /// f32, bf16 or f16.
    pub dtype: Dtype,
    /// One or two dimensions.
    pub shape: Vec<u64>,
    /// Bytes of the payload.
    pub len: usize,
}

/// The same tensors as a Kiln block and as a safetensors file.
pub struct DirectoryFixture {
    /// The Kiln block (one standalone `tensors` value).
    pub kiln: Vec<u8>,
    /// `safetensors::serialize` of the same tensors.
    pub safetensors: Vec<u8>,
    /// Every name, in one shuffled order that both sides look up.
    pub lookups: Vec<String>,
    /// Header, descriptors and name heap: what the floor pass sums.
    pub directory_bytes: usize,
    /// Whether the Kiln descriptors are sorted by name.
    pub order: Order,
}

/// The tensors of a fixture, in model order.
pub fn specs(count: usize, names: Names, payloads: Payloads) -> Vec<Spec> {
    let mut rng = Rng::new(0x6b69_6c6e ^ count as u64);
    (0..count)
        .map(|i| {
            let name = match names {
                Names::Model => format!("layers.{}.{}", i / 10, SUFFIXES[i % 10]),
                Names::Short => format!("t{i}"),
                Names::Long => format!(
                    "model.layers.{}.mlp.experts.{}.{}.weight",
                    i / 192,
                    i / 3 % 64,
                    PROJECTIONS[i % 3]
                ),
            };
            let (dtype, shape) = match payloads {
                Payloads::Model => {
                    let dtype =
                        [Dtype::F32, Dtype::Bf16, Dtype::F16][(rng.next_u64() % 3) as usize];
                    let shape = if i % 10 >= 4 && i % 10 != 5 && i % 10 != 6 && i % 10 != 7 {
                        vec![rng.range(8, 4096)]
                    } else {
                        let rows = rng.range(2, 64);
                        let cols = rng.range(8u64.div_ceil(rows).max(1), 4096 / rows);
                        vec![rows, cols]
                    };
                    (dtype, shape)
                }
                Payloads::Fixed(bytes) => (Dtype::F32, vec![(bytes / 4) as u64]),
            };
            let width = dtype
                .element_size()
                .expect("the fixtures' dtypes are whole bytes");
            let len = shape.iter().product::<u64>() as usize * width;
            Spec {
                name,
                dtype,
                shape,
                len,
            }
        })
        .collect()
}

/// Builds both files of `count` tensors.
pub fn directory(count: usize, names: Names, order: Order, payloads: Payloads) -> DirectoryFixture {
    let mut specs = specs(count, names, payloads);
    if order == Order::Sorted {
        specs.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    }
    let longest = specs.iter().map(|s| s.len).max().unwrap_or(0);
    // One source buffer that every payload borrows a prefix of.
    let source: Vec<u8> = (0..longest).map(|i| (i % 251) as u8 & 0x3f).collect();

    let kiln_specs: Vec<TensorSpec<'_>> = specs
        .iter()
        .map(|s| TensorSpec::new(s.dtype, &s.shape, &source[..s.len]).named(&s.name))
        .collect();
    let kiln = kiln_nostd::to_vec(&Tensors(&kiln_specs)).expect("the fixture encodes");

    let st_dtype = |d: Dtype| kiln_convert::safetensors_dtype(d).expect("a dtype safetensors has");
    let views = specs.iter().map(|s| {
        let shape = s.shape.iter().map(|&d| d as usize).collect();
        let view = StView::new(st_dtype(s.dtype), shape, &source[..s.len]).expect("valid view");
        (s.name.clone(), view)
    });
    let safetensors = safetensors::serialize(views, None).expect("safetensors serializes");

    let mut lookups: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    Rng::new(7).shuffle(&mut lookups);
    let heap: usize = specs.iter().map(|s| s.name.len()).sum();
    DirectoryFixture {
        kiln,
        safetensors,
        lookups,
        directory_bytes: 64 + 128 * count + heap,
        order,
    }
}

/// The telemetry record with owned types on every side:
/// `struct{id:i64,name:str,readings:list<f32>,tags:dict<str,str>,flags:opt<u32>,}`.
#[derive(Frozen, Serialize, Deserialize, Debug, PartialEq, Clone)]
pub struct Telemetry {
    /// Record id.
    pub id: i64,
    /// Sensor name.
    pub name: String,
    /// 1,024 readings.
    pub readings: Vec<f32>,
    /// Four tags.
    pub tags: BTreeMap<String, String>,
    /// Optional flags.
    pub flags: Option<u32>,
}

/// The same record with the lightest types Kiln offers: everything
/// borrowed from the message, the readings in place.
#[derive(Frozen, Debug)]
pub struct TelemetryKilnRef<'a> {
    /// Record id.
    pub id: i64,
    /// Sensor name.
    pub name: &'a str,
    /// The readings' bytes in the message.
    pub readings: PodList<'a, f32>,
    /// Tags, keys and values borrowed.
    pub tags: heapless::LinearMap<&'a str, &'a str, 4>,
    /// Optional flags.
    pub flags: Option<u32>,
}

/// The same record with the lightest types serde offers postcard and
/// bincode: strings borrowed, the readings copied into a fixed-capacity
/// vector (serde has no borrowed `f32` slice), no allocator.
#[derive(Serialize, Deserialize, Debug)]
pub struct TelemetrySerdeRef<'a> {
    /// Record id.
    pub id: i64,
    /// Sensor name.
    #[serde(borrow)]
    pub name: &'a str,
    /// 1,024 readings.
    pub readings: heapless::Vec<f32, 1024>,
    /// Tags, keys and values borrowed.
    #[serde(borrow)]
    pub tags: heapless::LinearMap<&'a str, &'a str, 4>,
    /// Optional flags.
    pub flags: Option<u32>,
}

/// The owned record every side encodes.
pub fn telemetry() -> Telemetry {
    let mut rng = Rng::new(11);
    let readings = (0..1024)
        .map(|_| (rng.next_u64() % 100_000) as f32 / 7.0)
        .collect();
    let tags = [
        ("building", "north-2"),
        ("floor", "3"),
        ("room", "lab-317"),
        ("unit", "celsius"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    Telemetry {
        id: -1_234_567_890_123,
        name: "thermo-probe-17".to_string(),
        readings,
        tags,
        flags: Some(0x8000_0101),
    }
}

/// A record of 12 scalar fields.
#[derive(Frozen, Serialize, Deserialize, Debug, PartialEq, Clone, Copy)]
pub struct Scalars {
    /// A byte.
    pub a: u8,
    /// A signed byte.
    pub b: i8,
    /// u16.
    pub c: u16,
    /// i16.
    pub d: i16,
    /// u32.
    pub e: u32,
    /// i32.
    pub f: i32,
    /// u64.
    pub g: u64,
    /// i64.
    pub h: i64,
    /// f32.
    pub i: f32,
    /// f64.
    pub j: f64,
    /// bool.
    pub k: bool,
    /// Another u32.
    pub l: u32,
}

/// The scalar record every side encodes: mid-sized values (postcard's
/// varints take 1 to 10 bytes, Kiln's fixed widths always the same).
pub const SCALARS: Scalars = Scalars {
    a: 200,
    b: -5,
    c: 40_000,
    d: -12_345,
    e: 3_000_000_000,
    f: -70_000,
    g: 1 << 40,
    h: -(1 << 33),
    i: 1.5,
    j: -2.25,
    k: true,
    l: 77,
};

/// The names of the first `count` tensors of a 48-layer, 128-expert
/// mixture-of-experts model in model order
/// (`model.layers.17.mlp.experts.42.up_proj.weight`); the full model has
/// 18,867.
pub fn moe_names(count: usize) -> Vec<String> {
    let mut names = vec!["model.embed_tokens.weight".to_string()];
    'layers: for layer in 0.. {
        let at = |rest: &str| format!("model.layers.{layer}.{rest}");
        let mut layer_names = vec![at("input_layernorm.weight")];
        for proj in ["q_proj", "k_proj", "v_proj", "o_proj", "q_norm", "k_norm"] {
            layer_names.push(at(&format!("self_attn.{proj}.weight")));
        }
        layer_names.push(at("mlp.gate.weight"));
        for expert in 0..128 {
            for proj in ["gate_proj", "up_proj", "down_proj"] {
                layer_names.push(at(&format!("mlp.experts.{expert}.{proj}.weight")));
            }
        }
        layer_names.push(at("post_attention_layernorm.weight"));
        for name in layer_names {
            if names.len() + 2 >= count {
                break 'layers;
            }
            names.push(name);
        }
    }
    names.push("model.norm.weight".into());
    names.push("lm_head.weight".into());
    names.truncate(count);
    names
}

/// A converted model (what `kiln convert` writes) and the safetensors
/// file of the same tensors.
pub struct ModelFixture {
    /// The converted Kiln file.
    pub kiln: Vec<u8>,
    /// `safetensors::serialize` of the same tensors.
    pub safetensors: Vec<u8>,
    /// Every name, in one shuffled order that both sides look up.
    pub lookups: Vec<String>,
}

/// A GGUF file of `names` in that order, each an f32 tensor of 4
/// elements: what a GGUF model in model order converts from.
fn gguf_of(names: &[String], payload: &[u8]) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend((names.len() as u64).to_le_bytes());
    out.extend(0u64.to_le_bytes());
    for (i, name) in names.iter().enumerate() {
        out.extend((name.len() as u64).to_le_bytes());
        out.extend(name.as_bytes());
        out.extend(1u32.to_le_bytes());
        out.extend(4u64.to_le_bytes());
        out.extend(0u32.to_le_bytes()); // F32
        out.extend((i as u64 * 32).to_le_bytes());
    }
    out.resize(out.len().next_multiple_of(32), 0);
    for _ in names {
        out.extend(payload);
        out.resize(out.len().next_multiple_of(32), 0);
    }
    out
}

/// `count` tensors of the mixture-of-experts model, f32 of 4 elements
/// each, converted to Kiln: from a safetensors file (names in byte order)
/// for [`Order::Sorted`], from a GGUF file (model order) for
/// [`Order::Model`].
pub fn model(count: usize, order: Order) -> ModelFixture {
    let names = moe_names(count);
    let payload: Vec<u8> = [1.0f32, -2.0, 0.5, 8.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let views = names.iter().map(|n| {
        (
            n.as_str(),
            StView::new(safetensors::Dtype::F32, vec![4], &payload).expect("view"),
        )
    });
    let safetensors = safetensors::serialize(views, None).expect("safetensors serializes");
    let mut kiln = Vec::new();
    match order {
        Order::Sorted => kiln_convert::safetensors_to_kiln(&safetensors, &mut kiln),
        Order::Model => kiln_convert::gguf_to_kiln(&gguf_of(&names, &payload), &mut kiln),
    }
    .expect("converts");
    let mut lookups = names;
    Rng::new(0x5eed).shuffle(&mut lookups);
    ModelFixture {
        kiln,
        safetensors,
        lookups,
    }
}

/// The model type of the firmware's update (tests/firmware/src/bin/update.rs).
pub const UPDATE_MODEL_TYPE: &str = "struct{version:u32,layer:tensors,note:str,}";

#[derive(Frozen)]
struct UpdateModel<'a> {
    version: u32,
    layer: kiln_nostd::Directory<'a>,
    note: &'a str,
}

/// A model of the firmware update's type: a `rows` x 128 f32 weight and a
/// bias (96 rows: about 50 KB, the firmware's model).
pub fn update_model(rows: usize) -> Vec<u8> {
    let weights: Vec<f32> = (0..rows * 128)
        .map(|i| (i % 97) as f32 * 0.25 - 12.0)
        .collect();
    let bias: Vec<f32> = (0..rows).map(|r| r as f32 * 0.5).collect();
    let (shape, bias_shape) = ([rows as u64, 128], [rows as u64]);
    let mut block = vec![0u8; weights.len() * 4 + bias.len() * 4 + 4096];
    let layer = kiln_nostd::Directory::build(
        &[
            TensorSpec::from_host(&bias_shape, &bias).named("bias"),
            TensorSpec::from_host(&shape, &weights).named("weight"),
        ],
        &mut block,
    )
    .expect("the block fits");
    kiln_nostd::to_vec(&UpdateModel {
        version: 3,
        layer,
        note: "kiln model update",
    })
    .expect("encodes")
}
