"""python -m aclnn_py bench: device time on sim, wall time on numpy, progress, arguments."""

from __future__ import annotations

import functools
import io
import json
import time

import pytest

import aclnn_py
from aclnn_py.tools import bench
from aclnn_py._numpy.progress import Progress


def _counters(lib) -> dict[str, int]:
    c = lib.ffi.new("aclsimCounters *")
    lib.call("aclsimGetCounters", c)
    return {f: getattr(c, f) for f, _ in lib.ffi.typeof("aclsimCounters").fields}


def test_make_call_defaults_and_overrides():
    call = bench.make_call("avg_pool2d_backward")
    assert call.args[1].shape == (8, 64, 56, 56) and call.args[0].shape == (8, 64, 28, 28)
    call = bench.make_call("avg_pool2d_backward", (1, 2, 9, 9), "float16", {"kernel_size": 2, "stride": (2, 1)})
    assert call.args[0].shape == (1, 2, 5, 10) and call.dtype == "float16"  # padding 1 kept
    with pytest.raises(ValueError, match="has no parameter nope.*kernel_size=3"):
        bench.make_call("avg_pool2d_backward", params={"nope": 1})
    with pytest.raises(ValueError, match="unknown operator"):
        bench.make_call("avg_pool3d_backward")


def test_device_time_on_sim_without_leaks(sim_lib):
    call = bench.make_call("im2col_backward", (2, 8, 32, 32))
    bench.benchmark(call, "sim", warmup=1, repeats=1)  # the first call creates the stream
    before = _counters(sim_lib)
    result = bench.benchmark(call, "sim", warmup=2, repeats=5, progress=False)
    after = _counters(sim_lib)
    assert len(result.device.samples) == 5 and len(result.host.samples) == 5
    assert all(d >= 0 for d in result.device.samples)
    # The events bracket the device work inside each timed call.
    assert result.device.median <= result.host.median
    assert result.device.min <= result.device.median <= result.device.max
    for key in ("events", "tensors", "executors", "device_blocks", "device_bytes", "int_arrays"):
        assert after[key] == before[key], key


def test_wall_time_on_numpy():
    result = bench.benchmark(bench.make_call("reflection_pad2d_backward", (2, 3, 16, 16)), "numpy",
                             warmup=0, repeats=3)
    assert result.device is None and len(result.host.samples) == 3
    assert "wall time" in bench.format_result(result) and "device time" not in bench.format_result(result)


def test_avg_pool_on_sim(sim_lib):
    call = bench.make_call("avg_pool2d_backward", (2, 4, 16, 16))
    try:
        result = bench.benchmark(call, "sim", warmup=1, repeats=3)
    except NotImplementedError:
        pytest.skip("avg_pool2d_backward is not wired to the simulator yet")
    assert len(result.device.samples) == 3


def test_progress_line_on_a_long_run(monkeypatch, capsys):
    original = aclnn_py.reflection_pad2d_backward

    @functools.wraps(original)
    def slow(*args, **kwargs):
        time.sleep(0.3)
        return original(*args, **kwargs)

    monkeypatch.setattr(aclnn_py, "reflection_pad2d_backward", slow)
    call = bench.make_call("reflection_pad2d_backward", (1, 1, 8, 8))
    bench.benchmark(call, "numpy", warmup=1, repeats=4, progress=True)
    err = capsys.readouterr().err
    assert "\rbench reflection_pad2d_backward on numpy: " in err and "/5 calls (" in err
    assert err.endswith("\r")  # erased at the end


def test_progress_waits_and_can_be_off():
    stream = io.StringIO()
    with Progress("x", 10, enabled=True, after=60, stream=stream) as p:
        p.update(5)
    assert stream.getvalue() == ""  # the run was short
    with Progress("x", 10, enabled=True, after=0, interval=0, stream=stream) as p:
        p.update(5)
        assert p.shown
    assert "\rx: 5/10" in stream.getvalue()
    quiet = io.StringIO()
    with Progress("x", 10, enabled=False, after=0, stream=quiet) as p:
        p.update(5)
    assert quiet.getvalue() == ""
    assert not Progress("x", 1, stream=io.StringIO()).enabled  # auto: not a terminal


def test_command_line_numpy(cli):
    done = cli("bench", "avg_pool2d_backward", "--backend", "numpy", "--repeats", "5", "--warmup", "1",
               "--shape", "2,4,16,16")
    assert done.returncode == 0, done.stderr
    assert "on numpy" in done.stdout and "5 repeats after 1 warm-up" in done.stdout
    assert all(word in done.stdout for word in ("wall time", "median", "min", "max"))


@pytest.mark.usefixtures("sim_lib")
def test_command_line_sim_json(cli):
    done = cli("bench", "max_unpool2d_backward", "--backend", "sim", "--repeats", "4", "--warmup", "1",
               "--shape", "2x8x16x16", "--dtype", "int8", "--param", "index_dtype=int32", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["backend"] == "sim" and result["dtype"] == "INT8" and result["repeats"] == 4
    assert len(result["device_ms"]["samples"]) == 4 and result["device_ms"]["median"] <= result["host_ms"]["median"]
    assert result["inputs"][1] == [2, 8, 16, 16]


def test_command_line_errors(cli):
    done = cli("bench", "avg_pool2d_backward", "--backend", "numpy", "--param", "kernal=3")
    assert done.returncode == 2 and "no parameter kernal" in done.stderr
    assert cli("bench", "avg_pool2d_backward", "--shape", "a,b").returncode == 2
    done = cli("bench", "avg_pool2d_backward", "--backend", "numpy", "--param", "padding=5", "--repeats", "1")
    assert done.returncode == 1 and "161002" in done.stderr  # the operator's own check
    assert "default cases" in cli("bench", "--help").stdout
