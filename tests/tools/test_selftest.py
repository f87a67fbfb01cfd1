"""python -m aclnn_py selftest: passes on sim and numpy, fails on wrong numbers and errors."""

from __future__ import annotations

import functools
import io

import numpy as np
import pytest

import aclnn_py
from aclnn_py._dtypes import dtype_name
from aclnn_py.tools import selftest

# Every dtype each operator's aclnn documentation lists (the selftest must cover them all).
DOCUMENTED = {
    "im2col_backward": {"FLOAT", "FLOAT16", "BFLOAT16"},
    "max_unpool2d_backward": {"FLOAT", "FLOAT16", "INT32", "INT64", "INT8", "UINT8", "INT16", "BOOL"},
    "reflection_pad2d_backward": {"FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "COMPLEX64", "COMPLEX128"},
    "avg_pool2d_backward": {"FLOAT", "FLOAT16", "BFLOAT16"},
    "convolution_backward": {"FLOAT", "FLOAT16", "BFLOAT16"},
    "convolution": {"FLOAT", "FLOAT16", "BFLOAT16"},
    "im2col": {"FLOAT", "FLOAT16", "BFLOAT16"},
    "max_unpool2d": {"FLOAT", "FLOAT16", "INT8", "UINT8", "INT16", "INT32", "INT64", "DOUBLE"},
    "reflection_pad2d": {"FLOAT", "INT32", "INT64", "FLOAT16", "INT16", "DOUBLE", "INT8", "UINT8", "BOOL", "BFLOAT16",
                         "COMPLEX64", "COMPLEX128"},
    **{name: {"FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "INT8", "UINT8", "INT16", "INT32", "INT64", "BOOL", "COMPLEX64",
              "COMPLEX128"} for name in ("add", "mul", "adds", "muls", "inplace_add")},
    "relu": {"FLOAT", "FLOAT16", "BFLOAT16", "INT8", "INT32", "INT64"},
    "cat": {"FLOAT", "INT32", "INT64", "FLOAT16", "INT16", "INT8", "UINT8", "DOUBLE", "COMPLEX64", "BFLOAT16", "BOOL"},
    "inplace_zero": {"INT8", "INT32", "INT64", "UINT8", "FLOAT16", "FLOAT", "BOOL", "DOUBLE", "INT16", "UINT16",
                     "COMPLEX128", "COMPLEX64", "BFLOAT16"},
    "inplace_copy": {"INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "FLOAT16", "FLOAT",
                     "BOOL", "DOUBLE", "COMPLEX64", "COMPLEX128", "BFLOAT16"},
    "inplace_fill_scalar": {"FLOAT", "INT32", "INT64", "FLOAT16", "INT16", "INT8", "UINT8", "DOUBLE", "BOOL",
                            "COMPLEX64", "COMPLEX128", "BFLOAT16", "UINT16", "UINT32", "UINT64"},
    "threshold_backward": {"FLOAT", "FLOAT16", "BFLOAT16", "INT32", "INT8", "UINT8"},
    "cast": {"FLOAT16", "FLOAT", "DOUBLE", "INT8", "UINT8", "INT16", "INT32", "INT64", "UINT16", "UINT32", "UINT64",
             "BOOL", "COMPLEX64", "COMPLEX128", "BFLOAT16"},
    **{name: {"FLOAT", "FLOAT16", "BFLOAT16"} for name in ("nll_loss", "nll_loss_backward", "mm", "addmm", "matmul",
                                                          "batch_mat_mul")},
    "max_unpool2d": {"FLOAT", "FLOAT16", "INT8", "UINT8", "INT16", "INT32", "INT64", "DOUBLE"},
    **{name: {"FLOAT", "FLOAT16", "BFLOAT16"} for name in (
        "convolution", "max_pool2d_with_indices", "adaptive_avg_pool2d",
        "adaptive_avg_pool2d_backward", "batch_norm", "batch_norm_backward", "log_softmax_backward",
        "softmax_backward")},
    "max_pool2d_with_indices_backward": {"FLOAT"},
    **{name: {"FLOAT", "FLOAT16", "BFLOAT16"} for name in ("avg_pool2d", "upsample_nearest2d_backward")},
    "upsample_nearest2d": {"FLOAT16", "FLOAT", "DOUBLE", "UINT8", "BFLOAT16"},
    "reflection_pad2d": {"FLOAT", "INT32", "INT64", "FLOAT16", "INT16", "DOUBLE", "INT8", "UINT8", "BOOL", "BFLOAT16",
                         "COMPLEX64", "COMPLEX128"},
    **{name: {"FLOAT", "FLOAT16", "DOUBLE", "BFLOAT16"} for name in ("softmax", "log_softmax")},
    "reduce_sum": {"FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "INT8", "UINT8", "INT16", "INT32", "INT64", "BOOL",
                   "COMPLEX64", "COMPLEX128"},
    "mean": {"FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "INT8", "UINT8", "INT16", "INT32", "INT64", "COMPLEX64",
             "COMPLEX128"},
}


def _run(*args, **kwargs) -> tuple[int, str]:
    out = io.StringIO()
    status = selftest.run_selftest(*args, out=out, progress=False, **kwargs)
    return status, out.getvalue()


def _perturbed(monkeypatch, name: str, on_backend, change):
    """Replace ``aclnn_py.<name>`` by a version whose result is ``change(result)`` on the backends
    ``on_backend(backend)`` selects."""
    original = getattr(aclnn_py, name)

    @functools.wraps(original)
    def wrong(*args, backend=None, **kwargs):
        result = original(*args, backend=backend, **kwargs)
        return change(result) if on_backend(backend) else result

    monkeypatch.setattr(aclnn_py, name, wrong)


def test_cases_cover_every_documented_dtype():
    covered: dict[str, set[str]] = {}
    for call in selftest.cases():
        covered.setdefault(call.op, set()).add(dtype_name(call.dtype))
    assert covered == DOCUMENTED


def test_cases_are_seeded():
    a, b, c = selftest.cases(0), selftest.cases(0), selftest.cases(1)
    def same(x, y):  # (a tensor list: element by element)
        if isinstance(x, list):
            return len(x) == len(y) and all(np.array_equal(u, v) for u, v in zip(x, y))
        return np.array_equal(x, y)
    assert all(same(x.args[0], y.args[0]) for x, y in zip(a, b))
    assert not np.array_equal(a[0].args[0], c[0].args[0])


def test_passes_on_sim(sim_lib):
    status, text = _run("sim")
    assert status == 0, text
    assert "sim vs numpy" in text and "selftest passed" in text
    for op, dtypes in DOCUMENTED.items():
        assert op in text
        assert all(d in text for d in dtypes)
    header = text.splitlines()[1].split()
    assert header == ["op", "dtype", "case", "max", "abs", "err", "max", "rel", "err", "CANN", "standard", "ok"]
    # every output judged under CANN's test-kit standard, named with its figures
    assert "threshold MERE" in text and "double 1/1000 within" in text and "binary differing" in text


def test_passes_on_numpy_against_pytorch(torch):
    status, text = _run("numpy")
    assert status == 0, text
    assert "numpy vs PyTorch CPU" in text and not any(
        line.rstrip().endswith(" FAIL") for line in text.splitlines() if not line.startswith("below CANN's standard"))


def test_numpy_without_pytorch_has_nothing_to_compare(monkeypatch):
    monkeypatch.setattr(selftest, "_torch_available", lambda: False)
    status, text = _run("numpy")
    assert status == 0 and "nothing to compare against" in text


def test_wrong_numbers_on_sim_fail(sim_lib, monkeypatch):
    _perturbed(monkeypatch, "im2col_backward", lambda b: b == "sim", lambda r: r + np.asarray(0.01, r.dtype))
    status, text = _run("sim", ops=["im2col_backward", "max_unpool2d_backward"])
    assert status == 1
    assert "selftest FAILED" in text and "FAIL im2col_backward" in text
    rows = [line.split() for line in text.splitlines() if line.startswith(("im2col", "max_unpool"))]
    assert {r[0] for r in rows if r[-1] == "FAIL"} == {"im2col_backward"}
    assert all(r[-1] == "ok" for r in rows if r[0] == "max_unpool2d_backward")


def test_wrong_numbers_on_numpy_fail(torch, monkeypatch):
    def swap_first_row(result):
        wrong = result.copy()
        wrong[..., 0, :] = wrong[..., -1, :]
        return wrong

    _perturbed(monkeypatch, "reflection_pad2d_backward", lambda b: True, swap_first_row)
    status, text = _run("numpy", ops=["reflection_pad2d_backward"])
    assert status == 1 and text.count("FAIL reflection_pad2d_backward") == 7
    # the 5 real ones (not COMPLEX64/128) also reported below CANN's standard
    assert text.count("below CANN's standard: reflection_pad2d_backward") == 5


def test_an_exception_is_an_error(sim_lib, monkeypatch):
    def broken(*args, backend=None, **kwargs):
        raise RuntimeError("kernel exploded")

    monkeypatch.setattr(aclnn_py, "max_unpool2d_backward", broken)
    status, text = _run("sim", ops=["max_unpool2d_backward"])
    assert status == 1 and "ERROR max_unpool2d_backward" in text and "kernel exploded" in text


def test_an_operator_the_backend_lacks_is_not_a_failure(sim_lib, monkeypatch):
    def missing(*args, backend=None, **kwargs):
        if backend == "sim":
            raise aclnn_py.AclnnError(200001, "aclnnIm2colBackwardGetWorkspaceSize", "not exported")
        return 0

    monkeypatch.setattr(aclnn_py, "im2col_backward", missing)
    status, text = _run("sim", ops=["im2col_backward"])
    assert status == 0 and "4 not available on sim" in text and "does not export" in text


def test_unusable_backend_exits_2(monkeypatch):
    def unavailable(name):
        raise aclnn_py.BackendUnavailable(f"backend {name!r}: nothing here")

    monkeypatch.setattr("aclnn_py._runtime.loader.library", unavailable)
    status, text = _run("npu")
    assert status == 2 and "nothing here" in text and "python -m aclnn_py info" in text


@pytest.mark.usefixtures("sim_lib")
def test_command_line(cli):
    done = cli("selftest", "--backend", "sim")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "selftest passed" in done.stdout
    done = cli("selftest", "--backend", "sim", "--op", "reflection_pad2d_backward", "--seed", "7")
    assert done.returncode == 0 and "7 cases" in done.stdout and "im2col" not in done.stdout
    assert cli("selftest", "--op", "nonsense").returncode == 2


def test_the_standard_is_judged_against_the_golden_not_the_reference(sim_lib, torch, monkeypatch):
    # The numpy reference off by 5e-5 of its scale: within the FLOAT tolerance (1e-4 of the scale),
    # but over MERE's 2^-13 on the smaller elements. Against the golden (PyTorch in DOUBLE) the
    # simulator's right result meets the standard; against the reference (no PyTorch) it does not.
    _perturbed(monkeypatch, "im2col_backward", lambda b: b == "numpy",
               lambda r: r + np.asarray(5e-5 * max(1.0, float(np.abs(r).max())), r.dtype))
    status, text = _run("sim", ops=["im2col_backward"])
    assert status == 0 and "CANN's standard against PyTorch CPU's golden" in text.splitlines()[0]
    assert "below CANN's standard" not in text and "CANN's standard: 4 of 4 outputs pass" in text
    call = next(c for c in selftest.cases() if c.op == "im2col_backward" and c.dtype == np.float32)
    (out,) = selftest.run_case(call, "sim", "numpy").comparison
    assert out.golden == "PyTorch CPU, float inputs in DOUBLE" and out.standard.passed and out.passed

    monkeypatch.setattr(selftest, "_torch_available", lambda: False)
    status, text = _run("sim", ops=["im2col_backward"])
    assert status == 0 and "CANN's standard against the reference (no PyTorch" in text.splitlines()[0]
    assert "below CANN's standard: im2col_backward" in text
    (out,) = selftest.run_case(call, "sim", "numpy").comparison
    assert out.golden == "" and not out.standard.passed and out.passed
