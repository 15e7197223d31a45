//! The `#[wasm_bindgen]` layer: the core's inspection model handed to
//! JavaScript in its one JSON form, the opener's steps, the typed-array
//! views, and errors as JS `Error` objects. No format logic lives here.

use alloc::string::String;

use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use kiln_nostd::inspect::{InPlace, Inspection, KilnOpener, ReadStats, TensorDtype, TensorFacts};
use kiln_nostd::Dtype;
use kiln_nostd::{CompiledType, Detail, Error, Limits, TOOL_NODES};
use wasm_bindgen::prelude::*;

use crate::open;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** One tensor: the JSON form of `kiln inspect --json` (spec/json.md, section 8), the same text for the same file. */
export interface TensorInfo {
  /** The tensor's number in the file, in wire order (what `view`, `widen`, `elementBytes` take). */
  index: number;
  name: string | null;
  /** Its directory in `directories()`, and its index there (what quantization links use). */
  directory: number;
  index_in_directory: number;
  /** Path of its `tensors` value in the message: "" for a bare directory, "batch", "layers[2].w"; null for a safetensors or GGUF file. */
  path: string | null;
  /** The source file, in a model of several files. */
  file: string | null;
  /** "f32", "bf16", ...; a ggml block type by its name ("Q4_K"); a dtype Kiln lacks by the format's name ("F4"). */
  dtype: string;
  /** The Kiln dtype code, null for a dtype Kiln lacks. */
  dtype_code: number | null;
  layout: string | null;
  block_size: number;
  shape: (number | string)[];
  elements: number | string | null;
  /** Absolute payload offset in the file, and its length. */
  offset: number | string;
  bytes: number | string;
  quant: null | { scheme: string; axis: number; group_size: number; scales: number | null; scales_name: string | null; outer: number | null; outer_name: string | null };
  /** Whether the payload can be viewed in place in a memory map of the file, and why not. */
  in_place: boolean;
  not_in_place: string | null;
}

/** One `tensors` value of the file (the JSON form). */
export interface DirectoryInfo {
  path: string | null;
  file: string | null;
  offset: number; bytes: number; payload_offset: number;
  tensors: number; named: boolean; names_sorted: boolean;
}

/** What the file is (the JSON form's first members). */
export interface FileHeader {
  file: string;
  /** "kiln", "safetensors" or "gguf". */
  format: string;
  bytes: number;
  files: { name: string; bytes: number }[];
  kiln: null | { type: string; framed: boolean; hash: string; converted_from: string | null };
  gguf: null | { version: number; alignment: number };
}

/** What an open read: bytes, requests, payload bytes skipped (never read), the checker's scratch in wasm memory. */
export interface ReadStats { bytes: number; requests: number; skipped: number; scratch: number }

/** How to read a file: each left out to let the bytes decide, as `kiln check` does. */
export interface OpenOptions {
  /** Type text; a bare directory, a converted model of either conversion type and a framed value of a known hash need none. */
  type?: string;
  framed?: boolean;
  /** Both caps (default 16,777,216; the wire maximum for a converted model). */
  cap?: number;
  /** What the model calls the file (its `file` member). */
  name?: string;
  /** Stops the open: no read starts after it fires, and it is passed to `read`. */
  signal?: AbortSignal;
}

/** Reads `length` bytes at `offset` of the file: a `Uint8Array`, or a promise of one (`blob.slice(...).arrayBuffer()`, a `fetch` with `Range`). */
export type ReadRange = (offset: number, length: number, signal?: AbortSignal) => Uint8Array | Promise<Uint8Array>;

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
  /** One of FRAME LIMIT EOF TYPE UTF8 TRAILING SCHEMA DEPTH, the format's own code (safetensors, GGUF), or a refusal name. */
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
  /** A frame hash no known type has. */
  found?: string;
}
"#;

#[wasm_bindgen(inline_js = r#"
export async function drive(opener, read, signal) {
  const stop = () => Object.assign(new Error('the open was cancelled'), { name: 'KilnError', code: 'Aborted', fault: 'the open was cancelled' });
  try {
    for (;;) {
      if (signal?.aborted) throw stop();
      const ranges = opener.next();
      if (ranges.length === 0) return opener.finish();
      // Every range the opener names now is in flight together.
      const got = await Promise.all(ranges.map(([at, len]) => read(at, len, signal)));
      if (signal?.aborted) throw stop();
      for (let i = 0; i < ranges.length; i++) opener.give(ranges[i][0], got[i]);
    }
  } catch (e) {
    try { opener.free(); } catch { /* finish consumed it */ }
    throw e;
  }
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = drive)]
    fn drive_steps(opener: JsValue, read: &Function, signal: &JsValue) -> Promise;
}

