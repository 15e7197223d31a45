//! The link envelope (kiln_nostd::envelope, outside the Kiln format):
//! frames are the reference COBS of message + CRC-32C between delimiters;
//! every single-bit flip of an enveloped golden message is refused, on the
//! buffer path and the stream path; a stream with garbage before, between
//! and after messages, fed in pieces of any size, yields exactly the valid
//! messages in order. A message sent in chunks comes back whole, in
//! order, through garbage; a lost, repeated or foreign chunk and every
//! single-bit flip of a chunked transfer are refused.

#![cfg(feature = "envelope")]

use kiln_nostd::envelope::{
    checksum, chunks, open, seal, sealed_len, Chunk, Decoder, Encoder, EnvelopeError, Reassembly,
    CHECK_LEN, CHUNK_HEADER_LEN,
};
use kiln_nostd::Sink;

#[path = "support/cases.rs"]
mod golden_cases;

/// The bytes of every accepted golden case (the messages a link carries):
/// all but the empty ones (a value of a type with no bytes, such as
/// `struct{}`), which the envelope does not carry (`EmptyMessage`).
fn accepted_messages() -> Vec<(String, Vec<u8>)> {
    golden_cases::cases()
        .into_iter()
        .filter(|c| c.expect.is_none() && !c.bytes.is_empty())
        .map(|c| (c.name, c.bytes))
        .collect()
}

/// The frame built from the two crates directly, not through the module.
fn reference_frame(message: &[u8]) -> Vec<u8> {
    let crc = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI).checksum(message);
    let mut body = message.to_vec();
    body.extend_from_slice(&crc.to_le_bytes());
    let mut coded = vec![0u8; cobs::max_encoding_length(body.len())];
    let n = cobs::encode(&body, &mut coded);
    let mut frame = vec![0u8];
    frame.extend_from_slice(&coded[..n]);
    frame.push(0);
    frame
}

fn sealed(message: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; sealed_len(message.len())];
    seal(message, &mut out).unwrap().to_vec()
}

/// Feeds `stream` in pieces of the sizes `sizes` yields; returns every
/// event (messages as `Ok`).
fn decode_stream(
    stream: &[u8],
    buf_len: usize,
    mut sizes: impl FnMut() -> usize,
) -> Vec<Result<Vec<u8>, EnvelopeError>> {
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

fn messages_of(events: &[Result<Vec<u8>, EnvelopeError>]) -> Vec<Vec<u8>> {
    events.iter().filter_map(|e| e.clone().ok()).collect()
}

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// Messages around the COBS block boundaries (254 bytes with no zero),
/// with and without zeros, and the golden ones.
fn sample_messages() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = accepted_messages().into_iter().map(|(_, b)| b).collect();
    for len in [
        1usize, 2, 3, 249, 250, 251, 253, 254, 255, 507, 508, 509, 1000,
    ] {
        out.push((0..len).map(|i| (i % 255 + 1) as u8).collect());
        out.push((0..len).map(|i| (i % 7) as u8).collect());
        out.push(vec![0; len]);
    }
    out
}

