#!/usr/bin/env bash
# Prepare a Debian 12 machine and build nkic: install the Debian packages the
# build, `nkic sweep` (dask.distributed, matplotlib) and the tests need (only the
# missing ones), configure once, build.
# Safe to run repeatedly and from any directory.
#   scripts/setup.sh            the library and the Python module (_nkic) only
#   scripts/setup.sh all        also the C++ tests (scripts/test.sh asks for this)
#   scripts/setup.sh packages   the Debian packages only (scripts/test_asan.sh, which builds elsewhere)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PACKAGES=(
  cmake ninja-build g++
  pybind11-dev python3-dev python3-numpy
  python3-pytest python3-hypothesis python3-scipy
  libgtest-dev libbenchmark-dev
  python3-setuptools python3-wheel python3-pip python3-venv python3-mypy
  python3-distributed python3-matplotlib
  ccache
)
# The tests also render the profile report in a real headless browser.
if [[ "${1:-}" == all || "${1:-}" == packages ]]; then
  PACKAGES+=(chromium)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  # dpkg-query fails for never-seen packages; "deinstall ..." also means absent.
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if ((EUID != 0)); then
    sudo=(sudo)
  fi
  # Refresh the index only when something has to be installed: keeps reruns offline.
  "${sudo[@]}" apt-get update
  # env (not a prefix assignment): sudo would drop DEBIAN_FRONTEND.
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

if [[ "${1:-}" == packages ]]; then
  exit 0
fi

# Configure once; later builds re-run cmake themselves when CMakeLists.txt changes.
# build.ninja (not CMakeCache.txt) marks a configure that actually finished.
if [[ ! -f build/build.ninja ]]; then
  configure=(-S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3)
  if command -v ccache >/dev/null; then
    configure+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake "${configure[@]}"
fi
# Paths relative to the parent directory: clones side by side share ccache's cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$ROOT")}"

# The C++ tests are a quarter of a first build's compile time: only the test command builds them.
cmake --build build -j2 --target "${@:-_nkic}"
