"""Elementwise arithmetic as CANN does it, for the numpy backend: type promotion, cast legality,
broadcasting, the tensor-scalar rules, and the computation itself (Add, Adds, Mul, Muls, ...).

The facts follow CANN's opbase (``op::PromoteType``, ``op::CanCast``, ``BroadcastInferShape``)
and each operator's ``op_api`` source; the simulator's C (``sim/src/ops/elementwise.c``) holds
the same promotion table, which ``tests/ops/test_elementwise.py`` reads back from its text and
compares with ``PROMOTION`` below, entry by entry.

A computation runs in the promoted dtype: the inputs are first converted to it (an INT32
2049 with a FLOAT16 becomes 2048), the result is rounded to it once, and then converted to
the output's dtype. FLOAT16 and BFLOAT16 are computed in FLOAT and rounded once (PyTorch's
CPU does the same); integers wrap modulo 2^bits, as the device's integer units do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .._dtypes import bfloat16, compute_dtype
from . import half as half_float
from . import ufunc_buffer, workers
from .workers import over_parts

# -- promotion (op::PromoteType) ---------------------------------------------------------------

#: The dtypes of the promotion table, in its row and column order.
PROMOTED = (np.dtype(np.float32), np.dtype(np.float16), bfloat16, np.dtype(np.float64), np.dtype(np.int8),
            np.dtype(np.uint8), np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.bool_),
            np.dtype(np.complex64), np.dtype(np.complex128))

_ABBREVIATION = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16), "bf16": bfloat16,
                 "f64": np.dtype(np.float64), "s8": np.dtype(np.int8), "u8": np.dtype(np.uint8),
                 "s16": np.dtype(np.int16), "s32": np.dtype(np.int32), "s64": np.dtype(np.int64),
                 "bool": np.dtype(np.bool_), "c64": np.dtype(np.complex64), "c128": np.dtype(np.complex128)}

# PyTorch's category promotion (f16 with s64 is f16; bf16 with f16 is f32), not NumPy's.
# Rows and columns in PROMOTED's order; the table is symmetric.
_TABLE = """
f32  f32  f32  f64  f32  f32  f32  f32  f32  f32  c64  c128
f32  f16  f32  f64  f16  f16  f16  f16  f16  f16  c64  c128
f32  f32  bf16 f64  bf16 bf16 bf16 bf16 bf16 bf16 c64  c128
f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  c128 c128
f32  f16  bf16 f64  s8   s16  s16  s32  s64  s8   c64  c128
f32  f16  bf16 f64  s16  u8   s16  s32  s64  u8   c64  c128
f32  f16  bf16 f64  s16  s16  s16  s32  s64  s16  c64  c128
f32  f16  bf16 f64  s32  s32  s32  s32  s64  s32  c64  c128
f32  f16  bf16 f64  s64  s64  s64  s64  s64  s64  c64  c128
f32  f16  bf16 f64  s8   u8   s16  s32  s64  bool c64  c128
c64  c64  c64  c128 c64  c64  c64  c64  c64  c64  c64  c128
c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
"""

#: {(a, b): the promoted dtype}; a pair absent from it does not promote (DT_UNDEFINED), except
#: that every dtype promotes with itself.
PROMOTION: dict[tuple[np.dtype, np.dtype], np.dtype] = {
    (a, b): _ABBREVIATION[cell]
    for a, row in zip(PROMOTED, _TABLE.split("\n")[1:-1]) for b, cell in zip(PROMOTED, row.split())}


def promote(a: np.dtype, b: np.dtype) -> np.dtype | None:
    """``op::PromoteType(a, b)``, or None where CANN's is DT_UNDEFINED."""
    if a == b:
        return a
    return PROMOTION.get((a, b))


def is_complex(dtype: np.dtype) -> bool:
    return dtype.kind == "c"


