#!/usr/bin/env python3
"""Writes the transfers of the model-update test (tests/firmware/update-run.sh)
with the Python reference codec, independent of the Rust encoder.

    make_model.py OUT_DIR

OUT_DIR/good.bin     the model, framed for the link as the firmware reads it
                     today: b"KLNU", the message length (u32 LE), the message
OUT_DIR/corrupt.bin  the same with one byte the check sees flipped (the first
                     byte of the tensor name "weight" becomes 0xFF: not UTF-8)
OUT_DIR/payload.bin  the same with one byte of the weight payload flipped: no
                     rule of the format sees it (every bit pattern is an f32);
                     only a checksum over the transfer (the envelope) would
OUT_DIR/oversize.bin a header announcing more bytes than the model region holds
                     (refused before a byte is written)

The model is struct{version:u32,layer:tensors,note:str,}: version 3, "bias" f32 [96]
and "weight" f32 [96, 128] (weight[r][c] = ((r*128 + c) % 97) * 0.25 - 12),
and the note "kiln model update"; about 50 KB, more than the 32 KB of RAM of
the firmware's nRF51822.
"""

import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "spec" / "reference"))
import kiln_ref  # noqa: E402

MODEL_TYPE = "struct{version:u32,layer:tensors,note:str,}"
ROWS, COLS = 96, 128
F32 = kiln_ref.DTYPE_CODES["f32"]
# After the tensors; its length makes the message end inside a flash word.
NOTE = "kiln model update"
# One byte more than the firmware's model region (src/bin/update.rs).
OVERSIZE = 0x2_0000 + 1


def model() -> bytes:
    weight = [((i % 97) * 0.25 - 12.0) for i in range(ROWS * COLS)]
    bias = [r * 0.5 for r in range(ROWS)]
    layer = kiln_ref.Directory((
        kiln_ref.Tensor(dtype=F32, shape=(ROWS,), payload=kiln_ref.pack_f32(bias), name="bias"),
        kiln_ref.Tensor(dtype=F32, shape=(ROWS, COLS), payload=kiln_ref.pack_f32(weight),
                        name="weight"),
    ))
    message = kiln_ref.encode(MODEL_TYPE, {"version": 3, "layer": layer, "note": NOTE})
    assert len(message) % 4 != 0, "the message should end inside a flash word"
    kiln_ref.check(MODEL_TYPE, message)
    return message


def transfer(message: bytes) -> bytes:
    return b"KLNU" + struct.pack("<I", len(message)) + message


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    message = model()
    (out / "good.bin").write_bytes(transfer(message))

    corrupt = bytearray(message)
    at = corrupt.index(b"weight")
    corrupt[at] = 0xFF
    (out / "corrupt.bin").write_bytes(transfer(bytes(corrupt)))

    payload = bytearray(message)
    # The weight payload ends the tensors block, before the note; flip a
    # bit in the middle of it.
    at = len(payload) - 4 - len(NOTE) - ROWS * COLS * 2
    payload[at] ^= 0x01
    kiln_ref.check(MODEL_TYPE, bytes(payload))
    (out / "payload.bin").write_bytes(transfer(bytes(payload)))
    (out / "oversize.bin").write_bytes(b"KLNU" + struct.pack("<I", OVERSIZE) + message[:64])
    print(f"make_model: {len(message)} byte model, transfers in {out}")


if __name__ == "__main__":
    main()
