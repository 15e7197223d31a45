//! `#[derive(Frozen)]`: round trips, exact wire bytes, and the schema text,
//! hash and minimum size of derived structs.

use kiln_nostd::frame::hash_of_text;
use kiln_nostd::{
    encoded_len, from_bytes, to_slice, Code, CompiledType, Decode, Directory, Encode, Frozen,
    Refusal, TensorSpec, Tensors,
};

fn encode<T: Encode>(value: &T) -> Vec<u8> {
    let mut buf = vec![0u8; 4096];
    let len = to_slice(value, &mut buf).unwrap().len();
    assert_eq!(encoded_len(value).unwrap(), len);
    buf.truncate(len);
    buf
}

/// Encodes, decodes, and encodes the decoded value again: the same bytes.
fn round_trip<'de, T>(value: &T, buf: &'de mut Vec<u8>) -> T
where
    T: Encode + Decode<'de> + PartialEq + core::fmt::Debug,
{
    *buf = encode(value);
    let decoded: T = from_bytes(buf).unwrap();
    assert_eq!(&decoded, value);
    assert_eq!(encode(&decoded), *buf);
    decoded
}

/// The type text of `T`, checked against its hash and minimum size.
fn text_of<T: Frozen>() -> String {
    let text = T::SCHEMA.to_string();
    let parsed = CompiledType::<128>::parse(&text).unwrap();
    assert_eq!(T::HASH, hash_of_text(&text).unwrap(), "hash of {text}");
    assert_eq!(T::HASH, parsed.hash());
    assert_eq!(T::MIN_SIZE, parsed.min_size(), "min size of {text}");
    text
}

#[derive(Frozen, Debug, PartialEq)]
struct Reading<'a> {
    id: i64,
    name: &'a str,
    tags: heapless::Vec<u16, 4>,
    flag: Option<u32>,
}

#[test]
fn reading_bytes_schema_hash_and_min_size() {
    assert_eq!(
        text_of::<Reading>(),
        "struct{id:i64,name:str,tags:list<u16>,flag:opt<u32>,}"
    );
    assert_eq!(Reading::MIN_SIZE, 8 + 4 + 4 + 1);

    let value = Reading {
        id: -2,
        name: "ab",
        tags: heapless::Vec::from_slice(&[1, 0x0203]).unwrap(),
        flag: Some(5),
    };
    let mut buf = Vec::new();
    round_trip(&value, &mut buf);
    #[rustfmt::skip]
    let expected: &[u8] = &[
        0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // id: i64 -2
        2, 0, 0, 0, b'a', b'b',                         // name: length, bytes
        2, 0, 0, 0, 0x01, 0x00, 0x03, 0x02,             // tags: count, u16 LE
        1, 5, 0, 0, 0,                                  // flag: tag 1, u32 LE
    ];
    assert_eq!(buf, expected);

    let none = Reading {
        id: 0,
        name: "",
        tags: heapless::Vec::new(),
        flag: None,
    };
    let bytes = encode(&none);
    assert_eq!(bytes.len() as u64, Reading::MIN_SIZE);
    assert_eq!(from_bytes::<Reading>(&bytes).unwrap(), none);
}

#[test]
fn decoding_checks_every_rule() {
    let value = Reading {
        id: 1,
        name: "x",
        tags: heapless::Vec::new(),
        flag: Some(3),
    };
    let bytes = encode(&value);
    let short = &bytes[..bytes.len() - 1];
    assert_eq!(
        from_bytes::<Reading>(short).unwrap_err().code(),
        Some(Code::Eof)
    );
    let mut long = bytes.clone();
    long.push(0);
    assert_eq!(
        from_bytes::<Reading>(&long).unwrap_err().code(),
        Some(Code::Trailing)
    );
    // Five tags do not fit a heapless::Vec<u16, 4>.
    let mut five = bytes[..13].to_vec();
    five.extend_from_slice(&[5, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 0]);
    assert_eq!(
        from_bytes::<Reading>(&five).unwrap_err().refusal(),
        Some(Refusal::Capacity)
    );
}

#[derive(Frozen, Debug, PartialEq)]
struct Named {
    name: heapless::String<8>,
    level: u8,
}

