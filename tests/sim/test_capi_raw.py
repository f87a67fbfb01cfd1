"""``aclnn_py.capi`` reaches every runtime and nnopbase function: those without a Pythonic
mirror are raw (C arguments in C order; ``capi.new`` for output parameters; a non-zero
``aclError`` raises ``AclnnError`` naming the function)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def run_on_sim(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=dict(os.environ, ACLNN_PY_BACKEND="sim"), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_raw_functions_through_capi(sim_lib):
    out = run_on_sim("""
        from aclnn_py import AclnnError, capi
        capi.aclrtSetDevice(0)
        stream = capi.aclrtCreateStream()
        status = capi.new("aclrtStreamStatus *")
        capi.aclrtStreamQuery(stream, status)
        print("query", status[0])
        value = capi.new("int64_t *")
        capi.aclrtGetDeviceInfo(0, 101, value)
        print("aicores", value[0])
        try:
            capi.aclrtStreamQuery(stream, None)
        except AclnnError as e:
            print("error", e.status, e.api, "status must not be NULL" in e.message)
        try:
            capi.aclrtBinaryLoadFromFile(b"kernel.o", None, None)
        except AclnnError as e:
            print("unsupported", e.status, e.message.startswith("aclrtBinaryLoadFromFile: feature not supported"))
        buffer = capi.aclCreateDataBuffer(None, 12)
        print("buffer size", capi.aclGetDataBufferSizeV2(buffer))
        capi.aclDestroyDataBuffer(buffer)
        for call in (lambda: capi.aclCreateDataBuffer(None, 2**70), lambda: capi.aclrtGetDeviceInfo(2**40, 101, value)):
            try:
                call()
            except ValueError as e:
                print("refused", "does not fit its C parameter type" in str(e))
        capi.aclrtDestroyStream(stream)
        capi.aclrtResetDevice(0)
    """)
    assert out.splitlines() == ["query 0", "aicores 24", "error 100000 aclrtStreamQuery True",
                                "unsupported 207000 True", "buffer size 12", "refused True", "refused True"]
