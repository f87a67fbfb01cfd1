"""Every invalid input of the five operators, in one table: the one source for the error tests.

Each case is a complete call (the operator's valid baseline with some arguments changed) and
the one answer every backend must give: the exception type, and for ``AclnnError`` its
status and C function, and the parameter names (and rule words) its message must contain.
``tests/ops/test_invalid_cases.py`` runs each case on numpy and on sim, checks both against
the case and against each other: the message texts must be equal too, unless the case's
``differs`` says why they are not (CuPy's ``accept_error`` rule: the backends raise the same
error). The per-operator test files keep the valid-input tests.

Rows are written as ``changes`` to the operator's baseline:

* ``bad(changes, *named)``: AclnnError 161002 from the operator's GetWorkspaceSize;
* ``null(changes, *named)``: AclnnError 161001;
* ``wrong_type(changes, *named)``: TypeError (named defaults to the changed argument's C name);
* ``no_memory(changes, *named)``: AclnnError 207001 from aclrtMalloc (the result does not fit
  the device memory);
* ``device_fault(changes, *named)``: AclnnError 507015 from aclrtSynchronizeStream (phase 1
  accepts what only the device would trip over);

``absent`` lists words the message must not contain (the first violation decides: a later
violation's words must not appear), ``id`` overrides the id made from the changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import ml_dtypes

from aclnn_py import AclnnError, aclDataType, bfloat16

PARAM_NULLPTR = 161001
PARAM_INVALID = 161002
RT_MEMORY_ALLOCATION = 207001
RT_AICORE_EXCEPTION = 507015


@dataclass(frozen=True)
class Invalid:
    op: str                       # the aclnn_py function
    id: str
    args: dict                    # the complete call, in the function's argument order
    error: type                   # AclnnError or TypeError
    status: int | None            # AclnnError.status (None for TypeError)
    api: str                      # AclnnError.api; for TypeError, the text starts with it
    named: tuple[str, ...]        # what the message must contain: parameters, rule words, values
    absent: tuple[str, ...] = ()  # what it must not contain
    differs: str | None = None    # why numpy's and sim's texts may differ (None: they are equal)


@dataclass
class _Row:
    changes: dict
    error: type
    status: int | None
    named: tuple[str, ...]
    absent: tuple[str, ...] = ()
    differs: str | None = None
    id: str | None = None
    base: object = None
    api: str | None = None


def bad(changes, *named, **kw):
    return _Row(changes, AclnnError, PARAM_INVALID, named, **kw)


def null(changes, *named, **kw):
    return _Row(changes, AclnnError, PARAM_NULLPTR, named, **kw)


def wrong_type(changes, *named, **kw):
    return _Row(changes, TypeError, None, named, **kw)


def no_memory(changes, *named, **kw):
    return _Row(changes, AclnnError, RT_MEMORY_ALLOCATION, named, api="aclrtMalloc", **kw)


def device_fault(changes, *named, **kw):
    return _Row(changes, AclnnError, RT_AICORE_EXCEPTION, named, api="aclrtSynchronizeStream", **kw)


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)}".replace(" ", "")
    if isinstance(value, float) or (isinstance(value, int) and abs(value) > 2**32):
        return repr(value) if abs(value) < 2**40 else f"{'-' if value < 0 else ''}2^{abs(value).bit_length() - 1}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_describe(v) for v in value) + "]"
    return repr(value).replace(" ", "")


def _cases(op: str, api: str, baseline, names: dict, rows: list[_Row]) -> list[Invalid]:
    cases, seen = [], set()
    for row in rows:
        base = (row.base or baseline)()
        args = dict(base, **row.changes)
        ident = row.id or "/".join(f"{k}={_describe(v)}" for k, v in row.changes.items())
        if row.base is not None and row.id is None:
            ident = f"{row.base.__name__.strip('_')}:{ident}"
        while ident in seen:
            ident += "'"
        seen.add(ident)
        named = row.named or tuple(names[k] for k in row.changes)
        cases.append(Invalid(op, f"{op}:{ident}", args, row.error, row.status, row.api or api, named,
                             row.absent, row.differs))
    return cases


def _z(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


# NumPy dtypes CANN has no aclDataType for: a TypeError naming the tensor on every backend (long
# double is float128 on x86-64 and AArch64 Linux; where it is float64 it would be DOUBLE).
UNNAMED_DTYPES = [np.dtype(object), np.dtype("U1"), np.dtype("datetime64[s]")] + \
    [np.dtype(np.longdouble)] * (np.dtype(np.longdouble).itemsize > 8)


def unnamed(arg: str, name: str, shape) -> list[_Row]:
    return [wrong_type({arg: np.zeros(shape, dtype)}, name, f"dtype {dtype} has no aclDataType")
            for dtype in UNNAMED_DTYPES]


# Valid shapes whose result (2**40 elements, 4 TiB) no device memory holds: zero-stride views
# make the inputs without memory. Each backend says how much memory it has in its own words.
_HUGE = 2**20
_TIB4 = str(4 * 2**40)
_MEMORY_WORDS = "the simulator's device also holds the copied inputs and reports what is in use"


def _huge(*shape, dtype=np.float32):
    return np.broadcast_to(np.zeros((), dtype), shape)


# -- Im2colBackward ------------------------------------------------------------------------------

def _im2col():
    return dict(grad_output=_z(2, 12, 20), input_size=[5, 6], kernel_size=[2, 2], dilation=[1, 1],
                padding=[0, 0], stride=[1, 1])


_IM2COL_NAMES = {"grad_output": "gradOutput", "input_size": "inputSize", "kernel_size": "kernelSize",
                 "dilation": "dilation", "padding": "padding", "stride": "stride"}

IM2COL = _cases("im2col_backward", "aclnnIm2colBackwardGetWorkspaceSize", _im2col, _IM2COL_NAMES, [
    *(null({arg: None}) for arg in _IM2COL_NAMES),
    bad(dict(grad_output=_z(2, 12, 20, dtype=np.float64)), "gradOutput"),
    bad(dict(grad_output=_z(2, 12, 20, dtype=np.int32)), "gradOutput"),
    bad(dict(grad_output=_z(2, 12, 20, dtype=np.complex64)), "gradOutput"),
    bad(dict(grad_output=_z(240)), "gradOutput"),
    bad(dict(grad_output=_z(1, 2, 12, 20)), "gradOutput"),
    bad(dict(input_size=[5]), "inputSize"),
    bad(dict(input_size=[5, 6, 7]), "inputSize"),
    bad(dict(kernel_size=[2]), "kernelSize"),
    bad(dict(kernel_size=[]), "kernelSize"),
    bad(dict(dilation=[1, 1, 1]), "dilation"),
    bad(dict(padding=[0]), "padding"),
    bad(dict(stride=[1, 1, 1]), "stride"),
    bad(dict(kernel_size=[0, 2]), "kernelSize"),
    bad(dict(kernel_size=[2, -1]), "kernelSize"),
    bad(dict(stride=[0, 1]), "stride"),
    bad(dict(stride=[1, -2]), "stride"),
    bad(dict(dilation=[1, 0]), "dilation"),
    bad(dict(padding=[-1, 0]), "padding"),
    bad(dict(input_size=[0, 6]), "inputSize"),
    bad(dict(input_size=[5, -6]), "inputSize"),
    bad(dict(grad_output=_z(2, 10, 20)), "gradOutput"),                     # 10 % (2*2) != 0
    bad(dict(grad_output=_z(2, 12, 21)), "gradOutput"),                     # L != 4*5
    bad(dict(grad_output=_z(12, 19)), "gradOutput"),
    bad(dict(input_size=[5, 7]), "gradOutput"),
    bad(dict(kernel_size=[11, 2], stride=[3, 1], grad_output=_z(2, 22, 20)), "kernelSize"),  # < 0 blocks
    bad(dict(kernel_size=[2**62, 4]), "kernelSize"),                        # kH*kW leaves int64
    bad(dict(padding=[2**62, 0]), "padding"),                               # 5 + 2*pad leaves int64
    bad(dict(input_size=[2**62, 2**62], kernel_size=[1, 1], stride=[2**62, 2**62],
             grad_output=_z(2, 3, 1)), "out"),                              # N*C*H*W leaves int64
    # the first violation decides
    bad(dict(grad_output=_z(12, 20, 1, 1, dtype=np.float64), kernel_size=[0]), "dtype", absent=("kernelSize",)),
    bad(dict(grad_output=_z(2, 2, 12, 20), kernel_size=[0]), "gradOutput", absent=("kernelSize",)),
    bad(dict(kernel_size=[0], stride=[0, 0]), "kernelSize", "2 elements", absent=("stride",)),
    bad(dict(stride=[0, 0], padding=[-1, -1]), "stride", absent=("padding",)),
    bad(dict(padding=[-1, 0], grad_output=_z(2, 13, 20)), "padding", absent=("gradOutput",)),
    bad(dict(grad_output=_z(2, 13, 7)), "divisible"),
    # Python types
    wrong_type(dict(grad_output=[[0.0] * 20] * 12)),
    wrong_type(dict(kernel_size=3.0)),
    wrong_type(dict(kernel_size=True)),
    wrong_type(dict(grad_output=np.float32(0.0))),
    wrong_type(dict(kernel_size="22")),
    wrong_type(dict(kernel_size=[2.0, 2])),
    wrong_type(dict(stride=[True, 1])),
    wrong_type(dict(padding=np.zeros(2, np.float32))),
    *unnamed("grad_output", "gradOutput", (2, 12, 20)),
    bad(dict(grad_output=_z(2, 12, 20, dtype=np.uint64)), "gradOutput", "UINT64"),  # named, not supported
    no_memory(dict(grad_output=_z(1, 1, 1), input_size=[_HUGE, _HUGE], kernel_size=[1, 1], stride=[_HUGE, _HUGE]),
              _TIB4, differs=_MEMORY_WORDS, id="result of 2^40 elements"),
    no_memory(dict(grad_output=_z(1, 1, 1), input_size=[2**32, 2**28], kernel_size=[1, 1], stride=[2**32, 2**28]),
              str(2**62), differs=_MEMORY_WORDS, id="result of 2^60 elements"),
])

# -- MaxUnpool2dBackward -------------------------------------------------------------------------

def _unpool():
    return dict(grad_output=_z(2, 3, 4, 6), self=_z(2, 3, 2, 3), indices=_z(2, 3, 2, 3, dtype=np.int64),
                output_size=[4, 6])


_UNPOOL_NAMES = {"grad_output": "gradOutput", "self": "self", "indices": "indices", "output_size": "outputSize"}


def _index_at(value, dtype):
    indices = _z(2, 3, 2, 3, dtype=dtype)
    indices[1, 2, 1, 0] = value
    return indices


MAX_UNPOOL = _cases("max_unpool2d_backward", "aclnnMaxUnpool2dBackwardGetWorkspaceSize", _unpool,
                    _UNPOOL_NAMES, [
    *(null({arg: None}) for arg in _UNPOOL_NAMES),
    bad(dict(grad_output=_z(2, 3, 4, 6, dtype=np.float64)), "gradOutput"),
    bad(dict(grad_output=_z(2, 3, 4, 6, dtype=bfloat16)), "gradOutput"),
    bad(dict(grad_output=_z(2, 3, 4, 6, dtype=np.complex64)), "gradOutput"),
    bad(dict(grad_output=_z(2, 3, 4, 6, dtype=np.uint16)), "gradOutput"),
    bad(dict(self=_z(2, 3, 2, 3, dtype=np.float64)), "self"),
    bad(dict(self=_z(2, 3, 2, 3, dtype=np.int32)), "gradOutput"),           # FLOAT cannot cast to INT32
    bad(dict(grad_output=_z(2, 3, 4, 6, dtype=np.int32), self=_z(2, 3, 2, 3, dtype=np.bool_)), "gradOutput"),
    bad(dict(grad_output=_z(2, 3, 4, 6, dtype=np.int32)), "gradOutput"),    # castable but not equal
    bad(dict(grad_output=_z(2, 3, 4, 6, dtype=np.float16)), "gradOutput"),
    bad(dict(indices=_z(2, 3, 2, 3, dtype=np.int16)), "indices"),
    bad(dict(indices=_z(2, 3, 2, 3, dtype=np.uint8)), "indices"),
    bad(dict(indices=_z(2, 3, 2, 3)), "indices"),
    bad(dict(self=_z(6, 6), indices=_z(6, 6, dtype=np.int64)), "self"),
    bad(dict(self=_z(1, 2, 3, 2, 3), indices=_z(1, 2, 3, 2, 3, dtype=np.int64)), "self"),
    bad(dict(grad_output=_z(3, 4, 6)), "gradOutput"),
    bad(dict(grad_output=_z(1, 3, 4, 6)), "gradOutput"),                    # N differs
    bad(dict(grad_output=_z(2, 2, 4, 6)), "gradOutput"),                    # C differs
    bad(dict(grad_output=_z(2, 4, 6), self=_z(3, 2, 3), indices=_z(3, 2, 3, dtype=np.int64)),
        "gradOutput"),                                                       # 3-D C differs
    bad(dict(indices=_z(2, 3, 3, 2, dtype=np.int64)), "indices"),
    bad(dict(indices=_z(2, 3, 2, 3, 1, dtype=np.int64)), "indices"),
    bad(dict(output_size=[4]), "outputSize"),
    bad(dict(output_size=[1, 4, 6]), "outputSize"),
    bad(dict(output_size=[6, 4]), "outputSize"),
    bad(dict(output_size=[4, 7]), "outputSize"),
    bad(dict(grad_output=_z(2, 3, 0, 6), output_size=[0, 6]), "gradOutput"),   # empty gradOutput, self not
    # the first violation decides
    bad(dict(grad_output=_z(2, 4, 6, dtype=np.float64), output_size=[1]), "gradOutput", "dtype",
        absent=("outputSize",)),
    bad(dict(self=_z(2, 3, 2, 3, dtype=np.int64), indices=_z(2, 3, 2, 3, dtype=np.int16)), "cast",
        absent=("indices",)),
    bad(dict(indices=_z(5, dtype=np.int16), self=_z(2, 3)), "indices", absent=("self",)),
    bad(dict(self=_z(2, 3), grad_output=_z(2, 3, 4), output_size=[3, 4, 5]), "self", absent=("outputSize",)),
    bad(dict(indices=_z(2, 3, dtype=np.int64), output_size=[1]), "indices", absent=("outputSize",)),
    bad(dict(output_size=[4, 7], grad_output=_z(2, 3, 0, 7)), "outputSize", absent=("empty",)),
    # Python types
    wrong_type(dict(grad_output=[[0.0]])),
    wrong_type(dict(self=(1, 2))),
    wrong_type(dict(indices=[[0]])),
    wrong_type(dict(output_size=4)),
    wrong_type(dict(output_size="46")),
    wrong_type(dict(output_size=[4.0, 6])),
    *unnamed("grad_output", "gradOutput", (2, 3, 4, 6)),
    *unnamed("indices", "indices", (2, 3, 2, 3)),
    wrong_type(dict(indices=_z(2, 3, 2, 3, dtype=object), self=None), "indices", "object", id="self=None/indices=object"),
    # index values: not checked by CANN's phase 1; the gather faults on the device (module docstring)
    *(device_fault(dict(indices=_index_at(bad, dtype)), f"indices[1, 2, 1, 0] = {bad} is outside [0, 24)",
                   "outputSize = [4, 6]", "nothing was written", id=f"indices[1,2,1,0]={bad}:{np.dtype(dtype)}")
      for bad, dtype in ((-1, np.int64), (24, np.int64), (2**40, np.int64), (-(2**31), np.int32), (24, np.int32))),
    device_fault(dict(grad_output=_z(3, 4, 6), self=_z(3, 2, 3), indices=np.array([[[0, 1, 2], [3, 99, -5]]] * 3)),
                 "indices[0, 1, 1] = 99 is outside [0, 24)", id="3-D:indices[0,1,1]=99"),
    no_memory(dict(grad_output=_huge(1, 1, _HUGE, _HUGE), self=_huge(1, 1, _HUGE, _HUGE),
                   indices=_huge(1, 1, _HUGE, _HUGE, dtype=np.int64), output_size=[_HUGE, _HUGE]),
              _TIB4, differs=_MEMORY_WORDS, id="result of 2^40 elements"),
])

# -- ReflectionPad2dBackward ---------------------------------------------------------------------

def _pad():
    return dict(grad_output=_z(2, 3, 7, 9), self=_z(2, 3, 4, 5), padding=[2, 2, 1, 2])


_PAD_NAMES = {"grad_output": "gradOutput", "self": "self", "padding": "padding"}

REFLECTION_PAD = _cases("reflection_pad2d_backward", "aclnnReflectionPad2dBackwardGetWorkspaceSize", _pad,
                        _PAD_NAMES, [
    *(null({arg: None}) for arg in _PAD_NAMES),
    bad(dict(grad_output=_z(2, 3, 7, 9, dtype=np.int32)), "gradOutput"),
    bad(dict(grad_output=_z(2, 3, 7, 9, dtype=np.bool_)), "gradOutput"),
    bad(dict(self=_z(2, 3, 4, 5, dtype=np.int64)), "self"),
    bad(dict(self=_z(2, 3, 4, 5, dtype=np.float16)), "self"),               # both allowed, not equal
    bad(dict(grad_output=_z(2, 3, 7, 9, dtype=np.complex64)), "self"),
    bad(dict(self=_z(4, 5)), "self"),
    bad(dict(self=_z(1, 2, 3, 4, 5)), "self"),
    bad(dict(grad_output=_z(3, 7, 9)), "gradOutput"),
    bad(dict(padding=[2, 2, 1]), "padding"),
    bad(dict(padding=[2, 2, 1, 2, 0]), "padding"),
    bad(dict(padding=[]), "padding"),
    bad(dict(padding=[-1, 2, 1, 2], grad_output=_z(2, 3, 7, 6)), "padding"),   # negative: documented rule
    bad(dict(padding=[2, 2, 1, -1], grad_output=_z(2, 3, 4, 9)), "padding"),
    bad(dict(padding=[5, 0, 1, 2], grad_output=_z(2, 3, 7, 10)), "padding"),   # left == W
    bad(dict(padding=[0, 6, 1, 2], grad_output=_z(2, 3, 7, 11)), "padding"),   # right > W
    bad(dict(padding=[2, 2, 4, 0], grad_output=_z(2, 3, 8, 9)), "padding"),    # top == H
    bad(dict(padding=[2, 2, 0, 4], grad_output=_z(2, 3, 8, 9)), "padding"),    # bottom == H
    bad(dict(padding=[2**62, 0, 1, 2]), "padding"),
    bad(dict(grad_output=_z(2, 3, 8, 9)), "gradOutput"),
    bad(dict(grad_output=_z(2, 3, 7, 8)), "gradOutput"),
    bad(dict(grad_output=_z(1, 3, 7, 9)), "gradOutput"),                       # leading dims (not in CANN)
    bad(dict(grad_output=_z(2, 4, 7, 9)), "gradOutput"),
    bad(dict(self=_z(2, 0, 4, 5), grad_output=_z(2, 0, 7, 9)), "self"),       # 4-D: C must be > 0
    bad(dict(self=_z(2, 3, 0, 5), grad_output=_z(2, 3, 0, 9), padding=[2, 2, 0, 0]), "padding"),
    bad(dict(self=_z(3, 4, 0), grad_output=_z(3, 4, 0), padding=[0, 0, 0, 0]), "padding"),
    bad(dict(self=_z(1, 8, 10, dtype=bfloat16), grad_output=_z(1, 9, 18, dtype=bfloat16),
             padding=[8, 0, 1, 0]), "padding"),                              # BF16: a pad > 7 with top != 0
    # the first violation decides
    bad(dict(grad_output=_z(7, 9, dtype=np.int32), padding=[1]), "gradOutput", absent=("padding",)),
    bad(dict(self=_z(4, 5, dtype=np.float64), padding=[1]), "dtype", absent=("padding",)),
    bad(dict(self=_z(4, 5), padding=[1]), "self", absent=("padding",)),
    bad(dict(grad_output=_z(7, 9), padding=[-1]), "gradOutput", absent=("padding",)),
    bad(dict(padding=[-1, 9, 9, 9]), ">= 0"),
    bad(dict(padding=[5, 9, 9, 9]), "left"),
    bad(dict(padding=[1, 1, 4, 9], grad_output=_z(1, 1, 1, 1)), "top"),
    bad(dict(grad_output=_z(1, 3, 7, 8)), "[7, 9]"),
    # Python types
    wrong_type(dict(grad_output=[[[0.0]]])),
    wrong_type(dict(self=(2, 3, 4, 5))),
    wrong_type(dict(padding=2.0)),
    wrong_type(dict(grad_output=object())),
    wrong_type(dict(padding="2212")),
    wrong_type(dict(padding=[2, 2, 1.0, 2])),
    wrong_type(dict(padding=[2, 2, 1, False])),
    *unnamed("self", "self", (2, 3, 4, 5)),
    no_memory(dict(grad_output=_huge(1, 1, _HUGE + 2, _HUGE + 2), self=_huge(1, 1, _HUGE, _HUGE), padding=[1] * 4),
              _TIB4, differs=_MEMORY_WORDS, id="result of 2^40 elements"),
])

# -- AvgPool2dBackward ---------------------------------------------------------------------------

def _avg():
    return dict(grad_output=_z(2, 3, 4, 4), self=_z(2, 3, 7, 8), kernel_size=[3], stride=[2], padding=[1],
                ceil_mode=False, count_include_pad=True, divisor_override=None, cube_math_type=0)


_AVG_NAMES = {"grad_output": "gradOutput", "self": "self", "kernel_size": "kernelSize", "stride": "stride",
              "padding": "padding", "ceil_mode": "ceilMode", "count_include_pad": "countIncludePad",
              "divisor_override": "divisorOverride", "cube_math_type": "cubeMathType"}

AVG_POOL = _cases("avg_pool2d_backward", "aclnnAvgPool2dBackwardGetWorkspaceSize", _avg, _AVG_NAMES, [
    *(null({arg: None}) for arg in ("grad_output", "self", "kernel_size", "padding")),
    # 2. dtypes
    bad(dict(grad_output=_z(2, 3, 4, 4, dtype=np.float64)), "gradOutput"),
    bad(dict(grad_output=_z(2, 3, 4, 4, dtype=np.int32)), "gradOutput"),
    bad(dict(self=_z(2, 3, 7, 8, dtype=np.float64)), "self"),
    bad(dict(self=_z(2, 3, 7, 8, dtype=np.int64)), "self"),
    bad(dict(grad_output=_z(2, 3, 4, 4, dtype=np.float16)), "gradOutput"),
    bad(dict(self=_z(2, 3, 7, 8, dtype=bfloat16)), "gradOutput"),
    # 3. formats (ranks other than 3 and 4 would be ND)
    bad(dict(grad_output=_z(4, 4)), "gradOutput"),
    bad(dict(grad_output=_z(1, 2, 3, 4, 4)), "gradOutput"),
    bad(dict(self=_z(7, 8)), "self"),
    bad(dict(self=_z(1, 2, 3, 7, 8)), "self"),
    bad(dict(self=_z(3, 7, 8)), "gradInput"),                # 4-D gradOutput needs a 4-D gradInput
    # 4. ranks, list lengths and values
    bad(dict(grad_output=_z(3, 4, 4)), "gradOutput"),
    bad(dict(kernel_size=[]), "kernelSize must have 1 or 2 elements", "[]"),
    bad(dict(kernel_size=[3, 3, 3]), "kernelSize"),
    bad(dict(kernel_size=[0]), "kernelSize"),
    bad(dict(kernel_size=[3, -3]), "kernelSize"),
    bad(dict(stride=[2, 2, 2]), "stride"),
    bad(dict(stride=[0]), "stride"),
    bad(dict(stride=[2, -1]), "stride"),
    bad(dict(padding=[1, 1, 1]), "padding"),
    # 5. padding
    bad(dict(padding=[]), "padding"),
    bad(dict(padding=[2]), "padding"),
    bad(dict(padding=[1, 2]), "padding"),
    bad(dict(kernel_size=[1], padding=[1]), "padding"),
    bad(dict(kernel_size=[3, 3], padding=[2, 2]), "padding must be <= kernelSize",
        "kernelSize = [3, 3], padding = [2, 2]"),
    # 6. cube math type
    bad(dict(cube_math_type=-1), "cubeMathType"),
    bad(dict(cube_math_type=4), "cubeMathType"),
    bad(dict(cube_math_type=127), "cubeMathType"),
    bad(dict(grad_output=_z(2, 3, 4, 4, dtype=bfloat16), self=_z(2, 3, 7, 8, dtype=bfloat16), cube_math_type=2),
        "cubeMathType"),
    # beyond CANN's phase 1: unsupported shapes
    bad(dict(padding=[-1]), "padding"),
    bad(dict(padding=[0, -1]), "padding"),
    bad(dict(grad_output=_z(1, 3, 4, 4)), "gradOutput"),     # N differs
    bad(dict(grad_output=_z(2, 4, 4, 4)), "gradOutput"),     # C differs
    bad(dict(grad_output=_z(2, 3, 5, 4)), "gradOutput"),     # H is not the pooled size
    bad(dict(grad_output=_z(2, 3, 4, 3)), "gradOutput"),     # W is not the pooled size
    bad(dict(ceil_mode=True), "gradOutput"),                 # ceil mode pools 7 x 8 to 4 x 5
    bad(dict(grad_output=_z(2, 3, 4, 4), self=_z(2, 3, 9, 9), ceil_mode=True), "gradOutput"),
    bad(dict(grad_output=_z(3, 4, 4), self=_z(4, 7, 8)), "gradOutput"),   # 3-D, C differs
    bad(dict(grad_output=_z(2, 3, 1, 1), self=_z(2, 3, 1, 1), kernel_size=[3], padding=[0]), "gradOutput"),
    # sizes beyond int64
    bad(dict(kernel_size=[2**63]), "kernelSize"),
    bad(dict(stride=[-2**63 - 1]), "stride"),
    bad(dict(divisor_override=2**63), "divisorOverride"),
    bad(dict(cube_math_type=2**64), "cubeMathType"),
    bad(dict(kernel_size=[2**63 - 1, 3], padding=[2**62 - 1, 1]), "padding"),  # H + 2 * pH leaves int64
    # the first violation decides; a missing tensor comes before everything else
    null(dict(grad_output=_z(2, 3, 4, 4, dtype=np.float64), self=None), "self", absent=("dtype",)),
    bad(dict(grad_output=_z(2, 3, 4, 4, dtype=np.int8), kernel_size=[0]), "dtype", absent=("kernelSize",)),
    bad(dict(grad_output=_z(5, 2, 3, 4, 4), kernel_size=[0]), "NCL", absent=("kernelSize",)),
    bad(dict(kernel_size=[], stride=[0], padding=[]), "kernelSize", absent=("stride",)),
    bad(dict(stride=[0], padding=[]), "stride", absent=("padding",)),
    bad(dict(padding=[], cube_math_type=9), "padding", absent=("cubeMathType",)),
    bad(dict(padding=[2], cube_math_type=9), "padding must be <=", absent=("cubeMathType",)),
    bad(dict(cube_math_type=9, padding=[-1]), "cubeMathType", absent=("padding",)),
    bad(dict(padding=[-1], grad_output=_z(1, 3, 4, 4)), ">= 0", absent=("gradOutput",)),
    # Python types
    wrong_type(dict(grad_output=[[[[0.0] * 4] * 4] * 3] * 2)),
    wrong_type(dict(self=(0.0,) * 8)),
    wrong_type(dict(kernel_size=3.0)),
    wrong_type(dict(kernel_size="33")),
    wrong_type(dict(kernel_size=[3.0])),
    wrong_type(dict(stride=True)),
    wrong_type(dict(self=b"\0" * 32)),
    wrong_type(dict(stride=[True])),
    wrong_type(dict(padding=np.zeros(1, np.float32))),
    wrong_type(dict(ceil_mode=1)),
    wrong_type(dict(ceil_mode=None)),
    wrong_type(dict(count_include_pad="yes")),
    wrong_type(dict(divisor_override=2.5)),
    wrong_type(dict(divisor_override=True)),
    wrong_type(dict(cube_math_type=1.0)),
    wrong_type(dict(cube_math_type=False)),
    wrong_type(dict(cube_math_type=None)),
    *unnamed("grad_output", "gradOutput", (2, 3, 4, 4)),
    # the binding converts every argument before the library sees a NULL
    wrong_type(dict(self=None, kernel_size=[3.0]), "kernelSize", id="self=None/kernel_size=[3.0]"),
    wrong_type(dict(grad_output=None, ceil_mode=1), "ceilMode", id="grad_output=None/ceil_mode=1"),
    bad(dict(cube_math_type=128), "cubeMathType", "int8_t"),                 # the C parameter is int8_t
    bad(dict(cube_math_type=200, grad_output=None), "cubeMathType", absent=("NULL",)),
    no_memory(dict(grad_output=_huge(1, 1, _HUGE // 2, _HUGE // 2), self=_huge(1, 1, _HUGE, _HUGE), kernel_size=[2],
                   stride=[2], padding=[0]), _TIB4, differs=_MEMORY_WORDS, id="result of 2^40 elements"),
])

# -- ConvolutionBackward -------------------------------------------------------------------------

_ALL = [True, True, True]


def _conv():
    return dict(grad_output=_z(2, 4, 5, 5), input=_z(2, 6, 7, 7), weight=_z(4, 3, 3, 3), bias_sizes=[4],
                stride=[1, 1], padding=[0, 0], dilation=[1, 1], transposed=False, output_padding=[0, 0],
                groups=2, output_mask=_ALL, cube_math_type=0)


def _transposed():
    # ConvTranspose2d 6 -> 4 channels, groups 2, k3 s2 p1 op1: 3x3 -> 6x6.
    return dict(_conv(), grad_output=_z(2, 4, 6, 6), input=_z(2, 6, 3, 3), weight=_z(6, 2, 3, 3),
                stride=[2, 2], padding=[1, 1], transposed=True, output_padding=[1, 1])


def _empty():
    return dict(_conv(), grad_output=_z(0, 4, 5, 5), input=_z(0, 6, 7, 7))


_CONV_NAMES = {"grad_output": "gradOutput", "input": "input", "weight": "weight", "bias_sizes": "biasSizes",
               "stride": "stride", "padding": "padding", "dilation": "dilation", "transposed": "transposed",
               "output_padding": "outputPadding", "groups": "groups", "output_mask": "outputMask",
               "cube_math_type": "cubeMathType"}

CONVOLUTION = _cases("convolution_backward", "aclnnConvolutionBackwardGetWorkspaceSize", _conv, _CONV_NAMES, [
    *(null({arg: None}) for arg in ("grad_output", "input", "weight", "stride", "padding", "dilation",
                                    "output_padding", "output_mask")),
    *(null(dict(output_mask=mask), "outputMask") for mask in ([], [True], [True, True], [True] * 4)),
    # 2. dtypes
    bad(dict(grad_output=_z(2, 4, 5, 5, dtype=np.float64)), "gradOutput"),
    bad(dict(input=_z(2, 6, 7, 7, dtype=np.int32)), "input"),
    bad(dict(weight=_z(4, 3, 3, 3, dtype=np.complex64)), "weight"),
    # 3. formats
    bad(dict(grad_output=_z(4, 25)), "gradOutput"),
    bad(dict(input=_z(1, 2, 6, 7, 7, 1)), "input"),
    bad(dict(weight=_z(4, 27)), "weight"),
    # 4. values
    bad(dict(stride=[0, 1]), "stride"),
    bad(dict(padding=[0, -1]), "padding"),
    bad(dict(padding=[0, 0, -1, 0]), "padding"),
    bad(dict(dilation=[1, 0]), "dilation"),
    bad(dict(output_padding=[1, 0]), "outputPadding"),
    bad(dict(output_padding=[-1, 0]), "outputPadding", base=_transposed),
    bad(dict(output_padding=[2, 1]), "outputPadding", base=_transposed),             # not < stride
    bad(dict(output_padding=[1, 1, 0, 0]), "outputPadding", base=_transposed),       # top must be 0
    bad(dict(output_padding=[0, 2, 0, 1]), "outputPadding", base=_transposed),       # bottom not < stride
    bad(dict(groups=0), "groups"),
    bad(dict(groups=-3), "groups"),
    bad(dict(groups=65536), "groups"),
    bad(dict(groups=2**63), "groups"),
    # 5. cubeMathType
    bad(dict(cube_math_type=4), "cubeMathType"),
    bad(dict(cube_math_type=-1), "cubeMathType"),
    # 7. shapes and lengths
    bad(dict(grad_output=_z(2, 4, 25)), "gradOutput"),
    bad(dict(weight=_z(4, 3, 9)), "weight"),
    bad(dict(grad_output=_z(2, 4, 0, 5)), "gradOutput"),
    bad(dict(bias_sizes=[5]), "biasSizes"),
    bad(dict(bias_sizes=[4, 1]), "biasSizes"),
    bad(dict(bias_sizes=[]), "biasSizes"),
    bad(dict(stride=[1]), "stride"),
    bad(dict(stride=[1, 1, 1]), "stride"),
    bad(dict(dilation=[1, 1, 1]), "dilation"),
    bad(dict(padding=[0, 0, 0]), "padding"),
    bad(dict(output_padding=[0]), "outputPadding"),
    bad(dict(grad_output=_z(2, 4, 5), input=_z(2, 6, 7), weight=_z(4, 3, 3), stride=[1], dilation=[1],
             output_padding=[0], padding=[0, 0, 0, 0]), "padding", id="1d:padding=[0,0,0,0]"),  # 4 only for 2-D
    # 8. channels and groups
    bad(dict(weight=_z(5, 3, 3, 3), bias_sizes=None), "weight"),
    bad(dict(weight=_z(4, 4, 3, 3)), "input"),
    bad(dict(weight=_z(4, 2, 3, 3)), "groups"),
    bad(dict(input=_z(2, 6, 7, 7), weight=_z(9, 1, 3, 3), grad_output=_z(2, 9, 5, 5), groups=6,
             bias_sizes=[9]), "gradOutput"),                                         # depthwise 9 % 6
    bad(dict(weight=_z(3, 3, 3, 3), grad_output=_z(2, 3, 5, 5), bias_sizes=[3]), "weight"),
    bad(dict(weight=_z(4, 2, 3, 3)), "input", base=_transposed),
    bad(dict(weight=_z(6, 2, 3, 3), groups=3), "groups", base=_transposed),
    # 9. spatial sizes
    bad(dict(grad_output=_z(2, 4, 5, 4)), "gradOutput"),
    bad(dict(grad_output=_z(2, 4, 1, 1), weight=_z(4, 3, 8, 3)), "input"),
    bad(dict(grad_output=_z(3, 4, 5, 5)), "gradOutput"),                             # batch 3 != 2
    bad(dict(padding=[1, 0, 0, 0]), "gradOutput"),
    bad(dict(grad_output=_z(2, 4, 5, 6)), "gradOutput", base=_transposed),
    bad(dict(grad_output=_z(2, 4, 8, 6)), "gradOutput", base=_transposed),
    bad(dict(dilation=[2**62, 1]), "dilation"),                                      # leaves int64
    bad(dict(padding=[2**62, 2**62]), "padding"),
    # 10. empty tensors
    bad(dict(bias_sizes=None), "biasSizes", base=_empty),
    bad(dict(bias_sizes=[4, 4]), "biasSizes", base=_empty),
    bad(dict(bias_sizes=[5]), "biasSizes", base=_empty),
    bad(dict(input=_z(2, 6, 0, 7), grad_output=_z(2, 4, 0, 5)), "input", base=_empty),
    bad(dict(weight=_z(4, 3, 3)), "weight", base=_empty),
    bad(dict(stride=[1, 1, 1]), "stride", base=_empty),
    bad(dict(padding=[0]), "padding", base=_empty),
    bad(dict(weight=_z(5, 3, 3, 3)), "weight", base=_empty),
    bad(dict(weight=_z(4, 2, 3, 3)), "input", base=_empty),
    bad(dict(input=_z(0, 6, 2, 7)), "input", base=_empty),
    bad(dict(transposed=True, input=_z(2, 0, 3, 3), weight=_z(6, 2, 3, 3), output_mask=[False, True, True],
             grad_output=_z(2, 4, 6, 6)), "weight", base=_empty, id="empty:transposed,C=0"),
    # the first violation decides
    null(dict(grad_output=None, stride=None), "gradOutput", absent=("stride",)),
    null(dict(output_mask=[True], weight=_z(4, 3, 3, 3, dtype=np.float64)), "outputMask", absent=("dtype",)),
    bad(dict(grad_output=_z(2, 4, 5, 5, dtype=np.float64), input=_z(7, 7)), "gradOutput", absent=("input",)),
    bad(dict(input=_z(7, 7), stride=[0, 0]), "input", absent=("stride",)),
    bad(dict(stride=[0, 0], padding=[-1, -1]), "stride", absent=("padding",)),
    bad(dict(groups=0, cube_math_type=9), "groups", absent=("cubeMathType",)),
    bad(dict(cube_math_type=9, grad_output=_z(2, 4, 25)), "cubeMathType", absent=("gradOutput",)),
    bad(dict(grad_output=_z(2, 4, 25), stride=[1, 1, 1]), "gradOutput", absent=("stride",)),
    bad(dict(bias_sizes=[5], stride=[1]), "biasSizes", absent=("stride",)),
    bad(dict(stride=[1], weight=_z(5, 3, 3, 3)), "stride", absent=("weight",)),
    bad(dict(weight=_z(5, 3, 3, 3), grad_output=_z(2, 4, 4, 4), bias_sizes=None), "weight"),
    bad(dict(input=_z(0, 6, 7, 7), weight=_z(5, 3, 3, 3), bias_sizes=[7]), "biasSizes", absent=("weight",)),
    # Python types
    wrong_type(dict(grad_output=np.zeros((2, 4, 5, 5)).tolist())),
    wrong_type(dict(weight="weight")),
    wrong_type(dict(stride=1.0)),
    wrong_type(dict(padding=False)),
    wrong_type(dict(stride=[1.0, 1])),
    wrong_type(dict(padding="00")),
    wrong_type(dict(dilation=np.ones(2, np.float32))),
    wrong_type(dict(output_padding=[0, None])),
    wrong_type(dict(bias_sizes=4)),
    wrong_type(dict(transposed=0)),
    wrong_type(dict(transposed="False")),
    wrong_type(dict(groups=2.0)),
    wrong_type(dict(groups=True)),
    wrong_type(dict(output_mask=[1, 1, 1])),
    wrong_type(dict(output_mask="TTT")),
    wrong_type(dict(cube_math_type="0")),
    *unnamed("weight", "weight", (4, 3, 3, 3)),
    wrong_type(dict(output_mask=[True], groups=2.0), "groups"),
    wrong_type(dict(input=None, output_padding=[0, None]), "outputPadding"),
    bad(dict(groups=2**31), "groups", "int32_t"),                            # the C parameter is int
    no_memory(dict(grad_output=_huge(1, 1, _HUGE, _HUGE), input=_huge(1, 1, _HUGE, _HUGE), weight=_z(1, 1, 1, 1),
                   bias_sizes=None, groups=1, output_mask=[True, False, False]),
              _TIB4, differs=_MEMORY_WORDS, id="gradInput of 2^40 elements"),
])

# -- Add, Mul --------------------------------------------------------------------------------------

def _add():
    return dict(self=_z(2, 3, 4), other=_z(3, 1), alpha=2)


_ADD_NAMES = {"self": "self", "other": "other", "alpha": "alpha"}
# (A tensor of more than 8 dims: the simulator's aclCreateTensor refuses it before phase 1, the
# numpy backend in phase 1's rank check; tests/ops/test_add.py holds both to 161002.)

ADD = _cases("add", "aclnnAddGetWorkspaceSize", _add, _ADD_NAMES, [
    *(null({arg: None}) for arg in _ADD_NAMES),
    null(dict(other=None, alpha=None), "other", absent=("alpha",)),
    bad(dict(self=_z(2, 3, 4, dtype=np.uint16)), "self", "UINT16"),
    bad(dict(other=_z(3, 1, dtype=np.uint32)), "other", "UINT32"),
    bad(dict(self=_z(2, 3, 4, dtype=np.uint64), other=_z(3, 1, dtype=np.uint64)), "self"),
    bad(dict(self=_z(2, 3, 4, dtype=np.int32), other=_z(3, 1, dtype=np.int32), alpha=0.5), "alpha", "DOUBLE", "INT32"),
    bad(dict(self=_z(2, 3, 4, dtype=np.int8), other=_z(3, 1, dtype=np.uint8), alpha=1j), "alpha", "COMPLEX128"),
    bad(dict(self=_z(2, 3, 4, dtype=np.bool_), other=_z(3, 1, dtype=np.bool_), alpha=1.0), "alpha", "BOOL"),
    bad(dict(alpha=2j), "alpha", "FLOAT"),
    bad(dict(other=_z(4, 3)), "self", "other", "[2, 3, 4]", "[4, 3]"),
    # the first violation decides
    bad(dict(self=_z(2, 3, 4, dtype=np.uint16), other=_z(5), alpha=0.5), "self", absent=("other", "alpha")),
    bad(dict(self=_z(2, 3, 4, dtype=np.int32), other=_z(5, dtype=np.int32), alpha=0.5), "alpha", absent=("broadcast",)),
    wrong_type(dict(self=[1.0, 2.0])),
    wrong_type(dict(other="x")),
    wrong_type(dict(alpha="2")),
    wrong_type(dict(alpha=[2])),
    wrong_type(dict(other=object(), alpha="2"), "other"),
    *unnamed("other", "other", (3, 1)),
    no_memory(dict(self=_huge(_HUGE, _HUGE, 1), other=_huge(_HUGE, 1, _HUGE), alpha=1),
              "out", differs=_MEMORY_WORDS, id="out of 2^60 elements"),
])


def _mul():
    return dict(self=_z(2, 3, 4), other=_z(3, 1))


_MUL_NAMES = {"self": "self", "other": "other"}

MUL = _cases("mul", "aclnnMulGetWorkspaceSize", _mul, _MUL_NAMES, [
    *(null({arg: None}) for arg in _MUL_NAMES),
    bad(dict(self=_z(2, 3, 4, dtype=np.uint16)), "self", "UINT16"),
    bad(dict(other=_z(3, 1, dtype=np.uint64)), "other", "UINT64"),
    bad(dict(other=_z(2, 2)), "self", "other", "[2, 3, 4]", "[2, 2]"),
    bad(dict(self=_z(2, 3, 4, dtype=np.uint32), other=_z(9)), "self", absent=("other",)),
    wrong_type(dict(other=3.0)),
    wrong_type(dict(self=(1, 2))),
    *unnamed("self", "self", (2, 3)),
])

def _adds():
    return dict(self=_z(2, 3), other=0.5, alpha=2)


_ADDS_NAMES = {"self": "self", "other": "other", "alpha": "alpha"}

ADDS = _cases("adds", "aclnnAddsGetWorkspaceSize", _adds, _ADDS_NAMES, [
    *(null({arg: None}) for arg in _ADDS_NAMES),
    bad(dict(self=_z(2, 3, dtype=np.uint32)), "self", "UINT32"),
    bad(dict(self=_z(2, 3, dtype=np.bool_), other=np.uint16(1)), "self", "other", "BOOL", "UINT16"),
    bad(dict(self=_z(2, 3, dtype=np.int32), other=3, alpha=0.5), "alpha", "DOUBLE", "INT32"),
    bad(dict(self=_z(2, 3, dtype=np.bool_), other=True, alpha=0.5), "alpha", "BOOL"),
    bad(dict(alpha=1j), "alpha", "COMPLEX128", "FLOAT"),
    bad(dict(self=_z(2, 3, dtype=np.uint64), alpha=0.5j), "self", absent=("alpha",)),
    wrong_type(dict(other="0.5")),
    wrong_type(dict(other=[0.5])),
    wrong_type(dict(alpha=None, other="x"), "other"),
    wrong_type(dict(self=[[0.0]])),
    *unnamed("self", "self", (2, 3)),
])


def _muls():
    return dict(self=_z(2, 3), other=0.5)


_MULS_NAMES = {"self": "self", "other": "other"}

MULS = _cases("muls", "aclnnMulsGetWorkspaceSize", _muls, _MULS_NAMES, [
    *(null({arg: None}) for arg in _MULS_NAMES),
    bad(dict(self=_z(2, 3, dtype=np.uint16)), "self", "UINT16"),
    bad(dict(self=_z(2, 3, dtype=np.bool_), other=np.uint32(2)), "self", "other", "BOOL", "UINT32"),
    wrong_type(dict(other=b"1")),
    wrong_type(dict(other=object())),
    *unnamed("self", "self", (2, 3)),
])

def _relu():
    return dict(self=_z(2, 3))


RELU = _cases("relu", "aclnnReluGetWorkspaceSize", _relu, {"self": "self"}, [
    null(dict(self=None)),
    bad(dict(self=_z(2, 3, dtype=np.uint8)), "self", "UINT8"),
    bad(dict(self=_z(2, 3, dtype=np.float64)), "self", "DOUBLE"),
    bad(dict(self=_z(2, 3, dtype=np.bool_)), "self", "BOOL"),
    bad(dict(self=_z(2, 3, dtype=np.complex64)), "self"),
    wrong_type(dict(self=[1.0, -1.0])),
    wrong_type(dict(self=3.0)),
    *unnamed("self", "self", (2, 3)),
])

def _threshold():
    return dict(grad_output=_z(2, 3), self=_z(3), threshold=0)


_THRESHOLD_NAMES = {"grad_output": "gradOutput", "self": "self", "threshold": "threshold"}

THRESHOLD_BACKWARD = _cases("threshold_backward", "aclnnThresholdBackwardGetWorkspaceSize", _threshold,
                            _THRESHOLD_NAMES, [
    *(null({arg: None}) for arg in _THRESHOLD_NAMES),
    null(dict(grad_output=None, threshold=None), "threshold", absent=("gradOutput",)),   # threshold first
    null(dict(grad_output=None, self=None), "gradOutput", absent=("self",)),
    bad(dict(grad_output=_z(2, 3, dtype=np.int64), self=_z(3, dtype=np.int64)), "gradOutput", "INT64"),
    bad(dict(self=_z(3, dtype=np.float64)), "self", "DOUBLE"),
    bad(dict(self=_z(3, dtype=np.float16)), "gradOutput", "self", "FLOAT16"),
    bad(dict(self=_z(4)), "self", "gradOutput", "[4]", "[2, 3]"),
    bad(dict(grad_output=_z(2, 3, dtype=np.bool_), self=_z(4)), "gradOutput", absent=("broadcast",)),
    wrong_type(dict(threshold="0")),
    wrong_type(dict(grad_output=[[0.0]])),
    wrong_type(dict(self=None, threshold=[0]), "threshold"),
    *unnamed("grad_output", "gradOutput", (2, 3)),
])

# -- Im2col (forward) ---------------------------------------------------------------------------


def _unfold():
    return dict(self=_z(2, 3, 4, 4), kernel_size=[2, 2], dilation=[1, 1], padding=[0, 0], stride=[1, 1])


IM2COL_FORWARD = _cases("im2col", "aclnnIm2colGetWorkspaceSize", _unfold,
                        {"self": "self", "kernel_size": "kernelSize", "dilation": "dilation", "padding": "padding",
                         "stride": "stride"}, [
    *(null({arg: None}) for arg in ("self", "kernel_size", "dilation", "padding", "stride")),
    bad(dict(self=_z(2, 3, 4, 4, dtype=np.float64)), "self", "DOUBLE"),
    bad(dict(self=_z(3, 4)), "self", "3-D or 4-D"),
    bad(dict(self=_z(2, 0, 4, 4)), "self", "> 0"),
    bad(dict(self=_z(3, 0, 4)), "self", "> 0"),
    bad(dict(kernel_size=[2]), "kernelSize", "2 elements"),
    bad(dict(dilation=[1, 1, 1]), "dilation", "2 elements"),
    bad(dict(padding=[0]), "padding", "2 elements"),
    bad(dict(stride=[1, 1, 1]), "stride", "2 elements"),
    bad(dict(kernel_size=[0, 2]), "kernelSize"),
    bad(dict(stride=[1, 0]), "stride"),
    bad(dict(dilation=[-1, 1]), "dilation"),
    bad(dict(padding=[0, -1]), "padding"),
    bad(dict(kernel_size=[5, 2]), "block grid"),
    bad(dict(dilation=[2**62, 1]), "block grid"),
    # the first violation decides
    bad(dict(kernel_size=[2], stride=[0, 0]), "kernelSize", absent=("stride",)),
    bad(dict(stride=[0, 0], padding=[-1, -1]), "stride", absent=("padding",)),
    wrong_type(dict(kernel_size=2.0)),
    wrong_type(dict(self="self")),
    *unnamed("self", "self", (2, 3, 4, 4)),
])

# -- MaxUnpool2d (forward) -----------------------------------------------------------------------


def _unpool():
    return dict(self=_z(2, 3, 2, 2), indices=np.zeros((2, 3, 2, 2), np.int64), output_size=[4, 4])


MAX_UNPOOL_FORWARD = _cases("max_unpool2d", "aclnnMaxUnpool2dGetWorkspaceSize", _unpool,
                            {"self": "self", "indices": "indices", "output_size": "outputSize"}, [
    null(dict(self=None)),
    null(dict(indices=None)),
    null(dict(output_size=None)),
    bad(dict(self=_z(2, 3, 2, 2, dtype=np.bool_)), "self", "BOOL"),
    bad(dict(self=_z(2, 3, 2, 2, dtype=bfloat16)), "self", "BFLOAT16"),
    bad(dict(indices=np.zeros((2, 3, 2, 2), np.int16)), "indices", "INT16"),
    bad(dict(self=_z(3, 2, 2, dtype=np.bool_), indices=np.zeros((2, 2), np.int16)), "self", absent=("indices",)),
    bad(dict(self=_z(6, 4), indices=np.zeros((6, 4), np.int64)), "self", "3-D or 4-D"),
    bad(dict(indices=np.zeros((3, 2, 2), np.int64)), "indices", "rank"),
    bad(dict(indices=np.zeros((2, 3, 2, 3), np.int64)), "indices", "shape"),
    bad(dict(self=_z(2, 0, 2, 2), indices=np.zeros((2, 0, 2, 2), np.int64)), "self", "> 0"),
    bad(dict(output_size=[4]), "outputSize", "2 elements"),
    bad(dict(output_size=[4, 0]), "outputSize", "> 0"),
    bad(dict(output_size=[1, 3]), "outputSize", "H * W"),
    # (an out of more elements than int64 counts: the binding's stand-in of ones, refused as out)
    bad(dict(output_size=[8, 2**63 - 1]), "out shape must be [2, 3, 8, 9223372036854775807]", "got [1, 1, 1, 1]",
        id="out beyond int64"),
    no_memory(dict(output_size=[2**31, 2**20]), str(2 * 3 * 2**51 * 4), differs=_MEMORY_WORDS,
              id="out beyond the device"),
    device_fault(dict(indices=np.full((2, 3, 2, 2), 16, np.int64)), "indices[0, 0, 0, 0] = 16", "[0, 16)"),
    wrong_type(dict(output_size=4.0)),
    wrong_type(dict(self="self")),
    *unnamed("self", "self", (2, 3, 2, 2)),
])

# -- ReflectionPad2d (forward) -------------------------------------------------------------------


def _rpad():
    return dict(self=_z(2, 3, 4, 5), padding=[1, 1, 2, 2])


REFLECTION_PAD_FORWARD = _cases("reflection_pad2d", "aclnnReflectionPad2dGetWorkspaceSize", _rpad,
                                {"self": "self", "padding": "padding"}, [
    null(dict(self=None)),
    null(dict(padding=None)),
    bad(dict(self=_z(2, 3, 4, 5, dtype=np.uint16)), "self", "UINT16"),
    bad(dict(self=_z(4, 5)), "self", "3-D or 4-D"),
    bad(dict(self=_z(1, 2, 3, 4, 5)), "self", "3-D or 4-D"),
    bad(dict(padding=[1, 1, 1]), "padding", "4 elements"),
    bad(dict(padding=[5, 0, 0, 0]), "padding", "left", "width"),
    bad(dict(padding=[0, 0, 0, 4]), "padding", "bottom", "height"),
    bad(dict(padding=[-3, -3, 0, 0]), "padded sizes"),
    bad(dict(self=_z(0, 4, 5)), "empty", id="3d empty"),
    bad(dict(self=_z(2, 0, 4, 5)), "empty", id="4d C=0"),
    bad(dict(self=_z(2, 3, 4, 5), padding=[-2, -3, 0, 0]), "empty", id="4d out W=0"),
    # the first violation decides
    bad(dict(self=_z(4, 5, dtype=np.uint16), padding=[9, 9]), "self", "UINT16", absent=("padding",)),
    bad(dict(padding=[9, 9]), "padding", absent=("width",)),
    wrong_type(dict(padding=1.5)),
    wrong_type(dict(self="self")),
    *unnamed("self", "self", (2, 3, 4, 5)),
])

# -- Convolution (forward) -----------------------------------------------------------------------


def _fwd():
    return dict(input=_z(2, 6, 7, 7), weight=_z(4, 3, 3, 3), bias=_z(4), stride=[1, 1], padding=[0, 0],
                dilation=[1, 1], transposed=False, output_padding=None, groups=2, cube_math_type=0)


def _fwd_transposed():
    # ConvTranspose2d 6 -> 4 channels, groups 2, k3 s2 p1 op1: 3x3 -> 6x6.
    return dict(_fwd(), input=_z(2, 6, 3, 3), weight=_z(6, 2, 3, 3), stride=[2, 2], padding=[1, 1],
                transposed=True, output_padding=[1, 1])


_FWD_NAMES = {"input": "input", "weight": "weight", "bias": "bias", "stride": "stride", "padding": "padding",
              "dilation": "dilation", "transposed": "transposed", "output_padding": "outputPadding",
              "groups": "groups", "cube_math_type": "cubeMathType"}

CONVOLUTION_FORWARD = _cases("convolution", "aclnnConvolutionGetWorkspaceSize", _fwd, _FWD_NAMES, [
    # 1. NULL
    *(null({arg: None}) for arg in ("input", "weight", "stride", "padding", "dilation")),
    null(dict(output_padding=None), "outputPadding", base=_fwd_transposed),
    # 2. dtypes: bias first
    bad(dict(bias=_z(4, dtype=np.float64)), "bias", "DOUBLE"),
    bad(dict(input=_z(2, 6, 7, 7, dtype=np.int32)), "input", "INT32"),
    bad(dict(weight=_z(4, 3, 3, 3, dtype=np.complex64)), "weight"),
    bad(dict(bias=_z(4, dtype=np.int8), input=_z(2, 6, 7, 7, dtype=np.int32)), "bias", absent=("input",)),
    # 3. ranks and lengths
    bad(dict(input=_z(6, 7, 7)), "input"),
    bad(dict(input=_z(1, 2, 6, 7, 7, 1)), "input"),
    bad(dict(weight=_z(4, 27)), "weight"),
    bad(dict(bias=_z(5)), "bias", "weight.shape[0]"),
    bad(dict(bias=_z(4, 1)), "bias"),
    bad(dict(bias=_z(5)), "bias", "weight.shape[1] * groups", base=_fwd_transposed),
    bad(dict(stride=[1]), "stride"),
    bad(dict(dilation=[1, 1, 1]), "dilation"),
    bad(dict(padding=[0, 0, 0]), "padding"),
    bad(dict(padding=[0]), "padding"),
    bad(dict(output_padding=[1]), "outputPadding", base=_fwd_transposed),
    bad(dict(input=_z(2, 6, 7), weight=_z(4, 3, 3), stride=[1], dilation=[1], padding=[0, 0, 0]), "padding",
        id="1d:padding=[0,0,0]"),
    bad(dict(input=_z(2, 6, 3), weight=_z(6, 2, 3), stride=[2], dilation=[1], padding=[1, 1], output_padding=[1]),
        "padding", "transposed", base=_fwd_transposed, id="transposed 1d:padding=[1,1]"),
    # 4. values
    bad(dict(weight=_z(4, 3, 0, 3), bias=_z(4)), "weight", "> 0"),
    bad(dict(stride=[0, 1]), "stride"),
    bad(dict(dilation=[1, 0]), "dilation"),
    bad(dict(padding=[0, -1]), "padding"),
    bad(dict(weight=_z(4, 3, 8, 3)), "input", "kernel"),
    bad(dict(dilation=[2**62, 1]), "dilation"),                                       # leaves int64
    bad(dict(groups=0), "groups"),
    bad(dict(groups=-3), "groups"),
    bad(dict(weight=_z(4, 4, 3, 3)), "input", "groups"),
    bad(dict(weight=_z(4, 3, 3, 3), groups=3, input=_z(2, 9, 7, 7)), "weight", "divisible"),
    bad(dict(weight=_z(4, 2, 3, 3)), "weight", "input.shape[1]", base=_fwd_transposed),
    bad(dict(output_padding=[2, 1]), "outputPadding", base=_fwd_transposed),          # not < stride or dilation
    bad(dict(output_padding=[-1, 0]), "outputPadding", base=_fwd_transposed),
    bad(dict(input=_z(2, 0, 3, 3), weight=_z(0, 2, 3, 3)), "input", base=_fwd_transposed,
        id="transposed:C=0"),
    bad(dict(weight=_z(6, 2, 300, 3), bias=_z(4)), "transposed", "255", base=_fwd_transposed),
    # 5. the output shape
    bad(dict(input=_z(2, 6, 2, 2), padding=[3, 3], stride=[1, 1], weight=_z(6, 2, 3, 3), output_padding=[0, 0],
             bias=_z(4)), "output", "negative", base=_fwd_transposed, id="transposed:negative output"),
    bad(dict(input=_z(2, 0, 7, 7), weight=_z(4, 0, 3, 3)), "output", "empty"),
    # 6. cubeMathType
    bad(dict(cube_math_type=5), "cubeMathType"),
    bad(dict(cube_math_type=-1), "cubeMathType"),
    # the first violation decides
    bad(dict(stride=[0, 0], padding=[-1, -1]), "stride", absent=("padding",)),
    bad(dict(groups=0, cube_math_type=9), "groups", absent=("cubeMathType",)),
    bad(dict(input=_z(7, 7), stride=[0, 0]), "input", absent=("stride",)),
    # Python types
    wrong_type(dict(weight="weight")),
    wrong_type(dict(stride=1.0)),
    wrong_type(dict(transposed=1)),
    *unnamed("input", "input", (2, 6, 7, 7)),
])

def _cast():
    return dict(self=_z(2, 3), dtype=np.float16)


CAST = _cases("cast", "aclnnCastGetWorkspaceSize", _cast, {"self": "self", "dtype": "dtype"}, [
    null(dict(self=None)),
    bad(dict(self=_z(2, 3, dtype=ml_dtypes.float8_e5m2)), "self", "FLOAT8_E5M2"),
    bad(dict(dtype=aclDataType.ACL_INT4), "dtype", "INT4"),
    bad(dict(dtype=ml_dtypes.float8_e4m3fn), "dtype", "FLOAT8_E4M3FN"),
    bad(dict(self=_z(2, 3, dtype=ml_dtypes.float8_e5m2), dtype=aclDataType.ACL_INT4), "self", absent=("dtype dtype",)),
    wrong_type(dict(dtype="not a dtype")),
    wrong_type(dict(dtype=True)),
    bad(dict(dtype=999), "dtype", "UNKNOWN"),
    bad(dict(dtype=2**31), "dtype", "does not fit"),
    wrong_type(dict(dtype=np.dtype("U3"))),
    wrong_type(dict(self=[1.0])),
    *unnamed("self", "self", (2, 3)),
])

# -- InplaceAdd ------------------------------------------------------------------------------------

def _inplace_add():
    return dict(self_ref=_z(2, 3, 4), other=_z(3, 1), alpha=2)


_INPLACE_ADD_NAMES = {"self_ref": "selfRef", "other": "other", "alpha": "alpha"}

INPLACE_ADD = _cases("inplace_add", "aclnnInplaceAddGetWorkspaceSize", _inplace_add, _INPLACE_ADD_NAMES, [
    *(null({arg: None}) for arg in _INPLACE_ADD_NAMES),
    null(dict(self_ref=None, other=None), "selfRef", absent=("other",)),
    # CheckInplace runs first: a shape error before a NULL alpha, before dtypes
    bad(dict(other=_z(4, 3), alpha=None), "selfRef", "other", "[2, 3, 4]", "[4, 3]", "broadcast", absent=("alpha",)),
    bad(dict(self_ref=_z(3, 1), other=_z(2, 3, 4, dtype=np.uint16)), "other", "selfRef", "[2, 3, 4]", "[3, 1]",
        absent=("UINT16",)),
    bad(dict(self_ref=_z(1, 4), other=_z(3, 4)), "other", "selfRef", "must broadcast to"),
    bad(dict(self_ref=_z(2, 3, 4, dtype=np.uint16)), "selfRef", "UINT16"),
    bad(dict(other=_z(3, 1, dtype=np.uint32)), "other", "UINT32"),
    bad(dict(self_ref=_z(2, 3, 4, dtype=np.int32), other=_z(3, 1, dtype=np.float32)), "selfRef", "FLOAT", "INT32"),
    bad(dict(self_ref=_z(2, 3, 4, dtype=np.bool_), other=_z(3, 1, dtype=np.int8), alpha=1), "selfRef", "BOOL"),
    bad(dict(self_ref=_z(2, 3, 4, dtype=np.int32), other=_z(3, 1, dtype=np.int32), alpha=0.5), "alpha", "DOUBLE"),
    bad(dict(self_ref=_z(2, 3, 4, dtype=np.bool_), other=_z(3, 1, dtype=np.bool_), alpha=1.0), "alpha", "BOOL"),
    bad(dict(self_ref=_z(2, 3, 4, dtype=np.float32), other=_z(3, 1, dtype=np.complex64)), "COMPLEX64", "selfRef"),
    wrong_type(dict(self_ref=[1.0, 2.0]), "selfRef"),
    wrong_type(dict(self_ref=np.broadcast_to(_z(4), (2, 3, 4))), "selfRef", "writable"),
    wrong_type(dict(other="x")),
    wrong_type(dict(alpha="2")),
    *unnamed("other", "other", (3, 1)),
])

# -- MaxPool2dWithIndices ------------------------------------------------------------------------

def _max_pool():
    return dict(self=_z(2, 3, 6, 6), kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[1, 1],
                ceil_mode=False)


_MAX_POOL_NAMES = {"self": "self", "kernel_size": "kernelSize", "stride": "stride", "padding": "padding",
                   "dilation": "dilation"}

MAX_POOL = _cases("max_pool2d_with_indices", "aclnnMaxPool2dWithIndicesGetWorkspaceSize", _max_pool,
                  _MAX_POOL_NAMES, [
    *(null({arg: None}) for arg in _MAX_POOL_NAMES),
    bad(dict(self=_z(2, 3, 6, 6, dtype=np.float64)), "self", "DOUBLE"),
    bad(dict(self=_z(2, 3, 6, 6, dtype=np.int32)), "self", "INT32"),
    bad(dict(self=_z(6, 6)), "self", "3-D or 4-D"),
    bad(dict(self=_z(1, 2, 3, 6, 6)), "self", "3-D or 4-D"),
    bad(dict(kernel_size=[]), "kernelSize", "1 or 2 elements"),
    bad(dict(kernel_size=[3, 3, 3]), "kernelSize"),
    bad(dict(stride=[2, 2, 2]), "stride", "0, 1 or 2 elements"),
    bad(dict(padding=[]), "padding", "1 or 2 elements"),
    bad(dict(dilation=[1, 1, 1]), "dilation", "1 or 2 elements"),
    bad(dict(kernel_size=[0, 3]), "kernelSize", "> 0"),
    bad(dict(stride=[2, -1]), "stride", "> 0"),
    bad(dict(padding=[2, 1]), "padding", "kernelSize / 2"),
    bad(dict(padding=[-1]), "padding", ">= 0"),
    bad(dict(dilation=[2, 2]), "dilation", "Atlas A2/A3"),
    bad(dict(self=_z(2, 0, 6, 6)), "self", "must not be 0"),
    bad(dict(self=_z(2, 3, 1, 1), kernel_size=[3], padding=[0]), "outH and outW"),
    bad(dict(stride=[2**63 - 1], ceil_mode=True), "overflows int64"),
    # the first violation decides
    bad(dict(kernel_size=[0], stride=[1, 1, 1]), "stride", absent=("kernelSize",)),
    bad(dict(padding=[5], dilation=[2]), "padding", absent=("dilation",)),
    wrong_type(dict(kernel_size=3.0)),
    wrong_type(dict(self=[[0.0]])),
    wrong_type(dict(ceil_mode=1), "ceilMode"),
    *unnamed("self", "self", (2, 3, 6, 6)),
])

# -- MaxPool2dWithIndicesBackward ----------------------------------------------------------------

def _max_pool_grad():
    return dict(grad_output=_z(2, 3, 3, 3), self=_z(2, 3, 6, 6), indices=_z(2, 3, 3, 3, dtype=np.int32),
                kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[1, 1], ceil_mode=False)


_MAX_POOL_GRAD_NAMES = {"grad_output": "gradOutput", "self": "self", "indices": "indices", "kernel_size": "kernelSize",
                        "stride": "stride", "padding": "padding", "dilation": "dilation"}

MAX_POOL_GRAD = _cases("max_pool2d_with_indices_backward", "aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize",
                       _max_pool_grad, _MAX_POOL_GRAD_NAMES, [
    *(null({arg: None}) for arg in _MAX_POOL_GRAD_NAMES),
    bad(dict(self=_z(2, 3, 6, 6, dtype=np.float16), grad_output=_z(2, 3, 3, 3, dtype=np.float16)), "self", "FLOAT16"),
    bad(dict(self=_z(2, 3, 6, 6, dtype=bfloat16), grad_output=_z(2, 3, 3, 3, dtype=bfloat16)), "self", "BFLOAT16"),
    bad(dict(grad_output=_z(2, 3, 3, 3, dtype=np.float16)), "gradOutput", "self"),
    bad(dict(indices=_z(2, 3, 3, 3, dtype=np.int64)), "indices", "INT64"),
    bad(dict(indices=_z(2, 3, 3, 3)), "indices", "FLOAT"),
    bad(dict(grad_output=_z(3, 3, 3)), "gradOutput", "one format"),
    bad(dict(self=_z(3, 6, 6), grad_output=_z(3, 3, 3), indices=_z(6, 6, dtype=np.int32)), "indices", "3-D or 4-D"),
    bad(dict(self=_z(1, 2, 3, 6, 6), grad_output=_z(1, 2, 3, 3, 3)), "self", "3-D or 4-D"),
    bad(dict(kernel_size=[3, 3, 3]), "kernelSize"),
    bad(dict(stride=[0]), "stride", "> 0"),
    bad(dict(padding=[2]), "padding", "kernelSize / 2"),
    bad(dict(dilation=[2]), "dilation", "Atlas A2/A3"),
    bad(dict(self=_z(2, 3, 0, 6), grad_output=_z(2, 3, 0, 3)), "self", "must not be 0"),
    bad(dict(grad_output=_z(2, 3, 3, 4), indices=_z(2, 3, 3, 4, dtype=np.int32)), "gradOutput", "pooled size"),
    bad(dict(grad_output=_z(2, 2, 3, 3), indices=_z(2, 2, 3, 3, dtype=np.int32)), "gradOutput", "pooled size"),
    bad(dict(ceil_mode=True), "gradOutput", "[2, 3, 4, 4]"),                # ceil mode pools 6 to 4
    bad(dict(indices=_z(2, 3, 3, 2, dtype=np.int32)), "indices", "gradOutput"),
    # the first violation decides
    bad(dict(indices=_z(2, 3, 3, 2, dtype=np.int64)), "indices", "INT64", absent=("shape",)),
    bad(dict(padding=[2], grad_output=_z(2, 3, 4, 4)), "padding", absent=("gradOutput",)),
    device_fault(dict(indices=np.full((2, 3, 3, 3), 36, np.int32)), "indices[0, 0, 0, 0] = 36", "[0, 36)",
                 id="index 36 of a 6x6 plane"),
    wrong_type(dict(kernel_size=[3.0, 3])),
    wrong_type(dict(indices=[[0]])),
    *unnamed("grad_output", "gradOutput", (2, 3, 3, 3)),
])

# -- NLLLoss, NLLLossBackward ---------------------------------------------------------------------

def _nll():
    return dict(self=_z(4, 3), target=np.array([0, 2, 1, 2]), weight=np.ones(3, np.float32), reduction=1,
                ignore_index=-100)


_NLL_NAMES = {"self": "self", "target": "target", "weight": "weight", "reduction": "reduction",
              "ignore_index": "ignoreIndex"}

NLL_LOSS = _cases("nll_loss", "aclnnNLLLossGetWorkspaceSize", _nll, _NLL_NAMES, [
    *(null({arg: None}) for arg in ("self", "target", "weight")),
    bad(dict(weight=np.ones(3, np.float16)), "weight", "self"),
    bad(dict(self=_z(4, 3, dtype=np.float64), weight=np.ones(3)), "self", "DOUBLE"),
    bad(dict(self=_z(4, 3, dtype=np.int32), weight=np.ones(3, np.int32)), "self", "INT32"),
    bad(dict(target=np.array([0, 2, 1, 2], np.int16)), "target", "INT16"),
    bad(dict(target=np.array([0.0, 2, 1, 2], np.float32)), "target", "FLOAT"),
    bad(dict(reduction=3), "reduction"),
    bad(dict(reduction=-1), "reduction"),
    bad(dict(self=_z(2, 2, 3), target=np.zeros((2, 2), np.int64)), "self", "3-D"),
    bad(dict(self=_z(3), target=np.zeros((1, 1), np.int64)), "target", "2-D"),
    bad(dict(target=np.array([0, 2, 1])), "target", "[4]"),
    bad(dict(target=np.asarray(0)), "target"),
    bad(dict(self=_z(3), target=np.array([0])), "target", "0-D"),
    bad(dict(weight=np.ones(4, np.float32)), "weight", "C = 3"),
    bad(dict(weight=np.ones((1, 3), np.float32)), "weight"),
    bad(dict(self=_z(4, 0), weight=np.ones(0, np.float32)), "C = 0"),
    # the first violation decides
    bad(dict(weight=np.ones(3, np.float16), reduction=5), "weight", absent=("reduction",)),
    bad(dict(target=np.zeros(4, np.int8), reduction=5), "target", absent=("reduction",)),
    bad(dict(reduction=5, self=_z(2, 2, 3)), "reduction", absent=("self",)),
    # Python types
    wrong_type(dict(reduction=1.0)),
    wrong_type(dict(ignore_index="x")),
    wrong_type(dict(self=[[0.0]])),
    bad(dict(reduction=2**63), "reduction", "int64"),
    *unnamed("target", "target", (4,)),
    # target values: not checked by CANN's phase 1; the device faults (ops/_nll.py)
    *(device_fault(dict(target=np.array([0, 2, bad, 2], dtype)), f"target[2] = {bad} is outside [0, 3)",
                   "nothing was written", id=f"target[2]={bad}:{np.dtype(dtype)}")
      for bad, dtype in ((3, np.int64), (-1, np.int64), (-101, np.int32), (255, np.uint8))),
    device_fault(dict(self=_z(3), target=np.asarray(5), reduction=0), "target = 5 is outside [0, 3)",
                 id="1-D:target=5"),
    device_fault(dict(target=np.array([0, 3, 1, 2]), ignore_index=2), "target[1] = 3", "ignoreIndex (2)",
                 id="target[1]=3:ignore2"),
])


def _nll_grad():
    return dict(grad_output=np.ones((), np.float32), self=_z(4, 3), target=np.array([0, 2, 1, 2]),
                weight=np.ones(3, np.float32), reduction=1, ignore_index=-100, total_weight=np.ones((), np.float32))


_NLL_GRAD_NAMES = {"grad_output": "gradOutput", "self": "self", "target": "target", "weight": "weight",
                   "reduction": "reduction", "ignore_index": "ignoreIndex", "total_weight": "totalWeight"}

NLL_LOSS_BACKWARD = _cases("nll_loss_backward", "aclnnNLLLossBackwardGetWorkspaceSize", _nll_grad,
                           _NLL_GRAD_NAMES, [
    *(null({arg: None}) for arg in ("grad_output", "self", "target", "weight", "total_weight")),
    bad(dict(weight=np.ones(3, np.float16)), "weight", "self"),
    bad(dict(grad_output=np.ones((), np.float16)), "gradOutput", "self"),
    bad(dict(total_weight=np.ones((), bfloat16)), "totalWeight", "self"),
    bad(dict(self=_z(4, 3, dtype=np.float64), weight=np.ones(3), grad_output=np.ones(()),
             total_weight=np.ones(())), "self", "DOUBLE"),
    bad(dict(target=np.array([0, 2, 1, 2], np.uint16)), "target", "UINT16"),
    bad(dict(reduction=3), "reduction"),
    bad(dict(self=_z(1, 4, 3)), "self", "3-D"),
    bad(dict(target=np.zeros((4, 1), np.int64)), "target", "2-D"),
    bad(dict(target=np.array([0, 1, 2])), "target", "first dim"),
    bad(dict(target=np.asarray(0)), "target", "first dim"),
    bad(dict(weight=np.ones(2, np.float32)), "weight", "C = 3"),
    bad(dict(total_weight=np.ones(2, np.float32)), "totalWeight", "one element"),
    bad(dict(reduction=0), "gradOutput", "[4]"),
    bad(dict(reduction=0, grad_output=np.ones(3, np.float32)), "gradOutput", "[4]"),
    bad(dict(grad_output=np.ones(2, np.float32)), "gradOutput", "one element"),
    bad(dict(grad_output=np.ones((1, 1), np.float32)), "gradOutput", "one element"),
    # the first violation decides
    bad(dict(grad_output=np.ones((), np.float16), reduction=7), "gradOutput", absent=("reduction",)),
    bad(dict(reduction=7, target=np.array([0])), "reduction", absent=("target's",)),
    bad(dict(weight=np.ones(2, np.float32), total_weight=np.ones(2, np.float32)), "weight",
        absent=("totalWeight",)),
    wrong_type(dict(reduction=None)),
    wrong_type(dict(total_weight=1.0)),
    *unnamed("total_weight", "totalWeight", ()),
    device_fault(dict(target=np.array([0, 2, 3, 2])), "target[2] = 3 is outside [0, 3)", "nothing was written",
                 id="target[2]=3"),
    device_fault(dict(target=np.array([0, -5, 1, 2], np.int32), reduction=0, grad_output=np.ones(4, np.float32)),
                 "target[1] = -5", id="none:target[1]=-5"),
])

# -- Mm, Addmm, Matmul, BatchMatMul --------------------------------------------------------------

_CUBE_WORDS = ("cubeMathType", "USE_FP32_ADD")


def _mm():
    return dict(self=_z(4, 3), mat2=_z(3, 5), cube_math_type=0)


MM = _cases("mm", "aclnnMmGetWorkspaceSize", _mm, {"self": "self", "mat2": "mat2", "cube_math_type": "cubeMathType"}, [
    null(dict(self=None)),
    null(dict(mat2=None)),
    null(dict(self=None, mat2=None), "self", absent=("mat2",)),
    bad(dict(self=_z(4, 3, dtype=np.float64)), "self", "DOUBLE"),
    bad(dict(mat2=_z(3, 5, dtype=np.int32)), "mat2", "INT32"),
    bad(dict(cube_math_type=5), *_CUBE_WORDS),
    bad(dict(cube_math_type=-2), *_CUBE_WORDS),
    bad(dict(cube_math_type=128), "cubeMathType", "int8"),
    bad(dict(mat2=_z(3)), "mat2", "2-D"),
    bad(dict(self=_z(2, 4, 3)), "self", "2-D"),
    bad(dict(mat2=_z(4, 5)), "K", "[4, 3]", "[4, 5]"),
    # the first violation decides
    bad(dict(self=_z(4, 3, dtype=np.int8), cube_math_type=9), "self", absent=("cubeMathType",)),
    bad(dict(cube_math_type=9, mat2=_z(3)), "cubeMathType", absent=("mat2",)),
    bad(dict(mat2=_z(3), self=_z(3)), "mat2", absent=("self ",)),       # mat2's rank before self's
    wrong_type(dict(cube_math_type=0.0)),
    wrong_type(dict(self=[[1.0]])),
    *unnamed("mat2", "mat2", (3, 5)),
])


def _addmm():
    return dict(self=_z(5), mat1=_z(4, 3), mat2=_z(3, 5), beta=1, alpha=1, cube_math_type=0)


_ADDMM_NAMES = {"self": "self", "mat1": "mat1", "mat2": "mat2", "beta": "beta", "alpha": "alpha",
                "cube_math_type": "cubeMathType"}

ADDMM = _cases("addmm", "aclnnAddmmGetWorkspaceSize", _addmm, _ADDMM_NAMES, [
    *(null({arg: None}) for arg in ("self", "mat1", "mat2", "beta", "alpha")),
    bad(dict(mat1=_z(4, 3, dtype=np.float64)), "mat1", "DOUBLE"),
    bad(dict(mat2=_z(3, 5, dtype=np.int64)), "mat2", "INT64"),
    bad(dict(self=_z(5, dtype=np.int32)), "self", "INT32"),
    bad(dict(cube_math_type=5), *_CUBE_WORDS),
    bad(dict(mat1=_z(3)), "mat1", "2-D"),
    bad(dict(mat2=_z(1, 3, 5)), "mat2", "2-D"),
    bad(dict(mat2=_z(4, 5)), "K", "mat1"),
    bad(dict(self=_z(1, 4, 5)), "self", "1-D or 2-D"),
    bad(dict(self=_z()), "self", "0-D"),
    bad(dict(self=_z(6)), "self", "[4, 5]", "broadcast"),
    bad(dict(self=_z(3, 5)), "self", "broadcast"),
    # passes CANN's symmetric broadcast test, then its final copy fails (561103)
    _Row(dict(self=_z(2, 5), mat1=_z(1, 3)), AclnnError, 561103, ("self [2, 5]", "[1, 5]", "cannot be copied")),
    # beta and alpha: any dtype (read as FLOAT), never checked
    # the first violation decides
    bad(dict(mat1=_z(4, 3, dtype=np.int8), self=_z(2, 2, 2)), "mat1", absent=("self",)),
    bad(dict(cube_math_type=-3, mat1=_z(3)), "cubeMathType", absent=("mat1 ",)),
    bad(dict(mat2=_z(4, 5), self=_z(1, 1, 1)), "K", absent=("self ",)),
    wrong_type(dict(beta="1")),
    wrong_type(dict(alpha=[1.0])),
    wrong_type(dict(mat1=[[0.0]])),
    *unnamed("self", "self", (5,)),
])


def _matmul():
    return dict(self=_z(2, 4, 3), mat2=_z(3, 5), cube_math_type=0)


_MATMUL_NAMES = {"self": "self", "mat2": "mat2", "cube_math_type": "cubeMathType"}

MATMUL = _cases("matmul", "aclnnMatmulGetWorkspaceSize", _matmul, _MATMUL_NAMES, [
    null(dict(self=None)),
    null(dict(mat2=None)),
    bad(dict(self=_z(2, 4, 3, dtype=np.float64)), "self", "DOUBLE"),
    bad(dict(mat2=_z(3, 5, dtype=np.bool_)), "mat2", "BOOL"),
    bad(dict(cube_math_type=5), *_CUBE_WORDS),
    bad(dict(self=_z(1, 1, 1, 1, 1, 4, 3)), "self", "1 to 6 dims", "7-D"),
    bad(dict(mat2=_z(1, 1, 1, 1, 1, 3, 5)), "mat2", "1 to 6 dims"),
    bad(dict(self=_z()), "self", "0-D"),
    bad(dict(mat2=_z()), "mat2", "0-D"),
    bad(dict(mat2=_z(4, 5)), "K", "first dim"),
    bad(dict(mat2=_z(2, 5, 3)), "K", "second-to-last"),
    bad(dict(mat2=_z(4)), "K", "first dim"),
    bad(dict(mat2=_z(3, 3, 5)), "batch dims", "[2, 4, 3]", "[3, 3, 5]"),
    # the first violation decides: rank > 6 of either before a 0-D one
    bad(dict(self=_z(), mat2=_z(1, 1, 1, 1, 1, 3, 5)), "mat2", absent=("self ",)),
    bad(dict(mat2=_z(3, 3, 5), cube_math_type=7), "cubeMathType", absent=("batch",)),
    wrong_type(dict(cube_math_type="0")),
    wrong_type(dict(mat2=3.0)),
    *unnamed("self", "self", (2, 4, 3)),
])


def _bmm():
    return dict(self=_z(2, 4, 3), mat2=_z(2, 3, 5), cube_math_type=0)


BATCH_MAT_MUL = _cases("batch_mat_mul", "aclnnBatchMatMulGetWorkspaceSize", _bmm, _MATMUL_NAMES, [
    null(dict(self=None)),
    null(dict(mat2=None)),
    null(dict(self=None, cube_math_type=4), "self"),                     # 4 is 0 before any check
    bad(dict(self=_z(2, 4, 3, dtype=np.int32)), "self", "INT32"),
    bad(dict(mat2=_z(2, 3, 5, dtype=np.float64)), "mat2", "DOUBLE"),
    bad(dict(cube_math_type=5), *_CUBE_WORDS),
    bad(dict(cube_math_type=-2), *_CUBE_WORDS),
    bad(dict(self=_z(4, 3)), "self", "3-D"),
    bad(dict(mat2=_z(1, 2, 3, 5)), "mat2", "3-D"),
    bad(dict(mat2=_z(2, 4, 5)), "K", "second-to-last"),
    bad(dict(mat2=_z(3, 3, 5)), "batch dims", "[2, 4, 3]", "[3, 3, 5]"),
    _Row(dict(self=_z(1, 4, 0), mat2=_z(2, 0, 5)), AclnnError, 561103, ("K is 0", "batch 1")),
    # the first violation decides
    bad(dict(self=_z(2, 4, 3, dtype=np.int8), cube_math_type=9), "self", absent=("cubeMathType",)),
    bad(dict(self=_z(4, 3), mat2=_z(3, 5)), "self", absent=("mat2",)),
    wrong_type(dict(cube_math_type=None)),
    *unnamed("mat2", "mat2", (2, 3, 5)),
])

# -- InplaceZero, InplaceFillScalar, InplaceCopy --------------------------------------------------

INPLACE_ZERO = _cases("inplace_zero", "aclnnInplaceZeroGetWorkspaceSize", lambda: dict(self_ref=_z(2, 3)),
                      {"self_ref": "selfRef"}, [
    null(dict(self_ref=None)),
    bad(dict(self_ref=_z(2, 3, dtype=np.uint32)), "selfRef", "UINT32"),
    bad(dict(self_ref=_z(2, 3, dtype=ml_dtypes.float8_e5m2)), "selfRef", "FLOAT8_E5M2"),
    wrong_type(dict(self_ref=[0.0]), "selfRef"),
    wrong_type(dict(self_ref=np.broadcast_to(_z(3), (2, 3))), "selfRef", "writable"),
    *unnamed("self_ref", "selfRef", (2, 3)),
])

_FILL_NAMES = {"self_ref": "selfRef", "value": "value"}

INPLACE_FILL_SCALAR = _cases("inplace_fill_scalar", "aclnnInplaceFillScalarGetWorkspaceSize",
                             lambda: dict(self_ref=_z(2, 3), value=1.5), _FILL_NAMES, [
    *(null({arg: None}) for arg in _FILL_NAMES),
    bad(dict(self_ref=_z(2, 3, dtype=ml_dtypes.float8_e4m3fn)), "selfRef", "FLOAT8_E4M3FN"),
    bad(dict(self_ref=_z(2, 3, dtype=np.uint16), value=3), "selfRef", "value", "UINT16", "INT64"),
    bad(dict(self_ref=_z(2, 3, dtype=np.uint32), value=1.0), "selfRef", "value", "UINT32", "DOUBLE"),
    bad(dict(self_ref=_z(2, 3, dtype=np.int8), value=np.uint64(1)), "selfRef", "value", "UINT64"),
    bad(dict(self_ref=_z(2, 3, dtype=ml_dtypes.float8_e4m3fn), value=np.uint64(1)), "selfRef",
        absent=("value",), id="dtype before promotion"),
    wrong_type(dict(value="1")),
    wrong_type(dict(value=[1.0])),
    wrong_type(dict(self_ref=(1.0,)), "selfRef"),
    *unnamed("self_ref", "selfRef", (2, 3)),
])

_COPY_NAMES = {"self_ref": "selfRef", "src": "src"}

INPLACE_COPY = _cases("inplace_copy", "aclnnInplaceCopyGetWorkspaceSize",
                      lambda: dict(self_ref=_z(2, 3, 4), src=_z(3, 1)), _COPY_NAMES, [
    *(null({arg: None}) for arg in _COPY_NAMES),
    bad(dict(self_ref=_z(2, 3, 4, dtype=ml_dtypes.float8_e5m2)), "selfRef", "FLOAT8_E5M2"),
    bad(dict(src=_z(3, 1, dtype=ml_dtypes.float8_e4m3fn)), "src", "FLOAT8_E4M3FN"),
    bad(dict(src=_z(4, 3)), "selfRef", "src", "[2, 3, 4]", "[4, 3]", "broadcast"),
    bad(dict(self_ref=_z(1, 4), src=_z(3, 4)), "src", "selfRef", "must broadcast to"),
    bad(dict(self_ref=_z(2, 3, 4, dtype=ml_dtypes.float8_e5m2), src=_z(5)), "selfRef", absent=("src",)),
    wrong_type(dict(src=3.0)),
    wrong_type(dict(self_ref=np.broadcast_to(_z(4), (2, 3, 4))), "selfRef", "writable"),
    *unnamed("src", "src", (3, 1)),
])

# -- Cat ------------------------------------------------------------------------------------------

def _cat():
    return dict(tensors=[_z(2, 3), _z(1, 3)], dim=0)


CAT = _cases("cat", "aclnnCatGetWorkspaceSize", _cat, {"tensors": "tensors", "dim": "dim"}, [
    null(dict(tensors=None), "tensors"),
    null(dict(tensors=[_z(2, 3), None]), "tensors[1]"),
    bad(dict(tensors=[_z(2, 3, dtype=np.uint16), _z(1, 3)]), "tensors[0]", "UINT16"),
    bad(dict(tensors=[_z(2, 3), _z(1, 3, dtype=np.complex128)]), "tensors[1]", "COMPLEX128"),
    bad(dict(tensors=[_z(2, 3), _z(0), _z(1, 3, dtype=np.uint32)]), "tensors[2]", "UINT32"),
    bad(dict(tensors=[_z(2, 3, dtype=np.complex64), _z(1, 3, dtype=np.float64)]), "out", "COMPLEX128"),
    bad(dict(dim=2), "dim", "[-2, 1]"),
    bad(dict(dim=-3), "dim"),
    bad(dict(tensors=[_z(2, 3), _z(1, 4)]), "tensors[1]", "[1, 4]", "[2, 3]", "dim 0"),
    bad(dict(tensors=[_z(2, 3), _z(3)]), "tensors[1]", "[3]"),
    bad(dict(tensors=[_z(2, 3), _z(1, 3)], dim=5), "dim", absent=("tensors[",)),
    bad(dict(tensors=[_z()]), "dim", "0 dims", id="0-d tensor"),
    wrong_type(dict(tensors=_z(2, 3)), "tensors", "sequence"),
    wrong_type(dict(tensors=[_z(2, 3), "x"]), "tensors[1]"),
    wrong_type(dict(dim=1.0)),
    wrong_type(dict(dim=None)),
])

# -- AdaptiveAvgPool2d ---------------------------------------------------------------------------

def _adaptive():
    return dict(self=_z(2, 3, 6, 6), output_size=[3, 2])


ADAPTIVE = _cases("adaptive_avg_pool2d", "aclnnAdaptiveAvgPool2dGetWorkspaceSize", _adaptive,
                  {"self": "self", "output_size": "outputSize"}, [
    null(dict(self=None)),
    null(dict(output_size=None)),
    bad(dict(self=_z(6, 6)), "self", "3-D or 4-D"),
    bad(dict(self=_z(1, 2, 3, 6, 6)), "self", "3-D or 4-D"),
    bad(dict(self=_z(2, 3, 6, 6, dtype=np.float64)), "self", "DOUBLE"),
    bad(dict(self=_z(2, 3, 6, 6, dtype=np.int32)), "self", "INT32"),
    bad(dict(output_size=[3]), "outputSize", "2 elements"),
    bad(dict(output_size=[3, 2, 1]), "outputSize", "2 elements"),
    bad(dict(output_size=[0, 2]), "outputSize", "> 0"),
    bad(dict(output_size=[3, -2]), "outputSize", "> 0"),
    # the first violation decides
    bad(dict(self=_z(6, 6, dtype=np.float64)), "3-D or 4-D", absent=("DOUBLE",)),
    bad(dict(self=_z(2, 3, 6, 6, dtype=np.float64), output_size=[0]), "DOUBLE", absent=("outputSize",)),
    wrong_type(dict(output_size=[3.0, 2])),
    wrong_type(dict(self=[[0.0]])),
    *unnamed("self", "self", (2, 3, 6, 6)),
])

# -- AdaptiveAvgPool2dBackward -------------------------------------------------------------------

def _adaptive_grad():
    return dict(grad_output=_z(2, 3, 3, 2), self=_z(2, 3, 6, 6))


ADAPTIVE_GRAD = _cases("adaptive_avg_pool2d_backward", "aclnnAdaptiveAvgPool2dBackwardGetWorkspaceSize",
                       _adaptive_grad, {"grad_output": "gradOutput", "self": "self"}, [
    null(dict(grad_output=None)),
    null(dict(self=None)),
    bad(dict(grad_output=_z(3, 3, 2)), "gradOutput", "rank"),
    bad(dict(grad_output=_z(3, 2), self=_z(6, 6)), "out", "3-D or 4-D"),
    bad(dict(grad_output=_z(1, 1, 3, 3, 2), self=_z(1, 1, 3, 6, 6)), "out", "3-D or 4-D"),
    bad(dict(grad_output=_z(2, 4, 3, 2)), "gradOutput", "before H, W"),
    bad(dict(grad_output=_z(1, 3, 3, 2)), "gradOutput", "before H, W"),
    bad(dict(grad_output=_z(2, 3, 3, 2, dtype=np.float64)), "gradOutput", "DOUBLE"),
    bad(dict(self=_z(2, 3, 6, 6, dtype=np.int32)), "self", "INT32"),
    bad(dict(grad_output=_z(2, 3, 3, 2, dtype=np.float16)), "gradOutput", "self"),
    # the first violation decides
    bad(dict(grad_output=_z(2, 4, 3, 2, dtype=np.float64)), "before H, W", absent=("DOUBLE",)),
    wrong_type(dict(grad_output=[[0.0]])),
    *unnamed("self", "self", (2, 3, 6, 6)),
])

def _batch_norm():
    return dict(input=_z(2, 3, 4), weight=None, bias=None, running_mean=None, running_var=None, training=True,
                momentum=0.1, eps=1e-5)


_BATCH_NORM_NAMES = {"input": "input", "weight": "weight", "bias": "bias", "running_mean": "runningMean",
                     "running_var": "runningVar", "training": "training", "momentum": "momentum", "eps": "eps"}

BATCH_NORM = _cases("batch_norm", "aclnnBatchNormGetWorkspaceSize", _batch_norm, _BATCH_NORM_NAMES, [
    null(dict(input=None)),
    bad(dict(input=_z(2, 3, dtype=np.float64)), "input", "DOUBLE"),
    bad(dict(weight=_z(3, dtype=np.int32)), "weight", "INT32"),
    bad(dict(bias=_z(3, dtype=np.float64), weight=_z(4)), "bias", "DOUBLE", absent=("[C]",)),  # dtypes first
    bad(dict(running_var=_z(3, dtype=np.int64), training=False), "runningVar", "INT64"),
    bad(dict(input=_z(5)), "input", "2 to 8", "[5]"),
    bad(dict(weight=_z(4)), "weight", "[C] = [3]", "[4]"),
    bad(dict(running_mean=_z(3, 1), training=False), "runningMean", "[C] = [3]", "[3, 1]"),
    bad(dict(bias=_z(3), running_var=_z(2)), "runningVar", "[2]"),
    wrong_type(dict(training="yes")),
    wrong_type(dict(momentum="0.1")),
    wrong_type(dict(eps=None)),
    wrong_type(dict(input=[[1.0]])),
    wrong_type(dict(input=None, training=1), "training"),  # Python types before NULLs
    *unnamed("input", "input", (2, 3)),
])

def _batch_norm_backward():
    return dict(grad_out=_z(2, 3, 4), input=_z(2, 3, 4), weight=None, running_mean=None, running_var=None,
                save_mean=None, save_invstd=None, training=True, eps=1e-5, output_mask=[True, True, True])


_BATCH_NORM_BACKWARD_NAMES = {"grad_out": "gradOut", "input": "input", "weight": "weight",
                              "running_mean": "runningMean", "running_var": "runningVar", "save_mean": "saveMean",
                              "save_invstd": "saveInvstd", "training": "training", "eps": "eps",
                              "output_mask": "outputMask"}

BATCH_NORM_BACKWARD = _cases("batch_norm_backward", "aclnnBatchNormBackwardGetWorkspaceSize", _batch_norm_backward,
                             _BATCH_NORM_BACKWARD_NAMES, [
    null(dict(grad_out=None)),
    null(dict(input=None)),
    null(dict(output_mask=None)),
    null(dict(output_mask=[]), "outputMask", "empty"),
    bad(dict(output_mask=[True, True]), "outputMask", "3 elements"),
    bad(dict(output_mask=[True, True, True, False]), "outputMask", "3 elements"),
    bad(dict(grad_out=_z(2, 3, 4, dtype=np.float64), input=_z(2, 3, 4, dtype=np.float64)), "gradOut", "DOUBLE"),
    bad(dict(input=_z(2, 3, 4, dtype=np.float16)), "gradOut", "input", "FLOAT16"),
    bad(dict(save_invstd=_z(3, dtype=np.int32)), "saveInvstd", "INT32"),
    bad(dict(weight=_z(3, dtype=np.float64), save_mean=_z(4)), "weight", "DOUBLE"),
    bad(dict(grad_out=_z(5), input=_z(5)), "input", "2 to 8"),
    bad(dict(grad_out=_z(2, 3, 5)), "gradOut", "input", "[2, 3, 5]"),
    bad(dict(running_var=_z(4), training=False), "runningVar", "[C] = [3]", "[4]"),
    bad(dict(save_mean=_z(3, 1)), "saveMean", "[C] = [3]"),
    bad(dict(save_invstd=_z(2)), "saveInvstd", "[2]"),
    wrong_type(dict(output_mask=[1, 0, 1])),
    wrong_type(dict(output_mask="yes")),
    wrong_type(dict(training=None)),
    wrong_type(dict(eps="1e-5")),
    *unnamed("grad_out", "gradOut", (2, 3)),
])

def _softmax():
    return dict(self=_z(2, 3), dim=1)


SOFTMAX = _cases("softmax", "aclnnSoftmaxGetWorkspaceSize", _softmax, {"self": "self", "dim": "dim"}, [
    null(dict(self=None)),
    bad(dict(self=_z(2, 3, dtype=np.int32)), "self", "INT32"),
    bad(dict(dim=2), "dim", "[-2, 1]", "rank 2"),
    bad(dict(dim=-3), "dim", "[-2, 1]"),
    bad(dict(self=_z(2, 3, dtype=np.int32), dim=5), "self", absent=("dim",)),  # dtypes before dim
    bad(dict(self=np.zeros(()), dim=1), "dim", "[-1, 0]"),
    wrong_type(dict(dim=1.0)),
    wrong_type(dict(dim="1")),
    wrong_type(dict(self=[1.0])),
    *unnamed("self", "self", (2, 3)),
])

LOG_SOFTMAX = _cases("log_softmax", "aclnnLogSoftmaxGetWorkspaceSize", _softmax, {"self": "self", "dim": "dim"}, [
    null(dict(self=None)),
    bad(dict(self=_z(2, 3, dtype=np.int64)), "self", "INT64"),
    bad(dict(dim=2), "dim", "[-2, 1]", "rank 2"),
    bad(dict(self=_z(2, 3, dtype=np.int32), dim=5), "dim", absent=("INT32",)),  # dim before the dtypes
    bad(dict(self=_z(0, 3), dim=4), "dim"),  # the empty shortcut comes last
    wrong_type(dict(dim=None)),
    *unnamed("self", "self", (2, 3)),
])


def _softmax_backward():
    return dict(grad_output=_z(2, 3), output=_z(2, 3), dim=-1)


_SOFTMAX_BACKWARD_NAMES = {"grad_output": "gradOutput", "output": "output", "dim": "dim"}

SOFTMAX_BACKWARD = _cases("softmax_backward", "aclnnSoftmaxBackwardGetWorkspaceSize", _softmax_backward,
                          _SOFTMAX_BACKWARD_NAMES, [
    null(dict(grad_output=None)),
    null(dict(output=None)),
    null(dict(grad_output=None, output=None), "gradOutput", absent=("output",)),
    bad(dict(grad_output=_z(2, 3, dtype=np.float64), output=_z(2, 3, dtype=np.float64)), "gradOutput", "DOUBLE"),
    bad(dict(output=_z(2, 3, dtype=np.float16)), "output", "gradOutput", "FLOAT16"),
    bad(dict(dim=2), "dim", "gradOutput"),
    bad(dict(output=_z(3, 2), dim=7), "dim", absent=("shape",)),  # dim before the shapes
    bad(dict(output=_z(3, 2)), "output", "gradOutput", "[3, 2]"),
    wrong_type(dict(dim=[1])),
    *unnamed("output", "output", (2, 3)),
])

LOG_SOFTMAX_BACKWARD = _cases("log_softmax_backward", "aclnnLogSoftmaxBackwardGetWorkspaceSize", _softmax_backward,
                              _SOFTMAX_BACKWARD_NAMES, [
    null(dict(grad_output=None)),
    null(dict(output=None)),
    null(dict(grad_output=None, output=None), "output", absent=("gradOutput",)),  # output first
    bad(dict(grad_output=_z(2, 3, dtype=np.float64), output=_z(2, 3, dtype=np.float64)), "output", "DOUBLE"),
    bad(dict(grad_output=_z(2, 3, dtype=bfloat16)), "gradOutput", "output", "BFLOAT16"),
    bad(dict(output=_z(3, 2), dim=7), "output", "[3, 2]", absent=("dim",)),  # the shapes before dim
    bad(dict(dim=-3), "dim", "[-2, 1]", "gradOutput"),
    bad(dict(dim=2), "dim"),
    wrong_type(dict(dim=True)),
    *unnamed("grad_output", "gradOutput", (2, 3)),
])

def _reduce_sum():
    return dict(self=_z(2, 3, 4), dims=[1], keep_dims=False, dtype=np.float32)


_REDUCE_SUM_NAMES = {"self": "self", "dims": "dims", "keep_dims": "keepDims", "dtype": "dtype"}

REDUCE_SUM = _cases("reduce_sum", "aclnnReduceSumGetWorkspaceSize", _reduce_sum, _REDUCE_SUM_NAMES, [
    null(dict(self=None)),
    null(dict(dims=None)),
    bad(dict(self=_z(2, 3, 4, dtype=np.uint16)), "self", "UINT16"),
    bad(dict(dtype=np.uint32), "dtype", "UINT32"),
    bad(dict(dtype=aclDataType.ACL_INT4), "dtype", "INT4"),
    bad(dict(dims=[3]), "dims", "[-3, 2]", "[3]"),
    bad(dict(dims=[-4, 0]), "dims", "-4"),
    bad(dict(dims=[1, -2]), "dims", "twice", "[1, -2]"),
    bad(dict(self=_z(0, 3, dtype=np.float32), dims=[1], dtype=np.complex64), "complex", "empty"),
    bad(dict(self=_z(2, 3, dtype=np.uint16), dims=[5]), "self", absent=("dims",)),  # dtypes before dims
    wrong_type(dict(dims=1)),
    wrong_type(dict(dims=[1.0])),
    wrong_type(dict(keep_dims="no")),
    wrong_type(dict(dtype="not a dtype")),
    *unnamed("self", "self", (2, 3)),
])

def _mean():
    return dict(self=_z(2, 3, 4), dim=[1], keep_dim=False, dtype=np.float32)


_MEAN_NAMES = {"self": "self", "dim": "dim", "keep_dim": "keepDim", "dtype": "dtype"}

MEAN = _cases("mean", "aclnnMeanGetWorkspaceSize", _mean, _MEAN_NAMES, [
    null(dict(self=None)),
    null(dict(dim=None)),
    bad(dict(self=_z(2, 3, 4, dtype=np.bool_)), "self", "BOOL"),
    bad(dict(dtype=np.bool_), "dtype", "BOOL"),
    bad(dict(dtype=np.int32), "self", "FLOAT", "INT32", "cannot be cast"),
    bad(dict(self=_z(2, 3, 4, dtype=np.complex64), dtype=np.float32), "COMPLEX64", "cannot be cast"),
    bad(dict(dim=[3]), "dim", "[-3, 2]"),
    bad(dict(dim=[0, -3]), "dim", "twice"),
    bad(dict(dtype=np.int32, dim=[9]), "self", absent=("twice", "range")),  # the casts before dim
    wrong_type(dict(dim=(1.5,))),
    wrong_type(dict(keep_dim=None)),
    wrong_type(dict(dtype=None)),
    *unnamed("self", "self", (2, 3)),
])

# -- AvgPool2d -----------------------------------------------------------------------------------

def _avg_fwd():
    return dict(self=_z(2, 3, 6, 6), kernel_size=[3, 3], strides=[2, 2], paddings=[1, 1], ceil_mode=False,
                count_include_pad=True, divisor_override=0, cube_math_type=0)


_AVG_FWD_NAMES = {"self": "self", "kernel_size": "kernelSize", "strides": "strides", "paddings": "paddings"}

AVG_FWD = _cases("avg_pool2d", "aclnnAvgPool2dGetWorkspaceSize", _avg_fwd, _AVG_FWD_NAMES, [
    *(null({arg: None}) for arg in _AVG_FWD_NAMES),
    bad(dict(self=_z(2, 3, 6, 6, dtype=np.float64)), "self", "DOUBLE"),
    bad(dict(self=_z(6, 6)), "self", "3-D or 4-D", "ND"),
    bad(dict(kernel_size=[0, 3]), "kernelSize", "> 0"),
    bad(dict(strides=[-1]), "strides", "> 0"),
    bad(dict(paddings=[-1]), "paddings", ">= 0"),
    bad(dict(self=_z(2, 0, 6, 6)), "self", "must not be 0"),
    bad(dict(kernel_size=[]), "kernelSize", "at least 1"),
    bad(dict(paddings=[1, 1, 1]), "paddings", "1 or 2"),
    bad(dict(strides=[2, 2, 2]), "strides", "0, 1 or 2"),
    bad(dict(paddings=[2, 1]), "paddings", "kernelSize / 2"),
    bad(dict(self=_z(2, 3, 6, 1), kernel_size=[3, 6], paddings=[1, 0], strides=[1, 1]), "outH and outW"),
    bad(dict(strides=[2**63 - 1]), "overflows int64"),
    bad(dict(cube_math_type=5), "cubeMathType", "[0, 4]"),
    bad(dict(cube_math_type=1), "cubeMathType 1", "Atlas A2/A3"),                 # the cube path
    bad(dict(cube_math_type=3, kernel_size=[6], strides=[6], paddings=[0]), "cubeMathType 3"),  # the global path
    # the first violation decides
    bad(dict(self=_z(6, 6), kernel_size=[0]), "self", absent=("kernelSize",)),
    bad(dict(paddings=[2], cube_math_type=9), "paddings", absent=("cubeMathType",)),
    wrong_type(dict(kernel_size=[3.0])),
    wrong_type(dict(ceil_mode=None), "ceilMode"),
    wrong_type(dict(cube_math_type=1.5), "cubeMathType"),
    *unnamed("self", "self", (2, 3, 6, 6)),
])

# -- UpsampleNearest2d ---------------------------------------------------------------------------

def _nearest():
    return dict(self=_z(2, 3, 4, 5), output_size=[8, 10])


NEAREST = _cases("upsample_nearest2d", "aclnnUpsampleNearest2dGetWorkspaceSize", _nearest,
                 {"self": "self", "output_size": "outputSize"}, [
    null(dict(self=None)),
    null(dict(output_size=None)),
    bad(dict(self=_z(2, 3, 4, 5, dtype=np.int32)), "self", "INT32"),
    bad(dict(self=_z(2, 3, 4, 5, dtype=np.int8)), "self", "INT8"),
    bad(dict(output_size=[8]), "outputSize", "2 elements"),
    bad(dict(self=_z(3, 4, 5)), "self", "4-D"),
    bad(dict(self=_z(2, 3, 0, 5)), "self", "H and W"),
    bad(dict(output_size=[0, 10]), "outputSize", "not be 0"),
    bad(dict(self=_z(2, 0, 4, 5)), "self", "C must not be 0"),
    bad(dict(output_size=[8, -10]), "out H, W", "outputSize"),
    bad(dict(output_size=[2**31, 10]), "2147483647"),
    # (an out of 2 x 3 x (2^31 - 1) x 2^20 FLOAT: refused before anything is made; the numpy
    # backend had made its 16 GB of row indices first, found by scripts/fuzz.py --seed 2914)
    no_memory(dict(output_size=[2**31 - 1, 2**20]), "out of device memory", differs=_MEMORY_WORDS,
              id="out beyond the device"),
    # the first violation decides
    bad(dict(self=_z(3, 4, 5), output_size=[8]), "outputSize", absent=("4-D",)),
    bad(dict(self=_z(2, 0, 4, 5), output_size=[0, 1]), "outputSize", absent=("C must",)),
    wrong_type(dict(output_size=[8.0, 10])),
    wrong_type(dict(self=[[0.0]])),
    *unnamed("self", "self", (2, 3, 4, 5)),
])

# -- UpsampleNearest2dBackward -------------------------------------------------------------------

def _nearest_grad():
    return dict(grad_out=_z(2, 3, 8, 10), output_size=[8, 10], input_size=[2, 3, 4, 5], scales_h=0.0, scales_w=0.0)


NEAREST_GRAD = _cases("upsample_nearest2d_backward", "aclnnUpsampleNearest2dBackwardGetWorkspaceSize",
                      _nearest_grad, {"grad_out": "gradOut", "output_size": "outputSize", "input_size": "inputSize"}, [
    null(dict(grad_out=None)),
    null(dict(output_size=None)),
    null(dict(input_size=None)),
    bad(dict(grad_out=_z(2, 3, 8, 10, dtype=np.float64)), "gradOut", "DOUBLE"),
    bad(dict(grad_out=_z(3, 8, 10)), "gradOut", "4-D"),
    bad(dict(output_size=[8]), "outputSize", "2 elements"),
    bad(dict(input_size=[4, 5]), "inputSize", "4 elements"),
    bad(dict(input_size=[2, 4, 4, 5]), "gradInput", "N and C"),
    bad(dict(input_size=[2, 3, 0, 5]), "inputSize", "> 0"),
    bad(dict(output_size=[8, -10]), "outputSize", "> 0"),
    bad(dict(output_size=[8, 9]), "gradOut shape", "[2, 3, 8, 9]"),
    # the first violation decides
    bad(dict(grad_out=_z(2, 3, 8, 10, dtype=np.int32), output_size=[8]), "gradOut", absent=("outputSize",)),
    bad(dict(input_size=[2, 3, 0, 5], output_size=[8, 9]), "inputSize", absent=("gradOut shape",)),
    wrong_type(dict(scales_h="2"), "scalesH"),
    wrong_type(dict(scales_w=True), "scalesW"),
    wrong_type(dict(input_size=[2.0, 3, 4, 5])),
    *unnamed("grad_out", "gradOut", (2, 3, 8, 10)),
])


#: Every table above, in the order defined (each operator's ``_cases(...)`` is one module-level
#: list of ``Invalid``: a new operator's table joins without an edit here).
CASES: list[Invalid] = [case for table in list(globals().values())
                        if isinstance(table, list) and table and all(isinstance(c, Invalid) for c in table)
                        for case in table]
