//! The link envelope's stream decoder (kiln_nostd::envelope, outside the
//! Kiln format) on arbitrary bytes: the same events whether the stream
//! comes in one piece, byte by byte or at the input's own split points;
//! no message longer than the buffer; every message it yields seals and
//! opens back to itself; no message is empty; and a message sealed
//! between two runs of garbage is always found.
#![no_main]

use kiln_nostd::envelope::{open, seal, sealed_len, Decoder, EnvelopeError, CHECK_LEN};
use libfuzzer_sys::fuzz_target;

type Events = Vec<Result<Vec<u8>, EnvelopeError>>;

fn decode(stream: &[u8], buf_len: usize, mut sizes: impl FnMut() -> usize) -> Events {
    let mut buf = vec![0u8; buf_len];
    let mut decoder = Decoder::new(&mut buf);
    let mut events = vec![];
    let mut at = 0;
    while at < stream.len() {
        let end = (at + sizes().max(1)).min(stream.len());
        let mut piece = &stream[at..end];
        while !piece.is_empty() {
            let (used, event) = decoder.feed(piece);
            assert!(used > 0 && used <= piece.len());
            if let Some(event) = event {
                events.push(event.map(<[u8]>::to_vec));
            }
            piece = &piece[used..];
        }
        at = end;
    }
    events
}

fn sealed(message: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; sealed_len(message.len())];
    seal(message, &mut out)
        .expect("sealed_len is room enough")
        .to_vec()
}

fuzz_target!(|data: &[u8]| {
    let [buf_len, split, rest @ ..] = data else {
        return;
    };
    let buf_len = usize::from(*buf_len) * 16;
    let whole = decode(rest, buf_len, || rest.len());
    let bytewise = decode(rest, buf_len, || 1);
    assert_eq!(whole, bytewise);
    let mut k = usize::from(*split);
    let split_up = decode(rest, buf_len, || {
        k = k.wrapping_mul(31).wrapping_add(7) % 97;
        k
    });
    assert_eq!(whole, split_up);
    for message in whole.iter().flatten() {
        assert!(!message.is_empty(), "an empty message was accepted");
        assert!(message.len() + CHECK_LEN <= buf_len);
        let frame = sealed(message);
        let mut out = vec![0u8; frame.len()];
        assert_eq!(open(&frame, &mut out).unwrap(), &message[..]);
        assert_eq!(decode(&frame, buf_len, || 3), vec![Ok(message.clone())]);
    }
    // Garbage, a sealed message, garbage: the message comes out.
    let (message, garbage) = rest.split_at(rest.len() / 2);
    if message.is_empty() {
        // Not sealed: the envelope carries no empty message.
        return;
    }
    let stream = [garbage, &sealed(message), garbage].concat();
    let events = decode(&stream, message.len() + CHECK_LEN, || usize::from(*split));
    assert!(
        events.contains(&Ok(message.to_vec())),
        "a sealed message was lost in garbage: {events:?}"
    );
});
