"""Kiln v2 reference codec, plain Python 3.11, standard library only.

This module is written to be read next to the format texts, not to be fast.
The normative texts are ../shared/spec/kiln-wire-format-v2.txt, the shared
DECISIONS.md and spec/choices.md; this file follows them and never adds a
rule of its own.

Python value model
------------------
Every Kiln type maps to one Python shape.  ``decode`` returns exactly these
shapes and ``encode`` accepts exactly these shapes (nothing is coerced).

    bool                         -> bool
    i8 u8 i16 u16 i32 u32 i64 u64 int uint
                                 -> int (a bool is refused for these)
    f32                          -> Float32(bits)   bits is the raw u32
    f64                          -> Float64(bits)   bits is the raw u64
    str                          -> str
    list<u8>                     -> bytes (the byte-run type)
    list<T>                      -> list (a tuple is also accepted by encode);
                                    Repeat when T takes zero bytes (below)
    opt<T>                       -> None when absent, Some(value) when present
    dict<str,V>                  -> dict; encode writes keys sorted by their
                                    UTF-8 bytes, decode returns them in wire
                                    order
    struct{a:T,b:U,}             -> dict mapping every field name to its value
                                    (exactly the declared names; decode keeps
                                    declaration order)
    tensors                      -> Directory(tensors=(Tensor, ...))

Float32/Float64 compare by bits, so NaN payloads and the sign of zero take
part in equality.  ``Float32.from_float(x)`` and ``Float64.from_float(x)``
build them from a Python float; ``.to_float()`` goes back.

``Some`` exists so that ``opt<opt<T>>`` has three distinct values: None,
Some(None) and Some(Some(x)).

Lists of a zero-size type
-------------------------
A type takes zero bytes when it is ``struct{}`` or a struct whose fields all
take zero bytes (``min_size`` is 0).  Four bytes can then claim 16,777,216
elements, all of them the same value.  ``decode`` reads the first element
only (so its depth still counts: a ``struct{}`` at container level 65 is
DEPTH) and returns ``Repeat(count, element)``: a read-only sequence of
``count`` references to that one element, in constant time and memory.  A
``Repeat`` compares equal to a list or tuple of equal elements, iterates,
indexes and slices like one; mutating its element changes every position.
An empty list of such a type decodes to ``[]``.  ``encode`` accepts a
``Repeat`` for any list and, when the element type takes zero bytes, checks
the element once instead of once per position.  Verdicts are those of the
element-by-element reading: every element of a zero-size type is decoded
from the same (empty) bytes at the same depth, so they all succeed or the
first one fails.

A ``Tensor`` keeps every descriptor field as the wire holds it (dtype code,
shape tuple whose length is the rank, name and layout as str or None,
block_size, the five quantization fields) plus its payload bytes.  Payloads
are never converted to numbers; the ``pack_*`` helpers build payload bytes
from Python numbers for tests and for the case generator.

Type trees
----------
``parse_type`` turns canonical type text into nested tuples:

    ("bool",) ... ("f64",), ("str",), ("tensors",)
    ("list", T), ("opt", T), ("dict", V), ("struct", (("a", T), ("b", U)))

Every public function that takes a type accepts either a tree or type text.
This parser refuses type text nested more than 256 levels (UsageError); that
keeps Python's recursion in bounds and is not a rule of the format, whose
depth limit applies to values, not to types.

Errors
------
``KilnError`` is a wire fault: ``.code`` is one of the eight codes,
``.offset`` the byte offset in the whole buffer where the fault was seen,
``.step`` the directory check step ("1" .. "12", "8a" .. "8d"), "frame" for
the frame header, or None for a plain Frozen value.  ``UsageError`` is a
mistake of the caller: bad type text, or a value the encoder cannot write
canonically.  It is never one of the eight codes.

Payload lengths are never compared with a cap here (choices.md item 14):
the verdicts are those of a reader that lends payloads out of the caller's
buffer, even though a Python slice is technically a copy.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Iterator

__all__ = [
    "ERROR_CODES", "KilnError", "UsageError", "Limits", "DEFAULT_CAP",
    "WIRE_MAX", "Float32", "Float64", "Some", "Repeat", "Tensor", "Directory",
    "DTYPES", "DTYPE_CODES", "parse_type", "type_text", "schema_hash",
    "min_size", "encode", "decode", "decode_at", "encode_directory",
    "decode_directory", "encode_frame", "decode_frame", "check",
    "pack_f64", "pack_f32", "pack_f16", "pack_bf16", "pack_ints",
    "pack_nibbles", "pack_bools", "pack_payload",
]

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

ERROR_CODES = ("FRAME", "LIMIT", "EOF", "TYPE", "UTF8", "TRAILING",
               "SCHEMA", "DEPTH")

U16_MAX = 0xFFFF
U32_MAX = 0xFFFFFFFF
U64_MAX = 0xFFFFFFFFFFFFFFFF
WIRE_MAX = U32_MAX            # largest u32 length or count the wire can say
DEFAULT_CAP = 16_777_216
MAX_DEPTH = 64                # containers a value may sit inside
MAX_TYPE_NESTING = 256        # parser limit of this module, not a wire rule

NO_SLOT = 0xFFFF              # name_off / layout_off of an absent name
NO_AXIS = 0xFFFF              # quant_axis when there is no quantization
NO_INDEX = 0xFFFFFFFF         # scale_index / outer_index when unused

FNV_OFFSET = 14695981039346656037
FNV_PRIME = 1099511628211

FRAME_MAGIC = b"KLN0"
FRAME_SIZE = 16
DIR_MAGIC = b"KLNT"
DIR_VERSION = 2
HEADER_SIZE = 64
DESCRIPTOR_SIZE = 128
ALIGN = 64
FLAG_NAMES = 0x01
FLAG_LITTLE_ENDIAN = 0x02
KNOWN_FLAGS = FLAG_NAMES | FLAG_LITTLE_ENDIAN

# dtype code -> (name, bytes per element); None marks a packed nibble dtype.
DTYPES: dict[int, tuple[str, int | None]] = {
    1: ("f64", 8), 2: ("f32", 4), 3: ("f16", 2), 4: ("bf16", 2),
    5: ("f8e4m3", 1), 6: ("f8e5m2", 1), 7: ("bool", 1), 8: ("i8", 1),
    9: ("u8", 1), 10: ("i16", 2), 11: ("u16", 2), 12: ("i32", 4),
    13: ("u32", 4), 14: ("i64", 8), 15: ("u64", 8), 16: ("i4", None),
    17: ("u4", None), 18: ("e2m1", None), 19: ("e8m0", 1),
}
DTYPE_CODES: dict[str, int] = {name: code for code, (name, _) in DTYPES.items()}
DTYPE_BOOL = 7
DTYPE_F32 = 2
OPAQUE_FIRST = 4096
OPAQUE_LAST = 32767


def is_opaque(code: int) -> bool:
    return OPAQUE_FIRST <= code <= OPAQUE_LAST


def _align(n: int) -> int:
    """Smallest multiple of 64 that is >= n."""
    return (n + ALIGN - 1) // ALIGN * ALIGN


# ---------------------------------------------------------------------------
# Errors and limits
# ---------------------------------------------------------------------------

class KilnError(Exception):
    """A wire fault, carrying one of the eight codes."""

    def __init__(self, code: str, offset: int, message: str,
                 step: str | None = None):
        if code not in ERROR_CODES:
            raise ValueError(f"not a Kiln error code: {code!r}")
        where = f" (directory step {step})" if step and step != "frame" else ""
        super().__init__(f"{code} at byte {offset}{where}: {message}")
        self.code = code
        self.offset = offset
        self.message = message
        self.step = step


class UsageError(Exception):
    """A caller mistake: malformed type text or a value that has no
    canonical encoding.  Never a wire fault."""


@dataclass(frozen=True)
class Limits:
    """Configurable caps.  count_cap bounds list and dict counts and
    tensor_count; byte_cap bounds str and list<u8> lengths and name_bytes."""

    count_cap: int = DEFAULT_CAP
    byte_cap: int = DEFAULT_CAP

    def __post_init__(self) -> None:
        for label, cap in (("count_cap", self.count_cap),
                           ("byte_cap", self.byte_cap)):
            if type(cap) is not int or not 0 <= cap <= WIRE_MAX:
                raise UsageError(f"{label} must be an int in 0..{WIRE_MAX}")

    @classmethod
    def both(cls, cap: int) -> "Limits":
        return cls(count_cap=cap, byte_cap=cap)


def _limits(limits: Limits | None) -> Limits:
    if limits is None:
        return Limits()
    if not isinstance(limits, Limits):
        raise UsageError("limits must be a Limits instance")
    return limits


# ---------------------------------------------------------------------------
# Value wrappers
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Float32:
    """An f32 kept as its exact 32 bits."""

    bits: int

    def __post_init__(self) -> None:
        if type(self.bits) is not int or not 0 <= self.bits <= U32_MAX:
            raise UsageError("Float32 bits must be an int in 0..2^32-1")

    @classmethod
    def from_float(cls, x: float) -> "Float32":
        try:
            return cls(int.from_bytes(struct.pack("<f", x), "little"))
        except (OverflowError, struct.error) as exc:
            raise UsageError(f"{x!r} does not fit in f32") from exc

    def to_float(self) -> float:
        return struct.unpack("<f", self.bits.to_bytes(4, "little"))[0]

    def __repr__(self) -> str:
        return f"Float32(0x{self.bits:08x} = {self.to_float()!r})"


@dataclass(frozen=True)
class Float64:
    """An f64 kept as its exact 64 bits."""

    bits: int

    def __post_init__(self) -> None:
        if type(self.bits) is not int or not 0 <= self.bits <= U64_MAX:
            raise UsageError("Float64 bits must be an int in 0..2^64-1")

    @classmethod
    def from_float(cls, x: float) -> "Float64":
        return cls(int.from_bytes(struct.pack("<d", x), "little"))

    def to_float(self) -> float:
        return struct.unpack("<d", self.bits.to_bytes(8, "little"))[0]

    def __repr__(self) -> str:
        return f"Float64(0x{self.bits:016x} = {self.to_float()!r})"


@dataclass(frozen=True)
class Some:
    """A present opt<T> value."""

    value: Any


class Repeat(Sequence):
    """``count`` positions that all hold the one value ``element``: what a
    list of a zero-size type decodes to (see "Lists of a zero-size type"
    above).  Constant size whatever the count."""

    __slots__ = ("count", "element")

    def __init__(self, count: int, element: Any):
        if type(count) is not int or count < 0:
            raise UsageError(f"Repeat count must be an int >= 0, got {count!r}")
        self.count = count
        self.element = element

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Repeat(len(range(*index.indices(self.count))), self.element)
        if not -self.count <= index < self.count:
            raise IndexError("Repeat index out of range")
        return self.element

    def __iter__(self):
        for _ in range(self.count):
            yield self.element

    def __eq__(self, other) -> bool:
        if isinstance(other, Repeat):
            return self.count == other.count and (
                self.count == 0 or self.element == other.element)
        if isinstance(other, (list, tuple)):
            return len(other) == self.count and all(
                item == self.element for item in other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Repeat({self.count}, {self.element!r})"


@dataclass(frozen=True)
class Tensor:
    """One tensor of a directory, with every descriptor field kept."""

    dtype: int
    shape: tuple
    payload: bytes
    name: str | None = None
    layout: str | None = None
    block_size: int = 0
    quant_scheme: int = 0
    quant_axis: int = NO_AXIS
    group_size: int = 0
    scale_index: int = NO_INDEX
    outer_index: int = NO_INDEX

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(self.shape))
        if isinstance(self.payload, (bytearray, memoryview)):
            object.__setattr__(self, "payload", bytes(self.payload))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def element_count(self) -> int:
        count = 1
        for dim in self.shape:
            count *= dim
        return count


@dataclass(frozen=True)
class Directory:
    """A tensors value: an ordered sequence of Tensor objects."""

    tensors: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tensors", tuple(self.tensors))


# ---------------------------------------------------------------------------
# Payload helpers (tests and the case generator build payloads with these)
# ---------------------------------------------------------------------------

def pack_f64(values) -> bytes:
    return b"".join(struct.pack("<d", v) for v in values)


def pack_f32(values) -> bytes:
    return b"".join(struct.pack("<f", v) for v in values)


def pack_f16(values) -> bytes:
    return b"".join(struct.pack("<e", v) for v in values)


def pack_bf16(values) -> bytes:
    """bfloat16: the high half of the f32 bits, rounded to nearest even."""
    out = bytearray()
    for v in values:
        bits = int.from_bytes(struct.pack("<f", v), "little")
        if v != v:                                  # NaN: keep it quiet
            half = (bits >> 16) | 0x0040
        else:
            half = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        out += (half & 0xFFFF).to_bytes(2, "little")
    return bytes(out)


def pack_ints(values, width: int, signed: bool) -> bytes:
    return b"".join(v.to_bytes(width, "little", signed=signed) for v in values)


def pack_nibbles(values, signed: bool = False) -> bytes:
    """Two elements per byte, the earlier one in the low nibble."""
    nibbles = [(v & 0xF) if signed else v for v in values]
    if any(not 0 <= n <= 0xF for n in nibbles):
        raise UsageError("nibble out of range")
    out = bytearray()
    for i in range(0, len(nibbles), 2):
        low = nibbles[i]
        high = nibbles[i + 1] if i + 1 < len(nibbles) else 0
        out.append(low | (high << 4))
    return bytes(out)


def pack_bools(values) -> bytes:
    return bytes(1 if v else 0 for v in values)


def pack_payload(dtype: str, values) -> bytes:
    """Payload bytes for a closed dtype given Python numbers.  The f8, e8m0
    and e2m1 dtypes take their raw bit codes."""
    if dtype == "f64":
        return pack_f64(values)
    if dtype == "f32":
        return pack_f32(values)
    if dtype == "f16":
        return pack_f16(values)
    if dtype == "bf16":
        return pack_bf16(values)
    if dtype == "bool":
        return pack_bools(values)
    if dtype in ("f8e4m3", "f8e5m2", "e8m0", "u8"):
        return bytes(values)
    if dtype == "i4":
        return pack_nibbles(values, signed=True)
    if dtype in ("u4", "e2m1"):
        return pack_nibbles(values)
    ints = {"i8": (1, True), "i16": (2, True), "u16": (2, False),
            "i32": (4, True), "u32": (4, False), "i64": (8, True),
            "u64": (8, False)}
    if dtype in ints:
        width, signed = ints[dtype]
        return pack_ints(values, width, signed)
    raise UsageError(f"unknown dtype name {dtype!r}")


# ---------------------------------------------------------------------------
# Types: parse, print, hash, minimum size
# ---------------------------------------------------------------------------

# scalar name -> (wire width, signed) ; floats and bool use their own code
_INT_KINDS = {
    "i8": (1, True), "u8": (1, False), "i16": (2, True), "u16": (2, False),
    "i32": (4, True), "u32": (4, False), "i64": (8, True), "u64": (8, False),
    "int": (8, True), "uint": (8, False),
}
SCALARS = ("bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64",
           "int", "uint", "f32", "f64")
_LEAVES = frozenset(SCALARS) | {"str", "tensors"}
_SCALAR_MIN = {"bool": 1, "f32": 4, "f64": 8,
               **{k: w for k, (w, _) in _INT_KINDS.items()}}
_CONTAINERS = frozenset(("list", "opt", "dict", "struct"))

_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[a-z0-9]+")


def parse_type(text: str) -> tuple:
    """Parse canonical type text (no spaces) into a type tree."""
    if not isinstance(text, str):
        raise UsageError("type text must be a str")
    tree, pos = _parse_at(text, 0, 0)
    if pos != len(text):
        raise UsageError(f"unexpected text at {pos} in {text!r}")
    return tree


def _expect(text: str, pos: int, literal: str) -> int:
    if not text.startswith(literal, pos):
        raise UsageError(f"expected {literal!r} at {pos} in {text!r}")
    return pos + len(literal)


def _parse_at(text: str, pos: int, nesting: int) -> tuple[tuple, int]:
    if nesting > MAX_TYPE_NESTING:
        raise UsageError(f"type text nests deeper than {MAX_TYPE_NESTING} "
                         "levels, more than this reference parser takes")
    for kind in ("list", "opt"):
        if text.startswith(kind + "<", pos):
            inner, pos = _parse_at(text, pos + len(kind) + 1, nesting + 1)
            return (kind, inner), _expect(text, pos, ">")
    if text.startswith("dict<", pos):
        pos = _expect(text, pos, "dict<str,")
        value, pos = _parse_at(text, pos, nesting + 1)
        return ("dict", value), _expect(text, pos, ">")
    if text.startswith("struct{", pos):
        pos += len("struct{")
        fields: list[tuple[str, tuple]] = []
        seen: set[str] = set()
        while not text.startswith("}", pos):
            match = _FIELD_NAME.match(text, pos)
            if not match:
                raise UsageError(f"expected a field name at {pos} in {text!r}")
            name = match.group()
            if name in seen:
                raise UsageError(f"field {name!r} repeated in {text!r}")
            seen.add(name)
            pos = _expect(text, match.end(), ":")
            field_type, pos = _parse_at(text, pos, nesting + 1)
            pos = _expect(text, pos, ",")
            fields.append((name, field_type))
        return ("struct", tuple(fields)), pos + 1
    match = _WORD.match(text, pos)
    if match and match.group() in _LEAVES:
        return (match.group(),), match.end()
    raise UsageError(f"unknown type at {pos} in {text!r}")


def _tree(t) -> tuple:
    return parse_type(t) if isinstance(t, str) else t


def type_text(tree) -> str:
    """Canonical type text of a tree (inverse of parse_type)."""
    tree = _tree(tree)
    kind = tree[0]
    if kind in ("list", "opt"):
        return f"{kind}<{type_text(tree[1])}>"
    if kind == "dict":
        return f"dict<str,{type_text(tree[1])}>"
    if kind == "struct":
        return "struct{" + "".join(f"{name}:{type_text(t)},"
                                   for name, t in tree[1]) + "}"
    return kind


def _hash_tokens(tree: tuple) -> Iterator[str]:
    kind = tree[0]
    if kind in ("list", "opt"):
        yield kind + "<"
        yield from _hash_tokens(tree[1])
        yield ">"
    elif kind == "dict":
        yield "dict<"
        yield "str"
        yield ","
        yield from _hash_tokens(tree[1])
        yield ">"
    elif kind == "struct":
        yield "struct{"
        for name, field_type in tree[1]:
            yield name
            yield ":"
            yield from _hash_tokens(field_type)
            yield ","
        yield "}"
    else:
        yield kind


def schema_hash(tree) -> int:
    """FNV-1a 64 over the type's tokens; a zero byte is mixed after each."""
    h = FNV_OFFSET
    for token in _hash_tokens(_tree(tree)):
        for byte in token.encode("ascii") + b"\x00":
            h = ((h ^ byte) * FNV_PRIME) & U64_MAX
    return h


