#!/usr/bin/env bash
# Build nkic with AddressSanitizer + UndefinedBehaviorSanitizer (the "asan" CMake
# preset, in build-asan/) and run the C++ and the Python test suites against it.
# Any sanitizer report aborts the process that hit it, so it shows up as a failed test.
#   scripts/test_asan.sh [PYTEST ARGS]   every GoogleTest and the whole Python suite
#                                        (several times slower than scripts/test.sh)
#   scripts/test_asan.sh --slice         every GoogleTest and the Python slice CI runs
#                                        (.ci/run): a kernel per simulator executor
#                                        family, the fuzz slice, and the suites below
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

python_tests=(tests/python tests/kernels docs)
if [[ "${1:-}" == --slice ]]; then
  shift
  # test_executor_families fails when the instruction table gains an executor family
  # that none of its kernels reaches; the shipped kernels and the simulator's fast paths
  # (streaming and blocked copies) add the real access patterns.
  python_tests=(tests/python/test_executor_families.py tests/python/test_fuzz.py
                tests/python/test_activation_codes.py tests/python/test_sim_fast_paths.py tests/kernels)
fi

scripts/setup.sh packages

configure=(--preset asan)
if command -v ccache >/dev/null; then
  configure+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths relative to the parent directory: worktrees side by side share the cache, also for
  # this build's debug information (which names the build directory: not part of the key).
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$ROOT")}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
fi
if [[ ! -f build-asan/build.ninja ]]; then
  cmake "${configure[@]}"
fi
cmake --build --preset asan

# detect_leaks=0: CPython never frees its interned objects at exit, which LeakSanitizer
# would report on every run. abort_on_error / halt_on_error: the first report fails;
# handle_abort: a failed libstdc++ assertion (_GLIBCXX_ASSERTIONS) prints its stack too.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1:handle_abort=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

status=0
echo "== C++ tests (asan)"
ctest --preset asan || status=1

echo "== Python tests (asan)"
# /usr/bin/python3 is not instrumented: the ASan runtime must be loaded before anything
# else, so preload it, and libstdc++ with it: ASan resolves the __cxa_throw it intercepts
# at start-up, and fails its own CHECK on the first C++ throw if libstdc++ only comes later
# with the extension. PYTHONMALLOC=malloc lets ASan see Python objects the binding frees.
rc=0
LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)" PYTHONMALLOC=malloc \
  PYTHONPATH="$ROOT/python:$ROOT/build-asan/python" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "${python_tests[@]}" "$@" || rc=$?
if ((rc != 0 && rc != 5)); then
  status=1
fi

if ((status != 0)); then
  echo "test_asan: FAILED" >&2
fi
exit "$status"
