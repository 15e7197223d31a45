//! What the update tests share: a model of the firmware's type, its
//! transfer as the link delivers it, and an updater over a simulated flash.

#![allow(dead_code)]

use kiln_nostd::envelope::{chunks, sealed_len, CHECK_LEN, CHUNK_HEADER_LEN};
use kiln_nostd::{from_bytes, to_vec, CompiledType, Directory, Frozen, Options, TensorSpec};
use kiln_update::sim::SimFlash;
use kiln_update::{boot, Current, Installed, Layout, Refused, Updater};

/// The firmware's model type (tests/firmware/src/bin/update.rs).
#[derive(Frozen)]
pub struct Model<'a> {
    pub version: u32,
    pub layer: Directory<'a>,
    pub note: &'a str,
}

pub const TYPE: &str = "struct{version:u32,layer:tensors,note:str,}";
pub const NODES: usize = 4;
pub const DEPTH: usize = 1;
/// Not a multiple of any write unit, so units span chunks.
pub const CHUNK: usize = 250;

/// A model of `version` with a `rows` x 32 f32 weight and a bias.
pub fn model(version: u32, rows: usize) -> Vec<u8> {
    let weights: Vec<f32> = (0..rows * 32)
        .map(|i| ((i * 7 + version as usize) % 101) as f32 * 0.5 - 20.0)
        .collect();
    let bias: Vec<f32> = (0..rows).map(|r| r as f32 + version as f32).collect();
    let shape = [rows as u64, 32];
    let bias_shape = [rows as u64];
    let mut block = vec![0u8; rows * 32 * 4 + rows * 4 + 4096];
    let layer = Directory::build(
        &[
            TensorSpec::from_host(&shape, &weights).named("weight"),
            TensorSpec::from_host(&bias_shape, &bias).named("bias"),
        ],
        &mut block,
    )
    .unwrap();
    to_vec(&Model {
        version,
        layer,
        note: "kiln model update",
    })
    .unwrap()
}

/// The model's frames: each chunk of [`CHUNK`] bytes, enveloped.
pub fn frames(model: &[u8]) -> Vec<Vec<u8>> {
    chunks(model, CHUNK)
        .unwrap()
        .map(|chunk| {
            let mut out = vec![0u8; sealed_len(CHUNK + CHUNK_HEADER_LEN)];
            chunk.seal(&mut out).unwrap().to_vec()
        })
        .collect()
}

/// The model as the link delivers it: its frames back to back.
pub fn transfer(model: &[u8]) -> Vec<u8> {
    frames(model).concat()
}

pub fn ty() -> CompiledType<'static, NODES> {
    CompiledType::parse(TYPE).unwrap()
}

/// Feeds `link` to a new updater on `flash` in pieces of `piece` bytes,
/// as a board would after [`boot`]; the link then goes quiet.
pub fn update<const W: usize, const E: usize>(
    flash: &mut SimFlash<W, E>,
    layout: &Layout,
    link: &[u8],
    piece: usize,
) -> Result<Installed, Refused> {
    let current = boot(flash, layout)?;
    let ty = ty();
    let mut frame = [0u8; CHUNK + CHUNK_HEADER_LEN + CHECK_LEN];
    let mut scratch = [0u8; 1024];
    let mut updater = Updater::<_, NODES, DEPTH>::new(
        &mut *flash,
        *layout,
        current,
        &ty,
        Options::BARE,
        &mut frame,
        &mut scratch,
    );
    for piece in link.chunks(piece.max(1)) {
        if let Some(installed) = updater.on_link_bytes(piece)? {
            return Ok(installed);
        }
    }
    Err(updater.link_ended())
}

/// The current model's bytes at boot, if any, read in place and used:
/// its version, after the Kiln check of `from_bytes`.
pub fn booted<const W: usize, const E: usize>(
    flash: &mut SimFlash<W, E>,
    layout: &Layout,
) -> Option<(Current, Vec<u8>, u32)> {
    let current = boot(flash, layout).unwrap()?;
    let bytes = current.bytes(flash.bytes(), 0).unwrap().to_vec();
    let model: Model<'_> = from_bytes(&bytes).expect("the current model is a valid Kiln value");
    let version = model.version;
    Some((current, bytes, version))
}
