#!/usr/bin/env bash
# The test command: every check, on every target, in one run.
#
#   bash scripts/test.sh            all stages
#   bash scripts/test.sh firmware wasm
#                                   only the named stages (setup always runs)
#   bash scripts/test.sh --list     the stages with their descriptions
#
# Each stage is declared once, by a `stage NAME "description"` line right
# above its stage_NAME function (in this file or in scripts/stages/*.sh);
# the order of the declarations is the run order. The list below and
# docs/stages.md are made from those lines by scripts/stage-table.sh (the
# `doc` stage fails when they differ). A stage stops at its first failing
# command; the run stops at the first failing stage. A tool a stage needs
# and cannot find fails the stage under CI (CI=true); elsewhere the stage
# is skipped and says so.
#
# Stages, in order (made by scripts/stage-table.sh):
# (stage list begin)
#   fmt              cargo fmt --check (workspace, tests/firmware, fuzz)
#   clippy           clippy -D warnings, default and all features; tests/firmware on thumbv7m
#   doc              rustdoc -D warnings; the stage lists agree with the declarations (stage-table.sh)
#   python           the Python reference codec: case file up to date, unit tests
#   cross            (in the background until fuzz) kiln-nostd tests and doc tests on s390x and powerpc64 through cross in a Debian-built image, and the swap mutants
#   test             cargo test: every crate with default features, then all features, no alloc, examples
#   package          cargo package of every library crate
#   demo             the README's main job: kiln check over samples/ (scripts/demo.sh)
#   differential     Python reference vs the Rust readers on 200,000 mutants; conversions vs ml_dtypes
#   convert          kiln convert on real safetensors and GGUF files, both ways; kiln-convert for wasm32
#   python-package   the kiln-codec Python package: pip install ./kiln-py in a fresh venv, pytest against kiln check, inspect and safetensors
#   cli              kiln decode/encode against the Python reference's JSON form; the tiny model samples
#   fuzz             a bounded run of every fuzz target (libFuzzer, ASan), then every input that ever failed
#   bounds           work and heap bounds of the inputs that once took unbounded time (callgrind, DHAT)
#   thumb            kiln-nostd for thumbv7em-none-eabihf: without features, with defmt+derive, with the envelope, embedded-io and small-code
#   bigendian        (by name only) the cross stage's tests with .cargo/config.toml's qemu-user runners, for a machine without a container engine
#   firmware         Cortex-M3 under qemu-system-arm: demo, golden suite (check and typed decoders), flash/RAM
#   firmware-m0      demo, golden suite and no-panic proof on a Cortex-M0 (qemu microbit)
#   firmware-riscv   demo, golden suite and no-panic proof on RISC-V (qemu-system-riscv32 virt)
#   firmware-update  kiln-update: a power cut at every flash operation (host); models over the micro:bit's UART into two slots, bad transfers refused, board resets mid-update
#   nopanic          release firmware whose link fails if any panic path survives
#   wasm             kiln-nostd tests in node (wasm-bindgen-test-runner)
#   wasm-js          kiln-wasm's JS layer in node and headless Chromium
#   www              the browser modules within their size budgets, the package from JS, the inspector in Chromium
#   bench            smoke run of the benchmark table (scripts/bench.sh --quick), no assertion on time
#   fresh            (by name only) the test command as CI runs it, in a fresh clone in a container built like a new machine; install and total times (scripts/fresh-machine.sh)
# (stage list end)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

