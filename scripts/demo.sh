#!/usr/bin/env bash
# The main job on bundled sample data: `kiln check` over every message in
# samples/ (listed in samples/manifest.tsv with its type and the verdict the
# Python reference gives), printing each verdict. Exits 1 if any verdict
# differs from the manifest.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q -p kiln-cli
kiln=target/debug/kiln
mismatches=0
while IFS=$'\t' read -r file type framing expect note; do
  [[ "$file" == \#* || -z "$file" ]] && continue
  args=(check --type "$type")
  if [[ "$framing" == framed ]]; then args+=(--framed); else args+=(--bare); fi
  # The error line is `error: FILE: CODE: detail` (docs/cli.md).
  if out=$("$kiln" "${args[@]}" "samples/$file" 2>&1); then got=accept; else got=$(sed -n "s|^error: samples/$file: \([A-Z0-9]*\):.*|\1|p" <<<"$out"); fi
  mark=ok; [[ "$got" == "$expect" ]] || { mark=MISMATCH; mismatches=$((mismatches + 1)); }
  printf '%-22s %-9s %-8s %s\n    kiln: %s\n' "$file" "$expect" "$mark" "($note)" "$out"
done < samples/manifest.tsv
total=$(grep -vc '^#' samples/manifest.tsv)
echo "demo: $((total - mismatches)) passed, $mismatches failed"
[[ $mismatches -eq 0 ]]

# The same files in the browser inspector: at a terminal it is built and
# served (Ctrl-C stops it); otherwise (CI, the test command) the command is
# printed.
inspect=(bash scripts/www.sh samples/batch.kiln 'struct{id:i64,name:str,batch:tensors,}')
if [[ -t 0 && -t 1 && -z "${CI:-}" ]]; then
  echo; echo "Opening samples/batch.kiln in the inspector:"
  exec "${inspect[@]}"
fi
echo "Inspect them in a browser: ${inspect[*]:0:3} '${inspect[3]}'   (serves www/ on 127.0.0.1)"
