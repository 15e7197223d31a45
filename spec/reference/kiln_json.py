"""The Kiln JSON form (spec/json.md), plain Python 3, standard library only.

``dumps(tree, value)`` writes a value of the reference codec
(``kiln_ref.decode``'s shapes) as JSON text; ``loads(tree, text)`` reads
JSON text back into those shapes, ready for ``kiln_ref.encode``.  The type
decides every JSON shape, in both directions:

    bool                       true / false
    i8 u8 i16 u16 i32 u32      JSON number
    i64 u64 int uint           decimal string ("-7"); JSON readers round
                               numbers past 2^53, so these are never numbers
    f32 f64                    JSON number with the shortest digits that give
                               back the same bits (-0.0 kept); "Infinity",
                               "-Infinity", "NaN" (the quiet NaN 0x7fc00000 or
                               0x7ff8000000000000), else "0x" and the bits
    str                        string
    list<u8>                   lowercase hex string
    list<T>, T of zero size    {"count": N}
    list<T>                    array
    opt<T>                     null when absent; the value when present, or
                               {"some": value} when T is itself an opt
    dict<str,V>                object, keys in wire (byte) order
    struct{...}                object, fields in declaration order
    tensors                    array of tensor objects: name, dtype (closed
                               name or opaque code), shape, layout,
                               block_size, quant (null or axis, group_size,
                               scales[, outer]), hex (the payload)

On the way in an integer may also be a JSON number of magnitude at most
2^53 - 1 or a decimal string for any width, a float may be its "0x" bits,
and dict keys may come in any order; anything else is refused with
``JsonFormError`` naming the path in the value ($.a[2].b).

The text is laid out as ``json.dumps(indent=2, ensure_ascii=False)`` lays
it out (or compact, with no spaces), so the Rust ``kiln decode`` output and
this module's are compared byte for byte.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction

import kiln_ref as K

__all__ = ["JsonFormError", "to_json", "dumps", "loads", "float_text",
           "f32_text", "f64_text", "f32_bits_from_text"]

MAX_SAFE = 2**53 - 1
WIDE_INTS = ("i64", "u64", "int", "uint")
INT_RANGES = {
    "i8": (-2**7, 2**7 - 1), "u8": (0, 2**8 - 1),
    "i16": (-2**15, 2**15 - 1), "u16": (0, 2**16 - 1),
    "i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1),
    "i64": (-2**63, 2**63 - 1), "int": (-2**63, 2**63 - 1),
    "u64": (0, 2**64 - 1), "uint": (0, 2**64 - 1),
}


class JsonFormError(Exception):
    """JSON that is not a value of the type."""


class _Lit:
    """JSON text written as it is (numbers)."""

    def __init__(self, text: str):
        self.text = text


# ---------------------------------------------------------------------------
# Floats

def float_text(negative: bool, digits: str, point: int) -> str:
    """Decimal text of 0.DIGITS x 10^point laid out as ECMAScript's
    Number.prototype.toString lays it out, with ".0" added when the text
    would otherwise look like an integer."""
    sign = "-" if negative else ""
    digits = digits.rstrip("0")
    if not digits:
        return sign + "0.0"
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k) + ".0"
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'-' if e < 0 else '+'}{abs(e)}"


def _digits_of(d: Decimal) -> tuple[bool, str, int]:
    """(negative, DIGITS, point) with d = 0.DIGITS x 10^point."""
    sign, digits, exponent = d.normalize().as_tuple()
    text = "".join(map(str, digits))
    return bool(sign), text, len(text) + exponent


def _round_to_f32(q: Fraction) -> int:
    """Bits of the f32 nearest to q (ties to even); infinities past the
    range."""
    sign = 0
    if q < 0:
        sign, q = 1, -q
    if q == 0:
        return sign << 31
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    e = max(e, -126)
    m = q * Fraction(2) ** (23 - e)
    n = m.numerator // m.denominator
    rest = m - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    if n == 2**24:
        n //= 2
        e += 1
    if e > 127:
        return (sign << 31) | 0x7F800000
    if n < 2**23:
        return (sign << 31) | n
    return (sign << 31) | ((e + 127) << 23) | (n - 2**23)


def f32_bits_from_text(text: str) -> int:
    """Bits of the f32 nearest to a decimal number's exact value."""
    d = Decimal(text)
    if d == 0:  # a Fraction has no negative zero
        return 0x80000000 if d.is_signed() else 0
    return _round_to_f32(Fraction(d))


