"""The examples: every Python port prints what its C++ program prints, and the numbers are PyTorch's.

The C++ programs of examples/c are built once per session with CMake against the simulator
toolkit, the way the official samples are built against CANN (ASCEND_CUSTOM_PATH,
-DCMAKE_SKIP_RPATH=TRUE, libraries found through LD_LIBRARY_PATH). Each Python example runs in
its own process with ACLNN_PY_BACKEND=sim: it calls aclFinalize, after which CANN cannot be
used again in that process.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import PRINTED_F

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
EXAMPLE_NAMES = ("im2col_backward", "max_unpool2d_backward", "reflection_pad2d_backward",
                 "avg_pool2d_backward", "convolution_backward")

# "result[0] is: 9.200000", "out result[3] is: 0.062500", "gradBiasResult[1] is: 98.000000"
RESULT_LINE = re.compile(r"^(?P<label>[A-Za-z][\w ]*)\[(?P<index>\d+)\] is: (?P<value>\S+)$")
MATCH_LINE = re.compile(r"^aclnn_py\.(?P<op>\w+) matches the two-phase result$")


def _unavailable(message: str) -> None:
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def toolkit_home() -> str:
    """The simulator toolkit (built first if missing or stale)."""
    from aclnn_py import sim

    try:
        return sim.ensure_built()
    except Exception as exc:  # no C compiler, or the sources do not compile
        _unavailable(f"the simulator toolkit cannot be built here: {exc}")


@pytest.fixture(scope="session")
def c_programs(toolkit_home, tmp_path_factory) -> dict[str, Path]:
    """{example name: executable} for examples/c, configured and built once per session."""
    for tool in ("cmake", "g++"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} is needed to build the C++ programs of examples/c")
    build_dir = tmp_path_factory.mktemp("examples_c")
    env = {**os.environ, "ASCEND_CUSTOM_PATH": toolkit_home}
    steps = (["cmake", "-S", str(EXAMPLES / "c"), "-B", str(build_dir), "-DCMAKE_CXX_COMPILER=g++",
              "-DCMAKE_SKIP_RPATH=TRUE"],
             ["cmake", "--build", str(build_dir), "-j", "2"])
    for argv in steps:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, f"{' '.join(argv)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return {name: build_dir / "bin" / name for name in EXAMPLE_NAMES}


@pytest.fixture(scope="session")
def c_output(c_programs, toolkit_home):
    """c_output(name) -> the C++ program's stdout (it must exit 0), run once per session."""
    # Linked like the samples (no rpath): the loader finds the toolkit through LD_LIBRARY_PATH.
    search = [str(Path(toolkit_home) / "lib64"), *filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(":"))]
    env = {**os.environ, "LD_LIBRARY_PATH": ":".join(search)}

    @functools.lru_cache(maxsize=None)
    def run(name: str) -> str:
        proc = subprocess.run([str(c_programs[name])], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{name} exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    return run


def run_example(name: str, backend: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ACLNN_PY_BACKEND": backend}
    return subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="session")
def python_run(toolkit_home):
    """python_run(name) -> the Python example's CompletedProcess on sim, run once per session."""
    return functools.lru_cache(maxsize=None)(lambda name: run_example(name, "sim"))


@pytest.fixture(scope="session")
def python_output(python_run):
    """python_output(name) -> the Python example's stdout; its exit status is checked by
    test_python_example_checks_the_high_level_call, so that a failing high-level call does not
    hide whether the two-phase part printed the right lines."""
    return lambda name: python_run(name).stdout


def result_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if RESULT_LINE.match(line)]


def parse_results(stdout: str) -> dict[str, np.ndarray]:
    """{label: printed values in order}; the indices of each label must run 0, 1, 2, ..."""
    values: dict[str, list[float]] = {}
    for line in result_lines(stdout):
        m = RESULT_LINE.match(line)
        printed = values.setdefault(m["label"], [])
        assert int(m["index"]) == len(printed), f"out-of-order line {line!r}"
        printed.append(float(m["value"]))
    return {label: np.array(v) for label, v in values.items()}


# -- PyTorch's numbers for the official samples' inputs -------------------------------------------

