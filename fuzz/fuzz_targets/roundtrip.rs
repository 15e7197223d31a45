//! A round trip from structured input (`arbitrary`): a derived struct with
//! strings, lists, a dict, options, a zero-size list and a directory of
//! tensors of every dtype (named or not, closed or opaque) is encoded,
//! framed and bare; the bytes pass `check` of the struct's type text, the
//! typed decoder gives back every field, and `Value` decode and encode
//! give the same bytes.
#![no_main]

use arbitrary::Arbitrary;
use kiln_nostd::{
    check, decode_value, encode_value, encoded_len, from_bytes, from_frame, to_frame_vec, to_vec,
    Directory, Dtype, DtypeCode, Empty, Frozen, Options, TensorSpec, Tensors,
};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct GenTensor {
    dtype: u8,
    dims: Vec<u8>,
    payload: Vec<u8>,
    opaque: bool,
    block: u8,
}

#[derive(Arbitrary, Debug)]
struct Gen {
    id: i64,
    name: String,
    words: Vec<String>,
    flags: Vec<bool>,
    floats: Vec<u32>,
    bytes: Vec<u8>,
    map: Vec<(String, u32)>,
    maybe: Option<Vec<(i16, Option<u8>)>>,
    empties: u16,
    deep: Option<Option<Option<u8>>>,
    named: bool,
    tensors: Vec<GenTensor>,
}

#[derive(Frozen, Debug, PartialEq, Clone)]
struct Point {
    x: i16,
    y: Option<u8>,
}

type Map = heapless::LinearMap<heapless::String<16>, u32, 8>;

/// One struct writes and reads; its directory is built first.
#[derive(Frozen)]
struct Msg<'a> {
    id: i64,
    name: String,
    words: Vec<String>,
    flags: Vec<bool>,
    floats: Vec<f32>,
    bytes: &'a [u8],
    map: Map,
    maybe: Option<Vec<Point>>,
    empties: Vec<Empty>,
    deep: Option<Option<Option<u8>>>,
    batch: Directory<'a>,
}

/// A tensor the builder must accept: payload cut or padded to its dtype
/// and shape, bools 0 or 1, odd packed tails clear.
struct Made {
    dtype: DtypeCode,
    shape: Vec<u64>,
    payload: Vec<u8>,
    block: u32,
    name: String,
}

fn make(i: usize, g: &GenTensor) -> Made {
    let shape: Vec<u64> = g.dims.iter().take(4).map(|d| u64::from(d % 5)).collect();
    let count: u64 = shape.iter().product();
    let mut payload = g.payload.clone();
    let name = format!("t{i}");
    if g.opaque {
        let block = u32::from(g.block % 8) + 1;
        payload.truncate(payload.len() / block as usize * block as usize);
        let code = 4096 + u16::from(g.dtype);
        return Made {
            dtype: DtypeCode::Opaque(code),
            shape,
            payload,
            block,
            name,
        };
    }
    let dtype = Dtype::from_code(u16::from(g.dtype % 19) + 1).expect("codes 1 to 19");
    let len = dtype.byte_length(count).expect("small shapes") as usize;
    payload.resize(len, 0);
    match dtype {
        Dtype::Bool => payload.iter_mut().for_each(|b| *b &= 1),
        Dtype::I4 | Dtype::U4 | Dtype::E2M1 if count % 2 == 1 => {
            if let Some(last) = payload.last_mut() {
                *last &= 0x0F;
            }
        }
        _ => {}
    }
    Made {
        dtype: DtypeCode::Closed(dtype),
        shape,
        payload,
        block: 0,
        name,
    }
}

fn spec<'a>(m: &'a Made, named: bool) -> TensorSpec<'a> {
    let mut s = match m.dtype {
        DtypeCode::Closed(d) => TensorSpec::new(d, &m.shape, &m.payload),
        DtypeCode::Opaque(code) => TensorSpec::opaque(code, "Q4_K", m.block, &m.shape, &m.payload),
    };
    if named {
        s.name = Some(&m.name);
    }
    s
}

fn key(text: &str) -> heapless::String<16> {
    let mut out = heapless::String::new();
    for c in text.chars() {
        if out.push(c).is_err() {
            break;
        }
    }
    out
}

fuzz_target!(|g: Gen| {
    let made: Vec<Made> = g
        .tensors
        .iter()
        .take(6)
        .enumerate()
        .map(|(i, t)| make(i, t))
        .collect();
    let specs: Vec<TensorSpec<'_>> = made.iter().map(|m| spec(m, g.named)).collect();
    let mut map = Map::new();
    for (k, v) in g.map.iter().take(8) {
        let k = key(k);
        if !map.contains_key(&k) {
            map.insert(k, *v).expect("at most 8 keys");
        }
    }
    let maybe: Option<Vec<Point>> = g
        .maybe
        .as_ref()
        .map(|v| v.iter().map(|&(x, y)| Point { x, y }).collect());
    let mut block = vec![0u8; encoded_len(&Tensors(&specs)).expect("a valid directory")];
    let batch = Directory::build(&specs, &mut block).expect("the builder accepts these tensors");
    let out = Msg {
        id: g.id,
        name: g.name.clone(),
        words: g.words.clone(),
        flags: g.flags.clone(),
        floats: g.floats.iter().map(|&b| f32::from_bits(b)).collect(),
        bytes: &g.bytes,
        map: map.clone(),
        maybe: maybe.clone(),
        empties: vec![Empty; usize::from(g.empties)],
        deep: g.deep,
        batch,
    };
    let text = Msg::SCHEMA.to_string();

    for framed in [false, true] {
        let (bytes, options) = if framed {
            (to_frame_vec(&out), Options::FRAMED)
        } else {
            (to_vec(&out), Options::BARE)
        };
        let bytes = bytes.expect("a valid value encodes");
        check(&text, &bytes, options).expect("what the encoder writes, check accepts");
        let back: Msg<'_> = if framed {
            from_frame(&bytes)
        } else {
            from_bytes(&bytes)
        }
        .expect("what the encoder writes, the typed decoder reads");
        assert_eq!(back.id, g.id);
        assert_eq!(back.name, g.name);
        assert_eq!(back.words, g.words);
        assert_eq!(back.flags, g.flags);
        let bits: Vec<u32> = back.floats.iter().map(|f| f.to_bits()).collect();
        assert_eq!(bits, g.floats);
        assert_eq!(back.bytes, &g.bytes[..]);
        assert_eq!(back.map, map);
        assert_eq!(back.maybe, maybe);
        assert_eq!(back.empties.len(), usize::from(g.empties));
        assert_eq!(back.deep, g.deep);
        assert_eq!(back.batch.len(), made.len());
        for (t, m) in back.batch.iter().zip(&made) {
            assert_eq!(t.dtype(), m.dtype);
            assert_eq!(t.shape(), &m.shape[..]);
            assert_eq!(t.bytes(), &m.payload[..]);
            assert_eq!(t.name(), g.named.then_some(m.name.as_str()));
        }
        let value = decode_value(&text, &bytes, options).expect("decode_value agrees");
        assert_eq!(
            encode_value(&text, &value, options).expect("encodes"),
            bytes
        );
    }
});
