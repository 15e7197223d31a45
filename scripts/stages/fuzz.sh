# The `fuzz` stage of scripts/test.sh: a bounded smoke run of every
# cargo-fuzz target in fuzz/ (libFuzzer with the address sanitizer, on the
# stable toolchain through RUSTC_BOOTSTRAP=1), then every input that ever
# failed (fuzz/regressions/TARGET/). Sourced by test.sh, which runs
# stage_fuzz from the repository root in a subshell with `set -e`.
#
#   FUZZ_SECONDS=N   seconds per target (default 10)
#   FUZZ_CORPUS=DIR  corpus directory (default fuzz/corpus, kept between
#                    runs and ignored by git); seeded from the golden cases
#                    by fuzz/seeds.py
#
# Each target stops at the first crash, panic, sanitizer report, input
# slower than 10 s (-timeout), allocation above 512 MB (-malloc_limit_mb)
# or RSS above 2 GB, and the stage fails; the slow target's own bound is
# 100 ms per call on inputs under 4 KiB. About 3 minutes on 2 cores with a
# cold ASan build, 80 s warm. A long run of one target:
#
#   cd fuzz && nice -n 10 env RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET corpus/TARGET -- -max_total_time=1800

FUZZ_FLAGS=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=4096 -print_final_stats=1)

stage fuzz "a bounded run of every fuzz target (libFuzzer, ASan), then every input that ever failed"
stage_fuzz() {
    if ! command -v cargo-fuzz >/dev/null; then
        echo "stage fuzz: cargo-fuzz is not installed (scripts/setup.sh installs it)" >&2
        return 1
    fi
    local seconds="${FUZZ_SECONDS:-10}"
    local corpus="${FUZZ_CORPUS:-$PWD/fuzz/corpus}"
    python3 fuzz/seeds.py "$corpus"
    cd fuzz
    export RUSTC_BOOTSTRAP=1
    cargo fuzz build
    local target log start
    for target in $(cargo fuzz list); do
        log="$(mktemp)"
        start=$SECONDS
        if ! nice -n 10 cargo fuzz run "$target" "$corpus/$target" -- \
            -max_total_time="$seconds" "${FUZZ_FLAGS[@]}" >"$log" 2>&1; then
            tail -60 "$log"
            echo "stage fuzz: $target failed; the input is in fuzz/artifacts/$target/" >&2
            rm -f "$log"
            return 1
        fi
        printf '%-11s %3d s  %s execs  %s\n' "$target" $((SECONDS - start)) \
            "$(sed -nE 's/^stat::number_of_executed_units: *//p' "$log")" \
            "$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | sed -E 's/[[:space:]]+exec\/s.*//; s/^#[0-9]+[[:space:]]+DONE[[:space:]]+//')"
        rm -f "$log"
        if [ -d "regressions/$target" ]; then
            # Every input that ever failed, once each.
            cargo fuzz run "$target" regressions/"$target"/* -- "${FUZZ_FLAGS[@]}" >/dev/null 2>&1 || {
                echo "stage fuzz: $target fails a regression input in fuzz/regressions/$target/" >&2
                return 1
            }
            echo "            regressions: $(ls "regressions/$target" | wc -l) inputs pass"
        fi
    done
    cd "$ROOT"
}