def min_size(tree) -> int:
    """Fewest wire bytes any value of this type can take."""
    tree = _tree(tree)
    kind = tree[0]
    if kind in _SCALAR_MIN:
        return _SCALAR_MIN[kind]
    if kind in ("str", "list", "dict"):
        return 4
    if kind == "opt":
        return 1
    if kind == "tensors":
        return HEADER_SIZE
    if kind == "struct":
        return sum(min_size(t) for _, t in tree[1])
    raise UsageError(f"not a type tree: {tree!r}")


def _element_min(tree: tuple) -> int:
    """The m of the count check: one list element, or one dict pair."""
    if tree[0] == "dict":
        return 4 + min_size(tree[1])
    return min_size(tree[1])


def _is_bytes_type(tree: tuple) -> bool:
    return tree[0] == "list" and tree[1] == ("u8",)


# ---------------------------------------------------------------------------
# Frozen encoder
# ---------------------------------------------------------------------------

def encode(tree, value, limits: Limits | None = None) -> bytes:
    """Canonical Frozen bytes of a value; UsageError if there are none."""
    out = bytearray()
    _encode_into(_tree(tree), value, out, _limits(limits), 0)
    return bytes(out)


def _encode_into(tree: tuple, value, out: bytearray, limits: Limits,
                 depth: int) -> None:
    kind = tree[0]
    if kind == "bool":
        if type(value) is not bool:
            raise UsageError(f"bool expects True/False, got {value!r}")
        out.append(1 if value else 0)
        return
    if kind in _INT_KINDS:
        width, signed = _INT_KINDS[kind]
        if type(value) is not int:
            raise UsageError(f"{kind} expects an int, got {value!r}")
        try:
            out += value.to_bytes(width, "little", signed=signed)
        except OverflowError as exc:
            raise UsageError(f"{value} does not fit in {kind}") from exc
        return
    if kind == "f32":
        if not isinstance(value, Float32):
            raise UsageError(f"f32 expects Float32, got {value!r}")
        out += value.bits.to_bytes(4, "little")
        return
    if kind == "f64":
        if not isinstance(value, Float64):
            raise UsageError(f"f64 expects Float64, got {value!r}")
        out += value.bits.to_bytes(8, "little")
        return
    if kind == "str":
        if not isinstance(value, str):
            raise UsageError(f"str expects a str, got {value!r}")
        try:
            raw = value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UsageError("str is not valid Unicode scalar text") from exc
        _encode_run(raw, out, limits)
        return
    if kind == "tensors":
        if not isinstance(value, Directory):
            raise UsageError(f"tensors expects a Directory, got {value!r}")
        out += encode_directory(value.tensors, limits)
        return

    # Containers: the decoder's depth rule, mirrored so we never write a
    # value the decoder would refuse.
    level = depth + 1
    if level > MAX_DEPTH:
        raise UsageError(f"value nests deeper than {MAX_DEPTH} containers")
    if _is_bytes_type(tree):
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise UsageError(f"list<u8> expects bytes, got {value!r}")
        _encode_run(bytes(value), out, limits)
        return
    if kind == "list":
        if not isinstance(value, (list, tuple, Repeat)):
            raise UsageError(f"list expects a list, got {value!r}")
        _encode_count(len(value), limits)
        out += len(value).to_bytes(4, "little")
        if isinstance(value, Repeat) and min_size(tree[1]) == 0:
            # One value of a zero-size type writes no bytes: checking it
            # once checks every position.
            value = value[:1]
        for item in value:
            _encode_into(tree[1], item, out, limits, level)
        return
    if kind == "opt":
        if value is None:
            out.append(0)
        elif isinstance(value, Some):
            out.append(1)
            _encode_into(tree[1], value.value, out, limits, level)
        else:
            raise UsageError(f"opt expects None or Some(...), got {value!r}")
        return
    if kind == "dict":
        if not isinstance(value, dict):
            raise UsageError(f"dict expects a dict, got {value!r}")
        pairs = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise UsageError(f"dict key must be str, got {key!r}")
            try:
                pairs.append((key.encode("utf-8"), item))
            except UnicodeEncodeError as exc:
                raise UsageError("dict key is not valid Unicode") from exc
        pairs.sort(key=lambda pair: pair[0])
        for (a, _), (b, _) in zip(pairs, pairs[1:]):
            if a == b:
                raise UsageError(f"dict key {a!r} repeats")
        _encode_count(len(pairs), limits)
        out += len(pairs).to_bytes(4, "little")
        for raw_key, item in pairs:
            _encode_run(raw_key, out, limits)
            _encode_into(tree[1], item, out, limits, level)
        return
    if kind == "struct":
        if not isinstance(value, dict):
            raise UsageError(f"struct expects a dict of fields, got {value!r}")
        names = [name for name, _ in tree[1]]
        if set(value) != set(names):
            raise UsageError(f"struct fields {sorted(value)} != {names}")
        for name, field_type in tree[1]:
            _encode_into(field_type, value[name], out, limits, level)
        return
    raise UsageError(f"not a type tree: {tree!r}")


