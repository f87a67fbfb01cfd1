"""Train a small CNN for a few steps through aclnn operators only, and print the loss per step.

    python examples/train_cnn.py                  # the default backend
    python examples/train_cnn.py --backend sim    # numpy, sim or npu; --steps N, --seed S

The network: convolution (3 -> 8 channels, 3x3, padding 1) -> batch norm (training mode) ->
ReLU -> 2x2 max pool -> linear (512 -> 10) -> log-softmax -> NLL loss (mean), on synthetic
data (a fixed random batch of 16 images of 3x16x16 and labels). Every step runs the forward
operators, the backward operators in reverse, and SGD: ``param += -lr * grad`` as
``aclnnInplaceAdd`` with ``alpha = -lr``.

On npu and sim the parameters, activations and gradients are device-resident
``aclnn_py.Tensor`` objects: each operator's output stays on the device and feeds the next one,
and only the loss is copied to the host (to print it). On numpy the same calls take and return
NumPy arrays. ``tests/examples/test_train_cnn.py`` checks the losses against PyTorch autograd
and numpy against sim.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import aclnn_py

BATCH, CHANNELS, SIZE, FEATURES, CLASSES = 16, 3, 16, 8, 10
LR, MOMENTUM, EPS = 0.02, 0.1, 1e-5
KERNEL = [3, 3]
POOL = [2, 2]
MEAN = 1               # NLLLoss reduction: 0 none, 1 mean, 2 sum
IGNORE_INDEX = -100


def initial_parameters(seed: int = 0) -> dict[str, np.ndarray]:
    """The network's parameters and batch-norm statistics, float32, seeded (PyTorch's default
    initialisation ranges)."""
    rng = np.random.default_rng(seed)
    fan_conv = CHANNELS * KERNEL[0] * KERNEL[1]
    flat = FEATURES * (SIZE // 2) * (SIZE // 2)

    def uniform(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        bound = 1 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    return {
        "conv_weight": uniform((FEATURES, CHANNELS, *KERNEL), fan_conv),
        "conv_bias": uniform((FEATURES,), fan_conv),
        "bn_weight": np.ones(FEATURES, np.float32),
        "bn_bias": np.zeros(FEATURES, np.float32),
        "bn_mean": np.zeros(FEATURES, np.float32),
        "bn_var": np.ones(FEATURES, np.float32),
        "fc_weight": uniform((CLASSES, flat), flat),
        "fc_bias": uniform((CLASSES,), flat),
    }


def batch(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic batch: images (float32, NCHW) and their labels (int64)."""
    rng = np.random.default_rng(seed + 1)
    images = rng.standard_normal((BATCH, CHANNELS, SIZE, SIZE)).astype(np.float32)
    labels = rng.integers(0, CLASSES, BATCH).astype(np.int64)
    return images, labels


TRAINED = ("conv_weight", "conv_bias", "bn_weight", "bn_bias", "fc_weight", "fc_bias")


