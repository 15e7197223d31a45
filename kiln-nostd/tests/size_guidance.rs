//! The size figures of docs/firmware.md ("Tensor or list"), computed with
//! the encoder: each row of the doc's table must be what `encoded_len`
//! gives for the value it names, so the guidance cannot drift from the
//! bytes.

use kiln_nostd::{encoded_len, PodList, TensorSpec, Tensors};

const DOC: &str = include_str!("../../docs/firmware.md");

/// `(row label, encoded bytes)` for the doc's table.
fn rows() -> Vec<(String, usize)> {
    let m4: Vec<f32> = (0..16).map(|i| i as f32).collect();
    let v3 = [0.5f32, 1.5, 2.5];
    let big: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    let mut rows = vec![];
    let list = |values: &[f32]| encoded_len(&PodList::from_slice(values)).unwrap();
    let tensors = |specs: &[TensorSpec<'_>]| encoded_len(&Tensors(specs)).unwrap();

    rows.push(("3 f32 as `list<f32>`".to_string(), list(&v3)));
    rows.push((
        "3 f32 as one unnamed tensor".to_string(),
        tensors(&[TensorSpec::from_host(&[3], &v3)]),
    ));
    rows.push(("4x4 f32 as `list<f32>`".to_string(), list(&m4)));
    rows.push((
        "4x4 f32 as one unnamed tensor".to_string(),
        tensors(&[TensorSpec::from_host(&[4, 4], &m4)]),
    ));
    rows.push((
        "4x4 f32 as one tensor named `rot`".to_string(),
        tensors(&[TensorSpec::from_host(&[4, 4], &m4).named("rot")]),
    ));
    rows.push((
        "three 4x4 f32 as three `list<f32>`".to_string(),
        3 * list(&m4),
    ));
    rows.push((
        "three 4x4 f32 as three unnamed tensors".to_string(),
        tensors(&[
            TensorSpec::from_host(&[4, 4], &m4),
            TensorSpec::from_host(&[4, 4], &m4),
            TensorSpec::from_host(&[4, 4], &m4),
        ]),
    ));
    rows.push(("1024 f32 (4 KiB) as `list<f32>`".to_string(), list(&big)));
    rows.push((
        "1024 f32 (4 KiB) as one unnamed tensor".to_string(),
        tensors(&[TensorSpec::from_host(&[32, 32], &big)]),
    ));
    rows.push(("an empty `tensors` field".to_string(), tensors(&[])));
    rows
}

#[test]
fn the_firmware_guide_states_the_sizes_the_encoder_writes() {
    let rows = rows();
    for (label, bytes) in &rows {
        println!("| {label} | {bytes} |");
    }
    for (label, bytes) in &rows {
        let line = format!("| {label} | {bytes} |");
        assert!(
            DOC.lines().any(|l| l.starts_with(&line)),
            "docs/firmware.md lacks the row `{line}`"
        );
    }
    // The costs the guide states in words.
    let m4: Vec<f32> = (0..16).map(|i| i as f32).collect();
    let one = encoded_len(&Tensors(&[TensorSpec::from_host(&[4, 4], &m4)])).unwrap();
    let two = encoded_len(&Tensors(&[
        TensorSpec::from_host(&[4, 4], &m4),
        TensorSpec::from_host(&[4, 4], &m4),
    ]))
    .unwrap();
    assert_eq!(encoded_len(&Tensors(&[])).unwrap(), 64, "the header");
    assert_eq!(
        two - one,
        128 + 64,
        "a descriptor and one 64-byte payload slot"
    );
    assert_eq!(
        encoded_len(&PodList::from_slice(&m4)).unwrap(),
        4 + 16 * 4,
        "a count word and the elements"
    );
}