def is_floating(dtype: np.dtype) -> bool:
    """FLOAT, FLOAT16, BFLOAT16, DOUBLE and the FP8 types (ml_dtypes' kind is "V")."""
    return dtype.kind == "f" or (dtype.kind == "V" and dtype.itemsize <= 2)


def is_integral(dtype: np.dtype) -> bool:
    """The integer types (not BOOL)."""
    return dtype.kind in "iu"


def can_cast(source: np.dtype, target: np.dtype) -> bool:
    """``op::CanCast``: refused are complex to non-complex, floating to integer, and anything
    but BOOL to BOOL."""
    if is_complex(source) and not is_complex(target):
        return False
    if is_floating(source) and is_integral(target):
        return False
    return not (source != np.bool_ and target == np.bool_)


# -- tensor and scalar -----------------------------------------------------------------------

def scalar_promote(self: np.dtype, other: np.dtype, out: np.dtype, *, bf16_as_float: bool) -> np.dtype | None:
    """The dtype a tensor ``self`` and a scalar ``other`` are computed in on A2/A3: Adds'
    ``PromoteTypeScalar`` or, with ``bf16_as_float``, Muls' ``InferTensorScalarDtype`` (whose
    BFLOAT16 self and BOOL self with a DOUBLE scalar give FLOAT); the first rule that applies:

    1. either is complex: ``promote``;
    2. self is floating: self's dtype (BFLOAT16 gives FLOAT for Muls);
    3. a DOUBLE scalar with a FLOAT ``out`` (Muls: or a BOOL self) gives FLOAT;
    4. a floating scalar, or a BOOL self: ``promote``;
    5. self's dtype (an INT32 tensor with an INT64 scalar stays INT32).
    """
    if is_complex(self) or is_complex(other):
        return promote(self, other)
    if is_floating(self):
        return np.dtype(np.float32) if bf16_as_float and self == bfloat16 else self
    if other == np.float64 and (out == np.float32 or (bf16_as_float and self == np.bool_)):
        return np.dtype(np.float32)
    if is_floating(other) or self == np.bool_:
        return promote(self, other)
    return self


def result_dtype_with_scalar(self: np.dtype, other: np.dtype, *, bf16_as_float: bool) -> np.dtype | None:
    """The dtype of the output a typed function makes for a tensor and a scalar: the computed
    dtype, with an integer or BOOL self and a DOUBLE scalar made FLOAT (CANN computes in FLOAT
    for a FLOAT out, as PyTorch gives FLOAT for an integer tensor and a Python float);
    BFLOAT16 self keeps its dtype."""
    if self == bfloat16 and not is_complex(other):
        return self
    computed = scalar_promote(self, other, self, bf16_as_float=bf16_as_float)
    if computed == np.float64 and other == np.float64 and not is_floating(self):
        return np.dtype(np.float32)
    return computed


