#!/bin/sh
# Run every nkic benchmark with the system Python and the in-tree build.
# Usage: bench/run_all.sh [--quick]   (--quick: smaller sizes / 1k-10k unroll only)
# perf_calibration.py runs when an nki-samples checkout is at $NKI_SAMPLES
# (default /tmp/corpus/nki-samples); it has no quick mode.
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$ROOT/python:$ROOT/build/python${PYTHONPATH:+:$PYTHONPATH}"
# numpy's side of each ratio runs on the BLAS a pip user's numpy brings: OpenBLAS
# (Debian's libopenblas0-pthread; without it numpy falls back to the reference BLAS).
if ! dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "install ok installed"; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y libopenblas0-pthread
fi
/usr/bin/python3 "$ROOT/bench/bench_tracer.py" "$@"
/usr/bin/python3 "$ROOT/bench/bench_sim.py" "$@"
SAMPLES=${NKI_SAMPLES:-/tmp/corpus/nki-samples}
if [ -d "$SAMPLES/src/nki_samples" ]; then
  /usr/bin/python3 "$ROOT/bench/perf_calibration.py" "$SAMPLES"
else
  echo "perf_calibration: skipped, no nki-samples checkout at $SAMPLES"
fi