def f32_text(bits: int) -> tuple[bool, str]:
    """(is a JSON number, text) of an f32 given by its bits."""
    exponent = (bits >> 23) & 0xFF
    if exponent == 0xFF:
        if bits & 0x7FFFFF == 0:
            return False, "-Infinity" if bits >> 31 else "Infinity"
        return False, "NaN" if bits == 0x7FC00000 else f"0x{bits:08x}"
    x = K.Float32(bits).to_float()
    if x == 0:
        return True, "-0.0" if bits >> 31 else "0.0"
    return True, _shortest(x, lambda c: _round_to_f32(Fraction(c)) == bits, 1)


def _shortest(x: float, round_trips, first: int) -> str:
    """Text of the shortest decimal that reads back as x; among decimals of
    that length the nearest to x, and of two equally near the one of larger
    magnitude (as Rust's float formatting picks)."""
    exact = Fraction(x)
    for p in range(first, 18):
        nearest = Decimal(f"{x:.{p - 1}e}")
        unit = Decimal((0, (1,), nearest.adjusted() - p + 1))
        fits = [c for c in (nearest - unit, nearest, nearest + unit)
                if c != 0 and round_trips(c)]
        if fits:
            best = min(fits, key=lambda c: (abs(Fraction(c) - exact),
                                            -abs(c)))
            return float_text(*_digits_of(best))
    raise AssertionError("17 digits always round-trip")


def f64_text(bits: int) -> tuple[bool, str]:
    """(is a JSON number, text) of an f64 given by its bits."""
    exponent = (bits >> 52) & 0x7FF
    if exponent == 0x7FF:
        if bits & ((1 << 52) - 1) == 0:
            return False, "-Infinity" if bits >> 63 else "Infinity"
        return (False, "NaN" if bits == 0x7FF8000000000000
                else f"0x{bits:016x}")
    x = K.Float64(bits).to_float()
    if x == 0:
        return True, "-0.0" if bits >> 63 else "0.0"
    digits = len(_digits_of(Decimal(repr(x)))[1])
    return True, _shortest(x, lambda c: float(c) == x, digits)


# ---------------------------------------------------------------------------
# Values to JSON

def _zero_size(tree) -> bool:
    return K.min_size(tree) == 0


def _float(pair):
    number, text = pair
    return _Lit(text) if number else text


def _tensor(t: K.Tensor) -> dict:
    if t.quant_scheme == 0:
        quant = None
    else:
        quant = {"axis": t.quant_axis, "group_size": t.group_size,
                 "scales": t.scale_index}
        if t.quant_scheme == 2:
            quant["outer"] = t.outer_index
    dtype = K.DTYPES[t.dtype][0] if t.dtype in K.DTYPES else t.dtype
    return {
        "name": t.name,
        "dtype": dtype,
        "shape": [d if d <= MAX_SAFE else str(d) for d in t.shape],
        "layout": t.layout,
        "block_size": t.block_size,
        "quant": quant,
        "hex": t.payload.hex(),
    }