/// Drives an opener (an object with `next()`, `give(offset, bytes)` and
/// `finish()`: the core module's `KilnOpener` or the inspector's) over
/// `read` until it finishes: the promise of what `finish()` returns. Every
/// range `next()` names is read at once; `signal` (an `AbortSignal`, or
/// `undefined`) stops it between reads and goes to `read`.
pub fn drive(opener: JsValue, read: &Function, signal: &JsValue) -> Promise {
    drive_steps(opener, read, signal)
}

pub(crate) fn set(target: &Object, key: &str, value: JsValue) {
    // Setting a data property on a plain object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), &value);
}

pub(crate) fn num(v: impl Into<f64>) -> JsValue {
    JsValue::from_f64(v.into())
}

/// Appends `n` in decimal (without `core::fmt`, which the module leaves
/// out).
fn push_decimal(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

/// A JS `Error` with `code`, `offset`, `tensor` and `fault`.
pub fn error_value(
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
pub fn kiln_error(e: &Error) -> JsValue {
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
        Detail::UnknownHash { found } => {
            let mut hex = String::from("0x");
            for shift in (0..16).rev() {
                let digit = ((found >> (shift * 4)) & 15) as u8;
                hex.push(char::from(if digit < 10 {
                    b'0' + digit
                } else {
                    b'a' + digit - 10
                }));
            }
            set(o, "found", JsValue::from_str(&hex));
        }
        _ => {}
    }
}

/// A dtype code by its name (`f32`), any other as `opaque(4108)`: the
/// dtypes of an error.
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

pub(crate) fn refusal(code: &str, message: &str) -> JsValue {
    error_value(code, message, None, None, message)
}

/// A JSON text the model wrote, as JS values.
pub(crate) fn parsed(json: kiln_nostd::Result<String>) -> Result<JsValue, JsValue> {
    let text = json.map_err(|e| kiln_error(&e))?;
    js_sys::JSON::parse(&text)
}

/// What the options object says: type text, framing, caps, name.
pub struct OpenOptions {
    /// `type`.
    pub type_text: Option<String>,
    /// `framed`.
    pub framed: Option<bool>,
    /// `cap`.
    pub limits: Option<Limits>,
    /// `name`.
    pub name: String,
}

impl OpenOptions {
    /// Reads `options` (an object, or `undefined`).
    pub fn read(options: &JsValue) -> Result<OpenOptions, JsValue> {
        let get = |key: &str| {
            if options.is_object() {
                Reflect::get(options, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
            } else {
                JsValue::UNDEFINED
            }
        };
        let limits = match get("cap").as_f64() {
            None => None,
            Some(c) if c >= 0.0 && c == (c as u64) as f64 => {
                Some(Limits::uniform_checked(c as u64).map_err(|e| kiln_error(&e))?)
            }
            Some(_) => return Err(refusal("BadLimits", "cap is not a whole number")),
        };
        Ok(OpenOptions {
            type_text: get("type").as_string(),
            framed: get("framed").as_bool(),
            limits,
            name: get("name").as_string().unwrap_or_default(),
        })
    }

    /// The core's opener of a Kiln file of `len` bytes, read as these
    /// options and its first bytes say.
    pub fn opener(&self, len: u64) -> Result<KilnOpener, JsValue> {
        KilnOpener::recognising(
            &self.name,
            len,
            self.type_text.as_deref(),
            self.framed,
            self.limits,
        )
        .map_err(|e| kiln_error(&e))
    }
}

/// A file length from a JS number: whole and not negative.
pub fn length_of(byte_length: f64) -> Result<u64, JsValue> {
    if byte_length >= 0.0 && byte_length == (byte_length as u64) as f64 {
        Ok(byte_length as u64)
    } else {
        Err(refusal("BadLength", "byteLength is not a whole number"))
    }
}

/// Ranges as `[[offset, length], ...]`.
pub fn ranges_value(ranges: &[core::ops::Range<u64>]) -> Array {
    ranges
        .iter()
        .map(|r| {
            JsValue::from(Array::of2(
                &JsValue::from_f64(r.start as f64),
                &JsValue::from_f64((r.end - r.start) as f64),
            ))
        })
        .collect()
}

/// The caller's bytes as a [`kiln_nostd::stream::ReadAt`].
struct Bytes<'a>(&'a Uint8Array);

impl kiln_nostd::stream::ReadAt for Bytes<'_> {
    fn size(&self) -> kiln_nostd::Result<u64> {
        Ok(u64::from(self.0.length()))
    }
    fn read_at(&mut self, offset: u64, out: &mut [u8]) -> kiln_nostd::Result<()> {
        let end = offset.saturating_add(out.len() as u64);
        if end > u64::from(self.0.length()) {
            return Err(Error::refused(
                kiln_nostd::Refusal::Io,
                "read outside the buffer",
            ));
        }
        self.0.subarray(offset as u32, end as u32).copy_to(out);
        Ok(())
    }
}

