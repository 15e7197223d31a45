//! The model's one JSON form (`spec/json.md`, section 8): what `kiln
//! inspect --json` prints and the browser module's `json()` returns, the
//! same text for the same file.

use alloc::string::String;
use core::fmt::Write;

use super::{InPlace, Inspection, QuantLink, TensorFacts};
use crate::error::Result;
use crate::json::JsonWriter;

/// How many numbers a row takes in [`Inspection::tensor_columns`].
const COLUMN_SLOTS: usize = 15;

impl Inspection {
    /// Writes the model's JSON form to `out`: pretty (two spaces of indent,
    /// metadata values compact on their line) and ending in a newline.
    #[doc(hidden)]
    pub fn write_json(&self, out: &mut dyn Write) -> Result<()> {
        let mut w = JsonWriter::new(out, true);
        w.begin_object();
        self.header_members(&mut w);
        w.key("metadata");
        self.metadata_array(&mut w);
        w.key("omitted_values");
        w.uint(self.omitted);
        w.key("directories");
        self.directories_array(&mut w);
        w.key("tensors");
        w.begin_array();
        let paths = self.path_texts();
        for position in self.listing() {
            self.tensor_json(position, &paths, &mut w);
        }
        w.end_array();
        w.end_object();
        w.raw("\n");
        w.done()
    }

    /// The JSON form's members that say what the file is (`file`,
    /// `format`, `bytes`, `files`, `kiln`, `gguf`), as one compact object:
    /// what the browser's core module gives as a file's `header`.
    #[doc(hidden)]
    pub fn header_json(&self) -> Result<String> {
        let mut out = String::new();
        let mut w = JsonWriter::new(&mut out, false);
        w.begin_object();
        self.header_members(&mut w);
        w.end_object();
        w.done()?;
        Ok(out)
    }

    fn header_members(&self, w: &mut JsonWriter<'_>) {
        w.key("file");
        w.string(&self.name);
        w.key("format");
        w.string(self.format.name());
        w.key("bytes");
        w.uint(self.bytes());
        w.key("files");
        w.begin_array();
        for f in &self.files {
            w.begin_object();
            w.key("name");
            w.string(&f.name);
            w.key("bytes");
            w.uint(f.bytes);
            w.end_object();
        }
        w.end_array();
        w.key("kiln");
        match &self.kiln {
            Some(k) => {
                w.begin_object();
                w.key("type");
                w.string(&k.type_text);
                w.key("framed");
                w.bool(k.framed);
                w.key("hash");
                w.string(&hash_text(k.hash));
                w.key("converted_from");
                w.opt_string(k.converted_from.map(|f| f.name()));
                w.end_object();
            }
            None => w.null(),
        }
        w.key("gguf");
        match &self.gguf {
            Some(g) => {
                w.begin_object();
                w.key("version");
                w.uint(g.version.into());
                w.key("alignment");
                w.uint(g.alignment);
                w.end_object();
            }
            None => w.null(),
        }
    }

    /// [`Inspection::write_json`] into a new string.
    pub fn json(&self) -> Result<String> {
        let mut out = String::new();
        self.write_json(&mut out)?;
        Ok(out)
    }

    /// The tensors alone, in listing order, as one compact JSON array of
    /// the objects [`Inspection::write_json`] writes (what the browser's core
    /// module hands to JavaScript).
    #[doc(hidden)]
    pub fn tensors_json(&self) -> Result<String> {
        // About the length of one tensor's object, so that the text is
        // not copied as it grows.
        let mut out = String::with_capacity(self.tensors.len().saturating_mul(320));
        let mut w = JsonWriter::new(&mut out, false);
        w.begin_array();
        let paths = self.path_texts();
        for position in self.listing() {
            self.tensor_json(position, &paths, &mut w);
        }
        w.end_array();
        w.done()?;
        Ok(out)
    }

