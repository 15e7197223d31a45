//! Every timed case: a Kiln closure and, where there is one, the peer's
//! closure doing the same job on the same data. The driver
//! (`src/main.rs`) times both sides interleaved and runs each side under
//! callgrind; the criterion suite (`benches/suite.rs`) runs the same
//! closures.

use std::hint::black_box;
use std::rc::Rc;

use kiln_nostd::{Directory, Limits};
use safetensors::SafeTensors;

use crate::fixtures::{self, DirectoryFixture, Names, Order, Payloads};

/// One side of a case: runs the job once per call.
pub type Job = Box<dyn FnMut()>;

/// What a goal asks of a row.
#[derive(Copy, Clone, Debug)]
pub enum Goal {
    /// peer time / Kiln time at least this.
    AtLeast(f64),
    /// peer instructions / Kiln instructions at least this: for goals
    /// stated by instruction count, which a loaded machine does not move
    /// (judged on the time ratio when callgrind is not there).
    InstructionsAtLeast(f64),
    /// Kiln time / reference time at most this (the floor row).
    AtMostTimesRef(f64),
}

/// A row of the table.
pub struct Case {
    /// Stable id (`kiln-bench run ID ...` runs it under callgrind).
    pub id: String,
    /// What the row measures.
    pub what: String,
    /// The Kiln side.
    pub kiln: Job,
    /// The peer's name and side, if there is a peer.
    pub peer: Option<(String, Job)>,
    /// The goal the issue sets, if any.
    pub goal: Option<Goal>,
}

/// Sizes of the run: `full` for the table, `quick` for the smoke stage.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scale {
    /// The sizes of the issue.
    Full,
    /// Tiny sizes for the smoke run of the test command.
    Quick,
}

impl Scale {
    /// `full` when `quick` is false.
    pub fn of(quick: bool) -> Scale {
        if quick {
            Scale::Quick
        } else {
            Scale::Full
        }
    }
}

/// Tensor counts of the scaling series.
pub fn counts(scale: Scale) -> Vec<usize> {
    match scale {
        Scale::Full => vec![10, 100, 1_000, 10_000],
        Scale::Quick => vec![10, 100],
    }
}

/// Tensor counts of the converted-model rows: up to the 18,867 tensors of
/// a 48-layer, 128-expert mixture-of-experts model.
pub fn model_counts(scale: Scale) -> Vec<usize> {
    match scale {
        Scale::Full => vec![100, 1_000, 10_000, 18_867],
        Scale::Quick => vec![100],
    }
}

/// Total payload sizes of the flat series (MiB), at [`PAYLOAD_COUNT`] tensors.
pub fn payload_mib(scale: Scale) -> Vec<usize> {
    match scale {
        Scale::Full => vec![1, 16, 256, 1024],
        Scale::Quick => vec![1],
    }
}

/// Tensor count of the payload-size series.
pub const PAYLOAD_COUNT: usize = 1_000;

/// Names used at a count: model-like names up to 1,000 tensors, `t0`..
/// above (the 16-bit heap offsets).
pub fn names_for(count: usize) -> Names {
    if count > 1_000 {
        Names::Short
    } else {
        Names::Model
    }
}

/// Every case id in table order.
pub fn ids(scale: Scale) -> Vec<String> {
    let main = match scale {
        Scale::Full => 1_000,
        Scale::Quick => 100,
    };
    let mut ids = vec![];
    for (names, n) in open_lookup_sizes(scale) {
        for order in ["sorted", "model"] {
            ids.push(format!("dir-open-lookup-{order}-{names}-{n}"));
        }
    }
    for n in model_counts(scale) {
        ids.push(format!("model-open-lookup-bytes-{n}"));
        ids.push(format!("model-open-lookup-model-{n}"));
    }
    ids.push(format!("dir-parse-{main}"));
    ids.push(format!("dir-lookups-sorted-{main}"));
    ids.push(format!("dir-lookups-indexed-{main}"));
    ids.push(format!("dir-floor-{main}"));
    for n in counts(scale) {
        ids.push(format!("scale-count-{n}"));
    }
    for mib in payload_mib(scale) {
        ids.push(format!("scale-payload-{mib}"));
    }
    ids.push("update-receive".into());
    ids.push("copy-owned".into());
    ids.push("copy-into".into());
    ids.push("copy-swap".into());
    for peer in ["postcard", "bincode"] {
        for row in [
            "telemetry-owned-encode",
            "telemetry-owned-decode",
            "telemetry-borrowed-encode",
            "telemetry-borrowed-decode",
            "scalars-encode",
            "scalars-decode",
        ] {
            ids.push(format!("{row}-{peer}"));
        }
    }
    ids
}

