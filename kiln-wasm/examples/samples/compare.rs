//! Two small models that differ in known ways, for the inspector's
//! comparison (www/samples/compare/): `a.kiln`, `b.kiln`, model A again as
//! a set of three files (`a-0000N-of-00003.kiln`), and `compare.json`
//! with every difference the comparison must report, computed here in
//! f64 from the values written (the definitions of docs/browser.md).

use std::fs;
use std::path::Path;

use kiln_nostd::{bf16, f16, to_vec, Dtype, TensorSpec, Tensors};
use serde_json::{json, Map, Value};

use super::{keep, le, wave};

/// One tensor of a model: name, dtype, shape, bytes, and its values as
/// numbers (for the expected differences; None for integers).
struct T {
    name: &'static str,
    dtype: Dtype,
    shape: Vec<u64>,
    bytes: Vec<u8>,
    values: Option<Vec<f64>>,
}

fn f32s(name: &'static str, shape: &[u64], v: &[f32]) -> T {
    T {
        name,
        dtype: Dtype::F32,
        shape: shape.to_vec(),
        bytes: le(v, f32::to_le_bytes),
        values: Some(v.iter().map(|&x| f64::from(x)).collect()),
    }
}

fn f16s(name: &'static str, shape: &[u64], v: &[f32]) -> T {
    let h: Vec<f16> = v.iter().map(|&x| f16::from_f32(x)).collect();
    T {
        name,
        dtype: Dtype::F16,
        shape: shape.to_vec(),
        bytes: le(&h, |x| x.to_bits().to_le_bytes()),
        values: Some(h.iter().map(|x| f64::from(x.to_f32())).collect()),
    }
}

fn ints(name: &'static str, dtype: Dtype, v: &[i64]) -> T {
    let bytes = match dtype {
        Dtype::I32 => le(v, |x| (x as i32).to_le_bytes()),
        _ => le(v, i64::to_le_bytes),
    };
    T {
        name,
        dtype,
        shape: vec![v.len() as u64],
        bytes,
        values: None,
    }
}

fn write(path: &Path, tensors: &[&T]) {
    let specs: Vec<TensorSpec<'_>> = tensors
        .iter()
        .map(|t| {
            let shape: &'static [u64] = Box::leak(t.shape.clone().into_boxed_slice());
            TensorSpec::new(t.dtype, shape, keep(t.bytes.clone())).named(t.name)
        })
        .collect();
    fs::write(path, to_vec(&Tensors(&specs)).expect("encodes")).expect("write");
}

/// The expected comparison of two float tensors of the same shape, by the
/// definitions: equal when a == b or both NaN; one NaN is a mismatch
/// outside the maxima; |a-b| and |a-b|/max(|a|,|b|), first occurrence.
fn expect_float(a: &[f64], b: &[f64]) -> Value {
    let (mut differing, mut nan) = (0u64, 0u64);
    let mut max_abs: Option<(f64, usize)> = None;
    let mut max_rel: Option<(f64, usize)> = None;
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        if x == y || (x.is_nan() && y.is_nan()) {
            continue;
        }
        differing += 1;
        if x.is_nan() || y.is_nan() {
            nan += 1;
            continue;
        }
        let abs = (x - y).abs();
        let rel = abs / x.abs().max(y.abs());
        if max_abs.is_none_or(|(m, _)| abs > m) {
            max_abs = Some((abs, i));
        }
        if max_rel.is_none_or(|(m, _)| rel > m) {
            max_rel = Some((rel, i));
        }
    }
    let extreme = |e: Option<(f64, usize)>| {
        e.map_or(
            Value::Null,
            |(value, at)| json!({ "value": value, "at": at, "a": a[at], "b": b[at] }),
        )
    };
    json!({
        "mode": "float", "compared": a.len(), "differing": differing, "nanMismatch": nan,
        "maxAbs": extreme(max_abs), "maxRel": extreme(max_rel),
    })
}

