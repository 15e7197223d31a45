# The `bounds` stage of scripts/test.sh: the inputs that once took
# unbounded time, run under valgrind, with a bound on the instructions
# they take (callgrind: deterministic, unlike wall time) and on their peak
# heap (DHAT). Sourced by test.sh, which runs stage_bounds from the
# repository root in a subshell with `set -e`. tests/bounds/run.py makes
# the inputs and holds the bounds; about 30 s.

stage bounds "work and heap bounds of the inputs that once took unbounded time (callgrind, DHAT)"
stage_bounds() {
    if ! command -v valgrind >/dev/null; then
        echo "stage bounds: valgrind is not installed (scripts/setup.sh installs it)" >&2
        return 1
    fi
    cargo build -q --release -p kiln-nostd --features alloc --example work
    cargo build -q --release -p kiln-cli
    python3 tests/bounds/run.py
}