class Device:
    """Where the arrays live: NumPy arrays on numpy, device ``Tensor`` objects on npu and sim.
    The operators take either; these are the few things that differ (placing an array, reading
    one back, and views: a reshape and a transpose share the data in both)."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.host = backend == "numpy"

    def put(self, array: np.ndarray) -> Any:
        return array if self.host else aclnn_py.Tensor.from_numpy(array, backend=self.backend)

    def reshape(self, a: Any, shape: tuple[int, ...]) -> Any:
        if self.host:
            return a.reshape(shape)
        strides = [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
        return a.view(shape, strides)

    def transpose(self, a: Any) -> Any:
        """The transpose of a contiguous matrix, as a view (CANN's matrix products take it)."""
        if self.host:
            return a.T
        rows, cols = a.shape
        return a.view((cols, rows), (1, cols))

    @staticmethod
    def scalar(a: Any) -> float:
        return float(np.asarray(a).reshape(-1)[0])


def train(backend: str, steps: int = 5, seed: int = 0, verbose: bool = False) -> list[float]:
    """Train for ``steps`` steps on ``backend``; return the loss of each step."""
    dev = Device(backend)
    p = {name: dev.put(value) for name, value in initial_parameters(seed).items()}
    images, labels = batch(seed)
    x, target = dev.put(images), dev.put(labels)
    grad_loss = dev.put(np.ones((), np.float32))     # d loss / d loss
    losses = []
    for step in range(steps):
        # -- forward
        conv = aclnn_py.convolution(x, p["conv_weight"], p["conv_bias"], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                    cube_math_type=0, backend=backend)
        # (the running statistics are updated in place; it returns them first, as CANN orders its outputs)
        _, _, norm, save_mean, save_invstd = aclnn_py.batch_norm(conv, p["bn_weight"], p["bn_bias"], p["bn_mean"],
                                                                 p["bn_var"], True, MOMENTUM, EPS, backend=backend)
        act = aclnn_py.relu(norm, backend=backend)
        pooled, indices = aclnn_py.max_pool2d_with_indices(act, POOL, POOL, [0, 0], [1, 1], False, backend=backend)
        flat = dev.reshape(pooled, (BATCH, -1) if dev.host else (BATCH, int(np.prod(pooled.shape[1:]))))
        logits = aclnn_py.addmm(p["fc_bias"], flat, dev.transpose(p["fc_weight"]), 1.0, 1.0, cube_math_type=0,
                                backend=backend)
        log_probs = aclnn_py.log_softmax(logits, 1, backend=backend)
        loss, total_weight = aclnn_py.nll_loss(log_probs, target, dev.put(np.ones(CLASSES, np.float32)), MEAN,
                                               IGNORE_INDEX, backend=backend)
        losses.append(dev.scalar(loss))
        if verbose:
            print(f"step {step + 1}: loss {losses[-1]:.6f}", flush=True)

        # -- backward, in reverse
        weight = dev.put(np.ones(CLASSES, np.float32))
        g_log_probs = aclnn_py.nll_loss_backward(grad_loss, log_probs, target, weight, MEAN, IGNORE_INDEX,
                                                 total_weight, backend=backend)
        g_logits = aclnn_py.log_softmax_backward(g_log_probs, log_probs, 1, backend=backend)
        g = {
            "fc_weight": aclnn_py.mm(dev.transpose(g_logits), flat, cube_math_type=0, backend=backend),
            "fc_bias": aclnn_py.reduce_sum(g_logits, [0], False, np.float32, backend=backend),
        }
        g_flat = aclnn_py.mm(g_logits, p["fc_weight"], cube_math_type=0, backend=backend)
        g_pooled = dev.reshape(g_flat, tuple(pooled.shape))
        g_act = aclnn_py.max_pool2d_with_indices_backward(g_pooled, act, indices, POOL, POOL, [0, 0], [1, 1], False,
                                                          backend=backend)
        g_norm = aclnn_py.threshold_backward(g_act, act, 0.0, backend=backend)
        g_conv, g["bn_weight"], g["bn_bias"] = aclnn_py.batch_norm_backward(
            g_norm, conv, p["bn_weight"], p["bn_mean"], p["bn_var"], save_mean, save_invstd, True, EPS,
            [True, True, True], backend=backend)
        _, g["conv_weight"], g["conv_bias"] = aclnn_py.convolution_backward(
            g_conv, x, p["conv_weight"], [FEATURES], [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
            [False, True, True], cube_math_type=0, backend=backend)

        # -- SGD: param += -lr * grad
        for name in TRAINED:
            aclnn_py.inplace_add(p[name], g[name], -LR, backend=backend)
    return losses


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default=None, help="numpy, sim or npu (default: the default backend)")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    backend = args.backend or aclnn_py.get_backend()
    print(f"training a small CNN on {backend} for {args.steps} steps")
    losses = train(backend, args.steps, args.seed, verbose=True)
    print(f"loss {losses[0]:.6f} -> {losses[-1]:.6f}")


if __name__ == "__main__":
    main()
