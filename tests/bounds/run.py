"""Work and heap bounds for the inputs that once took unbounded time, as
counts that do not depend on the machine's speed or load.

Each run is one process under valgrind: callgrind counts the instructions
it executes (the same for the same binary and input), DHAT its peak heap.
The inputs:

- `one-kib`: 1,024 bytes of `list<list<struct{}>>`, 255 lists that each
  claim 16,777,216 empty structs. Walking every element, as Kiln once did,
  is 4.3 billion struct visits (minutes); now each list is one visit.
- `names`: a directory of 24,790 unsorted tensor names (as many short
  names as the 16-bit heap offsets allow; built as in
  kiln-nostd/tests/hostile.rs). Checking their uniqueness pairwise is 307
  million comparisons; now it is a hash bitmap and a sort.

Readers: `work` (kiln-nostd/examples/work.rs: check, dynamic values and
re-encoding, typed views, the directory with a name index and a lookup of
every name) and the `kiln check` command line. Each bound is about three
times what was measured when it was set (the table below says both), far
below what the unbounded code took; a run above its bound fails.

    python3 tests/bounds/run.py [--update]   # --update prints measured figures only
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "spec", "reference"))

import kiln_ref as k  # noqa: E402

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
WORK = os.path.join(TARGET, "release", "examples", "work")
KILN = os.path.join(TARGET, "release", "kiln")
NESTED = "list<list<struct{}>>"

# name: (command, instruction bound, peak heap bound in bytes). Measured
# when set (x86-64, Rust 1.95, release): one-kib 0.33 to 0.89 million
# instructions, names 9.8 million (check) and 20.4 million (parse, index,
# every lookup); heap 2.8 KB to 3.6 MB.
# The heap bounds hold the input (read into memory), the command line's
# read buffer and a value tree; the one-kib value tree is 255 Repeats.
# The value functions compile their type into the tools' one type table
# (schema::TOOL_NODES nodes of 32 bytes: 128 KiB, the same whatever the
# input), which the value run's bound adds to its 128 KiB.
RUNS = {
    "work check one-kib": ([WORK, "check", NESTED, "{one_kib}"], 1_500_000, 64 * 1024),
    "work value one-kib": ([WORK, "value", NESTED, "{one_kib}"], 3_000_000, 128 * 1024 + 4096 * 32),
    "work views one-kib": ([WORK, "views", NESTED, "{one_kib}"], 1_500_000, 64 * 1024),
    "kiln check one-kib": ([KILN, "check", "--type", NESTED, "{one_kib}"], 3_000_000, 256 * 1024),
    "work check names": ([WORK, "check", "tensors", "{names}"], 30_000_000, 8 * 1024 * 1024),
    "work directory names": ([WORK, "directory", "tensors", "{names}"], 60_000_000, 8 * 1024 * 1024),
    "kiln check names": ([KILN, "check", "{names}"], 30_000_000, 8 * 1024 * 1024),
}


def one_kib() -> bytes:
    data = (255).to_bytes(4, "little") + (1 << 24).to_bytes(4, "little") * 255
    assert len(data) == 1024
    return data


def short_names(count: int) -> list[str]:
    """Every 1-byte ASCII name, then 2-byte, then 3-byte ones (hostile.rs)."""
    names = [chr(a) for a in range(128)]
    names += [chr(a) + chr(b) for a in range(128) for b in range(128)]
    names += [chr(a) + chr(b) + chr(c) for a in range(128) for b in range(128)
              for c in range(128) if len(names) < count + 128 * 128 * 128]
    return names[:count]


def names_directory() -> bytes:
    names = short_names(24_790)
    assert sum(len(n) for n in names) < 0xFFFF
    names.reverse()  # unsorted: the sort path
    return k.encode_directory([k.Tensor(9, (0,), b"", name=n) for n in names])


def valgrind(tool: str, command: list[str]) -> tuple[str, str]:
    out_file = "/dev/null"
    run = subprocess.run(["valgrind", f"--tool={tool}", f"--{tool}-out-file={out_file}",
                          *command], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"bounds: {' '.join(command)} failed under {tool}:\n{run.stderr}")
    return run.stdout, run.stderr


def number(pattern: str, text: str) -> int:
    match = re.search(pattern, text)
    if not match:
        raise SystemExit(f"bounds: no match for {pattern!r} in valgrind's output:\n{text}")
    return int(match.group(1).replace(",", ""))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--update", action="store_true", help="print the figures, check nothing")
    args = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {"one_kib": os.path.join(tmp, "one-kib.bin"), "names": os.path.join(tmp, "names.kiln")}
        with open(files["one_kib"], "wb") as f:
            f.write(one_kib())
        with open(files["names"], "wb") as f:
            f.write(names_directory())
        sizes = {key: os.path.getsize(path) for key, path in files.items()}
        print(f"bounds: one-kib {sizes['one_kib']} bytes, names {sizes['names']} bytes "
              "(24,790 unsorted names)")
        for name, (command, max_instructions, max_heap) in RUNS.items():
            command = [files.get(c.strip("{}"), c) if c.startswith("{") and c.endswith("}") and c.strip("{}") in files else c for c in command]
            stdout, stderr = valgrind("callgrind", command)
            if not stdout.startswith("ok"):
                failures.append(f"{name}: not accepted: {stdout.strip()}")
            instructions = number(r"Collected : ([0-9]+)", stderr)
            _, stderr = valgrind("dhat", command)
            peak = number(r"At t-gmax: +([0-9,]+) bytes", stderr)
            total = number(r"Total: +([0-9,]+) bytes", stderr)
            size = sizes["one_kib" if "one-kib" in name else "names"]
            print(f"  {name:22} {instructions:>12,} instructions (bound {max_instructions:,})  "
                  f"heap peak {peak:>10,} B = {peak / size:5.2f} x input, total {total:,} B "
                  f"(bound {max_heap:,})")
            if instructions > max_instructions:
                failures.append(f"{name}: {instructions:,} instructions, bound {max_instructions:,}")
            if peak > max_heap:
                failures.append(f"{name}: heap peak {peak:,} bytes, bound {max_heap:,}")
    if args.update:
        return 0
    for failure in failures:
        print(f"bounds: FAILED {failure}")
    print(f"bounds: {len(RUNS) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
