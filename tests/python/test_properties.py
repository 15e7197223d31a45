"""Seeded random round trips and mutations for the reference codec."""

import random
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "spec" / "reference"))

import kiln_ref as K  # noqa: E402
from golden import limits_of, load_cases, reencode  # noqa: E402

SEED = 20240601

INT_RANGES = {
    "i8": (-2**7, 2**7 - 1), "u8": (0, 2**8 - 1),
    "i16": (-2**15, 2**15 - 1), "u16": (0, 2**16 - 1),
    "i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1),
    "i64": (-2**63, 2**63 - 1), "u64": (0, 2**64 - 1),
    "int": (-2**63, 2**63 - 1), "uint": (0, 2**64 - 1),
}
ALPHABET = ["a", "b", "z", "A", "_", "0", "\u00e9", "\u00fc", "\u6743",
            "\U0001d11e", "\x00", " "]


# ---------------------------------------------------------------------------
# Random types and values
# ---------------------------------------------------------------------------

def rand_type(rng, depth):
    leaves = ["bool", "f32", "f64", "str", *INT_RANGES]
    if depth <= 0 or rng.random() < 0.35:
        roll = rng.random()
        if roll < 0.08:
            return ("tensors",)
        if roll < 0.16:
            return ("list", ("u8",))
        return (rng.choice(leaves),)
    kind = rng.choice(["list", "opt", "dict", "struct"])
    if kind == "struct":
        count = rng.randint(0, 4)
        names = rng.sample(["a", "b", "id", "x_1", "Name", "_z", "batch"],
                           count)
        return ("struct", tuple((n, rand_type(rng, depth - 1))
                                for n in names))
    return (kind, rand_type(rng, depth - 1))


def rand_str(rng, max_len=6):
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, max_len)))


def rand_float_bits(rng, width):
    specials32 = [0, 0x80000000, 0x3F800000, 0x7F800000, 0x7FC00001,
                  0xFF800001, 0x00000001]
    specials64 = [0, 1 << 63, 0x3FF0000000000000, 0x7FF8000000000001,
                  0x7FF0000000000001, 0xFFF0000000000000]
    if rng.random() < 0.4:
        return rng.choice(specials32 if width == 32 else specials64)
    return rng.getrandbits(width)


def rand_tensor_payload(rng, code, shape):
    n = 1
    for dim in shape:
        n *= dim
    name, width = K.DTYPES[code]
    if name == "bool":
        return bytes(rng.randint(0, 1) for _ in range(n))
    if width is None:
        nibbles = [rng.randint(0, 15) for _ in range(n)]
        return K.pack_nibbles(nibbles)
    return bytes(rng.getrandbits(8) for _ in range(n * width))


def rand_directory(rng):
    count = rng.randint(0, 4)
    named = rng.random() < 0.5
    names = rng.sample(["w", "bias", "\u00e9t\u00e9", "layer.0", "x" * 70,
                        "\u6743\u91cd"], count)
    tensors = []
    for i in range(count):
        rank = rng.randint(0, 3)
        shape = tuple(rng.randint(0, 4) for _ in range(rank))
        name = names[i] if named else None
        if rng.random() < 0.15:
            block_size = rng.randint(1, 5)
            payload = bytes(rng.getrandbits(8)
                            for _ in range(block_size * rng.randint(0, 3)))
            tensors.append(K.Tensor(rng.randint(4096, 32767), shape, payload,
                                    name=name, layout=rng.choice(["Q4_K",
                                                                  "blk"]),
                                    block_size=block_size))
        else:
            code = rng.randint(1, 19)
            tensors.append(K.Tensor(code, shape,
                                    rand_tensor_payload(rng, code, shape),
                                    name=name))
    if count and rng.random() < 0.3:
        # Quantize one rank>=1 tensor with a freshly appended scale tensor.
        i = rng.randrange(count)
        t = tensors[i]
        if t.rank >= 1:
            axis = rng.randrange(t.rank)
            group = rng.randint(1, 3)
            others = 1
            for k, dim in enumerate(t.shape):
                if k != axis:
                    others *= dim
            scales = -(-t.shape[axis] // group) * others
            scale = K.Tensor(19, (scales,), bytes(rng.getrandbits(8)
                                                  for _ in range(scales)),
                             name=f"{t.name}.scale" if named else None)
            tensors[i] = K.Tensor(t.dtype, t.shape, t.payload, name=t.name,
                                  layout=t.layout, block_size=t.block_size,
                                  quant_scheme=1, quant_axis=axis,
                                  group_size=group, scale_index=len(tensors))
            tensors.append(scale)
    return K.Directory(tensors)


def rand_value(rng, tree):
    kind = tree[0]
    if kind == "bool":
        return rng.random() < 0.5
    if kind in INT_RANGES:
        lo, hi = INT_RANGES[kind]
        return rng.choice([lo, hi, 0, rng.randint(lo, hi)])
    if kind == "f32":
        return K.Float32(rand_float_bits(rng, 32))
    if kind == "f64":
        return K.Float64(rand_float_bits(rng, 64))
    if kind == "str":
        return rand_str(rng)
    if kind == "tensors":
        return rand_directory(rng)
    if tree == ("list", ("u8",)):
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 5)))
    if kind == "list":
        return [rand_value(rng, tree[1]) for _ in range(rng.randint(0, 3))]
    if kind == "opt":
        return None if rng.random() < 0.3 else K.Some(rand_value(rng, tree[1]))
    if kind == "dict":
        return {rand_str(rng, 4): rand_value(rng, tree[1])
                for _ in range(rng.randint(0, 3))}
    if kind == "struct":
        return {name: rand_value(rng, t) for name, t in tree[1]}
    raise AssertionError(tree)