#[test]
fn seal_and_the_stream_encoder_write_the_reference_frame_and_open_reads_it_back() {
    let messages = sample_messages();
    assert!(messages.len() > 100);
    for m in &messages {
        let want = reference_frame(m);
        let frame = sealed(m);
        assert_eq!(frame, want, "seal, {} bytes", m.len());
        assert!(frame.len() <= sealed_len(m.len()));
        assert!(!frame[1..frame.len() - 1].contains(&0));
        // The stream encoder, fed in uneven pieces, twice in a row.
        let mut two = vec![0u8; 2 * want.len()];
        let mut enc = Encoder::new(kiln_nostd::SliceSink::new(&mut two));
        for _ in 0..2 {
            for piece in m.chunks(37) {
                enc.put(piece).unwrap();
            }
            enc.finish().unwrap();
        }
        assert_eq!(
            enc.into_inner().into_written(),
            &[want.clone(), want.clone()].concat()[..]
        );
        // Back: with and without the delimiters around it.
        let mut out = vec![0u8; frame.len()];
        assert_eq!(open(&frame, &mut out).unwrap(), &m[..]);
        assert_eq!(open(&frame[1..frame.len() - 1], &mut out).unwrap(), &m[..]);
        // Room for the message and its checksum, and no less.
        let mut exact = vec![0u8; m.len() + CHECK_LEN];
        assert_eq!(open(&frame, &mut exact).unwrap(), &m[..]);
        let mut short = vec![0u8; m.len() + CHECK_LEN - 1];
        // The refusal counts the whole frame, not the bytes up to where
        // the buffer ran out.
        assert_eq!(
            open(&frame, &mut short),
            Err(EnvelopeError::TooLong {
                length: m.len() + CHECK_LEN,
                limit: m.len() + CHECK_LEN - 1
            })
        );
        let mut small = vec![0u8; frame.len() - 1];
        assert_eq!(
            seal(m, &mut small).map(<[u8]>::len),
            Err(EnvelopeError::TooLong {
                length: frame.len(),
                limit: frame.len() - 1
            })
        );
        assert_eq!(
            seal(m, &mut []).map(<[u8]>::len),
            Err(EnvelopeError::TooLong {
                length: frame.len(),
                limit: 0
            })
        );
    }
}

#[test]
fn every_single_bit_flip_of_an_enveloped_message_is_refused() {
    let goldens = accepted_messages();
    // Fourteen golden messages of sizes from 0 to 833 bytes (several COBS
    // blocks); the 4 KB one would take seconds in a debug build.
    let mut picked: Vec<&(String, Vec<u8>)> =
        goldens.iter().filter(|(_, b)| b.len() < 1000).collect();
    picked.sort_by_key(|(_, b)| b.len());
    let step = (picked.len() / 12).max(1);
    let mut chosen: Vec<&(String, Vec<u8>)> = picked.iter().step_by(step).copied().collect();
    chosen.push(picked[picked.len() - 1]);
    assert!(chosen.last().unwrap().1.len() > 508);
    let good = sealed(b"the frame after");
    let mut flips = 0usize;
    for (name, message) in chosen {
        let frame = sealed(message);
        let mut out = vec![0u8; frame.len() + 8];
        for bit in 0..frame.len() * 8 {
            let mut bad = frame.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            flips += 1;
            // Buffer path: refused.
            let opened = open(&bad, &mut out).map(<[u8]>::to_vec);
            assert!(
                opened.is_err(),
                "{name}: flip of bit {bit} accepted: {opened:?}"
            );
            // Stream path: the flipped frame then a good one; only the
            // good one comes out.
            let stream = [bad, good.clone()].concat();
            let events = decode_stream(&stream, stream.len(), || stream.len());
            assert_eq!(
                messages_of(&events),
                vec![b"the frame after".to_vec()],
                "{name}: flip of bit {bit}"
            );
        }
    }
    assert!(flips > 10_000, "only {flips} flips");
}

#[test]
fn a_stream_with_garbage_yields_exactly_the_valid_messages() {
    let messages = sample_messages();
    for seed in 1..=8u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut stream = vec![];
        let mut sent = vec![];
        let garbage = |rng: &mut Rng, stream: &mut Vec<u8>| {
            let len = rng.below(300);
            // Sometimes without a zero, so it runs straight into the frame.
            let zero_free = rng.below(2) == 0;
            for _ in 0..len {
                let b = rng.next() as u8;
                stream.push(if zero_free { b | 1 } else { b });
            }
        };
        garbage(&mut rng, &mut stream);
        for _ in 0..20 {
            let m = &messages[rng.below(messages.len())];
            stream.extend_from_slice(&sealed(m));
            sent.push(m.clone());
            if rng.below(3) > 0 {
                garbage(&mut rng, &mut stream);
            }
        }
        garbage(&mut rng, &mut stream);
        let longest = sent.iter().map(Vec::len).max().unwrap() + CHECK_LEN;
        // In one piece, one byte at a time, and at random split points.
        let whole = decode_stream(&stream, longest, || stream.len());
        assert_eq!(messages_of(&whole), sent, "seed {seed}, whole");
        let bytewise = decode_stream(&stream, longest, || 1);
        assert_eq!(bytewise, whole, "seed {seed}, byte by byte");
        let mut split = Rng(seed);
        let random = decode_stream(&stream, longest, || split.below(64));
        assert_eq!(random, whole, "seed {seed}, random splits");
    }
}

