//! The `#[wasm_bindgen]` layer: conversions between [`crate::open`]'s
//! Rust facts and JavaScript values, the typed-array views, and errors as
//! JS `Error` objects. No format logic lives here.

use alloc::string::String;

use js_sys::{Array, Function, Object, Reflect, Uint8Array};
use kiln_nostd::inspect::{push_decimal, push_json_string, QuantLink};
use kiln_nostd::Dtype;
use kiln_nostd::{CompiledType, Detail, Error, Framing, Limits, Refusal};
use wasm_bindgen::prelude::*;

use crate::open::{self, Opened, ReadAt, Tensor, TYPE_NODES};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** One tensor: every fact the directory holds, without its payload. */
export interface TensorInfo {
  /** Index among all tensors of the file (what `view`, `widen` take). */
  index: number;
  /** Index of its `tensors` field in `directories()`. */
  directory: number;
  /** Index within its directory (what quantization links use). */
  indexInDirectory: number;
  /** Path of its `tensors` field in the message: "" for a bare directory, "batch", "layers[2].w". */
  path: string;
  name: string | null;
  /** "f32", "bf16", ..., or "opaque(4108)". */
  dtype: string;
  dtypeCode: number;
  shape: number[];
  elements: number;
  /** Absolute payload offset in the file. */
  byteOffset: number;
  byteLength: number;
  /** Opaque layout name, e.g. "Q4_K". */
  layout: string | null;
  blockSize: number;
  /** "none", "scales" or "scales+outer". */
  quant: string;
  quantScheme: number;
  axis: number | null;
  groupSize: number;
  /** The scale tensor: file-wide index and name. */
  scale: number | null;
  scaleName: string | null;
  outer: number | null;
  outerName: string | null;
  /** Bytes per element of its typed array (1 for one-byte, packed, opaque). */
  elementAlign: number;
  /** Whether `view` is zero-copy (the absolute offset suits the element type). */
  aligned: boolean;
}

/** The file as a whole. */
export interface FileHeader {
  /** "kiln", or (the inspector module's openModel) "safetensors" or "gguf". */
  format: string;
  byteLength: number;
  /** Canonical type text ("tensors" for a bare directory). */
  typeText: string;
  framed: boolean;
  /** FNV-1a 64 of the type text (what a frame carries). */
  schemaHash: bigint;
  tensorCount: number;
  directoryCount: number;
  /** Bytes the check read from the file (or buffer); payload interiors are skipped, never read. */
  readBytes: number;
  /** How many reads the check made. */
  readRequests: number;
  /** Payload bytes the check skipped. */
  skippedBytes: number;
  /** The checker's scratch in wasm memory (the record image and the largest directory head). */
  scratchBytes: number;
  /** Whether the file's bytes are in memory (`open`), so that `view` works; false for `openReader`. */
  inMemory: boolean;
}

/** Reads `length` bytes at `offset` of the file, synchronously (a `FileReaderSync` over `Blob.slice()` in a Worker, `fs.readSync` in node, a synchronous Range request in a Worker). */
export type ReadRange = (offset: number, length: number) => Uint8Array;

/** One `tensors` value of the file. */
export interface DirectoryInfo {
  path: string;
  offset: number;
  length: number;
  payloadOffset: number;
  tensorCount: number;
  firstTensor: number;
  named: boolean;
  namesSorted: boolean;
}

export type TypedView =
  | Float64Array | Float32Array | Uint16Array | Int8Array | Int16Array | Int32Array
  | Uint8Array | Uint32Array | BigInt64Array | BigUint64Array | ArrayLike<number>;

/** What `view` returns. */
export interface TensorView {
  /** Over the file's own buffer unless `copied`. */
  array: TypedView;
  /** True only when the payload's absolute offset is misaligned for the element type. */
  copied: boolean;
  /** Why it was copied, or null. */
  reason: string | null;
  /** The typed array's constructor name ("Float16Array", "Uint16Array", ...). */
  arrayType: string;
  dtype: string;
}

/** What `peekFrame` says of bytes that start with a frame. */
export interface FrameInfo {
  /** The schema hash the frame carries (compare with `schemaHash(typeText)`). */
  hash: bigint;
  profile: number;
  /** Whether profile, flags and reserved bytes are those of a valid frame. */
  wellFormed: boolean;
}

