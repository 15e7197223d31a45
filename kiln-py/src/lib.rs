//! `kiln_codec._native`: the Rust side of the Python package
//! (`python/kiln_codec`). It renders the core's inspection model, so a
//! model shows the same tensors, dtypes, offsets and metadata in Python as
//! in `kiln inspect` and the browser, and it refuses what `kiln check` and
//! `kiln convert` refuse, with the same code, offset and sentence.
//!
//! What it gives Python is facts, never payload bytes in place: the
//! package maps the file itself (Python's `mmap`) and makes each tensor a
//! numpy array over that map, from the offset and dtype given here. The
//! one copy made here is of a packed dtype's nibbles, one per byte
//! (`Model.unpack`), with the core's packing rule.

use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;

use kiln_cli::api::{self, Failure};
use kiln_nostd::inspect::{InPlace, Inspection, Meta, TensorDtype, TensorFacts};
use kiln_nostd::{Dtype, DtypeCode};
use kiln_nostd::{Value, ValueKind};
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

/// A Python `kiln_codec.KilnError` for a refusal of the command line's
/// operations: `code` the wire code (`EOF`, `FRAME`, ...) or the format's
/// own (`safetensors`, `GGUF`, `conversion`, `unsupported`), `None` for a
/// request that cannot be met (a file that cannot be written, a wrong
/// extension); `offset` the byte, when the fault has one place.
fn kiln_error(py: Python<'_>, failure: Failure) -> PyErr {
    let (code, sentence, offset) = match &failure.invalid {
        Some(i) => (Some(i.code.clone()), i.sentence.clone(), i.offset),
        None => (None, failure.message.clone(), None),
    };
    let made = py
        .import("kiln_codec.errors")
        .and_then(|m| m.getattr("KilnError"))
        .and_then(|class| class.call1((failure.message.clone(), code, offset, sentence)));
    match made {
        Ok(error) => PyErr::from_value(error),
        Err(e) => e,
    }
}

/// How the package gives a tensor's elements.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Access {
    /// A read-only numpy array over the file's map: no copy.
    View,
    /// The elements copied out: a packed dtype unpacked one per byte, or
    /// a payload that cannot be viewed in place (`reason` says why).
    Copy,
}

/// The numpy dtype a Kiln dtype is read as (a name `numpy.dtype` or
/// `ml_dtypes` knows; little-endian, so a view is right on any host) and
/// how.
fn numpy_dtype(d: Dtype) -> &'static str {
    match d {
        Dtype::F64 => "<f8",
        Dtype::F32 => "<f4",
        Dtype::F16 => "<f2",
        Dtype::Bf16 => "bfloat16",
        Dtype::F8E4M3 => "float8_e4m3fn",
        Dtype::F8E5M2 => "float8_e5m2",
        Dtype::E8M0 => "float8_e8m0fnu",
        Dtype::Bool => "bool",
        Dtype::I8 => "i1",
        Dtype::U8 => "u1",
        Dtype::I16 => "<i2",
        Dtype::U16 => "<u2",
        Dtype::I32 => "<i4",
        Dtype::U32 => "<u4",
        Dtype::I64 => "<i8",
        Dtype::U64 => "<u8",
        // Packed: one element per byte once unpacked.
        Dtype::I4 => "i1",
        Dtype::U4 => "u1",
        Dtype::E2M1 => "float4_e2m1fn",
    }
}

/// A Kiln file, mapped and checked, and its inspection model.
#[pyclass(frozen, module = "kiln_codec._native")]
struct Model {
    model: Inspection,
    /// Tensor keys, in the model's listing order, and each key's tensor.
    keys: Vec<String>,
    by_key: HashMap<String, usize>,
    /// The file the facts are of: its device, inode and length, which the
    /// package compares with the file it maps.
    identity: (u64, u64, u64),
    /// The map, for [`Model::unpack`] (the arrays view the package's own).
    map: memmap2::Mmap,
}

