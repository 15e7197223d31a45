//! The JS layer in a JS engine, through wasm-bindgen-test: in node, and in
//! headless Chromium with `WASM_BINDGEN_USE_BROWSER=1` (chromedriver):
//!
//!     cargo test -p kiln-wasm --target wasm32-unknown-unknown --test wasm
//!
//! Every golden case's verdict and code as the thrown JS error's `code`;
//! the zero-copy proof (the view's `buffer` is the file's buffer and sees
//! writes to it); each dtype's typed array; the copy of a misaligned
//! payload; views that survive wasm memory growth; a detached buffer
//! refused; tensor facts whose names JSON must escape, in the JSON form. tests/e2e/module.test.mjs
//! runs the same from plain JS.

#![cfg(target_arch = "wasm32")]

use js_sys::{Array, Reflect, Uint8Array};
use kiln_nostd::Dtype;
use kiln_nostd::{to_frame_vec, to_vec, Directory, Frozen, TensorSpec, Tensors};
use kiln_wasm::KilnFile;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).expect("property")
}

/// Bytes in a fresh JS ArrayBuffer, as `File.arrayBuffer()` gives them.
fn js_bytes(bytes: &[u8]) -> Uint8Array {
    Uint8Array::from(bytes)
}

/// The options object `{ type, framed, cap }`.
fn opts(ty: &str, framed: bool, cap: Option<f64>) -> JsValue {
    let o = js_sys::Object::new();
    Reflect::set(&o, &"type".into(), &ty.into()).expect("set");
    Reflect::set(&o, &"framed".into(), &framed.into()).expect("set");
    if let Some(cap) = cap {
        Reflect::set(&o, &"cap".into(), &cap.into()).expect("set");
    }
    o.into()
}

fn tensors(file: &KilnFile) -> Array {
    file.tensors().expect("tensors").dyn_into().expect("array")
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

#[wasm_bindgen_test]
fn every_golden_case_gives_its_code_as_a_js_error() {
    let cases = js_sys::JSON::parse(include_str!("../../spec/kiln-v2-cases.json")).expect("json");
    let cases: Array = cases.dyn_into().expect("array");
    assert_eq!(cases.length(), 256);
    for case in cases.iter() {
        let name = get(&case, "name").as_string().expect("name");
        let bytes = js_bytes(&unhex(&get(&case, "hex").as_string().expect("hex")));
        let ty = get(&case, "type").as_string().expect("type");
        let framed = get(&case, "framed").as_bool().expect("framed");
        let cap = get(&case, "cap").as_f64();
        let expect = get(&case, "expect").as_string().expect("expect");
        let got = match KilnFile::open(&bytes, opts(&ty, framed, cap)) {
            Ok(_) => "accept".to_string(),
            Err(e) => {
                assert!(e.is_instance_of::<js_sys::Error>(), "{name}");
                assert!(get(&e, "offset").as_f64().is_some(), "{name}: offset");
                get(&e, "code").as_string().expect("code")
            }
        };
        assert_eq!(got, expect, "{name}");
    }
}

#[derive(Frozen)]
struct Message<'a> {
    id: i64,
    name: &'a str,
    batch: Directory<'a>,
}

fn message(name: &str) -> Vec<u8> {
    let w = [1.0f32, -2.0, 0.5, 4.0];
    let block = to_vec(&Tensors(&[TensorSpec::from_host(&[2, 2], &w).named("w")])).expect("block");
    let batch = Directory::parse(&block).expect("parse");
    to_frame_vec(&Message {
        id: -7,
        name,
        batch,
    })
    .expect("message")
}

const TYPE: &str = "struct{id:i64,name:str,batch:tensors,}";

#[wasm_bindgen_test]
fn a_view_is_the_files_own_buffer_and_sees_writes() {
    // id (8) + "abcd" (4 + 4) after the frame: the block, and so the f32
    // payload, is 4-aligned.
    let bytes = js_bytes(&message("abcd"));
    let file = KilnFile::open(&bytes, opts(TYPE, true, None)).expect("open");
    let t = tensors(&file).get(0);
    let offset = get(&t, "offset").as_f64().expect("offset") as u32;
    assert_eq!(get(&t, "in_place"), JsValue::TRUE);
    let view = file.view(0).expect("view");
    assert_eq!(get(&view, "copied"), JsValue::FALSE);
    let array: js_sys::Float32Array = get(&view, "array").dyn_into().expect("Float32Array");
    assert_eq!(JsValue::from(array.buffer()), JsValue::from(bytes.buffer()));
    assert_eq!(array.to_vec(), [1.0, -2.0, 0.5, 4.0]);
    // A write to the file's bytes shows through the view.
    bytes.set_index(offset + 3, 0x40); // 1.0 (3f800000) becomes 4.0 (40800000)
    assert_eq!(array.get_index(0), 4.0);
    // Only bytes outside payload interiors went into wasm memory, and a
    // later call that grows wasm memory leaves the view intact.
    let run = vec![0u8; 4 + (8 << 20)];
    let mut run = run;
    run[..4].copy_from_slice(&(8u32 << 20).to_le_bytes());
    let grown = KilnFile::open(
        &js_bytes(&run),
        opts("list<u8>", false, Some(16.0 * 1048576.0)),
    )
    .expect("open");
    drop(grown);
    assert_eq!(array.length(), 4);
    assert_eq!(array.get_index(1), -2.0);
}

