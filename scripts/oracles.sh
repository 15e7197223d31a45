#!/usr/bin/env bash
# Installs the PyPI packages of the numeric oracles (tests/oracles), at
# pinned versions, when they are missing: ml_dtypes (bfloat16, float8_e4m3fn,
# float8_e5m2, float4_e2m1fn, float8_e8m0fnu, int4, uint4) and the numpy it
# runs on (the version scripts/convert-fixtures.sh pins too).
#
#   bash scripts/oracles.sh      install what is missing (as root)
set -euo pipefail

ORACLE_PIP_PINS=(
    ml_dtypes==0.6.0
    numpy==2.4.6
)

missing=()
for pin in "${ORACLE_PIP_PINS[@]}"; do
    name="${pin%%==*}"
    want="${pin#*==}"
    have="$(python3 -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' "$name" 2>/dev/null || true)"
    [ "$have" = "$want" ] || missing+=("$pin")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "oracles: pinned PyPI packages present (${ORACLE_PIP_PINS[*]})"
    exit 0
fi
command=(python3 -m pip install --no-deps --disable-pip-version-check "${missing[@]}")
if [ "$(id -u)" -ne 0 ]; then
    echo "oracles: missing ${missing[*]}; run as root:" >&2
    echo "    ${command[*]}" >&2
    exit 1
fi
echo "oracles: ${command[*]}"
"${command[@]}"