def _encode_run(raw: bytes, out: bytearray, limits: Limits) -> None:
    if len(raw) > limits.byte_cap:
        raise UsageError(f"byte run of {len(raw)} is above the byte cap")
    out += len(raw).to_bytes(4, "little")
    out += raw


def _encode_count(count: int, limits: Limits) -> None:
    if count > limits.count_cap:
        raise UsageError(f"count {count} is above the count cap")


# ---------------------------------------------------------------------------
# Frozen decoder
# ---------------------------------------------------------------------------

class _Reader:
    """Reads Frozen values from ``data`` starting at ``pos``.  Offsets in
    errors are offsets into ``data``."""

    def __init__(self, data: bytes, pos: int, limits: Limits):
        self.data = data
        self.pos = pos
        self.limits = limits

    def unread(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int, what: str) -> bytes:
        if n > self.unread():
            raise KilnError("EOF", self.pos,
                            f"{what} needs {n} bytes, {self.unread()} remain")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def count(self, cap: int, m: int, what: str) -> int:
        """The allocation rule; nothing sized by the count exists before
        this returns."""
        at = self.pos
        n = int.from_bytes(self.take(4, f"{what} count"), "little")
        if n > cap:
            raise KilnError("LIMIT", at, f"{what} count {n} is above cap {cap}")
        if m > 0 and n * m > U64_MAX:
            raise KilnError("LIMIT", at, f"{what} count {n} x {m} overflows u64")
        if n * m > self.unread():
            raise KilnError("EOF", at, f"{what} count {n} needs at least "
                            f"{n * m} bytes, {self.unread()} remain")
        return n

    def utf8(self, n: int, what: str) -> tuple[str, bytes]:
        at = self.pos
        raw = self.take(n, what)
        try:
            return raw.decode("utf-8"), raw
        except UnicodeDecodeError as exc:
            raise KilnError("UTF8", at + exc.start,
                            f"{what} is not valid UTF-8") from None

    def string(self, what: str = "str") -> tuple[str, bytes]:
        n = self.count(self.limits.byte_cap, 1, what)
        return self.utf8(n, what)

    def value(self, tree: tuple, depth: int):
        """Decode one value of ``tree``; ``depth`` containers enclose it."""
        kind = tree[0]
        if kind == "bool":
            byte = self.take(1, "bool")[0]
            if byte > 1:
                raise KilnError("TYPE", self.pos - 1, f"bool byte {byte}")
            return byte == 1
        if kind in _INT_KINDS:
            width, signed = _INT_KINDS[kind]
            return int.from_bytes(self.take(width, kind), "little",
                                  signed=signed)
        if kind == "f32":
            return Float32(int.from_bytes(self.take(4, "f32"), "little"))
        if kind == "f64":
            return Float64(int.from_bytes(self.take(8, "f64"), "little"))
        if kind == "str":
            return self.string()[0]
        if kind == "tensors":
            directory, end = decode_directory(self.data, self.pos,
                                              self.limits, standalone=False)
            self.pos = end
            return directory

        # Containers: the depth check comes before the first byte.
        level = depth + 1
        if level > MAX_DEPTH:
            raise KilnError("DEPTH", self.pos,
                            f"{kind} would be container number {level}")
        if _is_bytes_type(tree):
            n = self.count(self.limits.byte_cap, 1, "list<u8>")
            return self.take(n, "list<u8> body")
        if kind == "list":
            m = _element_min(tree)
            n = self.count(self.limits.count_cap, m, "list")
            if m == 0 and n > 0:
                # Zero-size elements: all the same value from the same
                # (empty) bytes at the same depth; read one, repeat it.
                return Repeat(n, self.value(tree[1], level))
            items = []
            for _ in range(n):
                items.append(self.value(tree[1], level))
            return items
        if kind == "opt":
            tag = self.take(1, "opt tag")[0]
            if tag == 0:
                return None
            if tag == 1:
                return Some(self.value(tree[1], level))
            raise KilnError("TYPE", self.pos - 1, f"opt tag {tag}")
        if kind == "dict":
            n = self.count(self.limits.count_cap, _element_min(tree), "dict")
            result: dict[str, Any] = {}
            previous: bytes | None = None
            for _ in range(n):
                at = self.pos
                key, raw = self.string("dict key")
                if previous is not None and raw <= previous:
                    raise KilnError("TYPE", at, f"dict key {raw!r} is not "
                                    f"after {previous!r}")
                previous = raw
                result[key] = self.value(tree[1], level)
            return result
        if kind == "struct":
            fields = {}
            for name, field_type in tree[1]:
                fields[name] = self.value(field_type, level)
            return fields
        raise UsageError(f"not a type tree: {tree!r}")


