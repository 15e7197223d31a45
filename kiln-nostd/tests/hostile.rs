//! Hostile inputs whose work once grew without bound. Each test counts the
//! work (visitor calls, containers entered, lookups) instead of timing it,
//! so it fails the same way on a loaded machine as on an idle one.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use kiln_nostd::{
    check, from_bytes, CompiledType, Decode, Directory, Empty, Frozen, ListView, Options, Reader,
    Refusal, TensorSpec, Tensors, Visitor,
};

/// `list<list<struct{}>>` of `outer` lists, each claiming `inner` empty
/// structs: 4 + 4 * outer bytes.
fn nested_empty_lists(outer: u32, inner: u32) -> Vec<u8> {
    let mut bytes = outer.to_le_bytes().to_vec();
    for _ in 0..outer {
        bytes.extend_from_slice(&inner.to_le_bytes());
    }
    bytes
}

/// One KiB: 255 lists of 16,777,216 empty structs each (the review's input;
/// it took minutes before zero-size lists were bounded).
fn one_kib() -> Vec<u8> {
    let bytes = nested_empty_lists(255, 16_777_216);
    assert_eq!(bytes.len(), 1024);
    bytes
}

#[derive(Default)]
struct Count {
    structs: u64,
    repeats: u64,
    repeated: u64,
    lists: u64,
}

impl Visitor<'_> for Count {
    fn begin_struct(&mut self, _: usize, _: usize) -> kiln_nostd::Result<()> {
        self.structs += 1;
        Ok(())
    }
    fn repeat(&mut self, times: u32) -> kiln_nostd::Result<()> {
        self.repeats += 1;
        self.repeated += u64::from(times);
        Ok(())
    }
    fn begin_list(&mut self, _: usize, _: u32) -> kiln_nostd::Result<()> {
        self.lists += 1;
        Ok(())
    }
}

#[test]
fn zero_size_lists_are_walked_once_per_list_whatever_their_count() {
    let bytes = one_kib();
    assert!(check("list<list<struct{}>>", &bytes, Options::BARE).is_ok());
    let ty = CompiledType::<8>::parse("list<list<struct{}>>").unwrap();
    let mut count = Count::default();
    ty.walk(&bytes, Options::BARE, &mut count).unwrap();
    assert_eq!(count.lists, 256);
    assert_eq!(count.structs, 255, "one struct visited per inner list");
    assert_eq!(count.repeats, 255);
    assert_eq!(count.repeated, 255 * 16_777_215);
}

#[test]
fn structs_of_empty_structs_are_zero_size_too() {
    let text = "list<list<struct{a:struct{},b:struct{c:struct{},},}>>";
    let ty = CompiledType::<16>::parse(text).unwrap();
    assert!(ty
        .root()
        .element()
        .unwrap()
        .element()
        .unwrap()
        .is_zero_size());
    let mut count = Count::default();
    ty.walk(&one_kib(), Options::BARE, &mut count).unwrap();
    // Each inner list visits its first element: the outer struct and its
    // three nested ones.
    assert_eq!(count.structs, 255 * 4);
}

#[test]
fn a_zero_size_element_too_deep_is_still_depth() {
    // 64 lists, then the empty struct is container 65: DEPTH, even though
    // the innermost list claims 16,777,216 of them.
    let text = format!("{}struct{{}}{}", "list<".repeat(64), ">".repeat(64));
    let mut bytes = Vec::new();
    for _ in 0..63 {
        bytes.extend_from_slice(&1u32.to_le_bytes());
    }
    bytes.extend_from_slice(&16_777_216u32.to_le_bytes());
    let err = check(&text, &bytes, Options::BARE).unwrap_err();
    assert_eq!(err.code(), Some(kiln_nostd::Code::Depth));
}

#[test]
fn typed_views_of_zero_size_lists_read_one_element_per_list() {
    let bytes = one_kib();
    let mut r = Reader::new(&bytes, kiln_nostd::Limits::DEFAULT);
    let lists = ListView::<ListView<Empty>>::decode(&mut r).unwrap();
    r.finish().unwrap();
    assert_eq!(lists.len(), 255);
    // The outer list, then per inner list: itself and its first element.
    assert_eq!(r.containers_entered(), 1 + 255 * 2);
    assert_eq!(lists.iter().next().unwrap().len(), 16_777_216);
}

#[test]
fn bounded_storage_refuses_a_zero_size_count_above_its_capacity() {
    type Lists = heapless::Vec<heapless::Vec<Empty, 8>, 255>;
    let err = from_bytes::<Lists>(&one_kib()).unwrap_err();
    assert_eq!(err.refusal(), Some(Refusal::Capacity));
    // Within capacity it decodes.
    let small: Lists = from_bytes(&nested_empty_lists(3, 8)).unwrap();
    assert_eq!(small.iter().map(|l| l.len()).sum::<usize>(), 24);
}

