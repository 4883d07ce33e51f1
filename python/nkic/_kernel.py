"""Kernels: the decorators (jit, trace, baremetal, simulate_kernel), SPMD
launch kernel[g0, g1](...), tracing a kernel into IR and running it."""
import copy
import difflib
import inspect
import os
import sys
import types

import numpy as np

from ._core import core
from . import _dtypes, _loops, _rewrite, _sim_checks, _targets, _typehints, typing

# nkic and the nki package it serves (python/nki, beside it).
_PKG_DIRS = (os.path.dirname(os.path.abspath(__file__)),
             os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "nki") + os.sep)


def _user_traceback(tb):
    """Drop nkic's own frames so a diagnostic's traceback shows only user code."""
    if os.environ.get("NKIC_FRONTEND_DEBUG") == "1":
        return tb
    frames = []
    while tb is not None:
        if not _is_nkic_file(tb.tb_frame.f_code.co_filename):
            frames.append(tb)
        tb = tb.tb_next
    new = None
    for t in reversed(frames):
        new = types.TracebackType(new, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return new


def _is_nkic_file(filename):
    f = os.path.abspath(filename)
    return f.startswith(_PKG_DIRS) or "/neuronxcc/" in f


def _is_kernel_file(filename):
    """The user's own code: neither nkic's, the stdlib nor an installed package (numpy)."""
    return (core.is_user_code_file(filename) and not _is_nkic_file(filename)
            and not any(d in filename for d in ("/site-packages/", "/dist-packages/")))


def _raised_by_user(tb):
    """The user's code raised the error: the innermost frame that is nkic's or the kernel's is
    the kernel's (numpy or the stdlib it called may lie beyond), or it is nkic's call hook
    running a call the kernel made to plain Python (calling a string, int('x')) or iterating
    what its `for` names (None), so the user's line is where it belongs."""
    last = None
    while tb is not None:
        f = tb.tb_frame.f_code.co_filename
        if _is_nkic_file(f) or _is_kernel_file(f):
            last = tb
        tb = tb.tb_next
    if last is None:
        return False
    return (not _is_nkic_file(last.tb_frame.f_code.co_filename)
            or last.tb_frame.f_code in (_rewrite.inline_function.__code__, _loops.user_iter.__code__))


class _Traced:
    """A kernel traced for one set of argument shapes: its IR and parameter map."""

    def __init__(self, ir, array_params, in_place=False):
        self.ir = ir
        # The numpy-array parameters, in order: a name, or (name, i) for item i of a tuple argument.
        self.array_params = array_params
        self.in_place = in_place          # parameters are written in place (legacy kernels)

    def arrays(self, bound):
        """The kernel's input arrays out of its bound arguments."""
        return [bound[p] if isinstance(p, str) else bound[p[0]][p[1]] for p in self.array_params]


def _recursion_too_deep(tb):
    """A RecursionError out of user code: err_recursion_too_deep at the outermost
    call of a user function to itself (the traceback's first user frame that recurs)."""
    frames = []
    while tb is not None:
        if _user_traceback(types.TracebackType(None, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)) is not None:
            frames.append(tb)
        tb = tb.tb_next
    # Inlined calls may run fresh code objects of one function: compare where they come from.
    where = [(t.tb_frame.f_code.co_filename, t.tb_frame.f_code.co_firstlineno) for t in frames]
    for i, t in enumerate(frames):
        if where[i] in where[i + 1:]:
            core.raise_recursion_too_deep(t.tb_frame.f_code.co_name, sys.getrecursionlimit(), *_tb_position(t))


def _tb_position(tb):
    """(file, line, col) of a traceback entry."""
    code = tb.tb_frame.f_code
    _, _, col, _ = list(code.co_positions())[tb.tb_lasti // 2]
    return code.co_filename, tb.tb_lineno, (col or 0) + 1


def _spec_dtype(kernel, name, spec):
    """The dtype of an nt.tensor[[...], dtype] argument; a spec without one is refused."""
    if spec.dtype is None:
        core.raise_unsupported_args(kernel, f"the shape spec nt.{spec.__name__} for '{name}' has no dtype; write "
                                    f"nt.tensor[[{', '.join(map(str, spec.shape))}], nl.float32] (or the dtype meant)")
    return spec.dtype


_MAX_GRID = 2**31 - 1  # a launch grid size the core holds (any larger one is far past the time budget)


def _grid_spec(name, grid):
    if grid is None:
        return [], []
    if not isinstance(grid, tuple):
        grid = (grid,)
    dims, cores = [], []
    for g in grid:
        n = g if isinstance(g, (int, np.integer)) else getattr(g, "size", g)  # numpy ints have a .size too
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= _MAX_GRID:
            core.raise_unsupported_args(name, f"the launch grid {grid!r} needs positive integer sizes up to "
                                        f"{_MAX_GRID}, got {n!r}")
        dims.append(int(n))
        cores.append(int(getattr(g, "physical_cores", 1)))
    return dims, cores


# The keyword arguments of each decorator (NKI_API.md 4.2-4.3, plus the ones public kernels pass
# that the API pages do not list); nkic accepts them all and needs none but platform_target.
_JIT_ARGS = frozenset({"mode", "platform_target", "additional_compile_opt", "kernel_return", "experimental_flags",
                       "show_compiler_tb", "debug_kernel", "enable_out_of_bound_check",
                       "trace_time_unroll_builtin_range"})
_DECORATOR_ARGS = {
    "nki.jit": _JIT_ARGS,
    "nki.trace": _JIT_ARGS,
    "nki.baremetal": _JIT_ARGS | {"save_neff_name", "save_trace_name", "artifacts_dir"},
    "nki.benchmark": _JIT_ARGS | {"warmup", "iters", "save_neff_name", "save_trace_name"},
    "nki.profile": _JIT_ARGS | {"working_directory", "save_neff_name", "save_trace_name", "overwrite",
                                "profile_nth", "num_execs"},
}
# NKI_API.md 4.2's run modes, and "trace" for helper kernels; "profile" is nki.profile's.
_MODES = ("auto", "jax", "torchxla", "baremetal", "benchmark", "simulation", "trace", "profile")


def _did_you_mean(name, known):
    """"; did you mean 'x'?" for the closest of `known` to `name`, or nothing."""
    close = difflib.get_close_matches(str(name), sorted(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _unexpected(api, name, known, what="unexpected keyword argument"):
    """err_unsupported_args for keyword `name`, suggesting the closest of `known`."""
    core.raise_unsupported_args(api, f"{what} {name!r}" + _did_you_mean(name, known))


def _check_decorator_args(api, func, kwargs):
    """A misspelled decorator argument is an error at the decorator's line, not ignored."""
    for name in kwargs:
        if name not in _DECORATOR_ARGS[api]:
            _unexpected(api, name, _DECORATOR_ARGS[api])
    mode = kwargs.get("mode", "auto")
    if mode not in _MODES:
        core.raise_unsupported_args(api, f"mode {mode!r} is not one of {', '.join(_MODES)}" + _did_you_mean(mode, _MODES))
    if func is not None and not callable(func):
        core.raise_unsupported_args(api, f"expects the kernel function, got {type(func).__name__}")


class TraceKernel:
    """An NKI kernel (@nki.jit / @nki.trace): traced once per call into IR."""

    def __init__(self, func, mode="auto", platform_target=None, **options):
        if isinstance(func, TraceKernel):  # re-decorated (nki.benchmark(...)(jit_kernel)): wrap the function
            options = {**func.options, **options}
            platform_target = platform_target or func._named_target
            func = func.func
        self.func = func
        self.mode = mode
        # A non-string target is an unknown target name (err_incorrect_target_type when traced).
        self._named_target = (platform_target if isinstance(platform_target, str) else repr(platform_target)
                              if platform_target is not None else None)
        self.options = options
        self.__name__ = getattr(func, "__name__", "kernel")
        self.__doc__ = getattr(func, "__doc__", None)
        self.__wrapped__ = func

    def __repr__(self):
        return f"<nki kernel {self.__name__}>"

    # A kernel of the current nki API (python/nki); this class is the legacy neuronxcc.nki one.
    current_api = False

    @property
    def target(self):
        """The target the kernel is traced for: the one named (platform_target=, retarget), else
        the default of every command and API (_targets.default_target)."""
        return self._named_target or _targets.default_target()

    @target.setter
    def target(self, name):
        self._named_target = name

    def retarget(self, target):
        """This kernel, traced for `target` (nkic.profile(target=), nkic --target)."""
        k = copy.copy(self)
        k.target = target
        return k

    def __getitem__(self, grid):
        return Launch(self, grid)

    def __call__(self, *args, **kwargs):
        if core.trace_active():
            return self._trace_nested(*args, **kwargs)
        return self.run(None, args, kwargs)

    def _trace_begun(self):
        """The trace context is open (the current API marks its kernels here)."""

    def _check_param_hints(self, sig):
        """The legacy compiler reads the annotations (string ones are refused)."""
        _typehints.check_param_hints(self.func, sig)

    def _check_result(self, result):
        """What the kernel returned, before it becomes the kernel's outputs (the current API's rules)."""

    def _trace_nested(self, *args, **kwargs):
        """Called from inside another kernel: traced into the same kernel."""
        return _rewrite.inline_function(self.func, args, kwargs)

    def trace(self, grid, args, kwargs):
        sig = inspect.signature(self.func)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            if not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
                for name in kwargs:
                    if name not in sig.parameters:  # a misspelled parameter, or simulate_kernel option
                        _unexpected(self.__name__, name, set(sig.parameters) | _SIMULATE_ARGS)
            core.raise_unsupported_args(self.__name__, str(e))
        bound.apply_defaults()
        dims, cores = _grid_spec(self.__name__, grid)
        unroll = bool(self.options.get("trace_time_unroll_builtin_range", _options["trace_time_unroll_builtin_range"]))
        code = getattr(self.func, "__code__", None)
        legacy = self.mode == "trace"  # @nki.trace run directly: outputs are written into parameters
        core.trace_begin(self.__name__, self.target, dims, cores, unroll, legacy,
                         code.co_filename if code else "", code.co_firstlineno if code else 0)
        try:
            self._trace_begun()
            array_params = []
            call_args = {}
            self._check_param_hints(sig)
            for name, value in bound.arguments.items():
                if isinstance(value, np.ndarray) or typing.is_shape_spec(value):
                    mutable = legacy or _typehints.is_mutable(sig.parameters[name].annotation)
                    dtype = _spec_dtype(self.__name__, name, value) if isinstance(value, type) else value.dtype
                    value = core.add_input(name, list(value.shape), _dtypes.dtype_name(dtype), mutable)
                    array_params.append(name)
                elif isinstance(value, (tuple, list)) and any(isinstance(v, np.ndarray) for v in value):
                    # A tuple of arrays (a KV cache `past=(k, v)`): each array is an input.
                    items = list(value)
                    for i, v in enumerate(items):
                        if isinstance(v, np.ndarray):
                            items[i] = core.add_input(f"{name}_{i}", list(v.shape), _dtypes.dtype_name(v.dtype), legacy)
                            array_params.append((name, i))
                    value = type(value)(items)
                call_args[name] = value
            fn = _rewrite.rewritten(self.func)
            bound.arguments.update(call_args)
            result = self._run_body(lambda: fn(*bound.args, **bound.kwargs))
            self._check_result(result)
            return _Traced(core.finalize(result), array_params, legacy)
        except core.NKIError as e:
            raise e.with_traceback(_user_traceback(e.__traceback__)) from None
        except RecursionError as e:
            try:
                _recursion_too_deep(e.__traceback__)
            except core.NKIError as d:
                raise d.with_traceback(_user_traceback(d.__traceback__)) from None
            raise
        except Exception as e:
            # The user's own exception (a failing assert, a misspelt name) is theirs, shown
            # without nkic's frames; one out of nkic's code keeps them.
            if _raised_by_user(e.__traceback__):
                raise e.with_traceback(_user_traceback(e.__traceback__)) from None
            raise
        finally:
            core.trace_end()

    def _run_body(self, body):
        """Traces the kernel body (a front end may trace it more than once)."""
        return body()

    def run(self, grid, args, kwargs, check_uninitialized=None, check_races=None, time_limit=None):
        check_uninitialized, check_races = _sim_checks.resolve(self.__name__, check_uninitialized, check_races)
        measured = self.mode in ("benchmark", "profile")
        specs = [v for v in list(args) + list(kwargs.values()) if typing.is_shape_spec(v)]
        if specs and not measured:
            core.raise_unsupported_args(self.__name__, f"the shape spec nt.{specs[0].__name__} holds no data to "
                                        "simulate; pass a numpy array (nki.benchmark and nki.profile take specs)")
        if self.mode == "baremetal" or (self.mode == "auto" and not _notified.get("baremetal")):
            _notified["baremetal"] = True
            print("nkic: no Neuron hardware here; running the kernel on the nkic CPU simulator", file=sys.stderr)
        traced = self.trace(grid, args, kwargs)
        arrays = inspect.signature(self.func).bind(*args, **kwargs).arguments
        try:
            # Shape specs: nothing to simulate, only the latency to predict.
            outputs = None if specs else simulate_traced(traced, traced.arrays(arrays), check_uninitialized,
                                                         check_races, time_limit)
            if measured:
                from . import _profile
                self.benchmark_result = _profile.measure(self, traced)
            return outputs
        except core.NKIError as e:
            raise e.with_traceback(_user_traceback(e.__traceback__)) from None


_notified = {}
_options = {"trace_time_unroll_builtin_range": False}


def set_option(name, value):
    """Set a global tracing option (e.g. trace_time_unroll_builtin_range)."""
    if name not in _options:
        _unexpected("nkic.set_option", name, _options, what="unknown option")
    _options[name] = value


class Launch:
    """kernel[g0, g1, ...]: an SPMD launch of a kernel."""
    # Runs as Python when a kernel calls it, so the nested-grid error is raised
    # at the caller's line rather than inside an inlined copy of this method.
    __nki_dont_trace__ = True

    def __init__(self, kernel, grid):
        self.kernel = kernel
        self.grid = grid

    def __call__(self, *args, **kwargs):
        if core.trace_active():
            core.raise_nested_kernel_with_spmd_grid()
        return self.kernel.run(self.grid, args, kwargs)

    def __getitem__(self, grid):
        core.raise_unsupported_args(self.kernel.__name__, f"the launch grid is given once, as kernel[{self.grid!r}]; "
                                    f"got a second one, {grid!r}")


def _env_limit(name):
    """A non-negative number from environment variable `name`, or None when unset."""
    value = os.environ.get(name, "")
    if not value:
        return None
    try:
        limit = float(value)
    except ValueError:
        limit = -1.0
    if not limit >= 0:
        core.raise_unsupported_args(name, f"expects a non-negative number, got {value!r}")
    return limit


def _host_arrays(kernel, traced, arrays):
    """The arrays the simulator reads and writes: (inputs, outputs, aliased outputs)."""
    # An input the kernel writes is a copy (kernels must not see caller aliasing), except for
    # legacy kernels, which write their outputs into the caller's arrays; a read-only legacy
    # argument is simulated on a copy (the simulator writes through raw pointers). An input
    # nothing writes is read in place.
    written = set(kernel.written_inputs)
    inputs = [np.ascontiguousarray(a) if traced.in_place and a.flags.writeable
              else a if i not in written and a.flags.c_contiguous and a.flags.aligned
              else np.array(a, order="C", copy=True) for i, a in enumerate(arrays)]
    for (name, shape, dt), a in zip(kernel.inputs, inputs):
        if tuple(a.shape) != tuple(shape) or _dtypes.dtype_name(a.dtype) != dt:
            raise ValueError(f"argument {name}: expected {dt}{list(shape)}, got {a.dtype}{list(a.shape)}")
    outputs = []
    aliased = dict(kernel.mutable_outputs)
    for i in aliased.values():
        if not arrays[i].flags.writeable:
            _read_only_argument(kernel, kernel.inputs[i][0])
    for i, (name, shape, dt) in enumerate(kernel.outputs):
        if i in aliased:
            if traced.in_place and inputs[aliased[i]] is arrays[aliased[i]]:
                inputs[aliased[i]] = inputs[aliased[i]].copy()
            outputs.append(inputs[aliased[i]])
        else:
            outputs.append(np.empty(shape, dtype=_dtypes.numpy_dtype(dt)))
    return inputs, outputs, aliased


def _sim_limits(time_limit):
    """The simulator's time and memory budgets (NKIC_SIM_TIME_LIMIT / NKIC_SIM_MEMORY_LIMIT by default)."""
    if time_limit is None:
        time_limit = _env_limit("NKIC_SIM_TIME_LIMIT")
    elif isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit >= 0:
        core.raise_unsupported_args("nki.simulate_kernel", f"time_limit must be a non-negative number of seconds, "
                                    f"got {time_limit!r}")
    return time_limit, _env_limit("NKIC_SIM_MEMORY_LIMIT") or 0.0


def _checked_host_arrays(traced, arrays, check_uninitialized, time_limit, memory_limit):
    """The budget (estimated run time, host memory) is checked before numpy allocates the outputs."""
    kernel = traced.ir
    kernel.check_budget(check_uninitialized, time_limit, memory_limit)
    try:
        host = _host_arrays(kernel, traced, arrays)
    except MemoryError:
        host = None  # the budget passed, but the host refused the arrays (taken meanwhile, or overcommit)
    if host is None:
        kernel.fail_out_of_memory()
    return host


def _addresses(arrays):
    return [a.__array_interface__["data"][0] for a in arrays]


def _results(traced, arrays, host):
    """The kernel's outputs once simulated; written inputs reach the caller's arrays."""
    kernel = traced.ir
    inputs, outputs, aliased = host
    for o, i in aliased.items():
        np.copyto(arrays[i], outputs[o])
        outputs[o] = arrays[i]
    if traced.in_place:
        for (name, _, _), a, c in zip(kernel.inputs, arrays, inputs):
            if c is not a and not a.flags.writeable:
                if a.tobytes() != c.tobytes():
                    _read_only_argument(kernel, name)
            elif c is not a:
                np.copyto(a, c)
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def simulate_traced(traced, arrays, check_uninitialized=False, check_races=False, time_limit=None, progress=None):
    """Simulates a traced kernel on `arrays`; `progress(fraction)`, when given, is called as the
    simulation advances (after program instances and iterations of the outermost loops)."""
    time_limit, memory_limit = _sim_limits(time_limit)
    host = _checked_host_arrays(traced, arrays, check_uninitialized, time_limit, memory_limit)
    traced.ir.simulate(_addresses(host[0]), _addresses(host[1]), check_uninitialized, check_races,
                       time_limit, memory_limit, progress, budget_checked=True)
    return _results(traced, arrays, host)


def simulate_traced_ranks(traced, per_rank_arrays, check_uninitialized=False, check_races=False):
    """Simulates a traced kernel once per rank (rank r on per_rank_arrays[r]), all ranks at once,
    meeting at their collectives; returns each rank's outputs in rank order."""
    time_limit, memory_limit = _sim_limits(None)
    hosts = [_checked_host_arrays(traced, arrays, check_uninitialized, time_limit, memory_limit)
             for arrays in per_rank_arrays]
    traced.ir.simulate_ranks([_addresses(h[0]) for h in hosts], [_addresses(h[1]) for h in hosts],
                             check_uninitialized, check_races, time_limit, memory_limit)
    return [_results(traced, arrays, h) for arrays, h in zip(per_rank_arrays, hosts)]


def _read_only_argument(kernel, name):
    core.raise_unsupported_args(kernel.name, f"the kernel writes its parameter '{name}' in place, but the numpy "
                                f"array passed for it is read-only (flags.writeable is False); pass a writable array")


def _decorator(api, func, kwargs):
    _check_decorator_args(api, func, kwargs)
    if func is None:
        return lambda f: _decorator(api, f, kwargs)
    return TraceKernel(func, **kwargs)


def jit(func=None, **kwargs):
    """@nki.jit / @nki.jit(mode=...): an NKI kernel. Without hardware, every
    run mode executes on the simulator."""
    return _decorator("nki.jit", func, kwargs)


def trace(func=None, **kwargs):
    """@nki.trace: a traceable NKI function, inlined when called from a kernel."""
    return _decorator("nki.trace", func, {**kwargs, "mode": "trace"})


def baremetal(kernel=None, **kwargs):
    """@nki.baremetal: there is no hardware here, so it runs the simulator."""
    return _decorator("nki.baremetal", kernel, {**kwargs, "mode": "baremetal"})


def benchmark(kernel=None, **kwargs):
    """@nki.benchmark(warmup=, iters=): runs the simulator and fills kernel.benchmark_result with
    the cost model's predicted latency (nc_latency.get_latency_percentile(p), µs)."""
    return _decorator("nki.benchmark", kernel, {**kwargs, "mode": "benchmark"})


def profile(func=None, **kwargs):
    """@nki.profile(working_directory=...): as nki.benchmark, and writes the predicted engine
    timeline as Perfetto JSON into working_directory."""
    return _decorator("nki.profile", func, {**kwargs, "mode": "profile"})


_SIMULATE_ARGS = frozenset({"check_uninitialized", "check_races", "time_limit"})


def simulate_kernel(kernel, *args, check_uninitialized=None, check_races=None, time_limit=None, **kwargs):
    """Run `kernel` (or `kernel[grid]`) on the CPU simulator; numpy in, numpy out.

    check_uninitialized: a value computed from on-chip memory no instruction wrote is an
    error when it reaches an output, a loop bound or an address, a warning when dropped.
    check_races: report affine_range iterations that depend on each other
    (err_unexpected_output_dependencies); associative accumulation is exempt.
    Either left out (None): as NKIC_SIM_CHECKS says ("uninitialized", "races", "all").
    time_limit: refuse (err_simulation_time_limit_exceeded) a simulation estimated to take
    longer, in seconds; 0 is no limit; default NKIC_SIM_TIME_LIMIT, else 600."""
    grid = None
    if isinstance(kernel, Launch):
        kernel, grid = kernel.kernel, kernel.grid
    if not isinstance(kernel, TraceKernel):
        kernel = TraceKernel(kernel, mode="simulation")
    elif kernel.mode in ("auto", "baremetal"):  # the simulator was asked for: no "no hardware" notice
        kernel = copy.copy(kernel)
        kernel.mode = "simulation"
    return kernel.run(grid, args, kwargs, check_uninitialized=check_uninitialized, check_races=check_races,
                      time_limit=time_limit)


def dont_trace(func=None):
    """Mark a function to run as plain Python when called from a kernel."""
    def mark(f):
        f.__nki_dont_trace__ = True
        return f
    return mark if func is None else mark(func)


core.set_dispatch_hooks(TraceKernel, _rewrite.inline_function)
