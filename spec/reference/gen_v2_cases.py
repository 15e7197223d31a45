#!/usr/bin/env python3
"""Write spec/kiln-v2-cases.json, the Kiln v2 hex cases.

Every accepted case is produced by the reference encoder (kiln_ref.py).
Every rejected case is an encoder output changed by an explicit, logged
mutation (a patched field, a cut, an append, a lowered cap, or a different
destination type); the log is written into the case's "note".

Before writing, every case is run through kiln_ref: the verdict and code
must equal the recorded ones, directory faults must be found at the
recorded check step, and accepted bytes must re-encode to themselves.
Any disagreement, a duplicated name, or a missing named case stops the
script with a non-zero exit and nothing is written.

    python3 spec/reference/gen_v2_cases.py           # write the file
    python3 spec/reference/gen_v2_cases.py --check   # compare with disk
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import kiln_ref as K  # noqa: E402

OUT = HERE.parent / "kiln-v2-cases.json"

# The 46 cases the wire text names, in its table order, with its outcomes.
GOLDEN = [
    ("kiln-v2-empty", "accept"),
    ("kiln-v2-f32", "accept"),
    ("kiln-v2-f32-scalar", "accept"),
    ("kiln-v2-f32-negzero", "accept"),
    ("kiln-v2-f64-nan", "accept"),
    ("kiln-v2-f16-named", "accept"),
    ("kiln-v2-bf16", "accept"),
    ("kiln-v2-i8", "accept"),
    ("kiln-v2-bool", "accept"),
    ("kiln-v2-u4", "accept"),
    ("kiln-v2-f8-pair", "accept"),
    ("kiln-v2-scales", "accept"),
    ("kiln-v2-scales-outer", "accept"),
    ("kiln-v2-opaque", "accept"),
    ("kiln-v2-in-struct", "accept"),
    ("kiln-v2-framed", "accept"),
    ("kiln-pod-list-f32", "accept"),
    ("kiln-v2-bad-magic", "FRAME"),
    ("kiln-v2-bad-version", "FRAME"),
    ("kiln-v2-empty-name-flag", "TYPE"),
    ("kiln-v2-le-clear", "FRAME"),
    ("kiln-v2-unknown-flag", "FRAME"),
    ("kiln-v2-reserved", "FRAME"),
    ("kiln-v2-directory-eof", "EOF"),
    ("kiln-v2-count-cap", "LIMIT"),
    ("kiln-v2-directory-mismatch", "TYPE"),
    ("kiln-v2-shape-overflow", "LIMIT"),
    ("kiln-v2-length-mismatch", "TYPE"),
    ("kiln-v2-overlap", "TYPE"),
    ("kiln-v2-unaligned", "TYPE"),
    ("kiln-v2-nonzero-pad", "TYPE"),
    ("kiln-v2-duplicate-name", "TYPE"),
    ("kiln-v2-bad-utf8", "UTF8"),
    ("kiln-v2-bool-byte", "TYPE"),
    ("kiln-v2-scale-count", "TYPE"),
    ("kiln-v2-opaque-no-layout", "TYPE"),
    ("kiln-v2-trailing", "TRAILING"),
    ("kiln-v2-high-nibble", "TYPE"),
    ("kiln-v2-shape-tail", "TYPE"),
    ("kiln-v2-dtype-zero", "TYPE"),
    ("kiln-v2-dtype-reserved", "TYPE"),
    ("kiln-v2-payload-overflow", "LIMIT"),
    ("kiln-list-struct-hostile", "EOF"),
    ("kiln-list-struct-short", "EOF"),
    ("kiln-list-str-short", "EOF"),
    ("kiln-pod-list-short", "EOF"),
]
GOLDEN_NAMES = [name for name, _ in GOLDEN]

EMPTY_HEX = ("4b4c4e5402020000" + "00" * 56)

U64_MAX = K.U64_MAX
NONE32 = K.NO_INDEX

# ---------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------

HEADER_FIELDS = {
    "magic": (0, 4), "version": (4, 1), "flags": (5, 1),
    "tensor_count": (8, 4), "name_bytes": (12, 4), "payload_bytes": (16, 8),
    "directory_bytes": (24, 8),
}
DESC_FIELDS = {
    "dtype": (0, 2), "rank": (2, 1), "reserved": (3, 1), "name_off": (4, 2),
    "name_len": (6, 2), "layout_off": (8, 2), "layout_len": (10, 2),
    "block_size": (12, 4), "quant_scheme": (16, 2), "quant_axis": (18, 2),
    "group_size": (20, 4), "scale_index": (24, 4), "outer_index": (28, 4),
    "byte_offset": (32, 8), "byte_length": (40, 8),
    **{f"shape[{k}]": (48 + 8 * k, 8) for k in range(8)},
}


def T(dtype, shape, payload, **kw) -> K.Tensor:
    """A tensor by dtype name (or code)."""
    code = K.DTYPE_CODES[dtype] if isinstance(dtype, str) else dtype
    return K.Tensor(dtype=code, shape=tuple(shape), payload=bytes(payload), **kw)


def block(*tensors) -> bytes:
    return K.encode_directory(list(tensors))


def heap_start(data: bytes, at: int = 0) -> int:
    return at + 64 + 128 * int.from_bytes(data[at + 8:at + 12], "little")


def payload_base(data: bytes, at: int = 0) -> int:
    end = heap_start(data, at) + int.from_bytes(data[at + 12:at + 16], "little")
    return at + (end - at + 63) // 64 * 64


def _fmt(value: int) -> str:
    return str(value) if value < 1 << 20 else hex(value)


class Mut:
    """Explicit mutations of encoder output, each one logged for the note.
    ``at`` is where the directory being patched starts in the buffer; every
    logged offset is an offset in the whole case buffer."""

    def __init__(self, data: bytes, origin: str, at: int = 0):
        self.b = bytearray(data)
        self.origin = origin
        self.at = at
        self.log: list[str] = []

    def put(self, pos: int, size: int, value: int, what: str) -> "Mut":
        self.b[pos:pos + size] = value.to_bytes(size, "little")
        self.log.append(f"{what} (u{8 * size} at byte {pos}) = {_fmt(value)}")
        return self

    def hdr(self, field: str, value: int) -> "Mut":
        rel, size = HEADER_FIELDS[field]
        return self.put(self.at + rel, size, value, f"header {field}")

    def desc(self, i: int, field: str, value: int) -> "Mut":
        rel, size = DESC_FIELDS[field]
        return self.put(self.at + 64 + 128 * i + rel, size, value,
                        f"descriptor {i} {field}")

    def raw(self, pos: int, data: bytes, what: str) -> "Mut":
        self.b[pos:pos + len(data)] = data
        self.log.append(f"{what} (bytes at {pos}) = {data.hex()}")
        return self

    def cut(self, length: int) -> "Mut":
        del self.b[length:]
        self.log.append(f"cut to the first {length} bytes")
        return self

    def add(self, extra: bytes) -> "Mut":
        self.b += extra
        if len(extra) > 8 and not any(extra):
            self.log.append(f"appended {len(extra)} zero bytes")
        else:
            self.log.append(f"appended {extra.hex()}")
        return self

    def done(self) -> tuple[bytes, str]:
        if not self.log:
            return bytes(self.b), f"Bytes of {self.origin}, unchanged."
        return bytes(self.b), f"Mutation of {self.origin}: {'; '.join(self.log)}."


# ---------------------------------------------------------------------------
# Case registry
# ---------------------------------------------------------------------------

class Cases:
    def __init__(self) -> None:
        self.items: list[dict] = []
        self.steps: dict[str, str | None] = {}

    def accept(self, name: str, type_text: str, value, note: str, *,
               framed: bool = False, cap: int | None = None) -> bytes:
        """An accepted case: the encoder's bytes for ``value``."""
        limits = K.Limits.both(cap) if cap is not None else K.Limits()
        if framed:
            data = K.encode_frame(type_text, value, limits)
        else:
            data = K.encode(type_text, value, limits)
        self._add(name, type_text, data, "accept", note + " Encoder output.",
                  framed, cap, None)
        return data

    def reject(self, name: str, type_text: str, mutated: tuple[bytes, str],
               expect: str, why: str, *, step: str | None = None,
               framed: bool = False, cap: int | None = None) -> None:
        data, log = mutated
        where = f" Fails at directory step {step}." if step else ""
        self._add(name, type_text, data, expect, f"{why}.{where} {log}",
                  framed, cap, step)

    def _add(self, name, type_text, data, expect, note, framed, cap, step):
        case = {"name": name, "type": type_text, "framed": framed,
                "hex": data.hex(), "expect": expect, "note": note}
        if cap is not None:
            case["cap"] = cap
        self.items.append(case)
        self.steps.setdefault(name, step)


def dtype_samples() -> dict[str, tuple[tuple, bytes]]:
    """One sample (shape, payload) per closed dtype."""
    P = K.pack_payload
    return {
        "f64": ((2,), P("f64", [1.5, -0.0])),
        "f32": ((3,), P("f32", [0.5, float("inf"), -1.0])),
        "f16": ((2,), P("f16", [1.0, -0.5])),
        "bf16": ((2,), P("bf16", [1.0, -2.0])),
        "f8e4m3": ((3,), bytes([0x38, 0xB8, 0x7F])),
        "f8e5m2": ((2,), bytes([0x3C, 0x7C])),
        "bool": ((2, 2), P("bool", [1, 0, 0, 1])),
        "i8": ((3,), P("i8", [-128, 0, 127])),
        "u8": ((4,), P("u8", [0, 1, 254, 255])),
        "i16": ((2,), P("i16", [-32768, 32767])),
        "u16": ((2,), P("u16", [0, 65535])),
        "i32": ((2,), P("i32", [-2**31, 2**31 - 1])),
        "u32": ((1,), P("u32", [2**32 - 1])),
        "i64": ((2,), P("i64", [-2**63, 2**63 - 1])),
        "u64": ((1,), P("u64", [2**64 - 1])),
        "i4": ((3,), P("i4", [-1, 7, -8])),
        "u4": ((1,), P("u4", [15])),
        "e2m1": ((2, 2), P("e2m1", [1, 2, 3, 4])),
        "e8m0": ((3,), bytes([127, 0, 254])),
    }


