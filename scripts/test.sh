#!/usr/bin/env bash
# The test command: every check, on every target, in one run.
#
#   bash scripts/test.sh            all stages
#   bash scripts/test.sh fw wasm    only the named stages (setup always runs)
#
# Stages, in order (stops at the first failure, exit status non-zero):
#   fmt        cargo fmt --check (workspace and tests/firmware)
#   clippy     clippy -D warnings: workspace, default and all features;
#              tests/firmware on thumbv7m
#   doc        rustdoc -D warnings
#   python     reference codec: case file up to date, unit tests
#   test       cargo test --workspace --all-features (host), without alloc,
#              and the two example programs
#   package    cargo package of every library crate
#   demo       the README's main job: kiln check over samples/ (scripts/demo.sh)
#   differential  Python reference vs Rust check, walker, Value and typed
#              decoders on 200,000 mutants of the golden cases; the display
#              conversions against ml_dtypes (tests/oracles)
#   convert    kiln convert on real safetensors and GGUF files, both ways
#              (scripts/stages/convert.sh)
#   cli        kiln decode/encode against the Python reference's JSON form
#              (scripts/stages/cli.sh)
#   fuzz       a bounded smoke run of every cargo-fuzz target, then every
#              input that ever failed (scripts/stages/fuzz.sh)
#   bounds     work and allocation bounds: instruction counts (callgrind)
#              and heap (DHAT) of the inputs that once took unbounded time
#              (scripts/stages/bounds.sh)
#   thumb      kiln-nostd for thumbv7em-none-eabihf, without and with defmt+derive,
#              and the streaming decoder over embedded-io
#   bigendian  kiln-nostd tests + doc tests on s390x and powerpc64 (qemu-user)
#   firmware   Cortex-M3 under qemu-system-arm: demo, defmt-test golden suite,
#              flash/RAM report
#   nopanic    release firmware whose link fails if any panic path survives
#   wasm       kiln-nostd tests in node (wasm-bindgen-test-runner)
#   wasm-js    kiln-wasm's JS layer in node and headless Chromium
#              (scripts/stages/www.sh)
#   www        the browser module (64 KiB budget), its package from JS, and
#              the inspector end to end in headless Chromium
#              (scripts/stages/www.sh)
#   bench      smoke run of the benchmark table (scripts/bench.sh --quick;
#              scripts/stages/bench.sh): tiny sizes, no assertion on time
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

ALL_STAGES=(fmt clippy doc python test package demo differential convert cli fuzz bounds thumb bigendian firmware nopanic wasm wasm-js www bench)
if [ $# -gt 0 ]; then STAGES=("$@"); else STAGES=("${ALL_STAGES[@]}"); fi
for stage in "${STAGES[@]}"; do
    [[ " ${ALL_STAGES[*]} " == *" $stage "* ]] || { echo "unknown stage: $stage (${ALL_STAGES[*]})" >&2; exit 2; }
done

# Disk. A CI machine may have only a few GiB free, and a full run builds for
# six targets plus a sanitizer build for the fuzzers. Debug builds keep line
# tables only (backtraces still name files and lines; full debug info was
# most of the size), and nothing is built incrementally (a fresh clone never
# reuses it). Under CI, each stage's own build output is removed once no
# later stage needs it (prune_after), and every stage's summary line shows
# what is left on the disk.
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

disk_report() {
    local free used
    free="$(df -h --output=avail . | tail -1 | tr -d ' ')"
    used="$(du -sch target fuzz/target tests/firmware/target 2>/dev/null | tail -1 | cut -f1)"
    printf 'build output %s, disk free %s' "$used" "$free"
}

prune_after() { # stage
    [ "${CI:-}" = true ] || return 0
    case "$1" in
        fuzz) rm -rf fuzz/target ;;
        bigendian) rm -rf target/s390x-unknown-linux-gnu target/powerpc64-unknown-linux-gnu ;;
        nopanic) rm -rf target/thumbv7em-none-eabihf ;;
        www) rm -rf target/wasm32-unknown-unknown target/e2e-files ;;
    esac
}

SKIP_MARK="$(mktemp -u)"
trap 'rm -f "$SKIP_MARK"' EXIT
passed=0
failed=0
skipped=0
SUMMARY=()

banner() { printf '\n=== %s ===\n' "$*"; }
skip() { echo "WARNING: skipped: $*"; touch "$SKIP_MARK"; }

finish() {
    printf '\n=== summary ===\n'
    printf '%s\n' "${SUMMARY[@]}"
    echo "stages: $passed passed, $failed failed, $skipped skipped"
}

run_stage() { # name function
    local name="$1" start=$SECONDS
    rm -f "$SKIP_MARK"
    banner "stage $name"
    # In a subshell outside any `if`, so that `set -e` stops the stage at
    # its first failing command (inside an `if` condition bash ignores -e).
    local status=0
    set +e
    (
        set -e
        "$2"
    )
    status=$?
    set -e
    [ "$status" -ne 0 ] || prune_after "$name"
    if [ "$status" -eq 0 ]; then
        if [ -e "$SKIP_MARK" ]; then
            skipped=$((skipped + 1))
            SUMMARY+=("$(printf '%-13s skipped  %4d s  %s' "$name" $((SECONDS - start)) "$(disk_report)")")
        else
            passed=$((passed + 1))
            SUMMARY+=("$(printf '%-13s passed   %4d s  %s' "$name" $((SECONDS - start)) "$(disk_report)")")
        fi
    else
        failed=$((failed + 1))
        SUMMARY+=("$(printf '%-13s FAILED   %4d s  %s' "$name" $((SECONDS - start)) "$(disk_report)")")
        finish
        exit 1
    fi
}

