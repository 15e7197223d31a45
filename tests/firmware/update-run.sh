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
transfer good model.kiln
transfer noisy model.kiln --garbage 7
transfer flip-first model.kiln --flip 0:3
transfer flip-weight model.kiln --flip "$(offset weight):0"
transfer flip-last model.kiln --flip "$(offset last):6"
transfer bad-name bad-name.kiln
transfer lost-frame model.kiln --drop 100
transfer stopped model.kiln --stop-at $(($(stat -c %s "$work/good.bin") / 2))
# One byte more than the firmware's model region (src/bin/update.rs).
transfer oversize model.kiln --announce $((0x20000 + 1))

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

expect() { # name transfer status pattern
    local status=0
    echo "--- update: $1"
    send "$work/$2.bin" "$work/$2.log" || status=$?
    if [ "$status" -ne "$3" ]; then
        echo "update-run: $1: exit status $status, expected $3" >&2
        return 1
    fi
    grep -q -- "$4" "$work/$2.log" || { echo "update-run: $1: no line matching '$4'" >&2; return 1; }
}

nothing_valid="flag word 0xffffffff"
expect "a valid model is received in chunks, checked as it streams, stored, marked valid and used in place" \
    good 0 "update: model used in place"
expect "garbage before, between and after the frames: the same model, used in place" \
    noisy 0 "update: model used in place"
grep -q "[1-9][0-9]* frames refused by the envelope" "$work/noisy.log" ||
    { echo "update-run: noisy: no frame refused: the garbage did not reach the receiver" >&2; exit 1; }
# A bit flipped on the link after the sender's CRC: the frame is refused
# by its CRC, so its chunk is missing: the next chunk is out of order, or
# after the last one the link goes quiet. Without the envelope, the
# flipped weight was a valid model with a wrong weight.
expect "a bit flipped in the first frame is refused by its CRC, nothing marked valid" \
    flip-first 2 "update refused: OutOfOrder.*CrcMismatch.*$nothing_valid"
expect "a bit flipped in a weight (a valid f32 either way) is refused by its frame's CRC" \
    flip-weight 2 "update refused: OutOfOrder.*CrcMismatch.*$nothing_valid"
expect "a bit flipped in the last frame is refused by its CRC; the link goes quiet" \
    flip-last 2 "update refused: Short.*CrcMismatch.*$nothing_valid"
expect "a name byte that is not UTF-8, sent with good CRCs, is refused by the streaming check" \
    bad-name 2 "update refused: UTF8.*$nothing_valid"
expect "a frame lost on the link is refused at the next chunk" \
    lost-frame 2 "update refused: OutOfOrder: chunk at 25000 expected.*$nothing_valid"
expect "a transfer that stops half way is refused when the link goes quiet" \
    stopped 2 "update refused: Short: the link went quiet at .* of $(offset length) bytes.*$nothing_valid"
expect "a model larger than the model region is refused at its first chunk" \
    oversize 2 "update refused: TooLarge.*$nothing_valid"

echo "--- update receiver without reports (release, $target): flash = text + data, static RAM = data + bss"
build --no-default-features
"$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-size" "$elf"
build --no-default-features --features measure
expect "the same receiver, painted stack" good 0 "peak stack"
grep -h "peak stack" "$work/good.log" | sed 's/^/receiver /'