/// The names and counts of the bare directory's open + lookup rows, each
/// in byte order and in model order: long names at 100 and 1,000 tensors
/// (10,000 of them do not fit a heap's 16-bit offsets), short ones at
/// 100, 1,000 and 10,000.
pub fn open_lookup_sizes(scale: Scale) -> Vec<(&'static str, usize)> {
    match scale {
        Scale::Full => vec![
            ("long", 100),
            ("long", 1_000),
            ("short", 100),
            ("short", 1_000),
            ("short", 10_000),
        ],
        Scale::Quick => vec![("long", 100), ("short", 200)],
    }
}

fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

fn dir_fixture(count: usize, order: Order) -> &'static DirectoryFixture {
    dir_fixture_named(count, names_for(count), order)
}

fn dir_fixture_named(count: usize, names: Names, order: Order) -> &'static DirectoryFixture {
    leak(fixtures::directory(count, names, order, Payloads::Model))
}

/// Kiln's open plus a lookup of every name with the default call: parse,
/// then one `by_name` per name (through the hash table the parse kept,
/// whatever the order of the names).
fn kiln_open_lookup(f: &DirectoryFixture) -> usize {
    let dir = Directory::parse(black_box(&f.kiln)).expect("valid block");
    let mut total = 0;
    for name in &f.lookups {
        total += dir.by_name(name).expect("present").bytes().len();
    }
    total
}

/// safetensors' open plus a lookup of every name.
fn st_open_lookup(f: &DirectoryFixture) -> usize {
    let st = SafeTensors::deserialize(black_box(&f.safetensors)).expect("valid file");
    let mut total = 0;
    for name in &f.lookups {
        total += st.tensor(name).expect("present").data().len();
    }
    total
}

fn open_lookup_case(id: &str, what: String, f: &'static DirectoryFixture, goal: bool) -> Case {
    Case {
        id: id.into(),
        what,
        kiln: Box::new(move || {
            black_box(kiln_open_lookup(f));
        }),
        peer: Some((
            "safetensors deserialize + tensor(name)".into(),
            Box::new(move || {
                black_box(st_open_lookup(f));
            }),
        )),
        goal: goal.then_some(Goal::InstructionsAtLeast(10.0)),
    }
}

/// A converted model opened with the default call (`Model::open`, every
/// directory) and every name looked up with `Model::tensor`, against
/// safetensors' open and `tensor(name)` of the same tensors.
/// Lookups alone, every name once, over a directory parsed beforehand:
/// names in byte order or in model order, both through the name table the
/// parse built.
fn lookups_case(id: &str, n: usize, order: Order) -> Case {
    let f = dir_fixture(n, order);
    let dir = leak(Directory::parse(&f.kiln).expect("valid"));
    let st = leak(SafeTensors::deserialize(&f.safetensors).expect("valid"));
    let label = match order {
        Order::Sorted => "sorted names (by_name, the parse's table)",
        Order::Model => "model order (by_name, the parse's table)",
    };
    Case {
        id: id.into(),
        what: format!("{n} tensors: lookups alone, {label}"),
        kiln: Box::new(move || {
            for name in &f.lookups {
                black_box(dir.by_name(black_box(name)).expect("present").bytes().len());
            }
        }),
        peer: Some(("safetensors tensor(name)".into(), st_lookups(st, f))),
        goal: None,
    }
}

