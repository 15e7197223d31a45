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
    let big = match scale {
        Scale::Full => 10_000,
        Scale::Quick => 200,
    };
    let mut ids = vec![];
    for (n, label) in [(main, "main"), (big, "big")] {
        let _ = label;
        ids.push(format!("dir-open-lookup-sorted-{n}"));
        ids.push(format!("dir-open-lookup-indexed-{n}"));
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

fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

fn dir_fixture(count: usize, order: Order) -> &'static DirectoryFixture {
    leak(fixtures::directory(
        count,
        names_for(count),
        order,
        Payloads::Model,
    ))
}

/// Kiln's open plus a lookup of every name: parse, the index the lookups
/// need (none for sorted names), then one lookup per name.
fn kiln_open_lookup(f: &DirectoryFixture) -> usize {
    let dir = Directory::parse(black_box(&f.kiln)).expect("valid block");
    let mut total = 0;
    match f.order {
        Order::Sorted => {
            for name in &f.lookups {
                total += dir.by_name(name).expect("present").bytes().len();
            }
        }
        Order::Model => {
            let index = dir.index_names();
            for name in &f.lookups {
                total += index.get(name).expect("present").bytes().len();
            }
        }
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
        goal: goal.then_some(Goal::AtLeast(10.0)),
    }
}