/** Every error thrown by this module. */
export interface KilnError extends Error {
  /** One of FRAME LIMIT EOF TYPE UTF8 TRAILING SCHEMA DEPTH, or a refusal name. */
  code: string;
  /** Absolute byte offset in the file, when known. */
  offset?: number;
  /** Descriptor index within its directory, when known. */
  tensor?: number;
  /** The rule, in words. */
  fault: string;
  /** A buffer refusal or a short input: bytes needed and bytes there. */
  needed?: number;
  available?: number;
  /** A wrong element type: the tensor's dtype ("f32", "opaque(4108)") and, for a read of one type, the type asked for. */
  dtype?: string;
  requested?: string;
  /** A count above a cap: the count claimed and the cap. */
  claimed?: number;
  cap?: number;
  /** A payload that is no whole number of elements: its length and the element width. */
  length?: number;
  width?: number;
}
"#;

pub(crate) fn set(target: &Object, key: &str, value: JsValue) {
    // Setting a data property on a plain object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), &value);
}

pub(crate) fn num(v: impl Into<f64>) -> JsValue {
    JsValue::from_f64(v.into())
}

/// A JSON object written into a string: numbers as decimals (a `u64`
/// parses to the double `as f64` gives), strings escaped.
struct Json<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Json<'a> {
    fn object(out: &'a mut String) -> Self {
        out.push('{');
        Json { out, first: true }
    }

    fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        // The keys are this file's own literals, with nothing to escape:
        // copied whole (escaping them a character at a time was most of
        // the time 10,000 tensors' facts took).
        self.out.push('"');
        self.out.push_str(key);
        self.out.push_str("\":");
    }

    fn num(&mut self, key: &str, n: u64) {
        self.key(key);
        push_decimal(self.out, n);
    }

    fn opt_num(&mut self, key: &str, n: Option<u64>) {
        match n {
            Some(n) => self.num(key, n),
            None => {
                self.key(key);
                self.out.push_str("null");
            }
        }
    }

    fn str(&mut self, key: &str, s: Option<&str>) {
        self.key(key);
        match s {
            Some(s) => push_json_string(self.out, s),
            None => self.out.push_str("null"),
        }
    }
}

/// A JS `Error` with `code`, `offset`, `tensor` and `fault`.
fn error_value(
    code: &str,
    message: &str,
    offset: Option<u64>,
    tensor: Option<u32>,
    fault: &str,
) -> JsValue {
    let e = js_sys::Error::new(message);
    e.set_name("KilnError");
    set(&e, "code", JsValue::from_str(code));
    set(&e, "fault", JsValue::from_str(fault));
    if let Some(offset) = offset {
        set(&e, "offset", JsValue::from_f64(offset as f64));
    }
    if let Some(tensor) = tensor {
        set(&e, "tensor", num(tensor));
    }
    e.into()
}

/// The message is built by hand: `Error`'s `Display` would bring
/// `core::fmt` number formatting into the module.
pub(crate) fn kiln_error(e: &Error) -> JsValue {
    let mut message = String::from(e.kind_name());
    message.push_str(": ");
    message.push_str(e.fault());
    if let Some(index) = e.tensor() {
        message.push_str(" in tensor ");
        push_decimal(&mut message, index.into());
    }
    if let Some(offset) = e.offset() {
        message.push_str(" at byte ");
        push_decimal(&mut message, offset);
    }
    let value = error_value(e.kind_name(), &message, e.offset(), e.tensor(), e.fault());
    set_detail(value.unchecked_ref(), e.detail());
    value
}

/// The numbers of an error's [`Detail`] as properties of its JS object.
fn set_detail(o: &Object, detail: Detail) {
    let pair = |a: &str, x: u64, b: &str, y: u64| {
        set(o, a, JsValue::from_f64(x as f64));
        set(o, b, JsValue::from_f64(y as f64));
    };
    match detail {
        Detail::Bytes { needed, available } => pair("needed", needed, "available", available),
        Detail::Cap { claimed, cap } => pair("claimed", claimed, "cap", cap),
        Detail::Width { length, width } => pair("length", length, "width", width),
        Detail::Dtypes { tensor, requested } => {
            set(o, "dtype", JsValue::from_str(&dtype_name(tensor)));
            if requested != 0 {
                set(o, "requested", JsValue::from_str(&dtype_name(requested)));
            }
        }
        _ => {}
    }
}

