"""The numpy side of a benchmark runs on OpenBLAS as a pip user's numpy would.

OpenBLAS 0.3.21 (Debian's libopenblas0-pthread) misdetects recent CPUs and falls back
to its slowest kernels; `use_cpu_kernels()` sets OPENBLAS_CORETYPE from the CPU's
flags (SkylakeX with avx512f, Haswell with avx2) unless it is set already. OpenBLAS
reads it once, when numpy loads it: call this before the first `import numpy`. The
simulator uses no BLAS, so only the numpy side sees the setting.
"""
import os


def _openblas_coretype():
    """The OPENBLAS_CORETYPE matching this CPU's vector units, or None."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return None
    return "SkylakeX" if "avx512f" in flags else "Haswell" if "avx2" in flags else None


def use_cpu_kernels():
    if "OPENBLAS_CORETYPE" not in os.environ and _openblas_coretype():
        os.environ["OPENBLAS_CORETYPE"] = _openblas_coretype()


def numpy_blas():
    """The BLAS library numpy has loaded (after a matmul), from /proc/self/maps: a
    matmul ratio depends on it (netlib's reference BLAS is ~10x slower than OpenBLAS)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.rsplit("/", 1)[-1].lower()}
    except OSError:
        return "unknown"
    return ", ".join(sorted(os.path.realpath(p) for p in libs)) or "unknown"


def describe():
    """One line: numpy's BLAS and the OPENBLAS_CORETYPE it runs with, with a hint when
    it is not OpenBLAS."""
    import numpy as np
    np.ones((2, 2)) @ np.ones((2, 2))  # loads numpy's BLAS, if it loads one lazily
    blas = numpy_blas()
    note = "" if "openblas" in blas.lower() or "mkl" in blas.lower() else \
        " (not OpenBLAS: apt-get install libopenblas0-pthread for the BLAS a pip numpy brings)"
    return f"numpy BLAS: {blas}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')}{note}"
