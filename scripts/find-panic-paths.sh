#!/usr/bin/env bash
# Lists the panic paths left in the no-panic firmware build: builds
# tests/firmware's nopanic binary with its ordinary panic handler (same
# release profile: opt-level "s", fat LTO, one codegen unit) and prints
# every call into a panic entry point with the source lines around it.
# scripts/test.sh runs it when the no-panic link fails.
set -euo pipefail
cd "$(dirname "$0")/../tests/firmware"

elf="$(cargo build --quiet --release --no-default-features --bin nopanic --message-format=json-render-diagnostics |
    sed -nE 's/.*"executable":"([^"]+)".*/\1/p')"
dis="$(mktemp)"
trap 'rm -f "$dis"' EXIT
# llvm-objdump of the llvm-tools component (what `cargo objdump` runs).
bash ../../scripts/llvm-tool.sh llvm-objdump -d -l -C --no-show-raw-insn "$elf" >"$dis"

# Panic entry points: core::panicking::*, *_fail, unwrap_failed/expect_failed.
python3 - "$dis" <<'PY'
import re, sys
entry = re.compile(r"<(core::panicking::[^>+]*|[^>+]*(_fail\b|unwrap_failed|expect_failed|panic_bounds_check)[^>+]*)>")
func = None
lines = []   # source lines seen since the function start
found = 0
for raw in open(sys.argv[1], errors="replace"):
    line = raw.rstrip("\n")
    m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
    if m:
        func, lines = m.group(1), []
        continue
    if line.startswith("; /"):
        lines.append(line[2:])
        continue
    if re.search(r"\sbl?\s", line) and entry.search(line) and func:
        target = entry.search(line).group(1)
        if func == target or re.match(r"core::(panicking|slice::.*_fail|option::|result::)", func):
            continue  # the panic machinery calling itself
        ours = list(dict.fromkeys(l for l in lines if "/rustc/" not in l))[-6:]
        print(f"{func}\n    calls {target}\n    source lines of the function up to the call:\n        "
              + ("\n        ".join(ours) or "(none)"))
        found += 1
print(f"{found} panic call site(s) outside core")
PY
