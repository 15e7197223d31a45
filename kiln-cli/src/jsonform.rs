//! The Kiln JSON form (`spec/json.md`) read back: JSON text of a type as
//! a [`Value`]. The type decides every shape; the writer is the core's
//! (`kiln_nostd::json`), and both follow the same table.

use kiln_nostd::inspect::{Path, Seg};
use kiln_nostd::{
    Dtype, DtypeCode, NodeKind, QuantSpec, Scalar, TensorSpec, Tensors, TypeRef, Value, ValueKind,
};

use crate::jsontext::{integer, JsonError, Node, Object, Raw};

// ---------------------------------------------------------------------------
// JSON to values

/// A path in error messages: the value's [`Path`], `$` for the whole
/// value (one syntax with `kiln inspect` and the browser module).
struct At<'p>(&'p Path);

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_root() {
            f.write_str("$")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

fn field(path: &Path, name: &str) -> Path {
    path.child(Seg::Field(name.into()))
}

fn index(path: &Path, i: usize) -> Path {
    path.child(Seg::Index(u32::try_from(i).unwrap_or(u32::MAX)))
}

/// Reads the JSON document `doc` as a value of type `ty`.
pub fn read_document(ty: TypeRef<'_, '_>, doc: &str) -> Result<Value<'static>, JsonError> {
    let raw = Raw::document(doc)?;
    read_value(ty, raw, &Path::root())
}

fn expected(raw: Raw<'_>, path: &Path, what: &str) -> JsonError {
    let at = At(path);
    raw.error(format!("{at}: expected {what}, found {}", raw.kind_name()))
}

fn read_value(ty: TypeRef<'_, '_>, raw: Raw<'_>, path: &Path) -> Result<Value<'static>, JsonError> {
    let at = At(path);
    match ty.kind() {
        NodeKind::Scalar(Scalar::Bool) => match raw.node()? {
            Node::Bool(b) => Ok(Value::new(ValueKind::Bool(b))),
            _ => Err(expected(raw, path, "true or false (bool)")),
        },
        NodeKind::Scalar(Scalar::F32) => {
            read_float(raw, path).map(|x| Value::new(ValueKind::F32(x)))
        }
        NodeKind::Scalar(Scalar::F64) => {
            read_float(raw, path).map(|x| Value::new(ValueKind::F64(x)))
        }
        NodeKind::Scalar(scalar) => {
            let n = integer(raw, &format!("{at} ({})", scalar.name()))?;
            let (lo, hi): (i128, i128) = match scalar {
                Scalar::I8 => (i8::MIN.into(), i8::MAX.into()),
                Scalar::U8 => (0, u8::MAX.into()),
                Scalar::I16 => (i16::MIN.into(), i16::MAX.into()),
                Scalar::U16 => (0, u16::MAX.into()),
                Scalar::I32 => (i32::MIN.into(), i32::MAX.into()),
                Scalar::U32 => (0, u32::MAX.into()),
                Scalar::I64 | Scalar::Int => (i64::MIN.into(), i64::MAX.into()),
                _ => (0, u64::MAX.into()),
            };
            if n < lo || n > hi {
                return Err(raw.error(format!(
                    "{at}: {n} is outside the range of {} ({lo} to {hi})",
                    scalar.name()
                )));
            }
            Ok(Value::new(ValueKind::Integer(n)))
        }
        NodeKind::Str => match raw.node()? {
            Node::String(s) => Ok(Value::new(ValueKind::Str(s.into()))),
            _ => Err(expected(raw, path, "a string (str)")),
        },
        NodeKind::Tensors => read_directory(raw, path),
        NodeKind::List if ty.is_bytes() => match hex_value(raw) {
            Ok(Some(bytes)) => Ok(Value::new(ValueKind::Bytes(bytes.into()))),
            Ok(None) => Err(expected(raw, path, "a hex string (list<u8>)")),
            Err(e) => Err(JsonError::new(
                e.offset,
                format!("{at}: list<u8> is a hex string: {}", e.message),
            )),
        },
        NodeKind::List => {
            let element = ty.element().ok_or_else(|| raw.error("bad type"))?;
            if element.is_zero_size() {
                return read_count_form(raw, path, element);
            }
            let Node::Array(items) = raw.node()? else {
                return Err(expected(raw, path, &format!("an array ({ty})")));
            };
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| read_value(element, item, &index(path, i)))
                .collect::<Result<_, _>>()
                .map(|items| Value::new(ValueKind::List(items)))
        }
        NodeKind::Opt => {
            let element = ty.element().ok_or_else(|| raw.error("bad type"))?;
            if matches!(raw.node()?, Node::Null) {
                return Ok(Value::new(ValueKind::Opt(None)));
            }
            let inner = if element.kind() == NodeKind::Opt {
                let mut obj = Object::new(raw, &format!("{at} (a present {ty})"))?;
                let inner = obj.need("some", &at.to_string())?;
                obj.finish(&at.to_string())?;
                inner
            } else {
                raw
            };
            let inner = read_value(element, inner, path)?;
            Ok(Value::new(ValueKind::Opt(Some(Box::new(inner)))))
        }
        NodeKind::Dict => {
            let element = ty.element().ok_or_else(|| raw.error("bad type"))?;
            let obj = Object::new(raw, &format!("{at} ({ty})"))?;
            obj.into_members()
                .into_iter()
                .map(|(key, item)| {
                    let value = read_value(element, item, &path.child(Seg::Key(key.clone())))?;
                    Ok((key.into(), value))
                })
                .collect::<Result<_, _>>()
                .map(|pairs| Value::new(ValueKind::Dict(pairs)))
        }
        NodeKind::Struct => {
            let what = at.to_string();
            let mut obj = Object::new(raw, &format!("{at} ({ty})"))?;
            let mut fields = Vec::with_capacity(ty.field_count());
            for (name, field_ty) in ty.fields() {
                let item = obj.need(name, &what)?;
                fields.push((
                    name.to_string().into(),
                    read_value(field_ty, item, &field(path, name))?,
                ));
            }
            obj.finish(&what)?;
            Ok(Value::new(ValueKind::Struct(fields)))
        }
    }
}