#[derive(Frozen, Debug, PartialEq)]
struct Nested<'a> {
    reading: Reading<'a>,
    named: Named,
    more: heapless::Vec<Named, 2>,
    last: bool,
}

#[test]
fn heapless_strings_and_nested_structs() {
    assert_eq!(text_of::<Named>(), "struct{name:str,level:u8,}");
    assert_eq!(
        text_of::<Nested>(),
        "struct{reading:struct{id:i64,name:str,tags:list<u16>,flag:opt<u32>,},\
         named:struct{name:str,level:u8,},more:list<struct{name:str,level:u8,}>,last:bool,}"
    );
    assert_eq!(Nested::MIN_SIZE, 17 + 5 + 4 + 1);

    let named = |name: &str, level| Named {
        name: heapless::String::try_from(name).unwrap(),
        level,
    };
    let value = Nested {
        reading: Reading {
            id: 9,
            name: "nine",
            tags: heapless::Vec::from_slice(&[9]).unwrap(),
            flag: None,
        },
        named: named("über", 3),
        more: [named("a", 1), named("", 2)].into_iter().collect(),
        last: true,
    };
    let mut buf = Vec::new();
    round_trip(&value, &mut buf);
    // Named "über": 5 UTF-8 bytes, then the level.
    let at = 8 + (4 + 4) + (4 + 2) + 1;
    assert_eq!(
        &buf[at..at + 10],
        &[5, 0, 0, 0, 0xc3, 0xbc, b'b', b'e', b'r', 3]
    );

    // A name longer than heapless::String<8> is LIMIT.
    let mut long = encode(&named("12345678", 0));
    assert_eq!(from_bytes::<Named>(&long).unwrap(), named("12345678", 0));
    long.splice(0..4, [9, 0, 0, 0]);
    long.insert(4, b'9');
    assert_eq!(
        from_bytes::<Named>(&long).unwrap_err().refusal(),
        Some(Refusal::Capacity)
    );
}

#[derive(Frozen, Debug)]
struct Batch<'a> {
    id: i64,
    batch: Directory<'a>,
}

#[derive(Frozen, Debug)]
struct BatchTail<'a> {
    batch: Directory<'a>,
    name: &'a str,
    tail: u32,
}

#[test]
fn directory_fields() {
    assert_eq!(text_of::<Batch>(), "struct{id:i64,batch:tensors,}");
    assert_eq!(Batch::HASH, 0xe58aadc7552f0d82);
    assert_eq!(Batch::MIN_SIZE, 8 + 64);
    assert_eq!(
        text_of::<BatchTail>(),
        "struct{batch:tensors,name:str,tail:u32,}"
    );

    let weights = [1.0f32, -2.0, 0.5];
    let counts = [7u16, 0xfffe];
    let specs = [
        TensorSpec::from_host(&[3], &weights).named("w"),
        TensorSpec::from_host(&[2], &counts).named("n"),
    ];
    let block = encode(&Tensors(&specs));

    let mut bytes = (-7i64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&block);
    let decoded: Batch = from_bytes(&bytes).unwrap();
    assert_eq!(decoded.id, -7);
    assert_eq!(decoded.batch.len(), 2);
    let mut w = [0f32; 3];
    decoded
        .batch
        .by_name("w")
        .unwrap()
        .copy_into(&mut w)
        .unwrap();
    assert_eq!(w, weights);
    let mut n = [0u16; 2];
    decoded
        .batch
        .by_name("n")
        .unwrap()
        .copy_into(&mut n)
        .unwrap();
    assert_eq!(n, counts);
    assert_eq!(encode(&decoded), bytes);

    // A field after the block starts where the block ends.
    let mut bytes = block.clone();
    bytes.extend_from_slice(&[2, 0, 0, 0, b'o', b'k', 0x78, 0x56, 0x34, 0x12]);
    let decoded: BatchTail = from_bytes(&bytes).unwrap();
    assert_eq!(decoded.batch.len(), 2);
    assert_eq!((decoded.name, decoded.tail), ("ok", 0x12345678));
    assert_eq!(encode(&decoded), bytes);

    // Read in place: a record that starts with the empty directory
    // (Directory::EMPTY, or Default) holds the message's block after.
    let mut place = BatchTail {
        batch: Directory::EMPTY,
        name: "",
        tail: 0,
    };
    assert_eq!(place.batch, Directory::default());
    assert_eq!(
        Directory::parse(place.batch.as_bytes()),
        Ok(Directory::EMPTY)
    );
    kiln_nostd::from_bytes_into(&bytes, &mut place).unwrap();
    assert_eq!(place.batch.len(), 2);
    assert_eq!((place.name, place.tail), ("ok", 0x12345678));
    assert_eq!(encode(&place), bytes);
}