#[test]
fn frames_too_long_or_too_short_are_refused_and_the_next_frame_still_decodes() {
    let long = vec![9u8; 100];
    let short = b"ok".to_vec();
    let stream = [sealed(&long), vec![0, 2, 1, 0], sealed(&short)].concat();
    let events = decode_stream(&stream, 16, || 5);
    assert_eq!(
        events,
        vec![
            Err(EnvelopeError::TooLong {
                length: 100 + CHECK_LEN,
                limit: 16
            }),
            Err(EnvelopeError::TooShort),
            Ok(short.clone())
        ]
    );
    let mut out = [0u8; 64];
    assert_eq!(open(&[0, 0], &mut out), Err(EnvelopeError::Empty));
    assert_eq!(open(&[], &mut out), Err(EnvelopeError::Empty));
    let frame = sealed(&short);
    let mut joined = frame.clone();
    joined.insert(3, 0);
    assert_eq!(open(&joined, &mut out), Err(EnvelopeError::BadCobs));
    // A run that claims more bytes than arrive before the delimiter.
    assert_eq!(
        decode_stream(&[0, 9, 1, 2, 0], 16, || 5),
        vec![Err(EnvelopeError::BadCobs)]
    );
}

#[cfg(feature = "embedded-io")]
#[test]
fn a_value_sealed_into_a_writer_is_the_sealed_message() {
    use kiln_nostd::{to_slice, TensorSpec, Tensors};
    let values: Vec<f32> = (0..700).map(|i| i as f32).collect();
    let specs = [TensorSpec::from_host(&[700], &values).named("w")];
    let mut buf = vec![0u8; 8192];
    let message = to_slice(&Tensors(&specs), &mut buf).unwrap().to_vec();
    let mut out = vec![0u8; 8192];
    let n = kiln_nostd::envelope::seal_to_writer(&Tensors(&specs), &mut out[..]).unwrap();
    assert_eq!(&out[..n], &sealed(&message)[..]);
}

/// A message sent in chunks of `size` bytes: the frames, one per chunk.
fn chunked(message: &[u8], size: usize) -> Vec<Vec<u8>> {
    chunks(message, size)
        .unwrap()
        .map(|chunk| {
            let mut out = vec![0u8; sealed_len(CHUNK_HEADER_LEN + chunk.bytes.len())];
            chunk.seal(&mut out).unwrap().to_vec()
        })
        .collect()
}

/// What a receiver does with a stream of chunk frames: passes over the
/// frames the envelope refuses, stores each chunk the reassembly accepts
/// at its offset, and stops at the first refused chunk or once complete.
/// `Ok(message)` when complete, else the refusal, or `None` when the
/// stream ended first.
fn receive(stream: &[u8], split: &mut Rng) -> Option<Result<Vec<u8>, EnvelopeError>> {
    // Room for the largest chunk the tests send, its header and checksum.
    let mut buf = vec![0u8; 1000 + CHUNK_HEADER_LEN + CHECK_LEN];
    let mut decoder = Decoder::new(&mut buf);
    let mut reassembly = Reassembly::new();
    let mut stored = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        let piece = &rest[..(1 + split.below(40)).min(rest.len())];
        let (used, event) = decoder.feed(piece);
        rest = &rest[used..];
        let Some(Ok(message)) = event else { continue };
        let verdict = Chunk::parse(message).and_then(|chunk| {
            let done = reassembly.accept(&chunk)?;
            assert_eq!(chunk.offset as usize, stored.len());
            stored.extend_from_slice(chunk.bytes);
            Ok(done)
        });
        match verdict {
            Ok(true) => return Some(Ok(stored)),
            Ok(false) => {}
            Err(e) => return Some(Err(e)),
        }
    }
    None
}

fn model_like(len: usize) -> Vec<u8> {
    let mut rng = Rng(len as u64 + 1);
    (0..len).map(|_| rng.next() as u8 & 0x0F).collect()
}

