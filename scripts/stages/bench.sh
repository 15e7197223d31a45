# The `bench` stage of scripts/test.sh: a smoke run of the benchmark
# command (scripts/bench.sh --quick), so that it cannot rot. Sourced by
# test.sh, which runs stage_bench from the repository root in a subshell
# with `set -e`. Tiny sizes, one round of each case, the firmware
# footprint bins built and sized, `kiln convert` on a small file: it fails
# when the driver, a case, a build or a tool fails, never on a time.
# Well under a minute once the test stage has built the workspace.

stage bench "smoke run of the benchmark table (scripts/bench.sh --quick), no assertion on time"
stage_bench() {
    bash scripts/bench.sh --quick
}