# The stage list: `stage NAME "one-line description"` right above each
# stage_NAME function declares it (see the header).
# `stage --by-name NAME "..."` declares a stage that runs only when named
# (an alternative to another stage, for machines without what that one
# needs); --list marks it so.
# `stage --until LATER NAME "..."` declares a stage that runs in the
# background from its place in the order while the stages after it run,
# and is waited for before stage LATER (or at the end): for a stage that
# leaves cores idle (emulation, downloads), whose work then fills them.
# Its output is shown, and its line added to the summary, when it is
# waited for; a failure stops the run there. --list marks it so.
ALL_STAGES=()
DEFAULT_STAGES=()
declare -A STAGE_DESCRIPTION=()
declare -A STAGE_UNTIL=()
stage() { # [--by-name | --until LATER] name description
    local by_name=false until=
    if [ "$1" = --by-name ]; then by_name=true; shift; fi
    if [ "$1" = --until ]; then until="$2"; shift 2; fi
    [ -z "${STAGE_DESCRIPTION[$1]+set}" ] || { echo "test.sh: stage $1 declared twice" >&2; exit 2; }
    ALL_STAGES+=("$1")
    $by_name || DEFAULT_STAGES+=("$1")
    STAGE_DESCRIPTION[$1]="$2"
    $by_name && STAGE_DESCRIPTION[$1]="(by name only) $2"
    if [ -n "$until" ]; then
        STAGE_UNTIL[$1]="$until"
        STAGE_DESCRIPTION[$1]="(in the background until $until) $2"
    fi
    return 0
}

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
        cross) rm -rf target/cross ;;
        nopanic) rm -rf target/thumbv7em-none-eabihf ;;
        www) rm -rf target/wasm32-unknown-unknown target/e2e-files ;;
    esac
}

SKIP_MARK="$(mktemp -u)"
NOTE_FILE="$(mktemp -u)"
# Scripts a stage runs add their own figures there too (scripts/pip-pins.sh).
export KILN_NOTE_FILE="$NOTE_FILE"
trap 'rm -f "$SKIP_MARK" "$NOTE_FILE"' EXIT
passed=0
failed=0
skipped=0
SUMMARY=()

banner() { printf '\n=== %s ===\n' "$*"; }
# A skip is allowed only outside CI: under CI=true what a stage needs must
# be there (scripts/setup.sh installs it), so a skip is a failure.
skip() {
    if [ "${CI:-}" = true ]; then
        echo "FAILED: $* (under CI=true a missing tool fails the stage)" >&2
        exit 1
    fi
    echo "WARNING: skipped (outside CI only; under CI=true this fails): $*"
    touch "$SKIP_MARK"
}
# need_tool COMMAND WHY: true when COMMAND is on PATH; otherwise skip (or,
# under CI, fail). Use as `need_tool X "..." || return 0`.
need_tool() {
    command -v "$1" >/dev/null && return 0
    skip "$1 is not installed ($2)"
    return 1
}

# A stage's own figures, shown in the summary under its line.
note() { echo "$*" >>"$NOTE_FILE"; }
# The seconds a stage spent installing (its notes' `install ... N s` and
# `image N s (built` figures) add to the summary's install total.
STAGE_INSTALL_SECONDS=0
SETUP_SECONDS=0
add_notes() {
    [ -f "$NOTE_FILE" ] || return 0
    local line n
    while read -r line; do
        SUMMARY+=("                 $line")
        for n in $(grep -oE '(install(: [^,]*)? (in )?[0-9]+ s|image [0-9]+ s \(built)' <<<"$line" | grep -oE '[0-9]+ s' | grep -oE '[0-9]+'); do
            STAGE_INSTALL_SECONDS=$((STAGE_INSTALL_SECONDS + n))
        done
    done <"$NOTE_FILE"
}

finish() {
    stop_background
    printf '\n=== summary ===\n'
    printf '%s\n' "${SUMMARY[@]}"
    echo "stages: $passed passed, $failed failed, $skipped skipped"
    echo "time: $SECONDS s in all; installing $((SETUP_SECONDS + STAGE_INSTALL_SECONDS)) s (setup $SETUP_SECONDS s, within stages $STAGE_INSTALL_SECONDS s)"
}

# The machine's busy share of its cores while a stage ran (from /proc/stat,
# so containers and daemons count too): below ~90% on an otherwise idle
# machine, the stage leaves cores idle and overlapping work would pay.
cpu_ticks() { # prints "BUSY TOTAL"
    awk '/^cpu /{ busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6; exit }' /proc/stat 2>/dev/null || echo "0 0"
}
cpu_share() { # BUSY0 TOTAL0: percent busy since then
    local now
    read -r -a now <<<"$(cpu_ticks)"
    local total=$((now[1] - $2))
    [ "$total" -gt 0 ] && echo "cpu $(((now[0] - $1) * 100 / total))% of $(nproc)" || echo "cpu ?"
}

