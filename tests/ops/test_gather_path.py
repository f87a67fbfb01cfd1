"""The numpy backend's two paths for ReflectionPad2d, UpsampleNearest2d and Im2col: the
per-strip kernels and, on small calls, one gather by the map the kernel gives
(aclnn_py/_numpy/gather.py). Each case runs with each path forced, for every dtype the operator
takes, with NaN and -0.0 among the values: both paths copy, so their bits must agree; the
values against PyTorch are the operators' own tests (forced paths here too, float32)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

import aclnn_py
from aclnn_py._numpy import gather as _gather
from aclnn_py._numpy import plans as _plans
from helpers import random_array

# (the package's names are the functions: the modules from sys.modules)
im2col_module = importlib.import_module("aclnn_py.ops.im2col")
pad_module = importlib.import_module("aclnn_py.ops.reflection_pad2d")
upsample_module = importlib.import_module("aclnn_py.ops.upsample_nearest2d")


def _forced(monkeypatch, gather: bool):
    monkeypatch.setattr(_gather, "MAX_GATHER_ELEMENTS", 1 << 40 if gather else 0)
    _plans.forget_plans()  # plans made under the other choice


@pytest.fixture(autouse=True)
def _fresh_plans():
    _plans.forget_plans()
    yield
    _plans.forget_plans()


def _values(shape, dtype, seed):
    x = random_array(np.random.default_rng(seed), shape, dtype)
    flat = x.reshape(-1)
    if dtype.kind in "fcV" and flat.size > 2:
        flat[0] = np.nan
        flat[1] = -0.0
    return x


CASES = [
    ("reflection_pad2d", pad_module.DTYPES, (1, 1, 4, 4), ([1, 1, 1, 1],)),
    ("reflection_pad2d", pad_module.DTYPES, (2, 3, 5, 7), ([2, 0, 1, 3],)),
    ("reflection_pad2d", pad_module.DTYPES, (3, 4, 6), ([1, -1, -2, 2],)),  # (cropping sides)
    ("upsample_nearest2d", upsample_module.DTYPES, (1, 1, 2, 2), ([4, 4],)),
    ("upsample_nearest2d", upsample_module.DTYPES, (2, 3, 5, 3), ([3, 7],)),
    ("im2col", im2col_module.DTYPES, (1, 1, 4, 4), ([2, 2], [1, 1], [0, 0], [1, 1])),
    ("im2col", im2col_module.DTYPES, (2, 3, 5, 6), ([3, 2], [1, 2], [1, 0], [1, 2])),
    ("im2col", im2col_module.DTYPES, (2, 4, 5), ([2, 3], [2, 1], [1, 1], [2, 1])),
]


@pytest.mark.parametrize("name, dtypes, shape, params", CASES,
                         ids=[f"{c[0]}-{'x'.join(map(str, c[2]))}" for c in CASES])
def test_both_paths_give_the_same_bits(monkeypatch, name, dtypes, shape, params):
    function = getattr(aclnn_py, name)
    for dtype in dtypes:
        x = _values(shape, dtype, len(shape))
        _forced(monkeypatch, gather=True)
        taken = function(x, *params, backend="numpy")
        _forced(monkeypatch, gather=False)
        kernel = function(x, *params, backend="numpy")
        assert taken.dtype == kernel.dtype == dtype and taken.shape == kernel.shape
        assert taken.tobytes() == kernel.tobytes(), (name, dtype)


TORCH = {
    "reflection_pad2d": lambda t, p: torch.nn.functional.pad(t, (p[0][0], p[0][1], p[0][2], p[0][3]), mode="reflect"),
    "upsample_nearest2d": lambda t, p: torch.nn.functional.interpolate(t, size=tuple(p[0]), mode="nearest"),
    "im2col": lambda t, p: torch.nn.functional.unfold(t, *p),
}


@pytest.mark.parametrize("gather", [True, False], ids=["gather", "kernel"])
@pytest.mark.parametrize("name, dtypes, shape, params", [c for c in CASES if len(c[2]) == 4 and min(c[3][0]) >= 0],
                         ids=lambda v: v if isinstance(v, str) else None)
def test_against_torch(monkeypatch, gather, name, dtypes, shape, params):
    _forced(monkeypatch, gather)
    x = random_array(np.random.default_rng(5), shape, np.dtype(np.float32))
    got = getattr(aclnn_py, name)(x, *params, backend="numpy")
    expected = TORCH[name](torch.from_numpy(x), params).numpy()
    assert got.shape == expected.shape
    assert np.array_equal(got, expected)  # (copies: exact by construction)


def test_default_choice():
    assert _gather.use_gather(16)  # a tiny (1, 1, 4, 4) image
    assert not _gather.use_gather(0)
    assert not _gather.use_gather(8 * 64 * 56 * 56)  # a ResNet activation


def test_the_map_is_kept_per_shape_and_parameters():
    plane = (4, 4)
    first, _ = _gather._sources(pad_module._padded, ((1, 1, 1, 1),), plane)
    again, _ = _gather._sources(pad_module._padded, ((1, 1, 1, 1),), plane)
    other, _ = _gather._sources(pad_module._padded, ((2, 1, 1, 1),), plane)
    assert first is again and other.shape != first.shape
    assert not first.flags.writeable
