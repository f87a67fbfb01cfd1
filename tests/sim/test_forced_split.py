"""The simulator's kernel threads give the same bits whatever their number: ACLSIM_WORKERS=n
(kernels/parallel.h, docs/simulator.md) splits every loop that may be split into n shares
whatever its size and the machine's load, and each run below (a fresh interpreter per n, so the
variable is read at its first loop) must produce byte for byte what one worker produces: the
elementwise kernels on contiguous, broadcast and strided (transposed) inputs, Cast, Cat, the
in-place operators, large copies and fills, and the overflow test the elementwise kernel does
on its pieces (as Im2col and the softmax family do on their rows) and the hook on whole
outputs (an overflow in the last piece still counts, a NaN passed on does not).  NumPy is the
oracle of the values, to make sure the runs computed something."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from test_sim_safety import run_python

BODY = r"""
import hashlib, json, os
import numpy as np

rng = np.random.default_rng(7)
def data(*shape):
    return rng.standard_normal(shape).astype(np.float32)

x = data(4, 64, 33, 35)          # 3 pieces of a row of 1155: a tail piece
bias = data(64, 1, 1)
wide = data(3000, 2051)          # rows longer than a piece (2048)
t = data(2051, 700).T            # a transposed (strided) view
half = data(2, 5, 3001).astype(np.float16)
results = {
    "add": aclnn_py.add(x, x[::-1].copy(), 0.5),
    "add broadcast": aclnn_py.add(x, bias),
    "mul broadcast": aclnn_py.mul(bias, x),
    "adds": aclnn_py.adds(wide, 1.25),
    "muls strided": aclnn_py.muls(t, 3.0),
    "relu strided": aclnn_py.relu(t),
    "add strided + broadcast": aclnn_py.add(t, t[:1]),
    "threshold_backward": aclnn_py.threshold_backward(x, -x, 0.1),
    "add float16 (buffered)": aclnn_py.add(half, half[:, :1]),
    "cast to float16": aclnn_py.cast(wide, np.float16),
    "cast strided to int32": aclnn_py.cast(t * 100, np.int32),
    "cat": aclnn_py.cat([x, x[:, :7]], 1),
}
y = wide.copy()
results["inplace_add"] = aclnn_py.inplace_add(y, wide, 2.0)
z = np.empty_like(wide)
results["inplace_copy"] = aclnn_py.inplace_copy(z, wide)
results["inplace_fill_scalar"] = aclnn_py.inplace_fill_scalar(np.empty((3000, 2051), np.float32), 0.75)

# copies and fills of the runtime: an odd size over several pieces, at odd offsets
n = (5 << 20) + 12345
host = rng.integers(0, 256, n, dtype=np.uint8)
a = capi.aclrtMalloc(n + 64, capi.ACL_MEM_MALLOC_HUGE_FIRST)
b = capi.aclrtMalloc(n + 64, capi.ACL_MEM_MALLOC_HUGE_FIRST)
at = lambda p, k: lib.ffi.cast("char *", p) + k
capi.aclrtMemcpy(at(a, 3), n, host, n, capi.ACL_MEMCPY_HOST_TO_DEVICE)   # a partial upload: fill first
capi.aclrtMemcpy(at(b, 0), n, at(a, 3), n, capi.ACL_MEMCPY_DEVICE_TO_DEVICE)
capi.aclrtMemset(at(b, 7), n - 100, 0x5A, n - 100)
back = np.zeros(n + 64, np.uint8)
capi.aclrtMemcpy(back, n + 64, a, n + 64, capi.ACL_MEMCPY_DEVICE_TO_HOST)
results["copy a"] = back.copy()
capi.aclrtMemcpy(back, n + 64, b, n + 64, capi.ACL_MEMCPY_DEVICE_TO_HOST)
results["copy b"] = back.copy()

# the overflow status after an elementwise call (fused test) and after Cat of float16 parts
status = capi.aclrtMalloc(64, capi.ACL_MEM_MALLOC_HUGE_FIRST)
def overflowed(call):
    capi.aclrtResetOverflowStatus(lib.ffi.NULL)
    capi.aclrtSynchronizeStream(lib.ffi.NULL)  # (the reset is queued: run it before the call)
    call()
    capi.aclrtGetOverflowStatus(status, 64, lib.ffi.NULL)
    capi.aclrtSynchronizeStream(lib.ffi.NULL)
    word = np.zeros(16, np.uint32)
    capi.aclrtMemcpy(word, 64, status, 64, capi.ACL_MEMCPY_DEVICE_TO_HOST)
    return int(word[0])
big = np.ones((3000, 2051), np.float32)
big[-1, -1] = 3e38
lhs = np.ones((2000, 2), np.float32)
lhs[-1] = 3e38
nan_in = np.ones((3000, 2051), np.float32)
nan_in[-1, -1] = np.nan
lanes = np.ones((4, 64, 40, 41), np.float32)
lanes_inf, lanes_nan, lanes_big = lanes.copy(), lanes.copy(), lanes.copy()
lanes_inf[-1, -1, -1, -1] = np.inf
lanes_nan[-1, -1, -1, -1] = np.nan
lanes_big[-1, -1, -1] = 3e38
def nll_grad(last_weight):
    weight = np.ones(1000, np.float16)
    weight[999] = last_weight
    target = np.arange(300) % 999
    target[-1] = 999
    return aclnn_py.nll_loss_backward(np.full(300, 4.0, np.float16), np.zeros((300, 1000), np.float16), target,
                                      weight, 0, -100, np.ones((), np.float16))