# ---------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------

def build_cases() -> Cases:
    c = Cases()
    f32 = K.Float32.from_float
    f64 = K.Float64.from_float
    Dir = K.Directory
    Some = K.Some

    # ---- shared encoder outputs -------------------------------------------
    t_f32 = T("f32", (2,), K.pack_f32([1.0, -2.0]))
    b_empty = block()
    b_f32 = block(t_f32)
    b_f32_scalar = block(T("f32", (), K.pack_f32([1.0])))
    b_f16_named = block(T("f16", (2,), K.pack_f16([1.0, -2.0]), name="weight"))
    b_bool = block(T("bool", (3,), K.pack_bools([1, 0, 1])))
    b_u4 = block(T("u4", (3,), K.pack_nibbles([1, 2, 3])))
    b_f8_pair = block(T("f8e4m3", (1,), b"\x38"), T("f8e5m2", (1,), b"\x3c"))
    e2m1_32 = bytes((2 * i) & 0xF | ((2 * i + 1) & 0xF) << 4 for i in range(16))
    t_scaled = T("e2m1", (32,), e2m1_32, quant_scheme=1, quant_axis=0,
                 group_size=32, scale_index=1)
    t_scale = T("e8m0", (1,), b"\x7f")
    b_scales = block(t_scaled, t_scale)
    t_outer_data = T("e2m1", (16,), e2m1_32[:8], quant_scheme=2, quant_axis=0,
                     group_size=16, scale_index=1, outer_index=2)
    t_outer_scale = T("f8e4m3", (1,), b"\x38")
    t_outer = T("f32", (1,), K.pack_f32([0.25]))
    b_scales_outer = block(t_outer_data, t_outer_scale, t_outer)
    q4k = bytes(range(0x10, 0x10 + 18))
    b_opaque = block(T(4096, (32,), q4k, layout="Q4_K", block_size=18))
    b_pair_f32 = block(t_f32, t_f32)               # second at offset 64
    b_named_ab = block(T("f32", (1,), K.pack_f32([1.0]), name="a"),
                       T("f32", (1,), K.pack_f32([2.0]), name="b"))
    sid = "struct{id:i64,batch:tensors,}"

    # ---- the 46 named cases ------------------------------------------------
    c.accept("kiln-v2-empty", "tensors", Dir(),
             "Header-only directory: every length 0, flags 0x02.")
    c.accept("kiln-v2-f32", "tensors", Dir([t_f32]),
             "One unnamed f32 vector [1.0, -2.0]: 64-byte header, one "
             "128-byte descriptor, no heap, no pad, payload 0000803f000000c0 "
             "at byte 192; 200 bytes.")
    c.accept("kiln-v2-f32-scalar", "tensors",
             Dir([T("f32", (), K.pack_f32([1.0]))]),
             "Rank-0 f32 1.0: element count 1, all shape slots 0.")
    c.accept("kiln-v2-f32-negzero", "tensors",
             Dir([T("f32", (1,), K.pack_f32([-0.0]))]),
             "f32 vector [-0.0]; payload 00000080 keeps the sign.")
    c.accept("kiln-v2-f64-nan", "tensors",
             Dir([T("f64", (1,), (0x7FF8000000000001).to_bytes(8, "little"))]),
             "f64 quiet NaN with payload 1, bits 0x7ff8000000000001, kept "
             "bit for bit.")
    c.accept("kiln-v2-f16-named", "tensors",
             Dir([T("f16", (2,), K.pack_f16([1.0, -2.0]), name="weight")]),
             "f16 [1.0, -2.0] named 'weight': name flag set, 6-byte heap at "
             "192, 58 zero pad bytes, payload_base 256.")
    c.accept("kiln-v2-bf16", "tensors",
             Dir([T("bf16", (2,), K.pack_bf16([1.0, -2.0]))]),
             "bf16 [1.0, -2.0]: payload 803f00c0.")
    c.accept("kiln-v2-i8", "tensors",
             Dir([T("i8", (3,), K.pack_payload("i8", [-1, -128, 127]))]),
             "i8 [-1, -128, 127]: payload ff807f.")
    c.accept("kiln-v2-bool", "tensors",
             Dir([T("bool", (3,), K.pack_bools([1, 0, 1]))]),
             "bool [true, false, true]: one byte each, 010001.")
    c.accept("kiln-v2-u4", "tensors",
             Dir([T("u4", (3,), K.pack_nibbles([1, 2, 3]))]),
             "u4 [1, 2, 3]: payload 2103, low nibble first, zero high "
             "nibble after the odd tail.")
    c.accept("kiln-v2-f8-pair", "tensors",
             Dir([T("f8e4m3", (1,), b"\x38"), T("f8e5m2", (1,), b"\x3c")]),
             "f8e4m3 byte 38 at offset 0, f8e5m2 byte 3c at offset 64, 63 "
             "zero gap bytes, payload_bytes 65.")
    c.accept("kiln-v2-scales", "tensors", Dir([t_scaled, t_scale]),
             "e2m1 vector of 32 (16 bytes), scheme 1, axis 0, group 32, "
             "scale_index 1; tensor 1 is one e8m0 byte 7f.")
    c.accept("kiln-v2-scales-outer", "tensors",
             Dir([t_outer_data, t_outer_scale, t_outer]),
             "e2m1 vector of 16 (8 bytes), scheme 2, axis 0, group 16; "
             "scale = one f8e4m3 byte 38 (tensor 1), outer = f32 [0.25] "
             "(tensor 2).")
    c.accept("kiln-v2-opaque", "tensors",
             Dir([T(4096, (32,), q4k, layout="Q4_K", block_size=18)]),
             "Opaque code 4096, shape [32], layout name 'Q4_K' in the heap "
             "(name flag clear), block_size 18, 18 payload bytes.")
    c.accept("kiln-v2-in-struct", sid, {"id": 7, "batch": Dir([t_f32])},
             "i64 7 then the 200-byte kiln-v2-f32 block.")
    c.accept("kiln-v2-framed", sid, {"id": 7, "batch": Dir()},
             "Frame KLN0 with hash 0xe58aadc7552f0d82, then i64 7 and the "
             "64-byte empty block.", framed=True)
    c.accept("kiln-pod-list-f32", "list<f32>", [f32(1.0), f32(-2.0)],
             "list<f32> [1.0, -2.0]: count 2 then 8 bytes.")

    c.reject("kiln-v2-bad-magic", "tensors",
             Mut(b_f32, "kiln-v2-f32").raw(3, b"X", "magic byte 3").done(),
             "FRAME", "Magic KLNX is not KLNT", step="1")
    c.reject("kiln-v2-bad-version", "tensors",
             Mut(b_f32, "kiln-v2-f32").hdr("version", 1).done(),
             "FRAME", "Directory version 1", step="2")
    c.reject("kiln-v2-empty-name-flag", "tensors",
             Mut(b_empty, "kiln-v2-empty").hdr("flags", 0x03).done(),
             "TYPE", "Name flag set on a directory with no tensors",
             step="8b")
    c.reject("kiln-v2-le-clear", "tensors",
             Mut(b_f32, "kiln-v2-f32").hdr("flags", 0x00).done(),
             "FRAME", "Little-endian flag clear", step="2")
    c.reject("kiln-v2-unknown-flag", "tensors",
             Mut(b_f32, "kiln-v2-f32").hdr("flags", 0x06).done(),
             "FRAME", "Unknown flag bit 2 set", step="2")
    c.reject("kiln-v2-reserved", "tensors",
             Mut(b_f32, "kiln-v2-f32").put(32, 1, 1, "header reserved byte")
             .done(), "FRAME", "Nonzero reserved header byte", step="2")
    c.reject("kiln-v2-directory-eof", "tensors",
             Mut(b_empty, "kiln-v2-empty").hdr("tensor_count", 1)
             .hdr("directory_bytes", 128).done(),
             "EOF", "One descriptor claimed (directory_bytes consistent), "
             "but the buffer ends after the header", step="5")
    c.reject("kiln-v2-count-cap", "tensors",
             Mut(b_empty, "kiln-v2-empty").hdr("tensor_count", 16777217)
             .hdr("directory_bytes", 16777217 * 128).done(),
             "LIMIT", "tensor_count 16777217 is above the default cap "
             "16777216", step="3")
    c.reject("kiln-v2-directory-mismatch", "tensors",
             Mut(b_f32, "kiln-v2-f32").hdr("directory_bytes", 0).done(),
             "TYPE", "directory_bytes 0, but tensor_count * 128 + "
             "name_bytes is 128", step="4")
    c.reject("kiln-v2-shape-overflow", "tensors",
             Mut(block(T("f32", (1, 2), K.pack_f32([1.0, 2.0]))),
                 "the encoder's block of one f32 tensor of shape [1, 2]")
             .desc(0, "shape[0]", 1 << 32).desc(0, "shape[1]", 1 << 32)
             .done(),
             "LIMIT", "Shape [2^32, 2^32]: element count 2^64 overflows u64",
             step="9")
    c.reject("kiln-v2-length-mismatch", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "shape[0]", 3).done(),
             "TYPE", "Shape [3] f32 needs 12 bytes, byte_length is 8",
             step="9")
    c.reject("kiln-v2-overlap", "tensors",
             Mut(b_pair_f32, "the encoder's block of two f32 [1.0, -2.0] "
                 "vectors (offsets 0 and 64, payload_bytes 72)")
             .desc(1, "byte_offset", 4).done(),
             "TYPE", "Tensor 1 range [4, 12) overlaps tensor 0 range [0, 8)",
             step="9")
    c.reject("kiln-v2-unaligned", "tensors",
             Mut(b_pair_f32, "the encoder's block of two f32 [1.0, -2.0] "
                 "vectors (offsets 0 and 64, payload_bytes 72)")
             .desc(1, "byte_offset", 8).done(),
             "TYPE", "Tensor 1 at offset 8 does not overlap tensor 0 but the "
             "canonical offset is 64", step="10")
    c.reject("kiln-v2-nonzero-pad", "tensors",
             Mut(b_f16_named, "kiln-v2-f16-named")
             .put(198, 1, 1, "first pad byte after the heap").done(),
             "TYPE", "Nonzero padding byte between heap and payload",
             step="7")
    hs = heap_start(b_named_ab)
    c.reject("kiln-v2-duplicate-name", "tensors",
             Mut(b_named_ab, "the encoder's block of two f32 [1] tensors "
                 "named 'a' and 'b' (heap 'ab')")
             .raw(hs + 1, b"a", "second heap byte").done(),
             "TYPE", "Both tensors are named 'a'", step="8d")
    c.reject("kiln-v2-bad-utf8", "tensors",
             Mut(b_f16_named, "kiln-v2-f16-named")
             .raw(192, b"\xff", "first name byte").done(),
             "UTF8", "Name 'weight' becomes ff 'eight', not UTF-8", step="8c")
    c.reject("kiln-v2-bool-byte", "tensors",
             Mut(b_bool, "kiln-v2-bool").raw(193, b"\x02", "bool element 1")
             .done(), "TYPE", "Bool byte 2", step="11")
    c.reject("kiln-v2-scale-count", "tensors",
             Mut(b_scales, "kiln-v2-scales").desc(0, "group_size", 16).done(),
             "TYPE", "Group 16 over 32 elements needs 2 scales, tensor 1 "
             "has 1", step="11")
    c.reject("kiln-v2-opaque-no-layout", "tensors",
             Mut(block(T("u8", (18,), q4k)), "the encoder's block of one u8 "
                 "vector holding kiln-v2-opaque's 18 payload bytes")
             .desc(0, "dtype", 4096).desc(0, "block_size", 18).done(),
             "TYPE", "Opaque code 4096 with block_size 18 but no layout name",
             step="9")
    c.reject("kiln-v2-trailing", "tensors",
             Mut(b_f32, "kiln-v2-f32").add(b"\x00").done(),
             "TRAILING", "Standalone block followed by one byte", step="12")
    c.reject("kiln-v2-high-nibble", "tensors",
             Mut(b_u4, "kiln-v2-u4").raw(193, b"\x13", "last payload byte")
             .done(), "TYPE", "Odd u4 count with nonzero high nibble in the "
             "last byte", step="11")
    c.reject("kiln-v2-shape-tail", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "shape[1]", 1).done(),
             "TYPE", "Rank 1 with nonzero shape slot 1", step="9")
    c.reject("kiln-v2-dtype-zero", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "dtype", 0).done(),
             "TYPE", "Dtype code 0", step="9")
    c.reject("kiln-v2-dtype-reserved", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "dtype", 20).done(),
             "TYPE", "Dtype code 20 is reserved", step="9")
    c.reject("kiln-v2-payload-overflow", "tensors",
             Mut(b_f32, "kiln-v2-f32").hdr("payload_bytes", U64_MAX - 63)
             .done(), "LIMIT", "payload_base 192 + payload_bytes 2^64-64 "
             "overflows u64", step="6")
    lst = "list<struct{a:i64,b:str,}>"
    c.reject("kiln-list-struct-hostile", lst,
             Mut(K.encode(lst, []), "the encoding of the empty list")
             .put(0, 4, 16777216, "list count").done(),
             "EOF", "Count 16777216 (at the cap) x minimum 12 bytes per "
             "struct needs 201326592 bytes; 0 remain")
    c.reject("kiln-list-struct-short", lst,
             Mut(K.encode(lst, [{"a": 1, "b": "x"}]),
                 "the encoding of [{a: 1, b: 'x'}]")
             .put(0, 4, 2, "list count").done(),
             "EOF", "Count 2 x minimum 12 needs 24 bytes; only one struct "
             "(13 bytes) is present")
    c.reject("kiln-list-str-short", "list<str>",
             Mut(K.encode("list<str>", [""]), "the encoding of ['']")
             .put(0, 4, 3, "list count").done(),
             "EOF", "Count 3 x minimum 4 needs 12 bytes; one length word "
             "(4 bytes) is present")
    c.reject("kiln-pod-list-short", "list<f32>",
             Mut(K.encode("list<f32>", [f32(1.0)]), "the encoding of [1.0]")
             .put(0, 4, 2, "list count").done(),
             "EOF", "Count 2 x 4 needs 8 bytes; 4 payload bytes are present")

    # ---- own cases: every dtype -------------------------------------------
    samples = dtype_samples()
    for name, (shape, payload) in samples.items():
        c.accept(f"kiln-x-dtype-{name}", "tensors",
                 Dir([T(name, shape, payload)]),
                 f"One unnamed {name} tensor, shape {list(shape)}, payload "
                 f"{payload.hex()}.")
    all_tensors = [T(name, shape, payload, name=f"t_{name}")
                   for name, (shape, payload) in samples.items()]
    all_tensors.append(T(5000, (2, 8), bytes(range(8)), name="t_opaque",
                         layout="blk4", block_size=4))
    c.accept("kiln-x-all-dtypes", "tensors", Dir(all_tensors),
             "All 19 closed dtypes plus opaque 5000, each named t_<dtype>; "
             "greedy 64-aligned offsets, layout name after all tensor names.")
    c.accept("kiln-x-opaque-max", "tensors",
             Dir([T(32767, (4,), bytes(range(16)), layout="blk8",
                    block_size=8)]),
             "Highest opaque code 32767, layout 'blk8', block 8, 16 bytes.")
    c.accept("kiln-x-opaque-repeat-layout", "tensors",
             Dir([T(4097, (32,), bytes(34), name="a", layout="Q8_0",
                    block_size=34),
                  T(4097, (64,), bytes(range(68)), name="b", layout="Q8_0",
                    block_size=34)]),
             "Two named opaque tensors sharing layout name 'Q8_0'; heap is "
             "'abQ8_0Q8_0'.")

    # ---- own cases: directory layouts that are legal but unusual ----------
    c.accept("kiln-x-zero-dim-huge", "tensors",
             Dir([T("f32", (1 << 40, 1 << 40, 0), b"")]),
             "Shape [2^40, 2^40, 0]: the exact product is 0, not LIMIT; "
             "byte_length 0.")
    c.accept("kiln-x-zero-length-first", "tensors",
             Dir([T("u8", (0,), b""), T("u8", (3,), b"\x01\x02\x03")]),
             "An empty u8 vector then a 3-byte one: both at offset 0, an "
             "empty range overlaps nothing.")
    c.accept("kiln-x-zero-length-last", "tensors",
             Dir([t_f32, T("u8", (0,), b"")]),
             "An empty vector after an 8-byte one sits at offset 64, so "
             "payload_bytes is 64 with 56 zero gap bytes.")
    c.accept("kiln-x-rank-8", "tensors",
             Dir([T("u8", (1, 1, 1, 1, 1, 1, 1, 2), b"\x05\x06")]),
             "Rank 8, every shape slot used.")
    c.accept("kiln-x-heap-no-pad", "tensors",
             Dir([T("u8", (1,), b"\x09", name="n" * 64)]),
             "A 64-byte name: header + descriptor + heap = 256, so no pad.")
    c.accept("kiln-x-name-utf8", "tensors",
             Dir([T("u8", (1,), b"\x01", name="gewicht.\u00fc"),
                  T("u8", (1,), b"\x02", name="\u6743\u91cd")]),
             "Multi-byte UTF-8 tensor names.")
    c.accept("kiln-x-quant-2d", "tensors",
             Dir([T("i8", (3, 10), bytes(range(30)), quant_scheme=1,
                    quant_axis=1, group_size=4, scale_index=1),
                  T("f32", (3, 3), K.pack_f32([0.5] * 9))]),
             "i8 [3, 10], axis 1, group 4: ceil(10/4) * 3 = 9 f32 scales.")
    c.accept("kiln-x-quant-axis0-ceil", "tensors",
             Dir([T("i4", (4, 3), K.pack_nibbles([1] * 12), quant_scheme=1,
                    quant_axis=0, group_size=3, scale_index=1),
                  T("f16", (2, 3), K.pack_f16([1.0] * 6))]),
             "i4 [4, 3], axis 0, group 3: ceil(4/3) * 3 = 6 f16 scales.")
    c.accept("kiln-x-quant-scale-first", "tensors",
             Dir([t_scale, T("e2m1", (32,), e2m1_32, quant_scheme=1,
                             quant_axis=0, group_size=32, scale_index=0)]),
             "Scale tensor placed before its data tensor (scale_index 0).")
    c.accept("kiln-x-quant-shared-scale", "tensors",
             Dir([T("u8", (4,), b"\x01\x02\x03\x04", quant_scheme=1,
                    quant_axis=0, group_size=4, scale_index=2),
                  T("u8", (4,), b"\x05\x06\x07\x08", quant_scheme=1,
                    quant_axis=0, group_size=4, scale_index=2),
                  T("f32", (1,), K.pack_f32([2.0]))]),
             "Two data tensors name the same scale tensor; nothing forbids "
             "it.")
    c.accept("kiln-x-cap-dir-at-cap", "tensors",
             Dir([T("u8", (1,), bytes([i]), name=n)
                  for i, n in enumerate("abcd")]),
             "4 tensors and 4 name bytes under cap 4: at the cap is legal.",
             cap=4)

    # ---- own cases: directory step 1 --------------------------------------
    c.reject("kiln-x-dir-0-bytes", "tensors",
             Mut(b_empty, "kiln-v2-empty").cut(0).done(),
             "EOF", "Empty buffer", step="1")
    c.reject("kiln-x-dir-3-bytes", "tensors",
             Mut(b_empty, "kiln-v2-empty").cut(3).done(),
             "EOF", "3 bytes cannot hold the magic", step="1")
    c.reject("kiln-x-dir-63-bytes", "tensors",
             Mut(b_empty, "kiln-v2-empty").cut(63).done(),
             "EOF", "Magic matches but the header is cut", step="1")
    c.reject("kiln-x-dir-bad-magic-short", "tensors",
             Mut(b_empty, "kiln-v2-empty").cut(10).raw(0, b"X", "magic byte 0")
             .done(), "FRAME", "Wrong magic is found before the short header "
             "(order inside step 1)", step="1")
    c.reject("kiln-x-order-short-before-version", "tensors",
             Mut(b_empty, "kiln-v2-empty").hdr("version", 1).cut(40).done(),
             "EOF", "Bad version in a cut header: the length check of step 1 "
             "wins over step 2", step="1")

    # ---- step 2 ------------------------------------------------------------
    c.reject("kiln-x-dir-version-3", "tensors",
             Mut(b_f32, "kiln-v2-f32").hdr("version", 3).done(),
             "FRAME", "Directory version 3", step="2")
    c.reject("kiln-x-dir-reserved-6", "tensors",
             Mut(b_f32, "kiln-v2-f32").put(6, 1, 1, "header reserved byte")
             .done(), "FRAME", "Nonzero reserved header byte 6", step="2")
    c.reject("kiln-x-dir-reserved-63", "tensors",
             Mut(b_f32, "kiln-v2-f32").put(63, 1, 0x80, "header reserved "
                                          "byte").done(),
             "FRAME", "Nonzero last reserved header byte", step="2")
    c.reject("kiln-x-order-version-before-cap", "tensors",
             Mut(b_empty, "kiln-v2-empty").hdr("version", 0)
             .hdr("tensor_count", 16777217).done(),
             "FRAME", "Version 0 and a count above the cap: step 2 wins over "
             "step 3", step="2")

    # ---- step 3 ------------------------------------------------------------
    five = block(*[T("u8", (1,), bytes([i])) for i in range(5)])
    c.reject("kiln-x-cap-tensor-count", "tensors",
             Mut(five, "the encoder's block of five unnamed u8 [1] tensors "
                 "(default cap), read with cap 4").done(),
             "LIMIT", "tensor_count 5 is above cap 4", step="3", cap=4)
    c.reject("kiln-x-cap-name-bytes", "tensors",
             Mut(block(T("u8", (1,), b"\x01", name="abcde")),
                 "the encoder's block of one u8 [1] named 'abcde' (default "
                 "cap), read with cap 4").done(),
             "LIMIT", "name_bytes 5 is above cap 4", step="3", cap=4)
    c.reject("kiln-x-order-cap-before-mismatch", "tensors",
             Mut(b_empty, "kiln-v2-empty").hdr("tensor_count", 16777217)
             .done(), "LIMIT", "Count above the cap with directory_bytes "
             "left at 0: step 3 wins over step 4", step="3")

    # ---- step 4 and 5 --------------------------------------------------------
    c.reject("kiln-x-order-mismatch-before-eof", "tensors",
             Mut(b_empty, "kiln-v2-empty").hdr("tensor_count", 1).done(),
             "TYPE", "Count 1 with directory_bytes 0 in a 64-byte buffer: "
             "step 4 (TYPE) wins over step 5 (EOF)", step="4")
    c.reject("kiln-x-dir-heap-eof", "tensors",
             Mut(b_empty, "kiln-v2-empty").hdr("name_bytes", 100)
             .hdr("directory_bytes", 100).done(),
             "EOF", "A 100-byte heap that is not in the buffer", step="5")
    c.reject("kiln-x-order-eof-before-payload-overflow", "tensors",
             Mut(b_empty, "kiln-v2-empty").hdr("tensor_count", 1)
             .hdr("directory_bytes", 128).hdr("payload_bytes", U64_MAX)
             .done(), "EOF", "Directory past the buffer and an overflowing "
             "payload: step 5 wins over step 6", step="5")

    # ---- step 6 and 7 --------------------------------------------------------
    c.reject("kiln-x-dir-payload-eof", "tensors",
             Mut(b_f32, "kiln-v2-f32").cut(199).done(),
             "EOF", "Last payload byte missing", step="6")
    c.reject("kiln-x-order-payload-overflow-before-pad", "tensors",
             Mut(b_f16_named, "kiln-v2-f16-named")
             .hdr("payload_bytes", U64_MAX - 63)
             .put(198, 1, 1, "first pad byte").done(),
             "LIMIT", "Overflowing payload end and a dirty pad: step 6 wins "
             "over step 7", step="6")
    c.reject("kiln-x-order-block-eof-before-pad", "tensors",
             Mut(b_f16_named, "kiln-v2-f16-named")
             .put(198, 1, 1, "first pad byte").cut(259).done(),
             "EOF", "Dirty pad in a block whose last byte is cut: step 6 "
             "wins over step 7", step="6")
    c.reject("kiln-x-order-pad-before-reserved", "tensors",
             Mut(b_f16_named, "kiln-v2-f16-named")
             .put(255, 1, 1, "last pad byte").desc(0, "reserved", 1).done(),
             "TYPE", "Dirty pad and a reserved descriptor byte: step 7 "
             "(TYPE) wins over step 8a (FRAME)", step="7")

    # ---- step 8a -------------------------------------------------------------
    c.reject("kiln-x-desc-reserved-3", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "reserved", 1).done(),
             "FRAME", "Descriptor reserved byte 3 is nonzero", step="8a")
    c.reject("kiln-x-desc-reserved-127", "tensors",
             Mut(b_f32, "kiln-v2-f32").put(64 + 127, 1, 1, "descriptor 0 "
                                          "reserved byte 127").done(),
             "FRAME", "Last reserved descriptor byte is nonzero", step="8a")
    c.reject("kiln-x-order-reserved-before-heap", "tensors",
             Mut(b_named_ab, "the block of tensors 'a', 'b' (see "
                 "kiln-v2-duplicate-name)")
             .desc(0, "name_off", 1).put(64 + 128 + 112, 1, 1, "descriptor 1 "
                                         "reserved byte 112").done(),
             "FRAME", "Descriptor 0 has a heap fault, descriptor 1 a reserved "
             "byte: 8a runs over all descriptors before 8b", step="8a")

    # ---- step 8b -------------------------------------------------------------
    c.reject("kiln-x-name-flag-clear", "tensors",
             Mut(b_f16_named, "kiln-v2-f16-named").hdr("flags", 0x02).done(),
             "TYPE", "Name flag clear but the tensor has a name", step="8b")
    c.reject("kiln-x-name-flag-set-unnamed", "tensors",
             Mut(b_f32, "kiln-v2-f32").hdr("flags", 0x03).done(),
             "TYPE", "Name flag set but the tensor has no name", step="8b")
    c.reject("kiln-x-heap-absent-offset", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "name_off", 0).done(),
             "TYPE", "Absent name (length 0) with offset 0, not 0xFFFF",
             step="8b")
    c.reject("kiln-x-heap-present-ffff", "tensors",
             Mut(b_f16_named, "kiln-v2-f16-named").desc(0, "name_off", 0xFFFF)
             .done(), "TYPE", "Present name with offset 0xFFFF", step="8b")
    b_named_a_bb = block(T("u8", (1,), b"\x01", name="a"),
                         T("u8", (1,), b"\x02", name="bb"))
    hs = heap_start(b_named_a_bb)
    c.reject("kiln-x-heap-reordered", "tensors",
             Mut(b_named_a_bb, "the encoder's block of u8 [1] tensors named "
                 "'a' and 'bb' (heap 'abb')")
             .raw(hs, b"bba", "heap").desc(0, "name_off", 2)
             .desc(1, "name_off", 0).done(),
             "TYPE", "Each slice still spells its name but the heap order is "
             "reversed", step="8b")
    c.reject("kiln-x-heap-hole", "tensors",
             Mut(block(T("u8", (1,), b"\x01", name="ab")), "the encoder's "
                 "block of one u8 [1] named 'ab'")
             .desc(0, "name_len", 1).done(),
             "TYPE", "Name 'a' uses 1 of the 2 heap bytes", step="8b")
    c.reject("kiln-x-heap-past-end", "tensors",
             Mut(block(T("u8", (1,), b"\x01", name="ab")), "the encoder's "
                 "block of one u8 [1] named 'ab'")
             .desc(0, "name_len", 3).done(),
             "TYPE", "Name slice ends past name_bytes (into the pad)",
             step="8b")
    b_nl = block(T(4096, (1,), b"\x00\x01", name="n", layout="L",
                   block_size=2))
    hs = heap_start(b_nl)
    c.reject("kiln-x-heap-layout-first", "tensors",
             Mut(b_nl, "the encoder's block of one opaque 4096 tensor named "
                 "'n' with layout 'L' (heap 'nL')")
             .raw(hs, b"Ln", "heap").desc(0, "name_off", 1)
             .desc(0, "layout_off", 0).done(),
             "TYPE", "Layout name placed before the tensor names", step="8b")
    c.reject("kiln-x-heap-layout-absent-offset", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "layout_off", 0).done(),
             "TYPE", "Absent layout name with offset 0, not 0xFFFF",
             step="8b")

    # ---- step 8c and 8d ------------------------------------------------------
    hs = heap_start(b_opaque)
    c.reject("kiln-x-layout-bad-utf8", "tensors",
             Mut(b_opaque, "kiln-v2-opaque").raw(hs + 3, b"\xe2",
                                                 "last layout byte").done(),
             "UTF8", "Layout name 'Q4_' + e2: a cut 3-byte sequence",
             step="8c")
    c.reject("kiln-x-name-surrogate", "tensors",
             Mut(block(T("u8", (1,), b"\x01", name="abc")), "the encoder's "
                 "block of one u8 [1] named 'abc'")
             .raw(192, b"\xed\xa0\x80", "name bytes").done(),
             "UTF8", "Name ed a0 80 encodes a surrogate, not UTF-8",
             step="8c")
    hs = heap_start(b_named_ab)
    c.reject("kiln-x-order-heap-before-utf8", "tensors",
             Mut(b_named_ab, "the block of tensors 'a', 'b' (see "
                 "kiln-v2-duplicate-name)")
             .raw(hs, b"\xff", "first name byte").desc(1, "name_len", 2)
             .done(), "TYPE", "Descriptor 0 name is bad UTF-8, descriptor 1 "
             "name runs past the heap: 8b wins over 8c", step="8b")
    c.reject("kiln-x-order-utf8-before-dup", "tensors",
             Mut(b_named_ab, "the block of tensors 'a', 'b' (see "
                 "kiln-v2-duplicate-name)")
             .raw(hs, b"\xff\xff", "heap").done(),
             "UTF8", "Both names are the same bad byte ff: 8c wins over 8d",
             step="8c")
    b_named_2d = block(T("f32", (1, 1), K.pack_f32([1.0]), name="a"),
                       T("f32", (1, 1), K.pack_f32([2.0]), name="b"))
    c.reject("kiln-x-order-dup-before-shape", "tensors",
             Mut(b_named_2d, "the encoder's block of f32 [1, 1] tensors "
                 "named 'a' and 'b'")
             .raw(heap_start(b_named_2d) + 1, b"a", "second heap byte")
             .desc(0, "shape[0]", 1 << 32).desc(0, "shape[1]", 1 << 32)
             .done(), "TYPE", "Duplicate names and an overflowing shape: 8d "
             "(TYPE) wins over step 9 (LIMIT)", step="8d")

    # ---- step 9 --------------------------------------------------------------
    c.reject("kiln-x-dtype-4095", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "dtype", 4095).done(),
             "TYPE", "Dtype 4095, the last reserved code", step="9")
    c.reject("kiln-x-dtype-32768", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "dtype", 32768).done(),
             "TYPE", "Dtype 32768, above the opaque range", step="9")
    c.reject("kiln-x-rank-9", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "rank", 9).done(),
             "TYPE", "Rank 9", step="9")
    c.reject("kiln-x-scalar-shape-slot", "tensors",
             Mut(b_f32_scalar, "kiln-v2-f32-scalar").desc(0, "shape[0]", 1)
             .done(), "TYPE", "Rank 0 with nonzero shape slot 0", step="9")
    c.reject("kiln-x-size-overflow", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "shape[0]", 1 << 62).done(),
             "LIMIT", "2^62 f32 elements: the count fits, 4 x count = 2^64 "
             "does not", step="9")
    c.reject("kiln-x-opaque-block-zero", "tensors",
             Mut(b_opaque, "kiln-v2-opaque").desc(0, "block_size", 0).done(),
             "TYPE", "Opaque dtype with block_size 0", step="9")
    c.reject("kiln-x-opaque-not-multiple", "tensors",
             Mut(b_opaque, "kiln-v2-opaque").desc(0, "block_size", 17).done(),
             "TYPE", "byte_length 18 is not a multiple of block_size 17",
             step="9")
    c.reject("kiln-x-closed-with-layout", "tensors",
             Mut(b_opaque, "kiln-v2-opaque").desc(0, "dtype", 9)
             .desc(0, "block_size", 0).desc(0, "shape[0]", 18).done(),
             "TYPE", "u8 [18] that keeps the layout name 'Q4_K'", step="9")
    c.reject("kiln-x-closed-block-size", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "block_size", 4).done(),
             "TYPE", "Closed dtype with block_size 4", step="9")
    c.reject("kiln-x-packed-length", "tensors",
             Mut(b_u4, "kiln-v2-u4").desc(0, "shape[0]", 5).done(),
             "TYPE", "u4 [5] needs ceil(5/2) = 3 bytes, byte_length is 2",
             step="9")
    c.reject("kiln-x-range-end-overflow", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "byte_offset", U64_MAX - 3)
             .done(), "LIMIT", "byte_offset 2^64-4 + byte_length 8 overflows",
             step="9")
    c.reject("kiln-x-range-past-payload", "tensors",
             Mut(b_f32, "kiln-v2-f32").desc(0, "byte_offset", 8).done(),
             "TYPE", "Range [8, 16) past payload_bytes 8", step="9")
    b_mixed = block(t_f32, T("f32", (1, 2), K.pack_f32([3.0, 4.0])))
    c.reject("kiln-x-order-range-before-next-shape", "tensors",
             Mut(b_mixed, "the encoder's block of f32 [2] then f32 [1, 2] "
                 "(payload_bytes 72)")
             .desc(0, "byte_offset", 68).desc(1, "shape[0]", 1 << 32)
             .desc(1, "shape[1]", 1 << 32).done(),
             "TYPE", "Descriptor 0 range past the payload (TYPE), descriptor "
             "1 shape overflow (LIMIT): step 9 finishes one descriptor "
             "before the next", step="9")
    b_mixed2 = block(T("f32", (1, 2), K.pack_f32([3.0, 4.0])), t_f32)
    c.reject("kiln-x-order-shape-before-next-dtype", "tensors",
             Mut(b_mixed2, "the encoder's block of f32 [1, 2] then f32 [2]")
             .desc(0, "shape[0]", 1 << 32).desc(0, "shape[1]", 1 << 32)
             .desc(1, "dtype", 0).done(),
             "LIMIT", "Descriptor 0 shape overflow (LIMIT) before descriptor "
             "1 dtype 0 (TYPE)", step="9")
    b_three = block(t_f32, t_f32, T("f32", (1, 2), K.pack_f32([3.0, 4.0])))
    c.reject("kiln-x-order-overlap-after-all", "tensors",
             Mut(b_three, "the encoder's block of f32 [2], f32 [2], f32 "
                 "[1, 2]")
             .desc(1, "byte_offset", 4).desc(2, "shape[0]", 1 << 32)
             .desc(2, "shape[1]", 1 << 32).done(),
             "LIMIT", "Tensors 0 and 1 overlap, tensor 2 shape overflows: "
             "the overlap check runs after every descriptor", step="9")
    c.reject("kiln-x-order-shape-before-offset", "tensors",
             Mut(b_mixed, "the encoder's block of f32 [2] then f32 [1, 2]")
             .desc(1, "byte_offset", 8).desc(1, "shape[0]", 1 << 32)
             .desc(1, "shape[1]", 1 << 32).done(),
             "LIMIT", "Non-canonical offset (step 10) and shape overflow "
             "(step 9) in one descriptor: step 9 wins", step="9")

    # ---- step 10 -------------------------------------------------------------
    c.reject("kiln-x-first-offset", "tensors",
             Mut(b_f32, "kiln-v2-f32").add(bytes(64))
             .hdr("payload_bytes", 72).desc(0, "byte_offset", 64).done(),
             "TYPE", "Single tensor at offset 64; the first offset must be 0",
             step="10")
    c.reject("kiln-x-payload-bytes-extra", "tensors",
             Mut(b_f32, "kiln-v2-f32").add(bytes(8))
             .hdr("payload_bytes", 16).done(),
             "TYPE", "payload_bytes 16 but the tensors end at 8", step="10")
    pb = payload_base(b_f8_pair)
    c.reject("kiln-x-gap-nonzero", "tensors",
             Mut(b_f8_pair, "kiln-v2-f8-pair").raw(pb + 1, b"\x01",
                                                   "first gap byte").done(),
             "TYPE", "Nonzero alignment gap byte", step="10")

    # ---- step 11 -------------------------------------------------------------
    b_i4 = block(T("i4", (3,), K.pack_nibbles([-1, 7, -8], signed=True)))
    c.reject("kiln-x-i4-high-nibble", "tensors",
             Mut(b_i4, "the encoder's block of i4 [-1, 7, -8] (7f 08)")
             .raw(193, b"\x88", "last payload byte").done(),
             "TYPE", "Odd i4 count, high nibble 8 in the last byte",
             step="11")
    b_e2 = block(T("e2m1", (3,), K.pack_nibbles([1, 2, 3])))
    c.reject("kiln-x-e2m1-high-nibble", "tensors",
             Mut(b_e2, "the encoder's block of e2m1 codes [1, 2, 3] (21 03)")
             .raw(193, b"\xf3", "last payload byte").done(),
             "TYPE", "Odd e2m1 count, high nibble f in the last byte",
             step="11")
    c.reject("kiln-x-order-bool-before-trailing", "tensors",
             Mut(b_bool, "kiln-v2-bool").raw(192, b"\x07", "bool element 0")
             .add(b"\x00").done(),
             "TYPE", "Bad bool byte and a trailing byte: step 11 wins over "
             "step 12", step="11")
    quant = [
        ("kiln-x-quant-scheme-3", 0, "quant_scheme", 3, "Scheme 3"),
        ("kiln-x-quant-s0-group", 1, "group_size", 1,
         "Scheme-0 scale tensor with group_size 1"),
        ("kiln-x-quant-s0-axis", 1, "quant_axis", 0,
         "Scheme-0 scale tensor with quant_axis 0"),
        ("kiln-x-quant-s0-scale", 1, "scale_index", 0,
         "Scheme-0 scale tensor with scale_index 0"),
        ("kiln-x-quant-s0-outer", 1, "outer_index", 0,
         "Scheme-0 scale tensor with outer_index 0"),
        ("kiln-x-quant-s1-outer", 0, "outer_index", 1,
         "Scheme 1 with an outer_index"),
        ("kiln-x-quant-axis-range", 0, "quant_axis", 1,
         "quant_axis 1 on a rank-1 tensor"),
        ("kiln-x-quant-group-zero", 0, "group_size", 0, "group_size 0"),
        ("kiln-x-quant-scale-oob", 0, "scale_index", 2,
         "scale_index 2 in a 2-tensor directory"),
        ("kiln-x-quant-scale-self", 0, "scale_index", 0,
         "Tensor is its own scale"),
    ]
    for name, i, field, value, why in quant:
        c.reject(name, "tensors",
                 Mut(b_scales, "kiln-v2-scales").desc(i, field, value).done(),
                 "TYPE", why, step="11")
    b_rank0 = block(T("u8", (1,), b"\x03", quant_scheme=1, quant_axis=0,
                      group_size=1, scale_index=1), t_scale)
    c.reject("kiln-x-quant-rank0", "tensors",
             Mut(b_rank0, "the encoder's block of u8 [1] (scheme 1, axis 0, "
                 "group 1, scale 1) and one e8m0 scale")
             .desc(0, "rank", 0).desc(0, "shape[0]", 0).done(),
             "TYPE", "Scheme 1 on a rank-0 tensor", step="11")
    b_chain = block(t_scaled, t_scale, T("e8m0", (1,), b"\x7e"))
    c.reject("kiln-x-quant-chain", "tensors",
             Mut(b_chain, "the encoder's block of kiln-v2-scales's two "
                 "tensors plus a third e8m0 [1]")
             .desc(1, "quant_scheme", 1).desc(1, "quant_axis", 0)
             .desc(1, "group_size", 1).desc(1, "scale_index", 2).done(),
             "TYPE", "Tensor 1 is a valid scheme-1 tensor scaled by tensor 2, "
             "and is itself the scale of tensor 0: a chain", step="11")
    outer_muts = [
        ("kiln-x-quant-outer-oob", 0, "outer_index", 3,
         "outer_index 3 in a 3-tensor directory"),
        ("kiln-x-quant-outer-self", 0, "outer_index", 0,
         "Tensor is its own outer scale"),
        ("kiln-x-quant-outer-is-scale", 0, "outer_index", 1,
         "outer_index equals scale_index"),
        ("kiln-x-quant-outer-not-f32", 2, "dtype", 12,
         "Outer tensor is i32 (same width, not f32)"),
    ]
    for name, i, field, value, why in outer_muts:
        c.reject(name, "tensors",
                 Mut(b_scales_outer, "kiln-v2-scales-outer")
                 .desc(i, field, value).done(), "TYPE", why, step="11")
    b_outer4 = block(t_outer_data, t_outer_scale, t_outer,
                     T("f32", (2,), K.pack_f32([1.0, 2.0])))
    c.reject("kiln-x-quant-outer-count", "tensors",
             Mut(b_outer4, "the encoder's block of kiln-v2-scales-outer's "
                 "three tensors plus f32 [2]")
             .desc(0, "outer_index", 3).done(),
             "TYPE", "Outer tensor f32 [2] has 2 elements", step="11")
    c.reject("kiln-x-quant-outer-scheme", "tensors",
             Mut(b_scales_outer, "kiln-v2-scales-outer")
             .desc(2, "quant_scheme", 1).desc(2, "quant_axis", 0)
             .desc(2, "group_size", 1).desc(2, "scale_index", 1).done(),
             "TYPE", "Outer tensor is itself a (valid) scheme-1 tensor",
             step="11")

    # ---- tensors inside other values ---------------------------------------
    c.accept("kiln-x-list-tensors", "list<tensors>",
             [Dir(), Dir([t_f32])],
             "list<tensors>: the empty block then the kiln-v2-f32 block.")
    c.reject("kiln-x-list-tensors-eof", "list<tensors>",
             Mut(K.encode("list<tensors>", [Dir()]), "the encoding of [empty "
                 "directory]").put(0, 4, 2, "list count").done(),
             "EOF", "Count 2 x minimum 64 needs 128 bytes; 64 remain")
    stt = "struct{batch:tensors,tail:u32,}"
    b_stt = c.accept("kiln-x-struct-tensors-tail", stt,
                     {"batch": Dir([t_f32]), "tail": 0xDEADBEEF},
                     "A field after the block: the block does not claim "
                     "the bytes that follow it.")
    c.reject("kiln-x-struct-tensors-tail-eof", stt,
             Mut(b_stt, "kiln-x-struct-tensors-tail").cut(len(b_stt) - 1)
             .done(), "EOF", "The u32 after the block is cut")
    b_in = K.encode(sid, {"id": 7, "batch": Dir([t_f32])})
    c.reject("kiln-x-struct-tensors-fault", sid,
             Mut(b_in, "kiln-v2-in-struct", at=8).desc(0, "dtype", 0).done(),
             "TYPE", "Dtype 0 in the directory of a struct field", step="9")
    c.reject("kiln-x-struct-tensors-cut", sid,
             Mut(b_in, "kiln-v2-in-struct").cut(len(b_in) - 1).done(),
             "EOF", "Block of a struct field missing its last byte", step="6")
    c.reject("kiln-x-struct-trailing", sid,
             Mut(b_in, "kiln-v2-in-struct").add(b"\x00").done(),
             "TRAILING", "A byte after the whole struct value")
    c.accept("kiln-x-opt-tensors", "opt<tensors>", Some(Dir([t_f32])),
             "opt<tensors> present: tag 01 then the block.")
    c.accept("kiln-x-dict-tensors", "dict<str,tensors>",
             {"b": Dir([t_f32]), "a": Dir()},
             "dict<str,tensors> with keys 'a' (empty block) and 'b'.")

    # ---- scalars -------------------------------------------------------------
    c.accept("kiln-x-bool-true", "bool", True, "bool true = 01.")
    c.accept("kiln-x-bool-false", "bool", False, "bool false = 00.")
    b_true = K.encode("bool", True)
    c.reject("kiln-x-bool-2", "bool",
             Mut(b_true, "kiln-x-bool-true").raw(0, b"\x02", "bool byte")
             .done(), "TYPE", "Frozen bool byte 2")
    ints = [("i8", -128), ("u8", 255), ("i16", -32768), ("u16", 65535),
            ("i32", -2**31), ("u32", 2**32 - 1), ("i64", -2**63),
            ("u64", 2**64 - 1), ("int", -1), ("uint", 2**64 - 1)]
    for kind, value in ints:
        c.accept(f"kiln-x-scalar-{kind}", kind, value,
                 f"{kind} {value}, little-endian.")
    c.accept("kiln-x-f32-one", "f32", f32(1.0), "f32 1.0 = 0000803f.")
    c.accept("kiln-x-f32-negzero", "f32", f32(-0.0), "f32 -0.0 = 00000080.")
    c.accept("kiln-x-f32-nan-payload", "f32", K.Float32(0x7FC00001),
             "f32 NaN bits 0x7fc00001 kept exactly.")
    c.accept("kiln-x-f64-negzero", "f64", f64(-0.0), "f64 -0.0.")
    c.accept("kiln-x-f64-nan", "f64", K.Float64(0x7FF8000000000001),
             "f64 NaN bits 0x7ff8000000000001 kept exactly.")
    c.accept("kiln-x-f64-snan", "f64", K.Float64(0x7FF0000000000001),
             "f64 signalling NaN bits 0x7ff0000000000001 kept exactly.")
    b_i64 = K.encode("i64", -2)
    c.reject("kiln-x-i64-short", "i64",
             Mut(b_i64, "the encoding of i64 -2").cut(7).done(),
             "EOF", "7 bytes for an i64")
    c.reject("kiln-x-u8-trailing", "u8",
             Mut(K.encode("u8", 1), "the encoding of u8 1").add(b"\x00")
             .done(), "TRAILING", "A byte after a standalone u8")

    # ---- strings and byte runs ---------------------------------------------
    c.accept("kiln-x-str-utf8", "str", "h\u00e9llo \u2713 \U0001d11e",
             "str with 2-, 3- and 4-byte UTF-8 sequences.")
    c.accept("kiln-x-str-empty", "str", "", "Empty str = 00000000.")
    b_abc = K.encode("str", "abc")
    for name, raw, why in (
            ("kiln-x-str-bad-utf8", b"a\xffc", "Byte ff is never UTF-8"),
            ("kiln-x-str-overlong", b"\xc0\xaf\x00", "Overlong c0 af"),
            ("kiln-x-str-surrogate", b"\xed\xa0\x80",
             "ed a0 80 encodes a surrogate"),
            ("kiln-x-str-cut-sequence", b"a\xe2\x82",
             "3-byte sequence cut by the end of the string")):
        c.reject(name, "str",
                 Mut(b_abc, "the encoding of 'abc'").raw(4, raw, "str body")
                 .done(), "UTF8", why)
    c.reject("kiln-x-str-eof", "str",
             Mut(b_abc, "the encoding of 'abc'").put(0, 4, 4, "str length")
             .done(), "EOF", "Length 4, 3 bytes follow")
    c.reject("kiln-x-cap-str", "str",
             Mut(K.encode("str", "abcde"), "the encoding of 'abcde' "
                 "(default cap), read with cap 4").done(),
             "LIMIT", "5-byte str above byte cap 4", cap=4)
    c.accept("kiln-x-cap-str-at-cap", "str", "abcd",
             "4-byte str under byte cap 4.", cap=4)
    c.accept("kiln-x-bytes", "list<u8>", bytes([0, 1, 255]),
             "list<u8> is a byte run: length 3 then the bytes.")
    c.reject("kiln-x-cap-bytes", "list<u8>",
             Mut(K.encode("list<u8>", b"\x01\x02\x03\x04\x05"), "the "
                 "encoding of 5 bytes (default cap), read with cap 4").done(),
             "LIMIT", "5-byte list<u8> above byte cap 4", cap=4)
    c.reject("kiln-x-bytes-eof", "list<u8>",
             Mut(K.encode("list<u8>", b"\x01\x02"), "the encoding of 0102")
             .put(0, 4, 10, "length").done(), "EOF", "Length 10, 2 follow")

    # ---- lists ---------------------------------------------------------------
    c.accept("kiln-x-list-i32", "list<i32>", [1, -1, 2**31 - 1],
             "list<i32> of 3.")
    c.accept("kiln-x-list-empty", "list<str>", [], "Empty list = 00000000.")
    c.accept("kiln-x-list-nested", "list<list<u16>>", [[1, 2], [], [3]],
             "Nested lists.")
    c.reject("kiln-x-cap-list", "list<i32>",
             Mut(K.encode("list<i32>", [1, 2, 3, 4, 5]), "the encoding of "
                 "five i32 (default cap), read with cap 4").done(),
             "LIMIT", "5 elements above count cap 4", cap=4)
    c.reject("kiln-x-list-count-word-eof", "list<i32>",
             Mut(K.encode("list<i32>", []), "the encoding of []").cut(2)
             .done(), "EOF", "Count word cut to 2 bytes")
    c.accept("kiln-x-list-empty-struct", "list<struct{}>", [{}] * 1000,
             "1000 struct{} elements: minimum size 0, so the byte check "
             "passes; the count cap bounds it. Bytes e8030000.")
    c.accept("kiln-x-cap-list-empty-struct-at-cap", "list<struct{}>",
             [{}] * 1000, "1000 struct{} under count cap 1000.", cap=1000)
    c.reject("kiln-x-list-empty-struct-over-cap", "list<struct{}>",
             Mut(K.encode("list<struct{}>", [{}] * 1000), "kiln-x-list-"
                 "empty-struct").put(0, 4, 16777217, "list count").done(),
             "LIMIT", "Count 16777217 of struct{} at the default cap: with "
             "minimum size 0 the cap is the only bound")
    c.reject("kiln-x-cap-list-empty-struct", "list<struct{}>",
             Mut(K.encode("list<struct{}>", [{}] * 1000), "the encoding of "
                 "1000 struct{} (read with cap 1000)")
             .put(0, 4, 1001, "list count").done(),
             "LIMIT", "Count 1001 of struct{} above count cap 1000", cap=1000)

    # ---- dicts ---------------------------------------------------------------
    du = "dict<str,u32>"
    c.accept("kiln-x-dict-sorted", du, {"\u00e9": 3, "a": 2, "Z": 1},
             "Keys written in UTF-8 byte order: 'Z' (5a), 'a' (61), "
             "'\u00e9' (c3 a9).")
    c.accept("kiln-x-dict-empty", du, {}, "Empty dict = 00000000.")
    c.accept("kiln-x-dict-prefix-keys", du, {"ab": 2, "a": 1},
             "'a' sorts before 'ab'.")
    b_ab = K.encode(du, {"a": 1, "b": 2})
    c.reject("kiln-x-dict-unsorted", du,
             Mut(b_ab, "the encoding of {a: 1, b: 2}")
             .raw(8, b"b", "first key").raw(17, b"a", "second key").done(),
             "TYPE", "Keys 'b' then 'a'")
    c.reject("kiln-x-dict-repeated", du,
             Mut(b_ab, "the encoding of {a: 1, b: 2}")
             .raw(17, b"a", "second key").done(), "TYPE", "Key 'a' twice")
    c.reject("kiln-x-dict-key-bad-utf8", du,
             Mut(b_ab, "the encoding of {a: 1, b: 2}")
             .raw(17, b"\xff", "second key").done(), "UTF8",
             "Second key is byte ff; the key's own UTF-8 check comes first")
    c.reject("kiln-x-order-dict-key-before-value", du,
             Mut(b_ab, "the encoding of {a: 1, b: 2}")
             .raw(8, b"b", "first key").raw(17, b"a", "second key")
             .cut(len(b_ab) - 2).done(),
             "TYPE", "Out-of-order second key and a cut second value: the "
             "key order is checked before the value is read")
    c.reject("kiln-x-cap-dict", du,
             Mut(K.encode(du, {k: 0 for k in "abcde"}), "the encoding of "
                 "five pairs (default cap), read with cap 4").done(),
             "LIMIT", "5 pairs above count cap 4", cap=4)
    c.reject("kiln-x-cap-dict-key", du,
             Mut(K.encode(du, {"abcde": 0}), "the encoding of {abcde: 0} "
                 "(default cap), read with cap 4").done(),
             "LIMIT", "Key of 5 bytes above byte cap 4", cap=4)
    c.reject("kiln-x-dict-pair-eof", "dict<str,i64>",
             Mut(K.encode("dict<str,i64>", {"a": 1}), "the encoding of "
                 "{a: 1}").put(0, 4, 2, "dict count").done(),
             "EOF", "Count 2 x pair minimum 12 needs 24 bytes; 13 remain")

    # ---- opt and struct ------------------------------------------------------
    c.accept("kiln-x-opt-absent", "opt<u32>", None, "Tag 00.")
    b_some = c.accept("kiln-x-opt-present", "opt<u32>", Some(5),
                      "Tag 01 then u32 5.")
    c.reject("kiln-x-opt-tag-2", "opt<u32>",
             Mut(b_some, "kiln-x-opt-present").raw(0, b"\x02", "tag").done(),
             "TYPE", "opt tag 2")
    c.accept("kiln-x-opt-some-none", "opt<opt<u8>>", Some(None),
             "opt<opt<u8>> Some(None) = 01 00.")
    c.accept("kiln-x-struct-empty", "struct{}", {},
             "struct{} is zero bytes.")
    c.reject("kiln-x-struct-empty-trailing", "struct{}",
             Mut(b"", "the encoding of struct{} (no bytes)").add(b"\x00")
             .done(), "TRAILING", "One byte after a zero-byte value")
    nested = "struct{a:struct{b:u8,c:opt<str>,},d:list<bool>,e:f64,}"
    c.accept("kiln-x-struct-nested", nested,
             {"a": {"b": 9, "c": Some("hi")}, "d": [True, False],
              "e": f64(2.5)}, "Nested struct, opt, list, f64.")

    # ---- depth ---------------------------------------------------------------
    def opts(n: int, inner: str) -> str:
        return "opt<" * n + inner + ">" * n

    def somes(n: int, inner):
        for _ in range(n):
            inner = Some(inner)
        return inner

    c.accept("kiln-x-depth-64-opt", opts(64, "u8"), somes(64, 5),
             "64 nested opts, every tag 1, then u8 5: the u8 sits inside "
             "exactly 64 containers.")
    c.accept("kiln-x-depth-65-opt-absent", opts(65, "u8"), None,
             "65 nested opt types, outer tag 0: only one container is "
             "entered.")
    b_63 = c.accept("kiln-x-depth-65-opt-63", opts(65, "u8"),
                    somes(63, None), "65 nested opt types, 63 tags 1 then "
                    "tag 0 at level 64.")
    c.reject("kiln-x-depth-65-opt-cut", opts(65, "u8"),
             Mut(b_63, "kiln-x-depth-65-opt-63").raw(63, b"\x01", "tag of "
                                                     "the 64th opt").done(),
             "DEPTH", "64 tags 1 and the buffer ends: entering the 65th opt "
             "is DEPTH before its tag is read")
    c.reject("kiln-x-depth-65-opt", opts(65, "u8"),
             Mut(b_63, "kiln-x-depth-65-opt-63").raw(63, b"\x01", "tag of "
                                                     "the 64th opt")
             .add(b"\x01\x2a").done(),
             "DEPTH", "65 nested opts with every tag 1, then u8 42")
    b_63s = K.encode(opts(64, "struct{}"), somes(63, None))
    c.reject("kiln-x-depth-65-struct-empty", opts(64, "struct{}"),
             Mut(b_63s, "the encoding of 63 Somes around None for "
                 "opt^64<struct{}>").raw(63, b"\x01", "tag of the 64th opt")
             .done(), "DEPTH", "A struct{} at level 65 is DEPTH although it "
             "has no bytes")
    lists = "list<" * 65 + "u32" + ">" * 65
    c.accept("kiln-x-depth-65-list-empty", lists, [],
             "65 nested list types, outer list empty: its elements are "
             "never entered.")
    deep = []
    for _ in range(63):
        deep = [deep]
    b_deep = K.encode(lists, deep)
    c.reject("kiln-x-depth-65-list", lists,
             Mut(b_deep, "the encoding of 64 nested lists whose innermost "
                 "is empty").put(252, 4, 1, "count of the 64th list")
             .add(b"\x00\x00\x00\x00").done(),
             "DEPTH", "The 64th list holds one list<u32>, the 65th container")
    c.reject("kiln-x-order-count-before-depth", lists,
             Mut(b_deep, "the encoding of 64 nested lists whose innermost "
                 "is empty").put(252, 4, 1, "count of the 64th list").done(),
             "EOF", "The 64th list claims one element but no bytes remain: "
             "its count check fails before the 65th container is entered")
    deep_bytes = b"\x07"
    for _ in range(63):
        deep_bytes = [deep_bytes]
    c.accept("kiln-x-depth-64-bytes", "list<" * 64 + "u8" + ">" * 64,
             deep_bytes, "63 nested lists around a list<u8> holding byte 07: "
             "the byte run is the 64th container (choices.md item 13).")
    b_deep65 = K.encode("list<" * 65 + "u8" + ">" * 65, deep)
    c.reject("kiln-x-depth-65-bytes", "list<" * 65 + "u8" + ">" * 65,
             Mut(b_deep65, "the encoding of 64 nested lists whose innermost "
                 "is empty").put(252, 4, 1, "count of the 64th list")
             .add(b"\x00\x00\x00\x00").done(),
             "DEPTH", "The 64th list holds one list<u8>: a byte run is still "
             "a list for the depth rule (choices.md item 13)")

    # ---- frames --------------------------------------------------------------
    c.accept("kiln-x-framed-u32", "u32", 42, "Framed u32 42.", framed=True)
    c.accept("kiln-x-framed-str", "str", "kiln", "Framed str.", framed=True)
    c.accept("kiln-x-framed-list-f64", "list<f64>", [f64(1.0), f64(-0.0)],
             "Framed list<f64>.", framed=True)
    c.accept("kiln-x-framed-tensors", "tensors", Dir([t_f32]),
             "Framed bare directory (kiln-v2-f32).", framed=True)
    c.accept("kiln-x-framed-in-struct", sid,
             {"id": -1, "batch": Dir([t_f32])},
             "Framed struct{id:i64,batch:tensors,} with the kiln-v2-f32 "
             "block.", framed=True)
    c.accept("kiln-x-framed-struct-empty", "struct{}", {},
             "Framed struct{}: the 16-byte header and nothing else.",
             framed=True)
    fu = K.encode_frame("u32", 42)
    fr = "kiln-x-framed-u32"
    c.reject("kiln-x-frame-empty", "u32", Mut(fu, fr).cut(0).done(),
             "EOF", "Empty buffer", framed=True)
    c.reject("kiln-x-frame-3-bytes", "u32", Mut(fu, fr).cut(3).done(),
             "EOF", "3 bytes cannot hold the frame magic", framed=True)
    c.reject("kiln-x-frame-15-bytes", "u32", Mut(fu, fr).cut(15).done(),
             "EOF", "Good magic, header cut at 15 bytes", framed=True)
    c.reject("kiln-x-frame-bad-magic", "u32",
             Mut(fu, fr).raw(3, b"T", "magic byte 3").done(),
             "FRAME", "Magic KLNT (a directory magic) where KLN0 belongs",
             framed=True)
    c.reject("kiln-x-frame-bad-magic-short", "u32",
             Mut(fu, fr).cut(8).raw(0, b"k", "magic byte 0").done(),
             "FRAME", "Bad magic in an 8-byte buffer: magic is checked "
             "before the 16-byte length", framed=True)
    for name, pos, value, why in (
            ("kiln-x-frame-profile-1", 4, 1, "Profile 1 (Evolve)"),
            ("kiln-x-frame-profile-3", 4, 3, "Profile 3: a directory is a "
             "Frozen value, not a frame profile"),
            ("kiln-x-frame-flags", 5, 1, "Frame flags 1"),
            ("kiln-x-frame-reserved", 7, 1, "Frame reserved byte 7")):
        c.reject(name, "u32",
                 Mut(fu, fr).put(pos, 1, value, "frame byte").done(),
                 "FRAME", why, framed=True)
    c.reject("kiln-x-frame-hash", "u32",
             Mut(fu, fr).put(8, 1, fu[8] ^ 1, "hash byte 0").done(),
             "SCHEMA", "Hash changed in one bit", framed=True)
    c.reject("kiln-x-frame-wrong-type", "i32",
             Mut(fu, fr + " read as i32 instead of u32").done(),
             "SCHEMA", "Same bytes, different destination type", framed=True)
    c.reject("kiln-x-frame-profile-before-hash", "u32",
             Mut(fu, fr).put(4, 1, 1, "profile").put(8, 1, fu[8] ^ 1,
                                                     "hash byte 0").done(),
             "FRAME", "Profile 1 and a wrong hash: the header bytes are "
             "checked before the hash", framed=True)
    fs = K.encode_frame(sid, {"id": 7, "batch": Dir()})
    c.reject("kiln-x-frame-schema-before-value", sid,
             Mut(fs, "kiln-v2-framed").put(8, 1, fs[8] ^ 0x80, "hash byte 0")
             .cut(20).done(),
             "SCHEMA", "Wrong hash and a cut value: the hash is compared "
             "before the first field", framed=True)
    c.reject("kiln-x-frame-trailing", "u32",
             Mut(fu, fr).add(b"\x00").done(),
             "TRAILING", "A byte after the framed value", framed=True)
    c.reject("kiln-x-frame-value-eof", "u32",
             Mut(fu, fr).cut(19).done(), "EOF",
             "Framed u32 missing its last byte", framed=True)
    c.reject("kiln-x-frame-tensors-trailing", "tensors",
             Mut(K.encode_frame("tensors", Dir([t_f32])),
                 "kiln-x-framed-tensors").add(b"\x00").done(),
             "TRAILING", "A byte after a framed directory", framed=True)
    return c


