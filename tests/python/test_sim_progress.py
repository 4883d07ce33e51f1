"""Simulation progress: the simulator reports the fraction done after program instances and
iterations of the outermost loops; the CLI draws it as a bar on a terminal."""
import io

import numpy as np
from neuronxcc import nki
import neuronxcc.nki.language as nl

from nkic import _cli_output, _kernel


@nki.jit
def loop_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.exp(nl.load(x[i * 128:(i + 1) * 128, :])))
    return out


@nki.jit
def spmd_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    p = nl.program_id(0)
    nl.store(out[p * 128:(p + 1) * 128, :], value=nl.exp(nl.load(x[p * 128:(p + 1) * 128, :])))
    return out


def progress_of(kernel, grid, x):
    traced = kernel.trace(grid, (x,), {})
    seen = []
    out = _kernel.simulate_traced(traced, traced.arrays({"x": x}), progress=seen.append)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
    return seen


def test_loop_iterations_report_increasing_fractions_ending_at_one():
    seen = progress_of(loop_kernel, None, np.random.rand(128 * 8, 64).astype(np.float32))
    assert len(seen) == 9 and seen == sorted(seen) and seen[-1] == 1.0, seen
    assert all(0 < f <= 1 for f in seen)


def test_programs_report_their_share():
    seen = progress_of(spmd_kernel, (4,), np.random.rand(128 * 4, 64).astype(np.float32))
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) >= 2, seen


def test_without_a_callback_nothing_is_reported():
    x = np.random.rand(256, 64).astype(np.float32)
    traced = loop_kernel.trace(None, (x,), {})
    np.testing.assert_allclose(_kernel.simulate_traced(traced, traced.arrays({"x": x})), np.exp(x), rtol=1e-6)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_bar_draws_on_a_terminal_after_its_delay_and_clears():
    assert not _cli_output.ProgressBar.wanted(io.StringIO(), quiet=False)
    assert not _cli_output.ProgressBar.wanted(_Terminal(), quiet=True)
    assert _cli_output.ProgressBar.wanted(_Terminal(), quiet=False)
    term = _Terminal()
    bar = _cli_output.ProgressBar(term, delay=0.0, width=10)
    bar(0.5)
    assert term.getvalue() == "\rsimulating [#####.....]  50%"
    bar.close()
    assert term.getvalue().endswith("\r")
    quiet = _Terminal()
    late = _cli_output.ProgressBar(quiet, delay=3600)
    late(0.5)
    late.close()
    assert quiet.getvalue() == ""
