"""Byte facts stated by the wire text, and encoder/decoder API rules."""

import struct
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "spec" / "reference"))

import kiln_ref as K  # noqa: E402

EMPTY_HEX = ("4b4c4e5402020000" + "00" * 56)
F32, F64, F16, BF16, U4, BOOL = 2, 1, 3, 4, 17, 7


def one(dtype, shape, payload, **kw):
    return K.encode_directory([K.Tensor(dtype, shape, payload, **kw)])


class TestScalarBytes(unittest.TestCase):
    def test_f32_one(self):
        self.assertEqual(K.encode("f32", K.Float32.from_float(1.0)).hex(),
                         "0000803f")

    def test_f32_negative_zero(self):
        data = K.encode("f32", K.Float32.from_float(-0.0))
        self.assertEqual(data.hex(), "00000080")
        back = K.decode("f32", data)
        self.assertNotEqual(back, K.Float32.from_float(0.0))
        self.assertEqual(back.bits, 0x80000000)

    def test_f64_nan_payload_round_trips(self):
        nan = K.Float64(0x7FF8000000000001)
        data = K.encode("f64", nan)
        self.assertEqual(data, (0x7FF8000000000001).to_bytes(8, "little"))
        self.assertEqual(K.decode("f64", data).bits, 0x7FF8000000000001)
        # Python's own float would lose nothing here either, but equality by
        # bits is what makes this NaN equal to itself.
        self.assertEqual(K.decode("f64", data), nan)

    def test_integers_little_endian(self):
        self.assertEqual(K.encode("u32", 1).hex(), "01000000")
        self.assertEqual(K.encode("i16", -2).hex(), "feff")
        self.assertEqual(K.encode("int", -1).hex(), "ff" * 8)
        self.assertEqual(K.encode("uint", 1), K.encode("u64", 1))

    def test_str_and_bytes(self):
        self.assertEqual(K.encode("str", "ab").hex(), "020000006162")
        self.assertEqual(K.encode("list<u8>", b"\x01").hex(), "0100000001")

    def test_dict_keys_sorted_by_utf8_bytes(self):
        data = K.encode("dict<str,u8>", {"b": 2, "\u00e9": 3, "a": 1, "B": 0})
        self.assertEqual(data.hex(), "04000000" "010000004200" "010000006101"
                         "010000006202" "02000000c3a903")

    def test_struct_empty_is_zero_bytes(self):
        self.assertEqual(K.encode("struct{}", {}), b"")
        self.assertEqual(K.decode("struct{}", b""), {})


