# The `fuzz` stage of scripts/test.sh: a bounded smoke run of every fuzz
# target in fuzz/ (libFuzzer with the address sanitizer, on the stable
# toolchain through RUSTC_BOOTSTRAP=1), then every input that ever failed
# (fuzz/regressions/TARGET/). Sourced by test.sh, which runs stage_fuzz
# from the repository root in a subshell with `set -e`.
#
#   FUZZ_SECONDS=N   seconds per target (default 10)
#   FUZZ_JOBS=N      targets run at once (default: the machine's cores)
#   FUZZ_CORPUS=DIR  corpus directory (default fuzz/corpus, kept between
#                    runs and ignored by git); seeded from the golden cases
#                    by fuzz/seeds.py
#
# Each target stops at the first crash, panic, sanitizer report, input
# slower than 10 s (-timeout), allocation above 512 MB (-malloc_limit_mb)
# or RSS above 2 GB, and the stage fails; the slow target's own bound is
# 100 ms per call on inputs under 4 KiB. About 3 minutes on 2 cores with a
# cold ASan build, 80 s warm.
#
# The targets are built by plain cargo with the flags cargo-fuzz 0.13.2
# passes for `cargo fuzz build` (FUZZ_RUSTFLAGS below, read from its
# src/project.rs), so nothing is installed for them: cargo-fuzz is a thin
# wrapper whose own install is minutes of compiling. Run as a script, this
# file is that wrapper:
#
#   bash scripts/stages/fuzz.sh list
#   bash scripts/stages/fuzz.sh build
#   bash scripts/stages/fuzz.sh run TARGET [LIBFUZZER ARGS / INPUTS...]
#   bash scripts/stages/fuzz.sh run check fuzz/corpus/check -max_total_time=1800
#
# `cargo fuzz run TARGET` (cargo-fuzz installed by hand) builds the same
# binaries into the same directory, fuzz/target/x86_64-unknown-linux-gnu/release/.

# Run as a script, there is no stage list to declare into.
[ "${BASH_SOURCE[0]}" != "$0" ] || stage() { :; }

FUZZ_FLAGS=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=4096 -print_final_stats=1)

# cargo-fuzz 0.13.2's defaults: sanitizer-coverage instrumentation with
# comparison tracing and stack depth, no branch folding (more edges for
# libFuzzer to tell apart), `cfg(fuzzing)`, AddressSanitizer, debug
# assertions on, one codegen unit (the sancov pass blocks ThinLTO imports
# across units).
FUZZ_RUSTFLAGS=(
    -Cpasses=sancov-module
    -Cllvm-args=-sanitizer-coverage-level=4
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
    -Cllvm-args=-sanitizer-coverage-pc-table
    -Cllvm-args=-sanitizer-coverage-trace-compares
    --cfg fuzzing
    -Cllvm-args=-simplifycfg-branch-fold-threshold=0
    -Zsanitizer=address
    -Cllvm-args=-sanitizer-coverage-stack-depth
    -Cdebug-assertions
    -Ccodegen-units=1
)
FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../fuzz" && pwd)"

# fuzz_build: builds every target; prints one `NAME PATH` line per binary.
fuzz_build() {
    local host
    host="$(rustc -vV | sed -n 's/^host: //p')"
    RUSTC_BOOTSTRAP=1 RUSTFLAGS="${FUZZ_RUSTFLAGS[*]} ${RUSTFLAGS:-}" \
        cargo build --manifest-path "$FUZZ_DIR/Cargo.toml" --target "$host" --release \
        --config 'profile.release.debug="line-tables-only"' --bins \
        --message-format=json-render-diagnostics |
        sed -nE 's/.*"target":\{[^}]*"name":"([^"]+)".*"executable":"([^"]+)".*/\1 \2/p'
}

# fuzz_run BINARY TARGET ARGS...: one target's libFuzzer run at low
# priority, failing inputs written to fuzz/artifacts/TARGET/ (as cargo
# fuzz run does).
fuzz_run() {
    local binary="$1" target="$2"
    shift 2
    mkdir -p "$FUZZ_DIR/artifacts/$target"
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0" \
        nice -n 10 "$binary" -artifact_prefix="$FUZZ_DIR/artifacts/$target/" "$@"
}