# record_stage NAME STATUS START BUSY TOTAL: the stage's summary line and
# notes (from $SKIP_MARK and $NOTE_FILE); stops the run when it failed.
record_stage() {
    local name="$1" status="$2" start="$3"
    local line
    [ "$status" -ne 0 ] || prune_after "$name"
    line="$(printf '%4d s  %s, %s' $((SECONDS - start)) "$(cpu_share "$4" "$5")" "$(disk_report)")"
    if [ "$status" -eq 0 ] && [ -e "$SKIP_MARK" ]; then
        skipped=$((skipped + 1))
        SUMMARY+=("$(printf '%-16s skipped  %s' "$name" "$line")")
    elif [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        SUMMARY+=("$(printf '%-16s passed   %s' "$name" "$line")")
    else
        failed=$((failed + 1))
        SUMMARY+=("$(printf '%-16s FAILED   %s' "$name" "$line")")
    fi
    add_notes
    [ "$status" -eq 0 ] || { finish; exit 1; }
}

run_stage() { # name function
    local name="$1" start=$SECONDS ticks
    read -r -a ticks <<<"$(cpu_ticks)"
    rm -f "$SKIP_MARK" "$NOTE_FILE"
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
    record_stage "$name" "$status" "$start" "${ticks[@]}"
}

# The stage running in the background (stage --until), if any: its name,
# start, CPU ticks then, process and directory (log, status, skip mark,
# notes).
BG_NAME=
BG_PID=
start_background() { # name
    BG_NAME="$1"
    BG_START=$SECONDS
    read -r -a BG_TICKS <<<"$(cpu_ticks)"
    BG_DIR="$(mktemp -d)"
    banner "stage $BG_NAME: in the background until stage ${STAGE_UNTIL[$BG_NAME]} (its output is shown then)"
    (
        SKIP_MARK="$BG_DIR/skip" NOTE_FILE="$BG_DIR/notes"
        export KILN_NOTE_FILE="$NOTE_FILE"
        set +e
        (
            set -e
            "stage_$BG_NAME"
        )
        echo $? >"$BG_DIR/status"
    ) >"$BG_DIR/log" 2>&1 </dev/null &
    BG_PID=$!
}

# Waits for the background stage, shows its output and records it.
join_background() {
    [ -n "$BG_PID" ] || return 0
    local start=$SECONDS status
    wait "$BG_PID" || true
    BG_PID=
    banner "stage $BG_NAME: its output (it ran in the background; waited $((SECONDS - start)) s for it here)"
    cat "$BG_DIR/log"
    status="$(cat "$BG_DIR/status" 2>/dev/null || echo 1)"
    SKIP_MARK="$BG_DIR/skip" NOTE_FILE="$BG_DIR/notes" record_stage "$BG_NAME" "$status" "$BG_START" "${BG_TICKS[@]}"
    rm -rf "$BG_DIR"
}

# A run that stops (a failing stage, an interrupt) stops the background
# stage too: TERM to its processes, deepest first, so that its own traps
# (the cross stage stops its Docker daemon) run.
stop_background() {
    [ -n "${BG_PID:-}" ] || return 0
    kill_tree() {
        local child
        for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$child"; done
        kill -TERM "$1" 2>/dev/null || true
    }
    echo "stopping the background stage $BG_NAME"
    kill_tree "$BG_PID"
    wait "$BG_PID" 2>/dev/null || true
    BG_PID=
    [ ! -f "$BG_DIR/log" ] || { echo "--- its output (last 30 lines)"; tail -30 "$BG_DIR/log"; }
    rm -rf "$BG_DIR"
}

# ---------------------------------------------------------------------------

stage fmt "cargo fmt --check (workspace, tests/firmware, fuzz)"
stage_fmt() {
    cargo fmt --all -- --check
    (cd tests/firmware && cargo fmt -- --check)
    (cd fuzz && cargo fmt -- --check)
}

stage clippy "clippy -D warnings, default and all features; tests/firmware on thumbv7m"
stage_clippy() {
    cargo clippy --workspace --all-targets -- -D warnings
    cargo clippy --workspace --all-targets --all-features -- -D warnings
    cargo clippy -p kiln-nostd --all-targets --features small-code,derive -- -D warnings
    (cd tests/firmware && cargo clippy --all-targets -- -D warnings)
}

stage doc "rustdoc -D warnings; the stage lists agree with the declarations (stage-table.sh)"
stage_doc() {
    RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features
    bash scripts/stage-table.sh --check
    python3 scripts/public-api.py kiln-nostd   # a change to the core's surface shows in review
}

stage python "the Python reference codec: case file up to date, unit tests"
stage_python() {
    python3 spec/reference/gen_v2_cases.py --check
    python3 -m unittest discover -s tests/python
}

# In the background from here until fuzz: its emulated tests and its
# image's download leave cores idle that the host's stages fill.
source "$ROOT/scripts/stages/cross.sh"

stage test "cargo test: every crate with default features, then all features, no alloc, examples"
stage_test() {
    # Plain cargo as a newcomer runs it: default features, the workspace and
    # the core crate alone (tests that need a feature declare
    # required-features, so these compile and run the rest).
    cargo test --workspace
    cargo test -p kiln-nostd
    # In a workspace build kiln-wasm-inspect turns on kiln-convert's
    # small-code (the browser module's size): alone, kiln-convert tests its
    # default header reader, the one the command line runs.
    cargo test -p kiln-convert
    cargo test --workspace --all-features
    # Without alloc: the no-allocator paths (name sort, storage) on the host.
    cargo test -p kiln-nostd --features derive
    # --all-features has small-code; these two run each alternative of the
    # directory check without it too (small-code without alloc: names
    # compared pairwise), and the streaming encoders and the envelope with
    # the default directory check and CRC table.
    cargo test -p kiln-nostd --features small-code,derive
    cargo test -p kiln-nostd --features derive,alloc,envelope,embedded-io,embedded-io-async
    # The two newcomer programs of the README.
    cargo run -q -p kiln-nostd --features derive --example telemetry
    cargo run -q -p kiln-nostd --features std --example weights "$(mktemp -d)/weights.kiln"
}

stage package "cargo package of every library crate"
stage_package() {
    # Every library crate packages and its package builds on its own (cargo
    # verifies the set together through a temporary registry).
    #
    # cargo treats a registry crate as immutable, and this temporary registry
    # sits at the same path every run: a kiln-nostd 0.1.0 that an earlier run
    # unpacked or compiled (with an older API) would be reused, and
    # kiln-convert's verify build would fail on today's code. So the stage
    # has its own target directory, and our crates' unpacked copies and
    # builds go first; third-party builds stay. Local registries are the
    # source directories whose names start with '-'.
    local target="$PWD/target/package-check"
    local cargo_src="${CARGO_HOME:-$HOME/.cargo}/registry/src"
    local crate
    for crate in kiln-derive kiln-nostd kiln-convert kiln-update; do
        rm -rf "$cargo_src"/-*/"$crate"-* \
            "$target"/debug/.fingerprint/"$crate"-* "$target"/debug/build/"$crate"-* \
            "$target"/debug/deps/*"${crate//-/_}"-*
    done
    CARGO_TARGET_DIR="$target" cargo package --allow-dirty -p kiln-derive -p kiln-nostd -p kiln-convert -p kiln-update
}

stage demo "the README's main job: kiln check over samples/ (scripts/demo.sh)"
stage_demo() {
    python3 samples/make_samples.py
    git diff --exit-code -- samples/ || { echo "samples/ is stale: run python3 samples/make_samples.py"; return 1; }
    bash scripts/demo.sh </dev/null
}

stage differential "Python reference vs the Rust readers on 200,000 mutants; conversions vs ml_dtypes"
stage_differential() {
    python3 tests/differential/run.py
    # The display conversions against independent oracles (ml_dtypes).
    bash scripts/oracles.sh
    cargo build -q -p kiln-nostd --example widen_table
    KILN_WIDEN_TABLE="$PWD/target/debug/examples/widen_table" \
        python3 -m unittest discover -s tests/oracles -v
}

# Stages kept in files of their own, sourced where they run in the order.
source "$ROOT/scripts/stages/convert.sh"
source "$ROOT/scripts/stages/python-package.sh"
source "$ROOT/scripts/stages/cli.sh"
source "$ROOT/scripts/stages/fuzz.sh"
source "$ROOT/scripts/stages/bounds.sh"

stage thumb "kiln-nostd for thumbv7em-none-eabihf: without features, with defmt+derive, with the envelope, embedded-io and small-code"
stage_thumb() {
    cargo build -p kiln-nostd --target thumbv7em-none-eabihf
    cargo build -p kiln-nostd --target thumbv7em-none-eabihf --features defmt,derive
    cargo build -p kiln-nostd --target thumbv7em-none-eabihf --features envelope,embedded-io,embedded-io-async,small-code
}

stage --by-name bigendian "the cross stage's tests with .cargo/config.toml's qemu-user runners, for a machine without a container engine"
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

# cargo_size CARGO_BUILD_ARGS...: builds, then prints the sizes of each
# binary built (llvm-size of the llvm-tools component: what cargo-binutils'
# `cargo size` prints, without installing it).
cargo_size() {
    local exes
    exes="$(cargo build "$@" --message-format=json-render-diagnostics |
        sed -nE 's/.*"executable":"([^"]+)".*/\1/p')"
    [ -n "$exes" ] || { echo "cargo_size: cargo build $* built no binary" >&2; return 1; }
    # shellcheck disable=SC2086 # one path per line, none with spaces
    bash "$ROOT/scripts/llvm-tool.sh" llvm-size $exes
}

source "$ROOT/scripts/stages/firmware.sh"

stage nopanic "release firmware whose link fails if any panic path survives"
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
    cargo_size "${nopanic[@]}"
    # It also runs: exit status 0 when every verdict is the expected one.
    cargo run "${nopanic[@]}"
    cd "$ROOT"
}

