"""The sample-style C++ programs of tests/sim_c/, run against the simulator.

Each program (one per operator) runs a few cases the way the official aclnn samples do and
prints ``== case <name> ==`` followed by ``result[i] is: v`` lines, then runs negative cases
(``check ...`` lines; a failed one makes the program exit non-zero) and prints the
simulator's live-handle counters.  Here every printed result is compared with PyTorch on
the same inputs.  The inputs are deterministic; element ``i`` (row-major) of every input
holds ``value(i) = ((i * 7) % 17 - 8) * 0.125`` unless a case says otherwise, exactly as the
C++ programs build them.
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from helpers import PRINTED_F, tolerance

torch = pytest.importorskip("torch")
F = torch.nn.functional

_HEADER = re.compile(r"^== case (.+) ==$")
_RESULT = re.compile(r"^result\[(\d+)\] is: (\S+)$")


def value(n: int) -> np.ndarray:
    """The C++ programs' InputValue(i) for i in range(n), as float64."""
    i = np.arange(n, dtype=np.int64)
    return ((i * 7) % 17 - 8) * 0.125


def values(shape) -> torch.Tensor:
    return torch.from_numpy(value(int(np.prod(shape))).reshape(shape))


def run_program(programs: tuple[dict, dict], name: str) -> tuple[dict[str, np.ndarray], str]:
    """Run one program; return its printed results per case and its whole output."""
    programs, env = programs
    exe = programs.get(name) or programs.get(f"{name}_test")
    assert exe is not None, f"no C program {name!r} among {sorted(programs)}"
    proc = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{name} exited with {proc.returncode}:\n{output}"
    assert "failures: 0" in output, output
    counters = [line for line in output.splitlines() if line.startswith("counters:")]
    assert counters and counters[-1].endswith("live=0"), output

    cases: dict[str, list[float]] = {}
    current = None
    for line in proc.stdout.splitlines():
        header = _HEADER.match(line)
        if header:
            current = header.group(1)
            cases[current] = []
            continue
        result = _RESULT.match(line)
        if result:
            assert current is not None, line
            assert int(result.group(1)) == len(cases[current]), line
            cases[current].append(float(result.group(2)))
    return {k: np.array(v) for k, v in cases.items()}, output


def assert_results(cases: dict, name: str, expected: torch.Tensor, half: bool = False) -> None:
    assert name in cases, f"case {name!r} not printed; got {sorted(cases)}"
    exp = expected.detach().to(torch.float64).reshape(-1).numpy()
    if half:
        exp = exp.astype(np.float16).astype(np.float64)
        rtol, atol = tolerance(np.float16)
    else:
        rtol, atol = PRINTED_F
    np.testing.assert_allclose(cases[name], exp, rtol=rtol, atol=atol, err_msg=name)


@pytest.fixture(scope="module")
def programs(build_c_programs, c_env):
    """The built programs and the environment they run in."""
    return build_c_programs, c_env


def test_im2col_backward(programs):
    cases, _ = run_program(programs, "im2col_backward")
    grad = values((1, 12, 9)).float()
    assert_results(cases, "float32", F.fold(grad, (4, 5), (2, 3), dilation=(1, 1), padding=(1, 0), stride=(2, 1)))
    grad = values((4, 6)).float()
    assert_results(cases, "float16", F.fold(grad, (3, 3), (2, 2), dilation=(2, 1), padding=(1, 1), stride=(1, 2)),
                   half=True)


def _unpool_gather(grad: torch.Tensor, indices: torch.Tensor, shape) -> torch.Tensor:
    return grad.flatten(-2).gather(-1, indices.flatten(-2)).view(shape)


def test_max_unpool2d_backward(programs):
    cases, _ = run_program(programs, "max_unpool2d_backward")
    grad = values((2, 2, 4, 5))
    indices = (torch.arange(2 * 2 * 2 * 3) * 7 % 20).view(2, 2, 2, 3)
    assert_results(cases, "float32", _unpool_gather(grad, indices, (2, 2, 2, 3)))
    grad = (torch.arange(2 * 4 * 4) * 7 % 17 - 8).view(2, 4, 4).to(torch.int32)
    indices = (torch.arange(2 * 3 * 3) * 7 % 16).view(2, 3, 3)
    assert_results(cases, "int32_to_float32", _unpool_gather(grad, indices, (2, 3, 3)))


def test_max_unpool2d_backward_out_of_range_index(programs):
    _, output = run_program(programs, "max_unpool2d_backward")
    line = next(ln for ln in output.splitlines() if "fails at synchronisation" in ln)
    assert "status 507015" in line and " ok;" in line, line
    assert "indices[" in line, line  # the kernel's message names the bad index


def test_reflection_pad2d_backward(programs):
    cases, _ = run_program(programs, "reflection_pad2d_backward")
    # gradOutput is a view of a (1, 2, 7, 6) storage with its last two dims swapped.
    grad = values((1, 2, 7, 6)).transpose(2, 3)
    expected = torch.ops.aten.reflection_pad2d_backward(grad, torch.zeros(1, 2, 3, 4, dtype=torch.float64),
                                                        [2, 1, 1, 2])
    assert_results(cases, "float32", expected)
    parts = values((2, 5, 5, 2))
    grad = torch.complex(parts[..., 0], parts[..., 1])
    expected = torch.ops.aten.reflection_pad2d_backward(grad, torch.zeros(2, 3, 3, dtype=torch.complex128),
                                                        [1, 1, 2, 0])
    assert_results(cases, "complex64", torch.view_as_real(expected))