/// The keys of the tensors: each tensor's name; a name that more than one
/// directory holds is `PATH/NAME` with the directory's path, and a tensor
/// without a name is `#INDEX` (its index in the model).
fn tensor_keys(model: &Inspection) -> Vec<String> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for t in &model.tensors {
        if let Some(n) = &t.name {
            *seen.entry(n.as_str()).or_default() += 1;
        }
    }
    model
        .listing()
        .map(|i| {
            let t = &model.tensors[i];
            match &t.name {
                Some(n) if seen.get(n.as_str()) == Some(&1) => n.clone(),
                Some(n) => {
                    let path = model
                        .directories
                        .get(t.directory)
                        .and_then(|d| d.path.as_ref())
                        .map(|p| p.text())
                        .unwrap_or_default();
                    format!("{path}/{n}")
                }
                None => format!("#{}", t.index),
            }
        })
        .collect()
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino(), meta.len())
}

#[cfg(not(unix))]
fn identity(meta: &std::fs::Metadata) -> (u64, u64, u64) {
    (0, 0, meta.len())
}

fn io_error(path: &std::path::Path, e: std::io::Error) -> PyErr {
    PyErr::from(std::io::Error::new(
        e.kind(),
        format!("{}: {e}", path.display()),
    ))
}

impl Model {
    fn facts(&self, key: &str) -> PyResult<&TensorFacts> {
        self.by_key
            .get(key)
            .and_then(|&i| self.model.tensors.get(i))
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.to_owned()))
    }
}

#[pymethods]
impl Model {
    /// Maps `path` and checks it as `kiln check` does (every rule of the
    /// format; the type from the frame of a converted model), then reads
    /// its model. Raises `KilnError` for a file `kiln check` refuses.
    #[new]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<Model> {
        let file = File::open(&path).map_err(|e| io_error(&path, e))?;
        let meta = file.metadata().map_err(|e| io_error(&path, e))?;
        // SAFETY: the map is read-only and private to this object; what
        // another process may do to the file while it is mapped (truncate
        // it: a read past its end faults) is what every reader of a
        // memory-mapped file accepts, and the package says so.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io_error(&path, e))?;
        let name = path.to_string_lossy().into_owned();
        let model = py
            .detach(|| api::open_kiln(&map, &name))
            .map_err(|f| kiln_error(py, f))?;
        let keys = tensor_keys(&model);
        let order: Vec<usize> = model.listing().collect();
        let by_key = keys.iter().cloned().zip(order).collect();
        Ok(Model {
            model,
            keys,
            by_key,
            identity: identity(&meta),
            map,
        })
    }

    /// The tensor keys, in the model's order (a converted model's in its
    /// source file's order).
    fn keys(&self) -> Vec<String> {
        self.keys.clone()
    }

    fn __len__(&self) -> usize {
        self.keys.len()
    }

    fn __contains__(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    /// (device, inode, length) of the file the facts are of.
    fn identity(&self) -> (u64, u64, u64) {
        self.identity
    }

    /// What the file is: `format`, `type`, `framed`, `hash`,
    /// `converted_from`, `bytes`.
    fn header<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("format", self.model.format.name())?;
        d.set_item("bytes", self.model.bytes())?;
        if let Some(k) = &self.model.kiln {
            d.set_item("type", &k.type_text)?;
            d.set_item("framed", k.framed)?;
            d.set_item("hash", format!("0x{:016x}", k.hash))?;
            d.set_item("converted_from", k.converted_from.map(|f| f.name()))?;
        }
        Ok(d)
    }

    /// The metadata: `(key, kiln type, value)` triples, each value as
    /// Python values (integers exact, floats, strings, bytes, lists,
    /// dicts); a converted model's are its source's pairs.
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for m in &self.model.metadata {
            list.append((m.key.as_str(), m.type_text.as_str(), meta_value(py, m)?))?;
        }
        Ok(list)
    }

    /// A tensor's facts ([`TensorInfo`]).
    fn info(&self, key: &str) -> PyResult<TensorInfo> {
        let t = self.facts(key)?;
        let (numpy, access, why) = reading(t);
        let array_shape = match t.dtype {
            TensorDtype::Kiln(DtypeCode::Closed(_)) => t.shape.clone(),
            // Quantized blocks and dtypes Kiln lacks: the payload's bytes.
            _ => vec![t.length],
        };
        Ok(TensorInfo {
            key: key.to_owned(),
            name: t.name.clone(),
            index: t.index,
            dtype: t.dtype_name(),
            dtype_code: t.dtype.code(),
            shape: t.shape.clone(),
            elements: t.elements,
            offset: t.offset,
            length: t.length,
            layout: t.layout.clone(),
            block_size: t.block_size,
            numpy_dtype: numpy,
            access: if access == Access::View {
                "view"
            } else {
                "copy"
            },
            in_place: access == Access::View,
            reason: why,
            array_shape,
        })
    }

    /// Elements `first..first + count` of a packed tensor, one per byte
    /// (the core's packing: element 2k in the low nibble of byte k), as
    /// the bytes of the numpy dtype `info` names: an `i4` sign-extended to
    /// `int8`, a `u4` as `uint8`, an `e2m1` as its 4-bit code (the
    /// storage of `ml_dtypes.float4_e2m1fn`).
    fn unpack<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        first: u64,
        count: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let t = self.facts(key)?;
        let TensorDtype::Kiln(DtypeCode::Closed(dtype)) = t.dtype else {
            return Err(pyo3::exceptions::PyTypeError::new_err("not a packed dtype"));
        };
        let elements = t.elements.unwrap_or(0);
        if !dtype.is_packed() || first > elements || count > elements - first {
            return Err(PyIndexError::new_err("elements out of the tensor"));
        }
        let payload = usize::try_from(t.offset)
            .ok()
            .zip(usize::try_from(t.range().end).ok())
            .and_then(|(a, b)| self.map.get(a..b))
            .ok_or_else(|| PyIndexError::new_err("the payload is outside the file"))?;
        let count = usize::try_from(count).map_err(|_| PyIndexError::new_err("too many"))?;
        let first = usize::try_from(first).map_err(|_| PyIndexError::new_err("too many"))?;
        PyBytes::new_with(py, count, |out| {
            for (i, slot) in out.iter_mut().enumerate() {
                let nibble = kiln_nostd::widen::nibble(payload, first + i).unwrap_or(0);
                *slot = match dtype {
                    // Sign-extend the low four bits.
                    Dtype::I4 => (((nibble << 4) as i8) >> 4) as u8,
                    _ => nibble,
                };
            }
            Ok(())
        })
    }

    /// The model's JSON form (`spec/json.md`, section 8): what `kiln
    /// inspect --json` prints for the file.
    fn json(&self) -> PyResult<String> {
        self.model
            .json()
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    }
}

