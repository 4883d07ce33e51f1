"""An exception out of a kernel's trace as the diagnostic the command line reports: one the
kernel's own Python code raised (a failing assert, a misspelt name) is err_exception_in_kernel
at the user's line; one out of nkic itself is err_internal there. From Python the user's
exception propagates unchanged (TraceKernel.trace drops nkic's frames from it)."""
import builtins
import difflib
import traceback
import types

from ._core import core
from . import _kernel


def _suggestion(exc, frame):
    """Python's "Did you mean: 'x'?" for a misspelt name or attribute (printed by the
    interpreter, not part of the exception's text before Python 3.12)."""
    name = getattr(exc, "name", None)
    if not isinstance(name, str) or not isinstance(exc, (NameError, AttributeError)):
        return ""
    if isinstance(exc, AttributeError):
        known = dir(exc.obj) if getattr(exc, "obj", None) is not None else []
    else:
        known = [*frame.f_locals, *frame.f_globals, *dir(builtins)]
    close = difflib.get_close_matches(name, sorted(set(known)), n=1)
    return f". Did you mean: {close[0]!r}?" if close else ""


def _in_user_terms(text, exc):
    """The legacy modules as the kernel imports them (neuronxcc.nki.language is nkic.language)."""
    obj = getattr(exc, "obj", None) if isinstance(exc, AttributeError) else None
    name = getattr(obj, "__name__", "") if isinstance(obj, types.ModuleType) else ""
    if name.startswith("nkic."):
        text = text.replace(f"module '{name}'", f"module 'neuronxcc.nki.{name[len('nkic.'):]}'")
    return text


def _is_current(kernel):
    from nki._kernel import Kernel  # nki is built on nkic: imported when asked
    return isinstance(kernel, Kernel)


def diagnostic(exc, kernel):
    """The NKIError the command line reports for `exc`, raised while `kernel` (None: a legacy
    one not at hand) was traced; its __cause__ is `exc`. An exception of nkic's own with no
    frame of the kernel's points at the kernel's first line; with no kernel either, `exc` is
    raised again."""
    entries = []
    tb = exc.__traceback__
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    users = [t for t in entries if _kernel._is_kernel_file(t.tb_frame.f_code.co_filename)]
    code = getattr(getattr(kernel, "func", None), "__code__", None)
    if not users and code is None:
        raise exc
    where = _kernel._tb_position(users[-1]) if users else (code.co_filename, code.co_firstlineno, 1)
    current = _is_current(kernel)
    try:
        if users and _kernel._raised_by_user(exc.__traceback__):
            text = _in_user_terms("".join(traceback.format_exception_only(exc)).strip(), exc)
            # Each outer frame of the kernel's is the call site of the next one, innermost first.
            calls = [(*_kernel._tb_position(t), inner.tb_frame.f_code.co_name) for t, inner in zip(users, users[1:])]
            core.raise_exception_in_kernel(text + _suggestion(exc, users[-1].tb_frame), current, *where, calls[::-1])
        core.raise_internal_error(current, *where)
    except core.NKIError as e:
        e.__cause__ = exc
        return e.with_traceback(None)