def accepted_cases():
    return [c for c in load_cases() if c["expect"] == "accept"]


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

class TestRoundTrips(unittest.TestCase):
    def test_random_values_round_trip(self):
        rng = random.Random(SEED)
        for i in range(400):
            tree = rand_type(rng, rng.randint(0, 5))
            value = rand_value(rng, tree)
            with self.subTest(i=i, type=K.type_text(tree)):
                self.assertEqual(K.parse_type(K.type_text(tree)), tree)
                data = K.encode(tree, value)
                back = K.decode(tree, data)
                self.assertEqual(back, value)
                self.assertEqual(K.encode(tree, back), data)
                framed = K.encode_frame(tree, value)
                self.assertEqual(K.decode_frame(tree, framed), value)
                self.assertEqual(framed[16:], data)

    def test_random_directories_round_trip(self):
        rng = random.Random(SEED + 1)
        for i in range(300):
            directory = rand_directory(rng)
            with self.subTest(i=i):
                block = K.encode_directory(directory.tensors)
                back, end = K.decode_directory(block + b"\x00", 0,
                                               standalone=False)
                self.assertEqual(end, len(block))
                self.assertEqual(back, directory)
                self.assertEqual(K.encode_directory(back.tensors), block)
                # payloads start on 64-byte boundaries from the block start
                count = len(directory.tensors)
                heap = 64 + 128 * count + int.from_bytes(block[12:16],
                                                         "little")
                base = (heap + 63) // 64 * 64
                for k in range(count):
                    off = int.from_bytes(block[64 + 128 * k + 32:
                                               64 + 128 * k + 40], "little")
                    self.assertEqual((base + off) % 64, 0)


class TestHostileBytes(unittest.TestCase):
    def decode_any(self, case, data, limits=None):
        """Return None on success or the KilnError; other exceptions fail
        the test by propagating."""
        try:
            again = reencode(case, data, limits or limits_of(case))
        except K.KilnError as exc:
            self.assertIn(exc.code, K.ERROR_CODES)
            self.assertGreaterEqual(exc.offset, 0)
            self.assertLessEqual(exc.offset, len(data))
            return exc
        # Anything the decoder accepts is canonical.
        self.assertEqual(again, data)
        return None

    def test_single_byte_mutations(self):
        rng = random.Random(SEED + 2)
        for case in accepted_cases():
            # A mutated count of struct{} elements (minimum size 0) may
            # claim millions of them within the default cap; the reference
            # decodes such a list to a Repeat in constant time.
            limits = limits_of(case)
            original = bytes.fromhex(case["hex"])
            if not original:
                continue
            positions = range(len(original))
            if len(original) > 120:
                positions = sorted(rng.sample(positions, 120))
            for pos in positions:
                for value in {rng.getrandbits(8), original[pos] ^ 0xFF,
                              original[pos] ^ 0x01}:
                    if value == original[pos]:
                        continue
                    data = bytearray(original)
                    data[pos] = value
                    with self.subTest(name=case["name"], pos=pos, value=value):
                        self.decode_any(case, bytes(data), limits)

    def test_strict_prefixes_are_eof(self):
        for case in accepted_cases():
            original = bytes.fromhex(case["hex"])
            for cut in range(len(original)):
                with self.subTest(name=case["name"], cut=cut):
                    exc = self.decode_any(case, original[:cut])
                    self.assertIsNotNone(exc)
                    self.assertEqual(exc.code, "EOF")

    def test_extra_byte_is_trailing(self):
        for case in accepted_cases():
            original = bytes.fromhex(case["hex"])
            with self.subTest(name=case["name"]):
                exc = self.decode_any(case, original + b"\x00")
                self.assertIsNotNone(exc)
                self.assertEqual(exc.code, "TRAILING")

    def test_random_garbage(self):
        rng = random.Random(SEED + 3)
        types = ["tensors", "list<str>", "dict<str,opt<u8>>",
                 "struct{id:i64,batch:tensors,}", "list<tensors>",
                 "opt<opt<bool>>", "list<struct{a:f32,b:list<u8>,}>"]
        for i in range(1500):
            text = rng.choice(types)
            length = rng.randint(0, 300)
            data = bytearray(rng.getrandbits(8) for _ in range(length))
            if text.startswith(("tensors", "struct")) and length >= 64 \
                    and rng.random() < 0.7:
                at = 8 if text.startswith("struct") else 0
                data[at:at + 8] = b"KLNT\x02\x02\x00\x00"
                data[at + 32:at + 64] = bytes(32)
            case = {"type": text, "framed": False}
            with self.subTest(i=i):
                self.decode_any(case, bytes(data))

    def test_random_value_mutations(self):
        rng = random.Random(SEED + 4)
        for i in range(150):
            tree = rand_type(rng, rng.randint(1, 4))
            data = bytearray(K.encode(tree, rand_value(rng, tree)))
            if not data:
                continue
            case = {"type": K.type_text(tree), "framed": False}
            for _ in range(10):
                mutated = bytearray(data)
                mutated[rng.randrange(len(mutated))] = rng.getrandbits(8)
                with self.subTest(i=i, type=case["type"]):
                    self.decode_any(case, bytes(mutated))


if __name__ == "__main__":
    unittest.main()
