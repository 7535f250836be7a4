"""The benchmark workloads, each defined once for every backend.

A workload ("case") is data plus one forward formula written against an
array namespace ``m`` (``exp``, ``sum``, ``dot``, ``softmax``...). The same
formula is evaluated by NumPy, traced into a symbolic graph by lucent or
PyTensor (their tensor modules are namespaces with the same names), or traced
by ``jax.numpy``; only the gradients differ: symbolic backends use ``grad``,
JAX uses ``jax.grad`` and NumPy has hand-written backward passes. Writing the
formula once is what makes the results comparable and the agree check
meaningful.

This module imports only NumPy at import time: a PyTensor or JAX
interpreter imports it without lucent being installed there.

Every builder returns a ``Runner``: ``call()`` is the thing timed (one
function call, or one training step that updates the parameters), and
``outputs(result)`` turns the result of a call, plus any updated state, into
``{name: ndarray}`` for the comparison with NumPy.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

# --------------------------------------------------------------------------
# Backends
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Backend:
    """A way of running a workload: which library, which mode, which interpreter.

    ``interpreter`` is a role (``main``, ``pytensor``, ``jax``) that the
    runner maps to a Python executable, so PyTensor (Python >= 3.12) and JAX
    can live in other virtual environments than lucent.
    """

    name: str
    kind: str  # "numpy", "symbolic" or "jax"
    library: str  # the importable module that must exist
    interpreter: str
    mode: str | None = None
    function_kwargs: dict = field(default_factory=dict)
    only_groups: tuple = ()  # empty: every workload
    # Threads the backend may use: 1 (every fairness run), N > 1 (NumPy's
    # BLAS, lucent's kernels and BLAS, XLA given N), 0 (the library's own
    # default: every core). ``single`` names the one-thread backend the
    # multi-threaded one is compared with.
    threads: int = 1
    single: str | None = None

    def applies_to(self, group: str) -> bool:
        return not self.only_groups or group in self.only_groups


#: Elementwise chain, reductions, logistic step, MLP step, matmul.
MULTI_THREAD_GROUPS = ("b", "c", "d", "e", "f")

BACKENDS = [
    Backend("numpy", "numpy", "numpy", "main"),
    Backend("lucent-FAST_RUN", "symbolic", "lucent", "main", mode="FAST_RUN"),
    Backend(
        "lucent-FAST_RUN-trust",
        "symbolic",
        "lucent",
        "main",
        mode="FAST_RUN",
        function_kwargs={"trust_input": True},
        only_groups=("a",),
    ),
    Backend("lucent-FAST_COMPILE", "symbolic", "lucent", "main", mode="FAST_COMPILE"),
    # PyTensor 3's FAST_RUN is Numba; "CVM" is its C virtual machine linker.
    Backend("pytensor-C", "symbolic", "pytensor", "pytensor", mode="CVM"),
    Backend("pytensor-NUMBA", "symbolic", "pytensor", "pytensor", mode="NUMBA"),
    Backend("jax", "jax", "jax", "jax"),
    # Multi-core columns, on the workloads where threads can help.
    Backend("numpy-2t", "numpy", "numpy", "main", threads=2, single="numpy", only_groups=MULTI_THREAD_GROUPS),
    Backend("lucent-FAST_RUN-2t", "symbolic", "lucent", "main", mode="FAST_RUN", threads=2,
            single="lucent-FAST_RUN", only_groups=MULTI_THREAD_GROUPS),
    Backend("jax-default-threads", "jax", "jax", "jax", threads=0, single="jax", only_groups=MULTI_THREAD_GROUPS),
]
BACKENDS_BY_NAME = {b.name: b for b in BACKENDS}

# --------------------------------------------------------------------------
# Array namespaces: the same formula runs on each of them
# --------------------------------------------------------------------------

_COMMON = ("exp", "sin", "log", "log1p", "abs", "tanh", "sum", "max", "mean", "dot")


def _np_softmax(z, axis=-1):
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _np_log_softmax(z, axis=-1):
    shifted = z - np.max(z, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _np_sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def numpy_namespace():
    """NumPy with the three functions it lacks, written out by hand."""
    ns = {name: getattr(np, name) for name in _COMMON}
    return types.SimpleNamespace(
        **ns, sigmoid=_np_sigmoid, softmax=_np_softmax, log_softmax=_np_log_softmax
    )


@dataclass
class SymbolicLib:
    """What a symbolic backend needs: its tensor namespace and compile API."""

    m: Any  # namespace of tensor functions
    tensor: Any  # module with dscalar, dvector, dmatrix
    function: Callable
    shared: Callable
    grad: Callable


def load_symbolic(library: str) -> SymbolicLib:
    """Import lucent or PyTensor lazily, so each interpreter needs only its own."""
    if library == "lucent":
        import lucent
        import lucent.tensor as T

        extra = {"sigmoid": T.sigmoid, "softmax": T.softmax, "log_softmax": T.log_softmax}
        lib = lucent
    elif library == "pytensor":
        import pytensor
        import pytensor.tensor as T
        from pytensor.tensor import special

        extra = {
            "sigmoid": T.sigmoid,
            "softmax": special.softmax,
            "log_softmax": special.log_softmax,
        }
        lib = pytensor
    else:
        raise ValueError(f"unknown symbolic library {library!r}")
    m = types.SimpleNamespace(**{n: getattr(T, n) for n in _COMMON}, **extra)
    return SymbolicLib(m, T, lib.function, lib.shared, lib.grad)


def load_jax():
    """Import JAX in float64 mode (the workloads are float64 everywhere)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    m = types.SimpleNamespace(
        **{n: getattr(jnp, n) for n in _COMMON},
        sigmoid=jax.nn.sigmoid,
        softmax=jax.nn.softmax,
        log_softmax=jax.nn.log_softmax,
    )
    return jax, m


