#!/usr/bin/env bash
# Build, then run every example through `nkic run`. All examples run; the
# script fails if any of them does.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

scripts/setup.sh

shopt -s nullglob
examples=(examples/*.py)
if ((${#examples[@]} == 0)); then
  echo "no examples found"
  exit 0
fi

failed=()
for ex in "${examples[@]}"; do
  echo "== $ex"
  { bin/nkic run "$ex" && bin/nkic profile "$ex" --target trn2; } || failed+=("$ex")
done

# The tile sizes of one example, ranked by predicted latency (docs/sweep.md).
echo "== sweep examples/matmul_sweep.py"
bin/nkic sweep examples/matmul_sweep.py --param TILE_N=256,512,1024 --param TILE_K=64,128 || failed+=("sweep")

if ((${#failed[@]} > 0)); then
  echo "failed examples: ${failed[*]}" >&2
  exit 1
fi
echo "all ${#examples[@]} examples passed"
