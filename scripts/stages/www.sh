# The browser stages of scripts/test.sh. Sourced by test.sh, which runs
# each stage_* function from the repository root in a subshell with
# `set -e`:
#
#   source "$ROOT/scripts/stages/www.sh"   # next to the other stage_* functions
#   ALL_STAGES=(... wasm-js www ...)
#
# wasm-js  clippy for wasm32; kiln-wasm's JS layer under wasm-bindgen-test
#          (tests/wasm.rs): in node, then in headless Chromium through
#          chromedriver. (Its Rust logic is tested on the host in the
#          `test` stage.)
# www      the two modules with wasm-opt -Oz and their budgets
#          (scripts/www.sh --build-only): the core, kiln-wasm, into
#          www/pkg/, the inspector's, kiln-wasm-inspect (the core plus
#          openFile for every format, the JSON form, FileSet, TensorDiff),
#          into www/inspect/; www/samples/ is what the
#          samples example writes; the module packed (npm pack) and used
#          from a plain node script (tests/e2e/packed.mjs); the ES module package from plain JS
#          (tests/e2e/module.test.mjs, node's test runner); the inspector
#          end to end in headless Chromium driven by playwright-core at
#          1,280 px (tests/e2e/inspector.test.mjs: files read by ranges,
#          asynchronously, in a Web Worker; 6 GiB sparse Kiln, safetensors
#          and GGUF files written and deleted by the test; HTTP Range
#          requests to www/serve.mjs, whose log shows no probe and no
#          request after a cancel; statistics from a bounded sample; full
#          tensor names); sets of files and the comparison of two models
#          (tests/e2e/compare.test.mjs: the known differences of
#          www/samples/compare/, 256 MiB compared in chunks and cancelled;
#          a Llama-shaped safetensors file converted by kiln convert
#          (cargo run -p kiln-cli) and compared with its source; Kiln,
#          safetensors-with-index and GGUF split sets of
#          www/samples/shards/, a bad index, a split file or shard opened
#          alone, several files dropped on the page); screenshots in
#          target/e2e-screenshots/. Then json.test.mjs: the CLI's and the
#          module's JSON of every sample, converted model, set, safetensors
#          and GGUF file, byte for byte. Then the latency run
#          (tests/e2e/latency.test.mjs): URL to table for a Llama-2-7B-,
#          a Qwen3- and a gpt-oss-shaped GGUF and a 20,046-tensor
#          safetensors file (sparse, in target/e2e-files/latency/), at 0
#          and 50 ms a request, Kiln's module in node and its page in
#          Chromium beside @huggingface/gguf and @huggingface/hub; every
#          answer checked, the times printed as a table and one summary
#          line per file, never asserted.
#
# What they need (Debian's chromium and chromium-driver, the npm packages
# of tests/e2e/package-lock.json) is installed by scripts/setup.sh.

stage wasm-js "kiln-wasm's JS layer in node and headless Chromium"
stage_wasm-js() {
    # Lints for the browser's target: the tests, and the module's no_std build.
    cargo clippy -p kiln-wasm --target wasm32-unknown-unknown --all-targets -- -D warnings
    cargo clippy -p kiln-wasm --target wasm32-unknown-unknown --features module --lib -- -D warnings
    cargo clippy -p kiln-wasm-inspect --target wasm32-unknown-unknown --lib -- -D warnings
    local tests=(cargo test -p kiln-wasm --target wasm32-unknown-unknown --features inspector --test wasm)
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner "${tests[@]}"
    echo "--- the same tests in headless Chromium"
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
        CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver)}" WASM_BINDGEN_USE_BROWSER=1 \
        "${tests[@]}"
}

stage www "the browser modules within their size budgets, the package from JS, the inspector in Chromium"
stage_www() {
    bash scripts/www.sh --build-only
    cargo run -q -p kiln-wasm --example make_samples
    git diff --exit-code -- www/samples/ || {
        echo "www/samples/ is stale: run cargo run -p kiln-wasm --example make_samples"
        return 1
    }
    # The large files of the end-to-end tests, written by the same example.
    export KILN_E2E_DIR="$ROOT/target/e2e-files"
    mkdir -p "$KILN_E2E_DIR"
    [ -f "$KILN_E2E_DIR/many.kiln" ] ||
        cargo run -q -p kiln-wasm --example make_samples -- --many "$KILN_E2E_DIR/many.kiln"
    [ -f "$KILN_E2E_DIR/big.kiln" ] ||
        cargo run -q -p kiln-wasm --example make_samples -- --big "$KILN_E2E_DIR/big.kiln"
    # The module as an npm package: packed, installed into a scratch
    # project, used from a plain node script (initSync).
    local npm_dir="${CARGO_TARGET_DIR:-$ROOT/target}/npm"
    rm -rf "$npm_dir" && mkdir -p "$npm_dir/project"
    (cd www/pkg && npm pack --silent --pack-destination "$npm_dir" >/dev/null)
    (cd "$npm_dir/project" && echo '{"name":"packed-user","private":true,"type":"module"}' >package.json &&
        npm install --silent --no-audit --no-fund --offline "$npm_dir"/kiln-wasm-*.tgz)
    node tests/e2e/packed.mjs "$npm_dir/project"
    (cd tests/e2e && node --test module.test.mjs inspector.test.mjs compare.test.mjs)
    # On its own, after the others: its times are the machine's alone.
    (cd tests/e2e && node --test latency.test.mjs)
    # One JSON form: `kiln inspect --json` and the module's json() side by
    # side on every file of the suite (the latency files included).
    cargo build -q -p kiln-cli
    (cd tests/e2e && node --test json.test.mjs)
    echo "screenshots: $(ls "$ROOT"/target/e2e-screenshots/*.png | wc -l) in target/e2e-screenshots/"
}