/// Several lifetimes, each borrowed from the decoded buffer.
#[derive(Frozen)]
struct Lifetimes<'a, 'b: 'a, 'c> {
    a: &'a str,
    b: Option<&'b str>,
    c: kiln_nostd::PodList<'c, u16>,
    d: kiln_nostd::ListView<'a, &'a str>,
}

#[test]
fn several_lifetimes() {
    assert_eq!(
        text_of::<Lifetimes>(),
        "struct{a:str,b:opt<str>,c:list<u16>,d:list<str>,}"
    );
    #[rustfmt::skip]
    let bytes: &[u8] = &[
        1, 0, 0, 0, b'a',
        1, 2, 0, 0, 0, b'b', b'b',
        2, 0, 0, 0, 1, 0, 2, 0,
        2, 0, 0, 0, 1, 0, 0, 0, b'x', 0, 0, 0, 0,
    ];
    let decoded: Lifetimes = from_bytes(bytes).unwrap();
    assert_eq!((decoded.a, decoded.b), ("a", Some("bb")));
    assert_eq!(decoded.c.iter().collect::<Vec<_>>(), [1, 2]);
    assert_eq!(decoded.d.iter().collect::<Vec<_>>(), ["x", ""]);
    assert_eq!(encode(&decoded), bytes);
}

/// A struct whose own lifetime is called `'de`: the Decode impl picks
/// another name for its own.
#[derive(Frozen, Debug, PartialEq)]
struct HasDe<'de, 'de1> {
    first: &'de str,
    second: &'de1 str,
}

#[test]
fn lifetime_named_de() {
    assert_eq!(text_of::<HasDe>(), "struct{first:str,second:str,}");
    let value = HasDe {
        first: "1",
        second: "22",
    };
    let mut buf = Vec::new();
    round_trip(&value, &mut buf);
    assert_eq!(buf, [1, 0, 0, 0, b'1', 2, 0, 0, 0, b'2', b'2']);
}

/// The declared type is the one written: `u64` is eight bytes under the
/// hash of `u64`, not of some other integer of the same value.
#[derive(Frozen, Debug, PartialEq)]
struct Wide {
    n: u64,
}

type Count = u64;

#[derive(Frozen, Debug, PartialEq)]
struct Aliased {
    n: Count,
}

#[derive(Frozen, Debug, PartialEq)]
struct Narrow {
    n: u32,
}

#[derive(Frozen, Debug, PartialEq)]
struct Named64 {
    n: kiln_nostd::Uint,
}

