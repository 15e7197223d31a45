//! Streaming encode (kiln_nostd::io_write): derived records with a
//! `tensors` field, written field by field with their tensors streamed from
//! the specs (no block buffer), give the bytes of `to_slice` over the same
//! record holding the built `Directory`; the writer's failures come back
//! as the writer's own. (Every golden case with a typed form is streamed
//! in tests/golden.rs.)

#![cfg(all(
    feature = "derive",
    feature = "embedded-io",
    feature = "embedded-io-async"
))]

#[path = "support/writers.rs"]
mod writers;

use kiln_nostd::io_write::{encode_async, to_frame_writer, to_writer, WriteError};
use kiln_nostd::{
    to_frame_slice, to_slice, Directory, Encode, Frozen, PodList, Refusal, TensorSpec, Tensors,
    Writer,
};
use writers::{block_on, ShortWriter};

#[derive(Frozen)]
struct Update<'a> {
    id: u32,
    note: &'a str,
    weights: Directory<'a>,
    tail: PodList<'a, f32>,
}

fn specs<'a>(
    a: &'a [f32],
    b: &'a [i16],
    shape_a: &'a [u64],
    shape_b: &'a [u64],
) -> [TensorSpec<'a>; 2] {
    [
        TensorSpec::from_host(shape_a, a).named("layer.0.w"),
        TensorSpec::from_host(shape_b, b).named("layer.0.b"),
    ]
}

/// The record's fields written one by one, the tensors from their specs.
fn write_fields<S: kiln_nostd::Sink>(
    w: &mut Writer<S>,
    id: u32,
    note: &str,
    specs: &[TensorSpec<'_>],
    tail: &[f32],
) -> kiln_nostd::Result<()> {
    w.nested(|w| {
        id.encode(w)?;
        note.encode(w)?;
        Tensors(specs).encode(w)?;
        PodList::from_slice(tail).encode(w)
    })
}

#[test]
fn a_record_with_tensors_streams_field_by_field_to_the_bytes_of_to_slice() {
    let a: Vec<f32> = (0..300).map(|i| i as f32 * 0.25 - 7.0).collect();
    let b: Vec<i16> = (0..17).map(|i| i * -3).collect();
    let (shape_a, shape_b) = ([20u64, 15], [17u64]);
    let specs = specs(&a, &b, &shape_a, &shape_b);
    let tail = [1.5f32, -0.0, f32::MAX];

    let mut block = vec![0u8; 4096];
    let weights = Directory::build(&specs, &mut block).unwrap();
    let record = Update {
        id: 0xdead_beef,
        note: "nightly",
        weights,
        tail: PodList::from_slice(&tail),
    };
    let mut buf = vec![0u8; 4096];
    let want = to_slice(&record, &mut buf).unwrap().to_vec();

    // The derived record itself, streamed.
    let mut w = ShortWriter::new(7);
    assert_eq!(to_writer(&record, &mut w).unwrap(), want.len());
    assert_eq!(w.bytes, want);

    // Field by field, tensors from the specs: no block, no message buffer.
    let mut w = Writer::new(kiln_nostd::io_write::EmbeddedIoSink::new(ShortWriter::new(
        11,
    )));
    write_fields(&mut w, record.id, record.note, &specs, &tail).unwrap();
    assert_eq!(w.written(), want.len());
    assert_eq!(w.into_sink().into_inner().unwrap().bytes, want);

    // The same through the async encoder, staging smaller than one
    // descriptor, and larger than the message.
    for staging in [3usize, 100, 8192] {
        let mut w = ShortWriter::new(64);
        let mut chunk = vec![0u8; staging];
        let n = block_on(encode_async(&mut w, &mut chunk, |w| {
            write_fields(w, record.id, record.note, &specs, &tail)
        }))
        .unwrap();
        assert_eq!(n, want.len());
        assert_eq!(w.bytes, want, "staging {staging}");
        // Each chunk written once (64 bytes per call of this writer).
        let (full, rest) = (want.len() / staging, want.len() % staging);
        let calls = full * staging.div_ceil(64) + rest.div_ceil(64);
        assert_eq!(w.calls, calls, "staging {staging}");
    }

    // Framed.
    let mut framed = vec![0u8; 4096];
    let want = to_frame_slice(&record, &mut framed).unwrap().to_vec();
    let mut w = ShortWriter::new(5);
    to_frame_writer(&record, &mut w).unwrap();
    assert_eq!(w.bytes, want);
}

/// A writer that fails after `ok` bytes, or accepts nothing.
struct Failing {
    ok: usize,
    stall: bool,
}

#[derive(Debug, PartialEq)]
struct LinkDown;

impl embedded_io::Error for LinkDown {
    fn kind(&self) -> embedded_io::ErrorKind {
        embedded_io::ErrorKind::BrokenPipe
    }
}

impl embedded_io::ErrorType for Failing {
    type Error = LinkDown;
}

impl embedded_io::Write for Failing {
    fn write(&mut self, buf: &[u8]) -> Result<usize, LinkDown> {
        if self.stall {
            return Ok(0);
        }
        if self.ok == 0 {
            return Err(LinkDown);
        }
        let n = buf.len().min(self.ok);
        self.ok -= n;
        Ok(n)
    }
    fn flush(&mut self) -> Result<(), LinkDown> {
        Ok(())
    }
}

impl embedded_io_async::Write for Failing {
    async fn write(&mut self, buf: &[u8]) -> Result<usize, LinkDown> {
        embedded_io::Write::write(self, buf)
    }
}

#[test]
fn the_writers_failure_is_its_own_error_and_a_refusal_stays_the_encoders() {
    let value = "a string of some length";
    assert_eq!(
        to_writer(
            &value,
            Failing {
                ok: 10,
                stall: false
            }
        ),
        Err(WriteError::Io(LinkDown))
    );
    assert_eq!(
        to_writer(
            &value,
            Failing {
                ok: 10,
                stall: true
            }
        ),
        Err(WriteError::Stalled)
    );
    let mut staging = [0u8; 4];
    assert_eq!(
        block_on(kiln_nostd::io_write::to_async_writer(
            &value,
            Failing {
                ok: 10,
                stall: false
            },
            &mut staging
        )),
        Err(WriteError::Io(LinkDown))
    );
    assert!(matches!(
        block_on(kiln_nostd::io_write::to_async_writer(&value, Failing { ok: 99, stall: false }, &mut [])),
        Err(WriteError::Encode(e)) if e.refusal() == Some(Refusal::BufferTooSmall)
    ));
    // Two tensors of one name: the builder refuses before any tensor byte.
    let x = [1.0f32];
    let twice = [
        TensorSpec::from_host(&[1], &x).named("x"),
        TensorSpec::from_host(&[1], &x).named("x"),
    ];
    let got = to_writer(&Tensors(&twice), ShortWriter::new(8));
    assert!(
        matches!(got, Err(WriteError::Encode(e)) if e.refusal() == Some(Refusal::NotEncodable)),
        "{got:?}"
    );
    let got = block_on(kiln_nostd::io_write::to_async_writer(
        &Tensors(&twice),
        ShortWriter::new(8),
        &mut staging,
    ));
    assert!(
        matches!(got, Err(WriteError::Encode(e)) if e.refusal() == Some(Refusal::NotEncodable)),
        "{got:?}"
    );
}