/// `{"count": N}`: a list of a zero-size element type.
fn read_count_form(
    raw: Raw<'_>,
    path: &Path,
    element: TypeRef<'_, '_>,
) -> Result<Value<'static>, JsonError> {
    let at = At(path);
    let what =
        format!("{at} (a list of {element}, which takes no bytes, written {{\"count\": N}})");
    let mut obj = Object::new(raw, &what)?;
    let count_raw = obj.need("count", &what)?;
    obj.finish(&what)?;
    let count = u32::try_from(integer(count_raw, &format!("{at}.count"))?)
        .map_err(|_| count_raw.error(format!("{at}.count is outside 0 to 4294967295")))?;
    if count == 0 {
        return Ok(Value::new(ValueKind::List(Vec::new())));
    }
    Ok(Value::new(ValueKind::Repeat {
        count,
        element: Box::new(zero_value(element)),
    }))
}

/// The one value of a zero-size type (`struct{}` and structs of such).
fn zero_value(ty: TypeRef<'_, '_>) -> Value<'static> {
    Value::new(ValueKind::Struct(
        ty.fields()
            .map(|(name, field)| (name.to_string().into(), zero_value(field)))
            .collect(),
    ))
}

fn hex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("{} hex digits, an odd number", s.len()));
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    let mut out = Vec::with_capacity(s.len() / 2);
    for (i, pair) in s.as_bytes().chunks_exact(2).enumerate() {
        match (digit(pair[0]), digit(pair[1])) {
            (Some(h), Some(l)) => out.push(h << 4 | l),
            _ => return Err(format!("character {} is not a hex digit", 2 * i)),
        }
    }
    Ok(out)
}

