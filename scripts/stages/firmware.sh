# The firmware stages of scripts/test.sh. Sourced by test.sh, which runs
# each stage_* function from the repository root in a subshell with
# `set -e` (so a stage's `cd` ends with it). Everything is built from
# tests/firmware, so that its .cargo/config.toml (memory layout per board,
# qemu runner per target) applies; docs/firmware-targets.md describes the
# boards.
#
# firmware        Cortex-M3 (thumbv7m-none-eabi, qemu lm3s6965evb): the demo,
#                 the golden suite (check on all cases, the typed decoders),
#                 flash/RAM of both
# firmware-m0     the demo and the golden suite on a Cortex-M0
#                 (thumbv6m-none-eabi, qemu microbit): no unaligned access,
#                 no atomic CAS; and the no-panic link proof built and run
#                 there
# firmware-riscv  the same on RISC-V (riscv32imac-unknown-none-elf,
#                 qemu-system-riscv32 virt)
# firmware-update the model update of kiln-update: on the host, a power cut
#                 at every flash operation of an update on a simulated NOR
#                 flash (kiln-update/tests/power_cut.rs); then on the
#                 micro:bit, models sent in enveloped chunks over its UART
#                 into two flash slots, checked as they stream, read in
#                 place; noise passed over; changed, lost, cut, oversized
#                 refused with the old model current; the board reset at
#                 four flash operations of an update
#
# The suites report as plain text over semihosting and end with an exit
# status, so no decoder (defmt-print) is needed.

# llvm-size from rustup's llvm-tools component (no cargo-binutils).
firmware_llvm_size() {
    bash "$ROOT/scripts/llvm-tool.sh" llvm-size "$@"
}

# The ELF of the golden suite for a target (built by `cargo test --no-run`).
firmware_golden_elf() { # target
    cargo test --target "$1" --no-run --message-format=json 2>/dev/null \
        | sed -nE 's/.*"executable":"([^"]*golden[^"]*)".*/\1/p' | tail -1
}

# The no-panic proof on one core: the link fails if a panic path survives
# (the `nopanic` stage does it for the Cortex-M3, with the diagnosis).
firmware_nopanic() { # target
    cargo run --release --target "$1" --no-default-features --features nopanic --bin nopanic
}

# The golden suite on one core, then its size (flash = text + data, static
# RAM = data + bss, Berkeley form).
firmware_golden() { # target
    cargo test --target "$1"
    local elf
    elf="$(firmware_golden_elf "$1")"
    [ -n "$elf" ] || { echo "no golden suite ELF for $1"; return 1; }
    echo "--- golden suite on $1 (all cases embedded): flash/RAM"
    firmware_llvm_size "$elf"
}

stage firmware "Cortex-M3 under qemu-system-arm: demo, golden suite (check and typed decoders), flash/RAM"
stage_firmware() {
    cd "$ROOT/tests/firmware"
    cargo run --bin demo
    echo "--- demo, release: flash/RAM"
    cargo build --release --bin demo
    firmware_llvm_size target/thumbv7m-none-eabi/release/demo
    firmware_golden thumbv7m-none-eabi
}

stage firmware-m0 "demo, golden suite and no-panic proof on a Cortex-M0 (qemu microbit)"
stage_firmware-m0() {
    cd "$ROOT/tests/firmware"
    cargo clippy --target thumbv6m-none-eabi --all-targets -- -D warnings
    cargo run --target thumbv6m-none-eabi --bin demo
    firmware_golden thumbv6m-none-eabi
    firmware_nopanic thumbv6m-none-eabi
}

stage firmware-riscv "demo, golden suite and no-panic proof on RISC-V (qemu-system-riscv32 virt)"
stage_firmware-riscv() {
    cd "$ROOT/tests/firmware"
    cargo clippy --target riscv32imac-unknown-none-elf --all-targets -- -D warnings
    cargo run --target riscv32imac-unknown-none-elf --bin demo
    firmware_golden riscv32imac-unknown-none-elf
    firmware_nopanic riscv32imac-unknown-none-elf
}

stage firmware-update "kiln-update: a power cut at every flash operation (host); models over the micro:bit's UART into two slots, bad transfers refused, board resets mid-update"
stage_firmware-update() {
    # The sweep prints its one line ("power cuts: N tried, N recovered, 0
    # without a valid model"); the test fails on any cut without one.
    local sweep
    sweep="$(cd "$ROOT" && cargo test -q -p kiln-update --features sim --test power_cut -- --nocapture)"
    grep "^power cuts:" <<<"$sweep"
    bash "$ROOT/tests/firmware/update-run.sh"
}
