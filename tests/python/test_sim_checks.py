"""The simulator's opt-in checks from Python: nki.simulate(kernel, check_uninitialized=,
check_races=), the same keywords on @nki.jit, nki.simulate_kernel's, and NKIC_SIM_CHECKS for
scripts that cannot pass them. An uninitialized value is an error where it reaches an output
and a warning at the reading line when it is dropped; an associative accumulation across
affine_range iterations is no race, a read of another iteration's partial result is."""
import json
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import nkic
from neuronxcc import nki as legacy_nki
import neuronxcc.nki.isa as lnisa
import neuronxcc.nki.language as lnl
from nki_test_util import Markers, check_diag

M = Markers(__file__)
RNG = np.random.default_rng(7)
X = RNG.random((100, 64), dtype=np.float32)
DROPPED = ("[warn_uninitialized_value_dropped] this instruction reads element [100, 0] of tensor `t`, which was "
           "never written in this program instance; no output, branch or address uses what is computed from it, "
           "so the results do not depend on it")


def ragged_exp(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t[0:100, :], src=x)
    e = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=t)  # ERR:exp_reads
    nisa.dma_copy(dst=out, src=e[0:100, :])
    return out


def whole_tile_out(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t[0:100, :], src=x)
    e = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=t)  # ERR:whole_reads
    nisa.dma_copy(dst=out, src=e)  # ERR:whole_out
    return out