class TestDirectoryBytes(unittest.TestCase):
    def test_empty_block(self):
        self.assertEqual(K.encode_directory([]).hex(), EMPTY_HEX)
        self.assertEqual(len(K.encode_directory([])), 64)

    def test_f32_vector_block(self):
        block = one(F32, (2,), K.pack_f32([1.0, -2.0]))
        self.assertEqual(len(block), 200)
        self.assertEqual(block[192:200].hex(), "0000803f000000c0")
        self.assertEqual(block[:4], b"KLNT")
        self.assertEqual(block[4], 2)
        self.assertEqual(block[5], 0x02)                  # LE bit, no names
        self.assertEqual(int.from_bytes(block[24:32], "little"), 128)
        self.assertEqual(int.from_bytes(block[16:24], "little"), 8)
        descriptor = block[64:192]
        self.assertEqual(descriptor[0:2].hex(), "0200")   # dtype f32
        self.assertEqual(descriptor[2], 1)                # rank
        self.assertEqual(descriptor[4:6].hex(), "ffff")   # unnamed
        self.assertEqual(int.from_bytes(descriptor[48:56], "little"), 2)

    def test_f16_and_bf16_one(self):
        self.assertEqual(one(F16, (1,), K.pack_f16([1.0]))[192:].hex(), "003c")
        self.assertEqual(one(BF16, (1,), K.pack_bf16([1.0]))[192:].hex(),
                         "803f")

    def test_packed_u4(self):
        self.assertEqual(K.pack_nibbles([1, 2, 3]).hex(), "2103")
        block = one(U4, (3,), K.pack_nibbles([1, 2, 3]))
        self.assertEqual(block[192:].hex(), "2103")
        self.assertEqual(K.decode("tensors", block).tensors[0].payload,
                         b"\x21\x03")

    def test_f8_pair_offset_64(self):
        block = K.encode_directory([K.Tensor(5, (1,), b"\x38"),
                                    K.Tensor(6, (1,), b"\x3c")])
        second = 64 + 128
        self.assertEqual(int.from_bytes(block[64 + 32:64 + 40], "little"), 0)
        self.assertEqual(int.from_bytes(block[second + 32:second + 40],
                                        "little"), 64)
        self.assertEqual(int.from_bytes(block[16:24], "little"), 65)
        base = 320
        self.assertEqual(block[base], 0x38)
        self.assertEqual(block[base + 1:base + 64], bytes(63))
        self.assertEqual(block[base + 64], 0x3C)

    def test_named_block_pads_to_64(self):
        block = one(F16, (2,), K.pack_f16([1.0, -2.0]), name="weight")
        self.assertEqual(block[5], 0x03)
        self.assertEqual(block[192:198], b"weight")
        self.assertEqual(block[198:256], bytes(58))
        self.assertEqual(block[256:].hex(), "003c00c0")

    def test_in_struct(self):
        t = "struct{id:i64,batch:tensors,}"
        block = one(F32, (2,), K.pack_f32([1.0, -2.0]))
        data = K.encode(t, {"id": 7, "batch": K.decode("tensors", block)})
        self.assertEqual(data, (7).to_bytes(8, "little") + block)

    def test_framed_empty(self):
        t = "struct{id:i64,batch:tensors,}"
        data = K.encode_frame(t, {"id": 7, "batch": K.Directory()})
        self.assertEqual(data[:8], b"KLN0\x00\x00\x00\x00")
        self.assertEqual(data[8:16], (0xE58AADC7552F0D82).to_bytes(8, "little"))
        self.assertEqual(data[24:].hex(), EMPTY_HEX)


class TestHashesAndTypeText(unittest.TestCase):
    def fnv(self, tokens):
        h = 14695981039346656037
        for token in tokens:
            for b in token.encode() + b"\x00":
                h = ((h ^ b) * 1099511628211) % 2**64
        return h

    def test_reference_hash(self):
        self.assertEqual(K.schema_hash("struct{id:i64,batch:tensors,}"),
                         0xE58AADC7552F0D82)

    def test_hash_tokens(self):
        cases = {
            "u8": ["u8"],
            "tensors": ["tensors"],
            "list<str>": ["list<", "str", ">"],
            "opt<int>": ["opt<", "int", ">"],
            "dict<str,f64>": ["dict<", "str", ",", "f64", ">"],
            "struct{}": ["struct{", "}"],
            "struct{a:list<u8>,b:opt<bool>,}":
                ["struct{", "a", ":", "list<", "u8", ">", ",", "b", ":",
                 "opt<", "bool", ">", ",", "}"],
        }
        for text, tokens in cases.items():
            with self.subTest(text=text):
                self.assertEqual(K.schema_hash(text), self.fnv(tokens))

    def test_distinct_hashes(self):
        texts = ["int", "i64", "uint", "u64", "list<u8>", "list<i8>",
                 "struct{a:u8,}", "struct{b:u8,}", "opt<opt<u8>>",
                 "dict<str,str>", "tensors"]
        hashes = {K.schema_hash(t) for t in texts}
        self.assertEqual(len(hashes), len(texts))

    def test_type_text_round_trip(self):
        for text in ["bool", "f32", "tensors", "list<list<u8>>",
                     "opt<opt<opt<str>>>", "dict<str,dict<str,u16>>",
                     "struct{}", "struct{a:i8,b:struct{c:uint,},}",
                     "list<struct{id:i64,batch:tensors,}>",
                     "struct{_x9:opt<tensors>,Y:dict<str,list<f64>>,}"]:
            with self.subTest(text=text):
                self.assertEqual(K.type_text(K.parse_type(text)), text)

    def test_bad_type_text_is_usage_error(self):
        for text in ["", "u128", "list<u8", "list<u8>>", "dict<u8,u8>",
                     "struct{a:u8}", "struct{a:u8,a:u8,}", "struct{1a:u8,}",
                     "list< u8>", "opt<>", "f16", "bytes", "struct{a:u8,"]:
            with self.subTest(text=text):
                with self.assertRaises(K.UsageError):
                    K.parse_type(text)

    def test_min_size(self):
        self.assertEqual(K.min_size("struct{id:i64,batch:tensors,}"), 72)
        self.assertEqual(K.min_size("struct{}"), 0)
        self.assertEqual(K.min_size("opt<u64>"), 1)
        self.assertEqual(K.min_size("dict<str,u64>"), 4)
        self.assertEqual(K.min_size("list<u64>"), 4)
        self.assertEqual(K.min_size("struct{a:bool,b:f32,c:str,}"), 9)