#[wasm_bindgen_test]
fn a_misaligned_payload_is_a_copy_that_says_so() {
    let bytes = js_bytes(&message("abc"));
    let file = KilnFile::open(&bytes, opts(TYPE, true, None)).expect("open");
    let view = file.view(0).expect("view");
    assert_eq!(get(&view, "copied"), JsValue::TRUE);
    assert!(get(&view, "reason")
        .as_string()
        .expect("reason")
        .starts_with("misaligned"));
    let array: js_sys::Float32Array = get(&view, "array").dyn_into().expect("Float32Array");
    assert_ne!(JsValue::from(array.buffer()), JsValue::from(bytes.buffer()));
    assert_eq!(array.to_vec(), [1.0, -2.0, 0.5, 4.0]);
}

/// The whole JSON form is the inspector's (feature `inspector`); a
/// converted model needs no type, as `kiln check` needs none.
#[cfg(feature = "inspector")]
#[wasm_bindgen_test]
fn the_json_form_is_the_models() {
    let bytes = js_bytes(&message("abc"));
    let file = KilnFile::open(&bytes, opts(TYPE, true, None)).expect("open");
    let json = js_sys::JSON::parse(&file.json().expect("json")).expect("parse");
    assert_eq!(get(&json, "format"), JsValue::from_str("kiln"));
    let kiln = get(&json, "kiln");
    assert_eq!(get(&kiln, "type"), JsValue::from_str(TYPE));
    let listed: Array = get(&json, "tensors").dyn_into().expect("array");
    assert_eq!(listed.length(), 1);
    assert_eq!(get(&listed.get(0), "path"), JsValue::from_str("batch"));
}

#[wasm_bindgen_test]
fn every_dtype_has_its_typed_array() {
    let has_f16 =
        Reflect::get(&js_sys::global(), &"Float16Array".into()).is_ok_and(|c| c.is_function());
    let f16_array = if has_f16 {
        "Float16Array"
    } else {
        "Uint16Array"
    };
    let cases: [(Dtype, &str, usize); 19] = [
        (Dtype::F64, "Float64Array", 8),
        (Dtype::F32, "Float32Array", 4),
        (Dtype::F16, f16_array, 2),
        (Dtype::Bf16, "Uint16Array", 2),
        (Dtype::F8E4M3, "Uint8Array", 1),
        (Dtype::F8E5M2, "Uint8Array", 1),
        (Dtype::Bool, "Uint8Array", 1),
        (Dtype::I8, "Int8Array", 1),
        (Dtype::U8, "Uint8Array", 1),
        (Dtype::I16, "Int16Array", 2),
        (Dtype::U16, "Uint16Array", 2),
        (Dtype::I32, "Int32Array", 4),
        (Dtype::U32, "Uint32Array", 4),
        (Dtype::I64, "BigInt64Array", 8),
        (Dtype::U64, "BigUint64Array", 8),
        (Dtype::I4, "Uint8Array", 1),
        (Dtype::U4, "Uint8Array", 1),
        (Dtype::E2M1, "Uint8Array", 1),
        (Dtype::E8M0, "Uint8Array", 1),
    ];
    // Every dtype with 4 elements whose bytes are 1, 2, 3, ...
    let payloads: Vec<Vec<u8>> = cases
        .iter()
        .map(|(d, _, w)| match d {
            Dtype::I4 | Dtype::U4 | Dtype::E2M1 => vec![0x21, 0x43],
            Dtype::Bool => vec![1, 0, 1, 1],
            _ => (1..=(4 * w) as u8).collect(),
        })
        .collect();
    let specs: Vec<TensorSpec<'_>> = cases
        .iter()
        .zip(&payloads)
        .map(|((d, _, _), p)| TensorSpec::new(*d, &[4], p))
        .collect();
    let bytes = js_bytes(&to_vec(&Tensors(&specs)).expect("block"));
    let file = KilnFile::open_directory(&bytes).expect("open");
    for (i, (dtype, want, width)) in cases.iter().enumerate() {
        let view = file.view(i as u32).expect("view");
        let array = get(&view, "array");
        let ctor = get(&get(&array, "constructor"), "name")
            .as_string()
            .expect("name");
        assert_eq!(ctor, *want, "{dtype:?}");
        assert_eq!(get(&view, "copied"), JsValue::FALSE);
        assert_eq!(get(&array, "buffer"), JsValue::from(bytes.buffer()));
        let len = get(&array, "length").as_f64().expect("length") as usize;
        assert_eq!(len * width, payloads[i].len(), "{dtype:?}");
        let widened = file.widen(i as u32, 0.0, 4.0).expect("widen").to_vec();
        assert_eq!(widened.len(), 4, "{dtype:?}");
    }
    // Known display values: u4 1 2 3 4, e2m1 0.5 1 1.5 2, e8m0 2^(1-127)...
    assert_eq!(
        file.widen(16, 0.0, 4.0).expect("u4").to_vec(),
        [1.0, 2.0, 3.0, 4.0]
    );
    assert_eq!(
        file.widen(17, 1.0, 9.0).expect("e2m1").to_vec(),
        [1.0, 1.5, 2.0]
    );
    assert_eq!(file.widen(15, 0.0, 2.0).expect("i4").to_vec(), [1.0, 2.0]);
    assert_eq!(
        file.widen(1, 0.0, 1.0).expect("f32").to_vec()[0],
        f32::from_le_bytes([1, 2, 3, 4])
    );
}