def to_json(tree, value):
    """The JSON form of ``value`` as Python objects (dicts keep order;
    numbers whose text matters are wrapped)."""
    tree = K._tree(tree)
    kind = tree[0]
    if kind == "bool":
        return value
    if kind in WIDE_INTS:
        return str(value)
    if kind in INT_RANGES:
        return value
    if kind == "f32":
        return _float(f32_text(value.bits))
    if kind == "f64":
        return _float(f64_text(value.bits))
    if kind == "str":
        return value
    if kind == "tensors":
        return [_tensor(t) for t in value.tensors]
    if K._is_bytes_type(tree):
        return bytes(value).hex()
    if kind == "list":
        if _zero_size(tree[1]):
            return {"count": len(value)}
        return [to_json(tree[1], item) for item in value]
    if kind == "opt":
        if value is None:
            return None
        inner = to_json(tree[1], value.value)
        return {"some": inner} if tree[1][0] == "opt" else inner
    if kind == "dict":
        return {key: to_json(tree[1], item) for key, item in value.items()}
    if kind == "struct":
        return {name: to_json(t, value[name]) for name, t in tree[1]}
    raise K.UsageError(f"not a type tree: {tree!r}")


def _write(node, out: list, level: int, pretty: bool) -> None:
    def newline(depth):
        if pretty:
            out.append("\n" + "  " * depth)

    if isinstance(node, _Lit):
        out.append(node.text)
    elif node is None:
        out.append("null")
    elif node is True or node is False:
        out.append("true" if node else "false")
    elif isinstance(node, int):
        out.append(str(node))
    elif isinstance(node, str):
        out.append(json.dumps(node, ensure_ascii=False))
    elif isinstance(node, list):
        if not node:
            out.append("[]")
            return
        out.append("[")
        for i, item in enumerate(node):
            if i:
                out.append(",")
            newline(level + 1)
            _write(item, out, level + 1, pretty)
        newline(level)
        out.append("]")
    elif isinstance(node, dict):
        if not node:
            out.append("{}")
            return
        out.append("{")
        for i, (key, item) in enumerate(node.items()):
            if i:
                out.append(",")
            newline(level + 1)
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(": " if pretty else ":")
            _write(item, out, level + 1, pretty)
        newline(level)
        out.append("}")
    else:
        raise K.UsageError(f"cannot write {node!r} as JSON")


def dumps(tree, value, pretty: bool = True) -> str:
    """JSON text of a value: what ``kiln decode`` prints (without the final
    newline)."""
    out: list[str] = []
    _write(to_json(tree, value), out, 0, pretty)
    return "".join(out)


# ---------------------------------------------------------------------------
# JSON to values

class _Num:
    def __init__(self, text: str):
        self.text = text


class _Obj:
    """Object members in document order, repeated names kept."""

    def __init__(self, pairs):
        self.pairs = pairs


def _no_constant(name: str):
    raise JsonFormError(f"{name} is not JSON")


def _kind(node) -> str:
    if node is None:
        return "null"
    if node is True or node is False:
        return "a boolean"
    if isinstance(node, _Num):
        return "a number"
    if isinstance(node, str):
        return "a string"
    if isinstance(node, _Obj):
        return "an object"
    return "an array"


def _members(node, path: str, what: str) -> dict:
    if not isinstance(node, _Obj):
        raise JsonFormError(f"{path}: expected {what}, found {_kind(node)}")
    seen: dict = {}
    for key, item in node.pairs:
        if key in seen:
            raise JsonFormError(f"{path} has the member {key!r} twice")
        seen[key] = item
    return seen


def _integer(node, path: str) -> int:
    if isinstance(node, _Num):
        if any(c in node.text for c in ".eE"):
            raise JsonFormError(f"{path} is an integer, not {node.text}")
        n = int(node.text)
        if abs(n) > MAX_SAFE:
            raise JsonFormError(f"{path}: the JSON number {n} is beyond "
                                "2^53-1; write it as a string")
        return n
    if isinstance(node, str):
        digits = node[1:] if node.startswith("-") else node
        if not digits or not all("0" <= c <= "9" for c in digits):
            raise JsonFormError(f"{path} is an integer, not {node!r}")
        return int(node)
    raise JsonFormError(f"{path} is an integer, not {_kind(node)}")


