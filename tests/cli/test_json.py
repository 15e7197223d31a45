"""The Kiln JSON form: the Rust `kiln decode`/`kiln encode` against the
Python reference (spec/reference/kiln_json.py), on every accepted golden
case and on random float bits.

Run by the `cli` stage (scripts/stages/cli.sh) with KILN_BIN set to the
kiln binary.
"""

import json
import os
import random
import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "spec" / "reference"))

import kiln_json as J  # noqa: E402
import kiln_ref as K  # noqa: E402

KILN = os.environ.get("KILN_BIN", str(ROOT / "target" / "debug" / "kiln"))
CASES = json.loads((ROOT / "spec" / "kiln-v2-cases.json").read_text())
ACCEPTED = [c for c in CASES if c["expect"] == "accept"]


def kiln(*args, data: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([KILN, *args], input=data, capture_output=True,
                          timeout=60)


def case_args(case) -> list:
    args = ["--type", case["type"]]
    if case["framed"]:
        args.append("--framed")
    if "cap" in case:
        args += ["--cap", str(case["cap"])]
    return args


def reference_decode(case):
    data = bytes.fromhex(case["hex"])
    limits = K.Limits.both(case["cap"]) if "cap" in case else None
    if case["framed"]:
        return K.decode_frame(case["type"], data, limits)
    return K.decode(case["type"], data, limits)


def reference_encode(case, value) -> bytes:
    limits = K.Limits.both(case["cap"]) if "cap" in case else None
    if case["framed"]:
        return K.encode_frame(case["type"], value, limits)
    return K.encode(case["type"], value, limits)


class GoldenCases(unittest.TestCase):
    def test_there_are_cases(self):
        self.assertGreaterEqual(len(ACCEPTED), 17)

    def test_rust_text_is_the_reference_text(self):
        for case in ACCEPTED:
            with self.subTest(case["name"]):
                data = bytes.fromhex(case["hex"])
                expected = J.dumps(case["type"], reference_decode(case))
                out = kiln("decode", *case_args(case), "-", data=data)
                self.assertEqual(out.returncode, 0, out.stderr.decode())
                self.assertEqual(out.stdout.decode(), expected + "\n")
                compact = kiln("decode", "--compact", *case_args(case), "-",
                               data=data)
                self.assertEqual(compact.stdout.decode(),
                                 J.dumps(case["type"], reference_decode(case),
                                         pretty=False) + "\n")

    def test_each_side_reads_the_others_text_back_to_the_bytes(self):
        for case in ACCEPTED:
            with self.subTest(case["name"]):
                data = bytes.fromhex(case["hex"])
                rust_text = kiln("decode", *case_args(case), "-",
                                 data=data).stdout.decode()
                back = J.loads(case["type"], rust_text)
                self.assertEqual(reference_encode(case, back), data)
                python_text = J.dumps(case["type"], reference_decode(case))
                out = kiln("encode", *case_args(case), "-",
                           data=python_text.encode())
                self.assertEqual(out.returncode, 0, out.stderr.decode())
                self.assertEqual(out.stdout, data)


class Floats(unittest.TestCase):
    TYPE = "struct{a:list<f32>,b:list<f64>,}"

    def test_random_bits_print_the_same(self):
        rng = random.Random(20240611)
        bits32 = [rng.getrandbits(32) for _ in range(10000)]
        bits64 = [rng.getrandbits(64) for _ in range(10000)]
        # Edges: subnormals, extremes, signed zeros, ties in the digits.
        bits32 += [0, 0x80000000, 1, 0x807FFFFF, 0x00800000, 0x7F7FFFFF,
                   0x469A8A20, 0x7F800000, 0xFF800000, 0x7FC00000,
                   0xFFC00001]
        bits64 += [0, 1 << 63, 1, 0x7FEFFFFFFFFFFFFF, 0x0010000000000000,
                   0x7FF8000000000001, 0x3FB999999999999A]
        value = {"a": [K.Float32(b) for b in bits32],
                 "b": [K.Float64(b) for b in bits64]}
        data = K.encode(self.TYPE, value)
        out = kiln("decode", "--compact", "--type", self.TYPE, "-", data=data)
        self.assertEqual(out.returncode, 0, out.stderr.decode())
        self.assertEqual(out.stdout.decode(),
                         J.dumps(self.TYPE, value, pretty=False) + "\n")
        self.assertEqual(K.encode(self.TYPE, J.loads(self.TYPE,
                                                     out.stdout.decode())),
                         data)


class Reference(unittest.TestCase):
    def test_float_text(self):
        f32 = lambda x: J.f32_text(K.Float32.from_float(x).bits)[1]  # noqa
        f64 = lambda x: J.f64_text(K.Float64.from_float(x).bits)[1]  # noqa
        self.assertEqual(f32(0.1), "0.1")
        self.assertEqual(f32(-0.0), "-0.0")
        self.assertEqual(f64(1e21), "1e+21")
        self.assertEqual(f64(1e20), "100000000000000000000.0")
        self.assertEqual(f64(1.5e-7), "1.5e-7")
        self.assertEqual(f64(5e-324), "5e-324")
        self.assertEqual(J.f32_text(0x7FC00001), (False, "0x7fc00001"))
        self.assertEqual(J.f32_bits_from_text("16777217"), 0x4B800000)
        self.assertEqual(J.f32_bits_from_text("-0"), 0x80000000)

    def test_shapes_by_type(self):
        ty = ("struct{a:i64,b:opt<opt<u8>>,c:opt<opt<u8>>,d:opt<opt<u8>>,"
              "e:list<struct{x:struct{},}>,f:dict<str,bool>,g:list<u8>,}")
        value = {"a": -2**63, "b": None, "c": K.Some(None),
                 "d": K.Some(K.Some(5)), "e": [{"x": {}}] * 3,
                 "f": {"z": True, "a": False}, "g": b"\x00\xff"}
        text = J.dumps(ty, value, pretty=False)
        self.assertEqual(text, '{"a":"-9223372036854775808","b":null,'
                         '"c":{"some":null},"d":{"some":5},"e":{"count":3},'
                         '"f":{"z":true,"a":false},"g":"00ff"}')
        self.assertEqual(K.encode(ty, J.loads(ty, text)), K.encode(ty, value))

    def test_refusals(self):
        bad = [
            ("i64", "9007199254740993"),     # a number past 2^53 - 1
            ("u8", "256"),
            ("u8", "1.0"),
            ("struct{a:u8,}", '{"a":1,"a":2}'),
            ("struct{a:u8,}", '{"a":1,"b":2}'),
            ("struct{a:u8,}", "{}"),
            ("f32", "1e39"),
            ("f64", "NaN"),                  # not JSON
            ("list<u8>", '"0"'),
            ("opt<opt<u8>>", "5"),
            ("list<struct{}>", "[{}]"),
        ]
        for ty, text in bad:
            with self.subTest(ty=ty, text=text):
                with self.assertRaises(J.JsonFormError):
                    J.loads(ty, text)


if __name__ == "__main__":
    unittest.main()