# ---------------------------------------------------------------------------

stage_fmt() {
    cargo fmt --all -- --check
    (cd tests/firmware && cargo fmt -- --check)
}

stage_clippy() {
    cargo clippy --workspace --all-targets -- -D warnings
    cargo clippy --workspace --all-targets --all-features -- -D warnings
    (cd tests/firmware && cargo clippy --all-targets -- -D warnings)
}

stage_doc() {
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features
}

stage_python() {
    if [ -f spec/reference/gen_v2_cases.py ]; then
        python3 spec/reference/gen_v2_cases.py --check
    else
        skip "spec/reference/gen_v2_cases.py does not exist yet"
    fi
    if compgen -G "tests/python/test*.py" >/dev/null; then
        python3 -m unittest discover -s tests/python
    else
        skip "no tests in tests/python yet"
    fi
}

stage_test() {
    cargo test --workspace --all-features
    # Without alloc: the no-allocator paths (name sort, storage) on the host.
    cargo test -p kiln-nostd --features derive
    # The two newcomer programs of the README.
    cargo run -q -p kiln-nostd --features derive --example telemetry
    cargo run -q -p kiln-nostd --features std --example weights "$(mktemp -d)/weights.kiln"
}

stage_package() {
    # Every library crate packages and its package builds on its own (cargo
    # verifies the set together through a temporary registry).
    cargo package --allow-dirty -p kiln-derive -p kiln-nostd -p kiln-convert
}

stage_demo() {
    python3 samples/make_samples.py
    git diff --exit-code -- samples/ || { echo "samples/ is stale: run python3 samples/make_samples.py"; return 1; }
    bash scripts/demo.sh </dev/null
}

stage_differential() {
    python3 tests/differential/run.py
    # The display conversions against independent oracles (ml_dtypes).
    bash scripts/oracles.sh
    cargo build -q -p kiln-nostd --example widen_table
    KILN_WIDEN_TABLE="$PWD/target/debug/examples/widen_table" \
        python3 -m unittest discover -s tests/oracles -v
}

stage_thumb() {
    cargo build -p kiln-nostd --target thumbv7em-none-eabihf
    cargo build -p kiln-nostd --target thumbv7em-none-eabihf --features defmt,derive
    cargo build -p kiln-nostd --target thumbv7em-none-eabihf --features embedded-io,embedded-io-async
}

stage_bigendian() {
    # Runners and linkers: .cargo/config.toml. Doc tests run under the
    # runner too (cross-target doc tests are stable since Rust 1.89).
    # The tests and crate docs use #[derive(Frozen)].
    # std (and so alloc): dynamic values and owned copies are checked here too.
    cargo test -p kiln-nostd --target s390x-unknown-linux-gnu --features derive,std
    # Under CI one cross build at a time is on the disk (see prune_after).
    [ "${CI:-}" != true ] || rm -rf target/s390x-unknown-linux-gnu
    cargo test -p kiln-nostd --target powerpc64-unknown-linux-gnu --features derive,std
}

stage_firmware() {
    # Built from its own directory so tests/firmware/.cargo/config.toml
    # (target, linker scripts, qemu runner) applies.
    cd "$ROOT/tests/firmware"
    cargo run --bin demo
    cargo test
    echo "--- flash/RAM (cargo size, Berkeley: flash = text + data, static RAM = data + bss)"
    cargo build --release --bin demo
    cargo size --release --bin demo
    local golden
    golden="$(cargo test --no-run --message-format=json 2>/dev/null \
        | sed -nE 's/.*"executable":"([^"]*golden[^"]*)".*/\1/p' | tail -1)"
    if [ -n "$golden" ]; then
        echo "defmt-test golden suite (all cases embedded):"
        "$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-size" "$golden"
    fi
    cd "$ROOT"
}

stage_nopanic() {
    cd "$ROOT/tests/firmware"
    local nopanic=(--release --no-default-features --features nopanic --bin nopanic)
    if ! cargo build "${nopanic[@]}"; then
        echo
        echo "The no-panic link failed: a panic path survives in the code above."
        echo "Where (calls into core's panic entry points in the same build with an"
        echo "ordinary panic handler):"
        bash "$ROOT/scripts/find-panic-paths.sh" || true
        cd "$ROOT"
        return 1
    fi
    cargo size "${nopanic[@]}"
    # It also runs: exit status 0 when every verdict is the expected one.
    cargo run "${nopanic[@]}"
    cd "$ROOT"
}

stage_wasm() {
    # The runner only runs #[wasm_bindgen_test] functions; doc tests would
    # be reported as passed without running, so they are left out here
    # (they run on the host and on the big-endian targets).
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
        cargo test -p kiln-nostd --target wasm32-unknown-unknown --tests --features derive,alloc
}

# Stages kept in files of their own.
source "$ROOT/scripts/stages/convert.sh"
source "$ROOT/scripts/stages/cli.sh"
source "$ROOT/scripts/stages/www.sh"
source "$ROOT/scripts/stages/bench.sh"
source "$ROOT/scripts/stages/fuzz.sh"
source "$ROOT/scripts/stages/bounds.sh"

# ---------------------------------------------------------------------------

banner "setup"
bash scripts/setup.sh

for stage in "${STAGES[@]}"; do
    run_stage "$stage" "stage_$stage"
done
finish