def test_avgpool2d_backward(programs):
    cases, _ = run_program(programs, "avgpool2d_backward")
    backward = torch.ops.aten.avg_pool2d_backward
    expected = backward(values((1, 2, 3, 4)).float(), torch.zeros(1, 2, 5, 6), [3, 2], [2, 2], [1, 1], True, False,
                        None)
    assert_results(cases, "float32_ceil", expected)
    expected = backward(values((3, 2, 2)).float(), torch.zeros(3, 4, 4), [2, 2], [2, 2], [0, 0], False, True, 3)
    assert_results(cases, "ncl_stride_null", expected)
    expected = backward(values((2, 1, 5, 3)).float(), torch.zeros(2, 1, 4, 4), [2, 2], [1, 1], [1, 0], False, True,
                        None)
    assert_results(cases, "float16", expected, half=True)


def _conv_reference(grad_shape, input_shape, weight_shape, stride, padding, dilation, transposed, output_padding,
                    groups, mask, pad4=None):
    """aten::convolution_backward on value() inputs; a 4-element padding is
    [top, bottom, left, right], applied with F.pad and cropped back from gradInput."""
    grad, x, w = (values(s).float() for s in (grad_shape, input_shape, weight_shape))
    if pad4 is not None:
        top, bottom, left, right = pad4
        xp = F.pad(x, (left, right, top, bottom))
        gi, gw, gb = torch.ops.aten.convolution_backward(grad, xp, w, [grad_shape[1]], stride, [0, 0], dilation,
                                                         False, [0, 0], groups, mask)
        if gi is not None:
            gi = gi[..., top:top + input_shape[2], left:left + input_shape[3]]
        return gi, gw, gb
    return torch.ops.aten.convolution_backward(grad, x, w, [grad_shape[1]], stride, padding, dilation, transposed,
                                               output_padding, groups, mask)


# name, gradOutput, input, weight, stride, padding, dilation, transposed, outputPadding, groups, mask, half
_CONV_CASES = [
    ("conv2d", (2, 6, 3, 4), (2, 4, 5, 6), (6, 2, 3, 3), [2, 1], [1, 1], [1, 2], False, [0, 0], 2,
     [True, True, True], False),
    ("conv2d_pad4", (1, 3, 4, 3), (1, 2, 4, 4), (3, 2, 2, 3), [1, 2], [1, 0, 2, 1], [1, 1], False, [0, 0], 1,
     [True, True, False], False),
    ("conv1d_transposed", (2, 2, 8), (2, 3, 4), (3, 2, 3), [2], [1], [1], True, [1], 1,
     [True, False, True], True),
    ("conv3d", (1, 2, 2, 3, 5), (1, 2, 3, 4, 4), (2, 1, 2, 2, 2), [1, 2, 1], [0, 1, 1], [1, 1, 1], False,
     [0, 0, 0], 2, [True, True, True], False),
]


@pytest.fixture(scope="module")
def conv_output(programs):
    return run_program(programs, "convolution_backward")[0]


@pytest.mark.parametrize("case", _CONV_CASES, ids=[c[0] for c in _CONV_CASES])
def test_convolution_backward(conv_output, case):
    name, grad_shape, input_shape, weight_shape, stride, padding, dilation, transposed, opad, groups, mask, half = case
    pad4 = padding if len(padding) == 4 else None
    results = _conv_reference(grad_shape, input_shape, weight_shape, stride, padding, dilation, transposed, opad,
                              groups, mask, pad4)
    for which, result, wanted in zip(("gradInput", "gradWeight", "gradBias"), results, mask):
        key = f"{name} {which}"
        if wanted:
            assert_results(conv_output, key, result, half=half)
        else:
            assert key not in conv_output


def test_linear_classifier_step(programs):
    # tests/sim_c/linear_step_test.cpp: forward, NLL loss, backward and SGD on device buffers, one
    # synchronisation; PyTorch autograd on the same inputs is the oracle.
    cases, output = run_program(programs, "linear_step")
    x = values((4, 6))
    weight = torch.from_numpy(value(30 + 11)[11:].reshape(5, 6)).requires_grad_()
    bias = torch.from_numpy(value(5 + 5)[5:]).requires_grad_()
    target = torch.tensor([1, 4, 0, 2])
    class_weight = 1 + torch.arange(5, dtype=torch.float64) / 4
    logits = torch.addmm(bias, x, weight.t())
    logits.retain_grad()
    loss = F.nll_loss(F.log_softmax(logits, 1), target, weight=class_weight, reduction="mean")
    loss.backward()
    assert_results(cases, "logits", logits)
    assert_results(cases, "loss", loss)
    assert_results(cases, "total_weight", class_weight[target].sum())
    assert_results(cases, "grad_logits", logits.grad)
    assert_results(cases, "weight", weight - 0.5 * weight.grad)
    assert_results(cases, "bias", bias - 0.5 * bias.grad)
    refusals = [line for line in output.splitlines() if line.startswith("check ") and "(expected 1610" in line]
    assert len(refusals) == 7 and all(" ok;" in line for line in refusals), output  # status and message each
