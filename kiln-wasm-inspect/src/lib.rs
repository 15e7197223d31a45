//! # kiln-wasm-inspect: the inspector's module
//!
//! kiln-wasm (every export of the core module: `KilnFile`, `KilnOpener`,
//! `peekFrame`, `schemaHash`) and, through kiln-convert, every file the
//! command line opens: a Kiln file (its metadata, and a converted
//! model's source facts, read as `kiln inspect` reads them), a
//! safetensors or GGUF file from its head alone, and sets of them:
//!
//! ```js
//! import init, { openFile, FileSet } from "./inspect/kiln_inspect.js";
//! await init();
//! const file = await openFile(size, read, { name: "model.gguf" }); // the format from its first bytes
//! file.json();              // the text `kiln inspect --json model.gguf` prints
//! const set = new FileSet("model.safetensors.index.json");
//! for (const shard of shards) set.add(shard);
//! const whole = set.finish(indexBytes); // checked as `kiln convert` checks a set
//! ```
//!
//! One opener ([`FileOpener`]) serves every format: its first read (the
//! core's first read, [`kiln_nostd::inspect::FIRST_READ`]) says the
//! format, and the same bytes go to the core's Kiln opener or to
//! kiln-convert's head reader, so nothing is read twice. Every model is
//! the core's inspection model, so the page's table, values and
//! statistics are one path for every format. Payloads are never read at
//! open.
//!
//! The Rust logic is [`FileOpener`] and [`sets`]; the `#[wasm_bindgen]`
//! layer converts.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use js_sys::{Array, Function, Promise, Reflect};
use kiln_convert::head::{sniff, HeadOpener};
use kiln_convert::Format;
use kiln_nostd::inspect::{Inspection, KilnOpener, ReadStats, FIRST_READ};
use kiln_wasm::{drive, error_value, kiln_error, length_of, ranges_value, KilnFile, OpenOptions};
use wasm_bindgen::prelude::*;

pub mod sets;

/// The format the first bytes of a file say (16 are enough):
/// `"safetensors"`, `"gguf"`, `"kiln"` (a frame or a bare directory), or
/// `null` (a plain Kiln message has no magic).
#[wasm_bindgen(js_name = sniffFormat)]
pub fn sniff_format(bytes: &[u8]) -> Option<String> {
    sniff(bytes).map(|f| f.name().into())
}

/// The reads that will follow the first read of `openFile`, from the
/// first bytes of that read as they arrive (64 are enough):
/// `[[offset, length], ...]`, exactly the ranges the opener asks for
/// next; empty when those bytes do not say (only a safetensors header
/// longer than the first read says its length up front). A URL source
/// starts them as soon as the first read's first bytes arrive, so the
/// rest of such a head comes while the first read still does.
#[wasm_bindgen(js_name = readsAfterFirst, unchecked_return_type = "[number, number][]")]
pub fn reads_after_first(
    start: &[u8],
    #[wasm_bindgen(js_name = byteLength)] byte_length: f64,
) -> Result<Array, JsValue> {
    Ok(ranges_value(&HeadOpener::reads_after_first(
        start,
        length_of(byte_length)?,
    )))
}

/// A kiln-convert error as a `KilnError`: its code is the format's own
/// (`safetensors`, `GGUF`), a Kiln input's wire code, `Io` or
/// `Unsupported`; the message without the kind and offset `Display`
/// adds (the error's `code` and `offset` carry them).
pub fn convert_error(e: &kiln_convert::Error) -> JsValue {
    let code = match e.kind() {
        kiln_convert::ErrorKind::Safetensors => "safetensors",
        kiln_convert::ErrorKind::Gguf => "GGUF",
        kiln_convert::ErrorKind::Io => "Io",
        kiln_convert::ErrorKind::Kiln => e.kiln_code().map_or("Unsupported", |c| c.as_str()),
        _ => "Unsupported",
    };
    error_value(code, e.message(), e.offset(), None, e.message())
}

