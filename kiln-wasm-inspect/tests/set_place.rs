//! A file of a set opened alone says where it belongs: a GGUF split
//! file from its own split keys (read from its head, as the page has
//! it), a safetensors shard from its name alone.

use kiln_convert::head::inspect_head;
use kiln_convert::Format;
use kiln_nostd::inspect::{Inspection, Meta};
use kiln_wasm_inspect::sets::{set_place, SetPlace};

fn model_of(dir: &str, name: &str, format: Format) -> Inspection {
    let path = format!("{}/../{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
    let file = std::fs::read(path).unwrap();
    inspect_head(name, format, &file).unwrap()
}

fn place_of(dir: &str, name: &str, format: Format) -> Option<SetPlace> {
    set_place(name, &model_of(dir, name, format))
}

#[test]
fn a_gguf_split_file_alone_says_its_place_from_its_split_keys() {
    let names: Vec<String> = (1..=3)
        .map(|i| format!("tiny-{i:05}-of-00003.gguf"))
        .collect();
    for (i, name) in names.iter().enumerate() {
        let place = place_of("www/samples/shards", name, Format::Gguf).unwrap();
        assert_eq!(place.from, "split keys");
        assert_eq!((place.no, place.count), (i as u64 + 1, 3), "{name}");
        assert_eq!(place.files, names, "{name}: the set's names");
        // gguf-split writes split.tensors.count in every file.
        assert_eq!(place.tensors_count, Some(6), "{name}");
    }
    // The keys, not the name, say it: renamed, the file still knows its
    // place, but not the others' names.
    let model = model_of(
        "www/samples/shards",
        "tiny-00002-of-00003.gguf",
        Format::Gguf,
    );
    let renamed = set_place("part.gguf", &model).unwrap();
    assert_eq!((renamed.no, renamed.count), (2, 3));
    assert!(renamed.files.is_empty());
    // A name that disagrees with the keys gives no names either.
    let wrong = set_place("tiny-00003-of-00003.gguf", &model).unwrap();
    assert_eq!(wrong.no, 2);
    assert!(wrong.files.is_empty());
}

fn with_keys(keys: &[(&str, &str, Vec<u8>)]) -> Inspection {
    Inspection {
        format: Format::Gguf,
        metadata: keys
            .iter()
            .map(|(k, t, b)| Meta {
                key: (*k).into(),
                type_text: (*t).into(),
                bytes: b.clone(),
            })
            .collect(),
        ..Inspection::default()
    }
}

#[test]
fn a_whole_gguf_file_is_in_no_set() {
    assert_eq!(place_of("samples", "tiny.gguf", Format::Gguf), None);
    // Split keys that say one file, or a place past the count, are no set.
    let keys = |no: u16, count: u16| {
        with_keys(&[
            ("split.no", "u16", no.to_le_bytes().to_vec()),
            ("split.count", "u16", count.to_le_bytes().to_vec()),
        ])
    };
    assert_eq!(set_place("m.gguf", &keys(0, 1)), None);
    assert_eq!(set_place("m.gguf", &keys(3, 3)), None);
    // A key of another type is not the split key (as check_gguf_split reads it).
    let str_bytes = |s: &str| {
        let mut b = (s.len() as u32).to_le_bytes().to_vec();
        b.extend(s.as_bytes());
        b
    };
    let text = with_keys(&[
        ("split.no", "str", str_bytes("1")),
        ("split.count", "str", str_bytes("3")),
    ]);
    assert_eq!(set_place("m.gguf", &text), None);
    assert_eq!(
        set_place("m.gguf", &keys(1, 3)).map(|p| (p.no, p.count, p.tensors_count)),
        Some((2, 3, None))
    );
}

#[test]
fn a_safetensors_shard_alone_is_known_by_its_name() {
    let place = place_of(
        "www/samples/shards",
        "model-00002-of-00003.safetensors",
        Format::Safetensors,
    )
    .unwrap();
    assert_eq!(place.from, "name");
    assert_eq!((place.no, place.count, place.tensors_count), (2, 3, None));
    assert_eq!(
        place.files,
        [
            "model-00001-of-00003.safetensors",
            "model-00002-of-00003.safetensors",
            "model-00003-of-00003.safetensors",
            "model.safetensors.index.json",
        ]
    );
    let alone = Inspection {
        format: Format::Safetensors,
        ..Inspection::default()
    };
    for name in [
        "tiny.safetensors",
        "model-00001-of-00001.safetensors",
        "model-00004-of-00003.safetensors",
        "model-2-of-3.safetensors",
        "-00001-of-00002.safetensors",
    ] {
        assert_eq!(set_place(name, &alone), None, "{name}");
    }
}