def _as_bytes(data) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise UsageError("data must be bytes")


def decode_at(tree, data, offset: int = 0,
              limits: Limits | None = None) -> tuple[Any, int]:
    """Decode one value at ``offset``; return (value, end offset).  Bytes
    after the value are left alone."""
    reader = _Reader(_as_bytes(data), offset, _limits(limits))
    value = reader.value(_tree(tree), 0)
    return value, reader.pos


def decode(tree, data, limits: Limits | None = None):
    """Decode a standalone value: it must use the whole buffer."""
    tree = _tree(tree)
    data = _as_bytes(data)
    limits = _limits(limits)
    if tree == ("tensors",):
        return decode_directory(data, 0, limits, standalone=True)[0]
    value, end = decode_at(tree, data, 0, limits)
    if end != len(data):
        raise KilnError("TRAILING", end,
                        f"{len(data) - end} bytes follow the value")
    return value


# ---------------------------------------------------------------------------
# Tensor directory: layout constants
# ---------------------------------------------------------------------------

# Header field offsets.
H_MAGIC, H_VERSION, H_FLAGS, H_RESERVED = 0, 4, 5, 6
H_COUNT, H_NAME_BYTES, H_PAYLOAD_BYTES, H_DIRECTORY_BYTES = 8, 12, 16, 24
H_RESERVED_TAIL = 32