fn model_case(id: &str, n: usize, order: Order) -> Case {
    let f = leak(fixtures::model(n, order));
    let label = match order {
        Order::Sorted => "names in byte order (from safetensors)",
        Order::Model => "names in model order (from GGUF)",
    };
    Case {
        id: id.into(),
        what: format!(
            "converted model, {n} tensors, {label}: Model::open + Model::tensor of every name; names like model.layers.17.mlp.experts.42.up_proj.weight"
        ),
        kiln: Box::new(move || {
            let model = kiln_convert::Model::open(black_box(&f.kiln)).expect("valid file");
            let mut total = 0;
            for name in &f.lookups {
                total += model.tensor(name).expect("present").bytes().len();
            }
            black_box(total);
        }),
        peer: Some((
            "safetensors deserialize + tensor(name)".into(),
            Box::new(move || {
                let st = SafeTensors::deserialize(black_box(&f.safetensors)).expect("valid file");
                let mut total = 0;
                for name in &f.lookups {
                    total += st.tensor(name).expect("present").data().len();
                }
                black_box(total);
            }),
        )),
        goal: Some(Goal::InstructionsAtLeast(10.0)),
    }
}

fn names_label(count: usize) -> &'static str {
    match names_for(count) {
        Names::Model => "names like layers.17.attn.q_proj.weight",
        Names::Short => "names t0..t9999",
        Names::Long => "names like model.layers.5.mlp.experts.42.up_proj.weight",
    }
}

/// The open + lookup row of the bare directory `row`
/// (`dir-open-lookup-ORDER-NAMES`) at `n` tensors.
fn dir_open_lookup_case(id: &str, row: &str, n: usize) -> Option<Case> {
    let (order, names) = row.strip_prefix("dir-open-lookup-")?.split_once('-')?;
    let (order, order_label) = match order {
        "sorted" => (
            Order::Sorted,
            "names in byte order (as kiln convert writes them)",
        ),
        "model" => (Order::Model, "names in model order (not byte order)"),
        _ => return None,
    };
    let (names, names_label) = match names {
        "long" => (
            Names::Long,
            "long names like model.layers.5.mlp.experts.42.up_proj.weight",
        ),
        "short" => (Names::Short, "short names t0, t1, ..."),
        _ => return None,
    };
    Some(open_lookup_case(
        id,
        format!(
            "{n} tensors, {order_label}, {names_label}: Directory::parse + by_name of every name (the parse's table)"
        ),
        dir_fixture_named(n, names, order),
        true,
    ))
}

