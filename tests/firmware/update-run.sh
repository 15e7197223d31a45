#!/usr/bin/env bash
# The model update under qemu: builds the receiver (src/bin/update.rs) for
# the micro:bit, writes the model with the Python reference
# (update/make_model.py) and the transfers from it with kiln-nostd's
# model_transfer example (the model in enveloped chunks: COBS frames, each
# with its CRC-32C; good, noisy and damaged), and sends each over the
# emulated UART0: a FIFO pair (qemu's pipe chardev, PATH.in to the board,
# PATH.out from it) fed by `cat` as fast as the UART takes it (qemu's UART
# holds 6 bytes and reads no more until the firmware takes them, so
# nothing is lost while the firmware writes flash). Asserts each verdict
# by exit status and report line, then prints the receiver's flash and RAM
# (a build without reports) and its peak stack (painted; the same build
# printing only that).
set -euo pipefail
cd "$(dirname "$0")"
root="$(cd ../.. && pwd)"
target=thumbv6m-none-eabi
elf="target/$target/release/update"
build() { cargo build -q --release --target "$target" --bin update "$@"; }
build

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 update/make_model.py "$work"
offset() { sed -n "s/^$1 //p" "$work/offsets"; }
# From the root: tests/firmware's .cargo/config.toml would build it for
# the board.
(cd "$root" && cargo build -q -p kiln-nostd --features envelope --example model_transfer)
sender="$root/target/debug/examples/model_transfer"
transfer() { # name model [options]: writes $work/name.bin
    local name="$1" model="$2"
    shift 2
    "$sender" "$work/$model" "$work/$name.bin" "$@"
}
# The device's first model (version 2), installed by the first transfer
# of every session; the second transfer is the case.
transfer old old.kiln
transfer good model.kiln
transfer noisy model.kiln --garbage 7
transfer flip-first model.kiln --flip 0:3
transfer flip-weight model.kiln --flip "$(offset weight):0"
transfer flip-last model.kiln --flip "$(offset last):6"
transfer bad-name bad-name.kiln
transfer lost-frame model.kiln --drop 100
transfer stopped model.kiln --stop-at $(($(stat -c %s "$work/good.bin") / 2))
# One byte more than a slot of the firmware's layout (src/bin/update.rs).
transfer oversize model.kiln --announce $((0x10000 + 1))
for name in good noisy flip-first flip-weight flip-last bad-name lost-frame stopped oversize; do
    cat "$work/old.bin" "$work/$name.bin" >"$work/then-$name.bin"
done

send() { # transfer-file log-file: the firmware's exit status
    local link="$work/link"
    rm -f "$link.in" "$link.out"
    mkfifo "$link.in" "$link.out"
    # The open blocks until qemu opens the FIFO; SIGPIPE when the firmware
    # stops reading early (a refused header) is expected.
    cat "$1" >"$link.in" 2>/dev/null &
    local writer=$! status=0
    KILN_QEMU_TIMEOUT="${KILN_QEMU_TIMEOUT:-120}" ./qemu-run.sh microbit "$elf" \
        -chardev "pipe,id=link,path=$link" -serial chardev:link >"$2" 2>&1 || status=$?
    kill "$writer" 2>/dev/null || true
    wait "$writer" 2>/dev/null || true
    cat "$2" >&2
    return "$status"
}

expect() { # name transfer status pattern...
    local name="$1" file="$2" want="$3" status=0
    shift 3
    echo "--- update: $name"
    send "$work/$file.bin" "$work/$file.log" || status=$?
    if [ "$status" -ne "$want" ]; then
        echo "update-run: $name: exit status $status, expected $want" >&2
        return 1
    fi
    for pattern in "$@"; do
        grep -q -- "$pattern" "$work/$file.log" ||
            { echo "update-run: $name: no line matching '$pattern'" >&2; return 1; }
    done
}

