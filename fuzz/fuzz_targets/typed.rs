//! The typed decoders of derived structs, one borrowing (strings, byte
//! runs, list and dict views, a number list, an option, a zero-size list,
//! a directory) and one owning (`Vec`, `String`, nested `Vec<Vec<Empty>>`,
//! options of options, bounded `heapless` storage), bare and framed. A
//! wire verdict is `check`'s verdict for the struct's own type text; an
//! accepted message encodes to the same bytes.
#![no_main]

use kiln_fuzz::{verdict, Verdict};
use kiln_nostd::{
    from_bytes, from_frame, to_frame_vec, to_vec, DictView, Directory, Empty, Encode, Frozen,
    ListView, Options, PodList, Uint,
};
use libfuzzer_sys::fuzz_target;

#[derive(Frozen, Debug, PartialEq)]
struct Point {
    x: i16,
    y: Option<u8>,
}

#[derive(Frozen)]
struct Borrowed<'a> {
    id: i64,
    name: &'a str,
    blob: &'a [u8],
    tags: DictView<'a, &'a str>,
    points: ListView<'a, Point>,
    values: PodList<'a, f32>,
    note: Option<&'a str>,
    empties: ListView<'a, Empty>,
    batch: Directory<'a>,
}

#[derive(Frozen, Debug, PartialEq)]
struct Owned {
    id: Uint,
    name: String,
    words: Vec<String>,
    flags: Vec<bool>,
    nested: Vec<Vec<Empty>>,
    maybe: Option<Vec<Point>>,
    small: heapless::Vec<u16, 4>,
    map: heapless::LinearMap<heapless::String<8>, u32, 4>,
    deep: Option<Option<Option<u8>>>,
}

/// The typed verdict agrees with `check`'s, and an accepted value writes
/// the same bytes again.
fn agree<T: Frozen + Encode>(typed: &kiln_nostd::Result<T>, bytes: &[u8], framed: bool) {
    let text = T::SCHEMA.to_string();
    let options = if framed {
        Options::FRAMED
    } else {
        Options::BARE
    };
    let checked = verdict(&kiln_nostd::check(&text, bytes, options), bytes.len());
    match verdict(typed, bytes.len()) {
        // Storage that cannot hold a valid value refuses; no wire verdict.
        Verdict::Refused(_) => {}
        v => assert_eq!(v, checked, "typed and check disagree on {text}"),
    }
    if let Ok(value) = typed {
        let again = if framed {
            to_frame_vec(value)
        } else {
            to_vec(value)
        };
        assert_eq!(again.expect("an accepted value encodes"), bytes);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    match selector % 4 {
        0 => agree(&from_bytes::<Borrowed>(bytes), bytes, false),
        1 => agree(&from_frame::<Borrowed>(bytes), bytes, true),
        2 => agree(&from_bytes::<Owned>(bytes), bytes, false),
        _ => agree(&from_frame::<Owned>(bytes), bytes, true),
    }
    if let Ok(b) = from_bytes::<Borrowed>(bytes) {
        // Views iterate without trouble.
        let _ = b.tags.iter().count();
        let _ = b.points.iter().count();
        let _ = b.values.iter().count();
        let _ = b.empties.iter().take(3).count();
        let _ = (b.id, b.name, b.blob, b.note, b.batch.len());
    }
});
