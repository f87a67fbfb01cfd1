"""Fuzz every public entry point with random, mostly near-valid and often hostile arguments.

    python scripts/fuzz.py --calls 100000 --seed 1 [--chunk 2000]

What runs: every registered operator's function (on ``numpy`` and ``sim``; NumPy arrays and device Tensors),
the same operators by C name through ``aclnn_py.call`` and ``aclnn_py.prepare`` (run again,
sometimes on other arguments, by C parameter names, on a caller's stream, after ``close()``),
``Tensor.from_numpy`` / ``empty`` / ``view`` / ``numpy``, ``IntArray``, ``BoolArray``,
``FloatArray``, ``Scalar``, and ``capi.aclrtMalloc`` / ``aclrtMemcpy`` / ``aclrtMemcpyAsync``
/ ``aclrtMemset``. Misuse of lifetimes too: ``stream=`` a live caller stream, one the caller
synchronised and destroyed since (with Tensor results made on it read later), a bad address
or junk; the inputs of queued work closed or dropped on another thread; ``close()`` of a
prepared executor from another thread while it runs; ``fork()`` while another thread is
inside a call (the child must run a call on sim and on numpy, and not hang). Arguments: random shapes (0-size too), every dtype NumPy has (float128,
object, str, bytes, datetime, bfloat16 ...), odd strides (reversed, sliced, broadcast,
transposed, unaligned), huge / negative / int64-overflowing ints, floats, None, wrong types.

The rule checked: every call ends in a result or ``AclnnError`` / ``TypeError`` /
``ValueError``; anything else is a finding. The lifetime calls are held to more: no error of a
dead handle (a stream, event or executor that is not live, memory freed under queued work),
a forked child exits cleanly in time, and a valid call right after each (the canary: device
Tensors, then ``call`` with arrays) gives the right answer. The calls run in chunks, each in a subprocess, so a
crash is a finding too (reported with the command that reproduces it); at the end of a chunk,
after closing every Tensor and collecting garbage, the simulator's counters must show no live
handle and no device memory (the main thread's stream aside).

Prints one summary line: ``fuzz: calls=... findings=... time=...s``; exits 1 on findings.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import traceback

import numpy as np

ALLOWED = ("AclnnError", "TypeError", "ValueError")

HUGE_INTS = [2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64, 2**64 + 1, 10**30,
             -1, -2, -(2**31), -(2**63), -(2**63) - 1, -(10**30)]


def _dtypes():
    import ml_dtypes

    names = ["float16", "float32", "float64", "longdouble", "complex64", "complex128", "clongdouble",
             "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
             "object", "U3", "S3", "V4", "M8[s]", "m8[s]", ">f4", ">i8"]
    out = [np.dtype(n) for n in names]
    out += [np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)]
    return out


DTYPES = _dtypes()
FLOATS = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)]


class Fuzzer:
    FLOATS = FLOATS   # the float dtypes the operators' generators (Operator.fuzz) pick from

    def __init__(self, rng: np.random.Generator) -> None:
        import aclnn_py
        from aclnn_py import capi

        self.rng = rng
        self.aclnn = aclnn_py
        self.capi = capi
        self.tensors: list = []   # every Tensor made, closed at the end of the chunk
        self.device_ptrs: list = []  # every capi.aclrtMalloc pointer, freed after its call
        self.streams: list = []   # the caller streams alive now (at most 2), destroyed at the end
        self.kept: list = []      # Tensor results of stream= calls, read (and closed) later
        self.kind = ""            # the entry point of the call being made (KINDS)

    # -- random values ----------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def small_int(self, lo: int = -3, hi: int = 8) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def any_int(self) -> int:
        return self.pick(HUGE_INTS) if self.chance(0.5) else self.small_int(-5, 40)

    def junk(self):
        """A value of a random kind: often the wrong type for wherever it goes."""
        r = self.rng
        kind = int(r.integers(16))
        if kind == 0:
            return None
        if kind == 1:
            return self.any_int()
        if kind == 2:
            return self.pick([0.5, -1.0, float("nan"), float("inf"), 1e300, 2.0])
        if kind == 3:
            return self.pick([True, False, np.bool_(True)])
        if kind == 4:
            return self.pick(["", "abc", b"\x00\x01", bytearray(3)])
        if kind == 5:
            return [self.any_int() for _ in range(self.small_int(0, 5))]
        if kind == 6:
            return [self.pick([1, 2.5, None, "x", True, np.int64(3), 2**70]) for _ in range(self.small_int(0, 4))]
        if kind == 7:
            return np.array([self.small_int(0, 5) for _ in range(self.small_int(0, 4))],
                            dtype=self.pick([np.int64, np.int32, np.float32, np.uint64, np.bool_]))
        if kind == 8:
            return {"a": 1}
        if kind == 9:
            return (self.any_int(),)
        if kind == 10:
            return object()
        if kind == 11:
            return np.int8(self.small_int(-3, 3))
        if kind in (12, 13):
            return self.array()
        if kind == 14:
            return self.device_tensor()
        return self.pick([[], (), [[1, 2]], range(3)])

    def shape(self, rank: int | None = None, high: int = 5):
        rank = self.small_int(0, 5) if rank is None else rank
        return tuple(int(self.rng.integers(0 if self.chance(0.1) else 1, high + 1)) for _ in range(rank))

    def filled(self, shape, dtype) -> np.ndarray:
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        if dt.kind in "fcb" or dt.name == "bfloat16" or dt.name.startswith("float8"):
            base = self.rng.standard_normal(n).astype(np.float64)
            if dt.kind == "b":
                base = base > 0
            return base.astype(dt).reshape(shape)
        if dt.kind in "iu":
            return self.rng.integers(0, 7, size=n).astype(dt).reshape(shape)
        if dt.kind == "O":
            a = np.empty(n, dt)
            a[:] = [self.pick([None, 1, "s"]) for _ in range(n)]
            return a.reshape(shape)
        return np.zeros(shape, dt)

    def oddly_strided(self, a: np.ndarray) -> np.ndarray:
        """``a`` or a view of it with odd strides (the shape may change)."""
        choice = int(self.rng.integers(8))
        if choice == 0 and a.ndim:
            return a[..., ::-1]
        if choice == 1 and a.ndim:
            return np.repeat(a, 2, axis=-1)[..., ::2]  # positive, non-contiguous
        if choice == 2 and a.ndim >= 2:
            return a.swapaxes(-1, -2)
        if choice == 3:
            return np.broadcast_to(a, (2,) + a.shape)
        if choice == 4 and a.dtype.kind in "fiuc" and a.itemsize > 1 and a.size:
            raw = np.zeros(a.nbytes + 1, np.uint8)
            unaligned = raw[1:].view(a.dtype).reshape(a.shape)  # a misaligned array
            unaligned[...] = a
            return unaligned
        if choice == 5:
            f = np.asfortranarray(a)
            return f
        return a

    def array(self, shape=None, dtype=None) -> np.ndarray:
        shape = self.shape() if shape is None else shape
        dtype = self.pick(DTYPES) if dtype is None else dtype
        a = self.filled(shape, dtype)
        return self.oddly_strided(a) if self.chance(0.3) else a

    def device_tensor(self, a: np.ndarray | None = None):
        """A sim Tensor (of ``a``, or random), or an error value when it cannot be made."""
        a = self.filled(self.shape(), self.pick(FLOATS)) if a is None else a
        t = self.aclnn.Tensor.from_numpy(a, backend="sim")
        self.tensors.append(t)
        return t

    def maybe_device(self, a, backend: str):
        if backend == "sim" and isinstance(a, np.ndarray) and self.chance(0.25):
            try:
                return self.device_tensor(a)
            except (TypeError, ValueError, self.aclnn.AclnnError):
                return a
        return a

    def mutate(self, args: list, backend: str) -> list:
        args = [self.maybe_device(a, backend) for a in args]
        for _ in range(int(self.rng.integers(0, 4))):
            i = int(self.rng.integers(len(args)))
            a = args[i]
            how = int(self.rng.integers(5))
            if how == 0:
                args[i] = self.junk()
            elif how == 1 and isinstance(a, (list, tuple)) and a:
                a = list(a)
                a[int(self.rng.integers(len(a)))] = self.any_int()
                args[i] = a
            elif how == 2 and isinstance(a, np.ndarray):
                args[i] = self.array(dtype=self.pick(DTYPES) if self.chance(0.5) else a.dtype,
                                     shape=a.shape if self.chance(0.5) else None)
            elif how == 3 and isinstance(a, np.ndarray):
                args[i] = self.oddly_strided(a)
            else:
                args[i] = self.junk()
        return args

    # -- the entry points ---------------------------------------------------------------------

    def op_call(self):
        backend = self.pick(["numpy", "sim"])
        op = self.pick(self.aclnn.ops.OPERATORS)   # each operator's generator: Operator.fuzz
        clean = op.fuzz(self)
        how = self.pick(["function", "function", "call", "prepare"])
        if how == "function":
            args = self.mutate(clean, backend)
            fn = op.function
            return f"{fn.__name__}(backend={backend!r}, {_describe(args)})", lambda: fn(*args, backend=backend)
        # The same operator by its C name: the C argument list (cubeMathType and the outputs too,
        # of the shapes the valid call produces: Operator.c_arguments).
        c_name = op.kernel
        args = self.mutate(op.c_arguments(clean, self._out_like), backend)
        if how == "call":
            return (f"call({c_name!r}, backend={backend!r}, {_describe(args)})",
                    lambda: self.aclnn.call(c_name, *args, backend=backend))

        how_again = self.pick(["same", "same", "mutated", "keywords", "stream", "after close"])
        stream = self.stream_value() if how_again == "stream" else None

        def prepared():
            with self.aclnn.prepare(c_name, *args, backend=backend) as run:
                if how_again == "mutated":
                    return run(*self.mutate(args, backend))
                if how_again == "keywords":  # CANN's parameter names (one is often ``self``)
                    return run(**dict(zip(self.c_names(c_name, backend), args)))
                if how_again == "stream":
                    return self.keep(run(*args, stream=stream))
                if how_again == "after close":
                    run.close()
                return run(*args)
        return (f"prepare({c_name!r}, backend={backend!r}, {_describe(args)}) then a run: {how_again}"
                f"{'' if stream is None else f' on stream {stream!r}'}",
                self.checked(prepared) if how_again in ("stream", "after close") else prepared)

    def c_names(self, c_name: str, backend: str) -> list[str]:
        """The C parameter names of ``c_name``'s phase 1 (without workspaceSize and executor)."""
        signature = sys.modules["aclnn_py.call"]._signature
        lib = None if backend == "numpy" else self.aclnn._runtime.loader.library(backend)
        return [p.name for p in signature(lib, c_name).params]

    # -- lifetimes: streams, other threads, fork ------------------------------------------------

    def checked(self, action):
        """``action`` held to the lifetime rules (module docstring): a dead handle's error or a
        canary that fails is a RuntimeError, so a finding."""
        lib = self.aclnn._runtime.loader.library("sim")

        def run():
            try:
                try:
                    result = action()
                except BaseException:
                    # Work queued before this call, by an op call that returned at once (device
                    # Tensors run asynchronously; those calls are not waited for): a fault of it
                    # names its own call (issue #25), so it is that call's outcome, already
                    # counted; the canary below must not take it for its own.
                    self._drain(lib)
                    raise
                # A device fault of work this call queued (an out-of-range index on device
                # Tensors runs asynchronously) is this call's outcome, named as its (issue #25),
                # not the canary's: wait for it here.
                lib.synchronize()
                return result
            except self.aclnn.AclnnError as exc:
                if _dead_handle(exc):
                    raise RuntimeError(f"an error of a dead handle: {exc}") from exc
                raise
            finally:
                self.canary()
        return run

    def _drain(self, lib) -> None:
        """Wait for the work queued on this thread's stream; a fault of it, which names the call
        that queued it, is dropped; any other error is a finding."""
        try:
            lib.synchronize()
        except self.aclnn.AclnnError as exc:
            if exc.status not in (507015, 507053) or "queued by" not in exc.message:
                raise RuntimeError(f"waiting for earlier calls' work failed: {exc}") from exc

    def canary(self) -> None:
        """A valid call with device Tensors, then the same operator by ``call`` with arrays:
        nothing an earlier call left behind may make them fail or change their answer."""
        aclnn = self.aclnn
        op, args, want = self._canary_case()
        made = []
        try:
            try:
                for a in args:  # (copies: an in-place operator writes them, not the case)
                    made.append(aclnn.Tensor.from_numpy(a, backend="sim") if isinstance(a, np.ndarray) else a)
                with op.function(*made, backend="sim") as r:
                    first = r.numpy()
            finally:
                for t in made:
                    if isinstance(t, aclnn.Tensor):
                        t.close()
            second = aclnn.call(op.kernel, *op.c_arguments(list(op.fresh(args)),
                                                           lambda shape, dtype: np.zeros(shape, dtype)), backend="sim")
        except Exception as exc:
            raise RuntimeError(f"the canary failed after this call: {type(exc).__name__}: {exc}") from exc
        if not all(np.allclose(got, want, rtol=1e-4, atol=1e-5) for got in (first, second)):
            raise RuntimeError("the canary gave a wrong answer after this call")

    _canaries: dict = {}

    def _canary_case(self):
        """(operator, arguments, numpy's answer) of a valid float32 call of an operator with one
        output, the same for every chunk (made once per process)."""
        found = Fuzzer._canaries.get("case")
        if found is None:
            single = [op for op in self.aclnn.ops.OPERATORS if len(op.outputs) == 1]
            for seed in range(1000):
                maker = Fuzzer(np.random.default_rng(seed))
                maker.FLOATS = [np.dtype(np.float32)]
                op = single[seed % len(single)]
                args = op.fuzz(maker)
                try:
                    want = op.function(*op.fresh(args), backend="numpy")  # (args kept as made)
                except (TypeError, ValueError, self.aclnn.AclnnError):
                    continue
                if want.size:
                    found = Fuzzer._canaries["case"] = (op, args, want)
                    break
        return found

    def live_stream(self):
        if len(self.streams) < 2 and (not self.streams or self.chance(0.2)):
            self.streams.append(self.capi.aclrtCreateStream())
        return self.pick(self.streams)

    def retire_stream(self) -> None:
        """The caller's way to be done with a stream: synchronise it, then destroy it."""
        if self.streams:
            stream = self.streams.pop(int(self.rng.integers(len(self.streams))))
            self.capi.aclrtSynchronizeStream(stream)
            self.capi.aclrtDestroyStream(stream)

    def stream_value(self):
        """A ``stream=`` value: mostly a live caller stream, else a dead or bad one, or junk."""
        r = int(self.rng.integers(10))
        if r < 6:
            return self.live_stream()
        if r == 6:
            dead = self.capi.aclrtCreateStream()
            self.capi.aclrtDestroyStream(dead)
            return int(self.aclnn._ffi.ffi().cast("uintptr_t", dead))
        if r == 7:
            return self.pick([0xDEAD0000, 1, 2**63, 2**64, -1, 0, None])
        return self.junk()

    def keep(self, result):
        """A stream= call's result: its Tensors are read later, after their stream may be gone."""
        for r in result if isinstance(result, tuple) else (result,):
            if isinstance(r, self.aclnn.Tensor):
                self.kept.append(r)
        return None

    def stream_call(self):
        """An op function or ``call`` on ``stream=``, Tensors and ndarrays mixed; then maybe the
        caller retires a stream, or a Tensor made on one earlier is read."""
        r = self.rng.random()
        if r < 0.15 and self.kept:
            t = self.kept.pop(int(self.rng.integers(len(self.kept))))
            def read():
                try:
                    return t.numpy()
                finally:
                    t.close()
            return "Tensor made on a caller stream earlier .numpy()", self.checked(read)
        if r < 0.25:
            return "a caller stream synchronised and destroyed", self.checked(self.retire_stream)
        op = self.pick(self.aclnn.ops.OPERATORS)
        clean = op.fuzz(self)
        stream = self.stream_value()
        if self.chance(0.5):
            args = [self.maybe_device(a, "sim") for a in clean]
            args = self.mutate(args, "sim") if self.chance(0.2) else args
            fn = op.function
            return (f"{fn.__name__}(backend='sim', stream={stream!r}, {_describe(args)})",
                    self.checked(lambda: self.keep(fn(*args, backend="sim", stream=stream))))
        args = [self.maybe_device(a, "sim") for a in op.c_arguments(clean, self._out_like)]
        return (f"call({op.kernel!r}, backend='sim', stream={stream!r}, {_describe(args)})",
                self.checked(lambda: self.keep(self.aclnn.call(op.kernel, *args, backend="sim", stream=stream))))

    def _device_args(self, op):
        """Near-valid arguments of ``op``, every array a device Tensor of its own (not in ``tensors``)."""
        args, made = [], []
        for a in op.fuzz(self):
            if isinstance(a, np.ndarray):
                try:
                    a = self.aclnn.Tensor.from_numpy(a, backend="sim")
                    made.append(a)
                except (TypeError, ValueError, self.aclnn.AclnnError):
                    pass
            args.append(a)
        return args, made

    def other_thread_call(self):
        """Work queued on this thread's stream whose inputs another thread closes or drops
        before the result is read; or a prepared executor closed by another thread mid-run."""
        import threading

        op = self.pick(self.aclnn.ops.OPERATORS)
        if self.chance(0.7):
            args, made = self._device_args(op)
            drop = self.chance(0.5)

            def closed_elsewhere():
                try:
                    result = op.function(*args, backend="sim")
                    gone = [t for t in made if self.chance(0.7)]
                    if drop:  # the last reference goes on the other thread
                        args[:] = [None if any(a is g for g in gone) else a for a in args]
                        made[:] = [t for t in made if not any(t is g for g in gone)]
                        worker = threading.Thread(target=gone.clear)
                    else:
                        worker = threading.Thread(target=lambda: [g.close() for g in gone])
                    worker.start()
                    worker.join()
                    for r in result if isinstance(result, tuple) else (result,):
                        if isinstance(r, self.aclnn.Tensor):
                            try:
                                r.numpy()
                            finally:
                                r.close()
                finally:
                    for t in made:
                        t.close()
            return (f"{op.function.__name__}(backend='sim', Tensors) with inputs "
                    f"{'dropped' if drop else 'closed'} on another thread", self.checked(closed_elsewhere))
        args = op.c_arguments(op.fuzz(self), lambda shape, dtype: np.zeros(shape, dtype))
        delay = float(self.rng.uniform(0, 0.002))

        def close_race():
            run = self.aclnn.prepare(op.kernel, *args, backend="sim")
            closer = threading.Timer(delay, run.close)
            closer.start()
            try:
                for _ in range(50):
                    run(*args)
            except ValueError as exc:
                if "closed" not in str(exc):
                    raise
            finally:
                closer.join()
                run.close()
        return (f"prepare({op.kernel!r}, {_describe(args)}) closed by another thread after {delay:.4f} s",
                self.checked(close_race))

    def fork_call(self):
        """fork() while another thread is inside calls; the child runs one call on sim and one
        on numpy and must exit within 30 s."""
        import threading

        op = self.pick(self.aclnn.ops.OPERATORS)
        args = op.fuzz(self)
        busy_backend = self.pick(["sim", "numpy"])

        def busy():
            for _ in range(3):
                try:
                    op.function(*args, backend=busy_backend)
                except (TypeError, ValueError, self.aclnn.AclnnError):
                    pass

        def forked():
            worker = threading.Thread(target=busy)
            worker.start()
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    for backend in ("sim", "numpy"):
                        try:
                            op.function(*args, backend=backend)
                        except (TypeError, ValueError, self.aclnn.AclnnError):
                            pass
                except BaseException:
                    code = 5
                os._exit(code)
            worker.join()
            deadline = time.monotonic() + 30
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() > deadline:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    raise RuntimeError("the forked child hung")
                time.sleep(0.002)
            code = os.waitstatus_to_exitcode(status)
            if code:
                raise RuntimeError(f"the forked child failed: exit code {code}")
        return (f"fork() during {op.function.__name__}(backend={busy_backend!r}) on another thread",
                self.checked(forked))

    def _out_like(self, shape, dtype):
        return np.zeros(shape, dtype) if self.chance(0.9) else self.junk()

    def tensor_call(self):
        Tensor = self.aclnn.Tensor
        which = int(self.rng.integers(4))
        if which == 0:
            a = self.array() if self.chance(0.8) else self.junk()
            return f"Tensor.from_numpy({_describe([a])})", lambda: Tensor.from_numpy(a, backend="sim")
        if which == 1:
            shape = self.shape(high=6) if self.chance(0.6) else self.junk()
            dtype = self.pick(DTYPES) if self.chance(0.8) else self.junk()
            return f"Tensor.empty({shape!r}, {dtype!r})", lambda: Tensor.empty(shape, dtype, backend="sim")
        base = self.device_tensor(self.filled((self.small_int(1, 30),), self.pick(FLOATS)))
        rank = self.small_int(0, 3)
        shape = self.shape(rank, high=6) if self.chance(0.7) else [self.any_int() for _ in range(rank)]
        strides = (tuple(self.small_int(0, 4) for _ in range(rank)) if self.chance(0.6)
                   else [self.any_int() for _ in range(self.small_int(0, 3))])
        offset = self.small_int(0, 10) if self.chance(0.7) else self.any_int()
        if which == 2:
            return (f"Tensor(size {base.size}).view({shape!r}, {strides!r}, {offset!r}).numpy()",
                    lambda: base.view(shape, strides, offset).numpy())
        base.close()
        return "closed Tensor.numpy()", base.numpy

    def array_call(self):
        from aclnn_py._convert.arrays import BoolArray, FloatArray, IntArray, Scalar

        which = int(self.rng.integers(4))
        if which == 0:
            v = self.junk() if self.chance(0.5) else [self.any_int() for _ in range(self.small_int(0, 4))]
            return f"IntArray({_describe([v])})", lambda: IntArray(v, backend="sim")
        if which == 1:
            v = self.junk() if self.chance(0.5) else [self.chance(0.5) for _ in range(self.small_int(0, 4))]
            return f"BoolArray({_describe([v])})", lambda: BoolArray(v, backend="sim")
        if which == 2:
            v = self.junk() if self.chance(0.5) else [float(self.rng.standard_normal()) for _ in range(3)]
            return f"FloatArray({_describe([v])})", lambda: FloatArray(v, backend="sim")
        v = self.junk() if self.chance(0.5) else self.any_int()
        dt = self.pick(DTYPES) if self.chance(0.8) else self.junk()
        return f"Scalar({_describe([v])}, {dt!r})", lambda: Scalar(v, dt, backend="sim")

    def capi_call(self):
        capi = self.capi
        which = int(self.rng.integers(4))
        size = self.pick([0, 1, 16, 1000, 1 << 16]) if self.chance(0.8) else self.junk()
        if which == 0:
            def malloc():
                p = capi.aclrtMalloc(size)
                self.device_ptrs.append(p)
                return p
            return f"aclrtMalloc({size!r})", malloc
        dev = capi.aclrtMalloc(64)
        self.device_ptrs.append(dev)
        host = self.pick([np.zeros(64, np.uint8), np.zeros(8, np.uint8), b"\0" * 64, bytearray(64),
                          np.zeros((8, 8), np.float32)[:, ::2], memoryview(bytearray(64)), None, 0, "str",
                          np.zeros(64, np.uint8)[::-1]])
        if self.chance(0.2):
            host = self.junk()
        n = self.pick([0, 1, 8, 64, 65, 1 << 20]) if self.chance(0.8) else self.any_int()
        m = self.pick([n, 64, 8]) if self.chance(0.8) else self.any_int()
        kind = self.pick([0, 1, 2, 3, 4]) if self.chance(0.9) else self.any_int()
        if which == 3:
            target = self.pick([dev, host])
            value = self.small_int(0, 255) if self.chance(0.8) else self.any_int()
            return f"aclrtMemset({type(target).__name__}, {m!r}, {value!r}, {n!r})", \
                lambda: capi.aclrtMemset(target, m, value, n)
        dst, src = (host, dev) if self.chance(0.5) else (dev, host)
        if which == 2:
            return (f"aclrtMemcpyAsync({_describe([dst])}, {m!r}, {_describe([src])}, {n!r}, {kind!r})",
                    lambda: (capi.aclrtMemcpyAsync(dst, m, src, n, kind, None), capi.aclrtSynchronizeStream(None)))
        return (f"aclrtMemcpy({_describe([dst])}, {m!r}, {_describe([src])}, {n!r}, {kind!r})",
                lambda: capi.aclrtMemcpy(dst, m, src, n, kind))

    # (kind, share of the calls) of each entry point; one_call sets ``kind`` to the one chosen.
    KINDS = (("op", 0.50), ("tensor", 0.17), ("array", 0.10), ("capi", 0.10), ("stream", 0.08),
             ("other_thread", 0.048), ("fork", 0.002))

    def one_call(self):
        r = self.rng.random()
        for self.kind, share in self.KINDS:
            if r < share:
                break
            r -= share
        return getattr(self, f"{self.kind}_call")()

    def release(self, result) -> None:
        from aclnn_py._convert.arrays import _HostArray

        for r in result if isinstance(result, tuple) else (result,):
            if isinstance(r, (self.aclnn.Tensor, _HostArray, self.aclnn.Scalar)):
                r.close()
        for p in self.device_ptrs:
            try:
                self.capi.aclrtFree(p)
            except self.aclnn.AclnnError:
                pass
        self.device_ptrs.clear()