# Descriptor field offsets.
D_DTYPE, D_RANK, D_RESERVED = 0, 2, 3
D_NAME_OFF, D_NAME_LEN, D_LAYOUT_OFF, D_LAYOUT_LEN = 4, 6, 8, 10
D_BLOCK_SIZE, D_SCHEME, D_AXIS, D_GROUP = 12, 16, 18, 20
D_SCALE, D_OUTER, D_OFFSET, D_LENGTH = 24, 28, 32, 40
D_SHAPE, D_RESERVED_TAIL = 48, 112
MAX_RANK = 8


def _u(data: bytes, at: int, size: int) -> int:
    return int.from_bytes(data[at:at + size], "little")


@dataclass
class _Descriptor:
    """Raw fields of one descriptor as read from the wire, plus values that
    later steps compute.  ``at`` is its offset from the block start."""

    at: int
    dtype: int
    rank: int
    reserved: int
    name_off: int
    name_len: int
    layout_off: int
    layout_len: int
    block_size: int
    scheme: int
    axis: int
    group: int
    scale: int
    outer: int
    offset: int
    length: int
    slots: tuple
    reserved_tail: bytes
    count: int = 0              # element count, filled in by step 9

    @classmethod
    def read(cls, block: bytes, at: int) -> "_Descriptor":
        return cls(
            at=at,
            dtype=_u(block, at + D_DTYPE, 2),
            rank=block[at + D_RANK],
            reserved=block[at + D_RESERVED],
            name_off=_u(block, at + D_NAME_OFF, 2),
            name_len=_u(block, at + D_NAME_LEN, 2),
            layout_off=_u(block, at + D_LAYOUT_OFF, 2),
            layout_len=_u(block, at + D_LAYOUT_LEN, 2),
            block_size=_u(block, at + D_BLOCK_SIZE, 4),
            scheme=_u(block, at + D_SCHEME, 2),
            axis=_u(block, at + D_AXIS, 2),
            group=_u(block, at + D_GROUP, 4),
            scale=_u(block, at + D_SCALE, 4),
            outer=_u(block, at + D_OUTER, 4),
            offset=_u(block, at + D_OFFSET, 8),
            length=_u(block, at + D_LENGTH, 8),
            slots=tuple(_u(block, at + D_SHAPE + 8 * k, 8)
                        for k in range(MAX_RANK)),
            reserved_tail=block[at + D_RESERVED_TAIL:at + DESCRIPTOR_SIZE],
        )

    @property
    def shape(self) -> tuple:
        return self.slots[:self.rank]


# ---------------------------------------------------------------------------
# Tensor directory: decoder, one method per check step
# ---------------------------------------------------------------------------

