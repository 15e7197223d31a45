# ---------------------------------------------------------------------------
# The `cli` stage of scripts/test.sh: the kiln command line against the
# Python reference. Sourced by test.sh, which runs stage_cli from the
# repository root in a subshell with `set -e`.
#
# tests/cli/test_json.py: for every accepted golden case `kiln decode`
# prints byte for byte what spec/reference/kiln_json.py prints, and each side
# reads the other's JSON back to the case's bytes; 20,000 random float bit
# patterns print the same in both. tests/cli/test_samples.py: the tiny
# model samples are current (samples/make_model_samples.py writes them),
# readable by the safetensors library and gguf-py when installed, and come
# back from `kiln convert` byte for byte. Standard library only; about five
# seconds.
# (The Rust tests of the command line, including `kiln gen`'s compiled
# output and the error tests, run in the `test` stage.)

stage cli "kiln decode/encode against the Python reference's JSON form; the tiny model samples"
stage_cli() {
    cargo build -p kiln-cli
    python3 samples/make_model_samples.py
    git diff --exit-code -- samples/ || { echo "samples/ is stale: run python3 samples/make_model_samples.py"; return 1; }
    KILN_BIN="$PWD/target/debug/kiln" python3 -m unittest discover -s tests/cli -v
}