#[test]
fn the_declared_field_type_is_the_wire_type() {
    assert_eq!(text_of::<Wide>(), "struct{n:u64,}");
    assert_eq!(Wide::HASH, hash_of_text("struct{n:u64,}").unwrap());
    assert_eq!(Wide::MIN_SIZE, 8);
    assert_eq!(encode(&Wide { n: 5 }), [5, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        encode(&Wide {
            n: 0x0102_0304_0506_0708
        }),
        [8, 7, 6, 5, 4, 3, 2, 1]
    );
    assert_eq!(
        from_bytes::<Wide>(&[8, 7, 6, 5, 4, 3, 2, 1]).unwrap().n,
        0x0102_0304_0506_0708
    );
    assert_eq!(
        from_bytes::<Wide>(&[5, 0, 0, 0]).unwrap_err().code(),
        Some(Code::Eof)
    );

    // Through a type alias: still u64.
    assert_eq!(Aliased::SCHEMA, Wide::SCHEMA);
    assert_eq!(encode(&Aliased { n: 5 }), encode(&Wide { n: 5 }));

    // Other types of the same field name hash and write differently.
    assert_eq!(text_of::<Narrow>(), "struct{n:u32,}");
    assert_eq!(encode(&Narrow { n: 5 }), [5, 0, 0, 0]);
    assert_ne!(Narrow::HASH, Wide::HASH);
    assert_eq!(text_of::<Named64>(), "struct{n:uint,}");
    assert_ne!(Named64::HASH, Wide::HASH);
    assert_eq!(
        encode(&Named64 {
            n: kiln_nostd::Uint(5)
        }),
        encode(&Wide { n: 5 })
    );
}

#[derive(Frozen, Debug, PartialEq)]
struct Raw {
    r#type: u8,
    r#struct: bool,
    r#_x: i8,
}

#[test]
fn raw_identifiers_are_plain_field_names() {
    let text = text_of::<Raw>();
    assert_eq!(text, "struct{type:u8,struct:bool,_x:i8,}");
    assert!(CompiledType::<128>::parse(&text).is_ok());
    let value = Raw {
        r#type: 4,
        r#struct: true,
        r#_x: -1,
    };
    let mut buf = Vec::new();
    round_trip(&value, &mut buf);
    assert_eq!(buf, [4, 1, 0xff]);
}

#[derive(Frozen, Debug, PartialEq, Default)]
struct Marker;

#[derive(Frozen, Debug, PartialEq, Default)]
struct Braces {}

#[derive(Frozen, Debug, PartialEq, Default)]
struct HoldsEmpty {
    a: Marker,
    b: Braces,
    c: kiln_nostd::Empty,
    d: u8,
}

#[test]
fn empty_structs_are_zero_bytes() {
    assert_eq!(text_of::<Marker>(), "struct{}");
    assert_eq!(text_of::<Braces>(), "struct{}");
    assert_eq!(Marker::SCHEMA, kiln_nostd::Empty::SCHEMA);
    assert_eq!(Marker::MIN_SIZE, 0);
    assert_eq!(encode(&Marker), [0u8; 0]);
    assert_eq!(from_bytes::<Marker>(&[]).unwrap(), Marker);
    assert_eq!(from_bytes::<Braces>(&[]).unwrap(), Braces {});
    assert_eq!(
        from_bytes::<Marker>(&[0]).unwrap_err().code(),
        Some(Code::Trailing)
    );
    assert_eq!(
        text_of::<HoldsEmpty>(),
        "struct{a:struct{},b:struct{},c:struct{},d:u8,}"
    );
    let value = HoldsEmpty {
        d: 3,
        ..Default::default()
    };
    let mut buf = Vec::new();
    round_trip(&value, &mut buf);
    assert_eq!(buf, [3]);
}

/// Const generic parameters are carried over: each `N` is its own impl.
#[derive(Frozen, Debug, PartialEq)]
struct Capped<const N: usize> {
    v: heapless::Vec<u8, N>,
    s: heapless::String<N>,
}

/// Lifetimes, const generics with a default, and a where clause together.
#[derive(Frozen, Debug, PartialEq)]
struct Mixed<'a, const N: usize, const M: usize = 2>
where
    heapless::Vec<&'a str, M>: Frozen,
{
    names: heapless::Vec<&'a str, M>,
    bytes: heapless::Vec<u8, N>,
}

#[test]
fn const_generic_parameters() {
    assert_eq!(text_of::<Capped<4>>(), "struct{v:list<u8>,s:str,}");
    assert_eq!(Capped::<4>::HASH, Capped::<1>::HASH);
    let value = Capped::<4> {
        v: heapless::Vec::from_slice(&[1, 2, 3]).unwrap(),
        s: heapless::String::try_from("abcd").unwrap(),
    };
    let mut buf = Vec::new();
    round_trip(&value, &mut buf);
    assert_eq!(
        buf,
        [3, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, b'a', b'b', b'c', b'd']
    );
    // The capacity is the type's: Capped<2> refuses three bytes.
    assert_eq!(
        from_bytes::<Capped<2>>(&buf).unwrap_err().refusal(),
        Some(Refusal::Capacity)
    );

    assert_eq!(
        text_of::<Mixed<3>>(),
        "struct{names:list<str>,bytes:list<u8>,}"
    );
    let mixed = Mixed::<3> {
        names: heapless::Vec::from_slice(&["x"]).unwrap(),
        bytes: heapless::Vec::from_slice(&[7, 8, 9]).unwrap(),
    };
    assert_eq!(
        encode(&mixed),
        [1, 0, 0, 0, 1, 0, 0, 0, b'x', 3, 0, 0, 0, 7, 8, 9]
    );

    let mut buf = Vec::new();
    round_trip(&mixed, &mut buf);
}

/// Names a user may have in scope do not change what the derive means.
#[allow(dead_code, non_upper_case_globals, non_camel_case_types)]
mod hygiene {
    use ::kiln_nostd::Frozen;

    struct Ok;
    struct Err;
    struct Field;
    struct Schema;
    struct Reader;
    struct Writer;
    struct Sink;
    struct Encode;
    struct Decode;
    type Result<T> = ::core::result::Result<T, ()>;
    type Option<T> = ::core::option::Option<T>;
    mod core {}
    mod kiln_nostd {}
    const w: u8 = 1;
    const r: u8 = 2;
    const __kiln: u8 = 3;
    type S = u16;
    type R = u32;
    type W = i8;
    type T = u8;

    #[derive(Frozen, Debug, PartialEq)]
    pub struct Shadowed<'a> {
        s: S,
        r: R,
        w: W,
        t: Option<T>,
        name: &'a str,
    }

    pub fn value() -> Shadowed<'static> {
        Shadowed {
            s: 1,
            r: 2,
            w: -3,
            t: None,
            name: "h",
        }
    }
}