def _bits(node: str, digits: int):
    if node.startswith("0x") and len(node) == 2 + digits:
        try:
            return int(node[2:], 16)
        except ValueError:
            return None
    return None


def _f32(node, path: str) -> K.Float32:
    if isinstance(node, _Num):
        bits = f32_bits_from_text(node.text)
        if bits & 0x7FFFFFFF == 0x7F800000:
            raise JsonFormError(f"{path}: {node.text} is beyond the range "
                                "of f32")
        return K.Float32(bits)
    if isinstance(node, str):
        named = {"Infinity": 0x7F800000, "-Infinity": 0xFF800000,
                 "NaN": 0x7FC00000}
        bits = named.get(node, _bits(node, 8))
        if bits is not None:
            return K.Float32(bits)
    raise JsonFormError(f"{path}: expected an f32, found {_kind(node)}")


def _f64(node, path: str) -> K.Float64:
    if isinstance(node, _Num):
        x = float(node.text)
        if x in (float("inf"), float("-inf")):
            raise JsonFormError(f"{path}: {node.text} is beyond the range "
                                "of f64")
        return K.Float64.from_float(x)
    if isinstance(node, str):
        named = {"Infinity": 0x7FF0000000000000,
                 "-Infinity": 0xFFF0000000000000,
                 "NaN": 0x7FF8000000000000}
        bits = named.get(node, _bits(node, 16))
        if bits is not None:
            return K.Float64(bits)
    raise JsonFormError(f"{path}: expected an f64, found {_kind(node)}")


def _hex(node, path: str) -> bytes:
    if not isinstance(node, str):
        raise JsonFormError(f"{path}: expected a hex string, found "
                            f"{_kind(node)}")
    try:
        return bytes.fromhex(node) if " " not in node else _bad_hex(path)
    except ValueError:
        return _bad_hex(path)


def _bad_hex(path: str):
    raise JsonFormError(f"{path} is not a hex string")


def _zero_value(tree):
    return {name: _zero_value(t) for name, t in tree[1]}


def _opt_str(node, path: str):
    if node is None or isinstance(node, str):
        return node
    raise JsonFormError(f"{path} is a string or null, not {_kind(node)}")


def _read_tensor(node, path: str) -> K.Tensor:
    m = _members(node, path, "a tensor object")
    known = {"name", "dtype", "shape", "layout", "block_size", "quant", "hex"}
    for key in known:
        if key not in m:
            if key == "hex" and "preview" in m:
                raise JsonFormError(f"{path} is a --preview of a tensor; it "
                                    "cannot be encoded")
            raise JsonFormError(f"{path} has no member {key!r}")
    for key in m:
        if key not in known:
            raise JsonFormError(f"{path} has an unknown member {key!r}")
    dtype = m["dtype"]
    if isinstance(dtype, str):
        if dtype not in K.DTYPE_CODES:
            raise JsonFormError(f"{path}.dtype: {dtype!r} is not a Kiln dtype")
        code = K.DTYPE_CODES[dtype]
    else:
        code = _integer(dtype, f"{path}.dtype")
    shape = m["shape"]
    if not isinstance(shape, list):
        raise JsonFormError(f"{path}.shape is an array")
    dims = tuple(_integer(d, f"{path}.shape[{i}]")
                 for i, d in enumerate(shape))
    quant = m["quant"]
    fields = dict(quant_scheme=0, quant_axis=K.NO_AXIS, group_size=0,
                  scale_index=K.NO_INDEX, outer_index=K.NO_INDEX)
    if quant is not None:
        q = _members(quant, f"{path}.quant", "null or an object")
        for key in q:
            if key not in ("axis", "group_size", "scales", "outer"):
                raise JsonFormError(f"{path}.quant has an unknown member "
                                    f"{key!r}")
        for key in ("axis", "group_size", "scales"):
            if key not in q:
                raise JsonFormError(f"{path}.quant has no member {key!r}")
        fields.update(
            quant_scheme=2 if "outer" in q else 1,
            quant_axis=_integer(q["axis"], f"{path}.quant.axis"),
            group_size=_integer(q["group_size"], f"{path}.quant.group_size"),
            scale_index=_integer(q["scales"], f"{path}.quant.scales"))
        if "outer" in q:
            fields["outer_index"] = _integer(q["outer"], f"{path}.quant.outer")
    return K.Tensor(
        dtype=code, shape=dims, payload=_hex(m["hex"], f"{path}.hex"),
        name=_opt_str(m["name"], f"{path}.name"),
        layout=_opt_str(m["layout"], f"{path}.layout"),
        block_size=_integer(m["block_size"], f"{path}.block_size"), **fields)


