"""Writes test GGUF files with gguf-py's own writer (the `gguf` package).

    python3 tests/convert/make_gguf.py OUTDIR

Each file exercises part of the GGUF -> Kiln -> GGUF round trip:

- quant32.gguf: default alignment (32); F32, F16, BF16 and the block types
  gguf-py can quantize (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, TQ1_0, TQ2_0, MXFP4),
  Q4_K and Q6_K blocks as raw bytes, I8/I16/I32/I64/F64 tensors, 1-D to 4-D
  shapes, and every metadata value type (arrays, nested and mixed nested
  arrays, non-ASCII keys and strings, NaN and -0.0 floats).
- align64.gguf: general.alignment = 64, odd tensor sizes so the padding
  matters, plus a rank-0 scalar.
- vocab_only.gguf: metadata and no tensors.

Nothing here is committed output: the test driver writes into a temporary
directory at test time. Deterministic: a fixed seed, so two runs write the
same bytes.
"""

import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q
from gguf import GGUFValueType as V

# Block types gguf-py 0.19 has a quantizer for, by name. Checked against the
# installed package so a newer gguf-py that adds or drops one is noticed.
QUANTIZED = ["BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "TQ1_0", "TQ2_0", "MXFP4"]
RAW_BLOCKS = ["Q4_K", "Q6_K"]


def quantizable() -> list[str]:
    """Names of the types `gguf.quants.quantize` can produce here."""
    names = []
    probe = np.linspace(-1, 1, 256 * 2, dtype=np.float32).reshape(2, 256)
    for t in Q:
        try:
            gguf.quants.quantize(probe, t)
        except Exception:  # noqa: BLE001 - NotImplementedError or QuantError
            continue
        names.append(t.name)
    return names


def add_every_value_type(w: gguf.GGUFWriter) -> None:
    w.add_uint8("test.u8", 255)
    w.add_int8("test.i8", -128)
    w.add_uint16("test.u16", 65535)
    w.add_int16("test.i16", -32768)
    w.add_uint32("test.u32", 4_000_000_000)
    w.add_int32("test.i32", -2_000_000_000)
    w.add_float32("test.f32", -0.0)
    w.add_float32("test.f32_nan", float("nan"))
    w.add_uint64("test.u64", 2**64 - 1)
    w.add_int64("test.i64", -(2**63))
    w.add_float64("test.f64", 1.0 / 3.0)
    w.add_bool("test.true", True)
    w.add_bool("test.false", False)
    w.add_string("test.ascii", "kiln")
    w.add_string("test.unicode", "héllo wörld ✓ 日本語 🔥")
    w.add_string("тест.ключ", "non-ASCII key")
    for vt, values in [
        (V.UINT8, [0, 1, 255]),
        (V.INT8, [-128, 0, 127]),
        (V.UINT16, [0, 65535]),
        (V.INT16, [-32768, 32767]),
        (V.UINT32, [0, 2**32 - 1]),
        (V.INT32, [-(2**31), 2**31 - 1]),
        (V.FLOAT32, [1.5, -0.0, float("inf")]),
        (V.UINT64, [0, 2**64 - 1]),
        (V.INT64, [-(2**63), 2**63 - 1]),
        (V.FLOAT64, [2.5, float("-inf")]),
        (V.BOOL, [True, False, True]),
        (V.STRING, ["a", "ß", "✓✓", ""]),
    ]:
        w.add_key_value(f"test.array.{vt.name.lower()}", values, V.ARRAY, sub_type=vt)
    w.add_array("test.array.nested", [[1, 2, 3], [4], [5, 6]])
    w.add_array("test.array.nested_mixed", [[1, 2], ["x", "yé"], [True]])
    w.add_array("test.array.nested_deep", [[[1], [2, 3]], [["deep"]]])
    w.add_array("tokenizer.ggml.tokens", [f"tok{i}" for i in range(300)] + ["<0x0A>", "▁the"])
    w.add_array("tokenizer.ggml.scores", [float(-i) for i in range(302)])


def add_plain_tensors(w: gguf.GGUFWriter, rng: np.random.Generator) -> None:
    w.add_tensor("plain.f32", rng.standard_normal((3, 5, 7), dtype=np.float32))
    w.add_tensor("plain.f16", rng.standard_normal((4, 33)).astype(np.float16))
    w.add_tensor("plain.f64", rng.standard_normal((2, 3)).astype(np.float64))
    w.add_tensor("plain.i8", rng.integers(-128, 128, (2, 2, 3, 5), dtype=np.int8))
    w.add_tensor("plain.i16", rng.integers(-(2**15), 2**15, (9,), dtype=np.int16))
    w.add_tensor("plain.i32", rng.integers(-(2**31), 2**31, (3, 3), dtype=np.int32))
    w.add_tensor("plain.i64", rng.integers(-(2**63), 2**63 - 1, (5,), dtype=np.int64))


def add_block_tensors(w: gguf.GGUFWriter, rng: np.random.Generator) -> None:
    data = rng.standard_normal((4, 512), dtype=np.float32)
    for name in QUANTIZED:
        qtype = Q[name]
        q = gguf.quants.quantize(data, qtype)
        w.add_tensor(f"quant.{name.lower()}", q, raw_dtype=qtype)
    for name in RAW_BLOCKS:
        qtype = Q[name]
        _, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
        raw = rng.integers(0, 256, (3, 2 * block_bytes), dtype=np.uint8)
        w.add_tensor(f"raw.{name.lower()}", raw, raw_dtype=qtype)


def write(w: gguf.GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def make_all(outdir: Path) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    missing = [n for n in QUANTIZED if n not in quantizable()]
    if missing:
        raise SystemExit(f"gguf {gguf.__name__}: no quantizer for {missing}")
    rng = np.random.default_rng(20260101)
    paths = []

    path = outdir / "quant32.gguf"
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("kiln test: every type")
    add_every_value_type(w)
    add_plain_tensors(w, rng)
    add_block_tensors(w, rng)
    write(w)
    paths.append(path)

    path = outdir / "align64.gguf"
    w = gguf.GGUFWriter(path, "llama")
    w.add_custom_alignment(64)
    w.add_string("general.description", "alignment 64")
    w.add_tensor("odd.f32", rng.standard_normal((3,), dtype=np.float32))
    w.add_tensor("odd.q8_0", gguf.quants.quantize(rng.standard_normal((1, 32), dtype=np.float32), Q.Q8_0), raw_dtype=Q.Q8_0)
    w.add_tensor("odd.i8", rng.integers(-128, 128, (5,), dtype=np.int8))
    w.add_tensor("scalar.f32", np.array(1.25, dtype=np.float32))
    w.add_tensor("odd.mxfp4", gguf.quants.quantize(rng.standard_normal((2, 64), dtype=np.float32), Q.MXFP4), raw_dtype=Q.MXFP4)
    write(w)
    paths.append(path)

    path = outdir / "vocab_only.gguf"
    w = gguf.GGUFWriter(path, "llama")
    w.add_array("tokenizer.ggml.tokens", ["<s>", "</s>", "é"])
    w.add_uint32("general.alignment", 32)
    write(w)
    paths.append(path)
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: make_gguf.py OUTDIR")
    for p in make_all(Path(sys.argv[1])):
        print(p)
