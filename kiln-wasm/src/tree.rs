//! The message as plain JS values, and a foreign file's metadata pairs:
//! what the inspector shows beside the tensor table (feature
//! `inspector`). Another page that embeds the core reads the tensors'
//! facts and payloads; the decoded tree is the inspector's.

use alloc::string::String;

use js_sys::{Array, Object, Uint8Array};
use kiln_nostd::schema::{NodeKind, Scalar, TypeRef};
use kiln_nostd::{Value, ValueKind};
use wasm_bindgen::prelude::*;

use crate::js::{compile, num, set, KilnFile};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** A metadata pair of a safetensors or GGUF file, for display. */
export interface MetadataPair { key: string; type: string; value: string }

/** A `tensors` field inside `value()`. */
export interface TensorsRef { $tensors: number; path: string; tensorCount: number; firstTensor: number }

export type KilnValue =
  | null | boolean | number | bigint | string | Uint8Array | TensorsRef
  | KilnValue[] | { [key: string]: KilnValue } | { $repeat: number; element: KilnValue };
"#;

#[wasm_bindgen]
impl KilnFile {
    /// The message as plain JS values: integers of 64 bits as BigInt,
    /// `list<u8>` as a `Uint8Array` over the file's bytes, dicts and
    /// structs as objects, `opt` as the value or `null`, and each
    /// `tensors` field as `{ $tensors, path, tensorCount, firstTensor }`.
    #[wasm_bindgen(unchecked_return_type = "KilnValue")]
    pub fn value(&self) -> Result<JsValue, JsValue> {
        let ty = compile(&self.opened.type_text)?;
        Ok(self.js_value(ty.root(), &self.opened.value))
    }

    /// A safetensors or GGUF file's metadata pairs (none for Kiln: its
    /// values are `value()`).
    #[wasm_bindgen(unchecked_return_type = "MetadataPair[]")]
    pub fn metadata(&self) -> Array {
        self.opened
            .metadata
            .iter()
            .map(|[key, ty, value]| {
                let o = Object::new();
                set(&o, "key", JsValue::from_str(key));
                set(&o, "type", JsValue::from_str(ty));
                set(&o, "value", JsValue::from_str(value));
                JsValue::from(o)
            })
            .collect()
    }
}

impl KilnFile {
    /// The JS form of `v`, a value of type `ty`: the type says which
    /// integers are BigInt.
    fn js_value(&self, ty: TypeRef<'_, '_>, v: &Value<'_>) -> JsValue {
        match (&v.kind, ty.kind()) {
            (ValueKind::Integer(n), NodeKind::Scalar(Scalar::I64 | Scalar::Int)) => {
                JsValue::from(*n as i64)
            }
            (ValueKind::Integer(n), NodeKind::Scalar(Scalar::U64 | Scalar::Uint)) => {
                JsValue::from(*n as u64)
            }
            _ => self.js_plain(ty, v),
        }
    }

    fn js_plain(&self, ty: TypeRef<'_, '_>, v: &Value<'_>) -> JsValue {
        let element = ty.element();
        let entries = |pairs: &[(alloc::borrow::Cow<'_, str>, Value<'_>)],
                       types: &mut dyn Iterator<Item = Option<TypeRef<'_, '_>>>|
         -> JsValue {
            let list: Array = pairs
                .iter()
                .zip(types)
                .map(|((k, v), t)| {
                    let value = t.map_or(JsValue::NULL, |t| self.js_value(t, v));
                    JsValue::from(Array::of2(&JsValue::from_str(k), &value))
                })
                .collect();
            // fromEntries defines own properties, so a key "__proto__" is
            // a key like any other.
            Object::from_entries(&list).map_or(JsValue::NULL, JsValue::from)
        };
        match &v.kind {
            ValueKind::Bool(b) => JsValue::from_bool(*b),
            // 32 bits or fewer here (the wider ones are BigInt above): the
            // i64 step keeps the 128-bit float conversion out of the module.
            ValueKind::Integer(n) => JsValue::from_f64(*n as i64 as f64),
            ValueKind::F32(x) => JsValue::from_f64(f64::from(*x)),
            ValueKind::F64(x) => JsValue::from_f64(*x),
            ValueKind::Str(s) => JsValue::from_str(s),
            // The outline keeps the span (length word included); the
            // bytes are the caller's.
            ValueKind::Bytes(_) => Uint8Array::from(
                self.opened
                    .image
                    .get(v.span.start.saturating_add(4)..v.span.end)
                    .unwrap_or(&[]),
            )
            .into(),
            ValueKind::List(items) => items
                .iter()
                .map(|item| element.map_or(JsValue::NULL, |e| self.js_value(e, item)))
                .collect::<Array>()
                .into(),
            ValueKind::Repeat {
                count,
                element: one,
            } => {
                let o = Object::new();
                set(&o, "$repeat", num(*count));
                set(
                    &o,
                    "element",
                    element.map_or(JsValue::NULL, |e| self.js_value(e, one)),
                );
                o.into()
            }
            ValueKind::Opt(inner) => match (inner, element) {
                (Some(inner), Some(e)) => self.js_value(e, inner),
                _ => JsValue::NULL,
            },
            ValueKind::Dict(pairs) => entries(pairs, &mut core::iter::repeat(element)),
            ValueKind::Struct(fields) => entries(fields, &mut ty.fields().map(|(_, t)| Some(t))),
            ValueKind::Tensors(_) => {
                let o = Object::new();
                let dirs = &self.opened.directories;
                // Directories are in wire order: found by their block's start.
                if let Ok(d) = dirs.binary_search_by_key(&v.span.start, |d| d.image_offset) {
                    set(&o, "$tensors", JsValue::from_f64(d as f64));
                    if let Some(dir) = dirs.get(d) {
                        let mut path = String::new();
                        dir.path.write_to(&mut path);
                        set(&o, "path", JsValue::from_str(&path));
                        set(&o, "tensorCount", JsValue::from_f64(dir.count as f64));
                        set(&o, "firstTensor", JsValue::from_f64(dir.first as f64));
                    }
                }
                o.into()
            }
        }
    }
}