def from_json(tree, node, path: str = "$"):
    """A reference-codec value from parsed JSON (``_parse``'s shapes)."""
    tree = K._tree(tree)
    kind = tree[0]
    if kind == "bool":
        if node is True or node is False:
            return node
        raise JsonFormError(f"{path}: expected true or false, found "
                            f"{_kind(node)}")
    if kind in INT_RANGES:
        n = _integer(node, path)
        lo, hi = INT_RANGES[kind]
        if not lo <= n <= hi:
            raise JsonFormError(f"{path}: {n} is outside the range of {kind}")
        return n
    if kind == "f32":
        return _f32(node, path)
    if kind == "f64":
        return _f64(node, path)
    if kind == "str":
        if isinstance(node, str):
            return node
        raise JsonFormError(f"{path}: expected a string, found {_kind(node)}")
    if kind == "tensors":
        if not isinstance(node, list):
            raise JsonFormError(f"{path}: expected an array of tensors")
        return K.Directory(tuple(_read_tensor(t, f"{path}[{i}]")
                                 for i, t in enumerate(node)))
    if K._is_bytes_type(tree):
        return _hex(node, path)
    if kind == "list":
        if _zero_size(tree[1]):
            m = _members(node, path, '{"count": N}')
            if set(m) != {"count"}:
                raise JsonFormError(f'{path} is {{"count": N}}')
            count = _integer(m["count"], f"{path}.count")
            if not 0 <= count <= K.U32_MAX:
                raise JsonFormError(f"{path}.count is outside 0..2^32-1")
            return [_zero_value(tree[1])] * count
        if not isinstance(node, list):
            raise JsonFormError(f"{path}: expected an array, found "
                                f"{_kind(node)}")
        return [from_json(tree[1], item, f"{path}[{i}]")
                for i, item in enumerate(node)]
    if kind == "opt":
        if node is None:
            return None
        if tree[1][0] == "opt":
            m = _members(node, path, '{"some": value}')
            if set(m) != {"some"}:
                raise JsonFormError(f'{path} is null or {{"some": value}}')
            node = m["some"]
        return K.Some(from_json(tree[1], node, path))
    if kind == "dict":
        m = _members(node, path, "an object")
        return {key: from_json(tree[1], item, f"{path}[{json.dumps(key)}]")
                for key, item in m.items()}
    if kind == "struct":
        m = _members(node, path, "an object")
        names = [name for name, _ in tree[1]]
        for key in m:
            if key not in names:
                raise JsonFormError(f"{path} has an unknown member {key!r}")
        out = {}
        for name, t in tree[1]:
            if name not in m:
                raise JsonFormError(f"{path} has no member {name!r}")
            out[name] = from_json(t, m[name], f"{path}.{name}")
        return out
    raise K.UsageError(f"not a type tree: {tree!r}")


def _parse(text: str):
    try:
        return json.loads(text, parse_float=_Num, parse_int=_Num,
                          parse_constant=_no_constant,
                          object_pairs_hook=_Obj)
    except json.JSONDecodeError as exc:
        raise JsonFormError(f"not JSON: {exc}") from None


def loads(tree, text: str):
    """The reference-codec value of JSON text of type ``tree``."""
    return from_json(tree, _parse(text))