class _DirectoryCheck:
    """Runs the directory checks in their fixed order.  A step is applied
    to all descriptors (in index order) before any later step is tried;
    that is what makes the first reported fault identical across readers.
    Each numbered step is one method below."""

    def __init__(self, data: bytes, base: int, limits: Limits,
                 standalone: bool):
        self.data = data
        self.base = base
        self.limits = limits
        self.standalone = standalone
        self.available = len(data) - base
        self.descriptors: list[_Descriptor] = []

    def fail(self, code: str, step: str, at: int, message: str):
        raise KilnError(code, self.base + at, message, step)

    def byte(self, at: int) -> int:
        return self.data[self.base + at]

    def field(self, at: int, size: int) -> int:
        return _u(self.data, self.base + at, size)

    def region(self, start: int, end: int) -> bytes:
        return self.data[self.base + start:self.base + end]

    def first_nonzero(self, start: int, end: int) -> int | None:
        for i, b in enumerate(self.region(start, end)):
            if b:
                return start + i
        return None

    def run(self) -> tuple[Directory, int]:
        self.step1_magic_and_length()
        self.step2_header_fields()
        self.step3_caps()
        self.step4_directory_bytes()
        self.step5_directory_fits()
        self.step6_block_fits()
        self.step7_padding()
        self.step8a_descriptor_reserved()
        self.step8b_names_and_heap()
        self.step8c_utf8()
        self.step8d_unique_names()
        self.step9_dtype_shape_range()
        self.step10_canonical_offsets()
        self.step11_bool_packed_quant()
        self.step12_trailing()
        return self.build(), self.base + self.block_length

    # Step 1: enough bytes for the magic, the magic, then the full header.
    def step1_magic_and_length(self) -> None:
        if self.available < len(DIR_MAGIC):
            self.fail("EOF", "1", 0, f"{self.available} bytes cannot hold "
                      "the directory magic")
        if self.region(0, 4) != DIR_MAGIC:
            self.fail("FRAME", "1", 0,
                      f"directory magic is {self.region(0, 4)!r}")
        if self.available < HEADER_SIZE:
            self.fail("EOF", "1", self.available, f"{self.available} bytes "
                      "cannot hold the 64-byte header")

    # Step 2: version, flags, reserved header bytes.
    def step2_header_fields(self) -> None:
        version = self.byte(H_VERSION)
        if version != DIR_VERSION:
            self.fail("FRAME", "2", H_VERSION, f"directory version {version}")
        self.flags = self.byte(H_FLAGS)
        if self.flags & ~KNOWN_FLAGS:
            self.fail("FRAME", "2", H_FLAGS, f"unknown flag bits in "
                      f"0x{self.flags:02x}")
        if not self.flags & FLAG_LITTLE_ENDIAN:
            self.fail("FRAME", "2", H_FLAGS, "little-endian flag is clear")
        for start, end in ((H_RESERVED, H_COUNT),
                           (H_RESERVED_TAIL, HEADER_SIZE)):
            at = self.first_nonzero(start, end)
            if at is not None:
                self.fail("FRAME", "2", at, "reserved header byte is nonzero")
        self.tensor_count = self.field(H_COUNT, 4)
        self.name_bytes = self.field(H_NAME_BYTES, 4)
        self.payload_bytes = self.field(H_PAYLOAD_BYTES, 8)
        self.directory_bytes = self.field(H_DIRECTORY_BYTES, 8)

    # Step 3: caps, count first.
    def step3_caps(self) -> None:
        if self.tensor_count > self.limits.count_cap:
            self.fail("LIMIT", "3", H_COUNT, f"tensor_count "
                      f"{self.tensor_count} is above cap "
                      f"{self.limits.count_cap}")
        if self.name_bytes > self.limits.byte_cap:
            self.fail("LIMIT", "3", H_NAME_BYTES, f"name_bytes "
                      f"{self.name_bytes} is above cap {self.limits.byte_cap}")

    # Step 4: the directory size, and its stored copy.
    def step4_directory_bytes(self) -> None:
        # With u32 inputs the sum is below 2^40; the u64 check is kept so the
        # rule stays visible.
        total = self.tensor_count * DESCRIPTOR_SIZE + self.name_bytes
        if total > U64_MAX:
            self.fail("LIMIT", "4", H_COUNT, "directory size overflows u64")
        if self.directory_bytes != total:
            self.fail("TYPE", "4", H_DIRECTORY_BYTES, f"directory_bytes "
                      f"{self.directory_bytes} != {total}")
        self.heap_start = HEADER_SIZE + self.tensor_count * DESCRIPTOR_SIZE
        self.heap_end = self.heap_start + self.name_bytes

    # Step 5: descriptors and heap inside the buffer (nothing allocated yet).
    def step5_directory_fits(self) -> None:
        if self.heap_end > self.available:
            self.fail("EOF", "5", H_COUNT, f"directory needs {self.heap_end} "
                      f"bytes, {self.available} remain")

    # Step 6: payload end, overflow first, then inside the buffer.
    def step6_block_fits(self) -> None:
        self.payload_base = _align(self.heap_end)
        end = self.payload_base + self.payload_bytes
        if end > U64_MAX:
            self.fail("LIMIT", "6", H_PAYLOAD_BYTES,
                      "payload_base + payload_bytes overflows u64")
        if end > self.available:
            self.fail("EOF", "6", H_PAYLOAD_BYTES, f"block needs {end} "
                      f"bytes, {self.available} remain")
        self.block_length = end

    # Step 7: bytes between the heap and payload_base are zero.
    def step7_padding(self) -> None:
        at = self.first_nonzero(self.heap_end, self.payload_base)
        if at is not None:
            self.fail("TYPE", "7", at, "padding byte is nonzero")

    # Step 8a: the block fits, so the descriptors may now be read.
    def step8a_descriptor_reserved(self) -> None:
        block = self.region(0, self.heap_start)
        self.descriptors = []
        for i in range(self.tensor_count):
            self.descriptors.append(
                _Descriptor.read(block, HEADER_SIZE + i * DESCRIPTOR_SIZE))
        for i, d in enumerate(self.descriptors):
            if d.reserved:
                self.fail("FRAME", "8a", d.at + D_RESERVED,
                          f"descriptor {i}: reserved byte is nonzero")
            for k, b in enumerate(d.reserved_tail):
                if b:
                    self.fail("FRAME", "8a", d.at + D_RESERVED_TAIL + k,
                              f"descriptor {i}: reserved byte is nonzero")

    # Step 8b: name flag, and every slot against the canonical heap.
    def step8b_names_and_heap(self) -> None:
        named = bool(self.flags & FLAG_NAMES)
        if named and not self.descriptors:
            self.fail("TYPE", "8b", H_FLAGS, "name flag set on an empty "
                      "directory")
        for i, d in enumerate(self.descriptors):
            if named and d.name_len == 0:
                self.fail("TYPE", "8b", d.at + D_NAME_LEN, f"descriptor {i}: "
                          "name flag is set but the tensor has no name")
            if not named and d.name_len != 0:
                self.fail("TYPE", "8b", d.at + D_NAME_LEN, f"descriptor {i}: "
                          "name flag is clear but the tensor has a name")
        cursor = 0
        for i, d in enumerate(self.descriptors):
            cursor = self._heap_slot(i, "name", d.at + D_NAME_OFF,
                                     d.name_off, d.name_len, cursor)
        for i, d in enumerate(self.descriptors):
            cursor = self._heap_slot(i, "layout name", d.at + D_LAYOUT_OFF,
                                     d.layout_off, d.layout_len, cursor)
        if cursor != self.name_bytes:
            self.fail("TYPE", "8b", H_NAME_BYTES, f"names use {cursor} heap "
                      f"bytes, name_bytes is {self.name_bytes}")

    def _heap_slot(self, i: int, what: str, at: int, off: int, length: int,
                   cursor: int) -> int:
        if length == 0:
            if off != NO_SLOT:
                self.fail("TYPE", "8b", at, f"descriptor {i}: absent {what} "
                          f"has offset {off}, not 0xFFFF")
            return cursor
        if off == NO_SLOT or off != cursor:
            self.fail("TYPE", "8b", at, f"descriptor {i}: {what} offset "
                      f"{off}, canonical heap position is {cursor}")
        if cursor + length > self.name_bytes:
            self.fail("TYPE", "8b", at, f"descriptor {i}: {what} ends past "
                      f"name_bytes")
        return cursor + length

    def _heap_bytes(self, off: int, length: int) -> bytes:
        start = self.heap_start + off
        return self.region(start, start + length)

    # Step 8c: UTF-8, in heap order (names, then layout names).
    def step8c_utf8(self) -> None:
        self.names: list[str | None] = []
        self.layouts: list[str | None] = []
        for target, off_attr, len_attr, what in (
                (self.names, "name_off", "name_len", "name"),
                (self.layouts, "layout_off", "layout_len", "layout name")):
            for i, d in enumerate(self.descriptors):
                off, length = getattr(d, off_attr), getattr(d, len_attr)
                if length == 0:
                    target.append(None)
                    continue
                try:
                    target.append(self._heap_bytes(off, length).decode("utf-8"))
                except UnicodeDecodeError as exc:
                    self.fail("UTF8", "8c", self.heap_start + off + exc.start,
                              f"descriptor {i}: {what} is not valid UTF-8")

    # Step 8d: tensor names are unique as bytes.
    def step8d_unique_names(self) -> None:
        seen: set[bytes] = set()
        for i, d in enumerate(self.descriptors):
            if d.name_len == 0:
                continue
            raw = self._heap_bytes(d.name_off, d.name_len)
            if raw in seen:
                self.fail("TYPE", "8d", self.heap_start + d.name_off,
                          f"descriptor {i}: name {raw!r} repeats")
            seen.add(raw)

    # Step 9: per descriptor dtype, rank, shape, size rules and range; then
    # overlap across all descriptors.
    def step9_dtype_shape_range(self) -> None:
        for i, d in enumerate(self.descriptors):
            self._step9_one(i, d)
        ranges = sorted((d.offset, d.offset + d.length, i)
                        for i, d in enumerate(self.descriptors) if d.length)
        furthest_end, furthest_index = 0, None
        for start, end, i in ranges:
            if furthest_index is not None and start < furthest_end:
                self.fail("TYPE", "9", self.descriptors[i].at + D_OFFSET,
                          f"descriptor {i}: range overlaps descriptor "
                          f"{furthest_index}")
            if end > furthest_end:
                furthest_end, furthest_index = end, i

    def _step9_one(self, i: int, d: _Descriptor) -> None:
        code = d.dtype
        if code not in DTYPES and not is_opaque(code):
            self.fail("TYPE", "9", d.at + D_DTYPE, f"descriptor {i}: dtype "
                      f"code {code} is not a Kiln dtype")
        if d.rank > MAX_RANK:
            self.fail("TYPE", "9", d.at + D_RANK, f"descriptor {i}: rank "
                      f"{d.rank}")
        for k in range(d.rank, MAX_RANK):
            if d.slots[k]:
                self.fail("TYPE", "9", d.at + D_SHAPE + 8 * k,
                          f"descriptor {i}: shape slot {k} is past the rank "
                          "and nonzero")
        count = 1
        for dim in d.shape:         # exact product: a 0 dimension gives 0
            count *= dim
        if count > U64_MAX:
            self.fail("LIMIT", "9", d.at + D_SHAPE, f"descriptor {i}: shape "
                      "product overflows u64")
        d.count = count
        if is_opaque(code):
            if d.layout_len == 0:
                self.fail("TYPE", "9", d.at + D_LAYOUT_LEN, f"descriptor {i}:"
                          " opaque dtype without a layout name")
            if d.block_size == 0:
                self.fail("TYPE", "9", d.at + D_BLOCK_SIZE, f"descriptor {i}:"
                          " opaque dtype with block_size 0")
            if d.length % d.block_size:
                self.fail("TYPE", "9", d.at + D_LENGTH, f"descriptor {i}: "
                          f"byte_length {d.length} is not a multiple of "
                          f"block_size {d.block_size}")
        else:
            if d.layout_len != 0:
                self.fail("TYPE", "9", d.at + D_LAYOUT_LEN, f"descriptor {i}:"
                          " layout name on a closed dtype")
            if d.block_size != 0:
                self.fail("TYPE", "9", d.at + D_BLOCK_SIZE, f"descriptor {i}:"
                          " block_size on a closed dtype")
            width = DTYPES[code][1]
            if width is None:
                expected = (count + 1) // 2
            else:
                expected = count * width
                if expected > U64_MAX:
                    self.fail("LIMIT", "9", d.at + D_SHAPE, f"descriptor {i}:"
                              " byte size overflows u64")
            if d.length != expected:
                self.fail("TYPE", "9", d.at + D_LENGTH, f"descriptor {i}: "
                          f"byte_length {d.length}, dtype and shape need "
                          f"{expected}")
        end = d.offset + d.length
        if end > U64_MAX:
            self.fail("LIMIT", "9", d.at + D_OFFSET, f"descriptor {i}: range "
                      "end overflows u64")
        if end > self.payload_bytes:
            self.fail("TYPE", "9", d.at + D_OFFSET, f"descriptor {i}: range "
                      f"ends at {end}, past payload_bytes {self.payload_bytes}")

    # Step 10: greedy 64-aligned offsets, exact payload_bytes, zero gaps.
    def step10_canonical_offsets(self) -> None:
        running = 0
        gaps = []
        for i, d in enumerate(self.descriptors):
            expected = _align(running)
            if d.offset != expected:
                self.fail("TYPE", "10", d.at + D_OFFSET, f"descriptor {i}: "
                          f"byte_offset {d.offset}, canonical is {expected}")
            gaps.append((running, expected))
            running = d.offset + d.length
        if self.payload_bytes != running:
            self.fail("TYPE", "10", H_PAYLOAD_BYTES, f"payload_bytes "
                      f"{self.payload_bytes}, tensors end at {running}")
        for start, end in gaps:
            at = self.first_nonzero(self.payload_base + start,
                                    self.payload_base + end)
            if at is not None:
                self.fail("TYPE", "10", at, "alignment gap byte is nonzero")

    def _payload(self, d: _Descriptor) -> bytes:
        start = self.payload_base + d.offset
        return self.region(start, start + d.length)

    # Step 11: element bytes (bool, packed tail), then quantization.
    def step11_bool_packed_quant(self) -> None:
        for i, d in enumerate(self.descriptors):
            if d.dtype != DTYPE_BOOL:
                continue
            for k, b in enumerate(self._payload(d)):
                if b > 1:
                    self.fail("TYPE", "11", self.payload_base + d.offset + k,
                              f"descriptor {i}: bool byte {b}")
        for i, d in enumerate(self.descriptors):
            if d.dtype in DTYPES and DTYPES[d.dtype][1] is None \
                    and d.count % 2 == 1:
                last = self.payload_base + d.offset + d.length - 1
                if self.byte(last) & 0xF0:
                    self.fail("TYPE", "11", last, f"descriptor {i}: high "
                              "nibble after the last element is nonzero")
        for i, d in enumerate(self.descriptors):
            self._step11_quant(i, d)

    def _step11_quant(self, i: int, d: _Descriptor) -> None:
        def bad(field_at: int, message: str):
            self.fail("TYPE", "11", d.at + field_at,
                      f"descriptor {i}: {message}")

        if d.scheme > 2:
            bad(D_SCHEME, f"quant_scheme {d.scheme}")
        if d.scheme == 0:
            if d.group != 0:
                bad(D_GROUP, "scheme 0 with a group_size")
            if d.axis != NO_AXIS:
                bad(D_AXIS, "scheme 0 with a quant_axis")
            if d.scale != NO_INDEX:
                bad(D_SCALE, "scheme 0 with a scale_index")
            if d.outer != NO_INDEX:
                bad(D_OUTER, "scheme 0 with an outer_index")
            return
        if d.rank < 1:
            bad(D_RANK, "quantized tensor of rank 0")
        if d.axis >= d.rank:
            bad(D_AXIS, f"quant_axis {d.axis} is not below rank {d.rank}")
        if d.group < 1:
            bad(D_GROUP, "group_size 0")
        if d.scale >= len(self.descriptors) or d.scale == i:
            bad(D_SCALE, f"scale_index {d.scale} names no other tensor")
        scale = self.descriptors[d.scale]
        if scale.scheme != 0:
            bad(D_SCALE, "scale tensor is itself quantized")
        groups = -(-d.shape[d.axis] // d.group)
        others = 1
        for k, dim in enumerate(d.shape):
            if k != d.axis:
                others *= dim
        if scale.count != groups * others:
            bad(D_SCALE, f"scale tensor has {scale.count} elements, "
                f"{groups * others} needed")
        if d.scheme == 1:
            if d.outer != NO_INDEX:
                bad(D_OUTER, "scheme 1 with an outer_index")
            return
        if d.outer >= len(self.descriptors) or d.outer in (i, d.scale):
            bad(D_OUTER, f"outer_index {d.outer} names no third tensor")
        outer = self.descriptors[d.outer]
        if outer.dtype != DTYPE_F32:
            bad(D_OUTER, "outer scale tensor is not f32")
        if outer.scheme != 0:
            bad(D_OUTER, "outer scale tensor is itself quantized")
        if outer.count != 1:
            bad(D_OUTER, f"outer scale tensor has {outer.count} elements")

    # Step 12: only for a standalone block.
    def step12_trailing(self) -> None:
        if self.standalone and self.available > self.block_length:
            self.fail("TRAILING", "12", self.block_length,
                      f"{self.available - self.block_length} bytes follow "
                      "the block")

    def build(self) -> Directory:
        tensors = []
        for i, d in enumerate(self.descriptors):
            tensors.append(Tensor(
                dtype=d.dtype, shape=d.shape, payload=self._payload(d),
                name=self.names[i], layout=self.layouts[i],
                block_size=d.block_size, quant_scheme=d.scheme,
                quant_axis=d.axis, group_size=d.group,
                scale_index=d.scale, outer_index=d.outer))
        return Directory(tuple(tensors))


def decode_directory(data, offset: int = 0, limits: Limits | None = None,
                     standalone: bool = True) -> tuple[Directory, int]:
    """Check and decode the directory block that starts at ``offset``.
    Returns (Directory, offset just past the block).  With standalone=True
    the block must end the buffer."""
    check = _DirectoryCheck(_as_bytes(data), offset, _limits(limits),
                            standalone)
    return check.run()


# ---------------------------------------------------------------------------
# Tensor directory: encoder
# ---------------------------------------------------------------------------

def _need_int(value, lo: int, hi: int, what: str) -> None:
    if type(value) is not int or not lo <= value <= hi:
        raise UsageError(f"{what} must be an int in {lo}..{hi}, got {value!r}")


def _utf8_name(value, what: str) -> bytes:
    if value is None:
        return b""
    if not isinstance(value, str) or value == "":
        raise UsageError(f"{what} must be None or a non-empty str")
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"{what} is not valid Unicode") from exc
    if len(raw) > U16_MAX:
        raise UsageError(f"{what} is longer than {U16_MAX} bytes")
    return raw


