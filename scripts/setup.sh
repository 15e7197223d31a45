#!/usr/bin/env bash
# Installs what scripts/test.sh needs and is missing: Debian packages,
# rustup targets and components, and pinned `cargo install`s. Anything
# already present (at the pinned version) is left alone, so a warm run
# takes a second. As root it installs; otherwise it prints the exact
# commands to run and fails.
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
# crate version binary [--locked]. wasm-bindgen-cli's own lock file wants a
# crate newer than the registry index holds, so it installs without --locked.
CARGO_INSTALLS=(
    "wasm-bindgen-cli $WASM_BINDGEN_VERSION wasm-bindgen-test-runner"
    "cargo-binutils 0.4.0 cargo-size --locked"
    "cargo-fuzz 0.13.2 cargo-fuzz --locked"
)

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
missing_installs=()
for entry in "${CARGO_INSTALLS[@]}"; do
    read -r crate version binary locked <<<"$entry"
    if ! grep -qx "$crate v$version:" <<<"$installed_crates" || ! command -v "$binary" >/dev/null; then
        missing_installs+=("cargo install $crate --version $version --force${locked:+ $locked}")
    fi
done

commands=()
if [ ${#missing_apt[@]} -gt 0 ]; then
    commands+=("apt-get update")
    commands+=("apt-get install -y --no-install-recommends ${missing_apt[*]}")
fi
[ ${#missing_targets[@]} -gt 0 ] && commands+=("rustup target add ${missing_targets[*]}")
[ ${#missing_components[@]} -gt 0 ] && commands+=("rustup component add ${missing_components[*]}")
for install in "${missing_installs[@]}"; do
    commands+=("$install")
done
# npm packages of the browser tests (playwright-core, binaryen's wasm-opt),
# exactly as tests/e2e/package-lock.json pins them; again when the lock
# file changed since the last install.
if ! cmp -s tests/e2e/package-lock.json tests/e2e/node_modules/.kiln-installed-lock 2>/dev/null; then
    commands+=("npm ci --prefix tests/e2e --no-audit --no-fund")
    commands+=("cp tests/e2e/package-lock.json tests/e2e/node_modules/.kiln-installed-lock")
fi

if [ ${#commands[@]} -eq 0 ]; then
    echo "setup: everything is installed (wasm-bindgen-cli $WASM_BINDGEN_VERSION, cargo-binutils, cargo-fuzz, targets, qemu, valgrind, chromium, tests/e2e npm packages)"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing tools. Run as root (or fix by hand), then run scripts/test.sh again:" >&2
    printf '    %s\n' "${commands[@]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
for command in "${commands[@]}"; do
    echo "setup: $command"
    start=$SECONDS
    $command
    echo "setup: done in $((SECONDS - start)) s"
done
