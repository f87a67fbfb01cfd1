"""One op call to the backend it resolves to, and the docstring texts every operator function
shares.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .. import _fast
from .._errors import ACL_ERROR_RT_MEMORY_ALLOCATION, ACLNN_ERR_PARAM_INVALID, AclnnError
from .._numpy import progress as _progress
from .._numpy.plans import NumpyOp
from .._runtime import backend as _backend, loader
from .._runtime.device import stream_address


def dispatch_python(backend: str | None, numpy_impl: Callable[..., Any], aclnn_impl: Callable[..., Any], *args: Any,
             stream: object = None, made: Mapping[str, str] | None = None) -> Any:
    """Run one op call on the backend it resolves to (``dispatch``: the fast entry's, which takes
    the common device call itself and this function for every other).

    ``made``: the outputs the operator function makes itself, by C name, each with what it is
    made from (``{"gradInput": "self's shape and dtype"}``). The library's checks name such an
    output, which the caller never passed: the error then says what it was made from, on every
    backend alike.
    ``numpy_impl(*args)`` runs on the numpy backend (with a progress line on stderr for a long
    call where ``ACLNN_PY_PROGRESS`` asks for one: ``_numpy/progress.setting``; a ``NumpyOp``'s
    quick plans skip that, see ``Plan.quick``);
    ``aclnn_impl(library, *args)`` runs the two-phase aclnn call through the cffi layer on
    ``npu`` / ``sim``, queued on ``stream`` (a caller's stream: see ``on_stream``) if given.
    """
    try:
        if stream is None and type(backend) is str:
            lib = loader.LOADED.get(backend)  # the common device call: a backend named, and loaded
            if lib is not None:
                return aclnn_impl(lib, *args)
        name = _backend.resolve(backend)
        if stream is not None:
            address = stream_address(stream)  # checked on every backend: code runs on all of them
            if name != "numpy":
                return on_stream(loader.library(name), address, aclnn_impl, *args)
        if name == "numpy":
            try:
                if type(numpy_impl) is NumpyOp:
                    chosen, args = numpy_impl.plan(args)
                    if chosen.quick:
                        return chosen.run(*args)
                    run: Callable[..., Any] = chosen.run
                else:
                    run = numpy_impl
                show = _progress.setting()
                if show is False:
                    return run(*args)
                with _progress.ticking(f"{numpy_impl.__module__.rpartition('.')[2]} on numpy", show):
                    return run(*args)
            except MemoryError as error:
                # Results are checked against the device memory before they are made
                # (``_runtime/memory.py``); the host running out for the kernels' own buffers is
                # the same failure.
                raise AclnnError(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc",
                                 f"out of memory for the numpy backend's buffers ({error})") from error
        return aclnn_impl(loader.library(name), *args)
    except AclnnError as error:
        named = failed(error, made)
        if named is not error:
            raise named from None
        raise


def failed(error: BaseException, made: Mapping[str, str] | None) -> BaseException:
    """The error an op call raises for ``error``: with a note naming each output of ``made``
    the library's message names (``dispatch``'s docstring), its traceback kept, or ``error``."""
    if (made and isinstance(error, AclnnError) and error.status == ACLNN_ERR_PARAM_INVALID
            and not outputs_given.get()):
        named = _naming_made_outputs(error, made)
        if named is not error:
            named = named.with_traceback(error.__traceback__)
            named.__suppress_context__ = True
            return named
    return error


# This module's functions are called by the op functions only (and by each other, and call.py):
# a device call made from here has two frames of the package's on top of the stack, this
# module's and the op function's, which the search for the caller's place (queued.remember's,
# in the fast entry) skips without making their frame objects.
#: ``dispatch_python``, or the fast entry's (aclnn_py/_fast/entry.c), which runs the call itself
#: when no stream is given and the backend is named and loaded (``loader.LOADED``), naming made
#: outputs in its errors by ``failed``, and calls ``dispatch_python`` otherwise.
dispatch: Callable[..., Any] = dispatch_python
if _fast.entry() is not None:
    _fast.entry().frames_inside(globals(), 2)
    _fast.entry().set_dispatch(dispatch_python, loader, failed, _backend.get_backend)
    dispatch = _fast.entry().dispatch


#: True while ``call``/``prepare`` run an operator function on the numpy backend with outputs
#: the caller passed: the library's text names them rightly then, with no note.
outputs_given: contextvars.ContextVar[bool] = contextvars.ContextVar("aclnn_py_outputs_given", default=False)


def _naming_made_outputs(error: AclnnError, made: Mapping[str, str]) -> AclnnError:
    """``error`` with a note for each output of ``made`` its message names (or itself)."""
    notes = [f"{output} is made with {source}" for output, source in made.items()
             if re.search(rf"\b{re.escape(output)}\b(?! of\b)", error.message)]  # (not "out of range")
    if not notes:
        return error
    return AclnnError(error.status, error.api, f"{error.message} ({'; '.join(notes)})")


def on_stream(lib: Any, address: int, run: Callable[..., Any], *args: Any) -> Any:
    """``run(lib, *args)`` with the calls queued on the caller's stream at ``address``: the
    binding neither destroys it nor waits for it, except that NumPy results wait for it
    (synchronised before they are copied back) and releases of temporaries wait for it."""
    previous = lib.enter_stream(address)
    try:
        return run(lib, *args)
    finally:
        lib.leave_stream(previous)


# What every operator function's docstring says of the arguments all of them take, written once:
# ``@documented`` puts each text where its docstring has the placeholder line.
_COMMON_DOC = {
    "        {backend_and_stream}\n": """\
        backend: ``"npu"``, ``"sim"`` or ``"numpy"``; default: the current backend.
        stream: on npu/sim, a stream the caller owns to queue the work on (an int address, a
            cffi ``aclrtStream``, or a torch_npu stream such as ``torch.npu.current_stream()``);
            the binding neither destroys it nor waits for it, except that NumPy results wait
            for it. Default: the thread's own stream. Checked, then ignored, on numpy.
""",
    "    {tensor_arguments}\n": """\
    Tensor arguments take a CPU array-like (a NumPy array, a torch CPU tensor or anything with
    ``__dlpack__``, ``__array__`` or the buffer protocol; not a Python list) and, on ``npu`` and
    ``sim``, an ``aclnn_py.Tensor`` or a torch_npu tensor (used in place, no copy). Results are
    NumPy arrays, or device ``Tensor`` objects when a tensor argument was on the device.
""",
}

_Documented = TypeVar("_Documented", bound=Callable[..., Any])


def documented(function: _Documented) -> _Documented:
    """``function`` with the shared argument texts (``_COMMON_DOC``) in its docstring."""
    doc = function.__doc__ or ""
    for placeholder, text in _COMMON_DOC.items():
        if placeholder not in doc:
            raise ValueError(f"{function.__name__}'s docstring lacks the line {placeholder.strip()}")
        doc = doc.replace(placeholder, text)
    function.__doc__ = doc
    return function