/// The steps of opening a Kiln file by ranges, for a caller that reads
/// them itself: `next()` names the ranges to read (`[[offset, length]]`,
/// none when done), `give(offset, bytes)` takes each, `finish()` gives
/// the `KilnFile`. `KilnFile.openReader` drives it over a read function.
#[wasm_bindgen(js_name = KilnOpener)]
pub struct JsKilnOpener {
    inner: KilnOpener,
}

#[wasm_bindgen(js_class = KilnOpener)]
impl JsKilnOpener {
    /// An opener of a file of `byteLength` bytes, read as `options` and
    /// its first bytes say.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(js_name = byteLength)] byte_length: f64,
        #[wasm_bindgen(unchecked_param_type = "OpenOptions")] options: JsValue,
    ) -> Result<JsKilnOpener, JsValue> {
        let options = OpenOptions::read(&options)?;
        Ok(JsKilnOpener {
            inner: options.opener(length_of(byte_length)?)?,
        })
    }

    /// The ranges to read next, `[[offset, length], ...]`; none once the
    /// check is done. A fault of the file throws its `KilnError`.
    #[wasm_bindgen(js_name = next, unchecked_return_type = "[number, number][]")]
    pub fn next_reads(&mut self) -> Result<Array, JsValue> {
        let next = self.inner.next_read().map_err(|e| kiln_error(&e))?;
        Ok(ranges_value(next.as_slice()))
    }

    /// The bytes of a range `next()` named, read at `offset`.
    pub fn give(&mut self, offset: f64, bytes: &[u8]) -> Result<(), JsValue> {
        self.inner
            .give(offset as u64, bytes)
            .map_err(|e| kiln_error(&e))
    }

    /// The file, once `next()` names no range.
    pub fn finish(self) -> Result<KilnFile, JsValue> {
        let (model, stats) = self.inner.finish().map_err(|e| kiln_error(&e))?;
        Ok(KilnFile::from_parts(model, stats, None))
    }
}

/// A file that passed every check: its inspection model, what its open
/// read, and its bytes when they are in memory (they stay in the caller's
/// buffer).
#[wasm_bindgen]
pub struct KilnFile {
    bytes: Option<Uint8Array>,
    model: Inspection,
    stats: ReadStats,
}

#[wasm_bindgen]
impl KilnFile {
    /// Checks `bytes` as one Kiln value, read as `options` and the bytes
    /// say: a bare directory, a converted model of either conversion
    /// type and a framed value of a known hash need no type (as `kiln
    /// check`). Throws a `KilnError` when the bytes are not one valid
    /// value. The bytes are not copied: keep them unchanged while the file
    /// is open.
    pub fn open(
        bytes: &Uint8Array,
        #[wasm_bindgen(unchecked_param_type = "OpenOptions")] options: JsValue,
    ) -> Result<KilnFile, JsValue> {
        let options = OpenOptions::read(&options)?;
        // In memory every range is there: each read copies just it.
        let (model, stats) = kiln_nostd::inspect::open_read_at(
            &options.name,
            &mut Bytes(bytes),
            options.type_text.as_deref(),
            options.framed,
            options.limits,
        )
        .map_err(|e| kiln_error(&e))?;
        Ok(KilnFile::from_parts(model, stats, Some(bytes.clone())))
    }