def encode_directory(tensors, limits: Limits | None = None) -> bytes:
    """The canonical block for an ordered list of tensors.  Anything the
    decoder would reject, or that has no canonical form, is a UsageError."""
    limits = _limits(limits)
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise UsageError(f"tensor {i} is not a Tensor")
        _need_int(t.dtype, 0, U16_MAX, f"tensor {i} dtype")
        if len(t.shape) > MAX_RANK:
            raise UsageError(f"tensor {i} has rank {len(t.shape)} > 8")
        for dim in t.shape:
            _need_int(dim, 0, U64_MAX, f"tensor {i} dimension")
        _need_int(t.block_size, 0, U32_MAX, f"tensor {i} block_size")
        _need_int(t.quant_scheme, 0, U16_MAX, f"tensor {i} quant_scheme")
        _need_int(t.quant_axis, 0, U16_MAX, f"tensor {i} quant_axis")
        _need_int(t.group_size, 0, U32_MAX, f"tensor {i} group_size")
        _need_int(t.scale_index, 0, U32_MAX, f"tensor {i} scale_index")
        _need_int(t.outer_index, 0, U32_MAX, f"tensor {i} outer_index")
        if not isinstance(t.payload, bytes):
            raise UsageError(f"tensor {i} payload must be bytes")
    if len(tensors) > U32_MAX:
        raise UsageError("too many tensors for a u32 count")

    # Name heap: every tensor name in order, then every layout name.
    names = [_utf8_name(t.name, f"tensor {i} name")
             for i, t in enumerate(tensors)]
    layouts = [_utf8_name(t.layout, f"tensor {i} layout")
               for i, t in enumerate(tensors)]
    heap = bytearray()
    slots = []
    for raw in names + layouts:
        if not raw:
            slots.append((NO_SLOT, 0))
            continue
        if len(heap) >= NO_SLOT:
            raise UsageError("a name starts past heap offset 0xFFFE")
        slots.append((len(heap), len(raw)))
        heap += raw
    name_slots, layout_slots = slots[:len(tensors)], slots[len(tensors):]
    if len(heap) > U32_MAX:
        raise UsageError("name heap is longer than a u32")

    # Greedy payload placement.
    offsets = []
    running = 0
    for t in tensors:
        offsets.append(_align(running))
        running = offsets[-1] + len(t.payload)
    payload_bytes = running

    count = len(tensors)
    directory_bytes = count * DESCRIPTOR_SIZE + len(heap)
    flags = FLAG_LITTLE_ENDIAN | (FLAG_NAMES if any(names) else 0)
    out = bytearray(HEADER_SIZE)
    out[H_MAGIC:H_MAGIC + 4] = DIR_MAGIC
    out[H_VERSION] = DIR_VERSION
    out[H_FLAGS] = flags
    out[H_COUNT:H_COUNT + 4] = count.to_bytes(4, "little")
    out[H_NAME_BYTES:H_NAME_BYTES + 4] = len(heap).to_bytes(4, "little")
    out[H_PAYLOAD_BYTES:H_PAYLOAD_BYTES + 8] = payload_bytes.to_bytes(8, "little")
    out[H_DIRECTORY_BYTES:H_DIRECTORY_BYTES + 8] = \
        directory_bytes.to_bytes(8, "little")
    for i, t in enumerate(tensors):
        d = bytearray(DESCRIPTOR_SIZE)

        def put(at: int, size: int, value: int) -> None:
            d[at:at + size] = value.to_bytes(size, "little")

        put(D_DTYPE, 2, t.dtype)
        put(D_RANK, 1, len(t.shape))
        put(D_NAME_OFF, 2, name_slots[i][0])
        put(D_NAME_LEN, 2, name_slots[i][1])
        put(D_LAYOUT_OFF, 2, layout_slots[i][0])
        put(D_LAYOUT_LEN, 2, layout_slots[i][1])
        put(D_BLOCK_SIZE, 4, t.block_size)
        put(D_SCHEME, 2, t.quant_scheme)
        put(D_AXIS, 2, t.quant_axis)
        put(D_GROUP, 4, t.group_size)
        put(D_SCALE, 4, t.scale_index)
        put(D_OUTER, 4, t.outer_index)
        put(D_OFFSET, 8, offsets[i])
        put(D_LENGTH, 8, len(t.payload))
        for k, dim in enumerate(t.shape):
            put(D_SHAPE + 8 * k, 8, dim)
        out += d
    out += heap
    out += bytes(_align(len(out)) - len(out))
    payload_base = len(out)
    out += bytes(payload_bytes)
    for t, offset in zip(tensors, offsets):
        start = payload_base + offset
        out[start:start + len(t.payload)] = t.payload
    block = bytes(out)

    # Never hand out a block our own decoder would refuse.
    try:
        decoded, _ = decode_directory(block, 0, limits, standalone=True)
    except KilnError as exc:
        raise UsageError(f"no canonical directory for these tensors: {exc}") \
            from exc
    if decoded != Directory(tuple(tensors)):
        raise UsageError("directory does not round-trip")  # pragma: no cover
    return block