/// Where an open is.
enum Stage {
    /// Before the first read: what the caller gave.
    First(OpenOptions),
    Kiln(Box<KilnOpener>),
    Head(Box<HeadOpener>),
    /// Done, or failed.
    Gone,
}

/// Why an open failed: the core's error or kiln-convert's.
#[derive(Debug)]
pub enum OpenError {
    /// A Kiln file's fault (its wire code), or a refusal.
    Kiln(kiln_nostd::Error),
    /// A safetensors or GGUF file's fault, or a file of no known format.
    Convert(kiln_convert::Error),
}

impl OpenError {
    fn to_js(&self) -> JsValue {
        match self {
            OpenError::Kiln(e) => kiln_error(e),
            OpenError::Convert(e) => convert_error(e),
        }
    }
}

impl From<kiln_nostd::Error> for OpenError {
    fn from(e: kiln_nostd::Error) -> Self {
        OpenError::Kiln(e)
    }
}

impl From<kiln_convert::Error> for OpenError {
    fn from(e: kiln_convert::Error) -> Self {
        OpenError::Convert(e)
    }
}

/// Opens any file the command line opens, by ranges, sans-I/O: the
/// format from the first read, then the core's Kiln opener or the head
/// reader, then (a Kiln file) its metadata and a converted model's source
/// facts (`kiln_convert::inspect::read_converted`).
pub struct FileOpener {
    len: u64,
    stage: Stage,
}

impl FileOpener {
    /// An opener of a file of `len` bytes, read as `options` say.
    pub fn new(len: u64, options: OpenOptions) -> FileOpener {
        FileOpener {
            len,
            stage: Stage::First(options),
        }
    }

    /// The ranges to read next (all may be in flight together); none once
    /// the file is read.
    pub fn next_reads(&mut self) -> Result<Vec<std::ops::Range<u64>>, OpenError> {
        Ok(match &mut self.stage {
            Stage::First(_) => {
                let first = 0..FIRST_READ.min(self.len);
                if first.is_empty() {
                    self.decide(&[])?;
                    return self.next_reads();
                }
                vec![first]
            }
            Stage::Kiln(opener) => opener.next_read()?.into_iter().collect(),
            Stage::Head(opener) => opener.next_reads()?,
            Stage::Gone => Vec::new(),
        })
    }

    /// The bytes of a range [`FileOpener::next_reads`] named, read at `at`.
    pub fn give(&mut self, at: u64, bytes: &[u8]) -> Result<(), OpenError> {
        match &mut self.stage {
            Stage::First(_) => self.decide(bytes),
            Stage::Kiln(opener) => Ok(opener.give(at, bytes)?),
            Stage::Head(opener) => Ok(opener.give(at, bytes)?),
            Stage::Gone => {
                Err(kiln_convert::Error::from(std::io::Error::other("the open is over")).into())
            }
        }
    }

    /// The first read says the format: its bytes go to that format's
    /// opener as its own first read.
    fn decide(&mut self, first: &[u8]) -> Result<(), OpenError> {
        let Stage::First(options) = std::mem::replace(&mut self.stage, Stage::Gone) else {
            return Ok(());
        };
        let format = match (&options.type_text, sniff(first)) {
            (Some(_), _) | (None, Some(Format::Kiln)) => Format::Kiln,
            (None, Some(f)) => f,
            (None, None) => {
                let lower = options.name.to_ascii_lowercase();
                if lower.ends_with(".safetensors") {
                    Format::Safetensors
                } else if lower.ends_with(".gguf") {
                    Format::Gguf
                } else {
                    // As `kiln inspect` reads it: a bare directory.
                    Format::Kiln
                }
            }
        };
        if format == Format::Kiln {
            let mut opener = KilnOpener::recognising(
                &options.name,
                self.len,
                options.type_text.as_deref(),
                options.framed,
                options.limits,
            )?;
            if let Some(r) = opener.next_read()? {
                opener.give(r.start, first)?;
            }
            self.stage = Stage::Kiln(Box::new(opener));
        } else {
            let mut opener = HeadOpener::new(&options.name, format, self.len);
            for r in opener.next_reads()? {
                opener.give(r.start, first)?;
            }
            self.stage = Stage::Head(Box::new(opener));
        }
        Ok(())
    }

