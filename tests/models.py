"""Symbolic models shared by tests: the MLP training step and logistic regression."""

import numpy as np

import lucent
import lucent.tensor as lt


def mlp_training_step(sizes=(784, 512, 512, 10), seed=0, lr=0.01):
    """One SGD step of a tanh MLP with softmax cross-entropy.

    Returns ``(inputs, cost, updates, params)`` with ``inputs = [x, y]`` where
    ``y`` holds one-hot targets.
    """
    rng = np.random.default_rng(seed)
    x = lt.dmatrix("x")
    y = lt.dmatrix("y")
    params = []
    h = x
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        W = lucent.shared(rng.normal(scale=1 / np.sqrt(n_in), size=(n_in, n_out)), name=f"W{i}")
        b = lucent.shared(np.zeros(n_out), name=f"b{i}")
        params += [W, b]
        z = lt.dot(h, W) + b
        h = lt.tanh(z) if i < len(sizes) - 2 else z
    p = lt.special.softmax(h, axis=-1)
    cost = -(y * lt.log(p)).sum(axis=1).mean()
    grads = lucent.grad(cost, params)
    updates = [(param, param - lr * g) for param, g in zip(params, grads)]
    return [x, y], cost, updates, params


def mlp_data(batch=256, sizes=(784, 512, 512, 10), seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(batch, sizes[0]))
    labels = rng.integers(0, sizes[-1], size=batch)
    Y = np.eye(sizes[-1])[labels]
    return X, Y