stage wasm "kiln-nostd tests in node (wasm-bindgen-test-runner)"
stage_wasm() {
    # The runner only runs #[wasm_bindgen_test] functions; doc tests would
    # be reported as passed without running, so they are left out here
    # (they run on the host and on the big-endian targets).
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
        cargo test -p kiln-nostd --target wasm32-unknown-unknown --tests --features derive,alloc
}

source "$ROOT/scripts/stages/www.sh"
source "$ROOT/scripts/stages/bench.sh"

stage --by-name fresh "the test command as CI runs it, in a fresh clone in a container built like a new machine; install and total times (scripts/fresh-machine.sh)"
stage_fresh() {
    # Needs root, debootstrap and Debian's dockerd (all installed by the
    # cross stage); builds its image (minutes) and removes it afterwards.
    bash scripts/fresh-machine.sh
}

# ---------------------------------------------------------------------------

if [ "${1:-}" = --list ]; then
    for stage in "${ALL_STAGES[@]}"; do
        printf '%-16s %s\n' "$stage" "${STAGE_DESCRIPTION[$stage]}"
    done
    exit 0
fi
if [ $# -gt 0 ]; then STAGES=("$@"); else STAGES=("${DEFAULT_STAGES[@]}"); fi
for stage in "${STAGES[@]}"; do
    [ -n "${STAGE_DESCRIPTION[$stage]+set}" ] || {
        echo "unknown stage: $stage (bash scripts/test.sh --list shows them: ${ALL_STAGES[*]})" >&2
        exit 2
    }
done

# Setup: what it installed and how long each step took goes into the
# summary (scripts/setup.sh writes one `STEP SECONDS NOTE` line per step).
banner "setup"
SETUP_TIMES="$(mktemp)"
trap 'rm -f "$SKIP_MARK" "$NOTE_FILE" "$SETUP_TIMES"' EXIT
setup_status=0
KILN_SETUP_TIMES="$SETUP_TIMES" bash scripts/setup.sh || setup_status=$?
while read -r step seconds note; do
    SUMMARY+=("$(printf '%-16s %-17s %4d s  %s' setup "$step" "$seconds" "$note")")
    [ "$step" != total ] || SETUP_SECONDS="$seconds"
done <"$SETUP_TIMES"
if [ "$setup_status" -ne 0 ]; then
    SUMMARY+=("setup         FAILED")
    finish
    exit 1
fi

trap 'stop_background; rm -f "$SKIP_MARK" "$NOTE_FILE" "$SETUP_TIMES"' EXIT
for stage in "${STAGES[@]}"; do
    if [ -n "$BG_PID" ] && [ "${STAGE_UNTIL[$BG_NAME]}" = "$stage" ]; then join_background; fi
    if [ -n "${STAGE_UNTIL[$stage]:-}" ]; then
        # One background stage at a time.
        join_background
        start_background "$stage"
    else
        run_stage "$stage" "stage_$stage"
    fi
done
join_background
finish