    /// Checks a file of `byteLength` bytes that is not in memory, reading
    /// only the ranges the checker needs through `read(offset, length,
    /// signal)`, which returns those bytes (a `Uint8Array`, or a promise of
    /// one): the promise of the `KilnFile`. Ranges known together are in
    /// flight together; payload interiors are never read. Memory stays
    /// bounded whatever the file's size. `view` is then refused;
    /// `elementBytes` says which bytes hold elements, `widenBytes` widens
    /// them.
    #[wasm_bindgen(js_name = openReader, unchecked_return_type = "Promise<KilnFile>")]
    pub fn open_reader(
        #[wasm_bindgen(js_name = byteLength)] byte_length: f64,
        #[wasm_bindgen(unchecked_param_type = "ReadRange")] read: &Function,
        #[wasm_bindgen(unchecked_param_type = "OpenOptions")] options: JsValue,
    ) -> Result<Promise, JsValue> {
        let signal = if options.is_object() {
            Reflect::get(&options, &JsValue::from_str("signal")).unwrap_or(JsValue::UNDEFINED)
        } else {
            JsValue::UNDEFINED
        };
        let opener = JsKilnOpener::new(byte_length, options)?;
        Ok(drive(opener.into(), read, &signal))
    }

    /// A bare tensor directory (`tensors`, not framed).
    #[wasm_bindgen(js_name = openDirectory)]
    pub fn open_directory(bytes: &Uint8Array) -> Result<KilnFile, JsValue> {
        let o = Object::new();
        set(&o, "type", JsValue::from_str("tensors"));
        set(&o, "framed", JsValue::FALSE);
        KilnFile::open(bytes, o.into())
    }

    /// The file's bytes: the caller's own `Uint8Array` (`undefined` for a
    /// file opened by ranges).
    #[wasm_bindgen(getter)]
    pub fn bytes(&self) -> Option<Uint8Array> {
        self.bytes.clone()
    }

    /// What the file is: the first members of its JSON form.
    #[wasm_bindgen(getter, unchecked_return_type = "FileHeader")]
    pub fn header(&self) -> Result<JsValue, JsValue> {
        parsed(self.model.header_json())
    }

    /// What the open read.
    #[wasm_bindgen(getter, unchecked_return_type = "ReadStats")]
    pub fn reads(&self) -> Object {
        let o = Object::new();
        set(&o, "bytes", JsValue::from_f64(self.stats.bytes as f64));
        set(
            &o,
            "requests",
            JsValue::from_f64(self.stats.requests as f64),
        );
        set(&o, "skipped", JsValue::from_f64(self.stats.skipped as f64));
        set(&o, "scratch", JsValue::from_f64(self.stats.scratch as f64));
        o
    }

    /// Every tensor, in the model's listing order (a converted model's in
    /// its source file's order), as the JSON form's tensor objects.
    #[wasm_bindgen(unchecked_return_type = "TensorInfo[]")]
    pub fn tensors(&self) -> Result<JsValue, JsValue> {
        // One JSON text parsed once: setting each property from Rust is a
        // call into JS per property, most of the time a file of 10,000
        // tensors took to open.
        parsed(self.model.tensors_json())
    }

