#!/usr/bin/env bash
# Cargo runner: qemu-run.sh BOARD ELF [QEMU ARGS...] boots ELF on the
# emulated BOARD (lm3s6965evb: Cortex-M3; microbit: Cortex-M0 nRF51;
# riscv-virt: RV32 on qemu's virt machine). The firmware reports as plain
# text on semihosting stdout and ends through semihosting's exit, so the
# status is the firmware's (qemu's), or 124 after KILN_QEMU_TIMEOUT seconds
# (default 600). The timeout only stops a hung firmware (a fault handler
# that spins, say); it is no measure of speed, so it is far above the few
# seconds a run takes, and a loaded machine cannot fail a run by being
# slow. Extra QEMU ARGS (the UART of the model update) follow the board's.
set -uo pipefail
board="$1"
elf="$2"
shift 2
# KILN_SEMIHOSTING_ARGS: words passed as the firmware's command line.
semihosting_config=enable=on,target=native
for arg in ${KILN_SEMIHOSTING_ARGS:-}; do
    semihosting_config+=",arg=$arg"
done
semihosting=(-semihosting-config "$semihosting_config")
case "$board" in
    lm3s6965evb) qemu=(qemu-system-arm -cpu cortex-m3 -machine lm3s6965evb) ;;
    # The nRF51822's 32K-RAM variant (memory/microbit.x says why).
    microbit) qemu=(qemu-system-arm -machine microbit -global nrf51-soc.sram-size=32768) ;;
    riscv-virt) qemu=(qemu-system-riscv32 -machine virt -bios none) ;;
    *)
        echo "qemu-run: unknown board $board" >&2
        exit 2
        ;;
esac
# No display and no monitor; no serial port unless QEMU ARGS give one.
serial=(-serial null)
[ $# -eq 0 ] || serial=()
timeout "${KILN_QEMU_TIMEOUT:-600}" "${qemu[@]}" -display none -monitor none \
    "${serial[@]}" "${semihosting[@]}" "$@" -kernel "$elf" </dev/null
status=$?
if [ "$status" -ne 0 ]; then
    echo "qemu-run: firmware on $board exited with status $status" >&2
fi
exit "$status"