class TestEncoderRefusals(unittest.TestCase):
    def refuses(self, tensors):
        with self.assertRaises(K.UsageError):
            K.encode_directory(tensors)

    def test_directory_refusals(self):
        T = K.Tensor
        self.refuses([T(F32, (2,), b"\x00" * 4)])              # length
        self.refuses([T(F32, (1,) * 9, b"\x00" * 4)])          # rank 9
        self.refuses([T(0, (1,), b"\x00")])                     # dtype 0
        self.refuses([T(9, (1,), b"\x00", name="a"),
                      T(9, (1,), b"\x00", name="a")])           # duplicate
        self.refuses([T(9, (1,), b"\x00", name="a"),
                      T(9, (1,), b"\x00")])                     # flag rule
        self.refuses([T(9, (1,), b"\x00", name="")])            # empty name
        self.refuses([T(BOOL, (1,), b"\x02")])                 # bool byte
        self.refuses([T(U4, (1,), b"\xf1")])                    # high nibble
        self.refuses([T(4096, (1,), b"\x00\x00", block_size=2)])  # no layout
        self.refuses([T(9, (1,), b"\x00", name="x" * 70000)])   # > u16
        self.refuses([T(9, (1,), b"\x00", name="\ud800")])      # surrogate
        self.refuses([T(9, (1,), b"\x00", quant_scheme=1, quant_axis=0,
                        group_size=1, scale_index=0)])          # self scale
        fits = [T(9, (1,), b"\x00", name="n" * 40000),
                T(9, (1,), b"\x00", name="m" * 40000)]
        K.encode_directory(fits)              # second name starts at 40000
        self.refuses(fits + [T(9, (1,), b"\x00", name="o")])  # at 80000

    def test_directory_cap_refusal(self):
        tensors = [K.Tensor(9, (1,), b"\x00") for _ in range(5)]
        K.encode_directory(tensors)
        with self.assertRaises(K.UsageError):
            K.encode_directory(tensors, K.Limits.both(4))

    def test_frozen_refusals(self):
        bad = [("bool", 1), ("u8", 256), ("i8", -129), ("u8", True),
               ("f32", 1.0), ("str", b"x"), ("str", "\udc00"),
               ("list<u8>", [1]), ("opt<u8>", 5), ("struct{a:u8,}", {}),
               ("struct{a:u8,}", {"a": 1, "b": 2}), ("dict<str,u8>", {1: 1}),
               ("tensors", []), ("opt<" * 65 + "u8" + ">" * 65,
                                 _somes(65, 1))]
        for text, value in bad:
            with self.subTest(text=text[:20], value=value):
                with self.assertRaises(K.UsageError):
                    K.encode(text, value)

    def test_caps_refused_by_encoder(self):
        limits = K.Limits.both(4)
        for text, value in [("str", "abcde"), ("list<u8>", b"12345"),
                            ("list<u16>", [1] * 5),
                            ("dict<str,u8>", {c: 0 for c in "abcde"})]:
            with self.subTest(text=text):
                with self.assertRaises(K.UsageError):
                    K.encode(text, value, limits)

    def test_limits_bounds(self):
        K.Limits.both(K.WIRE_MAX)
        with self.assertRaises(K.UsageError):
            K.Limits.both(K.WIRE_MAX + 1)
        with self.assertRaises(K.UsageError):
            K.Limits(count_cap=-1)


