"""An op call on npu/sim sizes its outputs only from arguments that pass the numpy path's
shape-only checks: inconsistent arguments get a stand-in output, nothing large is allocated,
and the library reports the real cause (161002), as the numpy backend does."""

from __future__ import annotations

import numpy as np
import pytest

import aclnn_py
from aclnn_py import AclnnError, Tensor, _fast
from aclnn_py._convert.executor import _functions

from test_tensor import counters

# Each case implies an output of ~1.6 GB (20000 x 20000 float32) from arguments that do not fit
# together; the inputs themselves are tiny (broadcast views span a single element).
BIG = 20000


def _huge(shape, dtype=np.float32):
    return np.broadcast_to(np.zeros((), dtype), shape)


CASES = {
    "im2col_backward": lambda: aclnn_py.im2col_backward(
        np.ones((1, 4, 9), np.float32), [BIG, BIG], [2, 2], [1, 1], [0, 0], [1, 1]),
    "im2col_backward_int32_max": lambda: aclnn_py.im2col_backward(
        np.ones((1, 4, 9), np.float32), [2**31 - 1] * 2, [2, 2], [1, 1], [0, 0], [1, 1]),
    "im2col_backward_int64_max": lambda: aclnn_py.im2col_backward(
        np.ones((1, 4, 9), np.float32), [2**63 - 1] * 2, [1, 1], [1, 1], [0, 0], [1, 1]),
    "max_unpool2d_backward": lambda: aclnn_py.max_unpool2d_backward(
        np.ones((1, 1, 2, 2), np.float32), _huge((1, 1, BIG, BIG)), _huge((1, 1, BIG, BIG), np.int64), [3, 3]),
    "reflection_pad2d_backward": lambda: aclnn_py.reflection_pad2d_backward(
        np.ones((1, 1, 4, 4), np.float32), _huge((1, 1, BIG, BIG)), [1, 1, 1, 1]),
    "avg_pool2d_backward": lambda: aclnn_py.avg_pool2d_backward(
        np.ones((1, 1, 2, 2), np.float32), _huge((1, 1, BIG, BIG)), [2], [2], [0], False, True, None),
    "convolution_backward": lambda: aclnn_py.convolution_backward(
        np.ones((1, 1, 2, 2), np.float32), _huge((1, 1, BIG, BIG)), np.ones((1, 1, 3, 3), np.float32),
        [1], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True]),
}


@pytest.fixture
def largest_malloc(sim_lib, monkeypatch):
    """Record the largest aclrtMalloc request of the binding (op temporaries and Tensors), on
    the ABI-mode path: the fast path's helper calls aclrtMalloc through the C pointer it took
    when it was set up, which a Python stand-in cannot be (the outputs' sizes it allocates are
    the ones the Python layer decided, as on this path). Run alone, the stand-in had reached
    the helper's table and failed its cast; run after other tests, the helper's allocations
    went unrecorded."""
    monkeypatch.setenv(_fast.ENV, "0")
    _fast.reset()
    monkeypatch.setattr(sim_lib, "fast_api", None, raising=False)
    sim_lib.stream()  # this thread's stream exists before the counters' baseline
    seen = [0]
    c = _functions(sim_lib)
    real = c.aclrtMalloc
    real_fn = sim_lib.fn("aclrtMalloc")

    def recording(real):
        def malloc(p, size, policy):
            seen[0] = max(seen[0], int(size))
            return real(p, size, policy)
        return malloc

    monkeypatch.setattr(c, "aclrtMalloc", recording(real))
    monkeypatch.setitem(sim_lib._functions, "aclrtMalloc", recording(real_fn))
    yield seen
    _fast.reset()  # (the entry loaded anew once the environment is put back)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("backend", ["sim", "numpy"])
def test_inconsistent_arguments_allocate_nothing_large(case, backend, largest_malloc, sim_lib):
    before = counters(sim_lib)
    with aclnn_py.use_backend(backend), pytest.raises(AclnnError) as info:
        CASES[case]()
    assert info.value.status == 161002, info.value
    assert largest_malloc[0] < 1 << 20, f"{case} on {backend} asked aclrtMalloc for {largest_malloc[0]} bytes"
    assert counters(sim_lib) == before


def test_library_reports_the_real_cause(largest_malloc):
    # The stand-in has the shape the library expects, so its message is about gradOutput
    # (the numpy path's message names the same thing).
    for backend in ("sim", "numpy"):
        with aclnn_py.use_backend(backend), pytest.raises(AclnnError) as info:
            CASES["avg_pool2d_backward"]()
        assert "gradOutput" in info.value.message, (backend, info.value.message)
        with aclnn_py.use_backend(backend), pytest.raises(AclnnError) as info:
            CASES["im2col_backward"]()
        assert "gradOutput" in info.value.message, (backend, info.value.message)


def test_device_tensor_view_of_one_element(sim_lib, largest_malloc):
    before = counters(sim_lib)
    with Tensor.from_numpy(np.zeros(1, np.float32), backend="sim") as one:
        big = one.view((1, 1, BIG, BIG), (0, 0, 0, 0))
        with Tensor.from_numpy(np.ones((1, 1, 4, 4), np.float32), backend="sim") as g:
            with pytest.raises(AclnnError) as info:
                aclnn_py.reflection_pad2d_backward(g, big, [1, 1, 1, 1], backend="sim")
        big.close()
    assert info.value.status == 161002
    assert largest_malloc[0] < 1 << 20
    aclnn_py._runtime.loader.library("sim").synchronize()
    assert counters(sim_lib) == before


def test_consistent_arguments_still_compute(largest_malloc):
    # The same calls made consistent: results as on the numpy backend.
    g = np.arange(1, 5, dtype=np.float32).reshape(1, 4, 1)
    for backend in ("sim", "numpy"):
        out = aclnn_py.im2col_backward(g, [2, 2], [2, 2], [1, 1], [0, 0], [1, 1], backend=backend)
        np.testing.assert_array_equal(out, [[[[1, 2], [3, 4]]]])  # exact: one term per element