/// A hex string's bytes; a plain string is read in place.
fn hex_value(raw: Raw<'_>) -> Result<Option<Vec<u8>>, JsonError> {
    let text = match raw.plain_str() {
        Some(text) => return Ok(Some(hex(text).map_err(|w| raw.error(w))?)),
        None => match raw.node()? {
            Node::String(s) => s,
            _ => return Ok(None),
        },
    };
    hex(&text).map(Some).map_err(|w| raw.error(w))
}

/// A float's bits from a `"0x…"` string of exactly `digits` hex digits.
fn float_bits(s: &str, digits: usize) -> Option<u64> {
    let h = s.strip_prefix("0x")?;
    (h.len() == digits && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u64::from_str_radix(h, 16).ok())
        .flatten()
}

/// What the JSON form reads alike for `f32` and `f64` (each parses its
/// own decimal text, so a number is rounded once, to its own width).
trait JsonFloat: std::str::FromStr + Copy {
    const NAME: &'static str;
    /// Hex digits of the `"0x…"` bits form.
    const HEX_DIGITS: usize;
    const INFINITY: Self;
    const NEG_INFINITY: Self;
    /// The quiet NaN that `"NaN"` stands for.
    const NAN: Self;
    fn is_infinite(self) -> bool;
    /// From bits that fit the width (`float_bits` read `HEX_DIGITS`).
    fn from_hex_bits(bits: u64) -> Self;
}

impl JsonFloat for f32 {
    const NAME: &'static str = "f32";
    const HEX_DIGITS: usize = 8;
    const INFINITY: f32 = f32::INFINITY;
    const NEG_INFINITY: f32 = f32::NEG_INFINITY;
    const NAN: f32 = f32::from_bits(0x7fc0_0000);
    fn is_infinite(self) -> bool {
        f32::is_infinite(self)
    }
    #[allow(clippy::cast_possible_truncation)] // eight hex digits
    fn from_hex_bits(bits: u64) -> f32 {
        f32::from_bits(bits as u32)
    }
}