/// Builds case `id`, or `None` for an unknown id.
pub fn build(id: &str, scale: Scale) -> Option<Case> {
    let (row, arg) = match id.rsplit_once('-') {
        Some((row, arg)) => (row, arg),
        None => (id, ""),
    };
    let number = arg.parse::<usize>().ok();
    if matches!(id, "copy-owned" | "copy-into" | "copy-swap") {
        return Some(copy_case(id, scale));
    }
    if id == "update-receive" {
        return Some(update_case(id, scale));
    }
    let case = match (row, number) {
        (row, Some(n)) if row.starts_with("dir-open-lookup-") => dir_open_lookup_case(id, row, n)?,
        ("model-open-lookup-bytes", Some(n)) => model_case(id, n, Order::Sorted),
        ("model-open-lookup-model", Some(n)) => model_case(id, n, Order::Model),
        ("dir-parse", Some(n)) => {
            let f = dir_fixture(n, Order::Sorted);
            Case {
                id: id.into(),
                what: format!("{n} tensors: parse alone (Directory::parse vs deserialize)"),
                kiln: Box::new(move || {
                    black_box(Directory::parse(black_box(&f.kiln)).expect("valid").len());
                }),
                peer: Some((
                    "safetensors deserialize".into(),
                    Box::new(move || {
                        black_box(
                            SafeTensors::deserialize(black_box(&f.safetensors))
                                .expect("valid")
                                .len(),
                        );
                    }),
                )),
                goal: None,
            }
        }
        ("dir-lookups-sorted", Some(n)) => lookups_case(id, n, Order::Sorted),
        ("dir-lookups-indexed", Some(n)) => lookups_case(id, n, Order::Model),
        ("dir-floor", Some(n)) => {
            let f = dir_fixture(n, Order::Sorted);
            let region = &f.kiln[..f.directory_bytes];
            Case {
                id: id.into(),
                what: format!(
                    "{n} tensors: floor, one plain pass summing the {} KB of header, descriptors and names",
                    region.len() / 1000
                ),
                kiln: Box::new(move || {
                    black_box(floor_pass(black_box(region)));
                }),
                peer: None,
                goal: None,
            }
        }
        ("scale-count", Some(n)) => open_lookup_case(
            id,
            format!(
                "scaling by count: {n} tensors, sorted, open + look up all; {}",
                names_label(n)
            ),
            dir_fixture(n, Order::Sorted),
            false,
        ),
        ("scale-payload", Some(mib)) => {
            let per = mib * 1024 * 1024 / PAYLOAD_COUNT / 64 * 64;
            let f = Rc::new(fixtures::directory(
                PAYLOAD_COUNT,
                Names::Model,
                Order::Sorted,
                Payloads::Fixed(per),
            ));
            let g = Rc::clone(&f);
            Case {
                id: id.into(),
                what: format!(
                    "scaling by payload: {PAYLOAD_COUNT} f32 tensors, {mib} MiB of payload, sorted, open + look up all"
                ),
                kiln: Box::new(move || {
                    black_box(kiln_open_lookup(&f));
                }),
                peer: Some((
                    "safetensors deserialize + tensor(name)".into(),
                    Box::new(move || {
                        black_box(st_open_lookup(&g));
                    }),
                )),
                goal: None,
            }
        }
        (_, None) => frozen_case(id, row, arg)?,
        _ => return None,
    };
    Some(case)
}

fn st_lookups(st: &'static SafeTensors<'static>, f: &'static DirectoryFixture) -> Job {
    Box::new(move || {
        for name in &f.lookups {
            black_box(st.tensor(black_box(name)).expect("present").data().len());
        }
    })
}

/// The floor: one plain pass over the directory bytes.
#[inline(never)]
pub fn floor_pass(bytes: &[u8]) -> u64 {
    bytes.iter().map(|&b| u64::from(b)).sum()
}

/// A 64 MiB f32 tensor in a Kiln block, and the same numbers as host f32s.
struct CopyFixture {
    block: Vec<u8>,
    host: Vec<f32>,
    out: Vec<f32>,
}

