//! # kiln-wasm-inspect: the inspector's module
//!
//! kiln-wasm (every export of the core module: `KilnFile`, `peekFrame`,
//! `schemaHash`) and, through kiln-convert's readers built for wasm,
//! safetensors and GGUF files opened from their heads alone:
//!
//! ```js
//! import init, { sniffFormat, openModel } from "./inspect/kiln_inspect.js";
//! await init();
//! const format = sniffFormat(first16);           // "safetensors", "gguf", "kiln" or null
//! const file = openModel(size, read, format);    // a KilnFile: tensors(), metadata(), elementBytes(), widenBytes()
//! ```
//!
//! The head (safetensors: 8 bytes, then the JSON header; GGUF: metadata
//! and tensor infos, in growing reads) is read and checked by
//! [`kiln_convert::head::open_head`], with the verdict of the whole-file
//! readers; its tensors become the core's inspection model
//! ([`kiln_nostd::inspect::TensorFacts`]) in one directory, so the
//! inspector's table, values and statistics are the Kiln path's.
//! Payloads are never read at open.
//!
//! The Rust logic is [`opened`]; the `#[wasm_bindgen]` layer converts.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use js_sys::{Function, Uint8Array};
use kiln_convert::head::{open_head, sniff, Head};
use kiln_convert::Format;
use kiln_nostd::inspect::{Path, QuantLink, TensorFacts};
use kiln_nostd::{DtypeCode, Value, ValueKind};
use kiln_wasm::open::{DirectoryInfo, Opened, Tensor};
use kiln_wasm::KilnFile;
use wasm_bindgen::prelude::*;

pub mod sets;

/// The format the first bytes of a file say (16 are enough):
/// `"safetensors"`, `"gguf"`, `"kiln"` (a frame or a bare directory), or
/// `null` (a plain Kiln message has no magic).
#[wasm_bindgen(js_name = sniffFormat)]
pub fn sniff_format(bytes: &[u8]) -> Option<String> {
    sniff(bytes).map(|f| name(f).into())
}

fn name(f: Format) -> &'static str {
    match f {
        Format::Safetensors => "safetensors",
        Format::Gguf => "gguf",
        Format::Kiln => "kiln",
    }
}

/// Opens a safetensors or GGUF file of `byteLength` bytes from its head,
/// read through `read(offset, length)` (as `KilnFile.openReader` reads):
/// the tensors, their dtypes or block layouts, shapes and byte ranges, and
/// the metadata pairs. Throws a `KilnError` whose `code` is `safetensors`
/// or `GGUF` (the file breaks a rule: `offset` says where),
/// `Unsupported` or `Io`.
#[wasm_bindgen(js_name = openModel)]
pub fn open_model(
    #[wasm_bindgen(js_name = byteLength)] byte_length: f64,
    #[wasm_bindgen(unchecked_param_type = "ReadRange")] read: &Function,
    format: &str,
) -> Result<KilnFile, JsValue> {
    let format = match format {
        "safetensors" => Format::Safetensors,
        "gguf" => Format::Gguf,
        _ => {
            return Err(error(
                "BadFormat",
                "format is not safetensors or gguf",
                None,
            ))
        }
    };
    if !(byte_length >= 0.0 && byte_length == (byte_length as u64) as f64) {
        return Err(error("BadLength", "byteLength is not a whole number", None));
    }
    let len = byte_length as u64;
    let (head, reads) = open_head(format, len, |at, buf| {
        let got = read
            .call2(
                &JsValue::NULL,
                &JsValue::from_f64(at as f64),
                &JsValue::from_f64(buf.len() as f64),
            )
            .ok()
            .and_then(|v| v.dyn_into::<Uint8Array>().ok())
            .filter(|b| b.length() as usize == buf.len())
            .ok_or_else(|| {
                kiln_convert::Error::from(std::io::Error::other(
                    "the read function threw, or returned other than the bytes asked",
                ))
            })?;
        got.copy_to(buf);
        Ok(())
    })
    .map_err(|e| convert_error(&e))?;
    Ok(KilnFile::from_opened(opened(
        &head,
        reads.bytes,
        reads.requests,
    )))
}

/// The core's facts of a head: one directory of named tensors.
pub fn opened(head: &Head, read: u64, requests: u64) -> Opened {
    let tensors: Vec<Tensor> = head
        .tensors
        .iter()
        .enumerate()
        .map(|(index, t)| {
            // A safetensors dtype Kiln lacks (F4, F6, C64, ...) shows as
            // opaque bytes under its own name.
            let (dtype, layout, block_size) = match (t.dtype, t.layout) {
                (Some(d), Some(l)) => (d, Some(l.name.to_string()), l.block_bytes as u32),
                (Some(d), None) => (d, None, 0),
                (None, _) => (DtypeCode::Opaque(0), Some(t.format_dtype.clone()), 1),
            };
            Tensor {
                facts: TensorFacts {
                    directory: 0,
                    index,
                    name: Some(t.name.clone()),
                    dtype,
                    shape: t.shape.clone(),
                    elements: t.elements,
                    range: 0..0,
                    layout,
                    block_size,
                    quant: QuantLink::None,
                },
                offset: t.range.start,
                length: t.range.end - t.range.start,
            }
        })
        .collect();
    let names_sorted = head
        .tensors
        .windows(2)
        .all(|w| w[0].name.as_bytes() < w[1].name.as_bytes());
    let mut metadata = Vec::with_capacity(head.metadata.len() + 2);
    if head.format == Format::Gguf {
        metadata.push([
            "GGUF version".into(),
            "u32".into(),
            head.version.to_string(),
        ]);
        metadata.push([
            "tensor data alignment".into(),
            "u64".into(),
            head.alignment.to_string(),
        ]);
    }
    metadata.extend(
        head.metadata
            .iter()
            .map(|p| [p.key.clone(), p.value_type.clone(), p.value.clone()]),
    );
    Opened {
        type_text: head.format.name().into(),
        framed: false,
        hash: 0,
        len: head.file_len,
        value: Value {
            span: 0..0,
            kind: ValueKind::Bool(false),
        },
        image: Vec::new(),
        directories: vec![DirectoryInfo {
            path: Path::root(),
            offset: 0,
            length: head.file_len,
            payload_offset: head.head_len,
            first: 0,
            count: tensors.len(),
            named: true,
            names_sorted,
            image_offset: 0,
        }],
        tensors,
        read,
        requests,
        skipped: head.file_len.saturating_sub(read),
        scratch: read as usize,
        format: name(head.format),
        metadata,
    }
}

pub(crate) fn convert_error(e: &kiln_convert::Error) -> JsValue {
    let code = match e.kind() {
        kiln_convert::ErrorKind::Safetensors => "safetensors",
        kiln_convert::ErrorKind::Gguf => "GGUF",
        kiln_convert::ErrorKind::Io => "Io",
        _ => "Unsupported",
    };
    // The message without the kind and offset that `Display` adds: the
    // error's `code` and `offset` carry them.
    error(code, e.message(), e.offset())
}

fn error(code: &str, message: &str, offset: Option<u64>) -> JsValue {
    let e = js_sys::Error::new(message);
    e.set_name("KilnError");
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&e, &JsValue::from_str(k), &v);
    };
    set("code", JsValue::from_str(code));
    set("fault", JsValue::from_str(message));
    if let Some(offset) = offset {
        set("offset", JsValue::from_f64(offset as f64));
    }
    e.into()
}
