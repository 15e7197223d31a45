//! The sender of a model update: a Kiln message (a model file) split into
//! chunks of the link envelope, each sealed as one frame (COBS, its own
//! CRC-32C; `kiln_nostd::envelope::chunks`), written to a file for a link
//! to carry. The options write the damaged transfers the firmware's test
//! (tests/firmware/update-run.sh) must refuse, or must survive.
//!
//! ```text
//! cargo run -p kiln-nostd --features envelope --example model_transfer -- MODEL OUT [options]
//!   --chunk N          bytes of the model per frame (default 250)
//!   --garbage SEED     noise before, between and after the frames
//!   --flip BYTE:BIT    flip a bit of the model's byte BYTE on the link, after
//!                      the sender's CRC (a frame changed in transit)
//!   --drop K           leave out frame K (0 is the first)
//!   --stop-at N        cut the link after N bytes (a sender that stops early)
//!   --announce TOTAL   one frame announcing a TOTAL-byte model
//! ```

use std::process::ExitCode;

use kiln_nostd::envelope::{chunks, sealed_len, Chunk, CHECK_LEN, CHUNK_HEADER_LEN, DELIMITER};

/// A small deterministic generator (xorshift64*) for the noise.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Up to `most` bytes of line noise, about one in eight a delimiter.
    fn noise(&mut self, most: u64) -> Vec<u8> {
        (0..self.below(most + 1))
            .map(|_| {
                if self.below(8) == 0 {
                    DELIMITER
                } else {
                    self.next() as u8
                }
            })
            .collect()
    }
}

#[derive(Default)]
struct Damage {
    garbage: Option<u64>,
    flip: Option<(usize, u8)>,
    drop: Option<usize>,
    stop_at: Option<usize>,
    announce: Option<u32>,
}

/// The frame of `chunk`, its bit `bit` of model byte `at` flipped after
/// the CRC was computed: what a receiver gets when the link changes that
/// bit (the frame built from the `cobs` and `crc` crates directly).
fn changed_frame(chunk: &Chunk<'_>, at: usize, bit: u8) -> Vec<u8> {
    let mut body = chunk.header().to_vec();
    body.extend_from_slice(chunk.bytes);
    let crc = kiln_nostd::envelope::checksum(&body);
    body[CHUNK_HEADER_LEN + at - chunk.offset as usize] ^= 1 << bit;
    body.extend_from_slice(&crc.to_le_bytes());
    let mut coded = vec![0u8; cobs::max_encoding_length(body.len())];
    let n = cobs::encode(&body, &mut coded);
    let mut frame = vec![DELIMITER];
    frame.extend_from_slice(&coded[..n]);
    frame.push(DELIMITER);
    frame
}

fn transfer(model: &[u8], chunk_len: usize, damage: &Damage) -> Result<(Vec<u8>, usize), String> {
    let mut rng = Rng(damage.garbage.unwrap_or(1) | 1);
    let mut link = Vec::new();
    if damage.garbage.is_some() {
        // A run longer than any frame the receiver takes, then noise.
        link.extend((0..400).map(|_| rng.next() as u8 | 1));
        link.extend(rng.noise(64));
    }
    let mut frames = 0;
    let all = chunks(model, chunk_len).map_err(|e| format!("{e}"))?;
    for (k, mut chunk) in all.enumerate() {
        if let Some(total) = damage.announce {
            chunk.total = total;
        }
        let flip = damage.flip.filter(|&(at, _)| {
            (chunk.offset as usize..chunk.offset as usize + chunk.bytes.len()).contains(&at)
        });
        let frame = match flip {
            Some((at, bit)) => changed_frame(&chunk, at, bit),
            None => {
                let mut out = vec![0u8; sealed_len(CHUNK_HEADER_LEN + chunk.bytes.len())];
                chunk.seal(&mut out).map_err(|e| format!("{e}"))?.to_vec()
            }
        };
        if damage.drop != Some(k) {
            link.extend_from_slice(&frame);
            frames += 1;
        }
        if damage.garbage.is_some() {
            link.extend(rng.noise(64));
        }
        if damage.announce.is_some() {
            break;
        }
    }
    if damage.garbage.is_some() {
        link.extend((0..400).map(|_| rng.next() as u8));
    }
    if let Some(n) = damage.stop_at {
        link.truncate(n);
    }
    Ok((link, frames))
}

fn parse_args() -> Result<(String, String, usize, Damage), String> {
    let mut args = std::env::args().skip(1);
    let (Some(model), Some(out)) = (args.next(), args.next()) else {
        return Err("usage: model_transfer MODEL OUT [--chunk N] [--garbage SEED] [--flip BYTE:BIT] [--drop K] [--stop-at N] [--announce TOTAL]".into());
    };
    let mut chunk = 250usize;
    let mut damage = Damage::default();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: not a number: {v}"))
        };
        match flag.as_str() {
            "--chunk" => chunk = number(&value)? as usize,
            "--garbage" => damage.garbage = Some(number(&value)?),
            "--drop" => damage.drop = Some(number(&value)? as usize),
            "--stop-at" => damage.stop_at = Some(number(&value)? as usize),
            "--announce" => damage.announce = Some(number(&value)? as u32),
            "--flip" => {
                let (at, bit) = value.split_once(':').ok_or("--flip BYTE:BIT")?;
                let bit = number(bit)?;
                if bit > 7 {
                    return Err(format!("--flip: bit {bit} of a byte"));
                }
                damage.flip = Some((number(at)? as usize, bit as u8));
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok((model, out, chunk, damage))
}

fn main() -> ExitCode {
    let run = || -> Result<String, String> {
        let (model_path, out, chunk, damage) = parse_args()?;
        let model = std::fs::read(&model_path).map_err(|e| format!("{model_path}: {e}"))?;
        if let Some((at, _)) = damage.flip {
            if at >= model.len() {
                return Err(format!("--flip: byte {at} of a {}-byte model", model.len()));
            }
        }
        let (link, frames) = transfer(&model, chunk, &damage)?;
        std::fs::write(&out, &link).map_err(|e| format!("{out}: {e}"))?;
        Ok(format!(
            "model_transfer: {} byte model, {frames} frames of at most {chunk} bytes \
             ({} with header and CRC), {} bytes on the link -> {out}",
            model.len(),
            chunk + CHUNK_HEADER_LEN + CHECK_LEN,
            link.len()
        ))
    };
    match run() {
        Ok(line) => {
            eprintln!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("model_transfer: {e}");
            ExitCode::FAILURE
        }
    }
}