fn copy_case(id: &str, scale: Scale) -> Case {
    let count = match scale {
        Scale::Full => 16 * 1024 * 1024,
        Scale::Quick => 16 * 1024,
    };
    let mib = count * 4 / (1024 * 1024);
    let host: Vec<f32> = (0..count).map(|i| i as f32 * 0.5).collect();
    let shape = [count as u64];
    let block = kiln_nostd::to_vec(&kiln_nostd::Tensors(&[kiln_nostd::TensorSpec::from_host(
        &shape, &host,
    )
    .named("w")]))
    .expect("encodes");
    let f = Rc::new(std::cell::RefCell::new(CopyFixture {
        block,
        out: vec![0f32; count],
        host,
    }));
    let g = Rc::clone(&f);
    let size = if mib > 0 {
        format!("{mib} MiB")
    } else {
        format!("{} KiB", count * 4 / 1024)
    };
    let peer_owned = |g: Rc<std::cell::RefCell<CopyFixture>>| -> Job {
        Box::new(move || {
            let g = g.borrow();
            let mut v = vec![0f32; g.host.len()];
            v.copy_from_slice(black_box(&g.host));
            black_box(v);
        })
    };
    let peer_into = |g: Rc<std::cell::RefCell<CopyFixture>>| -> Job {
        Box::new(move || {
            let g = &mut *g.borrow_mut();
            g.out.copy_from_slice(black_box(&g.host));
            black_box(&g.out);
        })
    };
    match id {
        "copy-owned" => Case {
            id: id.into(),
            what: format!("{size} f32 tensor: owned copy (TensorView::to_vec) vs vec! + copy_from_slice"),
            kiln: Box::new(move || {
                let f = f.borrow();
                let dir = Directory::parse(&f.block).expect("valid");
                let view = dir.get(0).expect("one tensor");
                black_box(view.to_vec::<f32>(Limits::uniform(u32::MAX)).expect("copies"));
            }),
            peer: Some(("vec! + copy_from_slice".into(), peer_owned(g))),
            goal: Some(Goal::AtLeast(0.95)),
        },
        "copy-into" => Case {
            id: id.into(),
            what: format!("{size} f32 tensor: copy_into a buffer vs copy_from_slice"),
            kiln: Box::new(move || {
                let f = &mut *f.borrow_mut();
                let dir = Directory::parse(&f.block).expect("valid");
                let view = dir.get(0).expect("one tensor");
                black_box(view.copy_into(&mut f.out).expect("copies"));
            }),
            peer: Some(("copy_from_slice".into(), peer_into(g))),
            goal: Some(Goal::AtLeast(0.95)),
        },
        _ => Case {
            id: id.into(),
            what: format!(
                "{size} f32 tensor: byte-swapping copy of the big-endian path (order::copy_swapped) vs copy_from_slice"
            ),
            kiln: Box::new(move || {
                let f = &mut *f.borrow_mut();
                let dir = Directory::parse(&f.block).expect("valid");
                let view = dir.get(0).expect("one tensor");
                black_box(
                    kiln_nostd::order::copy_swapped(view.bytes(), &mut f.out).expect("copies"),
                );
            }),
            peer: Some(("copy_from_slice".into(), peer_into(g))),
            goal: Some(Goal::AtLeast(0.5)),
        },
    }
}

/// A serde format measured beside Kiln's Frozen values: the same calls
/// for postcard and bincode, so that each row below is written once and
/// each peer's closures are its own monomorphic code (no branch on which
/// peer inside a timed closure).
trait SerdePeer: 'static {
    const NAME: &'static str;
    /// Whether the goal (at least 2x) is judged against this peer.
    const HAS_GOAL: bool;
    fn to_vec<T: serde::Serialize>(value: &T) -> Vec<u8>;
    /// Encodes into `buf`; the length written.
    fn to_slice<T: serde::Serialize>(value: &T, buf: &mut [u8]) -> usize;
    fn decode_owned<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> T;
    fn decode_borrowed<'de, T: serde::Deserialize<'de>>(bytes: &'de [u8]) -> T;
}

struct Postcard;
struct Bincode;

impl SerdePeer for Postcard {
    const NAME: &'static str = "postcard";
    const HAS_GOAL: bool = true;
    fn to_vec<T: serde::Serialize>(value: &T) -> Vec<u8> {
        postcard::to_allocvec(value).expect("encodes")
    }
    fn to_slice<T: serde::Serialize>(value: &T, buf: &mut [u8]) -> usize {
        postcard::to_slice(value, buf).expect("fits").len()
    }
    fn decode_owned<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> T {
        postcard::from_bytes(bytes).expect("decodes")
    }
    fn decode_borrowed<'de, T: serde::Deserialize<'de>>(bytes: &'de [u8]) -> T {
        postcard::from_bytes(bytes).expect("decodes")
    }
}