/// A dtype code by its name (`f32`), any other as `opaque(4108)`: a
/// tensor's `dtype`, and the dtypes of an error.
fn dtype_name(code: u16) -> String {
    match Dtype::from_code(code) {
        Some(dtype) => dtype.name().into(),
        None => {
            let mut name = String::from("opaque(");
            push_decimal(&mut name, code.into());
            name.push(')');
            name
        }
    }
}

fn refusal(code: &str, message: &str) -> JsValue {
    error_value(code, message, None, None, message)
}

fn io(fault: &'static str) -> Error {
    Error::refused(Refusal::Io, fault)
}

/// The caller's bytes as a [`ReadAt`].
struct Bytes<'a>(&'a Uint8Array);

impl ReadAt for Bytes<'_> {
    fn size(&self) -> kiln_nostd::Result<u64> {
        Ok(u64::from(self.0.length()))
    }
    fn read_at(&mut self, offset: u64, out: &mut [u8]) -> kiln_nostd::Result<()> {
        let end = offset.saturating_add(out.len() as u64);
        if end > u64::from(self.0.length()) {
            return Err(io("read outside the buffer"));
        }
        self.0.subarray(offset as u32, end as u32).copy_to(out);
        Ok(())
    }
}

/// A file read by a JS function `(offset, length) => Uint8Array`.
struct Reader<'a> {
    len: u64,
    read: &'a Function,
}

impl ReadAt for Reader<'_> {
    fn size(&self) -> kiln_nostd::Result<u64> {
        Ok(self.len)
    }
    fn read_at(&mut self, offset: u64, out: &mut [u8]) -> kiln_nostd::Result<()> {
        let got = self
            .read
            .call2(
                &JsValue::NULL,
                &JsValue::from_f64(offset as f64),
                &JsValue::from_f64(out.len() as f64),
            )
            .map_err(|_| io("the read function threw"))?;
        let bytes = got
            .dyn_into::<Uint8Array>()
            .map_err(|_| io("the read function did not return a Uint8Array"))?;
        if bytes.length() as usize != out.len() {
            return Err(io("the read function returned fewer bytes than asked"));
        }
        bytes.copy_to(out);
        Ok(())
    }
}

fn limits_of(cap: Option<f64>) -> Result<Limits, JsValue> {
    match cap {
        None => Ok(Limits::DEFAULT),
        Some(c) if c >= 0.0 && c == (c as u64) as f64 => {
            Limits::uniform_checked(c as u64).map_err(|e| kiln_error(&e))
        }
        Some(_) => Err(refusal("BadLimits", "cap is not a whole number")),
    }
}

fn framing_of(framed: bool) -> Framing {
    if framed {
        Framing::Framed
    } else {
        Framing::Bare
    }
}

/// Whether `bytes` start with a Kiln frame, and with which schema hash:
/// `null` unless they begin with `KLN0` and hold the 16 frame bytes
/// (`kiln_nostd::frame::peek`). Reads 16 bytes.
#[wasm_bindgen(js_name = peekFrame, unchecked_return_type = "FrameInfo | null")]
pub fn peek_frame(bytes: &Uint8Array) -> JsValue {
    let mut head = [0u8; kiln_nostd::frame::FRAME_LEN];
    if (bytes.length() as usize) < head.len() {
        return JsValue::NULL;
    }
    bytes.subarray(0, head.len() as u32).copy_to(&mut head);
    match kiln_nostd::frame::peek(&head) {
        None => JsValue::NULL,
        Some(info) => {
            let o = Object::new();
            set(&o, "hash", JsValue::from(info.hash));
            set(&o, "profile", num(info.profile));
            set(&o, "wellFormed", JsValue::from_bool(info.well_formed));
            o.into()
        }
    }
}

/// The schema hash of type text (what a frame of that type carries).
/// Throws a `KilnError` (`BadTypeText`) for text that does not parse.
#[wasm_bindgen(js_name = schemaHash)]
pub fn schema_hash(#[wasm_bindgen(js_name = typeText)] type_text: &str) -> Result<u64, JsValue> {
    compile(type_text).map(|ty| ty.hash())
}

pub(crate) fn compile(
    type_text: &str,
) -> Result<alloc::boxed::Box<CompiledType<'_, TYPE_NODES>>, JsValue> {
    CompiledType::parse(type_text)
        .map(alloc::boxed::Box::new)
        .map_err(|e| kiln_error(&e))
}