    /// The model, once [`FileOpener::next_reads`] names no range, and
    /// what was read.
    pub fn finish(self) -> Result<(Inspection, ReadStats), OpenError> {
        match self.stage {
            Stage::Kiln(opener) => {
                let (mut model, stats) = opener.finish()?;
                model.read_metadata()?;
                kiln_convert::inspect::read_converted(&mut model)?;
                Ok((model, stats))
            }
            Stage::Head(opener) => Ok(opener.finish()?),
            Stage::First(_) | Stage::Gone => Err(kiln_convert::Error::from(std::io::Error::other(
                "finish before the file is read",
            ))
            .into()),
        }
    }
}

/// The steps of opening any file by ranges (see [`FileOpener`]):
/// `next()`, `give(offset, bytes)`, `finish()`, as the core's
/// `KilnOpener`. `openFile` drives it.
#[wasm_bindgen(js_name = FileOpener)]
pub struct JsFileOpener {
    inner: FileOpener,
}

#[wasm_bindgen(js_class = FileOpener)]
impl JsFileOpener {
    /// An opener of a file of `byteLength` bytes.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(js_name = byteLength)] byte_length: f64,
        #[wasm_bindgen(unchecked_param_type = "OpenOptions")] options: JsValue,
    ) -> Result<JsFileOpener, JsValue> {
        let options = OpenOptions::read(&options)?;
        if let Some(text) = &options.type_text {
            kiln_nostd::CompiledType::<{ kiln_nostd::TOOL_NODES }>::parse(text)
                .map_err(|e| kiln_error(&e))?;
        }
        Ok(JsFileOpener {
            inner: FileOpener::new(length_of(byte_length)?, options),
        })
    }

    /// The ranges to read next, `[[offset, length], ...]`.
    #[wasm_bindgen(js_name = next, unchecked_return_type = "[number, number][]")]
    pub fn next_reads(&mut self) -> Result<Array, JsValue> {
        let reads = self.inner.next_reads().map_err(|e| e.to_js())?;
        Ok(ranges_value(&reads))
    }

    /// The bytes of a range `next()` named, read at `offset`.
    pub fn give(&mut self, offset: f64, bytes: &[u8]) -> Result<(), JsValue> {
        self.inner.give(offset as u64, bytes).map_err(|e| e.to_js())
    }

    /// The file, once `next()` names no range.
    pub fn finish(self) -> Result<KilnFile, JsValue> {
        let (model, stats) = self.inner.finish().map_err(|e| e.to_js())?;
        Ok(KilnFile::from_parts(model, stats, None))
    }
}

/// Opens any file `kiln inspect` opens (a Kiln file of any kind, a
/// safetensors or GGUF file), of `byteLength` bytes, through `read(offset,
/// length, signal)` (a `Uint8Array` or a promise of one): the promise of
/// its `KilnFile`, whose `json()` is the text `kiln inspect --json`
/// prints for the same file when `options.name` is the name given to it.
/// Throws a `KilnError` whose `code` is the wire code of a Kiln file's
/// fault, `safetensors` or `GGUF` for those files' (with `offset`), or
/// `Aborted`, `Unsupported`, `Io`.
#[wasm_bindgen(js_name = openFile, unchecked_return_type = "Promise<KilnFile>")]
pub fn open_file(
    #[wasm_bindgen(js_name = byteLength)] byte_length: f64,
    #[wasm_bindgen(unchecked_param_type = "ReadRange")] read: &Function,
    #[wasm_bindgen(unchecked_param_type = "OpenOptions")] options: JsValue,
) -> Result<Promise, JsValue> {
    let signal = if options.is_object() {
        Reflect::get(&options, &JsValue::from_str("signal")).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    };
    let opener = JsFileOpener::new(byte_length, options)?;
    Ok(drive(opener.into(), read, &signal))
}
