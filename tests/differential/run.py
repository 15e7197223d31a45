"""Differential test: the Python reference and the Rust core must give the
same verdict and code for the same bytes, not only on the golden cases but on
thousands of mutations of them.

Each accepted golden case is mutated with a fixed seed (a byte set to a
random or boundary value, a cut, a few bytes appended or dropped from the
middle); the reference's verdict for every mutant is computed here, then
`cargo run --example verdicts` gives Rust's, and any disagreement fails.

    python3 tests/differential/run.py [--per-case N] [--seed S]
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "spec", "reference"))

import kiln_ref as k  # noqa: E402

BOUNDARY = [0x00, 0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF]


def mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    kind = rng.randrange(5)
    if kind == 0 and b:  # one byte, random value
        b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind == 1 and b:  # one byte, boundary value
        b[rng.randrange(len(b))] = rng.choice(BOUNDARY)
    elif kind == 2:  # cut
        b = b[: rng.randrange(len(b) + 1)]
    elif kind == 3:  # append
        b += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 5)))
    elif b:  # drop a run from the middle
        start = rng.randrange(len(b))
        del b[start : start + rng.randrange(1, 9)]
    return bytes(b)


def reference_verdict(case) -> str:
    limits = k.Limits(case["cap"], case["cap"]) if "cap" in case else None
    try:
        k.check(case["type"], bytes.fromhex(case["hex"]), framed=case["framed"], limits=limits)
        return "accept"
    except k.KilnError as e:
        return e.code


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-case", type=int, default=40)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open(os.path.join(ROOT, "spec", "kiln-v2-cases.json")) as f:
        golden = json.load(f)
    mutants = []
    for case in golden:
        if case["expect"] != "accept":
            continue
        data = bytes.fromhex(case["hex"])
        for _ in range(args.per_case):
            m = {key: case[key] for key in ("type", "framed") if key in case}
            if "cap" in case:
                m["cap"] = case["cap"]
            m["name"] = case["name"]
            m["hex"] = mutate(data, rng).hex()
            mutants.append(m)
    expected = [reference_verdict(m) for m in mutants]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(mutants, f)
        path = f.name
    try:
        out = subprocess.run(
            ["cargo", "run", "-q", "-p", "kiln-nostd", "--example", "verdicts", "--", path],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout.split("\n")[:-1]
    finally:
        os.unlink(path)
    if len(out) != len(mutants):
        print(f"differential: Rust printed {len(out)} verdicts for {len(mutants)} mutants")
        return 1
    bad = [(m, e, g) for m, e, g in zip(mutants, expected, out) if e != g]
    for m, e, g in bad[:20]:
        print(f"MISMATCH {m['name']} type={m['type']} framed={m['framed']}: reference {e}, rust {g}\n  hex {m['hex']}")
    counts = {}
    for e in expected:
        counts[e] = counts.get(e, 0) + 1
    print("differential: verdicts " + ", ".join(f"{c} {n}" for c, n in sorted(counts.items())))
    print(f"differential: {len(mutants) - len(bad)} passed, {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