/// A checked Kiln file: its facts, and its bytes when they are in memory
/// (they stay in the caller's buffer).
#[wasm_bindgen]
pub struct KilnFile {
    pub(crate) bytes: Option<Uint8Array>,
    pub(crate) opened: Opened,
}

#[wasm_bindgen]
impl KilnFile {
    /// Checks `bytes` as one value of `typeText` (`"tensors"` for a bare
    /// directory), framed when `framed`, under `cap` (both caps; default
    /// 16,777,216). Throws a `KilnError` when the bytes are not one valid
    /// value. The bytes are not copied: keep them unchanged while the file
    /// is open.
    pub fn open(
        bytes: &Uint8Array,
        #[wasm_bindgen(js_name = typeText)] type_text: &str,
        framed: bool,
        cap: Option<f64>,
    ) -> Result<KilnFile, JsValue> {
        let bytes = bytes.clone();
        let opened = open::open(
            Bytes(&bytes),
            type_text,
            framing_of(framed),
            limits_of(cap)?,
        )
        .map_err(|f| kiln_error(&f.error))?;
        Ok(KilnFile {
            bytes: Some(bytes),
            opened,
        })
    }

    /// Checks a file of `byteLength` bytes that is not in memory, reading
    /// only the ranges the checker needs through `read(offset, length)`,
    /// which returns those bytes as a `Uint8Array` (synchronously: in a
    /// Worker, `FileReaderSync` over `Blob.slice()` or a synchronous Range
    /// request; in node, `fs.readSync`). Payload interiors are never read.
    /// Memory stays bounded whatever the file's size: the record image
    /// and the directory heads. `view` is then refused; `elementBytes`
    /// says which bytes hold elements, `widenBytes` widens them.
    #[wasm_bindgen(js_name = openReader)]
    pub fn open_reader(
        #[wasm_bindgen(js_name = byteLength)] byte_length: f64,
        #[wasm_bindgen(unchecked_param_type = "ReadRange")] read: &Function,
        #[wasm_bindgen(js_name = typeText)] type_text: &str,
        framed: bool,
        cap: Option<f64>,
    ) -> Result<KilnFile, JsValue> {
        if !(byte_length >= 0.0 && byte_length == (byte_length as u64) as f64) {
            return Err(refusal("BadLength", "byteLength is not a whole number"));
        }
        let reader = Reader {
            len: byte_length as u64,
            read,
        };
        let opened = open::open(reader, type_text, framing_of(framed), limits_of(cap)?)
            .map_err(|f| kiln_error(&f.error))?;
        Ok(KilnFile {
            bytes: None,
            opened,
        })
    }

    /// A bare tensor directory (`tensors`, not framed).
    #[wasm_bindgen(js_name = openDirectory)]
    pub fn open_directory(bytes: &Uint8Array) -> Result<KilnFile, JsValue> {
        KilnFile::open(bytes, "tensors", false, None)
    }

    /// The file's bytes: the caller's own `Uint8Array` (`undefined` for a
    /// file opened with `openReader`).
    #[wasm_bindgen(getter)]
    pub fn bytes(&self) -> Option<Uint8Array> {
        self.bytes.clone()
    }

    /// The header facts: length, type text, framing, schema hash, tensor
    /// count, and how many bytes were copied into wasm memory for the
    /// check (payload interiors are not).
    #[wasm_bindgen(getter, unchecked_return_type = "FileHeader")]
    pub fn header(&self) -> Object {
        let o = Object::new();
        let opened = &self.opened;
        set(&o, "format", JsValue::from_str(opened.format));
        set(&o, "byteLength", JsValue::from_f64(opened.len as f64));
        set(&o, "typeText", JsValue::from_str(opened.type_text.as_str()));
        set(&o, "framed", JsValue::from_bool(opened.framed));
        set(&o, "schemaHash", JsValue::from(opened.hash));
        set(
            &o,
            "tensorCount",
            JsValue::from_f64(opened.tensors.len() as f64),
        );
        set(
            &o,
            "directoryCount",
            JsValue::from_f64(opened.directories.len() as f64),
        );
        set(&o, "readBytes", JsValue::from_f64(opened.read as f64));
        set(
            &o,
            "readRequests",
            JsValue::from_f64(opened.requests as f64),
        );
        set(&o, "skippedBytes", JsValue::from_f64(opened.skipped as f64));
        set(&o, "scratchBytes", JsValue::from_f64(opened.scratch as f64));
        set(&o, "inMemory", JsValue::from_bool(self.bytes.is_some()));
        o
    }