impl JsonFloat for f64 {
    const NAME: &'static str = "f64";
    const HEX_DIGITS: usize = 16;
    const INFINITY: f64 = f64::INFINITY;
    const NEG_INFINITY: f64 = f64::NEG_INFINITY;
    const NAN: f64 = f64::from_bits(0x7ff8_0000_0000_0000);
    fn is_infinite(self) -> bool {
        f64::is_infinite(self)
    }
    fn from_hex_bits(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
}

fn read_float<F: JsonFloat>(raw: Raw<'_>, path: &Path) -> Result<F, JsonError> {
    let at = At(path);
    let name = F::NAME;
    match raw.node()? {
        Node::Number(text) => {
            let x: F = text
                .parse()
                .map_err(|_| raw.error(format!("{at}: {text} is not a number")))?;
            if x.is_infinite() {
                return Err(raw.error(format!("{at}: {text} is beyond the range of {name}")));
            }
            Ok(x)
        }
        Node::String(s) => match s.as_str() {
            "Infinity" => Ok(F::INFINITY),
            "-Infinity" => Ok(F::NEG_INFINITY),
            "NaN" => Ok(F::NAN),
            _ => float_bits(&s, F::HEX_DIGITS)
                .map(F::from_hex_bits)
                .ok_or_else(|| {
                    raw.error(format!(
                        "{at}: an {name} is a number, \"Infinity\", \"-Infinity\", \"NaN\" or \
                         its bits as \"0x\" and {} hex digits, not {}",
                        F::HEX_DIGITS,
                        serde_json::to_string(&*s).unwrap_or_default()
                    ))
                }),
        },
        _ => Err(expected(raw, path, &format!("a number ({name})"))),
    }
}

/// One tensor of a JSON directory, owned until the specs borrow it.
struct OwnedTensor {
    name: Option<String>,
    dtype: DtypeCode,
    shape: Vec<u64>,
    layout: Option<String>,
    block_size: u32,
    quant: QuantSpec,
    payload: Vec<u8>,
}

fn small<T: TryFrom<i128>>(raw: Raw<'_>, what: &str) -> Result<T, JsonError> {
    let n = integer(raw, what)?;
    T::try_from(n).map_err(|_| raw.error(format!("{what}: {n} is out of range")))
}

fn opt_string(raw: Raw<'_>, what: &str) -> Result<Option<String>, JsonError> {
    match raw.node()? {
        Node::Null => Ok(None),
        Node::String(s) => Ok(Some(s)),
        _ => Err(raw.error(format!(
            "{what} is a string or null, not {}",
            raw.kind_name()
        ))),
    }
}

fn read_tensor(raw: Raw<'_>, path: &Path) -> Result<OwnedTensor, JsonError> {
    let at = At(path);
    let what = format!("{at} (a tensor)");
    let mut obj = Object::new(raw, &what)?;
    let name = opt_string(obj.need("name", &what)?, &format!("{at}.name"))?;
    let dtype_raw = obj.need("dtype", &what)?;
    let dtype = match dtype_raw.node()? {
        Node::String(s) => Dtype::ALL
            .iter()
            .find(|d| d.name() == s)
            .map(|&d| DtypeCode::Closed(d))
            .ok_or_else(|| dtype_raw.error(format!("{at}.dtype: {s:?} is not a Kiln dtype")))?,
        Node::Number(_) => {
            let code: u16 = small(dtype_raw, &format!("{at}.dtype"))?;
            DtypeCode::from_code(code).ok_or_else(|| {
                dtype_raw.error(format!(
                    "{at}.dtype: {code} is neither a closed dtype (1 to 19) nor opaque (4096 to 32767)"
                ))
            })?
        }
        _ => {
            return Err(expected(
                dtype_raw,
                &field(path, "dtype"),
                "a dtype name or an opaque code",
            ))
        }
    };
    let shape_raw = obj.need("shape", &what)?;
    let Node::Array(dims) = shape_raw.node()? else {
        return Err(expected(
            shape_raw,
            &field(path, "shape"),
            "an array of dimensions",
        ));
    };
    let shape = dims
        .into_iter()
        .enumerate()
        .map(|(i, d)| small::<u64>(d, &format!("{at}.shape[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let layout = opt_string(obj.need("layout", &what)?, &format!("{at}.layout"))?;
    let block_size = small(obj.need("block_size", &what)?, &format!("{at}.block_size"))?;
    let quant_raw = obj.need("quant", &what)?;
    let quant = match quant_raw.node()? {
        Node::Null => QuantSpec::None,
        _ => {
            let qwhat = format!("{at}.quant");
            let mut q = Object::new(quant_raw, &qwhat)?;
            let axis = small(q.need("axis", &qwhat)?, &format!("{qwhat}.axis"))?;
            let group_size = small(
                q.need("group_size", &qwhat)?,
                &format!("{qwhat}.group_size"),
            )?;
            let scales = small(q.need("scales", &qwhat)?, &format!("{qwhat}.scales"))?;
            let outer = match q.take("outer") {
                Some(o) => Some(small(o, &format!("{qwhat}.outer"))?),
                None => None,
            };
            q.finish(&qwhat)?;
            match outer {
                None => QuantSpec::Scales {
                    axis,
                    group_size,
                    scales,
                },
                Some(outer) => QuantSpec::ScalesOuter {
                    axis,
                    group_size,
                    scales,
                    outer,
                },
            }
        }
    };
    let Some(hex_raw) = obj.take("hex") else {
        if obj.take("preview").is_some() {
            return Err(raw.error(format!(
                "{at} is a --preview of a tensor, which has only its first values; \
                 decode without --preview to get JSON that encodes"
            )));
        }
        return Err(raw.error(format!("{what} has no member \"hex\" (its payload)")));
    };
    let payload = match hex_value(hex_raw) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(expected(hex_raw, &field(path, "hex"), "a hex string")),
        Err(e) => return Err(JsonError::new(e.offset, format!("{at}.hex: {}", e.message))),
    };
    obj.finish(&what)?;
    Ok(OwnedTensor {
        name,
        dtype,
        shape,
        layout,
        block_size,
        quant,
        payload,
    })
}

/// A JSON directory as the canonical block.
fn read_directory(raw: Raw<'_>, path: &Path) -> Result<Value<'static>, JsonError> {
    let at = At(path);
    let Node::Array(items) = raw.node()? else {
        return Err(expected(raw, path, "an array of tensors (tensors)"));
    };
    let tensors = items
        .iter()
        .enumerate()
        .map(|(i, item)| read_tensor(*item, &index(path, i)))
        .collect::<Result<Vec<_>, _>>()?;
    let specs: Vec<TensorSpec<'_>> = tensors
        .iter()
        .map(|t| TensorSpec {
            dtype: t.dtype,
            shape: &t.shape,
            name: t.name.as_deref(),
            layout: t.layout.as_deref(),
            block_size: t.block_size,
            quant: t.quant,
            payload: kiln_nostd::Payload::wire(&t.payload),
        })
        .collect();
    let block = kiln_nostd::to_vec(&Tensors(&specs)).map_err(|e| {
        let place = e
            .tensor()
            .and_then(|i| items.get(i as usize))
            .copied()
            .unwrap_or(raw);
        let which = e
            .tensor()
            .map_or(at.to_string(), |i| index(path, i as usize).to_string());
        place.error(format!(
            "{which}: no canonical directory holds this: {}",
            e.fault()
        ))
    })?;
    Ok(Value::new(ValueKind::Tensors(block.into())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_nostd::{CompiledType, Options};

    fn round_trip(ty: &str, doc: &str) -> String {
        let compiled = CompiledType::<256>::parse(ty).unwrap();
        let value = read_document(compiled.root(), doc).unwrap();
        let bytes = compiled.encode_value(&value, Options::BARE).unwrap();
        let back = compiled.decode_value(&bytes, Options::BARE).unwrap();
        kiln_nostd::json::value_text(compiled.root(), &back, kiln_nostd::json::Style::COMPACT)
            .unwrap()
    }

    #[test]
    fn every_kind_round_trips() {
        let ty = "struct{a:i64,b:u8,c:f32,d:f64,e:list<u8>,f:opt<opt<bool>>,g:opt<opt<bool>>,h:opt<opt<bool>>,i:dict<str,uint>,j:list<struct{}>,k:str,}";
        let doc = r#"{"a":"-9223372036854775808","b":255,"c":"0x7fc00001","d":-0.0,"e":"00ff","f":null,"g":{"some":null},"h":{"some":true},"i":{"z":"18446744073709551615","a":"1"},"j":{"count":16777216},"k":"é\n"}"#;
        let expected = r#"{"a":"-9223372036854775808","b":255,"c":"0x7fc00001","d":-0.0,"e":"00ff","f":null,"g":{"some":null},"h":{"some":true},"i":{"a":"1","z":"18446744073709551615"},"j":{"count":16777216},"k":"é\n"}"#;
        assert_eq!(round_trip(ty, doc), expected);
    }

    #[test]
    fn refusals_say_where() {
        let compiled = CompiledType::<64>::parse("struct{a:i64,b:list<u8>,}").unwrap();
        let cases = [
            (r#"{"a":9007199254740993,"b":""}"#, 5, "beyond 2^53-1"),
            (r#"{"a":"1","b":"0g"}"#, 13, "hex"),
            (r#"{"a":"1"}"#, 0, "no member \"b\""),
            (r#"{"a":"1","b":"","a":"2"}"#, 20, "twice"),
            (r#"{"a":"1","b":"","c":1}"#, 20, "unknown member"),
            (r#"{"a":1.5,"b":""}"#, 5, "integer"),
        ];
        for (doc, offset, words) in cases {
            let err = read_document(compiled.root(), doc).unwrap_err();
            assert_eq!(err.offset, offset, "{doc}: {err}");
            assert!(err.message.contains(words), "{doc}: {err}");
        }
    }
}
