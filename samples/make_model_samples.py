"""Writes two tiny model files for `kiln inspect` and `kiln convert`:
samples/tiny.safetensors and samples/tiny.gguf, with the standard library
only (the layouts are small enough to write by hand: safetensors is an
8-byte length, a JSON header padded with spaces to a multiple of 8, then the
data; GGUF v3 is a header, metadata pairs, tensor infos, zero padding to 32
bytes, then each tensor's data padded to 32). Run from anywhere:

    python3 samples/make_model_samples.py

Deterministic: running it again changes nothing. The `cli` stage checks that
the files are current, and tests/cli/test_samples.py reads them with the
safetensors library and gguf-py when those are installed.
"""

import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def f32(values):
    return b"".join(struct.pack("<f", v) for v in values)


def safetensors() -> bytes:
    # In the safetensors writer's order (by descending dtype alignment, then
    # by name) and with one metadata key, so the file is what that writer
    # writes, and `kiln convert` to Kiln and back gives it back byte for byte.
    tensors = [  # name, dtype, shape, data, in data order
        ("positions", "I64", [3], b"".join(struct.pack("<q", i) for i in (0, 1, -1))),
        ("embed.weight", "F32", [3, 4], f32([i * 0.5 - 2 for i in range(12)])),
        ("norm.bias", "BF16", [4], bytes.fromhex("803f003f80be0041")),
    ]
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors)


def gguf_string(s: str) -> bytes:
    raw = s.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf() -> bytes:
    UINT32, FLOAT32, STRING, ARRAY = 4, 6, 8, 9
    metadata = [
        ("general.architecture", STRING, gguf_string("llama")),
        ("general.name", STRING, gguf_string("kiln tiny sample")),
        ("llama.context_length", UINT32, struct.pack("<I", 64)),
        ("tokenizer.ggml.tokens", ARRAY,
         struct.pack("<IQ", STRING, 3) + b"".join(gguf_string(t) for t in ("<s>", "</s>", "é"))),
        ("tokenizer.ggml.scores", ARRAY, struct.pack("<IQ", FLOAT32, 3) + f32([0.0, -1.0, -2.5])),
    ]
    # ggml types: F32 = 0, Q8_0 = 8 (blocks of 32 elements in 34 bytes).
    q8_block = struct.pack("<e", 0.5) + bytes(range(32))
    tensors = [  # name, GGUF dims (innermost first), ggml type, data
        ("token_embd.weight", [4, 3], 0, f32([i / 4 for i in range(12)])),
        ("blk.0.attn_q.weight", [32, 2], 8, q8_block * 2),
        ("output_norm.weight", [4], 0, f32([1.0, 1.0, 0.5, 0.25])),
    ]
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, kind, value in metadata:
        out += gguf_string(key) + struct.pack("<I", kind) + value
    offset = 0
    for name, dims, kind, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", kind, offset)
        offset += len(data) + (-len(data) % 32)
    out += bytes(-len(out) % 32)
    for _, _, _, data in tensors:
        out += data + bytes(-len(data) % 32)
    return out


def main():
    for name, data in (("tiny.safetensors", safetensors()), ("tiny.gguf", gguf())):
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
