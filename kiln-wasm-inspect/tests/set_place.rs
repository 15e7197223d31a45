//! A file of a set opened alone says where it belongs: a GGUF split
//! file from its own split keys (read from its head, as the page has
//! it), a safetensors shard from its name alone.

use kiln_convert::head::open_head;
use kiln_convert::Format;
use kiln_wasm_inspect::sets::{set_place, SetPlace};

fn place_of(dir: &str, name: &str, format: Format, format_name: &str) -> Option<SetPlace> {
    let path = format!("{}/../{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
    let file = std::fs::read(path).unwrap();
    let (head, _) = open_head(format, file.len() as u64, |at, buf| {
        buf.copy_from_slice(&file[at as usize..at as usize + buf.len()]);
        Ok(())
    })
    .unwrap();
    let pairs = head
        .metadata
        .iter()
        .map(|p| (p.key.as_str(), p.value_type.as_str(), p.value.as_str()));
    set_place(name, format_name, pairs)
}

#[test]
fn a_gguf_split_file_alone_says_its_place_from_its_split_keys() {
    let names: Vec<String> = (1..=3)
        .map(|i| format!("tiny-{i:05}-of-00003.gguf"))
        .collect();
    for (i, name) in names.iter().enumerate() {
        let place = place_of("www/samples/shards", name, Format::Gguf, "gguf").unwrap();
        assert_eq!(place.from, "split keys");
        assert_eq!((place.no, place.count), (i as u64 + 1, 3), "{name}");
        assert_eq!(place.files, names, "{name}: the set's names");
        // gguf-split writes split.tensors.count in every file.
        assert_eq!(place.tensors_count, Some(6), "{name}");
    }
    // The keys, not the name, say it: renamed, the file still knows its
    // place, but not the others' names.
    let path = format!(
        "{}/../www/samples/shards/tiny-00002-of-00003.gguf",
        env!("CARGO_MANIFEST_DIR")
    );
    let file = std::fs::read(path).unwrap();
    let (head, _) = open_head(Format::Gguf, file.len() as u64, |at, buf| {
        buf.copy_from_slice(&file[at as usize..at as usize + buf.len()]);
        Ok(())
    })
    .unwrap();
    let pairs = || {
        head.metadata
            .iter()
            .map(|p| (p.key.as_str(), p.value_type.as_str(), p.value.as_str()))
    };
    let renamed = set_place("part.gguf", "gguf", pairs()).unwrap();
    assert_eq!((renamed.no, renamed.count), (2, 3));
    assert!(renamed.files.is_empty());
    // A name that disagrees with the keys gives no names either.
    let wrong = set_place("tiny-00003-of-00003.gguf", "gguf", pairs()).unwrap();
    assert_eq!(wrong.no, 2);
    assert!(wrong.files.is_empty());
}

#[test]
fn a_whole_gguf_file_is_in_no_set() {
    assert_eq!(place_of("samples", "tiny.gguf", Format::Gguf, "gguf"), None);
    // Split keys that say one file, or a place past the count, are no set.
    let keys = |no: &'static str, count: &'static str| {
        [("split.no", "u16", no), ("split.count", "u16", count)].into_iter()
    };
    assert_eq!(set_place("m.gguf", "gguf", keys("0", "1")), None);
    assert_eq!(set_place("m.gguf", "gguf", keys("3", "3")), None);
    // A key of another type is not the split key (as check_gguf_split reads it).
    let text = [("split.no", "string", "1"), ("split.count", "string", "3")];
    assert_eq!(set_place("m.gguf", "gguf", text.into_iter()), None);
    assert_eq!(
        set_place("m.gguf", "gguf", keys("1", "3")).map(|p| (p.no, p.count, p.tensors_count)),
        Some((2, 3, None))
    );
}

#[test]
fn a_safetensors_shard_alone_is_known_by_its_name() {
    let place = place_of(
        "www/samples/shards",
        "model-00002-of-00003.safetensors",
        Format::Safetensors,
        "safetensors",
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
    for name in [
        "tiny.safetensors",
        "model-00001-of-00001.safetensors",
        "model-00004-of-00003.safetensors",
        "model-2-of-3.safetensors",
        "-00001-of-00002.safetensors",
    ] {
        assert_eq!(
            set_place(name, "safetensors", [].into_iter()),
            None,
            "{name}"
        );
    }
}
