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

CASES: list[Invalid] = IM2COL + MAX_UNPOOL + REFLECTION_PAD + AVG_POOL + CONVOLUTION + CONVOLUTION_FORWARD + REFLECTION_PAD_FORWARD + MAX_UNPOOL_FORWARD + IM2COL_FORWARD + ADD + MUL + ADDS + MULS + RELU + THRESHOLD_BACKWARD + CAST
