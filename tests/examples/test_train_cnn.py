"""examples/train_cnn.py: the losses of 5 training steps through aclnn operators against PyTorch
autograd (the same network, initial parameters, batch and SGD), and numpy against sim."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples"))
import train_cnn  # noqa: E402

STEPS = 5
RELATIVE = 1e-3  # the bound on each step's loss against PyTorch


def torch_losses(torch, steps: int = STEPS, seed: int = 0) -> list[float]:
    """The same training in PyTorch: nn modules, autograd, torch.optim.SGD (float64 throughout,
    so the oracle's own rounding is far below the bound)."""
    nn = torch.nn
    params = {k: torch.from_numpy(v.astype(np.float64)) for k, v in train_cnn.initial_parameters(seed).items()}
    images, labels = train_cnn.batch(seed)
    conv = nn.Conv2d(train_cnn.CHANNELS, train_cnn.FEATURES, train_cnn.KERNEL, padding=1).double()
    bn = nn.BatchNorm2d(train_cnn.FEATURES, eps=train_cnn.EPS, momentum=train_cnn.MOMENTUM).double()
    fc = nn.Linear(params["fc_weight"].shape[1], train_cnn.CLASSES).double()
    with torch.no_grad():
        for module, names in ((conv, ("conv_weight", "conv_bias")), (bn, ("bn_weight", "bn_bias")),
                              (fc, ("fc_weight", "fc_bias"))):
            module.weight.copy_(params[names[0]])
            module.bias.copy_(params[names[1]])
    model = nn.Sequential(conv, bn, nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), fc, nn.LogSoftmax(dim=1))
    optimizer = torch.optim.SGD(model.parameters(), lr=train_cnn.LR)
    x, y = torch.from_numpy(images.astype(np.float64)), torch.from_numpy(labels)
    losses = []
    for _ in range(steps):
        loss = nn.functional.nll_loss(model(x), y)
        losses.append(float(loss.detach()))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses


def _assert_close(ours: list[float], reference: list[float]) -> None:
    assert len(ours) == len(reference) == STEPS
    np.testing.assert_allclose(ours, reference, rtol=RELATIVE, atol=0)


def test_numpy_matches_pytorch_autograd(torch):
    reference = torch_losses(torch)
    losses = train_cnn.train("numpy", STEPS)
    _assert_close(losses, reference)
    assert losses[-1] < losses[0]  # it learns


def test_sim_matches_pytorch_and_numpy_with_device_tensors(sim_lib, torch, monkeypatch):
    placed = []
    original = train_cnn.Device.put
    monkeypatch.setattr(train_cnn.Device, "put", lambda self, a: placed.append(original(self, a)) or placed[-1])
    losses = train_cnn.train("sim", STEPS)
    assert placed and all(isinstance(t, train_cnn.aclnn_py.Tensor) for t in placed)  # device-resident
    _assert_close(losses, torch_losses(torch))
    np.testing.assert_allclose(losses, train_cnn.train("numpy", STEPS), rtol=RELATIVE, atol=0)


@pytest.mark.parametrize("backend", ["numpy", "sim"])
def test_the_script_prints_the_loss_per_step(backend, torch, request):
    if backend == "sim":
        request.getfixturevalue("sim_lib")  # built (skipped where not, never in CI)
    done = subprocess.run([sys.executable, str(REPO / "examples" / "train_cnn.py"), "--backend", backend,
                           "--steps", "3"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"training a small CNN on {backend} for 3 steps"
    steps = [float(line.split("loss ")[1]) for line in lines[1:4]]
    assert [line.split(":")[0] for line in lines[1:4]] == ["step 1", "step 2", "step 3"]
    np.testing.assert_allclose(steps, torch_losses(torch, 3), rtol=RELATIVE)
