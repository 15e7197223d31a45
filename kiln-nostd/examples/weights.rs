//! A weights file on a host: three named tensors written to a file, read
//! back into an aligned buffer, looked up by name, viewed in place (or
//! copied once when a view is not possible), and an f16 tensor widened to
//! f32.
//!
//! ```sh
//! cargo run -p kiln-nostd --features std --example weights [OUT.kiln]
//! ```

use kiln_nostd::{f16, AlignedBytes, Directory, Dtype, TensorSpec, Tensors};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("kiln-weights-example.kiln"));

    // --- write -------------------------------------------------------------
    let embedding: Vec<f32> = (0..12).map(|i| i as f32 * 0.25).collect();
    let bias = [0.5f32, -0.5, 0.25];
    let scales: Vec<f16> = [1.0f32, 0.5, 2.0, 4.0]
        .iter()
        .map(|&x| f16::from_f32(x))
        .collect();
    // Names in byte order, as a dict of tensors would be: lookups are then
    // binary searches with no index.
    let specs = [
        TensorSpec::from_host(&[3], &bias).named("bias"),
        TensorSpec::from_host(&[4, 3], &embedding).named("embedding"),
        TensorSpec::from_host(&[4], &scales).named("scales"),
    ];
    let bytes = kiln_nostd::to_vec(&Tensors(&specs))?;
    std::fs::write(&path, &bytes)?;
    println!("wrote {} ({} bytes)", path.display(), bytes.len());

    // --- read ---------------------------------------------------------------
    // An aligned buffer: every payload can be viewed in place.
    let file = AlignedBytes::read_file(&path)?;
    let dir = Directory::parse(&file)?;
    println!(
        "{} tensors, names sorted: {}",
        dir.len(),
        dir.names_sorted()
    );
    for t in &dir {
        println!(
            "  {:<10} {:<5} {:?} at bytes {:?}",
            t.name().unwrap_or("-"),
            t.dtype(),
            t.shape(),
            t.byte_range()
        );
    }
    let embedding_view: &[f32] = dir.by_name("embedding").ok_or("no embedding")?.as_slice()?;
    assert_eq!(embedding_view, embedding.as_slice());

    // Not aligned (a copy of the file at an odd address): as_slice refuses,
    // view_or_copy copies once, and the numbers are the same.
    let mut shifted = vec![0u8; file.len() + 1];
    shifted[1..].copy_from_slice(&file);
    let odd = Directory::parse(&shifted[1..])?;
    let bias_view = odd.by_name("bias").ok_or("no bias")?;
    println!(
        "as_slice at an odd address: {}",
        bias_view.as_slice::<f32>().unwrap_err()
    );
    let mut scratch = [0f32; 3];
    assert_eq!(bias_view.view_or_copy(&mut scratch)?, &bias);

    // f16 widened to f32 exactly.
    let scales_view = dir.by_name("scales").ok_or("no scales")?;
    assert_eq!(scales_view.closed_dtype(), Some(Dtype::F16));
    let mut widened = [0f32; 4];
    scales_view.copy_into_f32(&mut widened)?;
    println!("scales as f32: {widened:?}");
    assert_eq!(widened, [1.0, 0.5, 2.0, 4.0]);
    Ok(())
}