# Races: legacy kernels (in the current API nl.affine_range is an alias of range: its
# iterations run in order, so there is nothing to check).
def running_max(x):
    out = lnl.ndarray((128, 64), dtype=x.dtype, buffer=lnl.shared_hbm)
    acc = lnl.zeros((128, 64), dtype=x.dtype)
    for i in lnl.affine_range(x.shape[0] // 128):
        acc[...] = lnisa.tensor_tensor(acc, lnl.load(x[i * 128:(i + 1) * 128, :]), op=lnl.maximum)
    lnl.store(out, value=acc)
    return out


def prefix_max(x):
    out = lnl.ndarray(x.shape, dtype=x.dtype, buffer=lnl.shared_hbm)
    acc = lnl.zeros((128, 64), dtype=x.dtype)
    for i in lnl.affine_range(x.shape[0] // 128):  # ERR:prefix_loop
        acc[...] = lnisa.tensor_tensor(acc, lnl.load(x[i * 128:(i + 1) * 128, :]), op=lnl.maximum)
        lnl.store(out[i * 128:(i + 1) * 128, :], value=acc)  # reads the partial result
    return out


def dropped(record):
    return [(str(w.message), w.lineno) for w in record if "warn_uninitialized_value_dropped" in str(w.message)]


def test_nki_simulate_warns_at_the_read_of_a_dropped_uninitialized_value():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = nki.simulate(ragged_exp, check_uninitialized=True, check_races=True)(X)
    assert dropped(record) == [(DROPPED, M.line("exp_reads"))]
    assert all(w.filename == __file__ for w in record if "warn_uninit" in str(w.message))
    np.testing.assert_allclose(out, np.exp(X), rtol=1e-6)


def test_an_uninitialized_value_reaching_the_output_is_an_error_at_the_write():
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(whole_tile_out, check_uninitialized=True)(X)
    e = info.value
    assert e.code == "err_read_uninitialized_memory"
    assert e.message == ("Read of uninitialized memory reaches an output: element [100, 0] of tensor `out` is computed "
                         "from element [100, 0] of tensor `t`, which was never written in this program instance "
                         f"(read at line {M.line('whole_reads')})")
    assert M.same_file(e.file) and (e.line, e.col) == M.loc("whole_out", "nisa.dma_copy")
    assert [(n[1], n[2], n[3]) for n in e.notes] == [(*M.loc("whole_reads", "nisa.activation"),
                                                      "the uninitialized value is read here")]
    # unchecked, the same kernel silently returns the never-written rows as NaN
    assert np.isnan(nki.simulate(whole_tile_out)(X)[100:]).all()


def test_the_jit_keywords_check_every_call():
    kernel = nki.jit(whole_tile_out, check_uninitialized=True)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(kernel)(X)
    assert info.value.code == "err_read_uninitialized_memory"
    with pytest.raises(nkic.NKIError) as info:
        kernel(X)
    assert info.value.code == "err_read_uninitialized_memory"
    # a keyword given to nki.simulate wins over the kernel's
    assert np.isnan(nki.simulate(kernel, check_uninitialized=False)(X)[100:]).all()


def test_nkic_sim_checks_switches_them_on_for_unchanged_scripts(monkeypatch):
    monkeypatch.setenv("NKIC_SIM_CHECKS", "uninitialized")
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(whole_tile_out)(X)
    assert info.value.code == "err_read_uninitialized_memory"
    with pytest.raises(nkic.NKIError) as info:
        nki.jit(whole_tile_out)(X)  # a plain call simulates, with the checks the variable asks for
    assert info.value.code == "err_read_uninitialized_memory"
    # an explicit keyword wins over the variable
    assert np.isnan(nki.simulate(whole_tile_out, check_uninitialized=False)(X)[100:]).all()
    monkeypatch.setenv("NKIC_SIM_CHECKS", "races")
    assert np.isnan(nki.simulate(whole_tile_out)(X)[100:]).all()
    x = RNG.random((512, 64), dtype=np.float32)
    with pytest.raises(nkic.NKIError) as info:
        legacy_nki.simulate_kernel(legacy_nki.jit(prefix_max), x)
    assert info.value.code == "err_unexpected_output_dependencies"
    monkeypatch.setenv("NKIC_SIM_CHECKS", "all")
    with pytest.raises(nkic.NKIError) as info:
        legacy_nki.simulate_kernel(legacy_nki.jit(legacy_whole_tile_out), X)
    assert info.value.code == "err_read_uninitialized_memory"


def legacy_whole_tile_out(x):
    out = lnl.ndarray((128, 64), dtype=x.dtype, buffer=lnl.shared_hbm)
    t = lnl.ndarray((128, 64), dtype=x.dtype)
    t[0:100, :] = lnl.load(x)
    lnl.store(out, value=lnl.exp(t))
    return out


@pytest.mark.parametrize("value", ["uninit", "races,bogus"])
def test_a_misspelled_nkic_sim_checks_is_refused(monkeypatch, value):
    monkeypatch.setenv("NKIC_SIM_CHECKS", value)
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(ragged_exp)(X)  # ERR:env_refused
    e = info.value
    assert e.code == "err_unsupported_args"
    assert e.message == ("unsupported arguments to 'NKIC_SIM_CHECKS': expects a comma-separated list of "
                         f"uninitialized, races, all, none; got {value!r}")
    assert M.same_file(e.file) and e.line == M.line("env_refused")


def test_a_check_keyword_must_be_a_bool():
    with pytest.raises(nkic.NKIError) as info:
        nki.simulate(ragged_exp, check_races="yes")  # ERR:not_bool
    check_diag(info.value, M, "err_unsupported_args",
               "unsupported arguments to 'nki.simulate': check_races must be True or False, got 'yes'",
               [("not_bool", "nki.simulate")])
    with pytest.raises(nkic.NKIError) as info:
        nki.jit(ragged_exp, check_uninitialized=1)  # ERR:not_bool_jit
    check_diag(info.value, M, "err_unsupported_args",
               "unsupported arguments to 'nki.jit': check_uninitialized must be True or False, got 1",
               [("not_bool_jit", "nki.jit")])


def test_an_accumulation_across_affine_iterations_is_not_a_race():
    x = RNG.random((512, 64), dtype=np.float32)
    out = legacy_nki.simulate_kernel(legacy_nki.jit(running_max), x, check_races=True, check_uninitialized=True)
    np.testing.assert_array_equal(out, x.reshape(4, 128, 64).max(axis=0))


def test_reading_the_partial_result_inside_the_loop_is_a_race():
    x = RNG.random((512, 64), dtype=np.float32)
    with pytest.raises(nkic.NKIError) as info:
        legacy_nki.simulate_kernel(legacy_nki.jit(prefix_max), x, check_races=True)
    check_diag(info.value, M, "err_unexpected_output_dependencies",
               "iteration 1 of affine loop `i` reads tensor `acc` written by iteration 0 (element [0, 0]); "
               "a loop-carried dependency needs nl.sequential_range", [("prefix_loop", "for")])


RAGGED_FILE = '''\
import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def softmax_rows(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(x[i_p, i_f], mask=(i_p < x.shape[0]))
    e = nl.exp(nl.subtract(t, nl.max(t, axis=1, keepdims=True)))
    nl.store(out[i_p, i_f], value=nl.divide(e, nl.sum(e, axis=1, keepdims=True)), mask=(i_p < x.shape[0]))
    return out


def make_inputs():
    return (np.random.default_rng(0).random((100, 64), dtype=np.float32),)


def reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
'''


def test_nkic_run_reports_a_dropped_value_as_a_warning_in_text_and_json(tmp_path):
    path = tmp_path / "softmax_rows.py"
    path.write_text(RAGGED_FILE)
    nkic_bin = str(Path(__file__).resolve().parents[2] / "bin" / "nkic")
    text = subprocess.run([nkic_bin, "run", str(path)], capture_output=True, text=True, timeout=300)
    assert text.returncode == 0, text.stderr
    message = ("this instruction reads element [100, 0] of tensor `t`, which was never written in this program "
               "instance; no output, branch or address uses what is computed from it, so the results do not depend on it")
    assert f"{path}:12: warning: [warn_uninitialized_value_dropped] {message}" in text.stderr
    machine = subprocess.run([nkic_bin, "run", str(path), "--json"], capture_output=True, text=True, timeout=300)
    report = json.loads(machine.stdout)
    assert machine.returncode == 0 and report["ok"], machine.stdout
    assert report["warnings"] == [{"severity": "warning", "code": "warn_uninitialized_value_dropped",
                                   "message": message, "category": "UserWarning", "file": str(path), "line": 12}]