# ---------------------------------------------------------------------------
# Verification and output
# ---------------------------------------------------------------------------

def verdict(case: dict) -> tuple[str, str | None, str]:
    """Run one case through kiln_ref: (code or 'accept', step, message)."""
    limits = K.Limits.both(case["cap"]) if "cap" in case else K.Limits()
    data = bytes.fromhex(case["hex"])
    try:
        K.check(case["type"], data, case["framed"], limits)
    except K.KilnError as exc:
        return exc.code, exc.step, str(exc)
    return "accept", None, ""


def reencode(case: dict) -> bytes:
    limits = K.Limits.both(case["cap"]) if "cap" in case else K.Limits()
    data = bytes.fromhex(case["hex"])
    tree = K.parse_type(case["type"])
    if case["framed"]:
        return K.encode_frame(tree, K.decode_frame(tree, data, limits), limits)
    return K.encode(tree, K.decode(tree, data, limits), limits)


def validate(cases: Cases) -> list[str]:
    problems = []
    names = [case["name"] for case in cases.items]
    seen = set()
    for name in names:
        if name in seen:
            problems.append(f"duplicate case name {name}")
        seen.add(name)
    by_name = {case["name"]: case for case in cases.items}
    for name, expect in GOLDEN:
        if name not in by_name:
            problems.append(f"named case {name} is missing")
        elif by_name[name]["expect"] != expect:
            problems.append(f"{name} records {by_name[name]['expect']}, the "
                            f"wire text says {expect}")
    for name in names:
        if name not in GOLDEN_NAMES and not name.startswith("kiln-x-"):
            problems.append(f"own case {name} lacks the kiln-x- prefix")
    if by_name.get("kiln-v2-empty", {}).get("hex") != EMPTY_HEX:
        problems.append("kiln-v2-empty is not the 64-byte block of the text")
    for case in cases.items:
        code, step, message = verdict(case)
        if code != case["expect"]:
            problems.append(f"{case['name']}: expected {case['expect']}, "
                            f"kiln_ref says {code} {message}")
            continue
        want_step = cases.steps.get(case["name"])
        if want_step is not None and step != want_step:
            problems.append(f"{case['name']}: fails at step {step}, "
                            f"recorded step {want_step}: {message}")
        if code == "accept" and reencode(case) != bytes.fromhex(case["hex"]):
            problems.append(f"{case['name']}: accepted bytes are not "
                            "canonical")
    return problems


def render(cases: Cases) -> str:
    golden_rank = {name: i for i, name in enumerate(GOLDEN_NAMES)}
    ordered = sorted(enumerate(cases.items),
                     key=lambda p: (golden_rank.get(p[1]["name"],
                                                    len(GOLDEN)), p[0]))
    return json.dumps([case for _, case in ordered], indent=1) + "\n"


def main(argv: list[str]) -> int:
    check_only = "--check" in argv[1:]
    unknown = [a for a in argv[1:] if a != "--check"]
    if unknown:
        print(f"usage: {argv[0]} [--check]", file=sys.stderr)
        return 2
    cases = build_cases()
    problems = validate(cases)
    if problems:
        for problem in problems:
            print(f"gen_v2_cases: {problem}", file=sys.stderr)
        print(f"gen_v2_cases: {len(problems)} problem(s); "
              f"{OUT} not written", file=sys.stderr)
        return 1
    text = render(cases)
    if check_only:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else None
        if current != text:
            print(f"gen_v2_cases: {OUT} differs from a fresh generation",
                  file=sys.stderr)
            return 1
        print(f"gen_v2_cases: {OUT} is up to date ({len(cases.items)} cases)")
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"gen_v2_cases: wrote {len(cases.items)} cases to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
