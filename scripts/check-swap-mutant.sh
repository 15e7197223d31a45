#!/usr/bin/env bash
# Proves that the big-endian run can see a broken byte swap: breaks the
# swap in kiln-nostd/src/order.rs and element.rs one way at a time, runs kiln-nostd's tests
# on s390x under qemu-user, and requires each mutant to fail tests that
# pass on the unmodified source. The file is restored by a trap whatever
# happens. The `cross` stage of scripts/test.sh runs it through cross.
#
#   bash scripts/check-swap-mutant.sh [TARGET]   (default s390x-unknown-linux-gnu)
#
# SWAP_MUTANT_CARGO is the command that runs `test` (default `cargo`, with
# the runners of .cargo/config.toml; `cross +1.95.0` runs it in cross's
# container). SWAP_MUTANT_TESTS selects test targets (default: all of
# kiln-nostd's tests and doc tests); fewer tests can only catch fewer
# mutants, so a selection makes the check stricter, never weaker.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET="${1:-s390x-unknown-linux-gnu}"
read -r -a CARGO_COMMAND <<<"${SWAP_MUTANT_CARGO:-cargo}"
read -r -a TEST_SELECTION <<<"${SWAP_MUTANT_TESTS:-}"
# The files the mutants edit: the byte-order module and the element
# trait's per-type swap.
FILES=(kiln-nostd/src/order.rs kiln-nostd/src/element.rs)
WORK="$(mktemp -d)"
backup() { echo "$WORK/$(basename "$1").orig"; }
for file in "${FILES[@]}"; do cp -p "$file" "$(backup "$file")"; done
# Failures the mutants cause are recorded by proptest as regression seeds;
# they are not real regressions, so new seed files are removed afterwards.
SEEDS_BEFORE="$(ls kiln-nostd/tests/*.proptest-regressions 2>/dev/null || true)"

# Writes back with a fresh modification time (cp without -p): with the
# old time, cargo would keep the mutant's build as up to date.
restore() {
    local file
    for file in "${FILES[@]}"; do
        if ! cmp -s "$file" "$(backup "$file")"; then
            cp "$(backup "$file")" "$file"
            echo "check-swap-mutant: restored $file"
        fi
    done
    for seeds in kiln-nostd/tests/*.proptest-regressions; do
        [[ -e "$seeds" ]] || continue
        grep -qxF "$seeds" <<<"$SEEDS_BEFORE" || rm -f "$seeds"
    done
    rm -rf "$WORK"
}
trap restore EXIT
trap 'exit 130' INT TERM

# name @ file @ exact text in it @ replacement (`@` apart: Rust code has `|`)
O=kiln-nostd/src/order.rs
E=kiln-nostd/src/element.rs
MUTANTS=(
    "copy_into copies without swapping@$O@    return copy_swapped(payload, out);@    return copy_native(payload, out);"
    "copy_swapped does not reverse@$E@                    element.reverse();@"
    "copy_per_element reads host order@$O@        *slot = T::from_le(bytes).ok_or_else(|| wrong_width(bytes.len(), T::WIDTH))?;@        *slot = bytemuck::pod_read_unaligned(bytes);"
    "write_le writes host bytes@$O@        write_per_element(values, w)
    }@        w.put(bytemuck::cast_slice(values))
    }"
    "write_host_elements skips the reversal@$O@    write_reversed_elements(bytes, width, w)
}@    w.put(bytes)
}"
)

run_tests() { # $1: log file. Prints the names of failing tests.
    "${CARGO_COMMAND[@]}" test -p kiln-nostd --target "$TARGET" --features derive,std --no-fail-fast \
        ${TEST_SELECTION[@]+"${TEST_SELECTION[@]}"} >"$1" 2>&1 || true
    # No test ran at all: a build error, or the container did not start.
    if ! grep -q "test result" "$1"; then
        echo "BUILD-FAILED"
        return
    fi
    grep -E "^test .* \.\.\. FAILED$" "$1" | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' | sort -u || true
}

echo "== baseline: unmodified ${FILES[*]} on $TARGET"
baseline="$(run_tests "$WORK/baseline.log")"
if [ "$baseline" = "BUILD-FAILED" ]; then
    tail -30 "$WORK/baseline.log"
    echo "check-swap-mutant: the unmodified crate does not build for $TARGET" >&2
    exit 2
fi
if [ -n "$baseline" ]; then
    echo "note: already failing without a mutant (ignored below):"
    printf '    %s\n' $baseline
fi

killed=0
survived=0
for mutant in "${MUTANTS[@]}"; do
    IFS='@' read -r -d '' name file from to <<<"$mutant" || true
    to="${to%$'\n'}"
    echo "== mutant: $name"
    cp "$(backup "$file")" "$file"
    FROM="$from" TO="$to" python3 - "$file" <<'PY'
import os, sys
path = sys.argv[1]
text = open(path).read()
old, new = os.environ["FROM"], os.environ["TO"]
if text.count(old) != 1:
    sys.exit(f"mutant text found {text.count(old)} times in {path}; update scripts/check-swap-mutant.sh")
open(path, "w").write(text.replace(old, new))
PY
    failed="$(run_tests "$WORK/mutant.log")"
    cp "$(backup "$file")" "$file" # fresh mtime: the next build is of the real source
    if [ "$failed" = "BUILD-FAILED" ]; then
        grep -A5 "^error" "$WORK/mutant.log" | head -20 || tail -20 "$WORK/mutant.log"
        echo "check-swap-mutant: mutant does not compile; fix the script" >&2
        exit 2
    fi
    new_failures="$(comm -13 <(printf '%s\n' "$baseline") <(printf '%s\n' "$failed") | sed '/^$/d')"
    if [ -n "$new_failures" ]; then
        echo "   caught (tests that now fail):"
        printf '%s\n' "$new_failures" | sed 's/^/     /'
        killed=$((killed + 1))
    else
        echo "   NOT CAUGHT: every test still passes on $TARGET"
        survived=$((survived + 1))
    fi
done

echo "swap mutants: $killed passed, $survived failed"
[ "$survived" -eq 0 ]
