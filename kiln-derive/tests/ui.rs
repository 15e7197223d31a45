//! Compile-fail tests: what `#[derive(Frozen)]` refuses, and where the
//! compiler points. The expected messages are tests/ui/*.stderr; after a
//! deliberate change, regenerate them with `TRYBUILD=overwrite cargo test
//! -p kiln-derive --test ui` and read the diff.

#[test]
fn refused_input() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
