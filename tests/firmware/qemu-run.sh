#!/usr/bin/env bash
# Cargo runner for thumbv7m-none-eabi: boots ELF on an emulated LM3S6965
# (Cortex-M3) and decodes its defmt stream, which the firmware writes to
# semihosting stdout (nothing else writes there). The exit code is the
# firmware's semihosting exit code (qemu's), or 124 after KILN_QEMU_TIMEOUT
# seconds (default 600). The timeout only stops a hung firmware (a fault
# handler that spins, say); it is no measure of speed, so it is far above
# the few seconds a run takes, and a loaded machine cannot fail a run by
# being slow (a one-minute limit is within reach of the golden suite
# under load).
set -uo pipefail
elf="$1"
timeout "${KILN_QEMU_TIMEOUT:-600}" qemu-system-arm -cpu cortex-m3 -machine lm3s6965evb -nographic \
    -semihosting-config enable=on,target=native -kernel "$elf" </dev/null \
    | defmt-print -e "$elf"
status=("${PIPESTATUS[@]}")
if [ "${status[0]}" -ne 0 ]; then
    echo "qemu-run: firmware exited with status ${status[0]}" >&2
    exit "${status[0]}"
fi
exit "${status[1]}"