#[test]
fn user_names_in_scope_do_not_break_the_derive() {
    assert_eq!(
        text_of::<hygiene::Shadowed>(),
        "struct{s:u16,r:u32,w:i8,t:opt<u8>,name:str,}"
    );
    let mut buf = Vec::new();
    round_trip(&hygiene::value(), &mut buf);
    assert_eq!(buf, [1, 0, 2, 0, 0, 0, 0xfd, 0, 1, 0, 0, 0, b'h']);
}

// A struct of fixed-width fields is read with one bounds check for all its
// bytes (kiln_nostd::__private::decode_derived); every error must be the one that
// reading field by field gives. `ByHand` reads the same fields field by
// field through `Reader::nested`, as a hand-written impl does.

#[derive(Frozen, Debug, PartialEq, Clone, Copy)]
struct Inner {
    flag: bool,
    x: u16,
}

#[derive(Frozen, Debug, PartialEq, Clone, Copy)]
struct Fixed {
    a: u8,
    on: bool,
    inner: Inner,
    b: i64,
    c: f32,
    last: bool,
}

#[derive(Debug, PartialEq)]
struct ByHand(Fixed);

impl Frozen for ByHand {
    const SCHEMA: kiln_nostd::Schema = Fixed::SCHEMA;
}

impl<'de> Decode<'de> for ByHand {
    fn decode(r: &mut kiln_nostd::Reader<'de>) -> kiln_nostd::Result<Self> {
        let inner = |r: &mut kiln_nostd::Reader<'de>| {
            r.nested(|r| {
                Ok(Inner {
                    flag: bool::decode(r)?,
                    x: u16::decode(r)?,
                })
            })
        };
        r.nested(|r| {
            Ok(ByHand(Fixed {
                a: u8::decode(r)?,
                on: bool::decode(r)?,
                inner: inner(r)?,
                b: i64::decode(r)?,
                c: f32::decode(r)?,
                last: bool::decode(r)?,
            }))
        })
    }
}