    /// Every `tensors` value, in wire order.
    #[wasm_bindgen(unchecked_return_type = "DirectoryInfo[]")]
    pub fn directories(&self) -> Array {
        self.opened
            .directories
            .iter()
            .map(|d| {
                let o = Object::new();
                let mut path = String::new();
                d.path.write_to(&mut path);
                set(&o, "path", JsValue::from_str(&path));
                set(&o, "offset", JsValue::from_f64(d.offset as f64));
                set(&o, "length", JsValue::from_f64(d.length as f64));
                set(
                    &o,
                    "payloadOffset",
                    JsValue::from_f64(d.payload_offset as f64),
                );
                set(&o, "tensorCount", JsValue::from_f64(d.count as f64));
                set(&o, "firstTensor", JsValue::from_f64(d.first as f64));
                set(&o, "named", JsValue::from_bool(d.named));
                set(&o, "namesSorted", JsValue::from_bool(d.names_sorted));
                JsValue::from(o)
            })
            .collect()
    }

    /// Every tensor of every directory, in wire order.
    #[wasm_bindgen(unchecked_return_type = "TensorInfo[]")]
    pub fn tensors(&self) -> Array {
        // One JSON text parsed once: setting each property from Rust is a
        // call into JS per property and value, most of the time a file of
        // 10,000 tensors took to open.
        js_sys::JSON::parse(&self.tensors_json_text())
            .map_or_else(|_| Array::new(), JsCast::unchecked_into)
    }

    /// `tensors()` as its JSON text in UTF-8, in a buffer of its own: what
    /// a worker transfers to the page (`postMessage(m, [bytes.buffer])`)
    /// instead of a structured clone of one object per tensor, which took
    /// longer than the check for a file of 10,000 tensors.
    #[cfg(feature = "inspector")]
    #[wasm_bindgen(js_name = tensorsJson)]
    pub fn tensors_json(&self) -> alloc::vec::Vec<u8> {
        self.tensors_json_text().into_bytes()
    }

    /// The payload of tensor `index` as a typed array over the file's own
    /// buffer, with no copy; a copy only when the payload's absolute
    /// offset is misaligned for the element type (`copied` says so).
    #[wasm_bindgen(unchecked_return_type = "TensorView")]
    pub fn view(&self, index: u32) -> Result<Object, JsValue> {
        let t = self.facts(index)?;
        let bytes = self.live()?;
        let (ctor_name, width) = array_type(t.facts.dtype.closed());
        let ctor = constructor(ctor_name)?;
        let base = bytes.byte_offset() as usize;
        // In memory, the file is under 4 GiB: offsets fit a u32.
        let (start, end) = (t.offset as usize, t.range().end as usize);
        let abs = base + start;
        let count = (end - start) / width;
        if width > 1 && !host_is_little_endian() {
            return Err(refusal(
                "BigEndianHost",
                "typed arrays on this host are big-endian: use widen",
            ));
        }
        let copied = !abs.is_multiple_of(t.facts.element_align());
        let array = if copied {
            let args = Array::of1(&JsValue::from_f64(count as f64));
            let array = Reflect::construct(&ctor, &args)?;
            let buffer = Reflect::get(&array, &JsValue::from_str("buffer"))?;
            Uint8Array::new(&buffer).set(&bytes.subarray(start as u32, end as u32), 0);
            array
        } else {
            let args = Array::of3(
                &bytes.buffer(),
                &JsValue::from_f64(abs as f64),
                &JsValue::from_f64(count as f64),
            );
            Reflect::construct(&ctor, &args)?
        };
        let o = Object::new();
        set(&o, "array", array);
        set(&o, "copied", JsValue::from_bool(copied));
        set(
            &o,
            "reason",
            if copied {
                let mut reason = String::from("misaligned: absolute offset ");
                push_decimal(&mut reason, abs as u64);
                reason.push_str(" is not a multiple of the element size of ");
                reason.push_str(ctor_name);
                JsValue::from_str(&reason)
            } else {
                JsValue::NULL
            },
        );
        set(&o, "arrayType", JsValue::from_str(ctor_name));
        set(
            &o,
            "dtype",
            JsValue::from_str(&dtype_name(t.facts.dtype.code())),
        );
        Ok(o)
    }

