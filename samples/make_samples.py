"""Writes the bundled sample messages and their manifest, with the Python
reference encoder (so the Rust reader is checked against an independent
writer).  Run from anywhere:  python3 samples/make_samples.py
Deterministic: running it again changes nothing."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "spec", "reference"))

import kiln_ref as k  # noqa: E402

F32, BF16, U4, E2M1, E8M0, F8E4M3 = 2, 4, 17, 18, 19, 5


def directory():
    """A small model shard: named tensors, an MXFP4 block with its scale,
    and a foreign Q4_K block."""
    return k.Directory((
        k.Tensor(F32, (2, 3), k.pack_f32([0.5, -1.0, 2.0, 0.0, 1.5, -2.5]), name="embed"),
        k.Tensor(BF16, (4,), k.pack_bf16([1.0, 0.5, -0.25, 8.0]), name="norm"),
        k.Tensor(E2M1, (32,), bytes(range(16)), name="mlp.w",
                 quant_scheme=1, quant_axis=0, group_size=32, scale_index=3),
        k.Tensor(E8M0, (1,), bytes([127]), name="mlp.scale"),
        k.Tensor(U4, (5,), k.pack_nibbles([1, 2, 3, 4, 5]), name="codes"),
        k.Tensor(4096, (1,), bytes(18), name="q4k", layout="Q4_K", block_size=18),
    ))


BATCH = "struct{id:i64,name:str,batch:tensors,}"
READINGS = "list<struct{t:u64,v:f32,ok:bool,}>"


def samples():
    shard = k.encode_directory(directory().tensors)
    batch = k.encode_frame(BATCH, {"id": 7, "name": "probe-7", "batch": directory()})
    readings = k.encode(READINGS, [
        {"t": 1000 + i, "v": k.Float32.from_float(i * 0.25), "ok": i % 3 != 0} for i in range(8)
    ])
    bad_name = bytearray(shard)
    heap = 64 + 6 * 128
    bad_name[heap] = 0xFF
    return [
        # file, type, framed, expected verdict, what it shows
        ("shard.kiln", "tensors", False, shard, "accept", "a bare tensor directory"),
        ("batch.kiln", BATCH, True, batch, "accept", "a framed record carrying a directory"),
        ("readings.kiln", READINGS, False, readings, "accept", "a list of small structs"),
        ("batch-truncated.kiln", BATCH, True, batch[:-5], "EOF", "the last payload bytes are missing"),
        ("shard-bad-name.kiln", "tensors", False, bytes(bad_name), "UTF8", "a tensor name that is not UTF-8"),
        ("batch-wrong-type.kiln", "struct{id:i64,batch:tensors,}", True, batch, "SCHEMA",
         "read as another type: the frame hash differs"),
    ]


def main():
    lines = ["# file\ttype\tframed\texpect\twhat it shows"]
    for name, type_text, framed, data, expect, note in samples():
        verdict = "accept"
        try:
            k.check(type_text, data, framed=framed)
        except k.KilnError as e:
            verdict = e.code
        if verdict != expect:
            sys.exit(f"make_samples: {name}: reference says {verdict}, expected {expect}")
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        lines.append(f"{name}\t{type_text}\t{'framed' if framed else 'plain'}\t{expect}\t{note}")
    with open(os.path.join(HERE, "manifest.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