old_current="current: model version 2 in slot 0 (record 1)"
still="the model current before is still current"
expect "a first model on an empty flash goes to slot 0" \
    old 0 "transfer 1: 49945 bytes into slot 0" "$old_current" "update: model used in place"
expect "a new model goes to the other slot, checked as it streams, read back, made current, used in place" \
    then-good 0 "$old_current" "transfer 2: 49945 bytes into slot 1" \
    "current: model version 3 in slot 1 (record 2)" "update: model used in place"
expect "garbage before, between and after the frames: the same model, used in place" \
    then-noisy 0 "current: model version 3 in slot 1" "update: model used in place"
grep -q "[1-9][0-9]* frames refused by the envelope" "$work/then-noisy.log" ||
    { echo "update-run: noisy: no frame refused: the garbage did not reach the receiver" >&2; exit 1; }
# A bit flipped on the link after the sender's CRC: the frame is refused
# by its CRC, so its chunk is missing: the next chunk is out of order, or
# after the last one the link goes quiet. Without the envelope, the
# flipped weight was a valid model with a wrong weight. In every case the
# old model stays current.
expect "a bit flipped in the first frame is refused by its CRC; the old model stays current" \
    then-flip-first 2 "update refused: OutOfOrder.*CrcMismatch" "$old_current" "$still"
expect "a bit flipped in a weight (a valid f32 either way) is refused by its frame's CRC" \
    then-flip-weight 2 "update refused: OutOfOrder.*CrcMismatch" "$old_current" "$still"
expect "a bit flipped in the last frame is refused by its CRC; the link goes quiet" \
    then-flip-last 2 "update refused: Short.*CrcMismatch" "$old_current" "$still"
expect "a name byte that is not UTF-8, sent with good CRCs, is refused by the streaming check" \
    then-bad-name 2 "update refused: UTF8" "$old_current" "$still"
expect "a frame lost on the link is refused at the next chunk" \
    then-lost-frame 2 "update refused: OutOfOrder: chunk at 25000 expected" "$old_current" "$still"
expect "a transfer that stops half way is refused when the link goes quiet" \
    then-stopped 2 "update refused: Short: the link went quiet at .* of $(offset length) bytes" "$old_current" "$still"
expect "a model larger than a slot is refused at its first chunk" \
    then-oversize 2 "update refused: TooLarge" "$old_current" "$still"
expect "a refused first transfer leaves an empty flash with no model" \
    bad-name 2 "update refused: UTF8" "current: no model" "$still"

# Power cuts: the board reset at flash operation K of the second transfer
# (a write left half done); the boot after it must find a valid model.
# The cut points: the first erase of the new slot, the middle of the
# model's writes, the erase of the state page, the record's write (torn).
ops=$(sed -n 's/^transfer 2: .* after \([0-9]*\) flash operations$/\1/p' "$work/then-good.log")
[ -n "$ops" ] || { echo "update-run: no operation count in the good transfer's report" >&2; exit 1; }
tried=0 recovered=0
for cut in 0 $((ops / 2)) $((ops - 2)) $((ops - 1)); do
    tried=$((tried + 1))
    KILN_SEMIHOSTING_ARGS="update cut=$cut" expect "power cut at flash operation $cut of $ops: the old model stays current" \
        then-good 0 "power cut at flash operation $cut" \
        "restarted after a power cut at flash operation $cut" "$old_current" \
        "update: a valid model after the power cut"
    recovered=$((recovered + 1))
done
echo "power cuts on the Cortex-M0 (qemu, board reset): $tried tried, $recovered recovered, $((tried - recovered)) without a valid model"

echo "--- update receiver without reports (release, $target): flash = text + data, static RAM = data + bss"
build --no-default-features
"$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-size" "$elf"
build --no-default-features --features measure
expect "the same receiver, painted stack" then-good 0 "peak stack"
grep -h "peak stack" "$work/then-good.log" | sed 's/^/receiver /'
