#!/usr/bin/env bash
# The model update under qemu: builds the receiver (src/bin/update.rs) for
# the micro:bit, writes the transfers with the Python reference
# (update/make_model.py), and sends each over the emulated UART0: a FIFO
# pair (qemu's pipe chardev, PATH.in to the board, PATH.out from it) fed
# by `cat` as fast as the UART takes it (qemu's UART holds 6 bytes and
# reads no more until the firmware takes them, so nothing is lost while
# the firmware writes flash). Asserts each verdict by exit status and
# report line, then prints the receiver's flash and RAM (a build without
# reports) and its peak stack (painted; the same build printing only that).
set -euo pipefail
cd "$(dirname "$0")"
target=thumbv6m-none-eabi
elf="target/$target/release/update"
build() { cargo build -q --release --target "$target" --bin update "$@"; }
build

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 update/make_model.py "$work"

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

expect "a valid model is stored, checked, marked valid and used in place" \
    good 0 "update: model used in place"
expect "a model with a byte the check sees flipped is refused, nothing marked valid" \
    corrupt 2 "update refused: UTF8.*flag word 0xffffffff"
# No CRC yet: a flipped f32 payload byte is a valid model. The receiver
# marks it valid and finds a weight that is not the one sent (exit 1).
# With the envelope this transfer is refused before the flag (exit 2).
expect "a flipped weight byte passes the check (no checksum without the envelope)" \
    payload 1 "weight (.*) is .*, not the .* sent"
expect "a transfer larger than the model region is refused before it is written" \
    oversize 2 "update refused: TooLarge.*flag word 0xffffffff"

echo "--- update receiver without reports (release, $target): flash = text + data, static RAM = data + bss"
build --no-default-features
"$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-size" "$elf"
build --no-default-features --features measure
expect "the same receiver, painted stack" good 0 "peak stack"
grep -h "peak stack" "$work/good.log" | sed 's/^/receiver /'
