"""The display conversions to f32 (kiln_nostd::widen, used by the command
line and the browser) against independent oracles, for every bit pattern:

- f16 (numpy), bf16, f8e4m3 (float8_e4m3fn), f8e5m2, e2m1 (float4_e2m1fn)
  and e8m0 (float8_e8m0fnu) against the ml_dtypes package (pinned in
  scripts/oracles.sh), NaN and infinity handling included: a NaN must be a
  NaN, everything else the same f32 bits (so -0.0 is not 0.0);
- i4 and u4 against a plain two's-complement / unsigned reference.

The Rust side is `cargo run --example widen_table` (or the binary named by
KILN_WIDEN_TABLE), which prints `FORMAT PATTERN F32BITS` for every pattern.

    python3 -m unittest discover -s tests/oracles -v
"""

import math
import os
import struct
import subprocess
import unittest

import ml_dtypes
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# format -> (pattern width in bits, numpy dtype of those bits)
ML = {
    "f16": (16, np.float16),
    "bf16": (16, ml_dtypes.bfloat16),
    "f8e4m3": (8, ml_dtypes.float8_e4m3fn),
    "f8e5m2": (8, ml_dtypes.float8_e5m2),
    "e8m0": (8, ml_dtypes.float8_e8m0fnu),
    "e2m1": (4, ml_dtypes.float4_e2m1fn),
}
PATTERNS = {"f16": 65536, "bf16": 65536, "f8e4m3": 256, "f8e5m2": 256, "e8m0": 256,
            "e2m1": 16, "i4": 16, "u4": 16}


def rust_table() -> dict:
    binary = os.environ.get("KILN_WIDEN_TABLE")
    command = [binary] if binary else ["cargo", "run", "-q", "-p", "kiln-nostd",
                                       "--example", "widen_table"]
    out = subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    table: dict = {}
    for line in out.splitlines():
        name, pattern, bits = line.split()
        table.setdefault(name, {})[int(pattern, 16)] = int(bits, 16)
    return table


def f32_of_bits(bits: int) -> float:
    return struct.unpack("<f", bits.to_bytes(4, "little"))[0]


def oracle(name: str) -> list:
    """ml_dtypes' f32 for every pattern of `name`, as f32 bit patterns."""
    width, dtype = ML[name]
    patterns = np.arange(1 << width, dtype=np.uint16 if width == 16 else np.uint8)
    if width == 4:
        # ml_dtypes keeps a 4-bit float in one byte, in its low nibble.
        values = patterns.view(np.uint8).view(dtype)
    else:
        values = patterns.view(dtype)
    return [int(b) for b in values.astype(np.float32).view(np.uint32)]


class WidenAgainstOracles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = rust_table()

    def test_every_pattern_is_there(self):
        for name, count in PATTERNS.items():
            self.assertEqual(sorted(self.table[name]), list(range(count)), name)

    def check_against_ml_dtypes(self, name):
        want = oracle(name)
        got = self.table[name]
        mismatches = []
        nans = infinities = 0
        for pattern, expected in enumerate(want):
            e, g = f32_of_bits(expected), f32_of_bits(got[pattern])
            if math.isnan(e):
                nans += 1
                ok = math.isnan(g)
            else:
                infinities += math.isinf(e)
                ok = expected == got[pattern]
            if not ok:
                mismatches.append(f"{pattern:#x}: ml_dtypes {e!r} ({expected:#010x}), "
                                  f"kiln {g!r} ({got[pattern]:#010x})")
        self.assertEqual(mismatches, [], f"{name}: {len(mismatches)} patterns differ")
        return nans, infinities

    def test_f16(self):
        self.assertEqual(self.check_against_ml_dtypes("f16"), (2046, 2))

    def test_bf16(self):
        self.assertEqual(self.check_against_ml_dtypes("bf16"), (254, 2))

    def test_f8e4m3(self):
        # The FN form: no infinities, S.1111.111 is NaN.
        self.assertEqual(self.check_against_ml_dtypes("f8e4m3"), (2, 0))

    def test_f8e5m2(self):
        self.assertEqual(self.check_against_ml_dtypes("f8e5m2"), (6, 2))

    def test_e8m0(self):
        # 0xFF is NaN; 0x00 is 2^-127, a subnormal f32.
        self.assertEqual(self.check_against_ml_dtypes("e8m0"), (1, 0))
        self.assertEqual(self.table["e8m0"][0], 0x00400000)

    def test_e2m1(self):
        self.assertEqual(self.check_against_ml_dtypes("e2m1"), (0, 0))

    def test_i4_and_u4_against_a_plain_reference(self):
        for nibble in range(16):
            signed = nibble - 16 if nibble >= 8 else nibble
            self.assertEqual(f32_of_bits(self.table["i4"][nibble]), float(signed))
            self.assertEqual(f32_of_bits(self.table["u4"][nibble]), float(nibble))
        # And ml_dtypes' own int4/uint4 agree with that reference.
        for nibble in range(16):
            as_i4 = int(np.array([nibble], np.uint8).view(ml_dtypes.int4).astype(np.int8)[0])
            as_u4 = int(np.array([nibble], np.uint8).view(ml_dtypes.uint4).astype(np.uint8)[0])
            self.assertEqual((as_i4, as_u4), (nibble - 16 if nibble >= 8 else nibble, nibble))


if __name__ == "__main__":
    unittest.main()