    /// The tensors of [`Inspection::tensors_json`] as columns, for rows
    /// made on demand (the browser module's `tensorRows()`): a compact
    /// JSON text `[names, strings, full]` and one number per slot.
    /// `names` holds each row's `name` in listing order; `strings` the
    /// other strings the rows name, each once; `nums` has
    /// numbers a row (15: `index`, `directory`, `index_in_directory`, then
    /// `path`, `file`, `dtype`, as indexes into `strings` or -1 for
    /// null, `dtype_code` or -1, `layout` as a string index or -1,
    /// `block_size`, where the row's dims start in `nums` and how many,
    /// `elements` or -1, `offset`, `bytes`, and `not_in_place` as a
    /// string index or -1), then every row's dims. A row with a
    /// quantization link, or with a number above 2^53 - 1 (which the JSON
    /// form writes as a string), is in `full` instead, as
    /// `[row, object]` with the object of [`Inspection::tensors_json`].
    /// Each row read back from the columns is that object, member for
    /// member.
    #[doc(hidden)]
    pub fn tensor_columns(&self) -> Result<(String, alloc::vec::Vec<f64>)> {
        use crate::json::MAX_SAFE_INTEGER;
        let n = self.tensors.len();
        let mut names = String::with_capacity(n.saturating_mul(48));
        let mut strings: alloc::vec::Vec<String> = alloc::vec::Vec::new();
        let mut full = String::new();
        let mut nums = alloc::vec::Vec::with_capacity(n.saturating_mul(COLUMN_SLOTS + 2));
        let mut dims = alloc::vec::Vec::with_capacity(n.saturating_mul(2));
        let paths = self.path_texts();
        let mut intern = |s: Option<&str>| -> f64 {
            let Some(s) = s else { return -1.0 };
            match strings.iter().position(|x| x == s) {
                Some(i) => i as f64,
                None => {
                    strings.push(s.into());
                    (strings.len() - 1) as f64
                }
            }
        };
        let mut wn = JsonWriter::new(&mut names, false);
        let mut wf = JsonWriter::new(&mut full, false);
        wn.begin_array();
        wf.begin_array();
        for (row, position) in self.listing().enumerate() {
            let Some(t) = self.tensors.get(position) else {
                continue;
            };
            wn.opt_string(t.name.as_deref());
            let safe = |x: u64| x <= MAX_SAFE_INTEGER;
            let plain = matches!(t.quant, QuantLink::None)
                && safe(t.offset)
                && safe(t.length)
                && t.elements.is_none_or(safe)
                && t.shape.iter().all(|&d| safe(d));
            if !plain {
                wf.begin_array();
                wf.uint(row as u64);
                self.tensor_json(position, &paths, &mut wf);
                wf.end_array();
                nums.extend_from_slice(&[0.0; COLUMN_SLOTS]);
                continue;
            }
            let dtype = t.dtype_name();
            nums.extend_from_slice(&[
                position as f64,
                t.directory as f64,
                t.index as f64,
                intern(paths.get(t.directory).and_then(Option::as_deref)),
                intern(self.source_of(t)),
                intern(Some(&dtype)),
                t.dtype.code().map_or(-1.0, f64::from),
                intern(t.layout.as_deref()),
                f64::from(t.block_size),
                dims.len() as f64,
                t.shape.len() as f64,
                t.elements.map_or(-1.0, |e| e as f64),
                t.offset as f64,
                t.length as f64,
                match t.in_place {
                    InPlace::Yes => -1.0,
                    other => intern(Some(other.reason())),
                },
            ]);
            dims.extend(t.shape.iter().map(|&d| d as f64));
        }
        wn.end_array();
        wf.end_array();
        wn.done()?;
        wf.done()?;
        // Where the dims start: after every row's slots.
        let base = nums.len() as f64;
        for row in nums.chunks_exact_mut(COLUMN_SLOTS) {
            if let Some(at) = row.get_mut(9) {
                *at += base;
            }
        }
        nums.extend_from_slice(&dims);
        let mut text = String::with_capacity(names.len() + full.len() + 64);
        text.push('[');
        text.push_str(&names);
        text.push(',');
        let mut ws = JsonWriter::new(&mut text, false);
        ws.begin_array();
        for s in &strings {
            ws.string(s);
        }
        ws.end_array();
        ws.done()?;
        text.push(',');
        text.push_str(&full);
        text.push(']');
        Ok((text, nums))
    }

    /// The metadata entries alone, as `{"metadata": [...], "omitted_values":
    /// N}` in one compact JSON text: the members of [`Inspection::write_json`]
    /// (what the inspector shows beside the table).
    #[doc(hidden)]
    pub fn metadata_json(&self) -> Result<String> {
        let mut out = String::new();
        let mut w = JsonWriter::new(&mut out, false);
        w.begin_object();
        w.key("metadata");
        self.metadata_array(&mut w);
        w.key("omitted_values");
        w.uint(self.omitted);
        w.end_object();
        w.done()?;
        Ok(out)
    }

    fn metadata_array(&self, w: &mut JsonWriter<'_>) {
        w.begin_array();
        for m in &self.metadata {
            w.begin_object();
            w.key("key");
            w.string(&m.key);
            w.key("type");
            w.string(&m.type_text);
            w.key("value");
            // A value is checked before any of it is written: when the
            // bytes are not a value of the type the entry names (a typed
            // pair whose value is broken), that is said, not shown.
            if crate::json::scalar_list_json(&m.type_text, &m.bytes, w) {
                w.end_object();
                continue;
            }
            match m.value() {
                Ok(value) => {
                    let _ = m.write_json(&value, w);
                }
                Err(e) => {
                    let mut why = String::from("(not a ");
                    why.push_str(&m.type_text);
                    why.push_str(": ");
                    why.push_str(e.fault());
                    why.push(')');
                    w.string(&why)
                }
            }
            w.end_object();
        }
        w.end_array();
    }

