//! The model's one JSON form (`spec/json.md`, section 8): what `kiln
//! inspect --json` prints and the browser module's `json()` returns, the
//! same text for the same file.

use alloc::string::String;
use core::fmt::Write;

use super::{InPlace, Inspection, QuantLink, TensorFacts};
use crate::error::Result;
use crate::json::JsonWriter;

impl Inspection {
    /// Writes the model's JSON form to `out`: pretty (two spaces of indent,
    /// metadata values compact on their line) and ending in a newline.
    pub fn write_json(&self, out: &mut dyn Write) -> Result<()> {
        let mut w = JsonWriter::new(out, true);
        w.begin_object();
        self.header_members(&mut w);
        w.name("metadata");
        w.begin_array();
        for m in &self.metadata {
            w.begin_object();
            w.name("key");
            w.string(&m.key);
            w.name("type");
            w.string(&m.type_text);
            w.name("value");
            match m.json() {
                Ok(json) => w.literal(&json),
                // The bytes are not a value of the type the entry names
                // (a typed pair whose value is broken): said, not shown.
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
        w.name("omitted_values");
        w.uint(self.omitted);
        w.name("directories");
        self.directories_array(&mut w);
        w.name("tensors");
        w.begin_array();
        for position in self.listing() {
            self.tensor_json(position, &mut w);
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
        w.name("file");
        w.string(&self.name);
        w.name("format");
        w.string(self.format.name());
        w.name("bytes");
        w.uint(self.bytes());
        w.name("files");
        w.begin_array();
        for f in &self.files {
            w.begin_object();
            w.name("name");
            w.string(&f.name);
            w.name("bytes");
            w.uint(f.bytes);
            w.end_object();
        }
        w.end_array();
        w.name("kiln");
        match &self.kiln {
            Some(k) => {
                w.begin_object();
                w.name("type");
                w.string(&k.type_text);
                w.name("framed");
                w.bool(k.framed);
                w.name("hash");
                w.string(&hash_text(k.hash));
                w.name("converted_from");
                w.opt_string(k.converted_from.map(|f| f.name()));
                w.end_object();
            }
            None => w.null(),
        }
        w.name("gguf");
        match &self.gguf {
            Some(g) => {
                w.begin_object();
                w.name("version");
                w.uint(g.version.into());
                w.name("alignment");
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
        let mut out = String::new();
        let mut w = JsonWriter::new(&mut out, false);
        w.begin_array();
        for position in self.listing() {
            self.tensor_json(position, &mut w);
        }
        w.end_array();
        w.done()?;
        Ok(out)
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
            w.name("path");
            match &d.path {
                Some(p) => w.string(&p.text()),
                None => w.null(),
            }
            w.name("file");
            w.opt_string(d.source.as_deref());
            w.name("offset");
            w.uint(d.offset);
            w.name("bytes");
            w.uint(d.length);
            w.name("payload_offset");
            w.uint(d.payload_offset);
            w.name("tensors");
            w.uint(d.count as u64);
            w.name("named");
            w.bool(d.named);
            w.name("names_sorted");
            w.bool(d.names_sorted);
            w.end_object();
        }
        w.end_array();
    }

    fn tensor_json(&self, position: usize, w: &mut JsonWriter<'_>) {
        let Some(t) = self.tensors.get(position) else {
            return;
        };
        w.begin_object();
        w.name("index");
        w.uint(position as u64);
        w.name("name");
        w.opt_string(t.name.as_deref());
        w.name("directory");
        w.uint(t.directory as u64);
        w.name("index_in_directory");
        w.uint(t.index as u64);
        w.name("path");
        w.opt_string(self.path_of(t).as_deref());
        w.name("file");
        w.opt_string(self.source_of(t));
        w.name("dtype");
        w.string(&t.dtype_name());
        w.name("dtype_code");
        w.opt_uint(t.dtype.code().map(u64::from));
        w.name("layout");
        w.opt_string(t.layout.as_deref());
        w.name("block_size");
        w.uint(t.block_size.into());
        w.name("shape");
        w.begin_array();
        for &d in &t.shape {
            w.uint(d);
        }
        w.end_array();
        w.name("elements");
        w.opt_uint(t.elements);
        w.name("offset");
        w.uint(t.offset);
        w.name("bytes");
        w.uint(t.length);
        w.name("quant");
        self.quant_json(t, w);
        w.name("in_place");
        w.bool(t.in_place.is_yes());
        w.name("not_in_place");
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
        w.name("scheme");
        w.string(t.quant.name());
        w.name("axis");
        w.uint(axis.into());
        w.name("group_size");
        w.uint(group_size.into());
        w.name("scales");
        w.opt_uint(scales.map(|i| i as u64));
        w.name("scales_name");
        w.opt_string(name(scales));
        w.name("outer");
        w.opt_uint(outer.map(|i| i as u64));
        w.name("outer_name");
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