#[test]
fn a_message_sent_in_chunks_comes_back_whole_through_garbage() {
    let mut split = Rng(7);
    for (len, size) in [
        (0usize, 250usize),
        (1, 250),
        (1000, 250),
        (1000, 1),
        (2503, 250),
        (250, 250),
        (251, 250),
        (5000, 1000),
    ] {
        let message = model_like(len);
        let frames = chunked(&message, size);
        assert_eq!(frames.len(), len.div_ceil(size).max(1), "{len} in {size}");
        // Each frame is the reference frame of its header and bytes.
        for (i, frame) in frames.iter().enumerate() {
            let at = i * size;
            let bytes = &message[at..(at + size).min(len)];
            let mut body = Vec::new();
            body.extend_from_slice(&(at as u32).to_le_bytes());
            body.extend_from_slice(&(len as u32).to_le_bytes());
            body.extend_from_slice(&checksum(&message).to_le_bytes());
            body.extend_from_slice(bytes);
            assert_eq!(
                frame,
                &reference_frame(&body),
                "frame {i} of {len} in {size}"
            );
        }
        assert_eq!(
            receive(&frames.concat(), &mut split),
            Some(Ok(message.clone()))
        );
        // Garbage (zeros and runs that look like COBS) before, between and
        // after the frames.
        let mut rng = Rng(len as u64 + 99);
        let garbage = |rng: &mut Rng| -> Vec<u8> {
            (0..rng.below(600))
                .map(|_| {
                    if rng.below(8) == 0 {
                        0
                    } else {
                        rng.next() as u8
                    }
                })
                .collect()
        };
        let mut stream = garbage(&mut rng);
        for frame in &frames {
            stream.extend_from_slice(frame);
            stream.extend(garbage(&mut rng));
        }
        assert_eq!(
            receive(&stream, &mut split),
            Some(Ok(message)),
            "{len} in {size}, garbage"
        );
    }
}

#[test]
fn a_lost_repeated_or_foreign_chunk_is_refused() {
    let mut split = Rng(11);
    let message = model_like(1000);
    let frames = chunked(&message, 100);
    let mut lost = frames.clone();
    lost.remove(4);
    assert_eq!(
        receive(&lost.concat(), &mut split),
        Some(Err(EnvelopeError::OutOfOrder))
    );
    let mut repeated = frames.clone();
    repeated.insert(4, frames[3].clone());
    assert_eq!(
        receive(&repeated.concat(), &mut split),
        Some(Err(EnvelopeError::OutOfOrder))
    );
    // Joined after the start.
    assert_eq!(
        receive(&frames[1..].concat(), &mut split),
        Some(Err(EnvelopeError::OutOfOrder))
    );
    // A chunk of another message of the same length: its digest differs.
    let other = chunked(
        &model_like(999).into_iter().chain([1]).collect::<Vec<_>>(),
        100,
    );
    let mut mixed = frames.clone();
    mixed[5] = other[5].clone();
    assert_eq!(
        receive(&mixed.concat(), &mut split),
        Some(Err(EnvelopeError::ChunkMismatch))
    );
    // The last chunk missing: never complete.
    assert_eq!(receive(&frames[..9].concat(), &mut split), None);
    // Chunks whose bytes are all as sent but whose digest is not the
    // message's: refused at the last.
    let mut reassembly = Reassembly::new();
    for (i, piece) in message.chunks(100).enumerate() {
        let chunk = Chunk {
            offset: (i * 100) as u32,
            total: 1000,
            digest: 1,
            bytes: piece,
        };
        let verdict = reassembly.accept(&chunk);
        if i < 9 {
            assert_eq!(verdict, Ok(false));
        } else {
            assert_eq!(verdict, Err(EnvelopeError::CrcMismatch));
        }
    }
    assert!(!reassembly.is_complete());
    assert_eq!(reassembly.received(), 900);
    assert_eq!(reassembly.total(), Some(1000));
}

