"""Differential test: the Python reference and the Rust readers must give
the same verdict and code for the same bytes, not only on the golden cases
but on many mutations of them.

Mutants of every golden case (accepted and rejected), from a fixed seed:

- bytes: one to three bytes set to a random or boundary value or flipped;
- cuts and extensions: truncations, bytes appended, a run dropped;
- counts and lengths: a little-endian u16, u32 or u64 anywhere set to a
  value at or around the caps and around u32 and u64 overflow;
- directories (found by their KLNT magic): header counts, lengths and
  directory_bytes, consistent or not; descriptor dtypes, ranks, shapes
  whose product sits at u64 overflow, payload offsets and lengths, name
  and layout slices, block sizes and the quantization fields;
- zero-size lists whose counts sit at and past the count cap;
- nesting: chains of opt, list, dict and struct 62 to 67 containers deep,
  one value per level, then cut or edited like the rest.

The reference's verdicts come from a pool of worker processes; Rust's from
one process (`kiln-nostd/examples/verdicts.rs --lines`) that runs `check`,
the walker, dynamic values (re-encoding accepted ones) and the typed
decoders, and fails loudly when those disagree among themselves. That
helper is built twice, with and without kiln-nostd's `small-code` feature
(the two alternatives of the directory check), and both must agree with
the reference on every input. Any
disagreement fails the run and is written to a JSON file in the golden-case
format, ready to become a golden case.

    python3 tests/differential/run.py                    # 200,000 inputs (the test stage)
    python3 tests/differential/run.py --count 1000000 --release   # the long run
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "spec", "reference"))

import kiln_ref as k  # noqa: E402

CAP = k.DEFAULT_CAP
BOUNDARY = [0x00, 0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF]
U16 = [0, 1, 2, 7, 8, 9, 19, 20, 63, 64, 4095, 4096, 32767, 32768, 0xFFFE, 0xFFFF]
U64_MAX = (1 << 64) - 1


def u32_values(cap: int) -> list[int]:
    return [0, 1, 2, 3, 4, 5, 8, 63, 64, 65, 127, 128, 129, 255, 256,
            cap - 1, cap, cap + 1, CAP - 1, CAP, CAP + 1,
            (1 << 31) - 1, 1 << 31, (1 << 32) - 2, (1 << 32) - 1,
            (1 << 25) + 1, 0x01000000 // 128, (1 << 32) // 128]


U64 = [0, 1, 63, 64, 65, 128, 1 << 32, (1 << 32) - 1, (1 << 32) + 1,
       1 << 63, (1 << 63) - 1, U64_MAX, U64_MAX - 1, U64_MAX - 63,
       U64_MAX - 64, U64_MAX - 127, (1 << 64) - (1 << 32)]

# Shape pairs whose product sits at u64 overflow, and others.
SHAPE_PAIRS = [(1 << 32, 1 << 32), ((1 << 32) - 1, (1 << 32) + 1), (1 << 63, 2),
               ((1 << 63) - 1, 2), (U64_MAX, 1), (0, U64_MAX), (U64_MAX, 0),
               (1 << 61, 8), (1 << 61, 7), (3, (U64_MAX // 3) + 1)]


# ---------------------------------------------------------------------------
# Mutations

def put(b: bytearray, at: int, size: int, value: int) -> None:
    if at + size <= len(b):
        b[at:at + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def get(b: bytes, at: int, size: int) -> int:
    return int.from_bytes(b[at:at + size], "little") if at + size <= len(b) else 0


def byte_edits(b: bytearray, rng: random.Random) -> None:
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if not b:
            return
        at = rng.randrange(len(b))
        how = rng.randrange(3)
        if how == 0:
            b[at] = rng.randrange(256)
        elif how == 1:
            b[at] = rng.choice(BOUNDARY)
        else:
            b[at] ^= 1 << rng.randrange(8)


def cut_or_extend(b: bytearray, rng: random.Random) -> bytearray:
    how = rng.randrange(4)
    if how == 0:
        return b[: rng.randrange(len(b) + 1)]
    if how == 1:
        return b + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 17)))
    if how == 2:
        return b + bytes(rng.choice((1, 4, 8, 64)))
    if b:
        start = rng.randrange(len(b))
        del b[start:start + rng.randrange(1, 9)]
    return b


def word_edit(b: bytearray, rng: random.Random, cap: int) -> None:
    size = rng.choice((2, 4, 4, 4, 8))
    if len(b) < size:
        return
    at = rng.randrange(len(b) - size + 1)
    if size == 2:
        put(b, at, 2, rng.choice(U16))
    elif size == 4:
        put(b, at, 4, rng.choice(u32_values(cap)))
    else:
        put(b, at, 8, rng.choice(U64))


def directories(b: bytes) -> list[int]:
    found, at = [], b.find(b"KLNT")
    while at >= 0:
        found.append(at)
        at = b.find(b"KLNT", at + 1)
    return found


def directory_edit(b: bytearray, base: int, rng: random.Random, cap: int) -> None:
    count = get(b, base + 8, 4)
    name_bytes = get(b, base + 12, 4)
    payload_bytes = get(b, base + 16, 8)
    if rng.random() < 0.35 or count == 0:
        field = rng.randrange(7)
        if field == 0:  # tensor_count, directory_bytes kept consistent or not
            n = rng.choice(u32_values(cap) + [count + 1, max(count - 1, 0)])
            put(b, base + 8, 4, n)
            if rng.random() < 0.6:
                put(b, base + 24, 8, n * 128 + name_bytes)
        elif field == 1:  # name_bytes
            n = rng.choice(u32_values(cap) + [name_bytes + 1, max(name_bytes - 1, 0)])
            put(b, base + 12, 4, n)
            if rng.random() < 0.6:
                put(b, base + 24, 8, count * 128 + n)
        elif field == 2:
            put(b, base + 16, 8, rng.choice(U64 + [payload_bytes + 1, payload_bytes + 64,
                                                    max(payload_bytes - 1, 0)]))
        elif field == 3:
            put(b, base + 24, 8, rng.choice(U64 + [count * 128 + name_bytes + 1]))
        elif field == 4:  # version, flags, reserved
            at = rng.choice((4, 5, 6, 7, rng.randrange(32, 64)))
            put(b, base + at, 1, rng.choice(BOUNDARY + [2, 3, 4]))
        elif field == 5:
            put(b, base + 8, 4, rng.choice(u32_values(cap)))
        else:
            put(b, base + 12, 4, rng.choice(u32_values(cap)))
        return
    i = rng.randrange(count) if count < (1 << 20) else 0
    d = base + 64 + 128 * i
    rank = get(b, d + 2, 1)
    field = rng.randrange(10)
    if field == 0:
        put(b, d, 2, rng.choice(U16 + list(range(0, 21))))
    elif field == 1:
        b_rank = rng.choice((0, 1, 2, 7, 8, 9, 255, rank + 1, max(rank - 1, 0)))
        put(b, d + 2, 1, b_rank)
    elif field == 2:  # shape product at u64 overflow
        x, y = rng.choice(SHAPE_PAIRS)
        slots = max(rank, 2) if rng.random() < 0.8 else rng.choice((1, 8))
        put(b, d + 2, 1, min(slots, 8))
        put(b, d + 48, 8, x)
        put(b, d + 56, 8, y)
    elif field == 3:  # one shape slot, at or past the rank
        put(b, d + 48 + 8 * rng.randrange(8), 8, rng.choice(U64 + [2, 3, 4]))
    elif field == 4:  # byte_offset / byte_length
        at = rng.choice((32, 40))
        put(b, d + at, 8, rng.choice(U64 + [payload_bytes, payload_bytes + 1,
                                           max(payload_bytes - 1, 0), 64, 63]))
    elif field == 5:  # name and layout slices
        at = rng.choice((4, 6, 8, 10))
        put(b, d + at, 2, rng.choice(U16 + [name_bytes, name_bytes + 1,
                                           max(name_bytes - 1, 0)]))
    elif field == 6:  # block size
        put(b, d + 12, 4, rng.choice(u32_values(cap) + [18, 32, 144]))
    elif field == 7:  # quant scheme and axis
        put(b, d + 16, 2, rng.choice((0, 1, 2, 3, 0xFFFF)))
        if rng.random() < 0.7:
            put(b, d + 18, 2, rng.choice((0, 1, rank, max(rank - 1, 0), 0xFFFF)))
    elif field == 8:  # group size
        put(b, d + 20, 4, rng.choice((0, 1, 2, 16, 32, 33, (1 << 32) - 1)))
    else:  # scale / outer index
        at = rng.choice((24, 28))
        put(b, d + at, 4, rng.choice((0, 1, 2, i, count - 1, count, 0xFFFFFFFF)))


def structure_edit(b: bytearray, rng: random.Random, cap: int) -> None:
    dirs = directories(bytes(b))
    if dirs and rng.random() < 0.7:
        directory_edit(b, rng.choice(dirs), rng, cap)
    else:
        word_edit(b, rng, cap)


def mutate(case: dict, rng: random.Random) -> bytes:
    b = bytearray(bytes.fromhex(case["hex"]))
    cap = case.get("cap", CAP)
    r = rng.random()
    if r < 0.30:
        byte_edits(b, rng)
    elif r < 0.50:
        b = cut_or_extend(b, rng)
    else:
        structure_edit(b, rng, cap)
        if rng.random() < 0.2:
            structure_edit(b, rng, cap)
    if rng.random() < 0.1:
        b = cut_or_extend(b, rng)
    return bytes(b)


# ---------------------------------------------------------------------------
# Generated inputs: nesting around the depth limit, zero-size lists

KINDS = ("opt", "list", "dict", "struct")


def nesting(rng: random.Random) -> dict:
    """A chain of containers 62 to 67 deep with one value per level."""
    depth = rng.choice((62, 63, 64, 64, 65, 65, 66, 67))
    kinds = [rng.choice(KINDS) for _ in range(depth)]
    if rng.random() < 0.3:
        kinds = [rng.choice(KINDS)] * depth
    leaf = rng.choice(("u8", "struct{}", "list<u8>", "str", "tensors"))
    text, data = leaf, {"u8": b"\x05", "struct{}": b"", "list<u8>": b"\x01\x00\x00\x00\x07",
                        "str": b"\x01\x00\x00\x00a", "tensors": k.encode_directory(())}[leaf]
    for kind in reversed(kinds):
        if kind == "opt":
            text, data = f"opt<{text}>", b"\x01" + data
        elif kind == "list":
            text, data = f"list<{text}>", (1).to_bytes(4, "little") + data
        elif kind == "dict":
            text, data = f"dict<str,{text}>", (1).to_bytes(4, "little") + b"\x01\x00\x00\x00k" + data
        else:
            text, data = f"struct{{f:{text},}}", data
    b = bytearray(data)
    r = rng.random()
    if r < 0.25:
        b = cut_or_extend(b, rng)
    elif r < 0.45:
        byte_edits(b, rng)
    elif r < 0.6 and len(b) >= 4:
        word_edit(b, rng, CAP)
    return {"name": f"nesting-{depth}", "type": text, "framed": False, "hex": bytes(b).hex()}


def zero_size(rng: random.Random) -> dict:
    text = rng.choice(("list<struct{}>", "list<list<struct{}>>",
                       "list<struct{a:struct{},b:struct{c:struct{},},}>",
                       "dict<str,list<struct{}>>", "opt<list<struct{}>>"))
    counts = [0, 1, 2, CAP - 1, CAP, CAP + 1, (1 << 32) - 1, 1 << 31]
    cap = rng.choice((None, None, 4, 1000, 1 << 20))
    if cap:
        counts += [cap - 1, cap, cap + 1]
    n = rng.choice(counts)
    if text == "list<list<struct{}>>":
        outer = rng.choice((1, 2, 3, 255))
        data = outer.to_bytes(4, "little") + b"".join(
            rng.choice(counts).to_bytes(4, "little") for _ in range(outer))
    elif text.startswith("dict"):
        data = (1).to_bytes(4, "little") + b"\x01\x00\x00\x00k" + n.to_bytes(4, "little")
    elif text.startswith("opt"):
        data = b"\x01" + n.to_bytes(4, "little")
    else:
        data = n.to_bytes(4, "little")
    b = bytearray(data)
    if rng.random() < 0.2:
        b = cut_or_extend(b, rng)
    case = {"name": "zero-size", "type": text, "framed": False, "hex": bytes(b).hex()}
    if cap:
        case["cap"] = cap
    return case


def generate(golden: list[dict], count: int, seed: int, start: int) -> list[dict]:
    """Inputs start .. start + count of the run's sequence (each from its own
    seeded generator, so a batch does not depend on the ones before it)."""
    out = []
    for i in range(start, start + count):
        rng = random.Random(seed * 1_000_003 + i)
        r = rng.random()
        if r < 0.06:
            out.append(nesting(rng))
        elif r < 0.08:
            out.append(zero_size(rng))
        else:
            case = golden[i % len(golden)]
            m = {key: case[key] for key in ("name", "type", "framed") if key in case}
            if "cap" in case:
                m["cap"] = case["cap"]
            m["hex"] = mutate(case, rng).hex()
            out.append(m)
    return out


# ---------------------------------------------------------------------------
# Verdicts

def reference_verdict(case: dict) -> str:
    limits = k.Limits(case["cap"], case["cap"]) if "cap" in case else None
    try:
        k.check(case["type"], bytes.fromhex(case["hex"]), framed=case["framed"], limits=limits)
        return "accept"
    except k.KilnError as e:
        return e.code


def reference_verdicts(cases: list[dict]) -> list[str]:
    return [reference_verdict(c) for c in cases]


def rust_verdicts(binary: str, cases: list[dict]) -> list[str]:
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
        for c in cases:
            f.write(f"{c['type']}\t{1 if c['framed'] else 0}\t{c.get('cap', 0)}\t{c['hex']}\n")
        path = f.name
    try:
        with open(path) as stdin:
            run = subprocess.run([binary, "--lines"], stdin=stdin, capture_output=True, text=True)
    finally:
        os.unlink(path)
    lines = run.stdout.split("\n")[:-1]
    if run.returncode != 0 and not any(l.startswith("DISAGREE") for l in lines):
        sys.stderr.write(run.stderr)
        raise SystemExit(f"differential: the verdicts example failed ({run.returncode})")
    return lines


# The Rust helper's builds: kiln-nostd's feature sets, each one alternative
# of the directory check.
BUILDS = {"default": "alloc,derive", "small-code": "alloc,derive,small-code"}


def build(release: bool) -> dict[str, str]:
    """Builds the helper once per feature set; cargo keeps each build's
    artifacts, so only the copy of the example differs between them."""
    profile = ["--release"] if release else []
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    examples = os.path.join(target, "release" if release else "debug", "examples")
    binaries = {}
    for name, features in BUILDS.items():
        subprocess.run(["cargo", "build", "-q", "-p", "kiln-nostd", "--features", features,
                        "--example", "verdicts", *profile], cwd=ROOT, check=True)
        copy = os.path.join(examples, f"verdicts-differential-{name}")
        shutil.copy2(os.path.join(examples, "verdicts"), copy)
        binaries[name] = copy
    return binaries


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=200_000,
                        help="mutants and generated inputs, besides the golden cases")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--batch", type=int, default=20_000)
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--release", action="store_true", help="a release build of the Rust side")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(),
                                                      "kiln-differential-disagreements.json"))
    args = parser.parse_args()
    start_time = time.monotonic()
    binaries = build(args.release)
    with open(os.path.join(ROOT, "spec", "kiln-v2-cases.json")) as f:
        golden = json.load(f)

    counts: dict[str, int] = {}
    bad: list[dict] = []
    total = 0
    chunk = max(1, args.batch // (4 * args.jobs))
    with multiprocessing.Pool(args.jobs) as pool:
        batches = [(None, golden)]
        batches += [(s, None) for s in range(0, args.count, args.batch)]
        for start, cases in batches:
            if cases is None:
                cases = generate(golden, min(args.batch, args.count - start), args.seed, start)
            expected = pool.map(reference_verdict, cases, chunksize=chunk)
            for e in expected:
                counts[e] = counts.get(e, 0) + 1
            for build_name, binary in binaries.items():
                got = rust_verdicts(binary, cases)
                if len(got) != len(cases):
                    print(f"differential: Rust ({build_name}) printed {len(got)} verdicts "
                          f"for {len(cases)} inputs")
                    return 1
                for case, e, g in zip(cases, expected, got):
                    if e != g:
                        bad.append({**case, "expect": e, "rust": g, "build": build_name})
            total += len(cases)
            if args.count >= 200_000:
                print(f"differential: {total} inputs, {len(bad)} disagreements, "
                      f"{time.monotonic() - start_time:.0f} s", flush=True)
    for m in bad[:20]:
        print(f"MISMATCH ({m['build']}) {m['name']} type={m['type'][:80]} framed={m['framed']} "
              f"cap={m.get('cap')}: reference {m['expect']}, rust {m['rust']}\n  hex {m['hex'][:400]}")
    if bad:
        with open(args.out, "w") as f:
            json.dump(bad, f, indent=1)
        print(f"differential: disagreements written to {args.out}")
    spread = ", ".join(f"{c} {n} ({100 * n / total:.1f}%)" for c, n in
                       sorted(counts.items(), key=lambda item: -item[1]))
    print(f"differential: verdicts {spread}")
    print(f"differential: {total} inputs in {time.monotonic() - start_time:.0f} s "
          f"({args.jobs} reference processes; Rust builds: {', '.join(binaries)})")
    checks = total * len(binaries)
    print(f"differential: {checks - len(bad)} passed, {len(bad)} failed "
          f"({total} inputs x {len(binaries)} builds)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