# fuzz_target BINARY TARGET SECONDS CORPUS: one target's bounded run and
# its regression inputs; its report lines on stdout, its failure (with the
# run's tail) on stderr and in the exit status.
fuzz_target() {
    local binary="$1" target="$2" seconds="$3" corpus="$4" log start
    log="$(mktemp)"
    start=$SECONDS
    mkdir -p "$corpus/$target"
    if ! fuzz_run "$binary" "$target" "$corpus/$target" \
        -max_total_time="$seconds" "${FUZZ_FLAGS[@]}" >"$log" 2>&1; then
        tail -60 "$log" >&2
        echo "stage fuzz: $target failed; the input is in fuzz/artifacts/$target/" >&2
        rm -f "$log"
        return 1
    fi
    printf '%-11s %3d s  %s execs  %s\n' "$target" $((SECONDS - start)) \
        "$(sed -nE 's/^stat::number_of_executed_units: *//p' "$log")" \
        "$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | sed -E 's/[[:space:]]+exec\/s.*//; s/^#[0-9]+[[:space:]]+DONE[[:space:]]+//')"
    rm -f "$log"
    if [ -d "fuzz/regressions/$target" ]; then
        # Every input that ever failed, once each.
        fuzz_run "$binary" "$target" fuzz/regressions/"$target"/* "${FUZZ_FLAGS[@]}" >/dev/null 2>&1 || {
            echo "stage fuzz: $target fails a regression input in fuzz/regressions/$target/" >&2
            return 1
        }
        echo "            regressions: $(ls "fuzz/regressions/$target" | wc -l) inputs pass"
    fi
}

stage fuzz "a bounded run of every fuzz target (libFuzzer, ASan), then every input that ever failed"
stage_fuzz() {
    local seconds="${FUZZ_SECONDS:-10}"
    local corpus="${FUZZ_CORPUS:-$PWD/fuzz/corpus}"
    # A libFuzzer run is one process on one core: as many targets run at
    # once as there are cores (FUZZ_JOBS), each with its whole budget, so
    # the stage does the same work in less wall time.
    local jobs="${FUZZ_JOBS:-$(nproc)}"
    python3 fuzz/seeds.py "$corpus"
    local built
    built="$(fuzz_build)"
    [ -n "$built" ] || { echo "stage fuzz: the fuzz build made no binary" >&2; return 1; }
    local out target binary status=0 pids=() outs=()
    out="$(mktemp -d)"
    # Reports in the targets' order, each when its batch is done.
    fuzz_batch_end() {
        local i
        for i in "${!pids[@]}"; do
            wait "${pids[$i]}" || status=1
            cat "${outs[$i]}"
        done
        pids=() outs=()
    }
    while read -r target binary; do
        fuzz_target "$binary" "$target" "$seconds" "$corpus" >"$out/$target" &
        pids+=("$!")
        outs+=("$out/$target")
        [ "${#pids[@]}" -lt "$jobs" ] || fuzz_batch_end
    done <<<"$built"
    fuzz_batch_end
    rm -rf "$out"
    return "$status"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    case "${1:-}" in
        list)
            sed -nE '/^\[\[bin\]\]/,/^name/ s/^name *= *"([^"]+)".*/\1/p' "$FUZZ_DIR/Cargo.toml"
            ;;
        build)
            fuzz_build
            ;;
        run)
            [ $# -ge 2 ] || { echo "usage: bash scripts/stages/fuzz.sh run TARGET [ARGS...]" >&2; exit 2; }
            target="$2"
            shift 2
            binary="$(fuzz_build | sed -n "s/^$target //p")"
            [ -n "$binary" ] || { echo "fuzz: no target $target (bash scripts/stages/fuzz.sh list)" >&2; exit 2; }
            mkdir -p "$FUZZ_DIR/corpus/$target"
            [ $# -gt 0 ] || set -- "$FUZZ_DIR/corpus/$target"
            fuzz_run "$binary" "$target" "$@"
            ;;
        *)
            sed -n 's/^#   \(bash scripts\/stages\/fuzz.sh\)/\1/p' "${BASH_SOURCE[0]}" >&2
            exit 2
            ;;
    esac
fi