def _somes(n, inner):
    for _ in range(n):
        inner = K.Some(inner)
    return inner


class TestDecoderRules(unittest.TestCase):
    def test_errors_carry_code_and_offset(self):
        with self.assertRaises(K.KilnError) as ctx:
            K.decode("struct{a:u8,b:bool,}", b"\x01\x02")
        self.assertEqual(ctx.exception.code, "TYPE")
        self.assertEqual(ctx.exception.offset, 1)
        with self.assertRaises(K.KilnError) as ctx:
            K.decode("u32", b"\x01\x02")
        self.assertEqual(ctx.exception.code, "EOF")

    def test_decode_at_leaves_following_bytes(self):
        value, end = K.decode_at("u16", b"\x01\x00\xff", 0)
        self.assertEqual((value, end), (1, 2))
        block = K.encode_directory([])
        directory, end = K.decode_directory(block + b"\x99", 0,
                                            standalone=False)
        self.assertEqual((directory, end), (K.Directory(), 64))
        with self.assertRaises(K.KilnError) as ctx:
            K.decode_directory(block + b"\x99", 0, standalone=True)
        self.assertEqual(ctx.exception.code, "TRAILING")

    def test_depth_limits(self):
        self.assertEqual(K.decode("opt<" * 64 + "u8" + ">" * 64,
                                  b"\x01" * 64 + b"\x05"), _somes(64, 5))
        self.assertIsNone(K.decode("opt<" * 65 + "u8" + ">" * 65, b"\x00"))
        with self.assertRaises(K.KilnError) as ctx:
            K.decode("opt<" * 65 + "u8" + ">" * 65, b"\x01" * 64)
        self.assertEqual(ctx.exception.code, "DEPTH")
        # Elements of an empty list are never entered.
        self.assertEqual(K.decode("list<" * 70 + "u8" + ">" * 70, bytes(4)),
                         [])

    def test_struct_list_zero_minimum(self):
        data = (1000).to_bytes(4, "little")
        self.assertEqual(K.decode("list<struct{}>", data), [{}] * 1000)
        # Zero-size elements decode in constant time and memory: the
        # hostile 1 KiB of 255 lists of 16,777,216 empty structs.
        hostile = (255).to_bytes(4, "little") + (1 << 24).to_bytes(4, "little") * 255
        value = K.decode("list<list<struct{}>>", hostile)
        self.assertEqual(len(value), 255)
        self.assertIsInstance(value[0], K.Repeat)
        self.assertEqual((len(value[0]), value[0][-1]), (1 << 24, {}))
        self.assertEqual(K.encode("list<list<struct{}>>", value), hostile)
        self.assertEqual(K.decode("list<struct{}>", bytes(4)), [])
        # The one element still counts for depth: struct{} at level 65.
        deep = "list<" * 64 + "struct{}" + ">" * 64
        with self.assertRaises(K.KilnError) as ctx:
            K.decode(deep, (1).to_bytes(4, "little") * 63 + (1 << 24).to_bytes(4, "little"))
        self.assertEqual(ctx.exception.code, "DEPTH")
        with self.assertRaises(K.KilnError) as ctx:
            K.decode("list<struct{}>", data, K.Limits.both(999))
        self.assertEqual(ctx.exception.code, "LIMIT")

    def test_float_helpers(self):
        self.assertEqual(K.Float32.from_float(-2.0).to_float(), -2.0)
        self.assertEqual(K.Float64.from_float(0.1).to_float(), 0.1)
        self.assertNotEqual(K.Float64.from_float(0.0),
                            K.Float64.from_float(-0.0))
        with self.assertRaises(K.UsageError):
            K.Float32.from_float(1e300)
        self.assertEqual(struct.unpack("<e", K.pack_f16([1.0]))[0], 1.0)


if __name__ == "__main__":
    unittest.main()
