#!/usr/bin/env bash
# The browser inspector.
#
#   bash scripts/www.sh --build-only   build the two modules (ES module, .d.ts,
#                                      wasm-opt -Oz, size check): the core,
#                                      kiln-wasm, into www/pkg/ (with its npm
#                                      package.json), and the inspector's,
#                                      kiln-wasm-inspect, into www/inspect/
#                                      (with a package.json that says it is
#                                      an ES module);
#                                      honours CARGO_TARGET_DIR
#   bash scripts/www.sh [FILE [TYPE]]  build, serve www/ on 127.0.0.1, print the
#                                      URL that opens FILE (default: a sample),
#                                      read as its bytes say; TYPE only for a
#                                      message of a type the inspector does
#                                      not know (a plain message, a frame of
#                                      another type)
#
# www/pkg/ is a build output (git-ignored): this script makes it. The tools
# come from scripts/setup.sh: wasm-bindgen-cli at the workspace's pin and,
# from tests/e2e/package-lock.json, binaryen's wasm-opt (Debian's binaryen
# breaks wasm-bindgen 0.2.13x output).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

# The budgets after wasm-opt -Oz, the one place they are set (docs name
# them, not their figures). The core module (kiln-wasm without features,
# no_std: what other pages embed): the checker, the type compiler, the
# sans-I/O opener with its read planning and the recognition of
# converted models, the tensor facts in their JSON form, and the JS layer:
# 80 KiB. The inspector's module (kiln-wasm-inspect: the core, the whole
# JSON form with the value writer and TensorDiff (kiln-wasm's feature
# `inspector`), kiln-convert's safetensors and GGUF head readers and set
# rules, with std, serde_json and the safetensors crate; kiln-convert
# at opt-level "s", Cargo.toml's profile.wasm-release): 384 KiB.
MAX_WASM_BYTES=81920
MAX_INSPECT_BYTES=393216

build() {
    local want have
    want="$(sed -nE 's/^wasm-bindgen *= *"=([0-9.]+)".*/\1/p' Cargo.toml | head -1)"
    have="$(wasm-bindgen --version 2>/dev/null | sed -n 's/^wasm-bindgen //p')"
    if [ "$have" != "$want" ]; then
        echo "www: wasm-bindgen ${have:-is not installed}; the module needs exactly $want (the workspace's pin)." >&2
        echo "     bash scripts/setup.sh installs it (as root), or by hand:" >&2
        echo "     cargo install wasm-bindgen-cli --version $want --no-default-features --force" >&2
        return 1
    fi
    module kiln-wasm kiln_wasm www/pkg "$MAX_WASM_BYTES" --features module
    package_json
    module kiln-wasm-inspect kiln_inspect www/inspect "$MAX_INSPECT_BYTES"
    # The module's rows.js (its tensorRows()), where the page imports it
    # from to make the same rows of the columns its worker sends.
    cp www/inspect/snippets/kiln-wasm-*/js/rows.js www/inspect/rows.js
    # Not a package to publish: what node needs to import the page's
    # module as the ES module it is (the tests, scripts, serve.mjs).
    cat > www/inspect/package.json <<JSON
{ "name": "kiln-inspect", "private": true, "type": "module", "main": "./kiln_inspect.js", "types": "./kiln_inspect.d.ts" }
JSON
}

# module CRATE NAME DIR BUDGET [CARGO ARGS]: CRATE's wasm-bindgen module
# as DIR/NAME.js and DIR/NAME_bg.wasm, after wasm-opt -Oz, within BUDGET
# bytes.
module() {
    local crate="$1" name="$2" dir="$3" budget="$4"
    shift 4
    # The module's path from cargo itself, so CARGO_TARGET_DIR (or a
    # target-dir in a cargo config) is honoured.
    local raw
    raw="$(cargo rustc -q -p "$crate" --lib --crate-type cdylib --target wasm32-unknown-unknown \
        --profile wasm-release "$@" --message-format=json-render-diagnostics |
        sed -nE "s/.*\"filenames\":\[\"([^\"]*${crate//-/_}\.wasm)\".*/\1/p" | tail -1)"
    [ -n "$raw" ] || { echo "www: cargo built no ${crate//-/_}.wasm" >&2; return 1; }
    rm -rf "$dir"
    wasm-bindgen --target web --out-dir "$dir" --out-name "$name" "$raw"
    local wasm_opt="$ROOT/tests/e2e/node_modules/.bin/wasm-opt"
    if [ ! -x "$wasm_opt" ]; then
        (cd tests/e2e && npm ci --no-audit --no-fund --silent)
    fi
    local before after
    before=$(stat -c %s "$dir/${name}_bg.wasm")
    # The features are those rustc enables for wasm32-unknown-unknown.
    "$wasm_opt" -Oz --converge --strip-producers --strip-target-features \
        --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
        --enable-mutable-globals --enable-reference-types --enable-multivalue \
        "$dir/${name}_bg.wasm" -o "$dir/${name}_bg.wasm"
    after=$(stat -c %s "$dir/${name}_bg.wasm")
    rm -f "$dir/.gitignore"
    echo "$dir/${name}_bg.wasm: $before bytes from wasm-bindgen, $after after wasm-opt -Oz (budget $budget)"
    if [ "$after" -gt "$budget" ]; then
        echo "www: $dir/${name}_bg.wasm is over its budget of $budget bytes" >&2
        return 1
    fi
}

# www/pkg/package.json: the module as an npm package (ES module, its
# TypeScript types, the wasm file exported for initSync in node), at the
# workspace's version.
package_json() {
    local version
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
    cat > www/pkg/package.json <<JSON
{
  "name": "kiln-wasm",
  "version": "$version",
  "description": "Kiln v2 in JavaScript: check a file of any size by ranges, tensor facts, typed-array views and display conversions (wasm).",
  "license": "MIT OR Apache-2.0",
  "type": "module",
  "main": "./kiln_wasm.js",
  "types": "./kiln_wasm.d.ts",
  "exports": {
    ".": { "types": "./kiln_wasm.d.ts", "default": "./kiln_wasm.js" },
    "./kiln_wasm_bg.wasm": "./kiln_wasm_bg.wasm",
    "./package.json": "./package.json"
  },
  "files": ["kiln_wasm.js", "kiln_wasm.d.ts", "kiln_wasm_bg.wasm", "kiln_wasm_bg.wasm.d.ts", "snippets/"],
  "sideEffects": false
}
JSON
}

case "${1:-}" in
    --build-only)
        build
        ;;
    -h | --help)
        sed -n '2,17p' "$0"
        ;;
    *)
        build
        file="${1:-}"
        type="${2:-}"
        exec node www/serve.mjs ${file:+--open "$file"} ${type:+--type "$type"}
        ;;
esac
