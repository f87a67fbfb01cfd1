"""What works on one backend, tried: ``python backend_probes.py BACKEND`` prints a JSON object
of probe name -> outcome, for tests/docs/test_backend_table.py to hold against README's table.

An outcome is ``{"works": bool, ...}``: a probe that raised records the exception's public
name and, for an ``AclnnError``, its status. Each probe runs in this one process.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import aclnn_py

BACKEND = sys.argv[1] if __name__ == "__main__" else "numpy"
G = np.random.default_rng(0).standard_normal((1, 2, 6, 6)).astype(np.float32)
X = np.zeros((1, 2, 4, 4), np.float32)


def _pad(*, stream: object = None) -> np.ndarray:
    result: np.ndarray = aclnn_py.reflection_pad2d_backward(G, X, [1, 1, 1, 1], stream=stream)
    return result


def operator_functions() -> None:
    rng = np.random.default_rng(0)
    for op in aclnn_py.ops.OPERATORS:
        shape, dtypes, params = op.selftest[0]
        made = op.case(rng, shape, np.dtype(dtypes[0]), **params)
        getattr(aclnn_py, made.op)(*made.args)


def call() -> None:
    out = np.empty_like(X)
    assert aclnn_py.call("aclnnReflectionPad2dBackward", G, X, [1, 1, 1, 1], out) is out
    np.testing.assert_allclose(out, _pad(), rtol=1e-6)


def call_beyond() -> None:
    """An operator aclnn_py does not implement: on npu, one of the tests' custom operator
    package (it reports each scalar's aclDataType and value)."""
    info = np.zeros((2, 2))
    aclnn_py.call("aclnnFakeScalarInfo", 1.5, [2], info)
    np.testing.assert_array_equal(info, [[11, 1.5], [9, 2.0]])  # (ACL_DOUBLE, ACL_INT64)


def prepare() -> None:
    out = np.empty_like(X)
    with aclnn_py.prepare("aclnnReflectionPad2dBackward", G, X, [1, 1, 1, 1], out) as run:
        run(2 * G, X, [1, 1, 1, 1], out)
    np.testing.assert_allclose(out, 2 * _pad(), rtol=1e-6)


def tensor() -> None:
    g, x = aclnn_py.Tensor.from_numpy(G), aclnn_py.Tensor.from_numpy(X)
    result = aclnn_py.reflection_pad2d_backward(g, x, [1, 1, 1, 1])
    assert isinstance(result, aclnn_py.Tensor)
    np.testing.assert_allclose(result.numpy(), _pad(), rtol=1e-6)


def capi() -> None:
    from aclnn_py import capi

    capi.aclrtDestroyStream(capi.aclrtCreateStream())


def stream() -> None:
    if BACKEND == "numpy":   # no C API there: any int address is checked, then ignored
        _pad(stream=12345)
    else:
        from aclnn_py import capi

        mine = capi.aclrtCreateStream()
        try:
            _pad(stream=mine)
        finally:
            capi.aclrtDestroyStream(mine)


def stream_checked() -> None:
    """A stream that is not one is refused on every backend."""
    try:
        _pad(stream="not a stream")
    except TypeError:
        return
    raise AssertionError("stream='not a stream' was accepted")


def set_device() -> None:
    aclnn_py.set_device(0)
    assert aclnn_py.get_device() == 0


def second_device() -> None:
    """Device 1: the simulator has one device unless $ACLSIM_DEVICE_COUNT says more."""
    aclnn_py.set_device(1)
    _pad()
    aclnn_py.set_device(0)


def compare() -> None:
    report = aclnn_py.compare(aclnn_py.reflection_pad2d_backward, G, X, [1, 1, 1, 1], backends=(BACKEND, "numpy"))
    assert report.passed


PROBES: dict[str, Callable[[], None]] = {name: fn for name, fn in globals().items()
                                         if callable(fn) and getattr(fn, "__module__", "") == __name__
                                         and not name.startswith("_")}


def outcome(probe: Callable[[], None]) -> dict[str, Any]:
    try:
        probe()
    except Exception as exc:
        return {"works": False, "error": type(exc).__name__, "status": getattr(exc, "status", None),
                "text": str(exc)[:300]}
    return {"works": True}


if __name__ == "__main__":
    aclnn_py.set_backend(BACKEND)
    print(json.dumps({name: outcome(probe) for name, probe in PROBES.items()}))
