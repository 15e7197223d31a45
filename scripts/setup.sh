#!/usr/bin/env bash
# Installs what scripts/test.sh needs and is missing: Debian packages,
# rustup targets and components, and pinned `cargo install`s. Anything
# already present (at the pinned version) is left alone, so a warm run
# takes a second. As root it installs; otherwise it prints the exact
# commands to run and fails.
#
# The `cargo install`s build on the CPU while apt, rustup and npm mostly
# wait on the network, so they run at the same time, each group in its own
# order. Every step's seconds, and the wall time of the whole, go to the
# file $KILN_SETUP_TIMES (`STEP SECONDS NOTE` lines) when it is set:
# scripts/test.sh prints them in its summary. docs/setup.md says what each
# step costs on a fresh machine and why each remaining tool is there.
set -euo pipefail
cd "$(dirname "$0")/.."

# --- what is needed ---------------------------------------------------------

# qemu-user: qemu-s390x, qemu-ppc64 (big-endian tests); qemu-system-arm:
# the Cortex-M3 and Cortex-M0 firmware; qemu-system-misc: the RISC-V
# firmware (qemu-system-riscv32); the cross gccs link the big-endian test
# binaries; nodejs runs wasm-bindgen-test-runner; python3 the reference codec tests;
# chromium, chromium-driver and a font: the browser tests (stages wasm-js
# and www), with npm for tests/e2e's packages.
# valgrind counts instructions and heap for the work bounds (stage bounds).
APT_PACKAGES=(
    qemu-user qemu-system-arm qemu-system-misc valgrind
    gcc-s390x-linux-gnu libc6-dev-s390x-cross
    gcc-powerpc64-linux-gnu libc6-dev-ppc64-cross
    chromium chromium-driver fonts-dejavu-core
)
RUST_TARGETS=(
    thumbv7m-none-eabi thumbv6m-none-eabi riscv32imac-unknown-none-elf
    thumbv7em-none-eabihf wasm32-unknown-unknown
    s390x-unknown-linux-gnu powerpc64-unknown-linux-gnu
)
RUST_COMPONENTS=(rustfmt clippy llvm-tools)

# wasm-bindgen-cli must be exactly the wasm-bindgen crate's version: the
# workspace pins it ("=X") in Cargo.toml.
WASM_BINDGEN_VERSION="$(sed -nE 's/^wasm-bindgen *= *"=([0-9.]+)".*/\1/p' Cargo.toml | head -1)"
if [ -z "$WASM_BINDGEN_VERSION" ]; then
    echo "setup: no exact wasm-bindgen pin (wasm-bindgen = \"=X\") in Cargo.toml" >&2
    exit 1
fi
if [ -f Cargo.lock ]; then
    locked="$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -nE 's/^version = "(.*)"/\1/p' | head -1)"
    if [ -n "$locked" ] && [ "$locked" != "$WASM_BINDGEN_VERSION" ]; then
        echo "setup: Cargo.lock has wasm-bindgen $locked, Cargo.toml pins $WASM_BINDGEN_VERSION" >&2
        exit 1
    fi
fi
# crate version binary [cargo install flags]. wasm-bindgen-cli's own lock
# file wants a crate newer than the registry index holds, so it installs
# without --locked; its default feature only adds TLS (rustls and ring) to
# the HTTP client the test runner uses to talk to a local chromedriver, so
# it is left out. Not installed: cargo-binutils (scripts/llvm-tool.sh runs
# the llvm-tools component's llvm-size and llvm-objdump directly) and
# cargo-fuzz (scripts/stages/fuzz.sh passes its flags to cargo itself).
CARGO_INSTALLS=(
    "wasm-bindgen-cli $WASM_BINDGEN_VERSION wasm-bindgen-test-runner --no-default-features"
)
# The tools are built unoptimized (--debug) and without debug info: a
# third of the release build's CPU time, for a few seconds more per test
# binary the runner prepares (docs/setup.md has the measurements; the
# release profile at opt-level 1 saved nothing).
INSTALL_PROFILE=(CARGO_PROFILE_DEV_DEBUG=false CARGO_PROFILE_DEV_INCREMENTAL=false)

# --- what is missing --------------------------------------------------------

missing_apt=()
for pkg in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing_apt+=("$pkg")
    fi
done
command -v python3 >/dev/null || missing_apt+=(python3)
command -v node >/dev/null || missing_apt+=(nodejs)
command -v npm >/dev/null || missing_apt+=(npm)

if ! command -v rustup >/dev/null || ! command -v cargo >/dev/null; then
    echo "setup: rustup and cargo are needed (https://rustup.rs)" >&2
    exit 1
