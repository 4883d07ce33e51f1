"""nki.compiler (ncc): allocation control and kernel decorators. nkic's
simulator has no allocator, so these keep the kernel's meaning unchanged."""
import contextlib

from ._core import core
from ._ops import nki_api as _api
from . import language as _nl

sbuf = _nl.sbuf
psum = _nl.psum


def _identity_decorator(func=None, **kwargs):
    if func is None:
        return lambda f: f
    return func


skip_middle_end_transformations = _identity_decorator
enable_stack_allocator = _identity_decorator
force_auto_alloc = _identity_decorator


@_api("ncc.allocation_scope")
@contextlib.contextmanager
def allocation_scope():
    """`with ncc.allocation_scope():` on-chip tensors created in the block live until its end;
    using one afterwards is err_local_variable_used_out_of_scope."""
    core.push_allocation_scope()
    try:
        yield
    finally:
        core.pop_scope()


class _Directive:
    """A loop directive (affine_range(..., directives=[ncc.multi_buffer(2)]))."""
    __slots__ = ("kind", "value")

    def __init__(self, kind, value):
        self.kind = kind
        self.value = str(value)

    def __repr__(self):
        return f"{self.kind}({self.value})"


@_api("ncc.multi_buffer")
def multi_buffer(factor=2):
    return _Directive("multi_buffer", core.int_arg(factor, "factor"))


@_api("ncc.no_reorder")
def no_reorder():
    return _Directive("no_reorder", "true")


@_api("ncc.pipeline_stages")
def pipeline_stages(n):
    return _Directive("pipeline_stages", core.int_arg(n, "n"))