#[test]
fn a_chunk_header_is_parsed_and_refused_when_it_cannot_be() {
    let bytes = [9u8; 5];
    let chunk = Chunk {
        offset: 3,
        total: 8,
        digest: 0xDEAD_BEEF,
        bytes: &bytes,
    };
    let mut message = chunk.header().to_vec();
    message.extend_from_slice(&bytes);
    assert_eq!(Chunk::parse(&message), Ok(chunk));
    assert_eq!(
        Chunk::parse(&message[..CHUNK_HEADER_LEN - 1]),
        Err(EnvelopeError::TooShort)
    );
    // One byte past the total.
    message.push(9);
    assert_eq!(Chunk::parse(&message), Err(EnvelopeError::ChunkMismatch));
    // Offsets near u32::MAX do not wrap.
    let far = Chunk {
        offset: u32::MAX,
        total: u32::MAX,
        digest: 0,
        bytes: &bytes,
    };
    let mut message = far.header().to_vec();
    message.extend_from_slice(&bytes);
    assert_eq!(Chunk::parse(&message), Err(EnvelopeError::ChunkMismatch));
}

#[test]
fn every_single_bit_flip_of_a_chunked_transfer_is_refused() {
    let message = model_like(700);
    let stream = chunked(&message, 100).concat();
    let mut split = Rng(5);
    let mut refused = 0usize;
    for bit in 0..stream.len() * 8 {
        let mut flipped = stream.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        match receive(&flipped, &mut split) {
            Some(Ok(got)) => panic!("bit {bit}: accepted {} bytes", got.len()),
            Some(Err(_)) => refused += 1,
            // The last frame lost: a receiver's timeout refuses it.
            None => {}
        }
    }
    println!(
        "chunked transfer: {} bit flips, {refused} refused at a chunk, the rest incomplete",
        stream.len() * 8
    );
    assert!(refused > stream.len() * 8 / 2);
}

#[test]
fn a_frame_too_long_says_how_long_and_the_room() {
    let chunk = Chunk {
        offset: 0,
        total: 3,
        digest: checksum(b"abc"),
        bytes: b"abc",
    };
    let mut out = [0u8; 64];
    let whole = chunk.seal(&mut out).unwrap().len();
    let err = chunk.seal(&mut out[..whole - 2]).unwrap_err();
    assert_eq!(
        err,
        EnvelopeError::TooLong {
            length: whole,
            limit: whole - 2
        }
    );
    assert_eq!(err.name(), "TooLong");
    assert_eq!(
        err.to_string(),
        format!(
            "envelope: message longer than the buffer (needs {whole} bytes, room for {})",
            whole - 2
        )
    );
}

/// The stream decoder copies the data of a COBS run in bulk: its events
/// are those of the `cobs` crate's byte-at-a-time state machine, on
/// streams dense in delimiters, long runs and `0xFF` codes, fed in
/// pieces of every size, with buffers shorter and longer than the frames.
#[test]
fn the_bulk_stream_decoder_agrees_with_the_byte_state_machine() {
    use cobs::{DecodeResult, DecoderState};

    /// What the decoder must say of one decoded frame.
    fn verdict(frame: &[u8], room: usize) -> Result<Vec<u8>, EnvelopeError> {
        if frame.len() > room {
            return Err(EnvelopeError::TooLong {
                length: frame.len(),
                limit: room,
            });
        }
        let Some(len) = frame.len().checked_sub(CHECK_LEN) else {
            return Err(EnvelopeError::TooShort);
        };
        if len == 0 {
            return Err(EnvelopeError::EmptyMessage);
        }
        let (message, check) = frame.split_at(len);
        if checksum(message).to_le_bytes() != check {
            return Err(EnvelopeError::CrcMismatch);
        }
        Ok(message.to_vec())
    }

    fn reference(stream: &[u8], room: usize) -> Vec<Result<Vec<u8>, EnvelopeError>> {
        let mut state = DecoderState::Idle;
        let mut frame = vec![];
        let mut events = vec![];
        for &byte in stream {
            match state.feed(byte) {
                Ok(DecodeResult::NoData) => {}
                Ok(DecodeResult::DataContinue(b)) => frame.push(b),
                Ok(DecodeResult::DataComplete) => {
                    events.push(verdict(&std::mem::take(&mut frame), room))
                }
                Err(_) => {
                    frame.clear();
                    state = DecoderState::Idle;
                    events.push(Err(EnvelopeError::BadCobs));
                }
            }
        }
        events
    }

    let mut rng = Rng(0x5EED_C0B5);
    for round in 0..400 {
        // Real frames with their bytes changed, delimiters and 0xFF codes
        // thrown in, and runs of noise.
        let mut stream = vec![];
        while stream.len() < 2000 {
            match rng.below(4) {
                0 => {
                    let len = 1 + rng.below(600);
                    let message: Vec<u8> = (0..len)
                        .map(|_| {
                            if rng.below(3) == 0 {
                                0
                            } else {
                                rng.next() as u8
                            }
                        })
                        .collect();
                    let mut frame = sealed(&message);
                    if rng.below(3) == 0 {
                        let at = rng.below(frame.len());
                        frame[at] = [0x00, 0xFF, 0x01, rng.next() as u8][rng.below(4)];
                    }
                    stream.extend_from_slice(&frame);
                }
                1 => stream.extend((0..rng.below(300)).map(|_| rng.next() as u8 | 1)),
                2 => stream.extend([0xFF; 3]),
                _ => stream.push(0),
            }
        }
        let room = [16, 255, 300, 700, 4096][round % 5];
        let want = reference(&stream, room);
        let piece = [1, 2, 7, 64, 255, 4096][round % 6];
        let mut buf = vec![0u8; room];
        let mut decoder = Decoder::new(&mut buf);
        let mut got = vec![];
        for mut part in stream.chunks(piece) {
            while !part.is_empty() {
                let (used, event) = decoder.feed(part);
                assert!(used > 0 && used <= part.len());
                if let Some(event) = event {
                    got.push(event.map(<[u8]>::to_vec));
                }
                part = &part[used..];
            }
        }
        assert_eq!(got, want, "round {round}: room {room}, pieces of {piece}");
    }
}