def scalar_as(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """An aclScalar's value (a 0-d array) converted to ``dtype`` as C's ``static_cast`` does
    (opbase's ``aclScalar::To``): a floating value to BOOL is ``|v| >= FLT_EPSILON``; an
    integer narrows modulo 2^bits."""
    if dtype == np.bool_ and value.dtype.kind in "fcV":
        return np.asarray(abs(complex(value.item())) >= float(np.finfo(np.float32).eps))
    if dtype.itemsize == 2 and is_floating(dtype) and value.dtype.itemsize > 4:
        value = value.astype(np.float64).astype(np.float32)  # (through float, as C's conversion)
    with np.errstate(all="ignore"):
        return np.asarray(value.astype(np.int64) if value.dtype == np.bool_ else value).astype(dtype)


# -- conversion (Cast) -------------------------------------------------------------------------

_INT64_MAX, _INT64_MIN = np.int64(2**63 - 1), np.int64(-(2**63))


def convert(a: np.ndarray, to: np.dtype) -> np.ndarray:
    """``a`` converted to ``to`` as the simulator's Cast converts (``aclsim_ew_convert``): a
    complex to a real type keeps the real part; a floating value to an integer truncates toward
    zero, NaN to 0, saturated to INT64 and then wrapped to the width; to BOOL is "non-zero"
    (either part of a complex); integers narrow modulo 2^bits; integers go to floating types
    through DOUBLE, and everything to FLOAT16/BFLOAT16 through DOUBLE and FLOAT.

    A new array (see ``convert_into``)."""
    result = np.empty(a.shape, to)
    convert_into(result, a)
    return result


def convert_into(out: np.ndarray, a: np.ndarray) -> None:
    """``convert(a, out.dtype)`` written into ``out`` (``a`` broadcasts to its shape and does
    not overlap it); a large one converted in parts on the worker threads (``over_parts``:
    NumPy's FLOAT to FLOAT16 conversion, ~5 ns an element here, is not memory-bound), FLOAT to
    FLOAT16 as ``half.float_to_half`` (NumPy's bits, ~2x faster; a contiguous one by
    ``half.convert``, its workers by NumPy's cast)."""
    source, to = a.dtype, out.dtype
    half = source == np.float32 and to == np.float16
    direct = source == to or (is_floating(source) and is_floating(to) and source.itemsize <= 4) or (
        source.kind in "iub" and to.kind in "iub")

    if half and _contiguous_pair(out, a):  # (NumPy's cast's bits, in SIMD passes)
        with np.errstate(all="ignore"):
            half_float.convert(out, a)
        return

    def part(r: np.ndarray, x: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            if half and _contiguous_pair(r, x):  # (a part of a broadcast source's conversion)
                half_float.float_to_half(r, x)
            elif direct:  # (NumPy's own cast: through double changes nothing for these)
                np.copyto(r, x, casting="unsafe")
            else:
                np.copyto(r, _converted(x, to), casting="unsafe")

    over_parts(part, out, a)


def _contiguous_pair(r: np.ndarray, x: np.ndarray) -> bool:
    """Whether ``half.float_to_half`` takes ``x`` into ``r``: both C-contiguous, of one shape
    (not broadcast)."""
    return r.shape == x.shape and r.flags.c_contiguous and x.flags.c_contiguous


def _converted(a: np.ndarray, to: np.dtype) -> np.ndarray:
    """``convert``'s value of ``a``, a new array of ``to``, for the conversions that are not
    NumPy's own cast."""
    source = a.dtype
    with np.errstate(all="ignore"):
        if to == np.bool_:
            return a.astype(np.bool_)
        if is_complex(to):
            return (a.astype(np.float64) if source.kind in "iub" else a).astype(to)
        if is_floating(to):
            real = np.real(a) if is_complex(source) else a
            if is_floating(real.dtype) and real.dtype.itemsize <= 4:
                return real.astype(to)  # (through double changes nothing for these)
            wide = real.astype(np.float64)
            return wide.astype(np.float32).astype(to) if to.itemsize == 2 else wide.astype(to)
        # (an integer or BOOL to an integer is NumPy's own cast: convert_into's direct path)
        v = np.trunc((np.real(a) if is_complex(source) else a).astype(np.float64))
        big, small, nan = v >= 2.0**63, v <= -(2.0**63), np.isnan(v)
        ints = np.where(big | small | nan, 0.0, v).astype(np.int64)
        return np.where(big, _INT64_MAX, np.where(small, _INT64_MIN, ints)).astype(to)


# -- filling (InplaceZero, InplaceFillScalar) ---------------------------------------------------

def fill(a: np.ndarray, value: np.ndarray, on_caller: bool) -> None:
    """Every element of ``a`` set to the 0-d ``value`` (already of its dtype); with
    ``on_caller`` on the calling thread, else on the worker threads where ``a`` is large
    (``over_parts``).  A value whose bytes are all zero (0 of any dtype, not -0.0) goes into a
    C-contiguous ``a`` as one byte fill on the calling thread, which NumPy does by memset:
    9.4 MB of FLOAT 0.13 ms, against 0.22 ms for its typed fill loop and 0.22 ms for the memset
    in two parts on the worker threads (AMD EPYC, medians of 9 rounds; (8,64,56,56) 0.086 /
    0.14 / 0.17 ms)."""
    if a.flags.c_contiguous and not value.tobytes().strip(b"\0"):
        a.reshape(-1).view(np.uint8).fill(0)
    elif on_caller:
        a[...] = value
    else:
        over_parts(lambda part: part.__setitem__(..., value), a)


# -- broadcasting ------------------------------------------------------------------------------

def broadcast(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """NumPy's broadcast of two shapes (aligned at the right; 1 stretches, so 1 with 0 is 0),
    or None where they do not broadcast."""
    shape = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        shape.append(y if x == 1 else x)
    return tuple(reversed(shape))


# -- the computation ---------------------------------------------------------------------------

#: (a, b, alpha, out): writes the result of a and b (arrays or 0-d arrays in the compute dtype,
#: broadcasting to ``out``'s shape) into ``out``, of the compute dtype, not overlapping them.
Kernel = Callable[[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray], None]


def _add(a: np.ndarray, b: np.ndarray, alpha: np.ndarray | None, out: np.ndarray) -> None:
    if a.dtype == np.bool_:  # BOOL: alpha * b is "alpha and b", the sum "or"
        np.logical_or(a, np.logical_and(b, alpha) if alpha is not None else b, out=out)
    elif alpha is None:
        np.add(a, b, out=out)
    else:  # alpha * b rounded, then added: as np.add(a, b * alpha), with no temporary
        np.multiply(b, alpha, out=out)
        np.add(a, out, out=out)


def _mul(a: np.ndarray, b: np.ndarray, alpha: np.ndarray | None, out: np.ndarray) -> None:
    if a.dtype == np.bool_:
        np.logical_and(a, b, out=out)
    else:
        np.multiply(a, b, out=out)


#: A maximum of a contiguous array with a 0-d operand (Relu's zero) runs as rows of this many
#: elements against one row of that value.  NumPy's SIMD loop of ``maximum`` wants both operands
#: contiguous; with a 0-d one it takes its element-at-a-time loop (stride 0): a FLOAT
#: (8,64,56,56) 0.84 ms so, 0.30 ms in rows of 16 Ki (0.42 / 0.49 / 0.29 ms in rows of 1 / 4 /
#: 256 Ki elements; one thread, AMD EPYC, NumPy 2.4.6, best of 7).  The same bits: both loops
#: give ``b`` where the two compare equal (+0.0 for Relu of -0.0) and a NaN where either is one.
SCALAR_ROW = 1 << 14
_scalar_rows: dict[tuple[np.dtype, bytes], np.ndarray] = {}


def _scalar_row(value: np.ndarray) -> np.ndarray:
    """A read-only row of ``SCALAR_ROW`` elements of the 0-d ``value`` (kept per dtype and value)."""
    key = (value.dtype, value.tobytes())
    row = _scalar_rows.get(key)
    if row is None:
        row = np.full(SCALAR_ROW, value, value.dtype)
        row.flags.writeable = False
        row = _scalar_rows.setdefault(key, row)
    return row


def _max(a: np.ndarray, b: np.ndarray, alpha: np.ndarray | None, out: np.ndarray) -> None:
    n = a.size
    if (b.ndim == 0 and n >= SCALAR_ROW and a.shape == out.shape and a.flags.c_contiguous
            and out.flags.c_contiguous):
        bulk = n - n % SCALAR_ROW
        flat_a, flat_out = a.reshape(-1), out.reshape(-1)
        np.maximum(flat_a[:bulk].reshape(-1, SCALAR_ROW), _scalar_row(b),
                   out=flat_out[:bulk].reshape(-1, SCALAR_ROW))
        np.maximum(flat_a[bulk:], b, out=flat_out[bulk:])
        return
    np.maximum(a, b, out=out)  # (a NaN wins, as in PyTorch)


def threshold_backward(threshold: np.float32) -> Kernel:
    """ThresholdBackward's kernel: ``a`` (gradOutput) where ``b`` (self, compared as a FLOAT)
    is not <= ``threshold`` (so a NaN self passes the gradient, as PyTorch), else 0."""
    def kernel(a: np.ndarray, b: np.ndarray, alpha: np.ndarray | None, out: np.ndarray) -> None:
        # Branch-free: the bits of a and-ed with all ones (kept) or all zeros (+0); ~10x faster
        # than np.where / copyto(where=) on random masks.
        bits = np.dtype(f"u{a.dtype.itemsize}")
        target = out.view(bits)
        # The mask in the output, or of self's own shape where self broadcasts (a bias).
        mask = target if b.shape == out.shape else np.empty(b.shape, bits)
        # "b <= threshold" as 1/0 written straight into the mask's integers, less 1: all zeros
        # (dropped) or all ones (kept, NaN included).  A 128 Ki-element piece, median us: 162
        # with not(<=) as a bool array then multiplied by the all-ones value (a bool to
        # integer cast), 131 so.
        with np.errstate(invalid="ignore"):
            np.less_equal(b.astype(np.float32, copy=False), threshold, out=mask, casting="unsafe")
        np.subtract(mask, mask.dtype.type(1), out=mask)
        np.bitwise_and(a.view(bits), mask, out=target)
    return kernel


ADD: Kernel = _add
MUL: Kernel = _mul
MAX: Kernel = _max


def operand(value: np.ndarray, promoted: np.dtype) -> np.ndarray:
    """An input converted to the promoted dtype, then widened to its compute dtype."""
    if value.dtype != promoted:
        with np.errstate(all="ignore"):
            value = value.astype(promoted)
    wide = compute_dtype(promoted)
    return value if value.dtype == wide else value.astype(wide)


def compute(kernel: Kernel, a: np.ndarray, b: np.ndarray, promoted: np.dtype, out: np.dtype,
            alpha: np.ndarray | None = None) -> np.ndarray:
    """``kernel`` of the tensors (or 0-d scalars, already converted) ``a`` and ``b`` in
    ``promoted``, the result rounded to it once and returned as a new array of ``out``.
    ``alpha`` (0-d, already converted as the operator converts it) multiplies ``b``.

    A large result is computed in parts on the worker threads (``workers.over_parts``), each
    part written into the result (through a part-sized buffer of the compute dtype where that
    is not ``out``'s)."""
    wide = compute_dtype(promoted)
    if alpha is not None and alpha.dtype != wide and promoted != np.bool_:
        alpha = alpha.astype(wide)
    x, y = operand(a, promoted), operand(b, promoted)
    result = np.empty(np.broadcast_shapes(x.shape, y.shape), out)
    narrow = promoted != wide

    def part(r: np.ndarray, p: np.ndarray, q: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            if r.dtype == wide:
                kernel(p, q, alpha, r)
                return
            t = np.empty(r.shape, wide)
            kernel(p, q, alpha, t)
            np.copyto(r, t.astype(promoted) if narrow else t, casting="unsafe")

    # (a broadcast input: ThresholdBackward's mask stays its size, no pass to keep in the cache)
    one_pass = (out == wide and alpha is None and kernel in _ONE_PASS) or any(
        v.ndim and v.size < result.size for v in (x, y))
    over_parts(part, result, x, y, piece_elements=None if one_pass else workers.PIECE_ELEMENTS)
    return result


# A result of fewer elements than this is one part on the calling thread whatever the kernel and
# the broadcast (``over_parts``: no worker, no pieces, the caller's ufunc buffer).
_ONE_PART = min(ufunc_buffer.BROADCAST_ELEMENTS, workers.PIECE_ELEMENTS, 2 * workers.MIN_PARALLEL_ELEMENTS)
# A result of fewer elements than this is one part on the calling thread for a one-pass kernel or
# a broadcast input (``compute``'s ``one_pass``: no pieces), with the broadcast's ufunc buffer.
_ONE_THREAD = 2 * workers.MIN_PARALLEL_ELEMENTS


def compiled(kernel: Kernel, a: np.ndarray, b: np.ndarray, promoted: np.dtype, out: np.dtype,
             alpha: np.ndarray | None = None) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``compute(kernel, x, y, promoted, out, alpha)`` as a function of ``x`` and ``y`` of
    ``a``'s and ``b``'s shapes and dtypes (a plan's kernel), with what ``compute`` derives from
    shapes and dtypes alone worked out once: for a result ``over_parts`` would compute in one
    part on the calling thread (a small one, ``_ONE_PART``; or up to ``_ONE_THREAD`` for a
    one-pass kernel or a broadcast input, with the broadcast's ufunc buffer) a call is the
    result's allocation and the kernel's ufuncs; a larger one is ``compute`` itself.  Thread
    time of Add (256,1000) + (1000,), one thread, median of 31 interleaved rounds: 0.148 ms
    through ``compute``, 0.118 ms so."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    size = math.prod(shape)
    wide = compute_dtype(promoted)
    one_pass = (out == wide and alpha is None and kernel in _ONE_PASS) or any(
        v.ndim and v.size < size for v in (a, b))
    if size >= _ONE_THREAD or (size >= _ONE_PART and not one_pass):
        return lambda x, y: compute(kernel, x, y, promoted, out, alpha)
    if alpha is not None and alpha.dtype != wide and promoted != np.bool_:
        alpha = alpha.astype(wide)
    keep_a, keep_b = a.dtype == wide, b.dtype == wide  # (operand would return them as they are)
    narrow, direct = promoted != wide, out == wide
    buffer = None  # (as ``over_parts`` sets it for a broadcast input)
    if a.shape != shape or b.shape != shape:
        buffer = ufunc_buffer.run_buffer(ufunc_buffer.inner_run(shape, a.shape, b.shape), size)

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        p = x if keep_a else operand(x, promoted)
        q = y if keep_b else operand(y, promoted)
        r = np.empty(shape, out)
        with np.errstate(all="ignore"):
            if direct:
                kernel(p, q, alpha, r)
            else:
                t = np.empty(shape, wide)
                kernel(p, q, alpha, t)
                np.copyto(r, t.astype(promoted) if narrow else t, casting="unsafe")
        return r

    if buffer is None:
        return run

    def buffered(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        with ufunc_buffer.ufunc_buffer(buffer):
            return run(x, y)

    return buffered


#: The kernels that make one pass over their output (the others' passes go over it in pieces
#: that stay in the cache: ``workers.PIECE_ELEMENTS``).
_ONE_PASS = (_add, _mul, _max)


def is_equal_to_one(alpha: np.ndarray) -> bool:
    """Whether A2/A3's Add skips ``alpha``: its value as a float is neither above nor below 1
    (so a NaN alpha counts as 1, as in CANN's ``IsEqualToOne``)."""
    value = np.float32(np.real(alpha.astype(np.complex128) if is_complex(alpha.dtype) else alpha.astype(np.float64)))
    return not (value > 1 or value < 1)


def add_alpha(alpha: np.ndarray, promoted: np.dtype) -> np.ndarray:
    """Add's ``alpha`` as A2/A3 apply it: a FLOAT for FLOAT16 (its fused axpy takes alpha as
    a float), else converted to the promoted dtype (BFLOAT16: rounded to it)."""
    return scalar_as(alpha, np.dtype(np.float32) if promoted == np.float16 else promoted)
