//! Sets of files: kiln-convert's set rules applied to the models the
//! inspector read of each file (their heads), so the page never decides
//! in JavaScript whether files make one model.
//!
//! ```js
//! const set = new FileSet("model.safetensors.index.json");
//! set.add(shard1); set.add(shard2);             // each a KilnFile from openFile
//! const model = set.finish(indexBytes);         // a GGUF split set takes no index
//! setPlace(file);                               // a file opened alone: its place in a set, or null
//! ```
//!
//! A set that breaks a rule throws a `KilnError` whose message names the
//! tensor and the files (or the split key) that disagree: the words
//! `kiln inspect` and `kiln convert` use for the same set.

use js_sys::{Object, Reflect};
use kiln_convert::{gguf_split_names, SplitFile};
use kiln_nostd::inspect::{Format, Inspection, ReadStats};
use kiln_wasm::KilnFile;
use wasm_bindgen::prelude::*;

use crate::convert_error;

#[wasm_bindgen(typescript_custom_section)]
const SET_TYPES: &'static str = r#"
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

/// The files of a set, added one by one (`add`), then joined and checked
/// (`finish`) into one model.
#[wasm_bindgen]
pub struct FileSet {
    name: String,
    parts: Vec<Inspection>,
    stats: ReadStats,
}

#[wasm_bindgen]
impl FileSet {
    /// A set that the model calls `name` (its index, or its first file).
    #[wasm_bindgen(constructor)]
    pub fn new(name: &str) -> FileSet {
        FileSet {
            name: name.into(),
            parts: Vec::new(),
            stats: ReadStats::default(),
        }
    }

    /// The next file of the set, in set order (its model is copied; the
    /// file stays open for its own reads).
    pub fn add(&mut self, file: &KilnFile) {
        self.parts.push(file.model().clone());
    }

    /// The set as one model (`kiln_convert::inspect::join`): a safetensors
    /// shard set is checked against `index`, the bytes of its
    /// `model.safetensors.index.json`; a GGUF split set by its split
    /// keys. Each tensor's `file` is its file's name.
    pub fn finish(self, index: Option<Vec<u8>>) -> Result<KilnFile, JsValue> {
        let model = kiln_convert::inspect::join(&self.name, self.parts, index.as_deref())
            .map_err(|e| convert_error(&e))?;
        Ok(KilnFile::from_parts(model, self.stats, None))
    }
}

/// The shard files a `model.safetensors.index.json` names, each once,
/// sorted (`kiln_convert::safetensors_index_files`): what the page asks
/// for when only the index was given.
#[wasm_bindgen(js_name = safetensorsIndexFiles)]
pub fn safetensors_index_files(index: &[u8]) -> Result<Vec<String>, JsValue> {
    kiln_convert::safetensors_index_files(index).map_err(|e| convert_error(&e))
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

/// A file opened alone, named `file`, with its model: its place in a set
/// of files, or `None` when it is a whole model.
///
/// A GGUF file says so itself: `split.count` above 1 (its `split.no` is
/// its place from 0, `split.tensors.count` the set's tensors), read by
/// [`SplitFile::of_inspection`], the reading `check_gguf_split` applies;
/// the name gives the other files' names only when it is
/// `MODEL-0000N-of-0000M.gguf`. A safetensors shard has no such keys:
/// only a name `MODEL-0000N-of-0000M.safetensors` (with M above 1), as
/// `MODEL.safetensors.index.json` names its shards, says it is one.
pub fn set_place(file: &str, model: &Inspection) -> Option<SetPlace> {
    match model.format {
        Format::Gguf => {
            let split = SplitFile::of_inspection(file, model);
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
        Format::Safetensors => {
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
        Format::Kiln => None,
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

/// A file opened alone, with its name: its place in a set (`SetPlace`),
/// or `null` when it is a whole model. See [`set_place`].
#[wasm_bindgen(js_name = setPlace, unchecked_return_type = "SetPlace | null")]
pub fn set_place_js(file: &KilnFile, name: &str) -> JsValue {
    let Some(place) = set_place(name, file.model()) else {
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
            .collect::<js_sys::Array>()
            .into(),
    );
    o.into()
}
