#!/usr/bin/env python3
"""Writes the model of the model-update test (tests/firmware/update-run.sh)
with the Python reference codec, independent of the Rust encoder. The
transfers (the model in enveloped chunks, good and damaged) are written from
these files by kiln-nostd's model_transfer example.

    make_model.py OUT_DIR

OUT_DIR/model.kiln     the model (version 3)
OUT_DIR/old.kiln       the model the device has before it (version 2: other
                       weights, weight[r][c] = ((r*128 + c) % 89) * 0.5 - 20,
                       bias r * 0.25), installed by the first transfer
OUT_DIR/bad-name.kiln  the same with one byte the check sees flipped (the first
                       byte of the tensor name "weight" becomes 0xFF: not UTF-8);
                       sent with good CRCs, refused by the streaming check
OUT_DIR/offsets        "NAME OFFSET" lines: the model's length, the first byte
                       of the name "weight", a byte in the middle of the
                       weight payload (a flip there passes every rule of the
                       format: every bit pattern is an f32; only the CRC sees
                       it), the last byte

The model is struct{version:u32,layer:tensors,note:str,}: version 3, "bias" f32 [96]
and "weight" f32 [96, 128] (weight[r][c] = ((r*128 + c) % 97) * 0.25 - 12),
and the note "kiln model update"; about 50 KB, more than the 32 KB of RAM of
the firmware's nRF51822.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "spec" / "reference"))
import kiln_ref  # noqa: E402

MODEL_TYPE = "struct{version:u32,layer:tensors,note:str,}"
ROWS, COLS = 96, 128
F32 = kiln_ref.DTYPE_CODES["f32"]
# After the tensors; its length makes the message end inside a flash word.
NOTE = "kiln model update"


def model(version: int = 3) -> bytes:
    if version == 3:
        weight = [((i % 97) * 0.25 - 12.0) for i in range(ROWS * COLS)]
        bias = [r * 0.5 for r in range(ROWS)]
    else:
        weight = [((i % 89) * 0.5 - 20.0) for i in range(ROWS * COLS)]
        bias = [r * 0.25 for r in range(ROWS)]
    layer = kiln_ref.Directory((
        kiln_ref.Tensor(dtype=F32, shape=(ROWS,), payload=kiln_ref.pack_f32(bias), name="bias"),
        kiln_ref.Tensor(dtype=F32, shape=(ROWS, COLS), payload=kiln_ref.pack_f32(weight),
                        name="weight"),
    ))
    message = kiln_ref.encode(MODEL_TYPE, {"version": version, "layer": layer, "note": NOTE})
    assert len(message) % 4 != 0, "the message should end inside a flash word"
    kiln_ref.check(MODEL_TYPE, message)
    return message


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    message = model()
    (out / "model.kiln").write_bytes(message)
    (out / "old.kiln").write_bytes(model(2))

    bad = bytearray(message)
    name = bad.index(b"weight")
    bad[name] = 0xFF
    (out / "bad-name.kiln").write_bytes(bytes(bad))

    # The weight payload ends the tensors block, before the note; a byte in
    # the middle of it, which no rule of the format reads.
    weight = len(message) - 4 - len(NOTE) - ROWS * COLS * 2
    flipped = bytearray(message)
    flipped[weight] ^= 0x01
    kiln_ref.check(MODEL_TYPE, bytes(flipped))
    (out / "offsets").write_text(
        f"length {len(message)}\nname {name}\nweight {weight}\nlast {len(message) - 1}\n")
    print(f"make_model: {len(message)} byte model in {out}")


if __name__ == "__main__":
    main()