# --------------------------------------------------------------------------
# Runners
# --------------------------------------------------------------------------


@dataclass
class Runner:
    call: Callable[[], Any]
    outputs: Callable[[Any], dict]


def _as_outputs(names):
    """An ``outputs`` converter for stateless functions returning ``names``."""

    def convert(result):
        values = result if isinstance(result, (list, tuple)) else [result]
        return {n: np.array(v, dtype=np.float64) for n, v in zip(names, values)}

    return convert


def _stateless_runners(formula, input_names, output_names):
    """Builders for a pure function ``formula(m, *inputs)`` on every backend."""

    def numpy_builder(data):
        m = numpy_namespace()
        args = [data[n] for n in input_names]
        return Runner(functools.partial(formula, m, *args), _as_outputs(output_names))

    def symbolic_builder(lib: SymbolicLib, data, mode, kwargs):
        variables = [_symbolic_input(lib, n, data[n]) for n in input_names]
        outs = formula(lib.m, *variables)
        f = lib.function(variables, outs, mode=mode, **kwargs)
        args = [data[n] for n in input_names]
        return Runner(functools.partial(f, *args), _as_outputs(output_names))

    def jax_builder(jax, m, data):
        jitted = jax.jit(functools.partial(formula, m))
        args = [jax.device_put(data[n]) for n in input_names]

        def call():
            return jax.block_until_ready(jitted(*args))

        return Runner(call, _as_outputs(output_names))

    return numpy_builder, symbolic_builder, jax_builder


def _symbolic_input(lib: SymbolicLib, name, value):
    """A float64 symbolic input of the same rank as ``value``."""
    constructor = {0: lib.tensor.dscalar, 1: lib.tensor.dvector, 2: lib.tensor.dmatrix}
    return constructor[np.ndim(value)](name)


# --------------------------------------------------------------------------
# Forward formulas (written once)
# --------------------------------------------------------------------------


def overhead_expr(m, x, y):
    return x + y * 2


def elementwise_chain(m, x, y):
    return m.exp(-x * x) * m.sin(y) + m.log1p(m.abs(x * y)) - m.tanh(x) / (1 + y * y)


def sum_of_squares(m, x):
    return m.sum(x * x)


def max_abs_diff(m, x, y):
    return m.max(m.abs(x - y))