def norm(last_weight):
    weight = np.ones(64, np.float32)
    weight[-1] = last_weight
    return aclnn_py.batch_norm(lanes * 10.0 + lanes.cumsum(-1), weight, np.zeros(64, np.float32),
                               np.zeros(64, np.float32), np.full(64, 1e-6, np.float32), False, 0.1, 1e-5)
flags = {
    "finite": overflowed(lambda: aclnn_py.muls(big, 1.0)),
    "overflow in the last piece": overflowed(lambda: aclnn_py.muls(big, 10.0)),
    "NaN passed on": overflowed(lambda: aclnn_py.muls(nan_in, 2.0)),
    "cat of an Inf passed on": overflowed(lambda: aclnn_py.cat([big.astype(np.float16), big[:1]], 0)),
    # not an elementwise kernel: the hook's own scan of the output, split by rows
    "mm overflow in the last row": overflowed(lambda: aclnn_py.mm(lhs, np.ones((2, 1000), np.float32))),
    # kernels that test their rows / lanes as they write them
    "im2col of an Inf passed on": overflowed(lambda: aclnn_py.im2col(lanes_inf, 3, 1, 1, 1)),
    "reflection pad of a NaN passed on": overflowed(lambda: aclnn_py.reflection_pad2d(lanes_nan, 1)),
    "log_softmax_backward finite": overflowed(lambda: aclnn_py.log_softmax_backward(lanes, -lanes, -1)),
    "log_softmax_backward overflow in the last lane": overflowed(
        lambda: aclnn_py.log_softmax_backward(lanes_big, np.zeros_like(lanes_big), -1)),
    # a kernel that tests the values it scattered (the rest of its output is zeros)
    "nll_loss_backward finite": overflowed(lambda: nll_grad(1.0)),
    "nll_loss_backward overflow in the last row": overflowed(lambda: nll_grad(60000.0)),
    # a kernel that tests the values it normalised (FLOAT output)
    "batch_norm finite": overflowed(lambda: norm(1.0)),
    "batch_norm overflow in the last channel": overflowed(lambda: norm(1e38)),
    # a fill, whose pieces are tested by their first element (each holds copies of it)
    "fill finite": overflowed(lambda: aclnn_py.inplace_fill_scalar(np.empty((3000, 2051), np.float16), 1.5)),
    "fill of zeros": overflowed(lambda: aclnn_py.inplace_zero(np.full((3000, 2051), np.inf, np.float16))),
    "fill beyond float16": overflowed(lambda: aclnn_py.inplace_fill_scalar(np.empty((3000, 2051), np.float16), 1e5)),
}
threads = len(os.listdir("/proc/self/task"))
print(json.dumps({"digests": {k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()
                              for k, v in results.items()},
                  "flags": flags, "threads": threads}))
np.save(os.environ["RESULT_FILE"], results["add broadcast"])
"""


def _run(tmp_path, workers: str) -> dict:
    out = run_python(BODY, env={"ACLSIM_WORKERS": workers, "RESULT_FILE": str(tmp_path / f"w{workers}.npy")},
                     timeout=300)
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory):
    path = tmp_path_factory.mktemp("one")
    return _run(path, "1"), path


@pytest.mark.parametrize("workers", ["2", "3", "4"])
def test_a_forced_split_gives_the_bits_of_one_worker(tmp_path, one_worker, workers):
    one, _ = one_worker
    split = _run(tmp_path, workers)
    assert split["digests"] == one["digests"]
    assert split["flags"] == one["flags"]
    # The variable was honoured: helper threads were started (none with one worker).
    assert split["threads"] >= one["threads"] + int(workers) - 1


def test_the_runs_computed_the_right_values(one_worker):
    one, path = one_worker
    assert one["flags"] == {"finite": 0, "overflow in the last piece": 1, "NaN passed on": 0,
                            "cat of an Inf passed on": 0, "mm overflow in the last row": 1,
                            "im2col of an Inf passed on": 0, "reflection pad of a NaN passed on": 0,
                            "log_softmax_backward finite": 0, "log_softmax_backward overflow in the last lane": 1,
                            "nll_loss_backward finite": 0, "nll_loss_backward overflow in the last row": 1,
                            "batch_norm finite": 0, "batch_norm overflow in the last channel": 1,
                            "fill finite": 0, "fill of zeros": 0, "fill beyond float16": 1}
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 64, 33, 35)).astype(np.float32)
    bias = rng.standard_normal((64, 1, 1)).astype(np.float32)
    np.testing.assert_array_equal(np.load(path / "w1.npy"), x + bias)
    assert len(one["digests"]) == 17
    assert hashlib.sha256(b"").hexdigest() not in one["digests"].values()
