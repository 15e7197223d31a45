"""What the reference tests share about the golden cases file: loading it,
the limits a case runs under, and decoding a case's bytes then writing the
value again."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "spec" / "reference"))

import kiln_ref as K  # noqa: E402

CASES_PATH = ROOT / "spec" / "kiln-v2-cases.json"


def load_cases():
    with open(CASES_PATH, encoding="utf-8") as f:
        return json.load(f)


def limits_of(case):
    return K.Limits.both(case["cap"]) if "cap" in case else K.Limits()


def reencode(case, data, limits):
    """Decodes `data` as the case's type (framed or not) and encodes the
    value again; a KilnError from the decoder propagates."""
    tree = K.parse_type(case["type"])
    if case["framed"]:
        return K.encode_frame(tree, K.decode_frame(tree, data, limits), limits)
    return K.encode(tree, K.decode(tree, data, limits), limits)
