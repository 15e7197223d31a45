#!/usr/bin/env bash
# Runs a binary of the toolchain's llvm-tools component (llvm-size,
# llvm-objdump, llvm-nm, ...) from the sysroot: the same tools
# cargo-binutils' `cargo size` and `cargo objdump` run, without building
# and installing cargo-binutils.
#
#   bash scripts/llvm-tool.sh llvm-size -A FILE
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bash scripts/llvm-tool.sh TOOL [ARGS...]" >&2; exit 2; }
tool="$1"
shift
bin="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/$tool"
if [ ! -x "$bin" ]; then
    echo "llvm-tool: no $bin (rustup component add llvm-tools; scripts/setup.sh adds it)" >&2
    exit 1
fi
exec "$bin" "$@"