fn names_label(count: usize) -> &'static str {
    match names_for(count) {
        Names::Model => "names like layers.17.attn.q_proj.weight",
        Names::Short => "names t0..t9999",
    }
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
    let case = match (row, number) {
        ("dir-open-lookup-sorted", Some(n)) => open_lookup_case(
            id,
            format!(
                "{n} tensors, sorted names (binary search, no index): open + look up every name; {}",
                names_label(n)
            ),
            dir_fixture(n, Order::Sorted),
            true,
        ),
        ("dir-open-lookup-indexed", Some(n)) => open_lookup_case(
            id,
            format!(
                "{n} tensors, model-order names (index_names() built in the open): open + look up every name; {}",
                names_label(n)
            ),
            dir_fixture(n, Order::Model),
            true,
        ),
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
        ("dir-lookups-sorted", Some(n)) => {
            let f = dir_fixture(n, Order::Sorted);
            let dir = leak(Directory::parse(&f.kiln).expect("valid"));
            let st = leak(SafeTensors::deserialize(&f.safetensors).expect("valid"));
            Case {
                id: id.into(),
                what: format!("{n} tensors: lookups alone, sorted names (by_name)"),
                kiln: Box::new(move || {
                    for name in &f.lookups {
                        black_box(dir.by_name(black_box(name)).expect("present").bytes().len());
                    }
                }),
                peer: Some(("safetensors tensor(name)".into(), st_lookups(st, f))),
                goal: None,
            }
        }
        ("dir-lookups-indexed", Some(n)) => {
            let f = dir_fixture(n, Order::Model);
            let dir = leak(Directory::parse(&f.kiln).expect("valid"));
            let index = leak(dir.index_names());
            let st = leak(SafeTensors::deserialize(&f.safetensors).expect("valid"));
            Case {
                id: id.into(),
                what: format!("{n} tensors: lookups alone, model order (NameIndex::get)"),
                kiln: Box::new(move || {
                    for name in &f.lookups {
                        black_box(index.get(black_box(name)).expect("present").bytes().len());
                    }
                }),
                peer: Some(("safetensors tensor(name)".into(), st_lookups(st, f))),
                goal: None,
            }
        }
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

fn frozen_case(id: &str, row: &str, peer: &str) -> Option<Case> {
    use crate::fixtures::{
        telemetry, Scalars, Telemetry, TelemetryKilnRef, TelemetrySerdeRef, SCALARS,
    };
    use kiln_nostd::{from_bytes, to_slice, to_vec, PodList};

    let bincode_cfg = bincode::config::standard();
    let owned = leak(telemetry());
    let kiln_bytes = leak(to_vec(owned).expect("encodes"));
    let peer_bytes: &'static Vec<u8> = leak(match peer {
        "postcard" => postcard::to_allocvec(owned).expect("encodes"),
        "bincode" => bincode::serde::encode_to_vec(owned, bincode_cfg).expect("encodes"),
        _ => return None,
    });
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
    let scalars_peer: &'static Vec<u8> = leak(match peer {
        "postcard" => postcard::to_allocvec(&SCALARS).expect("encodes"),
        _ => bincode::serde::encode_to_vec(SCALARS, bincode_cfg).expect("encodes"),
    });
    let is_postcard = peer == "postcard";
    let mut kiln_buf = vec![0u8; 8192];
    let mut peer_buf = vec![0u8; 8192];

    let (what, kiln, peer_job): (String, Job, Job) = match row {
        "telemetry-owned-encode" => (
            "telemetry record, owned types (String, Vec<f32> of 1,024, BTreeMap of 4): encode to a new Vec<u8>".into(),
            Box::new(move || {
                black_box(to_vec(black_box(owned)).expect("encodes"));
            }),
            if is_postcard {
                Box::new(move || {
                    black_box(postcard::to_allocvec(black_box(owned)).expect("encodes"));
                })
            } else {
                Box::new(move || {
                    black_box(
                        bincode::serde::encode_to_vec(black_box(owned), bincode_cfg)
                            .expect("encodes"),
                    );
                })
            },
        ),
        "telemetry-owned-decode" => (
            "telemetry record, owned types: decode".into(),
            Box::new(move || {
                black_box(from_bytes::<Telemetry>(black_box(kiln_bytes)).expect("decodes"));
            }),
            if is_postcard {
                Box::new(move || {
                    black_box(
                        postcard::from_bytes::<Telemetry>(black_box(peer_bytes)).expect("decodes"),
                    );
                })
            } else {
                Box::new(move || {
                    black_box(
                        bincode::serde::decode_from_slice::<Telemetry, _>(
                            black_box(peer_bytes),
                            bincode_cfg,
                        )
                        .expect("decodes"),
                    );
                })
            },
        ),
        "telemetry-borrowed-encode" => (
            "telemetry record, lightest types (Kiln: &str, PodList, LinearMap; serde: &str, heapless::Vec, LinearMap): encode into a buffer".into(),
            Box::new(move || {
                black_box(to_slice(black_box(kiln_ref), &mut kiln_buf).expect("fits").len());
            }),
            if is_postcard {
                Box::new(move || {
                    black_box(
                        postcard::to_slice(black_box(serde_ref), &mut peer_buf)
                            .expect("fits")
                            .len(),
                    );
                })
            } else {
                Box::new(move || {
                    black_box(
                        bincode::serde::encode_into_slice(
                            black_box(serde_ref),
                            &mut peer_buf,
                            bincode_cfg,
                        )
                        .expect("fits"),
                    );
                })
            },
        ),
        "telemetry-borrowed-decode" => (
            "telemetry record, lightest types: decode".into(),
            Box::new(move || {
                black_box(
                    from_bytes::<TelemetryKilnRef>(black_box(kiln_bytes)).expect("decodes"),
                );
            }),
            if is_postcard {
                Box::new(move || {
                    black_box(
                        postcard::from_bytes::<TelemetrySerdeRef>(black_box(peer_bytes))
                            .expect("decodes"),
                    );
                })
            } else {
                Box::new(move || {
                    black_box(
                        bincode::serde::borrow_decode_from_slice::<TelemetrySerdeRef, _>(
                            black_box(peer_bytes),
                            bincode_cfg,
                        )
                        .expect("decodes"),
                    );
                })
            },
        ),
        "scalars-encode" => (
            "12 scalar fields: encode into a buffer (to_slice)".into(),
            Box::new(move || {
                black_box(to_slice(black_box(&SCALARS), &mut kiln_buf).expect("fits").len());
            }),
            if is_postcard {
                Box::new(move || {
                    black_box(
                        postcard::to_slice(black_box(&SCALARS), &mut peer_buf)
                            .expect("fits")
                            .len(),
                    );
                })
            } else {
                Box::new(move || {
                    black_box(
                        bincode::serde::encode_into_slice(
                            black_box(SCALARS),
                            &mut peer_buf,
                            bincode_cfg,
                        )
                        .expect("fits"),
                    );
                })
            },
        ),
        "scalars-decode" => (
            "12 scalar fields: decode (from_bytes)".into(),
            Box::new(move || {
                black_box(from_bytes::<Scalars>(black_box(scalars_kiln)).expect("decodes"));
            }),
            if is_postcard {
                Box::new(move || {
                    black_box(
                        postcard::from_bytes::<Scalars>(black_box(scalars_peer)).expect("decodes"),
                    );
                })
            } else {
                Box::new(move || {
                    black_box(
                        bincode::serde::decode_from_slice::<Scalars, _>(
                            black_box(scalars_peer),
                            bincode_cfg,
                        )
                        .expect("decodes"),
                    );
                })
            },
        ),
        _ => return None,
    };
    Some(Case {
        id: id.into(),
        what,
        kiln,
        peer: Some((peer.into(), peer_job)),
        goal: is_postcard.then_some(Goal::AtLeast(2.0)),
    })
}