# The status codes of a handle that is not live (aclnn_py/sim/README.md, "Handles that are not
# live"): from the runtime's waits and records, an executor, or a task reading freed memory.
_DEAD_HANDLE_APIS = ("aclrtSynchronizeStream", "aclrtSynchronizeEvent", "aclrtRecordEvent", "aclrtDestroyEvent")


def _dead_handle(exc) -> bool:
    """Whether ``exc`` (an AclnnError) is the error of a dead handle the binding kept or freed
    too early (not of the caller's bad ``stream=``, which is 361001 from the operator)."""
    return ((exc.status in (107000, 107003) and exc.api in _DEAD_HANDLE_APIS) or exc.status == 561000
            or (exc.status in (507015, 507053) and "device allocation" in str(exc)))


def _describe(args) -> str:
    parts = []
    for a in args:
        if isinstance(a, np.ndarray):
            parts.append(f"ndarray({a.dtype}, {list(a.shape)}, strides={list(a.strides)})")
        elif type(a).__name__ == "Tensor":
            parts.append(f"Tensor({a.dtype}, {list(a.shape)})")
        else:
            r = repr(a)
            parts.append(r if len(r) < 80 else r[:77] + "...")
    return ", ".join(parts)


def run_chunk(seed: int, chunk: int, calls: int) -> dict:
    """``calls`` random calls in this process; the findings and the counters at the end."""
    import aclnn_py
    from aclnn_py import capi
    from aclnn_py._runtime import loader

    rng = np.random.default_rng([seed, chunk])
    fuzzer = Fuzzer(rng)
    lib = loader.library("sim")
    aclnn_py.set_backend("sim")
    lib.stream()
    findings = []
    outcomes: dict[str, int] = {}
    kinds: dict[str, int] = {}
    for i in range(calls):
        what = "building the call"
        try:
            what, call = fuzzer.one_call()
            # The call about to run, for the parent to report if this process dies.
            sys.stderr.write(f"CALL {i}: {what}\n")
            result = call()
            fuzzer.release(result)
            outcome = "ok"
        except BaseException as exc:  # noqa: BLE001 - the point is to see everything
            fuzzer.release(None)
            outcome = type(exc).__name__
            if outcome not in ALLOWED:
                findings.append({"call": i, "what": what, "error": f"{outcome}: {exc}"[:500],
                                 "traceback": traceback.format_exc(limit=6)[-1500:]})
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        kinds[fuzzer.kind] = kinds.get(fuzzer.kind, 0) + 1
    for t in fuzzer.tensors + fuzzer.kept:
        t.close()
    fuzzer.tensors.clear()
    fuzzer.kept.clear()
    while fuzzer.streams:
        fuzzer.retire_stream()
    gc.collect()
    lib.synchronize()
    from aclnn_py._runtime import pool

    pool.trim_all()  # (the caching allocator keeps released blocks on purpose: back to the device first)
    c = lib.ffi.new("aclsimCounters *")
    capi_status = lib.fn("aclsimGetCounters")(c)
    counters = {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}
    expected = dict.fromkeys(counters, 0)
    expected["streams"] = 1  # this thread's own, released at exit
    if capi_status or counters != expected:
        findings.append({"call": calls, "what": "counters at the end of the chunk",
                         "error": f"live handles or device memory left: {counters}", "traceback": ""})
    del capi
    return {"calls": calls, "findings": findings, "counters": counters, "outcomes": outcomes, "kinds": kinds}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=2000, help="calls per subprocess")
    parser.add_argument("--only-chunk", type=int, default=None, help="run just this chunk (to reproduce)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        import faulthandler

        faulthandler.enable()
        print(json.dumps(run_chunk(args.seed, args.only_chunk, args.chunk)))
        return 0

    start = time.perf_counter()
    chunks = range((args.calls + args.chunk - 1) // args.chunk)
    if args.only_chunk is not None:
        chunks = [args.only_chunk]
    env = dict(os.environ, ACLNN_PY_BACKEND="sim")
    total, findings, outcomes, kinds = 0, [], {}, {}
    counters = None
    for chunk in chunks:
        n = min(args.chunk, args.calls - chunk * args.chunk) if args.only_chunk is None else args.chunk
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--seed", str(args.seed),
               "--chunk", str(n), "--only-chunk", str(chunk)]
        reproduce = (f"python scripts/fuzz.py --seed {args.seed} --chunk {n} --only-chunk {chunk} --calls {n}")
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        report = None
        if proc.returncode == 0:
            try:
                report = json.loads(proc.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                report = None
        if report is None:
            last = [line for line in proc.stderr.splitlines() if line.startswith("CALL ")][-1:]
            findings.append({"chunk": chunk, "what": f"the chunk's process, in {last[0] if last else 'setup'}",
                             "error": f"exited with {proc.returncode} (signal {-proc.returncode} if negative)",
                             "traceback": "\n".join(l for l in proc.stderr.splitlines()[-40:]
                                                     if not l.startswith("CALL ")), "reproduce": reproduce})
            total += n
            continue
        total += report["calls"]
        counters = report["counters"]
        for k, v in report["outcomes"].items():
            outcomes[k] = outcomes.get(k, 0) + v
        for k, v in report["kinds"].items():
            kinds[k] = kinds.get(k, 0) + v
        for f in report["findings"]:
            f.update(chunk=chunk, reproduce=reproduce)
            findings.append(f)
    elapsed = time.perf_counter() - start
    for f in findings:
        print(f"FINDING chunk {f['chunk']} call {f.get('call', '-')}: {f['what']}\n  {f['error']}\n"
              f"  reproduce: {f['reproduce']}\n{f['traceback']}", file=sys.stderr)
    print(f"outcomes: {json.dumps(dict(sorted(outcomes.items())))}")
    print(f"calls per kind: {json.dumps(dict(sorted(kinds.items())))}")
    print(f"last chunk's counters: {counters}")
    print(f"fuzz: seed={args.seed} calls={total} findings={len(findings)} time={elapsed:.1f}s")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