def row_softmax(m, z):
    return m.softmax(z, axis=-1)


def matmul(m, a, b):
    return m.dot(a, b)


def logreg_loss(m, W, b, X, y, l2=0.01):
    """Binary cross-entropy of a logistic regression, plus ``l2 * ||W||^2``."""
    p = m.sigmoid(m.dot(X, W) + b)
    bce = -m.mean(y * m.log(p) + (1 - y) * m.log(1 - p))
    return bce + l2 * m.sum(W * W)


def mlp_forward(m, params, X):
    """Hidden activations and logits of the 784-512-512-10 tanh MLP."""
    W1, b1, W2, b2, W3, b3 = params
    h1 = m.tanh(m.dot(X, W1) + b1)
    h2 = m.tanh(m.dot(h1, W2) + b2)
    return h1, h2, m.dot(h2, W3) + b3


def mlp_loss(m, params, X, Y):
    """Mean softmax cross-entropy against one-hot targets ``Y``."""
    logits = mlp_forward(m, params, X)[-1]
    return -m.mean(m.sum(Y * m.log_softmax(logits, axis=-1), axis=1))


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------

LR = 0.1
MLP_PARAMS = ("W1", "b1", "W2", "b2", "W3", "b3")


def _rng(seed):
    return np.random.default_rng(seed)


def data_overhead(quick):
    return {"x": np.array(1.5), "y": np.array(-0.25)}


def data_two_vectors(quick):
    n = 100_000 if quick else 10_000_000
    r = _rng(1)
    return {"x": r.standard_normal(n), "y": r.standard_normal(n)}


def data_one_vector(quick):
    return {"x": data_two_vectors(quick)["x"]}


def data_softmax(quick):
    rows, cols = (200, 500) if quick else (2000, 5000)
    return {"z": _rng(2).standard_normal((rows, cols))}


def data_matmul(quick):
    n = 100 if quick else 1000
    r = _rng(3)
    return {"a": r.standard_normal((n, n)), "b": r.standard_normal((n, n))}


def data_logreg(quick):
    n, d = (200, 500) if quick else (20_000, 500)
    r = _rng(4)
    X = r.standard_normal((n, d))
    true_w = r.standard_normal(d) / np.sqrt(d)
    y = (X @ true_w + 0.5 * r.standard_normal(n) > 0).astype(np.float64)
    return {"X": X, "y": y, "W": 0.01 * r.standard_normal(d), "b": np.array(0.0)}


def data_mlp(quick):
    batch, sizes = (16, (784, 64, 64, 10)) if quick else (256, (784, 512, 512, 10))
    r = _rng(5)
    data = {"X": r.standard_normal((batch, sizes[0]))}
    labels = r.integers(0, sizes[-1], batch)
    data["Y"] = np.eye(sizes[-1])[labels]
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        data[f"W{i}"] = r.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)
        data[f"b{i}"] = np.zeros(fan_out)
    return data


# --------------------------------------------------------------------------
# Training steps: NumPy by hand, symbolic via grad, JAX via jax.grad
# --------------------------------------------------------------------------


def _state_outputs(loss, state: dict):
    out = {"loss": np.array(loss, dtype=np.float64)}
    out.update({k: np.array(v, dtype=np.float64) for k, v in state.items()})
    return out


def numpy_logreg(data):
    """One SGD step with the gradient of ``logreg_loss`` worked out by hand."""
    m = numpy_namespace()
    X, y = data["X"], data["y"]
    state = {"W": data["W"].copy(), "b": data["b"].copy()}

    def step():
        W, b = state["W"], state["b"]
        loss = logreg_loss(m, W, b, X, y)
        p = _np_sigmoid(X @ W + b)
        dz = (p - y) / len(y)
        gW = X.T @ dz + 2 * 0.01 * W
        gb = dz.sum()
        W -= LR * gW
        b -= LR * gb
        return loss

    return Runner(step, lambda loss: _state_outputs(loss, state))