/// One tensor's facts: the JSON form's members (`kiln inspect --json`)
/// and how the package reads it (`numpy_dtype`, `array_shape`, `access`,
/// `reason`).
#[pyclass(frozen, get_all, module = "kiln_codec._native")]
struct TensorInfo {
    /// The key the model lists it under.
    key: String,
    /// Its name, or None.
    name: Option<String>,
    /// Its number in the model (wire order).
    index: usize,
    /// A closed dtype's name (`f32`, `bf16`), a block type (`Q4_K`), or the
    /// source's name for a dtype Kiln lacks.
    dtype: String,
    /// The Kiln dtype code, or None for a dtype Kiln lacks.
    dtype_code: Option<u16>,
    /// Dimensions, outermost first.
    shape: Vec<u64>,
    /// The product of the shape, None past 64 bits.
    elements: Option<u64>,
    /// The payload's absolute offset in the file.
    offset: u64,
    /// The payload's length in bytes.
    length: u64,
    /// An opaque dtype's layout name.
    layout: Option<String>,
    /// An opaque dtype's block bytes (0 otherwise).
    block_size: u32,
    /// The numpy (or ml_dtypes) dtype `tensor` gives.
    numpy_dtype: &'static str,
    /// `"view"` or `"copy"`.
    access: &'static str,
    /// Whether `tensor` is a view of the map.
    in_place: bool,
    /// Why a copy: `"packed"`, `"misaligned"`, `"big-endian host"`.
    reason: Option<&'static str>,
    /// The shape of the array `tensor` gives.
    array_shape: Vec<u64>,
}

