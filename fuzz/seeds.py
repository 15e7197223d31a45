"""Writes the fuzz targets' seed corpora (fuzz/corpus/TARGET/) from the
golden cases, the samples, fuzz/seeds/ and a few hostile inputs, in each
target's input form (see fuzz/src/lib.rs). Unseeded, libFuzzer rarely gets
past the KLNT magic.

    python3 fuzz/seeds.py [CORPUS_DIR]      # default fuzz/corpus

Existing files are kept (a corpus grows across runs); seeds are named by
their content's hash, so rerunning adds nothing twice.
"""

import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "spec", "reference"))

import kiln_ref as K  # noqa: E402

TYPES = [t for t in open(os.path.join(HERE, "types.txt")).read().split("\n") if t]

# The derived structs of fuzz_targets/typed.rs, as type text.
POINT = "struct{x:i16,y:opt<u8>,}"
BORROWED = ("struct{id:i64,name:str,blob:list<u8>,tags:dict<str,str>,"
            f"points:list<{POINT}>,values:list<f32>,note:opt<str>,"
            "empties:list<struct{}>,batch:tensors,}")
OWNED = ("struct{id:uint,name:str,words:list<str>,flags:list<bool>,"
         f"nested:list<list<struct{{}}>>,maybe:opt<list<{POINT}>>,"
         "small:list<u16>,map:dict<str,u32>,deep:opt<opt<opt<u8>>>,}")


def header(type_text: str, framed: bool, cap) -> bytes:
    index = TYPES.index(type_text)
    assert index < 256, "types.txt has more than 256 lines"
    return bytes([index, 1 if framed else 0]) + (cap or 0).to_bytes(4, "little")


def typed_seeds():
    f32 = K.Float32.from_float
    directory = K.Directory((K.Tensor(2, (2,), K.pack_f32([1.0, -2.0]), name="w"),))
    borrowed = {"id": -7, "name": "probe", "blob": b"\x00\xff", "tags": {"a": "x", "b": ""},
                "points": [{"x": 1, "y": None}, {"x": -2, "y": K.Some(3)}],
                "values": [f32(0.5), f32(-0.0)], "note": K.Some("n"),
                "empties": [{}] * 3, "batch": directory}
    owned = {"id": 1 << 63, "name": "o", "words": ["a", "bc"], "flags": [True, False],
             "nested": [[{}] * 2, []], "maybe": K.Some([{"x": 5, "y": K.Some(1)}]),
             "small": [1, 2, 3], "map": {"k": 1, "l": 2},
             "deep": K.Some(K.Some(None))}
    yield bytes([0]) + K.encode(BORROWED, borrowed)
    yield bytes([1]) + K.encode_frame(BORROWED, borrowed)
    yield bytes([2]) + K.encode(OWNED, owned)
    yield bytes([3]) + K.encode_frame(OWNED, owned)


def hostile():
    """Inputs that once took unbounded time, as (type, bytes)."""
    yield "list<list<struct{}>>", (255).to_bytes(4, "little") + (1 << 24).to_bytes(4, "little") * 255
    yield "list<struct{}>", (1 << 24).to_bytes(4, "little")
    yield "dict<str,list<struct{}>>", ((1).to_bytes(4, "little") + (1).to_bytes(4, "little")
                                       + b"k" + (1 << 24).to_bytes(4, "little"))


def main() -> int:
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
    with open(os.path.join(ROOT, "spec", "kiln-v2-cases.json")) as f:
        cases = json.load(f)
    seeds = {t: [] for t in ("directory", "check", "walk_value", "typed", "roundtrip",
                             "convert", "header", "slow", "wasm", "envelope", "stream")}
    for case in cases:
        data = bytes.fromhex(case["hex"])
        typed = header(case["type"], case["framed"], case.get("cap")) + data
        for target in ("check", "walk_value", "slow", "stream"):
            seeds[target].append(typed)
        # envelope: [buffer length / 16][split][stream]; the target seals
        # the first half of the stream itself.
        seeds["envelope"].append(bytes([255, 7]) + data)
        # wasm: [type][flags][cap][first u64][count u64][bytes]; flag bit 1
        # pads the file past 1 MiB (the large-file path).
        ranges = (1).to_bytes(8, "little") + (16).to_bytes(8, "little")
        seeds["wasm"].append(typed[:6] + ranges + data)
        if case["expect"] == "accept":
            large = bytes([typed[0], typed[1] | 2]) + typed[2:6]
            huge = (1 << 62).to_bytes(8, "little") + (1 << 63).to_bytes(8, "little")
            seeds["wasm"].append(large + ranges + data)
            seeds["wasm"].append(typed[:6] + huge + data)
        if case["type"] == "tensors" and not case["framed"]:
            seeds["directory"].append(data)
            seeds["slow"].append(data)
    for type_text, data in hostile():
        for target in ("check", "walk_value", "slow", "stream"):
            seeds[target].append(header(type_text, False, None) + data)
    seeds["typed"].extend(typed_seeds())
    convert_dir = os.path.join(HERE, "seeds", "convert")
    for name in sorted(os.listdir(convert_dir)):
        data = open(os.path.join(convert_dir, name), "rb").read()
        if name.endswith(".safetensors"):
            picks = [0]
            seeds["header"].append(data)
        elif name.endswith(".gguf"):
            picks = [1]
        else:  # a Kiln message: to both formats
            picks = [2, 3]
        for pick in picks:
            seeds["convert"].append(bytes([pick]) + data)
        seeds["slow"].append(data)
    seeds["roundtrip"].append(bytes(64))
    total = 0
    for target, items in seeds.items():
        path = os.path.join(corpus, target)
        os.makedirs(path, exist_ok=True)
        for data in items:
            name = hashlib.sha1(data).hexdigest()
            with open(os.path.join(path, name), "wb") as f:
                f.write(data)
        total += len(items)
    print(f"seeds: {total} seeds for {len(seeds)} targets in {corpus}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
