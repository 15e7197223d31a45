//! Shard sets: kiln-convert's set rules applied to what the inspector read
//! of each file (its head), so the page never decides in JavaScript
//! whether files make one model.
//!
//! ```js
//! checkSafetensorsIndex(indexBytes, [{ file: "model-00001-of-00003.safetensors", tensors: [...names] }, ...]);
//! checkGgufSplit([{ file: "m-00001-of-00003.gguf", metadata: file.metadata(), tensors: [...names] }, ...]);
//! setPlace("m-00002-of-00003.gguf", "gguf", file.metadata()); // a file opened alone: its place in a set, or null
//! ```
//!
//! Each throws a `KilnError` whose message names the tensor and the files
//! (or the split key) that disagree: the words `kiln inspect` and
//! `kiln convert` use for the same set.

use js_sys::{Array, Object, Reflect};
use kiln_convert::{gguf_split_names, SplitFile};
use wasm_bindgen::prelude::*;

use crate::convert_error;

#[wasm_bindgen(typescript_custom_section)]
const SET_TYPES: &'static str = r#"
/** One shard of a safetensors set: its file name and its tensors' names. */
export interface SafetensorsShard { file: string; tensors: string[] }
/** One file of a GGUF split set: its name, its metadata pairs (`KilnFile.metadata()`) and its tensors' names. */
export interface GgufSplitPart { file: string; metadata: MetadataPair[]; tensors: string[] }
/** Where a file opened alone sits in a set (`setPlace`). */
export interface SetPlace {
  /** "split keys" (a GGUF file's split.no and split.count) or "name" (a safetensors shard's name). */
  from: "split keys" | "name";
  /** The file's place, from 1. */
  no: number;
  /** The files of the set. */
  count: number;
  /** The tensors of the whole set (GGUF's split.tensors.count), or null. */
  tensorsCount: number | null;
  /** The set's file names when this file's name follows the set's pattern (the index last for safetensors), else []. */
  files: string[];
}
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

/// Where a file opened alone sits in a set of files: what [`set_place`]
/// finds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetPlace {
    /// `"split keys"` or `"name"`: what says so.
    pub from: &'static str,
    /// The file's place, from 1.
    pub no: u64,
    /// How many files the set has.
    pub count: u64,
    /// The tensors of the whole set, when the file says
    /// (`split.tensors.count`).
    pub tensors_count: Option<u64>,
    /// The set's file names, when `file` is named as the set's files are
    /// (for safetensors, the shards and then the index).
    pub files: Vec<String>,
}

/// A file opened alone, named `file`, of `format` (`"gguf"` or
/// `"safetensors"`) with its metadata pairs `(key, type, value)`: its
/// place in a set of files, or `None` when it is a whole model.
///
/// A GGUF file says so itself: `split.count` above 1 (its `split.no` is
/// its place from 0, `split.tensors.count` the set's tensors), read by
/// [`SplitFile::of_pairs`], the reading `check_gguf_split` applies; the
/// name gives the other files' names only when it is `MODEL-0000N-of-0000M.gguf`.
/// A safetensors shard has no such keys: only a name
/// `MODEL-0000N-of-0000M.safetensors` (with M above 1), as
/// `MODEL.safetensors.index.json` names its shards, says it is one.
pub fn set_place<'a>(
    file: &'a str,
    format: &str,
    pairs: impl Iterator<Item = (&'a str, &'a str, &'a str)> + Clone,
) -> Option<SetPlace> {
    match format {
        "gguf" => {
            let split = SplitFile::of_pairs(file, pairs, Vec::new());
            let count = u64::try_from(split.split_count?).ok().filter(|&c| c > 1)?;
            let no = u64::try_from(split.split_no?).ok().filter(|&n| n < count)? + 1;
            let files = numbered(file, ".gguf")
                .filter(|&(_, n, c)| n == no && c == count)
                .and_then(|(prefix, _, c)| {
                    gguf_split_names(&format!("{prefix}-00001-of-{c:05}.gguf"))
                })
                .unwrap_or_default();
            Some(SetPlace {
                from: "split keys",
                no,
                count,
                tensors_count: split
                    .split_tensors_count
                    .and_then(|n| u64::try_from(n).ok()),
                files,
            })
        }
        "safetensors" => {
            let (prefix, no, count) = numbered(file, ".safetensors")?;
            if count < 2 || no == 0 || no > count {
                return None;
            }
            let mut files: Vec<String> = (1..=count)
                .map(|i| format!("{prefix}-{i:05}-of-{count:05}.safetensors"))
                .collect();
            files.push(format!("{prefix}.safetensors.index.json"));
            Some(SetPlace {
                from: "name",
                no,
                count,
                tensors_count: None,
                files,
            })
        }
        _ => None,
    }
}

/// `PREFIX-NNNNN-of-MMMMM{suffix}` (five digits each, as the
/// safetensors shard writers and gguf-split name a set's files):
/// `(PREFIX, N, M)`.
fn numbered<'a>(file: &'a str, suffix: &str) -> Option<(&'a str, u64, u64)> {
    let stem = file.strip_suffix(suffix)?;
    let (head, count) = stem.rsplit_once("-of-")?;
    let (prefix, no) = head.rsplit_once('-')?;
    let digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    if prefix.is_empty() || !digits(no) || !digits(count) {
        return None;
    }
    Some((prefix, no.parse().ok()?, count.parse().ok()?))
}

/// A file opened alone, named `file`, of `format` (`"gguf"` or
/// `"safetensors"`), with its metadata pairs (`KilnFile.metadata()`):
/// its place in a set (`SetPlace`), or `null` when it is a whole model.
/// See [`set_place`].
#[wasm_bindgen(js_name = setPlace, unchecked_return_type = "SetPlace | null")]
pub fn set_place_js(
    file: &str,
    format: &str,
    #[wasm_bindgen(unchecked_param_type = "MetadataPair[]")] metadata: &Array,
) -> JsValue {
    let pairs: Vec<(String, String, String)> = metadata
        .iter()
        .map(|p| (text(&p, "key"), text(&p, "type"), text(&p, "value")))
        .collect();
    let Some(place) = set_place(
        file,
        format,
        pairs
            .iter()
            .map(|(k, t, v)| (k.as_str(), t.as_str(), v.as_str())),
    ) else {
        return JsValue::NULL;
    };
    let o = Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = Reflect::set(&o, &JsValue::from_str(k), &v);
    };
    set("from", JsValue::from_str(place.from));
    set("no", JsValue::from_f64(place.no as f64));
    set("count", JsValue::from_f64(place.count as f64));
    set(
        "tensorsCount",
        place
            .tensors_count
            .map_or(JsValue::NULL, |n| JsValue::from_f64(n as f64)),
    );
    set(
        "files",
        place
            .files
            .iter()
            .map(|f| JsValue::from_str(f))
            .collect::<Array>()
            .into(),
    );
    o.into()
}