    /// Elements `first..first + count` of tensor `index` widened to f32
    /// for display (any closed dtype: f16, bf16, f8e4m3, f8e5m2, e2m1,
    /// e8m0, i4, u4, ...). Bits only: no scale is applied. Fewer at the
    /// end of the tensor. The array is a new one in JS memory.
    pub fn widen(
        &self,
        index: u32,
        first: f64,
        count: f64,
    ) -> Result<js_sys::Float32Array, JsValue> {
        let t = self.facts(index)?;
        let bytes = self.live()?;
        let (first, count) = (first.max(0.0) as u64, count.max(0.0) as u64);
        let (range, _, _) = open::element_bytes(t, first, count).map_err(|e| kiln_error(&e))?;
        let mut out = alloc::vec![0u8; (range.end - range.start) as usize];
        Bytes(bytes)
            .read_at(range.start, &mut out)
            .map_err(|e| kiln_error(&e))?;
        let out = open::widen_range(t, &out, first, count).map_err(|e| kiln_error(&e))?;
        Ok(js_sys::Float32Array::from(&out[..]))
    }

    /// Which bytes of the file hold elements `first..first + count` of
    /// tensor `index` (fewer at the tensor's end): `[offset, length]`, for
    /// a caller that reads them itself and gives them to `widenBytes`.
    #[wasm_bindgen(js_name = elementBytes, unchecked_return_type = "[number, number]")]
    pub fn element_bytes(&self, index: u32, first: f64, count: f64) -> Result<Array, JsValue> {
        let t = self.facts(index)?;
        let (first, count) = (first.max(0.0) as u64, count.max(0.0) as u64);
        let (range, _, _) = open::element_bytes(t, first, count).map_err(|e| kiln_error(&e))?;
        Ok(Array::of2(
            &JsValue::from_f64(range.start as f64),
            &JsValue::from_f64((range.end - range.start) as f64),
        ))
    }

    /// `widen` over bytes the caller read: `bytes` are those `elementBytes`
    /// named for the same `first` and `count`.
    #[wasm_bindgen(js_name = widenBytes)]
    pub fn widen_bytes(
        &self,
        index: u32,
        bytes: &[u8],
        first: f64,
        count: f64,
    ) -> Result<js_sys::Float32Array, JsValue> {
        let t = self.facts(index)?;
        let (first, count) = (first.max(0.0) as u64, count.max(0.0) as u64);
        let out = open::widen_range(t, bytes, first, count).map_err(|e| kiln_error(&e))?;
        Ok(js_sys::Float32Array::from(&out[..]))
    }
}

impl KilnFile {
    /// A file opened by ranges elsewhere (the inspector module's heads of
    /// safetensors and GGUF files): its facts, no bytes in memory.
    pub fn from_opened(opened: Opened) -> KilnFile {
        KilnFile {
            bytes: None,
            opened,
        }
    }

    fn facts(&self, index: u32) -> Result<&Tensor, JsValue> {
        self.opened.tensors.get(index as usize).ok_or_else(|| {
            let mut message = String::from("no tensor ");
            push_decimal(&mut message, index.into());
            refusal("NoSuchTensor", &message)
        })
    }

    /// The file's bytes, when they are in memory and still the file's: a
    /// view must never be silently empty, so a buffer that was transferred
    /// or detached is refused.
    fn live(&self) -> Result<&Uint8Array, JsValue> {
        let Some(bytes) = &self.bytes else {
            return Err(refusal(
                "NotInMemory",
                "the file was opened by ranges: read elementBytes and use widenBytes",
            ));
        };
        if u64::from(bytes.length()) != self.opened.len {
            return Err(refusal(
                "Detached",
                "the file's buffer was detached or transferred: open the file again",
            ));
        }
        Ok(bytes)
    }

    /// Every tensor's facts as one JSON array.
    fn tensors_json_text(&self) -> String {
        let mut json = String::from("[");
        for i in 0..self.opened.tensors.len() {
            if i > 0 {
                json.push(',');
            }
            self.info_json(i, &mut json);
        }
        json.push(']');
        json
    }