pub fn write_all(out: &Path) {
    let out = out.join("compare");
    fs::create_dir_all(&out).expect("www/samples/compare");

    let cast: Vec<f32> = wave(256, 16, 1.7);
    let rounded: Vec<bf16> = cast.iter().map(|&x| bf16::from_f32(x)).collect();
    let tweaked = wave(1024, 32, 2.0);
    let mut tweaked_b = tweaked.clone();
    tweaked_b[3] += 0.25;
    tweaked_b[100] = -tweaked[100];
    tweaked_b[500] += 1e-3;
    tweaked_b[900] = f32::NAN;
    assert!(tweaked[100] != 0.0 && !tweaked[900].is_nan());
    let mut zeros_b = vec![0f32; 8];
    zeros_b[2] = -0.0;
    zeros_b[5] = -0.0;
    let counts: Vec<i64> = (0..10).collect();
    let mut counts_b = counts.clone();
    counts_b[4] = 40;
    counts_b[7] = -7;

    let a = [
        f32s("only_a.bias", &[4], &[1.0, 2.0, 3.0, 4.0]),
        f32s("cast.weight", &[16, 16], &cast),
        f16s("reshaped.weight", &[4, 6], &wave(24, 4, 1.0)),
        f16s("same.weight", &[16, 16], &wave(256, 16, 3.0)),
        f32s("tweaked.weight", &[32, 32], &tweaked),
        f32s("signed.zero", &[8], &[0.0; 8]),
        ints("counts", Dtype::I32, &counts),
        ints("retyped.ids", Dtype::I32, &[5, 6, 7, 8, 9, 10]),
    ];
    let b = [
        T {
            name: "cast.weight",
            dtype: Dtype::Bf16,
            shape: vec![16, 16],
            bytes: le(&rounded, |x| x.to_bits().to_le_bytes()),
            values: Some(rounded.iter().map(|x| f64::from(x.to_f32())).collect()),
        },
        f16s("reshaped.weight", &[6, 4], &wave(24, 4, 1.0)),
        f16s("same.weight", &[16, 16], &wave(256, 16, 3.0)),
        f32s("tweaked.weight", &[32, 32], &tweaked_b),
        f32s("signed.zero", &[8], &zeros_b),
        ints("counts", Dtype::I32, &counts_b),
        ints("retyped.ids", Dtype::I64, &[5, 6, 7, 8, 9, 10]),
        f16s("only_b.bias", &[3], &[0.5, 0.25, 0.125]),
    ];
    write(&out.join("a.kiln"), &a.iter().collect::<Vec<_>>());
    write(&out.join("b.kiln"), &b.iter().collect::<Vec<_>>());
    // Model A as a set of three files.
    let set = [&a[0..3], &a[3..5], &a[5..]];
    let mut set_files = Vec::new();
    for (i, part) in set.iter().enumerate() {
        let name = format!("a-{:05}-of-{:05}.kiln", i + 1, set.len());
        write(&out.join(&name), &part.iter().collect::<Vec<_>>());
        let names: Vec<&str> = part.iter().map(|t| t.name).collect();
        set_files.push(json!({ "file": name, "tensors": names }));
    }

    let mut expect = Map::new();
    for t in &a {
        let Some(u) = b.iter().find(|u| u.name == t.name) else {
            expect.insert(t.name.into(), json!({ "status": "only-a" }));
            continue;
        };
        let mut e = match (&t.values, &u.values) {
            _ if t.shape != u.shape => json!({ "status": "shape" }),
            (Some(x), Some(y)) => expect_float(x, y),
            _ if t.dtype == u.dtype => {
                let w = t.bytes.len() / t.shape.iter().product::<u64>() as usize;
                let differing = t
                    .bytes
                    .chunks(w)
                    .zip(u.bytes.chunks(w))
                    .filter(|(x, y)| x != y)
                    .count();
                json!({ "mode": "bits", "differing": differing, "compared": t.bytes.len() / w })
            }
            _ => json!({ "mode": "none" }),
        };
        if t.shape == u.shape {
            let identical = t.dtype == u.dtype && t.bytes == u.bytes;
            let o = e.as_object_mut().expect("object");
            o.insert("bytesIdentical".into(), json!(identical));
            let status = if t.dtype != u.dtype {
                "dtype"
            } else if identical {
                "identical"
            } else if o["differing"] == json!(0) {
                "equal"
            } else {
                "differs"
            };
            o.insert("status".into(), json!(status));
        }
        expect.insert(t.name.into(), e);
    }
    for u in &b {
        if !a.iter().any(|t| t.name == u.name) {
            expect.insert(u.name.into(), json!({ "status": "only-b" }));
        }
    }
    let manifest = json!({
        "a": "a.kiln", "b": "b.kiln", "set": set_files,
        "description": "Model A and model B differ in known ways: a tensor only in each, a dtype change (f32 to its bf16 rounding), a shape change, a byte-identical tensor, four changed elements of a float tensor (one to NaN), ±0, two changed integers, an i32 to i64 change.",
        "expect": expect,
    });
    let text = serde_json::to_string_pretty(&manifest).expect("json") + "\n";
    fs::write(out.join("compare.json"), text).expect("write");
}