    /// The payload of tensor `index` as a typed array over the file's own
    /// buffer, with no copy; a copy only when the payload's absolute
    /// offset is misaligned for the element type (`copied` says so).
    #[wasm_bindgen(unchecked_return_type = "TensorView")]
    pub fn view(&self, index: u32) -> Result<Object, JsValue> {
        let t = self.facts(index)?;
        let bytes = self.live()?;
        let closed = match t.dtype {
            TensorDtype::Kiln(d) => d.closed(),
            TensorDtype::Foreign(_) => None,
        };
        let (ctor_name, width) = array_type(closed);
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
        let copied = !InPlace::on_host(abs as u64, width, true).is_yes();
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
        set(&o, "dtype", JsValue::from_str(&t.dtype_name()));
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
        let out = bytes
            .subarray(range.start as u32, range.end as u32)
            .to_vec();
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
    /// A file from its model, what its open read, and its bytes when in
    /// memory.
    pub fn from_parts(model: Inspection, stats: ReadStats, bytes: Option<Uint8Array>) -> KilnFile {
        KilnFile {
            bytes,
            model,
            stats,
        }
    }

    /// The inspection model.
    pub fn model(&self) -> &Inspection {
        &self.model
    }

    /// The inspection model, to change (the inspector module adds a
    /// converted model's source facts).
    pub fn model_mut(&mut self) -> &mut Inspection {
        &mut self.model
    }

    fn facts(&self, index: u32) -> Result<&TensorFacts, JsValue> {
        self.model.tensors.get(index as usize).ok_or_else(|| {
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
        if Some(u64::from(bytes.length())) != self.model.files.first().map(|f| f.bytes) {
            return Err(refusal(
                "Detached",
                "the file's buffer was detached or transferred: open the file again",
            ));
        }
        Ok(bytes)
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
    CompiledType::<TOOL_NODES>::parse(type_text)
        .map(|ty| ty.hash())
        .map_err(|e| kiln_error(&e))
}

/// The first read of a file opened by ranges, in bytes: the head of most
/// files (a source reading a URL makes it with its first request, which
/// also gives the file's length).
#[wasm_bindgen(js_name = firstRead)]
pub fn first_read() -> f64 {
    kiln_nostd::inspect::FIRST_READ as f64
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

#[cfg(feature = "inspector")]
#[wasm_bindgen(module = "/js/rows.js")]
extern "C" {
    #[wasm_bindgen(js_name = tensorRows)]
    fn rows_of(text: &JsValue, nums: &JsValue) -> JsValue;
}

#[cfg(feature = "inspector")]
#[wasm_bindgen]
impl KilnFile {
    /// `tensors()` as its JSON text in UTF-8, in a buffer of its own: what
    /// a worker transfers to the page (`postMessage(m, [bytes.buffer])`)
    /// instead of a structured clone of one object per tensor.
    #[wasm_bindgen(js_name = tensorsJson)]
    pub fn tensors_json(&self) -> Result<alloc::vec::Vec<u8>, JsValue> {
        self.model
            .tensors_json()
            .map(String::into_bytes)
            .map_err(|e| kiln_error(&e))
    }

    /// The tensors as columns, `[text, nums]`: what `tensorRows()` makes
    /// its rows of, and what a worker transfers to the page (`nums`'
    /// buffer) to make the same rows there with the module's `rows.js`.
    #[wasm_bindgen(js_name = tensorColumns, unchecked_return_type = "[string, Float64Array]")]
    pub fn tensor_columns(&self) -> Result<Array, JsValue> {
        let (text, nums) = self.model.tensor_columns().map_err(|e| kiln_error(&e))?;
        let nums = js_sys::Float64Array::from(nums.as_slice());
        Ok(Array::of2(&JsValue::from(text), &nums))
    }

    /// Every tensor, as `tensors()` gives it, each row an object that
    /// reads its members from columns when asked (`toJSON()` and
    /// `JSON.stringify` give its object of `tensorsJson()`): a file of
    /// 20,000 tensors opens without making 20,000 objects of 17 members.
    /// A row's members are getters: spread `row.toJSON()`, not the row.
    #[wasm_bindgen(js_name = tensorRows, unchecked_return_type = "TensorInfo[]")]
    pub fn tensor_rows(&self) -> Result<JsValue, JsValue> {
        let columns = self.tensor_columns()?;
        Ok(rows_of(&columns.get(0), &columns.get(1)))
    }

    /// How many tensors (without building their objects).
    #[wasm_bindgen(getter, js_name = tensorCount)]
    pub fn tensor_count(&self) -> u32 {
        self.model.tensors.len() as u32
    }

    /// The file's whole JSON form (`spec/json.md`, section 8): the text
    /// `kiln inspect --json` prints for the same file, metadata included
    /// when the open read it (the inspector's `openFile`).
    pub fn json(&self) -> Result<String, JsValue> {
        self.model.json().map_err(|e| kiln_error(&e))
    }

    /// The JSON form's `metadata` and `omitted_values` alone, as one
    /// object (compact): what the inspector shows beside the table,
    /// without the tensors `tensorsJson()` gives.
    #[wasm_bindgen(js_name = metadataJson)]
    pub fn metadata_json(&self) -> Result<String, JsValue> {
        self.model.metadata_json().map_err(|e| kiln_error(&e))
    }
}

#[wasm_bindgen]
impl KilnFile {
    /// Every directory, in file and wire order (the JSON form's objects).
    #[wasm_bindgen(unchecked_return_type = "DirectoryInfo[]")]
    pub fn directories(&self) -> Result<JsValue, JsValue> {
        parsed(self.model.directories_json())
    }
}
