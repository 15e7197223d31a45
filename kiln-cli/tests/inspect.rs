//! `kiln inspect`: every `tensors` field found with its path, quantization
//! links by name, and the same rows for a GGUF or safetensors file and the
//! `.kiln` converted from it (`--json`, whose shape is spec/json.md,
//! section 8).

use serde_json::Value;

mod common;
use common::{kiln, Out, ROOT};

fn inspect_json(args: &[&str], input: &[u8]) -> Value {
    let mut all = vec!["inspect", "--json"];
    all.extend(args);
    let Out {
        status,
        stdout: out,
        stderr: err,
    } = kiln(&all, input);
    assert_eq!(status, 0, "{err}");
    serde_json::from_slice(&out).unwrap()
}

const LAYERS: &str = "struct{id:u32,layers:list<struct{name:str,w:tensors,}>,extra:opt<tensors>,}";

#[test]
fn every_directory_with_its_path() {
    let json = br#"{"id": 5, "layers": [
        {"name": "a", "w": [{"name":"x","dtype":"e2m1","shape":[32],"layout":null,"block_size":0,
                             "quant":{"axis":0,"group_size":32,"scales":1},"hex":"00000000000000000000000000000000"},
                            {"name":"x.scale","dtype":"e8m0","shape":[1],"layout":null,"block_size":0,"quant":null,"hex":"7f"}]},
        {"name": "b", "w": []}],
        "extra": [{"name":null,"dtype":"i64","shape":[],"layout":null,"block_size":0,"quant":null,"hex":"ffffffffffffffff"}]}"#;
    let Out {
        status,
        stdout: bytes,
        stderr: err,
    } = kiln(&["encode", "--framed", "--type", LAYERS], json);
    assert_eq!(status, 0, "{err}");
    let report = inspect_json(&["--type", LAYERS, "-"], &bytes);
    let dirs = report["directories"].as_array().unwrap();
    let paths: Vec<&str> = dirs.iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["layers[0].w", "layers[1].w", "extra"]);
    assert_eq!(dirs[0]["tensors"], 2);
    let tensors = report["tensors"].as_array().unwrap();
    let x = &tensors[0];
    assert_eq!(
        (x["directory"].clone(), x["path"].clone()),
        (0.into(), "layers[0].w".into())
    );
    assert_eq!(x["quant"]["scales_name"], "x.scale");
    assert_eq!(x["quant"]["scales"], 1);
    assert_eq!(x["elements"], 32);
    // Offsets are absolute: the payload is where the file has it.
    let offset = x["offset"].as_u64().unwrap() as usize;
    let scale = &tensors[1];
    assert_eq!(bytes[scale["offset"].as_u64().unwrap() as usize], 0x7f);
    assert!(offset > 16);
    let metadata: Vec<(&str, &Value)> = report["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["key"].as_str().unwrap(), &m["value"]))
        .collect();
    assert_eq!(metadata[0], ("id", &Value::from(5)));
    assert_eq!(metadata[1], ("layers[0].name", &Value::from("a")));
    assert_eq!(report["kiln"]["framed"], true);
    // The text table names the link too.
    let Out { stdout: text, .. } = kiln(&["inspect", "--type", LAYERS, "-"], &bytes);
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("directory at layers[0].w: 2 tensors"),
        "{text}"
    );
    assert!(
        text.contains("scales x.scale (axis 0, groups of 32)"),
        "{text}"
    );
}

#[test]
fn a_model_file_and_its_kiln_show_the_same_tensors() {
    let dir = std::env::temp_dir().join(format!("kiln-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, format) in [("tiny.gguf", "gguf"), ("tiny.safetensors", "safetensors")] {
        let source = format!("{ROOT}/samples/{name}");
        let converted = dir
            .join(format!("{name}.kiln"))
            .to_string_lossy()
            .into_owned();
        assert_eq!(kiln(&["convert", "-q", &source, &converted], b"").status, 0);
        let a = inspect_json(&[&source], b"");
        let b = inspect_json(&[&converted], b"");
        assert_eq!(a["format"], format);
        assert_eq!(b["kiln"]["converted_from"], format);
        // The same rows in the same order: the source file's.
        let rows = |r: &Value| -> Vec<Value> {
            r["tensors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    serde_json::json!([
                        t["name"],
                        t["dtype"],
                        t["layout"],
                        t["block_size"],
                        t["shape"],
                        t["elements"],
                        t["bytes"],
                        t["in_place"]
                    ])
                })
                .collect()
        };
        assert_eq!(rows(&a), rows(&b), "{name}");
        assert_eq!(a["metadata"], b["metadata"], "{name}");
        assert_eq!(a["gguf"], b["gguf"], "{name}");
    }
    let gguf = inspect_json(&[&format!("{ROOT}/samples/tiny.gguf")], b"");
    let q = &gguf["tensors"][1];
    assert_eq!(
        (
            q["dtype"].clone(),
            q["dtype_code"].clone(),
            q["layout"].clone(),
            q["block_size"].clone()
        ),
        ("Q8_0".into(), 4104.into(), "Q8_0".into(), 34.into())
    );
    assert_eq!(q["shape"], serde_json::json!([2, 32]));
    assert_eq!(gguf["metadata"][3]["type"], "list<str>");
    assert_eq!(
        gguf["metadata"][3]["value"],
        serde_json::json!(["<s>", "</s>", "é"])
    );
    let _ = std::fs::remove_dir_all(&dir);
}