# ---------------------------------------------------------------------------
# Frame
# ---------------------------------------------------------------------------

def encode_frame(tree, value, limits: Limits | None = None) -> bytes:
    """16-byte frame header (Frozen profile, schema hash) plus the value."""
    tree = _tree(tree)
    header = FRAME_MAGIC + bytes(4) + schema_hash(tree).to_bytes(8, "little")
    return header + encode(tree, value, limits)


def decode_frame(tree, data, limits: Limits | None = None):
    """Check the frame header, then decode exactly one value after it."""
    tree = _tree(tree)
    data = _as_bytes(data)
    limits = _limits(limits)
    if len(data) < 4:
        raise KilnError("EOF", 0, f"{len(data)} bytes cannot hold the frame "
                        "magic", "frame")
    if data[:4] != FRAME_MAGIC:
        raise KilnError("FRAME", 0, f"frame magic is {data[:4]!r}", "frame")
    if len(data) < FRAME_SIZE:
        raise KilnError("EOF", len(data), f"{len(data)} bytes cannot hold "
                        "the 16-byte frame header", "frame")
    for at, what in ((4, "profile"), (5, "flags"), (6, "reserved"),
                     (7, "reserved")):
        if data[at]:
            raise KilnError("FRAME", at, f"frame {what} byte is "
                            f"{data[at]}", "frame")
    stored = _u(data, 8, 8)
    wanted = schema_hash(tree)
    if stored != wanted:
        raise KilnError("SCHEMA", 8, f"frame hash 0x{stored:016x}, type "
                        f"hashes to 0x{wanted:016x}", "frame")
    value, end = decode_at(tree, data, FRAME_SIZE, limits)
    if end != len(data):
        raise KilnError("TRAILING", end, f"{len(data) - end} bytes follow "
                        "the framed value")
    return value


# ---------------------------------------------------------------------------
# Convenience
# ---------------------------------------------------------------------------

def check(type_text_or_tree, data, framed: bool = False,
          limits: Limits | None = None) -> None:
    """Return None when ``data`` is a valid value of the type, else raise
    KilnError.  Used by the tests and by the case generator."""
    tree = _tree(type_text_or_tree)
    if framed:
        decode_frame(tree, data, limits)
    else:
        decode(tree, data, limits)
    return None