#[cfg(feature = "alloc")]
#[test]
fn owned_vectors_of_zero_size_values_stay_within_the_count_cap_per_message() {
    // A Vec needs one write per value, so one message may make at most the
    // count cap of them; past that the decoder refuses (a storage refusal:
    // the bytes are valid, as check says).
    let bytes = nested_empty_lists(255, 60_000);
    let mut r = Reader::new(&bytes, kiln_nostd::Limits::uniform(1 << 16));
    let err = Vec::<Vec<Empty>>::decode(&mut r).unwrap_err();
    assert_eq!(err.refusal(), Some(Refusal::Capacity));
    assert!(r.containers_entered() <= 4, "refused at the second list");
    // Within the budget every value is there.
    let fine: Vec<Vec<Empty>> = from_bytes(&nested_empty_lists(3, 1000)).unwrap();
    assert_eq!(fine.iter().map(Vec::len).sum::<usize>(), 3000);
}

#[cfg(feature = "alloc")]
#[test]
fn owned_vectors_of_zero_size_values_grow_with_the_input_not_the_counts() {
    // 1 KiB of nested zero-size lists can claim 16,777,216 empty structs
    // (the whole count cap); the zero-size budget, 65,536 plus 64 per
    // input byte, keeps the typed decoder's work in step with the input.
    let bytes = one_kib();
    let mut r = Reader::new(&bytes, kiln_nostd::Limits::DEFAULT);
    let err = Vec::<Vec<Empty>>::decode(&mut r).unwrap_err();
    assert_eq!(err.refusal(), Some(Refusal::Capacity));
    assert!(r.containers_entered() <= 4, "refused at the first list");
    let budget: u64 = 65_536 + 64 * 8;
    // Exactly the budget of an 8-byte message decodes; one more is refused.
    let at_budget = nested_empty_lists(1, budget as u32);
    assert_eq!(
        from_bytes::<Vec<Vec<Empty>>>(&at_budget).unwrap()[0].len() as u64,
        budget
    );
    let over = nested_empty_lists(1, budget as u32 + 1);
    let err = from_bytes::<Vec<Vec<Empty>>>(&over).unwrap_err();
    assert_eq!(err.refusal(), Some(Refusal::Capacity));
    // The bytes are valid all the same: check and views accept them.
    assert!(check("list<list<struct{}>>", &bytes, Options::BARE).is_ok());
    assert!(from_bytes::<ListView<ListView<Empty>>>(&bytes).is_ok());
}

#[cfg(feature = "alloc")]
#[test]
fn dynamic_values_hold_a_zero_size_list_as_its_count() {
    use kiln_nostd::{Value, ValueKind};
    let bytes = one_kib();
    let value = kiln_nostd::decode_value("list<list<struct{}>>", &bytes, Options::BARE).unwrap();
    let ValueKind::List(lists) = &value.kind else {
        panic!("{value:?}")
    };
    assert_eq!(lists.len(), 255);
    assert_eq!(
        lists[0],
        Value::new(ValueKind::Repeat {
            count: 16_777_216,
            element: Box::new(Value::new(ValueKind::Struct(vec![])))
        })
    );
    // Each inner list is its count word: four bytes, in place.
    assert_eq!(lists[1].span, 8..12);
    // And it writes back the same bytes.
    let again = kiln_nostd::encode_value("list<list<struct{}>>", &value, Options::BARE).unwrap();
    assert_eq!(again, one_kib());
}

// ---------------------------------------------------------------------------
// Names

/// `count` distinct short ASCII names, shortest first: every 1-byte name,
/// then 2-byte, then 3-byte ones.
fn short_names(count: usize) -> Vec<String> {
    let one = (0u8..128).map(|a| String::from_utf8(vec![a]).unwrap());
    let two =
        (0u8..128).flat_map(|a| (0u8..128).map(move |b| String::from_utf8(vec![a, b]).unwrap()));
    let three = (0u8..128).flat_map(|a| {
        (0u8..128)
            .flat_map(move |b| (0u8..128).map(move |c| String::from_utf8(vec![a, b, c]).unwrap()))
    });
    one.chain(two).chain(three).take(count).collect()
}

fn directory_of(names: &[String]) -> Vec<u8> {
    let specs: Vec<TensorSpec<'_>> = names
        .iter()
        .map(|n| TensorSpec::new(kiln_nostd::Dtype::U8, &[0], &[]).named(n))
        .collect();
    let mut block = vec![0u8; kiln_nostd::encoded_len(&Tensors(&specs)).unwrap()];
    kiln_nostd::to_slice(&Tensors(&specs), &mut block).unwrap();
    block
}

