"""kiln_codec against safetensors' own Python package, in one run.

    python kiln-py/bench/bench_python.py [DIR]      (KILN_PY_MB=1024 sets the model's size,
                                                     KILN_PY_RUNS=5 the runs of each cell)

Writes, in DIR (default a temporary folder, removed at the end): a
safetensors model of 300 f32 tensors and KILN_PY_MB MB (default 1,024), a
18,867-tensor MoE-shaped safetensors file (small tensors, long names), and
each converted to Kiln with kiln_codec.convert. Then, each in a fresh
process (so that peak RSS is that of the work alone), the median of
KILN_PY_RUNS runs (5):

- open + every tensor: safetensors 0.8 `safe_open(framework="np")` and
  `get_tensor` of every name, against `kiln_codec.open` and `tensor` of
  every name; wall time and the process's peak RSS;
- open + every tensor's info on the MoE file: safetensors' `get_slice`
  (`get_shape`, `get_dtype`) against `Model.info`;
- the sum of every element of the big model: numpy's `sum` over Kiln's
  views of the map (pages in the cache) against numpy's `sum` over arrays
  already in memory (safetensors' loaded copies).

Prints a table with the ratios and whether each goal of docs/benchmarks.md
is met; timings are never asserted.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

RUNS = int(os.environ.get("KILN_PY_RUNS", "5"))
WORKER = r'''
import json, resource, sys, time
import numpy as np
what, path = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if what == "st-all":
    from safetensors import safe_open
    with safe_open(path, framework="np") as f:
        arrays = [f.get_tensor(k) for k in f.keys()]
elif what == "kiln-all":
    import kiln_codec
    m = kiln_codec.open(path)
    arrays = [m.tensor(k) for k in m.keys()]
elif what == "st-info":
    from safetensors import safe_open
    with safe_open(path, framework="np") as f:
        infos = [(f.get_slice(k).get_shape(), f.get_slice(k).get_dtype()) for k in f.keys()]
elif what == "kiln-info":
    import kiln_codec
    m = kiln_codec.open(path)
    infos = [m.info(k) for k in m.keys()]
elif what in ("st-sum", "kiln-sum"):
    if what == "st-sum":
        from safetensors import safe_open
        with safe_open(path, framework="np") as f:
            arrays = [f.get_tensor(k) for k in f.keys()]
    else:
        import kiln_codec
        m = kiln_codec.open(path)
        arrays = [m.tensor(k) for k in m.keys()]
        for a in arrays:
            a.sum()  # the pages into the cache, as the in-memory side has them
    t0 = time.perf_counter()
    total = sum(float(a.sum(dtype=np.float64)) for a in arrays)
seconds = time.perf_counter() - t0
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child
# would inherit its parent's peak.
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "rss_kb": hwm}))
'''


def run(what: str, path: Path) -> dict:
    out = []
    for _ in range(RUNS):
        r = subprocess.run([sys.executable, "-c", WORKER, what, str(path)], capture_output=True, text=True, check=True)
        out.append(json.loads(r.stdout))
    return {"seconds": statistics.median(o["seconds"] for o in out), "rss_kb": statistics.median(o["rss_kb"] for o in out)}


def baseline_rss() -> int:
    r = subprocess.run([sys.executable, "-c", "import numpy, kiln_codec, safetensors; print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')))"],
                       capture_output=True, text=True, check=True)
    return int(r.stdout)


def main() -> None:
    import safetensors.numpy
    import kiln_codec

    mb = int(os.environ.get("KILN_PY_MB", "1024"))
    keep = len(sys.argv) > 1
    tmp = None if keep else tempfile.TemporaryDirectory()
    d = Path(sys.argv[1] if keep else tmp.name)
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    big = d / "big.safetensors"
    per = mb * (1 << 20) // 300 // 4
    safetensors.numpy.save_file({f"model.layers.{i // 10}.w{i % 10}.weight": rng.standard_normal(per, dtype=np.float32) for i in range(300)}, big)
    moe = d / "moe.safetensors"
    names = [f"model.layers.{l}.mlp.experts.{e}.{p}_proj.weight" for l in range(49) for e in range(128) for p in ("gate", "up", "down")][:18867]
    safetensors.numpy.save_file({n: np.zeros(8, np.float32) for n in names}, moe)
    big_k, moe_k = d / "big.kiln", d / "moe.kiln"
    kiln_codec.convert(big, big_k)
    kiln_codec.convert(moe, moe_k)
    size = big.stat().st_size
    base = baseline_rss()

    rows = []
    st, kl = run("st-all", big), run("kiln-all", big_k)
    rows.append((f"open + every tensor, {size / 1e9:.2f} GB, 300 tensors", st, kl, 20.0))
    extra = max(0, kl["rss_kb"] - base) * 1024
    rss_row = (f"  peak RSS above the interpreter's ({base / 1024:.0f} MB), Kiln", extra / size)
    st_i, kl_i = run("st-info", moe), run("kiln-info", moe_k)
    rows.append(("open + every tensor's info, 18,867 tensors", st_i, kl_i, 10.0))
    st_s, kl_s = run("st-sum", big), run("kiln-sum", big_k)

    print(f"{'row':<52} {'safetensors':>12} {'kiln_codec':>12} {'ratio':>8}  goal")
    for name, a, b, goal in rows:
        ratio = a["seconds"] / b["seconds"]
        print(f"{name:<52} {a['seconds']:>10.4f} s {b['seconds']:>10.4f} s {ratio:>7.1f}x  >= {goal:g}x {'met' if ratio >= goal else 'MISSED'}")
    print(f"{rss_row[0]:<52} {'':>12} {rss_row[1] * 100:>10.2f} % {'':>8}  < 5 % {'met' if rss_row[1] < 0.05 else 'MISSED'}"
          f"  (safetensors: {st['rss_kb'] / 1024:.0f} MB, Kiln {kl['rss_kb'] / 1024:.0f} MB)")
    ratio = kl_s["seconds"] / st_s["seconds"]
    print(f"{'sum of every element (views vs arrays in memory)':<52} {st_s['seconds']:>10.4f} s {kl_s['seconds']:>10.4f} s {ratio:>7.2f}x  <= 1.1x {'met' if ratio <= 1.1 else 'MISSED'}")
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
