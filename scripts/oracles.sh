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

source "$(dirname "$0")/pip-pins.sh"
install_pip_pins oracles "${ORACLE_PIP_PINS[@]}"
