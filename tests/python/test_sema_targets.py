"""Per-target legality boundaries (seed 004: sema is arch-parametric, every limit
is read off the target). On every target nkic knows — inf1, trn1, inf2, trn2,
trn3 — a tile exactly at a limit traces and one unit over is rejected:

* partitions: 128 (SBUF) on every target; PSUM 64 on the gen1 target inf1, 128 elsewhere;
* the per-partition SBUF byte budget (src/sema/Target.cpp: 180224 bytes on
  inf1/trn1/inf2, 212984 on trn2, 245752 on trn3) and one element / one byte more;
* the PSUM all-banks budget, psum_par_size_in_bytes * psum_num_banks = 2048 * 8 bytes;
* nc_matmul: stationary free <= gemm_stationary_fmax (128), moving free <=
  gemm_moving_fmax (512);
* nisa.get_nc_version() reports the target's generation;
* an unknown platform_target is err_incorrect_target_type.

The `nkic check` CLI shows the same per-target verdicts at a glance."""
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import nkic
from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

ROOT = Path(__file__).resolve().parents[2]
THIS_FILE = os.path.realpath(__file__)
REL_THIS = os.path.relpath(THIS_FILE, ROOT)
NKIC = str(ROOT / "bin" / "nkic")


class T:
    def __init__(self, gen, sbuf_bytes, psum_partitions):
        self.gen = gen
        self.sbuf_bytes = sbuf_bytes
        self.psum_partitions = psum_partitions


TARGETS = {
    "inf1": T(1, 180224, 64),
    "trn1": T(2, 180224, 128),
    "inf2": T(2, 180224, 128),
    "trn2": T(3, 212984, 128),
    "trn3": T(4, 245752, 128),
}
ALL = list(TARGETS)
PSUM_BYTES = 2048 * 8  # psum_par_size_in_bytes * psum_num_banks, every target
SBUF_PARTITIONS = 128
STATIONARY_FMAX = 128
MOVING_FMAX = 512
DTYPES = {"float32": nl.float32, "uint8": nl.uint8, "int8": nl.int8, "bfloat16": nl.bfloat16, "int32": nl.int32}

SRC = np.zeros((128, 512), np.float32)


def trace(fn, target, *static, src=SRC):
    return nki.jit(fn, platform_target=target).trace(None, (src, *static), {})


def rejects(fn, target, *static, src=SRC):
    with pytest.raises(nkic.NKIError) as info:
        trace(fn, target, *static, src=src)
    return info.value


# ---------------------------------------------------------------- kernels

def k_tile(src, shape, dtype, buffer):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(tuple(shape), dtype=DTYPES[dtype], buffer=nl.psum if buffer == "psum" else nl.sbuf)
    nl.store(out, value=nl.load(src))
    return out