def _im2col_backward(torch):
    grad = torch.tensor([[0.1, 1.1], [2.1, 3.1], [4.1, 5.1], [6.1, 7.1]], dtype=torch.float32)
    out = torch.nn.functional.fold(grad, output_size=(1, 1), kernel_size=(2, 2), dilation=(1, 1),
                                   padding=(1, 1), stride=(1, 2))
    return {"result": out}


def _max_unpool2d_backward(torch):
    self = torch.ones(1, 3, 2, 2, requires_grad=True)
    indices = torch.tensor([0, 1, 2, 1, 2, 0, 1, 1, 1, 0, 0, 0]).reshape(1, 3, 2, 2)
    torch.ops.aten.max_unpool2d(self, indices, [3, 1]).backward(torch.arange(9.0).reshape(1, 3, 3, 1))
    return {"result": self.grad}


def _reflection_pad2d_backward(torch):
    grad_input = torch.ops.aten.reflection_pad2d_backward(
        torch.ones(1, 1, 4, 4), torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 2, 2), [1, 1, 1, 1])
    return {"result": grad_input}


def _avg_pool2d_backward(torch):
    grad_input = torch.ops.aten.avg_pool2d_backward(
        torch.ones(1, 16, 1, 1), torch.ones(1, 16, 4, 4), [4, 4], [1, 1], [0, 0], False, True, None)
    return {"out result": grad_input}


def _convolution_backward(torch):
    grads = torch.ops.aten.convolution_backward(
        torch.ones(2, 2, 7, 7), torch.ones(2, 2, 7, 7), torch.ones(2, 2, 1, 1), [2], [1, 1], [0, 0], [1, 1],
        False, [0, 0], 1, [True, True, True])
    return dict(zip(("gradInputResult", "gradWeightResult", "gradBiasResult"), grads))


TORCH_RESULTS = {
    "im2col_backward": _im2col_backward,
    "max_unpool2d_backward": _max_unpool2d_backward,
    "reflection_pad2d_backward": _reflection_pad2d_backward,
    "avg_pool2d_backward": _avg_pool2d_backward,
    "convolution_backward": _convolution_backward,
}


# -- tests ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_python_example_prints_what_the_c_program_prints(name, c_output, python_output):
    c_lines = c_output(name).splitlines()
    assert c_lines and all(RESULT_LINE.match(line) for line in c_lines), c_output(name)
    assert result_lines(python_output(name)) == c_lines


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_python_example_checks_the_high_level_call(name, python_run):
    proc = python_run(name)
    assert proc.returncode == 0, f"examples/{name}.py exited with {proc.returncode}:\n{proc.stderr[-4000:]}"
    others = [line for line in proc.stdout.splitlines() if not RESULT_LINE.match(line)]
    assert len(others) == 1 and MATCH_LINE.match(others[0]), others
    assert MATCH_LINE.match(others[0])["op"] == name


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_printed_results_are_pytorchs(name, python_output, torch):
    printed = parse_results(python_output(name))
    expected = {label: t.detach().numpy().ravel() for label, t in TORCH_RESULTS[name](torch).items()}
    assert list(printed) == list(expected)
    for label, values in expected.items():
        # %f keeps six decimals.
        rtol, atol = PRINTED_F
        np.testing.assert_allclose(printed[label], values, rtol=rtol, atol=atol, err_msg=label)


def test_every_example_has_its_c_program_and_a_readme_entry():
    readme = (EXAMPLES / "README.md").read_text()
    assert sorted(p.stem for p in EXAMPLES.glob("*_backward.py")) == sorted(EXAMPLE_NAMES)
    assert sorted(p.stem for p in (EXAMPLES / "c").glob("*.cpp")) == sorted(EXAMPLE_NAMES)
    cmake = (EXAMPLES / "c" / "CMakeLists.txt").read_text()
    for name in EXAMPLE_NAMES:
        assert f"{name}.py" in readme and f"{name}.cpp" in readme
        assert name in cmake


def test_example_refuses_the_numpy_backend():
    proc = run_example("reflection_pad2d_backward", "numpy")
    assert proc.returncode != 0
    assert "ACLNN_PY_BACKEND=npu or sim" in proc.stderr
    assert proc.stdout == ""
