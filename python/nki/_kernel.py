"""nki.jit and nki.simulate: a current-API kernel is an nkic kernel traced with the
0.3+ conventions (inputs writable in place, Python loops unrolled, target from
NEURON_PLATFORM_TARGET_OVERRIDE, as every kernel's default: nkic._targets), and 0.2's
where NKIC_NKI_VERSION serves it (platform_target=, kernel[grid], list arguments)."""
import copy
import os
import sys

import numpy as np

from nkic._core import core
from nkic import _loops, _sim_checks
from . import _subset
from nkic._kernel import Launch, TraceKernel, _unexpected
from . import _builtin_buffers, _lnc, _schedule, language
from .compiler import SpecializationConfig

_JIT_ARGS = frozenset({"mode", "platform_target", "additional_compile_opt", "experimental_flags",
                       "show_compiler_tb", "debug_kernel", "enable_out_of_bound_check", "kernel_return"})
# nkic's own: the simulator's checks (None: as NKIC_SIM_CHECKS says).
_CHECK_ARGS = frozenset({"check_uninitialized", "check_races"})


def _framework(args):
    """The framework the arguments come from: numpy runs standalone; torch and JAX
    arrays have no device here."""
    for a in args:
        mod = type(a).__module__.split(".")[0]
        if mod in ("torch", "jax", "jaxlib"):
            core.raise_unsupported_args("nki.jit", f"a {mod} array argument; nkic runs kernels on numpy arrays "
                                        "(pass numpy arrays, e.g. tensor.numpy())")
    return "numpy"


class Kernel(TraceKernel):
    """An @nki.jit kernel. Inputs are HBM tensors the kernel may write (the writes reach
    the caller's arrays, as on the device and in nki.simulate); outputs are returned."""
    # Called from inside another kernel it runs as Python (its __call__), which inlines the body.
    __nki_dont_trace__ = True
    current_api = True

    def __init__(self, func, checks=None, compile_config=None, specialization_config=None, **options):
        # mode="trace": the core's convention of writable inputs copied back to the caller.
        super().__init__(func, mode="trace", trace_time_unroll_builtin_range=True, **options)
        self.simulation = False
        self.checks = checks or {}  # check_uninitialized= / check_races= given to nki.jit
        self.schedule, self._schedule_at = (), None
        self.compile_config, self.specialization_config = compile_config, specialization_config

    def with_schedule(self, edges):
        """A copy of the kernel whose named instructions get `edges` (§5.6): (consumer,
        producer) or (consumer, [producers]) pairs of name= labels."""
        scheduled = copy.copy(self)
        scheduled.schedule = self.schedule + _schedule.check_edges(edges)
        scheduled._schedule_at = core.user_location()
        return scheduled

    def __repr__(self):
        return f"<nki.jit kernel {self.__name__}>"

    def _trace_begun(self):
        core.set_current_api()
        env = os.environ.get
        # The LNC degree: kernel[n]'s, else NEURON_LOGICAL_NC_CONFIG's, else 1 (nki 0.7).
        self._lnc = core.resolve_lnc(self.__name__, self._bracket, env("NEURON_LOGICAL_NC_CONFIG", ""),
                                     env("NEURON_CC_FLAGS", ""))
        allow = self.specialization_config is not None and self.specialization_config.allow_nested_config_override
        core.configure_kernel(self.compile_config, allow, env("NKI_COMPILER_FRONTEND", ""),
                              env("NKI_PREFETCH_RING_SIZE", ""))

    def _check_param_hints(self, sig):
        """The current nki traces Python: an annotation is not read, so a string one (every
        annotation under `from __future__ import annotations`) is no error."""

    def _check_result(self, result):
        core.check_placements()  # the body is traced: every use of a placed tensor is known
        core.check_prepares_triggered()  # every collective prepare has its trigger
        outputs = list(result) if isinstance(result, (tuple, list)) else [] if result is None else [result]
        core.check_outputs([o for o in outputs if isinstance(o, core.NkiTensor)])

    def __getitem__(self, lnc):
        if isinstance(lnc, tuple):  # nki 0.2: kernel[grid], an SPMD launch grid
            core.check_versioned_form("kernel[grid] (an SPMD launch grid)")
            return Launch(self, _SpmdGrid(lnc))
        if isinstance(lnc, bool) or not isinstance(lnc, (int, np.integer)):
            core.raise_unsupported_args(self.__name__, f"kernel[lnc] takes one integer (the logical NeuronCore "
                                        f"config), got {lnc!r}")
        return Launch(self, (int(lnc),))

    def __call__(self, *args, **kwargs):
        if core.trace_active():
            # A jit kernel called from a jit kernel is inlined (nki 0.7), under the outer kernel's config.
            core.check_nested_config(self.__name__, self.compile_config)
            return self._trace_nested(*args, **kwargs)
        return self.run(None, args, kwargs)

    def trace(self, grid, args, kwargs):
        if not args and not kwargs:
            core.raise_unsupported_args(self.__name__, "the kernel is called without arguments; pass its input arrays")
        values = list(args) + list(kwargs.values())
        _framework(values)
        if any(_holds_list(v) for v in values):
            core.check_versioned_form("a list argument to a kernel")
        _subset.check(self.func)
        if isinstance(grid, _SpmdGrid):  # nki 0.2's launch grid: one program per grid point, one core each
            self._bracket = None
            return super().trace(tuple(grid), args, kwargs)
        # kernel[n]: one program, the body traced once per core (_lnc); kernel[1] is the plain kernel.
        self._bracket = grid[0] if grid else None
        return super().trace(None, args, kwargs)

    def _run_body(self, body):
        language._begin_trace()
        traced = lambda: _schedule.run_scheduled(body, self.schedule, self._schedule_at)  # noqa: E731
        return traced() if self._lnc == 1 else _lnc.trace_per_core(self._lnc, traced)

    def run(self, grid, args, kwargs, **sim_options):
        sim_options = {**self.checks, **sim_options}
        if not self.simulation and os.environ.get("NKI_SIMULATOR") != "1" and not _notified:
            # No Neuron device here: a plain call simulates, as NKI_SIMULATOR=1 asks.
            _notified.append(True)
            print("nkic: no Neuron hardware here; running the kernel on the nkic CPU simulator "
                  "(NKI_SIMULATOR=1 silences this)", file=sys.stderr)
        return super().run(grid, args, kwargs, **sim_options)