impl SerdePeer for Bincode {
    const NAME: &'static str = "bincode";
    const HAS_GOAL: bool = false;
    fn to_vec<T: serde::Serialize>(value: &T) -> Vec<u8> {
        bincode::serde::encode_to_vec(value, bincode::config::standard()).expect("encodes")
    }
    fn to_slice<T: serde::Serialize>(value: &T, buf: &mut [u8]) -> usize {
        bincode::serde::encode_into_slice(value, buf, bincode::config::standard()).expect("fits")
    }
    fn decode_owned<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> T {
        bincode::serde::decode_from_slice(bytes, bincode::config::standard())
            .expect("decodes")
            .0
    }
    fn decode_borrowed<'de, T: serde::Deserialize<'de>>(bytes: &'de [u8]) -> T {
        bincode::serde::borrow_decode_from_slice(bytes, bincode::config::standard())
            .expect("decodes")
            .0
    }
}

fn frozen_case(id: &str, row: &str, peer: &str) -> Option<Case> {
    match peer {
        "postcard" => frozen_case_against::<Postcard>(id, row),
        "bincode" => frozen_case_against::<Bincode>(id, row),
        _ => None,
    }
}

fn frozen_case_against<P: SerdePeer>(id: &str, row: &str) -> Option<Case> {
    use crate::fixtures::{
        telemetry, Scalars, Telemetry, TelemetryKilnRef, TelemetrySerdeRef, SCALARS,
    };
    use kiln_nostd::{from_bytes, to_slice, to_vec, PodList};

    let owned = leak(telemetry());
    let kiln_bytes = leak(to_vec(owned).expect("encodes"));
    let peer_bytes = leak(P::to_vec(owned));
    let kiln_ref = leak(TelemetryKilnRef {
        id: owned.id,
        name: &owned.name,
        readings: PodList::from_slice(&owned.readings),
        tags: owned
            .tags
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
        flags: owned.flags,
    });
    let serde_ref = leak(TelemetrySerdeRef {
        id: owned.id,
        name: &owned.name,
        readings: owned.readings.iter().copied().collect(),
        tags: owned
            .tags
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
        flags: owned.flags,
    });
    let scalars_kiln = leak(to_vec(&SCALARS).expect("encodes"));
    let scalars_peer = leak(P::to_vec(&SCALARS));
    let mut kiln_buf = vec![0u8; 8192];
    let mut peer_buf = vec![0u8; 8192];

    let (what, kiln, peer_job): (&str, Job, Job) = match row {
        "telemetry-owned-encode" => (
            "telemetry record, owned types (String, Vec<f32> of 1,024, BTreeMap of 4): encode to a new Vec<u8>",
            Box::new(move || {
                black_box(to_vec(black_box(owned)).expect("encodes"));
            }),
            Box::new(move || {
                black_box(P::to_vec(black_box(owned)));
            }),
        ),
        "telemetry-owned-decode" => (
            "telemetry record, owned types: decode",
            Box::new(move || {
                black_box(from_bytes::<Telemetry>(black_box(kiln_bytes)).expect("decodes"));
            }),
            Box::new(move || {
                black_box(P::decode_owned::<Telemetry>(black_box(peer_bytes)));
            }),
        ),
        "telemetry-borrowed-encode" => (
            "telemetry record, lightest types (Kiln: &str, PodList, LinearMap; serde: &str, heapless::Vec, LinearMap): encode into a buffer",
            Box::new(move || {
                black_box(to_slice(black_box(kiln_ref), &mut kiln_buf).expect("fits").len());
            }),
            Box::new(move || {
                black_box(P::to_slice(black_box(serde_ref), &mut peer_buf));
            }),
        ),
        "telemetry-borrowed-decode" => (
            "telemetry record, lightest types: decode",
            Box::new(move || {
                black_box(
                    from_bytes::<TelemetryKilnRef>(black_box(kiln_bytes)).expect("decodes"),
                );
            }),
            Box::new(move || {
                black_box(P::decode_borrowed::<TelemetrySerdeRef>(black_box(peer_bytes)));
            }),
        ),
        "scalars-encode" => (
            "12 scalar fields: encode into a buffer (to_slice)",
            Box::new(move || {
                black_box(to_slice(black_box(&SCALARS), &mut kiln_buf).expect("fits").len());
            }),
            Box::new(move || {
                black_box(P::to_slice(black_box(&SCALARS), &mut peer_buf));
            }),
        ),
        "scalars-decode" => (
            "12 scalar fields: decode (from_bytes)",
            Box::new(move || {
                black_box(from_bytes::<Scalars>(black_box(scalars_kiln)).expect("decodes"));
            }),
            Box::new(move || {
                black_box(P::decode_owned::<Scalars>(black_box(scalars_peer)));
            }),
        ),
        _ => return None,
    };
    Some(Case {
        id: id.into(),
        what: what.into(),
        kiln,
        peer: Some((P::NAME.into(), peer_job)),
        // The encode goals are stated by instruction count (a 20 ns
        // operation's time ratio moves with the machine's load); the
        // decode goals by time.
        goal: P::HAS_GOAL.then_some(if id.ends_with("-encode") {
            Goal::InstructionsAtLeast(2.0)
        } else {
            Goal::AtLeast(2.0)
        }),
    })
}