def numpy_mlp(data):
    """One SGD step of the MLP with a hand-written backward pass."""
    X, Y = data["X"], data["Y"]
    state = {k: data[k].copy() for k in MLP_PARAMS}
    m = numpy_namespace()

    def step():
        W1, b1, W2, b2, W3, b3 = (state[k] for k in MLP_PARAMS)
        h1, h2, logits = mlp_forward(m, (W1, b1, W2, b2, W3, b3), X)
        logp = _np_log_softmax(logits)
        loss = -np.mean(np.sum(Y * logp, axis=1))
        d3 = (np.exp(logp) - Y) / len(X)
        d2 = (d3 @ W3.T) * (1 - h2 * h2)
        d1 = (d2 @ W2.T) * (1 - h1 * h1)
        grads = (X.T @ d1, d1.sum(0), h1.T @ d2, d2.sum(0), h2.T @ d3, d3.sum(0))
        for p, g in zip((W1, b1, W2, b2, W3, b3), grads):
            p -= LR * g
        return loss

    return Runner(step, lambda loss: _state_outputs(loss, state))


def _symbolic_sgd(lib, data, mode, kwargs, param_names, input_names, loss_fn):
    """Compile ``loss_fn`` with SGD updates of shared ``param_names``."""
    params = [lib.shared(data[k].copy(), name=k) for k in param_names]
    inputs = [_symbolic_input(lib, n, data[n]) for n in input_names]
    loss = loss_fn(lib.m, params, inputs)
    grads = lib.grad(loss, params)
    updates = [(p, p - LR * g) for p, g in zip(params, grads)]
    f = lib.function(inputs, loss, updates=updates, mode=mode, **kwargs)

    def outputs(result):
        return _state_outputs(result, {k: p.get_value() for k, p in zip(param_names, params)})

    return Runner(functools.partial(f, *[data[n] for n in input_names]), outputs)


def _jax_sgd(jax, m, data, param_names, input_names, loss_fn):
    """A jitted SGD step; the parameters live in the closure, on the device."""

    def step(params, inputs):
        loss, grads = jax.value_and_grad(lambda p: loss_fn(m, p, inputs))(params)
        return loss, [p - LR * g for p, g in zip(params, grads)]

    jitted = jax.jit(step)
    state = {"params": [jax.device_put(data[k]) for k in param_names]}
    inputs = [jax.device_put(data[n]) for n in input_names]

    def call():
        loss, state["params"] = jax.block_until_ready(jitted(state["params"], inputs))
        return loss

    def outputs(loss):
        return _state_outputs(loss, dict(zip(param_names, state["params"])))

    return Runner(call, outputs)


def _logreg_loss_fn(m, params, inputs):
    return logreg_loss(m, params[0], params[1], inputs[0], inputs[1])


def _mlp_loss_fn(m, params, inputs):
    return mlp_loss(m, params, inputs[0], inputs[1])


def _sgd_runners(numpy_builder, param_names, input_names, loss_fn):
    def symbolic_builder(lib, data, mode, kwargs):
        return _symbolic_sgd(lib, data, mode, kwargs, param_names, input_names, loss_fn)

    def jax_builder(jax, m, data):
        return _jax_sgd(jax, m, data, param_names, input_names, loss_fn)

    return numpy_builder, symbolic_builder, jax_builder


# --------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One timed function. ``group`` is the workload's letter (``c`` has three)."""

    key: str
    group: str
    title: str
    make_data: Callable[[bool], dict]
    builders: tuple  # (numpy, symbolic, jax)
    rtol: float = 1e-6
    atol: float = 1e-9

    def build(self, backend: Backend, lib, data) -> Runner:
        numpy_builder, symbolic_builder, jax_builder = self.builders
        if backend.kind == "numpy":
            return numpy_builder(data)
        if backend.kind == "symbolic":
            return symbolic_builder(lib, data, backend.mode, dict(backend.function_kwargs))
        jax, m = lib
        return jax_builder(jax, m, data)