#[pymethods]
impl TensorInfo {
    /// The facts as a dict.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("key", &self.key)?;
        d.set_item("name", self.name.as_deref())?;
        d.set_item("index", self.index)?;
        d.set_item("dtype", &self.dtype)?;
        d.set_item("dtype_code", self.dtype_code)?;
        d.set_item("shape", PyTuple::new(py, &self.shape)?)?;
        d.set_item("elements", self.elements)?;
        d.set_item("offset", self.offset)?;
        d.set_item("length", self.length)?;
        d.set_item("layout", self.layout.as_deref())?;
        d.set_item("block_size", self.block_size)?;
        d.set_item("numpy_dtype", self.numpy_dtype)?;
        d.set_item("access", self.access)?;
        d.set_item("in_place", self.in_place)?;
        d.set_item("reason", self.reason)?;
        d.set_item("array_shape", PyTuple::new(py, &self.array_shape)?)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "TensorInfo(key={:?}, dtype={:?}, shape={:?}, offset={}, length={}, access={:?})",
            self.key, self.dtype, self.shape, self.offset, self.length, self.access
        )
    }
}

/// How a tensor is read: its numpy dtype (`uint8` for quantized blocks
/// and foreign dtypes), view or copy, and why not in place.
fn reading(t: &TensorFacts) -> (&'static str, Access, Option<&'static str>) {
    match t.dtype {
        TensorDtype::Kiln(DtypeCode::Closed(d)) if d.is_packed() => {
            (numpy_dtype(d), Access::Copy, Some("packed"))
        }
        TensorDtype::Kiln(DtypeCode::Closed(d)) => match t.in_place {
            InPlace::Yes => (numpy_dtype(d), Access::View, None),
            why => (numpy_dtype(d), Access::Copy, Some(why.reason())),
        },
        _ => ("u1", Access::View, None),
    }
}

/// A metadata entry's value as Python values.
fn meta_value<'py>(py: Python<'py>, m: &Meta) -> PyResult<Bound<'py, PyAny>> {
    let value = m
        .value()
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    python_value(py, &value)
}

fn python_value<'py>(py: Python<'py>, v: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match &v.kind {
        ValueKind::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        ValueKind::Integer(n) => n.into_pyobject(py)?.into_any(),
        ValueKind::F32(x) => f64::from(*x).into_pyobject(py)?.into_any(),
        ValueKind::F64(x) => x.into_pyobject(py)?.into_any(),
        ValueKind::Str(s) => s.as_ref().into_pyobject(py)?.into_any(),
        ValueKind::Bytes(b) | ValueKind::Tensors(b) => PyBytes::new(py, b).into_any(),
        ValueKind::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(python_value(py, item)?)?;
            }
            list.into_any()
        }
        ValueKind::Repeat { count, element } => {
            let one = python_value(py, element)?;
            let list = PyList::empty(py);
            for _ in 0..*count {
                list.append(&one)?;
            }
            list.into_any()
        }
        ValueKind::Opt(None) => py.None().into_bound(py),
        ValueKind::Opt(Some(inner)) => python_value(py, inner)?,
        ValueKind::Dict(pairs) | ValueKind::Struct(pairs) => {
            let d = PyDict::new(py);
            for (k, item) in pairs {
                d.set_item(k.as_ref(), python_value(py, item)?)?;
            }
            d.into_any()
        }
    })
}

/// `kiln check` of `data`: the type, framing and cap from the arguments
/// and, where they are `None`, from the bytes. Returns the canonical type
/// text that was checked; raises `KilnError` for bytes it refuses.
#[pyfunction]
#[pyo3(signature = (data, r#type=None, framed=None, cap=None))]
fn check(
    py: Python<'_>,
    data: &[u8],
    r#type: Option<&str>,
    framed: Option<bool>,
    cap: Option<u32>,
) -> PyResult<String> {
    let owned = r#type.map(str::to_owned);
    py.detach(|| api::check_bytes(data, "data", owned.as_deref(), framed, cap))
        .map(|reading| reading.type_text)
        .map_err(|f| kiln_error(py, f))
}

/// `kiln convert` of `src` to `dst` (`--shards` when `shards`): returns
/// `(tensors, metadata pairs, bytes written)`; raises `KilnError` for what
/// the command line refuses.
#[pyfunction]
#[pyo3(signature = (src, dst, shards=false))]
fn convert(py: Python<'_>, src: PathBuf, dst: PathBuf, shards: bool) -> PyResult<(u64, u64, u64)> {
    py.detach(|| api::convert_paths(&src, &dst, shards))
        .map(|s| (s.tensors as u64, s.metadata as u64, s.written))
        .map_err(|f| kiln_error(py, f))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_class::<TensorInfo>()?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    Ok(())
}