#[wasm_bindgen_test]
fn a_detached_buffer_is_refused_not_read_as_empty() {
    let bytes = js_bytes(&message("abcd"));
    let file = KilnFile::open(&bytes, opts(TYPE, true, None)).expect("open");
    let options = js_sys::Object::new();
    Reflect::set(&options, &"transfer".into(), &Array::of1(&bytes.buffer())).expect("set");
    let clone =
        Reflect::get(&js_sys::global(), &"structuredClone".into()).expect("structuredClone");
    let clone: js_sys::Function = clone.dyn_into().expect("function");
    clone
        .call2(&JsValue::NULL, &bytes.buffer(), &options)
        .expect("transfer");
    let err = file.view(0).expect_err("refused");
    assert_eq!(get(&err, "code"), JsValue::from_str("Detached"));
}

#[wasm_bindgen_test]
fn tensor_facts_keep_every_name_and_number_as_the_file_has_them() {
    // Names that JSON text must escape (a quote, a backslash, control
    // characters) beside non-ASCII: the facts come to JS as one JSON text.
    let names = [
        "q\"uote",
        "back\\slash",
        "tab\tnl\n\u{1}",
        "é → 名",
        "plain",
    ];
    let w = [0.5f32; 4];
    let specs: Vec<TensorSpec<'_>> = names
        .iter()
        .map(|n| TensorSpec::from_host(&[2, 2], &w).named(n))
        .collect();
    let block = to_vec(&Tensors(&specs)).expect("block");
    let file = KilnFile::open(&js_bytes(&block), JsValue::UNDEFINED).expect("open");
    let tensors = tensors(&file);
    assert_eq!(tensors.length() as usize, names.len());
    let dir = Directory::parse(&block).expect("parse");
    for i in 0..names.len() {
        let t = tensors.get(i as u32);
        let view = dir.get(i).expect("tensor");
        let name = view.name().expect("named");
        assert!(names.contains(&name));
        assert_eq!(get(&t, "name").as_string().as_deref(), Some(name));
        assert_eq!(get(&t, "index").as_f64(), Some(i as f64));
        assert_eq!(get(&t, "dtype").as_string().as_deref(), Some("f32"));
        let shape: Array = get(&t, "shape").dyn_into().expect("shape array");
        assert_eq!(shape.to_vec(), [JsValue::from(2), JsValue::from(2)]);
        assert_eq!(
            get(&t, "offset").as_f64(),
            Some(view.byte_range().start as f64)
        );
        assert_eq!(get(&t, "bytes").as_f64(), Some(16.0));
        assert_eq!(get(&t, "layout"), JsValue::NULL);
        assert_eq!(get(&t, "quant"), JsValue::NULL);
        assert_eq!(get(&t, "in_place"), JsValue::TRUE);
    }
}
