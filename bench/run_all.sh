#!/bin/sh
# Run every nkic benchmark with the system Python and the in-tree build.
# Usage: bench/run_all.sh [--quick]   (--quick: smaller sizes / 1k-10k unroll only)
set -e
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$ROOT/python:$ROOT/build/python${PYTHONPATH:+:$PYTHONPATH}"
/usr/bin/python3 "$ROOT/bench/bench_tracer.py" "$@"
/usr/bin/python3 "$ROOT/bench/bench_sim.py" "$@"