class _SpmdGrid(tuple):
    """The grid of nki 0.2's kernel[grid] launch, told apart from kernel[lnc]'s."""


def _holds_list(value):
    """A list argument, or one inside a tuple or dict argument (0.3+ takes tuples only)."""
    if isinstance(value, list):
        return True
    items = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else ()
    return any(_holds_list(v) for v in items)


_notified = []
# kernel[n] traces its body per core with per-core Python state (_lnc): its loops unroll.
_loops.SYMBOLIC_VETOES.append(_lnc.active)


def jit(fn=None, *, compile_config=None, specialization_config=None, **kwargs):
    """@nki.jit, @nki.jit(), nki.jit(f). compile_config= (an nki.compiler.CompileConfig) and
    specialization_config= (an nki.compiler.SpecializationConfig) as of nki 0.7. `mode=` is
    ignored (deprecated since 0.3); `platform_target=` names the target up to nki 0.2 (since 0.3
    NEURON_PLATFORM_TARGET_OVERRIDE does). check_uninitialized= / check_races= (nkic's): the
    simulator's checks for every call."""
    if compile_config is not None or specialization_config is not None:
        core.check_versioned_form("nki.jit(compile_config=, specialization_config=)")
    core.check_jit_configs(compile_config, specialization_config, SpecializationConfig)
    for name in kwargs:
        if name not in _JIT_ARGS | _CHECK_ARGS:
            _unexpected("nki.jit", name, _JIT_ARGS | _CHECK_ARGS)
    for name in ("mode", "platform_target"):
        if name in kwargs:
            core.check_versioned_form(f"nki.jit({name}=)")
    checks = _checks("nki.jit", kwargs.get("check_uninitialized"), kwargs.get("check_races"))
    if fn is None:
        return lambda f: _kernel(f, checks, kwargs.get("platform_target"), compile_config, specialization_config)
    return _kernel(fn, checks, kwargs.get("platform_target"), compile_config, specialization_config)


def _kernel(fn, checks, platform_target, compile_config, specialization_config):
    while isinstance(fn, TraceKernel):  # a decorator chain: the function underneath
        fn = fn.func
    if not callable(fn):
        core.raise_unsupported_args("nki.jit", f"expects the kernel function, got {type(fn).__name__}")
    _builtin_buffers.provide(fn)
    return Kernel(fn, checks, compile_config, specialization_config, platform_target=platform_target)


def _checks(api, check_uninitialized, check_races):
    """The checks given explicitly (validated at the caller's line); the others follow NKIC_SIM_CHECKS."""
    _sim_checks.resolve(api, check_uninitialized, check_races)
    return {name: value for name, value in (("check_uninitialized", check_uninitialized),
                                            ("check_races", check_races)) if value is not None}


def simulate(kernel, *, check_uninitialized=None, check_races=None):
    """nki.simulate(kernel)(*arrays): runs a jit kernel, a plain function or kernel[lnc]
    on the CPU simulator and returns numpy arrays. check_uninitialized=True: a value computed
    from memory nothing wrote is an error where it reaches an output, a loop bound or an
    address, a warning when dropped; check_races=True: affine_range iterations that depend on
    each other are an error (err_unexpected_output_dependencies). Left out, they follow
    NKIC_SIM_CHECKS ("uninitialized", "races", "all")."""
    checks = _checks("nki.simulate", check_uninitialized, check_races)
    grid = None
    if isinstance(kernel, Launch):
        kernel, grid = kernel.kernel, kernel.grid
    if not isinstance(kernel, Kernel):
        kernel = jit(kernel)

    def run(*args, **kwargs):
        kernel.simulation = True
        return kernel.run(grid, args, kwargs, **checks)
    return run