/// A model update through kiln-update's receiver on a simulated NOR flash
/// (4-byte words, 1 KiB pages): the link's bytes in 64-byte pieces, the
/// envelope, the streaming check, the writes to the free slot, the read
/// back and the state record; against erasing the slot and writing the
/// same model into it in 256-byte writes.
fn update_case(id: &str, scale: Scale) -> Case {
    use embedded_storage::nor_flash::NorFlash;
    use kiln_nostd::envelope::{chunks, sealed_len, CHECK_LEN, CHUNK_HEADER_LEN};
    use kiln_nostd::{CompiledType, Options};
    use kiln_update::sim::SimFlash;
    use kiln_update::{Layout, Updater};

    const CHUNK: usize = 250;
    let rows = match scale {
        Scale::Full => 96,
        Scale::Quick => 8,
    };
    let model = fixtures::update_model(rows);
    let mut link = vec![];
    for chunk in chunks(&model, CHUNK).expect("a small model") {
        let mut out = vec![0u8; sealed_len(CHUNK + CHUNK_HEADER_LEN)];
        link.extend_from_slice(chunk.seal(&mut out).expect("room"));
    }
    let slot = (model.len() as u32).div_ceil(1024) * 1024;
    let ty: &'static CompiledType<'static, 4> =
        leak(CompiledType::parse(fixtures::UPDATE_MODEL_TYPE).expect("the type compiles"));
    let mut flash = SimFlash::<4, 1024>::new(2048 + 2 * slot as usize);
    let layout = Layout::contiguous(&flash, 0, slot).expect("the layout fits");
    let mut current = None;
    let mut copy_flash = flash.clone();
    let bytes = model.clone();
    Case {
        id: id.into(),
        what: format!(
            "a {} KB model update through kiln-update's receiver (envelope, chunks, streaming check, writes to the free slot, read back, state record) into a simulated NOR flash",
            model.len() / 1000
        ),
        kiln: Box::new(move || {
            let mut frame = [0u8; CHUNK + CHUNK_HEADER_LEN + CHECK_LEN];
            let mut scratch = [0u8; 1024];
            let mut updater = Updater::<_, 4, 1>::new(
                &mut flash,
                layout,
                current,
                ty,
                Options::BARE,
                &mut frame,
                &mut scratch,
            );
            let mut installed = None;
            for piece in link.chunks(64) {
                if let Some(done) = updater.on_link_bytes(black_box(piece)).expect("installs") {
                    installed = Some(done.current);
                }
            }
            current = Some(installed.expect("the model installs"));
        }),
        peer: Some((
            "erase the slot and write the model into it (256-byte writes)".into(),
            Box::new(move || {
                copy_flash.erase(2048, 2048 + slot).expect("erase");
                let padded = bytes.len() / 4 * 4;
                for (i, piece) in bytes[..padded].chunks(256).enumerate() {
                    let at = 2048 + (i * 256) as u32;
                    copy_flash.write(at, black_box(piece)).expect("write");
                }
            }),
        )),
        goal: Some(Goal::AtLeast(0.5)),
    }
}