/// A `0x01` code byte of a real message's run of zeros flipped to `0x00`
/// splits its frame in two; when the flip leaves five `0x01` codes after
/// it, the second piece is `00 01 01 01 01 01 00`: COBS of four zeros,
/// the CRC-32C of no bytes. It is refused as an empty message on both
/// paths, and no message comes out of the damaged frame.
#[test]
fn a_fragment_holding_only_a_checksum_is_refused_as_an_empty_message() {
    // The longest accepted golden message with a run of at least nine
    // zeros: its frame has five 0x01 codes in a row.
    let (name, message) = accepted_messages()
        .into_iter()
        .filter(|(_, m)| m.windows(9).any(|w| w.iter().all(|&b| b == 0)))
        .max_by_key(|(_, m)| m.len())
        .expect("a golden message with a run of zeros");
    let frame = sealed(&message);
    let at = (1..frame.len() - 6)
        .find(|&i| frame[i..i + 6].iter().all(|&b| b == 1))
        .expect("five 0x01 codes after a sixth");
    let mut damaged = frame.clone();
    damaged[at] = 0;
    assert_eq!(&damaged[at..at + 7], &[0, 1, 1, 1, 1, 1, 1]);
    // Cut where the fragment ends, as a receiver's next delimiter would.
    let fragment = [0, 1, 1, 1, 1, 1, 0];
    assert_eq!(checksum(&[]), 0, "the CRC-32C of no bytes");

    let mut out = [0u8; 16];
    assert_eq!(open(&fragment, &mut out), Err(EnvelopeError::EmptyMessage));
    assert_eq!(
        open(&[1, 1, 1, 1, 1], &mut out),
        Err(EnvelopeError::EmptyMessage)
    );
    let mut stream = damaged[..at + 6].to_vec();
    stream.push(0);
    let events = decode_stream(&stream, message.len() + CHECK_LEN, || 3);
    assert!(
        events.contains(&Err(EnvelopeError::EmptyMessage)),
        "{name}: {events:?}"
    );
    assert!(
        messages_of(&events).is_empty(),
        "{name}: a message was accepted"
    );

    // The sender never writes one: an empty message is not sealed.
    let mut room = [0u8; 16];
    assert_eq!(seal(&[], &mut room), Err(EnvelopeError::EmptyMessage));
    let mut encoder = Encoder::new(Vec::<u8>::new());
    assert!(encoder.finish().is_err());
    assert!(encoder.into_inner().is_empty());
}