def k_load_rows(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.load(src)
    nl.store(out, value=t)
    return out


def k_hbm_is_exempt(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    big = nl.ndarray((4096, 65536), dtype=nl.float32, buffer=nl.hbm)
    nl.store(out, value=nl.load(src))
    return out


def k_matmul(src, m, n):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    stationary = nl.ndarray((128, m), dtype=nl.bfloat16, buffer=nl.sbuf)
    moving = nl.ndarray((128, n), dtype=nl.bfloat16, buffer=nl.sbuf)
    r = nisa.nc_matmul(stationary, moving)
    nl.store(out, value=nl.load(src))
    return out


NC_VERSIONS = []


def k_nc_version(src):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    NC_VERSIONS.append(nisa.get_nc_version())
    nl.store(out, value=nl.load(src))
    return out


# Kernels for the CLI (`nkic check tests/python/test_sema_targets.py::KERNEL`).

def k_legal_everywhere(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.psum)
    t = nl.load(a)
    nl.store(out, value=nl.exp(t))
    return out


def k_psum_96(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((96, 512), dtype=nl.float32, buffer=nl.psum)  # CLI:psum_96
    t = nl.load(a)
    nl.store(out, value=t)
    return out


# ---------------------------------------------------------------- partitions

@pytest.mark.parametrize("target", ALL)
def test_sbuf_128_partitions_pass_129_fail(target):
    trace(k_tile, target, (128, 512), "float32", "sbuf")
    e = rejects(k_tile, target, (129, 512), "float32", "sbuf")
    assert e.code == "err_num_partition_exceed_arch_limit"
    assert e.message == "number of partitions 129 exceed architecture limitation of 128."


@pytest.mark.parametrize("target", ALL)
def test_load_of_129_rows_is_rejected_at_the_load(target):
    trace(k_load_rows, target, src=np.zeros((128, 64), np.float32))
    e = rejects(k_load_rows, target, src=np.zeros((129, 64), np.float32))
    assert e.code == "err_num_partition_exceed_arch_limit"
    assert e.message == "number of partitions 129 exceed architecture limitation of 128."


@pytest.mark.parametrize("target", ALL)
def test_psum_partition_limit(target):
    limit = TARGETS[target].psum_partitions
    trace(k_tile, target, (limit, 512), "float32", "psum")
    e = rejects(k_tile, target, (limit + 1, 512), "float32", "psum")
    assert e.code == "err_num_partition_exceed_arch_limit"
    assert e.message == f"number of partitions {limit + 1} exceed architecture limitation of {limit}."


def test_psum_65_to_128_partitions_fail_only_on_inf1():
    for p in (65, 96, 128):
        e = rejects(k_tile, "inf1", (p, 512), "float32", "psum")
        assert e.message == f"number of partitions {p} exceed architecture limitation of 64."
        # SBUF keeps 128 partitions on inf1.
        trace(k_tile, "inf1", (p, 512), "float32", "sbuf")
        for t in ALL:
            if t != "inf1":
                trace(k_tile, t, (p, 512), "float32", "psum")


@pytest.mark.parametrize("target", ALL)
def test_hbm_tensors_have_no_partition_or_byte_limit(target):
    trace(k_hbm_is_exempt, target)


# ---------------------------------------------------------------- SBUF byte budget

@pytest.mark.parametrize("target", ALL)
def test_sbuf_budget_float32_one_element_more_fails(target):
    budget = TARGETS[target].sbuf_bytes
    assert budget % 4 == 0
    trace(k_tile, target, (128, budget // 4), "float32", "sbuf")
    e = rejects(k_tile, target, (128, budget // 4 + 1), "float32", "sbuf")
    assert e.code == "err_stack_overflow_sbuf"
    assert e.message.startswith("Size of free dimensions")
    assert str(budget + 4) in e.message and str(budget) in e.message and "SBUF" in e.message


@pytest.mark.parametrize("target", ALL)
def test_sbuf_budget_one_byte_more_fails(target):
    budget = TARGETS[target].sbuf_bytes
    trace(k_tile, target, (128, budget), "uint8", "sbuf")
    e = rejects(k_tile, target, (128, budget + 1), "uint8", "sbuf")
    assert e.code == "err_stack_overflow_sbuf"
    assert str(budget + 1) in e.message and str(budget) in e.message


@pytest.mark.parametrize("target", ALL)
def test_sbuf_budget_counts_every_free_dim_but_not_the_partition_dim(target):
    budget = TARGETS[target].sbuf_bytes
    assert budget % 8 == 0
    trace(k_tile, target, (128, 8, budget // 8), "int8", "sbuf")
    trace(k_tile, target, (1, 8, budget // 8), "int8", "sbuf")
    e = rejects(k_tile, target, (128, 8, budget // 8 + 1), "int8", "sbuf")
    assert e.code == "err_stack_overflow_sbuf"
    e = rejects(k_tile, target, (1, budget // 2 + 1), "bfloat16", "sbuf")
    assert e.code == "err_stack_overflow_sbuf"


def test_sbuf_budget_differs_per_generation():
    # A trn2-sized tile is legal on trn2/trn3 and over budget on gen2.
    n = TARGETS["trn2"].sbuf_bytes // 4
    for t in ("trn2", "trn3"):
        trace(k_tile, t, (128, n), "float32", "sbuf")
    for t in ("inf1", "trn1", "inf2"):
        assert rejects(k_tile, t, (128, n), "float32", "sbuf").code == "err_stack_overflow_sbuf"


# ---------------------------------------------------------------- PSUM byte budget

@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("target", ALL)
def test_psum_all_banks_budget(target, dtype):
    p = min(128, TARGETS[target].psum_partitions)
    trace(k_tile, target, (p, PSUM_BYTES // 4), dtype, "psum")
    e = rejects(k_tile, target, (p, PSUM_BYTES // 4 + 1), dtype, "psum")
    assert e.code == "err_stack_overflow_psum"
    assert str(PSUM_BYTES + 4) in e.message and str(PSUM_BYTES) in e.message and "PSUM" in e.message


@pytest.mark.parametrize("target", ALL)
def test_psum_budget_is_not_the_sbuf_budget(target):
    # A tile over the PSUM budget is far below the SBUF budget, and the other way round.
    trace(k_tile, target, (64, PSUM_BYTES // 4 + 1), "float32", "sbuf")
    assert rejects(k_tile, target, (64, TARGETS[target].sbuf_bytes // 4), "float32",
                   "psum").code == "err_stack_overflow_psum"


# ---------------------------------------------------------------- nc_matmul free-size caps

@pytest.mark.parametrize("target", ALL)
def test_matmul_stationary_free_128_passes_129_fails(target):
    psum_p = TARGETS[target].psum_partitions
    trace(k_matmul, target, min(STATIONARY_FMAX, psum_p), 512)
    e = rejects(k_matmul, target, STATIONARY_FMAX + 1, 512)
    assert e.code == "err_size_of_dimension_exceed_arch_limit"
    assert e.message in ("size of dimension 1 in 'stationary[128, 129]' of 'nc_matmul' exceed architecture "
                         "limitation of 128", "size of dimension 1 in 'stationary[128, 129]' of 'nc_matmul' "
                         "exceed architecture limitation of 128.")


def test_matmul_output_partitions_follow_the_psum_limit_on_inf1():
    # The stationary free size becomes the PSUM output's partition count.
    trace(k_matmul, "inf1", 64, 512)
    e = rejects(k_matmul, "inf1", 65, 512)
    assert e.code == "err_num_partition_exceed_arch_limit"
    assert e.message == "number of partitions 65 exceed architecture limitation of 64."
    for t in ALL:
        if t != "inf1":
            trace(k_matmul, t, 128, 512)


@pytest.mark.parametrize("target", ALL)
def test_matmul_moving_free_512_passes_513_fails(target):
    trace(k_matmul, target, 64, MOVING_FMAX)
    e = rejects(k_matmul, target, 64, MOVING_FMAX + 1)
    assert e.code == "err_size_of_dimension_exceed_arch_limit"
    assert e.message in ("size of dimension 1 in 'moving[128, 513]' of 'nc_matmul' exceed architecture "
                         "limitation of 512", "size of dimension 1 in 'moving[128, 513]' of 'nc_matmul' "
                         "exceed architecture limitation of 512.")


@pytest.mark.parametrize("target", ALL)
def test_matmul_caps_are_not_interchangeable(target):
    # seed 004: a (_, 512) moving tile is legal, a (_, 512) stationary tile is not.
    trace(k_matmul, target, 64, 512)
    assert rejects(k_matmul, target, 512, 64).code == "err_size_of_dimension_exceed_arch_limit"


# ---------------------------------------------------------------- targets

EXPECTED_NC_VERSION = {"inf1": 1, "trn1": 2, "inf2": 2, "trn2": 3, "trn3": 4}


@pytest.mark.parametrize("target", ALL)
def test_get_nc_version(target):
    NC_VERSIONS.clear()
    trace(k_nc_version, target)
    assert len(NC_VERSIONS) == 1
    v = NC_VERSIONS[0]
    assert isinstance(v, nisa.nc_version)
    assert int(v) == EXPECTED_NC_VERSION[target]


def test_nc_version_names():
    for target, member in (("trn1", nisa.nc_version.gen2), ("inf2", nisa.nc_version.gen2),
                           ("trn2", nisa.nc_version.gen3)):
        NC_VERSIONS.clear()
        trace(k_nc_version, target)
        assert NC_VERSIONS == [member]


def test_default_target_is_trn2():
    NC_VERSIONS.clear()
    nki.jit(k_nc_version).trace(None, (SRC,), {})
    assert NC_VERSIONS == [nisa.nc_version.gen3]
    n = TARGETS["trn2"].sbuf_bytes // 4
    nki.jit(k_tile).trace(None, (SRC, (128, n), "float32", "sbuf"), {})
    with pytest.raises(nkic.NKIError):
        nki.jit(k_tile).trace(None, (SRC, (128, n + 1), "float32", "sbuf"), {})


@pytest.mark.parametrize("make", ["jit", "TraceKernel"])
@pytest.mark.parametrize("name", ["trn9", "TRN2", "gen3", "bogus"])
def test_unknown_platform_target(name, make):
    if make == "jit":
        kernel = nki.jit(k_load_rows, platform_target=name)
    else:
        kernel = nkic.TraceKernel(k_load_rows, platform_target=name)
    with pytest.raises(nkic.NKIError) as info:
        kernel.trace(None, (SRC,), {})
    e = info.value
    assert e.code == "err_incorrect_target_type"
    assert repr(name) in e.message
    assert isinstance(e, ValueError)


# ---------------------------------------------------------------- nkic check

def nkic_cli(*args):
    env = dict(os.environ)
    env.pop("NKIC_FRONTEND_DEBUG", None)
    return subprocess.run([NKIC, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)


def cli_line(marker):
    for no, line in enumerate(Path(THIS_FILE).read_text().splitlines(), 1):
        if line.rstrip().endswith(f"# CLI:{marker}"):
            return no, line.index("nl.ndarray") + 1
    raise AssertionError(marker)


@pytest.mark.parametrize("spec", ["all", None])
def test_check_legal_kernel_ok_on_the_legacy_apis_targets(spec):
    args = ["check", f"{REL_THIS}::k_legal_everywhere", "--arg", "a=f32[128,512]"]
    if spec:
        args += ["--target", spec]
    r = nkic_cli(*args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["trn1: ok", "inf2: ok", "trn2: ok"]


def test_check_legal_kernel_ok_on_every_target_named():
    r = nkic_cli("check", f"{REL_THIS}::k_legal_everywhere", "--arg", "a=f32[128,512]", "--target", ",".join(ALL))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [f"{t}: ok" for t in ALL]


def test_check_psum_96_fails_on_inf1_only():
    r = nkic_cli("check", f"{REL_THIS}::k_psum_96", "--arg", "a=f32[128,512]", "--target", ",".join(ALL))
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(ALL), r.stdout
    line, col = cli_line("psum_96")
    assert lines[0].startswith("inf1: FAIL err_num_partition_exceed_arch_limit: "
                               "number of partitions 96 exceed architecture limitation of 64.")
    assert re.search(rf"test_sema_targets\.py:{line}:{col}\b", lines[0]), lines[0]
    assert lines[1:] == [f"{t}: ok" for t in ALL[1:]]


def test_check_target_subset():
    r = nkic_cli("check", f"{REL_THIS}::k_psum_96", "--arg", "a=f32[128,512]", "--target", "trn1,trn2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["trn1: ok", "trn2: ok"]
    r = nkic_cli("check", f"{REL_THIS}::k_psum_96", "--arg", "a=f32[128,512]", "--target", "inf1")
    assert r.returncode == 2
    assert r.stdout.startswith("inf1: FAIL err_num_partition_exceed_arch_limit")


def test_check_unknown_target_fails():
    r = nkic_cli("check", f"{REL_THIS}::k_legal_everywhere", "--arg", "a=f32[128,512]", "--target", "trn2,trn9")
    assert r.returncode == 2
    lines = r.stdout.splitlines()
    assert lines[0] == "trn2: ok"
    assert lines[1].startswith("trn9: FAIL err_incorrect_target_type")


def test_check_usage_error_exit_code():
    r = nkic_cli("check", "tests/python/no_such_file.py::k", "--target", "trn2")
    assert r.returncode == 3
    assert "no such file" in r.stderr
