"""Sparse workloads: a CSR design matrix of 100,000 x 50,000 at 0.1% density.

* ``sparse.n``: one SGD step of a logistic regression on that matrix
  (binary cross-entropy plus ``0.01 * ||W||^2``, as workload ``d``);
* ``sparse.o``: the product of that matrix with a dense 50,000 x 64 one.

Same conventions as ``workloads.py``: the reference is SciPy (hand-written
gradient), the symbolic builder serves lucent and PyTensor (``sparse.
csr_matrix`` inputs, ``sparse.structured_dot`` / ``sparse.dot``), and JAX
uses ``jax.experimental.sparse.BCSR``. SciPy and JAX are imported inside
the builders of the interpreter that runs them.
"""

from __future__ import annotations

import functools
import importlib

import numpy as np

from workloads import LR, Runner, _as_outputs, _state_outputs

L2 = 0.01


def _csr(quick, seed):
    """A CSR matrix at 0.1% density with uniformly placed entries.

    Built row by row from sampled column indices: ``scipy.sparse.random``
    draws positions out of all rows x cols cells, which at 100,000 x 50,000
    needs a 37 GiB index array.
    """
    import scipy.sparse

    rows, cols = (2_000, 1_000) if quick else (100_000, 50_000)
    r = np.random.default_rng(seed)
    per_row = max(1, round(cols * 0.001))
    indices = np.sort(r.integers(0, cols, size=(rows, per_row)), axis=1)
    data = r.random((rows, per_row))
    indptr = np.arange(0, rows * per_row + 1, per_row)
    X = scipy.sparse.csr_matrix((data.ravel(), indices.ravel(), indptr), shape=(rows, cols))
    X.sum_duplicates()  # a column drawn twice in a row becomes one entry
    return X


def data_sparse_dot(quick):
    X = _csr(quick, 11)
    B = np.random.default_rng(12).standard_normal((X.shape[1], 64))
    return {"X": X, "B": B}


def data_sparse_logreg(quick):
    X = _csr(quick, 13)
    r = np.random.default_rng(14)
    true_w = r.standard_normal(X.shape[1])
    y = (X @ true_w + 0.1 * r.standard_normal(X.shape[0]) > 0).astype(np.float64)
    return {"X": X, "y": y, "W": 0.01 * r.standard_normal(X.shape[1]), "b": np.array(0.0)}


def _sparse_module(lib):
    root = lib.tensor.__name__.split(".")[0]
    return importlib.import_module(f"{root}.sparse")


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


# --------------------------------------------------------------------------
# o: sparse x dense product
# --------------------------------------------------------------------------


def o_numpy(data):
    X, B = data["X"], data["B"]
    return Runner(lambda: X @ B, _as_outputs(("out",)))


def o_symbolic(lib, data, mode, kwargs):
    sparse = _sparse_module(lib)
    X = sparse.csr_matrix("X", dtype="float64")
    B = lib.tensor.dmatrix("B")
    f = lib.function([X, B], sparse.structured_dot(X, B), mode=mode, **kwargs)
    return Runner(functools.partial(f, data["X"], data["B"]), _as_outputs(("out",)))


def o_jax(jax, m, data):
    from jax.experimental import sparse as jsparse

    X = jsparse.BCSR.from_scipy_sparse(data["X"])
    B = jax.device_put(data["B"])
    product = jax.jit(lambda x, b: x @ b)
    return Runner(lambda: jax.block_until_ready(product(X, B)), _as_outputs(("out",)))


# --------------------------------------------------------------------------
# n: logistic-regression SGD step on the sparse design matrix
# --------------------------------------------------------------------------


def _loss(m, z, W, y):
    p = m.sigmoid(z)
    bce = -m.mean(y * m.log(p) + (1 - y) * m.log(1 - p))
    return bce + L2 * m.sum(W * W)


def n_numpy(data):
    X, y = data["X"], data["y"]
    state = {"W": data["W"].copy(), "b": data["b"].copy()}

    def step():
        W, b = state["W"], state["b"]
        p = _sigmoid(X @ W + b)
        loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)) + L2 * np.sum(W * W)
        dz = (p - y) / len(y)
        W -= LR * (X.T @ dz + 2 * L2 * W)
        b -= LR * dz.sum()
        return loss

    return Runner(step, lambda loss: _state_outputs(loss, state))


def n_symbolic(lib, data, mode, kwargs):
    sparse = _sparse_module(lib)
    W = lib.shared(data["W"].copy(), name="W")
    b = lib.shared(data["b"].copy(), name="b")
    X = sparse.csr_matrix("X", dtype="float64")
    y = lib.tensor.dvector("y")
    loss = _loss(lib.m, sparse.dot(X, W) + b, W, y)
    gW, gb = lib.grad(loss, [W, b])
    f = lib.function([X, y], loss, updates=[(W, W - LR * gW), (b, b - LR * gb)], mode=mode, **kwargs)

    def outputs(result):
        return _state_outputs(result, {"W": W.get_value(), "b": b.get_value()})

    return Runner(functools.partial(f, data["X"], data["y"]), outputs)


def n_jax(jax, m, data):
    from jax.experimental import sparse as jsparse

    X = jsparse.BCSR.from_scipy_sparse(data["X"])
    y = jax.device_put(data["y"])

    def loss_fn(params):
        W, b = params
        return _loss(m, X @ W + b, W, y)

    @jax.jit
    def step(params):
        loss, grads = jax.value_and_grad(loss_fn)(params)
        return loss, [p - LR * g for p, g in zip(params, grads)]

    state = {"params": [jax.device_put(data["W"]), jax.device_put(data["b"])]}

    def call():
        loss, state["params"] = jax.block_until_ready(step(state["params"]))
        return loss

    def outputs(loss):
        return _state_outputs(loss, dict(zip(("W", "b"), state["params"])))

    return Runner(call, outputs)


def sparse_cases(Case):
    """The cases of this module, built with ``workloads.Case``."""
    return [
        Case("sparse.n", "sparse", "logistic-regression SGD step, CSR X 100,000x50,000 at 0.1%",
             data_sparse_logreg, (n_numpy, n_symbolic, n_jax), rtol=1e-7),
        Case("sparse.o", "sparse", "CSR 100,000x50,000 at 0.1% times dense 50,000x64",
             data_sparse_dot, (o_numpy, o_symbolic, o_jax), rtol=1e-8, atol=1e-10),
    ]


__all__ = ["sparse_cases"]
