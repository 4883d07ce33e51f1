#!/bin/sh
# Run every nkic benchmark with the system Python and the in-tree build.
# Usage: bench/run_all.sh [--quick]   (--quick: smaller sizes / 1k-10k unroll only)
# perf_calibration.py runs when an nki-samples checkout is at $NKI_SAMPLES
# (default /tmp/corpus/nki-samples); it has no quick mode.
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$ROOT/python:$ROOT/build/python${PYTHONPATH:+:$PYTHONPATH}"
/usr/bin/python3 "$ROOT/bench/bench_tracer.py" "$@"
/usr/bin/python3 "$ROOT/bench/bench_sim.py" "$@"
SAMPLES=${NKI_SAMPLES:-/tmp/corpus/nki-samples}
if [ -d "$SAMPLES/src/nki_samples" ]; then
  /usr/bin/python3 "$ROOT/bench/perf_calibration.py" "$SAMPLES"
else
  echo "perf_calibration: skipped, no nki-samples checkout at $SAMPLES"
fi