CASES = [
    Case("a", "a", "x + y*2, float64 scalars (call overhead)", data_overhead,
         _stateless_runners(overhead_expr, ("x", "y"), ("out",))),
    Case("b", "b", "elementwise chain, 10M float64", data_two_vectors,
         _stateless_runners(elementwise_chain, ("x", "y"), ("out",))),
    Case("c.sum", "c", "sum(x*x), 10M", data_one_vector,
         _stateless_runners(sum_of_squares, ("x",), ("out",))),
    Case("c.max", "c", "max(abs(x-y)), 10M", data_two_vectors,
         _stateless_runners(max_abs_diff, ("x", "y"), ("out",))),
    Case("c.softmax", "c", "row softmax, 2000x5000", data_softmax,
         _stateless_runners(row_softmax, ("z",), ("out",))),
    Case("d", "d", "logistic regression SGD step, X 20000x500", data_logreg,
         _sgd_runners(numpy_logreg, ("W", "b"), ("X", "y"), _logreg_loss_fn)),
    Case("e", "e", "MLP 784-512-512-10 tanh SGD step, batch 256", data_mlp,
         _sgd_runners(numpy_mlp, MLP_PARAMS, ("X", "Y"), _mlp_loss_fn)),
    Case("f", "f", "matmul 1000x1000", data_matmul,
         _stateless_runners(matmul, ("a", "b"), ("out",))),
]
from workloads_library import library_cases  # noqa: E402  (uses the names above)

CASES += library_cases(Case)
from workloads_sparse import sparse_cases  # noqa: E402

CASES += sparse_cases(Case)
CASES_BY_KEY = {c.key: c for c in CASES}
GROUPS = sorted({c.group for c in CASES})

# --------------------------------------------------------------------------
# Targets (for lucent FAST_RUN) and reference figures
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A goal: an absolute call time, a ratio to NumPy and/or compile times (s)."""

    call: float | None = None
    ratio: float | None = None
    cold: float | None = None
    warm: float | None = None
    thread_ratio: float | None = None  # median / the one-thread backend's median


TARGETS = {
    "a": {"lucent-FAST_RUN": Target(call=4e-6), "lucent-FAST_RUN-trust": Target(call=2e-6)},
    "b": {"lucent-FAST_RUN": Target(call=0.200), "lucent-FAST_RUN-2t": Target(thread_ratio=1 / 1.7)},
    "c": {"lucent-FAST_RUN": Target(call=0.080), "lucent-FAST_RUN-2t": Target(thread_ratio=1 / 1.7)},
    "d": {"lucent-FAST_RUN": Target(ratio=1.05)},
    "e": {"lucent-FAST_RUN": Target(call=0.021, cold=5.0, warm=0.3)},
    "f": {"lucent-FAST_RUN": Target(ratio=1.05)},
    "sparse": {"lucent-FAST_RUN": Target(ratio=1.0)},
}

REFERENCES = {
    ("a", "numpy"): "1.9 µs",
    ("a", "pytensor-C"): "5.5 µs",
    ("a", "pytensor-NUMBA"): "7.5 µs",
    ("b", "numpy"): "536 ms",
    ("b", "pytensor-C"): "490–520 ms",
    ("b", "pytensor-NUMBA"): "490–520 ms",
    ("b", "jax"): "260 ms",
    ("c", "numpy"): "150 ms",
    ("c", "jax"): "86 ms",
    ("e", "numpy"): "26 ms",
    ("e", "pytensor-NUMBA"): "25 ms; compile 65 s / 1.0 s",
    ("e", "pytensor-C"): "compile 20 s / 0.7 s",
    ("e", "jax"): "21 ms; compile 0.6 s",
    ("f", "numpy"): "43 ms",
    ("f", "pytensor-C"): "43 ms",
    ("f", "pytensor-NUMBA"): "43 ms",
    ("f", "jax"): "43 ms",
}


def select_cases(only: str | None):
    """Cases whose group or key is in the comma-separated ``only``."""
    if not only:
        return list(CASES)
    wanted = {w.strip() for w in only.split(",") if w.strip()}
    unknown = wanted - set(GROUPS) - set(CASES_BY_KEY)
    if unknown:
        raise ValueError(f"unknown workload(s) {sorted(unknown)}; choose from {GROUPS}")
    return [c for c in CASES if c.group in wanted or c.key in wanted]
