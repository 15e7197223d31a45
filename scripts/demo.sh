#!/usr/bin/env bash
# The main job on the bundled samples, end to end, as a user runs it:
#
#   1. convert the tiny safetensors and GGUF models in samples/ to Kiln;
#   2. inspect the converted files (each tensor: can it be viewed in place?);
#   3. check them, with no flags (the frame says what they are);
#   4. memory-map one and read a tensor in place (no payload byte copied);
#   5. convert them back and compare with the originals, byte for byte;
#   6. decode a message to JSON and encode the JSON back to the same bytes;
#   7. check every sample message against the verdict the Python reference
#      gives it (samples/manifest.tsv), faults included;
#   8. at a terminal, open a converted model in the browser inspector;
#      otherwise (CI, the test command) print the command that does.
#
# Exits 1 at the first step whose result is not the expected one.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p kiln-cli
cargo build -q -p kiln-convert --example view_in_place
kiln=target/debug/kiln
view=target/debug/examples/view_in_place
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

step() { printf '\n== %s\n' "$*"; }
run() { printf '$ %s\n' "$*" >&2; "$@"; }

step "1. Convert the sample models to Kiln"
run "$kiln" convert samples/tiny.safetensors "$out/tiny-st.kiln"
run "$kiln" convert samples/tiny.gguf "$out/tiny-gguf.kiln"

step "2. Inspect a converted model"
run "$kiln" inspect "$out/tiny-gguf.kiln"

step "3. Check the converted files (no flags: the frame names the message type)"
run "$kiln" check "$out/tiny-st.kiln"
run "$kiln" check "$out/tiny-gguf.kiln"

step "4. Memory-map a converted model and read a tensor in place"
run "$view" "$out/tiny-st.kiln" embed.weight
run "$view" "$out/tiny-gguf.kiln" token_embd.weight

step "5. Convert back: the same bytes as the originals"
run "$kiln" convert "$out/tiny-st.kiln" "$out/back.safetensors"
run "$kiln" convert "$out/tiny-gguf.kiln" "$out/back.gguf"
run cmp samples/tiny.safetensors "$out/back.safetensors"
run cmp samples/tiny.gguf "$out/back.gguf"
echo "both identical"

step "6. Decode a message to JSON and encode it back"
readings='list<struct{ t: u64, v: f32, ok: bool }>'   # type text as typed; kiln prints it canonical
run "$kiln" decode --compact --type "$readings" samples/readings.kiln | tee "$out/readings.json"
printf '$ %s\n' "$kiln encode --type '$readings' < readings.json | cmp - samples/readings.kiln"
"$kiln" encode --type "$readings" <"$out/readings.json" | cmp - samples/readings.kiln
echo "same bytes"

step "7. Check every sample message against the reference's verdict (samples/manifest.tsv)"
mismatches=0
while IFS=$'\t' read -r file type framing expect note; do
  [[ "$file" == \#* || -z "$file" ]] && continue
  args=(check --type "$type")
  if [[ "$framing" == framed ]]; then args+=(--framed); else args+=(--bare); fi
  # The error line is `error: FILE: CODE: sentence at byte N` (docs/cli.md, "Errors").
  if got_out=$("$kiln" "${args[@]}" "samples/$file" 2>&1); then got=accept; else got=$(sed -n "s|^error: samples/$file: \([^:]*\): .*|\1|p" <<<"$got_out"); fi
  mark=ok; [[ "$got" == "$expect" ]] || { mark=MISMATCH; mismatches=$((mismatches + 1)); }
  printf '%-22s %-9s %-8s %s\n    kiln: %s\n' "$file" "$expect" "$mark" "($note)" "$got_out"
done < samples/manifest.tsv
total=$(grep -vc '^#' samples/manifest.tsv)
echo "demo: $((total - mismatches)) passed, $mismatches failed"
[[ $mismatches -eq 0 ]]

# 8. The converted model in the browser inspector, which reads it as its
# bytes say (the frame names the conversion's type): at a terminal it is
# built and served (Ctrl-C stops it); otherwise the command is printed.
if [[ -t 0 && -t 1 && -z "${CI:-}" ]]; then
  step "8. The converted model in the browser inspector"
  bash scripts/www.sh "$out/tiny-gguf.kiln"
  exit 0
fi
step "8. Open a converted model in the browser inspector (serves www/ on 127.0.0.1)"
echo "bash scripts/demo.sh at a terminal does it; by hand:"
echo "  kiln convert samples/tiny.gguf tiny.kiln && bash scripts/www.sh tiny.kiln"