fi
installed_targets="$(rustup target list --installed)"
missing_targets=()
for target in "${RUST_TARGETS[@]}"; do
    grep -qx "$target" <<<"$installed_targets" || missing_targets+=("$target")
done
installed_components="$(rustup component list --installed)"
missing_components=()
for component in "${RUST_COMPONENTS[@]}"; do
    grep -q "^$component" <<<"$installed_components" || missing_components+=("$component")
done

installed_crates="$(cargo install --list)"
# Each step: "NAME<TAB>COMMAND" (the command word-split, no quoting).
system_steps=()
cargo_steps=()
for entry in "${CARGO_INSTALLS[@]}"; do
    read -r crate version binary flags <<<"$entry"
    if ! grep -qx "$crate v$version:" <<<"$installed_crates" || ! command -v "$binary" >/dev/null; then
        cargo_steps+=("$crate"$'\t'"env ${INSTALL_PROFILE[*]} cargo install $crate --version $version --debug --force${flags:+ $flags}")
    fi
done

if [ ${#missing_apt[@]} -gt 0 ]; then
    system_steps+=("apt-update"$'\t'"apt-get update")
    system_steps+=("apt"$'\t'"apt-get install -y --no-install-recommends ${missing_apt[*]}")
fi
[ ${#missing_targets[@]} -gt 0 ] && system_steps+=("rustup-targets"$'\t'"rustup target add ${missing_targets[*]}")
[ ${#missing_components[@]} -gt 0 ] && system_steps+=("rustup-components"$'\t'"rustup component add ${missing_components[*]}")
# npm packages of the browser tests (playwright-core, binaryen's wasm-opt,
# the latency run's peers @huggingface/gguf and @huggingface/hub),
# exactly as tests/e2e/package-lock.json pins them; again when the lock
# file changed since the last install.
if ! cmp -s tests/e2e/package-lock.json tests/e2e/node_modules/.kiln-installed-lock 2>/dev/null; then
    system_steps+=("npm"$'\t'"npm ci --prefix tests/e2e --no-audit --no-fund")
    system_steps+=("npm-mark"$'\t'"cp tests/e2e/package-lock.json tests/e2e/node_modules/.kiln-installed-lock")
fi

TIMES="${KILN_SETUP_TIMES:-/dev/null}"
if [ ${#system_steps[@]} -eq 0 ] && [ ${#cargo_steps[@]} -eq 0 ]; then
    echo "setup: everything is installed (wasm-bindgen-cli $WASM_BINDGEN_VERSION, targets, llvm-tools, qemu, valgrind, chromium, tests/e2e npm packages)"
    echo "total 0 nothing to install" >>"$TIMES"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing tools. Run as root (or fix by hand), then run scripts/test.sh again:" >&2
    for step in "${system_steps[@]}" "${cargo_steps[@]}"; do
        printf '    %s\n' "${step#*$'\t'}" >&2
    done
    exit 1
fi

# run_steps STEP...: runs each step in order, stops at the first failure;
# one `NAME SECONDS NOTE` line per step into $TIMES ($NOTE says how it ran).
run_steps() {
    local step name command start
    for step in "$@"; do
        name="${step%%$'\t'*}"
        command="${step#*$'\t'}"
        echo "setup: $command"
        start=$SECONDS
        # shellcheck disable=SC2086 # the command is word-split on purpose
        $command || {
            echo "setup: failed after $((SECONDS - start)) s: $command" >&2
            return 1
        }
        echo "setup: $name done in $((SECONDS - start)) s"
        printf '%s %d %s\n' "$name" $((SECONDS - start)) "$NOTE" >>"$TIMES"
    done
}

export DEBIAN_FRONTEND=noninteractive
setup_start=$SECONDS
cargo_log="$(mktemp)"
trap 'rm -f "$cargo_log"' EXIT
cargo_pid=
if [ ${#cargo_steps[@]} -gt 0 ]; then
    NOTE="cargo install (alongside apt, rustup, npm)" run_steps "${cargo_steps[@]}" >"$cargo_log" 2>&1 &
    cargo_pid=$!
    echo "setup: ${#cargo_steps[@]} cargo install(s) in the background (log shown when done)"
fi
system_status=0
NOTE="" run_steps "${system_steps[@]}" || system_status=$?
cargo_status=0
if [ -n "$cargo_pid" ]; then
    wait "$cargo_pid" || cargo_status=$?
    echo "setup: --- the cargo installs' log (last 40 lines)"
    tail -40 "$cargo_log"
fi
echo "total $((SECONDS - setup_start)) wall time of scripts/setup.sh" >>"$TIMES"
[ "$system_status" -eq 0 ] && [ "$cargo_status" -eq 0 ]