    /// The directories alone, as one compact JSON array of the objects
    /// [`Inspection::write_json`] writes.
    #[doc(hidden)]
    pub fn directories_json(&self) -> Result<String> {
        let mut out = String::new();
        let mut w = JsonWriter::new(&mut out, false);
        self.directories_array(&mut w);
        w.done()?;
        Ok(out)
    }

    fn directories_array(&self, w: &mut JsonWriter<'_>) {
        w.begin_array();
        for d in &self.directories {
            w.begin_object();
            w.key("path");
            match &d.path {
                Some(p) => w.string(&p.text()),
                None => w.null(),
            }
            w.key("file");
            w.opt_string(d.source.as_deref());
            w.key("offset");
            w.uint(d.offset);
            w.key("bytes");
            w.uint(d.length);
            w.key("payload_offset");
            w.uint(d.payload_offset);
            w.key("tensors");
            w.uint(d.count as u64);
            w.key("named");
            w.bool(d.named);
            w.key("names_sorted");
            w.bool(d.names_sorted);
            w.end_object();
        }
        w.end_array();
    }

    /// Each directory's path as text, once (every tensor names its
    /// directory's).
    fn path_texts(&self) -> alloc::vec::Vec<Option<String>> {
        self.directories
            .iter()
            .map(|d| d.path.as_ref().map(|p| p.text()))
            .collect()
    }

    fn tensor_json(&self, position: usize, paths: &[Option<String>], w: &mut JsonWriter<'_>) {
        let Some(t) = self.tensors.get(position) else {
            return;
        };
        w.begin_object();
        w.key("index");
        w.uint(position as u64);
        w.key("name");
        w.opt_string(t.name.as_deref());
        w.key("directory");
        w.uint(t.directory as u64);
        w.key("index_in_directory");
        w.uint(t.index as u64);
        w.key("path");
        w.opt_string(paths.get(t.directory).and_then(Option::as_deref));
        w.key("file");
        w.opt_string(self.source_of(t));
        w.key("dtype");
        w.string(&t.dtype_name());
        w.key("dtype_code");
        w.opt_uint(t.dtype.code().map(u64::from));
        w.key("layout");
        w.opt_string(t.layout.as_deref());
        w.key("block_size");
        w.uint(t.block_size.into());
        w.key("shape");
        w.begin_array();
        for &d in &t.shape {
            w.uint(d);
        }
        w.end_array();
        w.key("elements");
        w.opt_uint(t.elements);
        w.key("offset");
        w.uint(t.offset);
        w.key("bytes");
        w.uint(t.length);
        w.key("quant");
        self.quant_json(t, w);
        w.key("in_place");
        w.bool(t.in_place.is_yes());
        w.key("not_in_place");
        match t.in_place {
            InPlace::Yes => w.null(),
            other => w.string(other.reason()),
        }
        w.end_object();
    }

    fn quant_json(&self, t: &TensorFacts, w: &mut JsonWriter<'_>) {
        let (axis, group_size) = match t.quant {
            QuantLink::None => return w.null(),
            QuantLink::Scales {
                axis, group_size, ..
            }
            | QuantLink::ScalesOuter {
                axis, group_size, ..
            } => (axis, group_size),
        };
        let (scales, outer) = self.links_of(t);
        let name = |i: Option<usize>| {
            i.and_then(|i| self.tensors.get(i))
                .and_then(|t| t.name.as_deref())
        };
        w.begin_object();
        w.key("scheme");
        w.string(t.quant.name());
        w.key("axis");
        w.uint(axis.into());
        w.key("group_size");
        w.uint(group_size.into());
        w.key("scales");
        w.opt_uint(scales.map(|i| i as u64));
        w.key("scales_name");
        w.opt_string(name(scales));
        w.key("outer");
        w.opt_uint(outer.map(|i| i as u64));
        w.key("outer_name");
        w.opt_string(name(outer));
        w.end_object();
    }
}

/// `0x` and 16 lowercase hex digits.
fn hash_text(hash: u64) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::from("0x");
    for shift in (0..16).rev() {
        let digit = (hash >> (shift * 4)) & 15;
        s.push(char::from(HEX.get(digit as usize).copied().unwrap_or(b'0')));
    }
    s
}