/// As many names as the 16-bit heap offsets allow for names this short.
const MANY: usize = 24_790;

/// Unsorted names for the test below: all of them, except where the build
/// compares unsorted names pairwise (`small-code` without an allocator),
/// O(n²) by design, where 2,000 keep the run short.
const UNSORTED: usize = if cfg!(all(feature = "small-code", not(feature = "alloc"))) {
    2_000
} else {
    MANY
};

#[test]
fn the_largest_unsorted_directory_of_names_is_checked() {
    const MANY: usize = UNSORTED;
    let mut names = short_names(MANY);
    let heap: usize = names.iter().map(String::len).sum();
    assert!(
        heap < 0xFFFF,
        "{heap} bytes of names fit the 16-bit offsets"
    );
    names.reverse(); // unsorted: the sort path, not the one-pass one
    let block = directory_of(&names);
    let dir = Directory::parse(&block).unwrap();
    assert_eq!(dir.len(), MANY);
    assert!(!dir.names_sorted());

    // With caller scratch, the same verdict without an allocator's help.
    let mut scratch = vec![0u32; MANY];
    let with_scratch =
        Directory::parse_with_scratch(&block, kiln_nostd::Limits::DEFAULT, &mut scratch).unwrap();
    assert_eq!(with_scratch.len(), MANY);

    // A repeat anywhere is found, and the first repeating index is named.
    let mut repeated = names.clone();
    repeated[MANY - 1] = names[17].clone();
    let block = directory_of_unchecked(&repeated);
    let err = Directory::parse(&block).unwrap_err();
    assert_eq!(err.code(), Some(kiln_nostd::Code::Type));
    assert_eq!(err.tensor(), Some(MANY as u32 - 1));
    let err = Directory::parse_with_scratch(&block, kiln_nostd::Limits::DEFAULT, &mut scratch)
        .unwrap_err();
    assert_eq!(err.tensor(), Some(MANY as u32 - 1));
}

/// Builds a block the builder would refuse (a repeated name), by writing
/// distinct names and then overwriting one name's heap bytes.
fn directory_of_unchecked(names: &[String]) -> Vec<u8> {
    let last = names.len() - 1;
    let mut distinct = names.to_vec();
    // A stand-in of the same length that repeats nothing.
    distinct[last] = "\u{7f}".repeat(names[last].len().max(1) + 1)[..names[last].len()].to_string();
    assert!(!names[..last].contains(&distinct[last]));
    let mut block = directory_of(&distinct);
    let heap_start = 64 + 128 * names.len();
    let offset: usize = names[..last].iter().map(String::len).sum();
    block[heap_start + offset..heap_start + offset + names[last].len()]
        .copy_from_slice(names[last].as_bytes());
    block
}

#[test]
fn sorted_names_are_checked_in_one_pass_and_looked_up_by_binary_search() {
    let mut names = short_names(MANY);
    names.sort();
    let block = directory_of(&names);
    let dir = Directory::parse(&block).unwrap();
    assert!(dir.names_sorted());
    for (i, name) in names.iter().enumerate().step_by(97) {
        assert_eq!(dir.by_name(name).unwrap().index(), i);
    }
    assert!(dir.by_name("\u{7f}\u{7f}\u{7f}\u{7f}").is_none());
}

#[test]
fn an_index_looks_up_every_name_of_an_unsorted_directory() {
    // 10,000 names fit the 16-bit heap offsets only when they are short.
    let mut names: Vec<String> = (0..10_000).map(|i| format!("t{i}")).collect();
    names.reverse();
    let block = directory_of(&names);
    let dir = Directory::parse(&block).unwrap();
    assert!(!dir.names_sorted());
    let mut storage = vec![0u16; dir.len()];
    let index = dir.index_names_in(&mut storage).unwrap();
    for (i, name) in names.iter().enumerate() {
        assert_eq!(index.get(name).unwrap().index(), i, "{name}");
    }
    assert!(index.get("t10000").is_none());
    // Too little storage is refused, not a wrong index.
    let mut small = [0u16; 16];
    assert_eq!(
        dir.index_names_in(&mut small).unwrap_err().refusal(),
        Some(Refusal::Capacity)
    );
}

#[test]
fn the_zero_size_type_facts_come_from_the_schema() {
    // Checked when this test is compiled.
    #[derive(Frozen)]
    struct Marker {}
    #[derive(Frozen)]
    struct Nested {
        _a: Marker,
        _b: Empty,
    }
    const {
        assert!(Marker::ZERO_SIZE && Nested::ZERO_SIZE && Empty::ZERO_SIZE);
        assert!(!<Option<Empty> as Frozen>::ZERO_SIZE);
        assert!(!<u8 as Frozen>::ZERO_SIZE);
    }
}
