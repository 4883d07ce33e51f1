"""A kernel file as `nkic run` and `nkic sweep` read it: the module, its kernel (one, or named
as FILE::KERNEL), and its own code (make_inputs(), reference()) whose exceptions are usage
errors, never diagnostics."""
import importlib.util
import os
import re
import sys

from ._core import core
from . import _kernel


class CliError(Exception):
    """A usage error: bad arguments, a missing file or kernel, a file whose own code fails."""


def user_call(what, fn, *args, **kwargs):
    """Runs the file's own code; an exception from it is a usage error naming `what`
    (a diagnostic from a kernel it runs stays a diagnostic)."""
    try:
        return fn(*args, **kwargs)
    except core.NKIError:
        raise
    except Exception as e:
        raise CliError(f"{what} raised {type(e).__name__}: {e}") from e


def load_module(path):
    if not os.path.exists(path):
        raise CliError(f"no such file: {path}")
    name = "nkic_user_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    user_call(f"loading {path}", spec.loader.exec_module, mod)
    return mod


def find_kernel(mod, name, path):
    if name:
        k = getattr(mod, name, None)
        if k is None:
            raise CliError(f"{path} defines no kernel named {name!r}")
    else:
        found = [v for v in vars(mod).values() if isinstance(v, _kernel.TraceKernel)]
        if len(found) != 1:
            raise CliError(f"{path} defines {len(found)} kernels; name one as {path}::KERNEL")
        k = found[0]
    return k if isinstance(k, _kernel.TraceKernel) else _kernel.TraceKernel(k, mode="simulation")
