//! Memory-maps a converted model and reads one tensor where it lies.
//!
//! ```sh
//! kiln convert samples/tiny.safetensors /tmp/tiny.kiln
//! cargo run -p kiln-convert --example view_in_place -- /tmp/tiny.kiln token_embd.weight
//! ```
//!
//! `Model::open` checks the whole file once (every rule of the format, the
//! alignment of every directory, names unique across directories); after
//! that a lookup is one hash probe and a view is a slice of the map: no
//! payload byte is copied.

use std::process::ExitCode;

use kiln_convert::Model;
use kiln_nostd::{Dtype, DtypeCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, name] = args.as_slice() else {
        eprintln!("usage: view_in_place FILE.kiln TENSOR");
        return ExitCode::from(2);
    };
    match run(path, name) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(path: &str, name: &str) -> Result<(), Box<dyn std::error::Error>> {
    let file = std::fs::File::open(path)?;
    // SAFETY: the map is read-only and lives until the end of this
    // function; a file changed by another process while it is mapped can
    // change what is read, but every read stays inside the map.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    let model = Model::open(&map)?;
    let tensor = model
        .tensor(name)
        .ok_or_else(|| format!("no tensor named {name:?} among {}", model.len()))?;
    let range = tensor.byte_range();
    println!(
        "{name}: {} {:?}, bytes {}..{} of the file (offset % 64 = {})",
        tensor.dtype(),
        tensor.shape().as_ref(),
        range.start,
        range.end,
        range.start % 64
    );
    if tensor.dtype() == DtypeCode::from(Dtype::F32) {
        let values: &[f32] = tensor.as_slice()?; // in place: a slice of the map
        let address = values.as_ptr() as usize;
        let mapped = map.as_ptr() as usize..map.as_ptr() as usize + map.len();
        println!(
            "viewed in place: {} values at address {:#x}, inside the map: {}; first values {:?}",
            values.len(),
            address,
            mapped.contains(&address),
            &values[..values.len().min(8)]
        );
        if !mapped.contains(&address) {
            return Err("the view is not inside the memory map".into());
        }
    } else {
        println!(
            "(a {} tensor: its bytes are viewable in place too, as_slice::<u8>())",
            tensor.dtype()
        );
    }
    Ok(())
}
