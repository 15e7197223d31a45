//! Shard sets: kiln-convert's set rules applied to what the inspector read
//! of each file (its head), so the page never decides in JavaScript
//! whether files make one model.
//!
//! ```js
//! checkSafetensorsIndex(indexBytes, [{ file: "model-00001-of-00003.safetensors", tensors: [...names] }, ...]);
//! checkGgufSplit([{ file: "m-00001-of-00003.gguf", metadata: file.metadata(), tensors: [...names] }, ...]);
//! ```
//!
//! Each throws a `KilnError` whose message names the tensor and the files
//! (or the split key) that disagree: the words `kiln inspect` and
//! `kiln convert` use for the same set.

use js_sys::{Array, Reflect};
use kiln_convert::SplitFile;
use wasm_bindgen::prelude::*;

use crate::convert_error;

#[wasm_bindgen(typescript_custom_section)]
const SET_TYPES: &'static str = r#"
/** One shard of a safetensors set: its file name and its tensors' names. */
export interface SafetensorsShard { file: string; tensors: string[] }
/** One file of a GGUF split set: its name, its metadata pairs (`KilnFile.metadata()`) and its tensors' names. */
export interface GgufSplitPart { file: string; metadata: MetadataPair[]; tensors: string[] }
"#;

fn field(item: &JsValue, key: &str) -> JsValue {
    Reflect::get(item, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn text(item: &JsValue, key: &str) -> String {
    field(item, key).as_string().unwrap_or_default()
}

fn names(item: &JsValue) -> Vec<String> {
    Array::from(&field(item, "tensors"))
        .iter()
        .map(|n| n.as_string().unwrap_or_default())
        .collect()
}

/// Checks a safetensors shard set: `index` is the bytes of its
/// `model.safetensors.index.json`, `shards` each shard's file name and
/// tensor names. The index's `weight_map` must put every tensor in the
/// shard that holds it, and name no tensor a shard lacks
/// (`kiln_convert::check_safetensors_index`). Throws a `KilnError`
/// (`code: "safetensors"`) naming the tensor and the files otherwise.
#[wasm_bindgen(js_name = checkSafetensorsIndex)]
pub fn check_safetensors_index(
    index: &[u8],
    #[wasm_bindgen(unchecked_param_type = "SafetensorsShard[]")] shards: &Array,
) -> Result<(), JsValue> {
    let owned: Vec<(String, Vec<String>)> = shards
        .iter()
        .map(|s| (text(&s, "file"), names(&s)))
        .collect();
    let borrowed: Vec<(&str, Vec<&str>)> = owned
        .iter()
        .map(|(f, n)| (f.as_str(), n.iter().map(String::as_str).collect()))
        .collect();
    let shards: Vec<(&str, &[&str])> = borrowed.iter().map(|(f, n)| (*f, n.as_slice())).collect();
    kiln_convert::check_safetensors_index(index, &shards).map_err(|e| convert_error(&e))
}

/// The shard files a `model.safetensors.index.json` names, each once,
/// sorted (`kiln_convert::safetensors_index_files`): what the page asks
/// for when only the index was given.
#[wasm_bindgen(js_name = safetensorsIndexFiles)]
pub fn safetensors_index_files(index: &[u8]) -> Result<Vec<String>, JsValue> {
    kiln_convert::safetensors_index_files(index).map_err(|e| convert_error(&e))
}

/// Checks a GGUF split set, `files` in set order: `split.count` the
/// number of files, `split.no` each file's place, `split.tensors.count`
/// the tensors of all, no tensor name in two files
/// (`kiln_convert::check_gguf_split`, read from each file's metadata
/// pairs). Throws a `KilnError` (`code: "Unsupported"`) saying which file
/// and key disagree otherwise.
#[wasm_bindgen(js_name = checkGgufSplit)]
pub fn check_gguf_split(
    #[wasm_bindgen(unchecked_param_type = "GgufSplitPart[]")] files: &Array,
) -> Result<(), JsValue> {
    type Part = (String, Vec<(String, String, String)>, Vec<String>);
    let owned: Vec<Part> = files
        .iter()
        .map(|f| {
            let pairs = Array::from(&field(&f, "metadata"))
                .iter()
                .map(|p| (text(&p, "key"), text(&p, "type"), text(&p, "value")))
                .collect();
            (text(&f, "file"), pairs, names(&f))
        })
        .collect();
    let split: Vec<SplitFile<'_>> = owned
        .iter()
        .map(|(file, pairs, tensors)| {
            SplitFile::of_pairs(
                file,
                pairs
                    .iter()
                    .map(|(k, t, v)| (k.as_str(), t.as_str(), v.as_str())),
                tensors.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    kiln_convert::check_gguf_split(&split).map_err(|e| convert_error(&e))
}