#[test]
fn a_fixed_width_struct_reads_as_field_by_field_reading_does() {
    assert_eq!(Fixed::MIN_SIZE, 1 + 1 + 3 + 8 + 4 + 1);
    let value = Fixed {
        a: 9,
        on: true,
        inner: Inner {
            flag: false,
            x: 513,
        },
        b: -7,
        c: 1.5,
        last: true,
    };
    let bytes = encode(&value);
    let mut cases: Vec<Vec<u8>> = (0..=bytes.len() + 2)
        .map(|n| {
            let mut b = bytes.clone();
            b.resize(n, 0);
            b
        })
        .collect();
    for at in 0..bytes.len() {
        for v in [2u8, 0xFF] {
            let mut b = bytes.clone();
            b[at] = v;
            cases.push(b.clone());
            // ... and cut after the bad byte, or before it.
            cases.push(b[..(at + 1).min(b.len())].to_vec());
            cases.push(b[..at].to_vec());
        }
    }
    for case in &cases {
        // Values compare by their bytes (a NaN is not equal to itself).
        let fast = from_bytes::<Fixed>(case).map(|v| encode(&v));
        let slow = from_bytes::<ByHand>(case).map(|h| encode(&h.0));
        assert_eq!(fast, slow, "{case:?}");
        // Inside a message: after other bytes, and followed by more.
        let mut framed = vec![1u8, 2, 3];
        framed.extend_from_slice(case);
        let mut fast_r = kiln_nostd::Reader::starting_at(&framed, 3, kiln_nostd::Limits::DEFAULT);
        let mut slow_r = fast_r.clone();
        let fast = Fixed::decode(&mut fast_r).map(|v| encode(&v));
        let slow = ByHand::decode(&mut slow_r).map(|h| encode(&h.0));
        assert_eq!(fast, slow, "{case:?} at 3");
        assert_eq!(fast_r.position(), slow_r.position());
        assert_eq!(fast_r.containers_entered(), slow_r.containers_entered());
    }
    // Too deep: the inner struct is the 65th container.
    let mut fast_r = kiln_nostd::Reader::new(&bytes, kiln_nostd::Limits::DEFAULT);
    let mut slow_r = fast_r.clone();
    fn nest<T>(
        r: &mut kiln_nostd::Reader<'_>,
        depth: u8,
        body: &mut dyn FnMut(&mut kiln_nostd::Reader<'_>) -> T,
    ) -> T {
        if depth == 0 {
            return body(r);
        }
        r.nested(|r| Ok(nest(r, depth - 1, body))).unwrap()
    }
    let fast = nest(&mut fast_r, 63, &mut |r| Fixed::decode(r));
    let slow = nest(&mut slow_r, 63, &mut |r| ByHand::decode(r).map(|h| h.0));
    assert_eq!(fast.unwrap_err().code(), Some(Code::Depth));
    assert_eq!(fast, slow);
}

#[test]
fn decoding_into_caller_storage_gives_what_decoding_gives() {
    // Every prefix of a valid message, every one-byte change of it, and the
    // message itself: from_bytes_into agrees with from_bytes on the verdict,
    // the code and (when accepted) the value, and the storage is reused.
    let value = Nested {
        reading: Reading {
            id: 9,
            name: "nine",
            tags: heapless::Vec::from_slice(&[9, 10]).unwrap(),
            flag: Some(1),
        },
        named: Named {
            name: heapless::String::try_from("a").unwrap(),
            level: 3,
        },
        more: heapless::Vec::new(),
        last: true,
    };
    let bytes = encode(&value);
    let blank = || Nested {
        reading: Reading {
            id: 0,
            name: "",
            tags: heapless::Vec::new(),
            flag: None,
        },
        named: Named {
            name: heapless::String::new(),
            level: 0,
        },
        more: heapless::Vec::new(),
        last: false,
    };
    let mut inputs: Vec<Vec<u8>> = (0..bytes.len()).map(|n| bytes[..n].to_vec()).collect();
    for i in 0..bytes.len() {
        for b in [0u8, 1, 2, 0x7f, 0xff] {
            let mut changed = bytes.clone();
            changed[i] = b;
            inputs.push(changed);
        }
    }
    inputs.push(bytes.clone());
    let mut place = blank();
    let mut accepted = 0;
    for input in &inputs {
        let by_value = from_bytes::<Nested>(input);
        let into = kiln_nostd::from_bytes_into(input, &mut place);
        match (&by_value, into) {
            (Ok(v), Ok(())) => {
                assert_eq!(&place, v);
                accepted += 1;
            }
            (Err(a), Err(b)) => assert_eq!((a.code(), a.refusal()), (b.code(), b.refusal())),
            (a, b) => panic!("{input:?}: from_bytes {a:?}, from_bytes_into {b:?}"),
        }
    }
    assert!(accepted >= 2, "{accepted}");
    // And framed.
    let mut buf = vec![0u8; bytes.len() + 16];
    let framed = kiln_nostd::to_frame_slice(&value, &mut buf).unwrap();
    let mut place = blank();
    kiln_nostd::from_frame_into(framed, &mut place).unwrap();
    assert_eq!(place, value);
}
