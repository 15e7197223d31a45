#!/usr/bin/env bash
# Every test. Installs what it needs when missing (see scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