    /// Tensor `i`'s facts as a JSON object (the `TensorInfo` shape) at the
    /// end of `out`.
    fn info_json(&self, i: usize, out: &mut String) {
        let Some(tensor) = self.opened.tensors.get(i) else {
            out.push_str("{}");
            return;
        };
        let t = &tensor.facts;
        let dir = self.opened.directories.get(t.directory);
        let first = dir.map_or(0, |d| d.first);
        let name_of = |j: Option<usize>| {
            j.and_then(|j| self.opened.tensors.get(first + j))
                .and_then(|t| t.facts.name.as_deref())
        };
        let (axis, group_size, scales, outer) = match t.quant {
            QuantLink::None => (None, 0, None, None),
            QuantLink::Scales {
                axis,
                group_size,
                scales,
            } => (Some(axis), group_size, Some(scales), None),
            QuantLink::ScalesOuter {
                axis,
                group_size,
                scales,
                outer,
            } => (Some(axis), group_size, Some(scales), Some(outer)),
        };
        let mut path = String::new();
        if let Some(d) = dir {
            d.path.write_to(&mut path);
        }
        // The absolute offset in the caller's buffer (the file's offset
        // when it is read by ranges: what a memory map or a Blob gives).
        let base = self
            .bytes
            .as_ref()
            .map_or(0, |b| u64::from(b.byte_offset()));
        let align = t.element_align() as u64;
        let mut o = Json::object(out);
        o.num("index", i as u64);
        o.num("directory", t.directory as u64);
        o.num("indexInDirectory", t.index as u64);
        o.str("path", Some(&path));
        o.str("name", t.name.as_deref());
        o.str("dtype", Some(&dtype_name(t.dtype.code())));
        o.num("dtypeCode", t.dtype.code().into());
        o.key("shape");
        o.out.push('[');
        for (k, &d) in t.shape.iter().enumerate() {
            if k > 0 {
                o.out.push(',');
            }
            push_decimal(o.out, d);
        }
        o.out.push(']');
        o.num("elements", t.elements);
        o.num("byteOffset", tensor.offset);
        o.num("byteLength", tensor.length);
        o.str("layout", t.layout.as_deref());
        o.num("blockSize", u64::from(t.block_size));
        o.str("quant", Some(t.quant.name()));
        o.num("quantScheme", u64::from(t.quant.scheme()));
        o.opt_num("axis", axis.map(u64::from));
        o.num("groupSize", u64::from(group_size));
        o.opt_num("scale", scales.map(|j| (first + j) as u64));
        o.str("scaleName", name_of(scales));
        o.opt_num("outer", outer.map(|j| (first + j) as u64));
        o.str("outerName", name_of(outer));
        o.num("elementAlign", align);
        o.key("aligned");
        o.out
            .push_str(if base.wrapping_add(tensor.offset).is_multiple_of(align) {
                "true"
            } else {
                "false"
            });
        o.out.push('}');
    }
}

/// The typed array for a dtype, and its element size.
fn array_type(dtype: Option<Dtype>) -> (&'static str, usize) {
    match dtype {
        Some(Dtype::F64) => ("Float64Array", 8),
        Some(Dtype::F32) => ("Float32Array", 4),
        Some(Dtype::F16) if has_float16() => ("Float16Array", 2),
        Some(Dtype::F16 | Dtype::Bf16 | Dtype::U16) => ("Uint16Array", 2),
        Some(Dtype::I16) => ("Int16Array", 2),
        Some(Dtype::I32) => ("Int32Array", 4),
        Some(Dtype::U32) => ("Uint32Array", 4),
        Some(Dtype::I64) => ("BigInt64Array", 8),
        Some(Dtype::U64) => ("BigUint64Array", 8),
        Some(Dtype::I8) => ("Int8Array", 1),
        _ => ("Uint8Array", 1),
    }
}

#[wasm_bindgen]
extern "C" {
    /// The global object, where the typed arrays' constructors are (one
    /// import: `js_sys::global` looks in four places).
    #[wasm_bindgen(thread_local_v2, js_name = globalThis)]
    static GLOBAL: Object;
}

fn global(name: &str) -> Result<JsValue, JsValue> {
    GLOBAL.with(|global| Reflect::get(global, &JsValue::from_str(name)))
}

fn has_float16() -> bool {
    global("Float16Array").is_ok_and(|c| c.is_function())
}

fn constructor(name: &str) -> Result<Function, JsValue> {
    global(name)?
        .dyn_into::<Function>()
        .map_err(|_| refusal("WrongElementType", "this engine has no such typed array"))
}

fn host_is_little_endian() -> bool {
    let probe = Uint8Array::from(&[1u8, 0][..]);
    js_sys::Uint16Array::new(&probe.buffer()).get_index(0) == 1
}
