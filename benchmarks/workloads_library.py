"""Workloads of the wider library: random numbers, loops, linear algebra,
special functions, array ops and convolution.

Same conventions as ``workloads.py``: each case has a NumPy/SciPy builder
(the reference; hand-written gradients), a symbolic builder shared by lucent
and PyTensor (their module paths are the same) and a JAX builder. Random
workloads cannot agree value for value across libraries (JAX's generator is
another algorithm), so they are compared with tolerances wide enough for the
sampling error and narrow enough to catch a wrong distribution.

Only NumPy is imported at import time; SciPy, lucent, PyTensor and JAX are
imported inside the builders of the interpreter that runs them.
"""

from __future__ import annotations

import functools
import importlib

import numpy as np

from workloads import LR, MLP_PARAMS, Runner, _as_outputs, _jax_sgd, _state_outputs, data_mlp


def _module(lib, path):
    """``lucent.<path>`` or ``pytensor.<path>`` for the library of ``lib``."""
    root = lib.tensor.__name__.split(".")[0]
    return importlib.import_module(f"{root}.{path}")


def _symbolic_like(lib, value, name):
    t = lib.tensor
    return {0: t.dscalar, 1: t.dvector, 2: t.dmatrix, 3: t.dtensor3}[np.ndim(value)](name)


# --------------------------------------------------------------------------
# g: 10M standard normals, exp(x).mean()
# --------------------------------------------------------------------------


def data_normals(quick):
    return {"n": 100_000 if quick else 10_000_000, "seed": 42}


def g_numpy(data):
    rng = np.random.default_rng(data["seed"])
    n = data["n"]
    return Runner(lambda: np.exp(rng.standard_normal(n)).mean(), _as_outputs(("out",)))


def g_symbolic(lib, data, mode, kwargs):
    random = _module(lib, "tensor.random")
    rng = lib.shared(np.random.default_rng(data["seed"]))
    x = random.normal(0.0, 1.0, size=(data["n"],), rng=rng)
    next_rng = x.owner.outputs[0]
    f = lib.function([], lib.tensor.exp(x).mean(), updates=[(rng, next_rng)], mode=mode, **kwargs)
    return Runner(f, _as_outputs(("out",)))


def g_jax(jax, m, data):
    n = data["n"]
    state = {"key": jax.random.PRNGKey(data["seed"])}

    @jax.jit
    def draw(key):
        key, sub = jax.random.split(key)
        return key, m.mean(m.exp(jax.random.normal(sub, (n,))))

    def call():
        state["key"], out = jax.block_until_ready(draw(state["key"]))
        return out

    return Runner(call, _as_outputs(("out",)))


# --------------------------------------------------------------------------
# h: the MLP step with a Bernoulli dropout mask on each hidden layer
# --------------------------------------------------------------------------

KEEP = 0.5


def _dropout_outputs(loss, params):
    """The loss and each parameter's norm: the masks differ between libraries, so
    the parameters after one step agree only in size, not element by element."""
    out = {"loss": np.array(loss, dtype=np.float64)}
    out.update({f"|{k}|": np.linalg.norm(np.asarray(v, dtype=np.float64)) for k, v in params.items()})
    return out


def h_numpy(data):
    X, Y = data["X"], data["Y"]
    state = {k: data[k].copy() for k in MLP_PARAMS}
    rng = np.random.default_rng(7)

    def step():
        W1, b1, W2, b2, W3, b3 = (state[k] for k in MLP_PARAMS)
        m1 = rng.binomial(1, KEEP, size=(len(X), W1.shape[1])) / KEEP
        m2 = rng.binomial(1, KEEP, size=(len(X), W2.shape[1])) / KEEP
        h1 = np.tanh(X @ W1 + b1)
        d1h = h1 * m1
        h2 = np.tanh(d1h @ W2 + b2)
        d2h = h2 * m2
        logits = d2h @ W3 + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -np.mean(np.sum(Y * logp, axis=1))
        g3 = (np.exp(logp) - Y) / len(X)
        g2 = (g3 @ W3.T) * m2 * (1 - h2 * h2)
        g1 = (g2 @ W2.T) * m1 * (1 - h1 * h1)
        grads = (X.T @ g1, g1.sum(0), d1h.T @ g2, g2.sum(0), d2h.T @ g3, g3.sum(0))
        for p, g in zip((W1, b1, W2, b2, W3, b3), grads):
            p -= LR * g
        return loss

    return Runner(step, lambda loss: _dropout_outputs(loss, state))


def h_symbolic(lib, data, mode, kwargs):
    random = _module(lib, "tensor.random")
    T = lib.tensor
    params = [lib.shared(data[k].copy(), name=k) for k in MLP_PARAMS]
    W1, b1, W2, b2, W3, b3 = params
    X, Y = T.dmatrix("X"), T.dmatrix("Y")
    rng = lib.shared(np.random.default_rng(7))
    m1 = random.bernoulli(KEEP, size=(X.shape[0], W1.shape[1]), rng=rng)
    rng1 = m1.owner.outputs[0]
    m2 = random.bernoulli(KEEP, size=(X.shape[0], W2.shape[1]), rng=rng1)
    rng2 = m2.owner.outputs[0]
    h1 = T.tanh(T.dot(X, W1) + b1) * m1 / KEEP
    h2 = T.tanh(T.dot(h1, W2) + b2) * m2 / KEEP
    logits = T.dot(h2, W3) + b3
    loss = -T.mean(T.sum(Y * lib.m.log_softmax(logits, axis=-1), axis=1))
    grads = lib.grad(loss, params)
    updates = [(p, p - LR * g) for p, g in zip(params, grads)] + [(rng, rng2)]
    f = lib.function([X, Y], loss, updates=updates, mode=mode, **kwargs)

    def outputs(result):
        return _dropout_outputs(result, {k: p.get_value() for k, p in zip(MLP_PARAMS, params)})

    return Runner(functools.partial(f, data["X"], data["Y"]), outputs)


def h_jax(jax, m, data):
    X, Y = jax.device_put(data["X"]), jax.device_put(data["Y"])

    def loss_fn(params, key):
        W1, b1, W2, b2, W3, b3 = params
        k1, k2 = jax.random.split(key)
        m1 = jax.random.bernoulli(k1, KEEP, (X.shape[0], W1.shape[1])) / KEEP
        m2 = jax.random.bernoulli(k2, KEEP, (X.shape[0], W2.shape[1])) / KEEP
        h1 = m.tanh(m.dot(X, W1) + b1) * m1
        h2 = m.tanh(m.dot(h1, W2) + b2) * m2
        logits = m.dot(h2, W3) + b3
        return -m.mean(m.sum(Y * m.log_softmax(logits, axis=-1), axis=1))

    def step(params, key):
        key, sub = jax.random.split(key)
        loss, grads = jax.value_and_grad(loss_fn)(params, sub)
        return loss, [p - LR * g for p, g in zip(params, grads)], key

    jitted = jax.jit(step)
    state = {"p": [jax.device_put(data[k]) for k in MLP_PARAMS], "key": jax.random.PRNGKey(7)}

    def call():
        loss, state["p"], state["key"] = jax.block_until_ready(jitted(state["p"], state["key"]))
        return loss

    return Runner(call, lambda loss: _dropout_outputs(loss, dict(zip(MLP_PARAMS, state["p"]))))


# --------------------------------------------------------------------------
# i: Gaussian-process log marginal likelihood and its gradient in the length scale
# --------------------------------------------------------------------------

NOISE = 0.1


def data_gp(quick):
    n = 100 if quick else 1000
    r = np.random.default_rng(11)
    x = np.sort(r.uniform(0, 10, n))
    y = np.sin(x) + NOISE * r.standard_normal(n)
    return {"sqdist": (x[:, None] - x[None, :]) ** 2, "y": y, "ell": np.array(1.3)}


def _gp_lml(m, sqdist, y, ell, cholesky, solve_lower, solve_upper, n):
    K = m.exp(-0.5 * sqdist / (ell * ell)) + NOISE**2 * np.eye(n)
    L = cholesky(K)
    alpha = solve_upper(L.T, solve_lower(L, y))
    return -0.5 * m.dot(y, alpha) - m.sum(m.log(L.diagonal())) - 0.5 * n * np.log(2 * np.pi)


def i_numpy(data):
    import scipy.linalg as sl

    sqdist, y, ell = data["sqdist"], data["y"], float(data["ell"])
    n = len(y)

    def call():
        E = np.exp(-0.5 * sqdist / ell**2)
        K = E + NOISE**2 * np.eye(n)
        L = sl.cholesky(K, lower=True)
        alpha = sl.cho_solve((L, True), y)
        lml = -0.5 * y @ alpha - np.log(np.diag(L)).sum() - 0.5 * n * np.log(2 * np.pi)
        dK = E * sqdist / ell**3
        Kinv = sl.cho_solve((L, True), np.eye(n))
        grad = 0.5 * np.sum((np.outer(alpha, alpha) - Kinv) * dK)
        return lml, grad

    return Runner(call, _as_outputs(("lml", "dlml_dell")))


def i_symbolic(lib, data, mode, kwargs):
    linalg = _module(lib, "tensor.linalg")
    T = lib.tensor
    sqdist, y, ell = T.dmatrix("sqdist"), T.dvector("y"), T.dscalar("ell")
    n = len(data["y"])
    lml = _gp_lml(
        lib.m, sqdist, y, ell,
        lambda K: linalg.cholesky(K, lower=True),
        lambda L, b: linalg.solve_triangular(L, b, lower=True),
        lambda U, b: linalg.solve_triangular(U, b, lower=False),
        n,
    )
    f = lib.function([sqdist, y, ell], [lml, lib.grad(lml, ell)], mode=mode, **kwargs)
    return Runner(functools.partial(f, data["sqdist"], data["y"], data["ell"]),
                  _as_outputs(("lml", "dlml_dell")))


def i_jax(jax, m, data):
    import jax.scipy.linalg as jsl

    n = len(data["y"])

    def lml(ell, sqdist, y):
        return _gp_lml(
            m, sqdist, y, ell,
            lambda K: jsl.cholesky(K, lower=True),
            lambda L, b: jsl.solve_triangular(L, b, lower=True),
            lambda U, b: jsl.solve_triangular(U, b, lower=False),
            n,
        )

    jitted = jax.jit(jax.value_and_grad(lml))
    args = [jax.device_put(data[k]) for k in ("ell", "sqdist", "y")]
    return Runner(lambda: jax.block_until_ready(jitted(*args)), _as_outputs(("lml", "dlml_dell")))


# --------------------------------------------------------------------------
# j: 10,000 batched 8x8 solves
# --------------------------------------------------------------------------


def data_batched_solve(quick):
    batch = 1000 if quick else 10_000
    r = np.random.default_rng(12)
    A = r.standard_normal((batch, 8, 8)) + 8 * np.eye(8)
    return {"A": A, "b": r.standard_normal((batch, 8))}


def j_numpy(data):
    A, b = data["A"], data["b"]
    return Runner(lambda: np.linalg.solve(A, b[..., None])[..., 0], _as_outputs(("x",)))


def j_symbolic(lib, data, mode, kwargs):
    linalg = _module(lib, "tensor.linalg")
    A, b = lib.tensor.dtensor3("A"), lib.tensor.dmatrix("b")
    f = lib.function([A, b], linalg.solve(A, b, b_ndim=1), mode=mode, **kwargs)
    return Runner(functools.partial(f, data["A"], data["b"]), _as_outputs(("x",)))


def j_jax(jax, m, data):
    import jax.numpy as jnp

    jitted = jax.jit(lambda A, b: jnp.linalg.solve(A, b[..., None])[..., 0])
    A, b = jax.device_put(data["A"]), jax.device_put(data["b"])
    return Runner(lambda: jax.block_until_ready(jitted(A, b)), _as_outputs(("x",)))


# --------------------------------------------------------------------------
# k: Student-t log-likelihood of 10M points and its gradient in the degrees of freedom
# --------------------------------------------------------------------------


def data_student_t(quick):
    n = 100_000 if quick else 10_000_000
    r = np.random.default_rng(13)
    return {"x": r.standard_t(4.0, n), "nu": np.array(3.5)}


def _student_t_ll(m, gammaln, x, nu):
    return m.sum(
        gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * m.log(nu * np.pi)
        - (nu + 1) / 2 * m.log1p(x * x / nu)
    )


def k_numpy(data):
    from scipy.special import digamma, gammaln

    x, nu = data["x"], float(data["nu"])

    def call():
        ll = np.sum(gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi)
                    - (nu + 1) / 2 * np.log1p(x * x / nu))
        z = x * x / nu
        grad = len(x) * (0.5 * digamma((nu + 1) / 2) - 0.5 * digamma(nu / 2) - 0.5 / nu) + np.sum(
            -0.5 * np.log1p(z) + (nu + 1) / 2 * z / (nu * (1 + z))
        )
        return ll, grad

    return Runner(call, _as_outputs(("ll", "dll_dnu")))


def k_symbolic(lib, data, mode, kwargs):
    x, nu = lib.tensor.dvector("x"), lib.tensor.dscalar("nu")
    ll = _student_t_ll(lib.m, lib.tensor.gammaln, x, nu)
    f = lib.function([x, nu], [ll, lib.grad(ll, nu)], mode=mode, **kwargs)
    return Runner(functools.partial(f, data["x"], data["nu"]), _as_outputs(("ll", "dll_dnu")))


def k_jax(jax, m, data):
    from jax.scipy.special import gammaln

    jitted = jax.jit(jax.value_and_grad(lambda nu, x: _student_t_ll(m, gammaln, x, nu)))
    nu, x = jax.device_put(data["nu"]), jax.device_put(data["x"])
    return Runner(lambda: jax.block_until_ready(jitted(nu, x)), _as_outputs(("ll", "dll_dnu")))


# --------------------------------------------------------------------------
# l: cumsum along both axes, sort, searchsorted
# --------------------------------------------------------------------------


def data_cumsum(quick):
    n = 400 if quick else 4000
    return {"a": np.random.default_rng(14).standard_normal((n, n))}


def data_sort(quick):
    return {"x": np.random.default_rng(15).standard_normal(100_000 if quick else 10_000_000)}


def data_searchsorted(quick):
    r = np.random.default_rng(16)
    n, q = (100_000, 10_000) if quick else (10_000_000, 1_000_000)
    return {"sorted": np.sort(r.standard_normal(n)), "queries": r.standard_normal(q)}


def _cumsums(m, a):
    return m.cumsum(a, axis=0), m.cumsum(a, axis=1)


def _array_op_runners(formula, input_names, output_names, jax_formula=None):
    def numpy_builder(data):
        args = [data[n] for n in input_names]
        return Runner(lambda: formula(np, *args), _as_outputs(output_names))

    def symbolic_builder(lib, data, mode, kwargs):
        variables = [_symbolic_like(lib, data[n], n) for n in input_names]
        f = lib.function(variables, formula(lib.tensor, *variables), mode=mode, **kwargs)
        return Runner(functools.partial(f, *[data[n] for n in input_names]), _as_outputs(output_names))

    def jax_builder(jax, m, data):
        import jax.numpy as jnp

        jitted = jax.jit(lambda *a: (jax_formula or formula)(jnp, *a))
        args = [jax.device_put(data[n]) for n in input_names]
        return Runner(lambda: jax.block_until_ready(jitted(*args)), _as_outputs(output_names))

    return numpy_builder, symbolic_builder, jax_builder


# --------------------------------------------------------------------------
# m: 1-d convolution, 10M signal, 64 taps
# --------------------------------------------------------------------------


def data_convolve(quick):
    r = np.random.default_rng(17)
    return {"x": r.standard_normal(100_000 if quick else 10_000_000), "k": r.standard_normal(64)}


def m_numpy(data):
    import scipy.signal

    x, k = data["x"], data["k"]
    return Runner(lambda: scipy.signal.convolve(x, k, mode="valid"), _as_outputs(("out",)))


def m_symbolic(lib, data, mode, kwargs):
    signal = _module(lib, "tensor.signal")
    x, k = lib.tensor.dvector("x"), lib.tensor.dvector("k")
    f = lib.function([x, k], signal.convolve1d(x, k, mode="valid"), mode=mode, **kwargs)
    return Runner(functools.partial(f, data["x"], data["k"]), _as_outputs(("out",)))


def m_jax(jax, m, data):
    import jax.numpy as jnp

    jitted = jax.jit(lambda x, k: jnp.convolve(x, k, mode="valid"))
    x, k = jax.device_put(data["x"]), jax.device_put(data["k"])
    return Runner(lambda: jax.block_until_ready(jitted(x, k)), _as_outputs(("out",)))


# --------------------------------------------------------------------------
# n: the 1000-step recurrence h = tanh(W @ h + x_t), and one training step of it
# --------------------------------------------------------------------------

HIDDEN = 16


def data_recurrence(quick):
    steps = 100 if quick else 1000
    r = np.random.default_rng(18)
    return {
        "W": r.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
        "xs": 0.5 * r.standard_normal((steps, HIDDEN)),
        "h0": np.zeros(HIDDEN),
    }


def _np_recurrence(W, xs, h0):
    hs = np.empty_like(xs)
    h = h0
    for t in range(len(xs)):
        h = np.tanh(W @ h + xs[t])
        hs[t] = h
    return hs


def n_loop_numpy(data):
    W, xs, h0 = data["W"], data["xs"], data["h0"]
    return Runner(lambda: _np_recurrence(W, xs, h0), _as_outputs(("hs",)))


def _symbolic_recurrence(lib, W, xs, h0):
    scan = _module(lib, "scan").scan
    T = lib.tensor
    return scan(lambda x_t, h, W_: T.tanh(T.dot(W_, h) + x_t), sequences=xs, outputs_info=h0,
                non_sequences=W, return_updates=False)


def n_loop_symbolic(lib, data, mode, kwargs):
    T = lib.tensor
    W, xs, h0 = T.dmatrix("W"), T.dmatrix("xs"), T.dvector("h0")
    f = lib.function([W, xs, h0], _symbolic_recurrence(lib, W, xs, h0), mode=mode, **kwargs)
    return Runner(functools.partial(f, data["W"], data["xs"], data["h0"]), _as_outputs(("hs",)))


def _jax_recurrence(jax, m, W, xs, h0):
    def step(h, x_t):
        h = m.tanh(m.dot(W, h) + x_t)
        return h, h

    return jax.lax.scan(step, h0, xs)[1]


def n_loop_jax(jax, m, data):
    jitted = jax.jit(lambda W, xs, h0: _jax_recurrence(jax, m, W, xs, h0))
    args = [jax.device_put(data[k]) for k in ("W", "xs", "h0")]
    return Runner(lambda: jax.block_until_ready(jitted(*args)), _as_outputs(("hs",)))


def n_train_numpy(data):
    """Loss ``sum(h_T**2)`` and its gradient in W by backpropagation through time."""
    xs, h0 = data["xs"], data["h0"]
    state = {"W": data["W"].copy()}

    def step():
        W = state["W"]
        hs = _np_recurrence(W, xs, h0)
        loss = np.sum(hs[-1] ** 2)
        gW = np.zeros_like(W)
        dh = 2 * hs[-1]
        for t in range(len(xs) - 1, -1, -1):
            da = dh * (1 - hs[t] ** 2)
            prev = hs[t - 1] if t > 0 else h0
            gW += np.outer(da, prev)
            dh = W.T @ da
        W -= LR * gW
        return loss

    return Runner(step, lambda loss: _state_outputs(loss, state))


def n_train_symbolic(lib, data, mode, kwargs):
    T = lib.tensor
    W = lib.shared(data["W"].copy(), name="W")
    xs, h0 = T.dmatrix("xs"), T.dvector("h0")
    hs = _symbolic_recurrence(lib, W, xs, h0)
    loss = T.sum(hs[-1] ** 2)
    f = lib.function([xs, h0], loss, updates=[(W, W - LR * lib.grad(loss, W))], mode=mode, **kwargs)
    return Runner(functools.partial(f, data["xs"], data["h0"]),
                  lambda result: _state_outputs(result, {"W": W.get_value()}))


def n_train_jax(jax, m, data):
    def loss_fn(m_, params, inputs):
        return m_.sum(_jax_recurrence(jax, m_, params[0], inputs[0], inputs[1])[-1] ** 2)

    return _jax_sgd(jax, m, data, ("W",), ("xs", "h0"), loss_fn)


def library_cases(Case):
    """The cases of this module, built with ``workloads.Case``."""
    return [
        Case("g", "g", "exp(x).mean() of 10M standard normals (new draws each call)", data_normals,
             (g_numpy, g_symbolic, g_jax), rtol=5e-3, atol=0.0),
        Case("h", "h", "MLP 784-512-512-10 SGD step with Bernoulli dropout on both hidden layers",
             data_mlp, (h_numpy, h_symbolic, h_jax), rtol=0.2, atol=1e-2),
        Case("i", "i", "GP log marginal likelihood (1000 points) and d/d length scale", data_gp,
             (i_numpy, i_symbolic, i_jax), rtol=1e-6),
        Case("j", "j", "10,000 batched 8x8 solves", data_batched_solve,
             (j_numpy, j_symbolic, j_jax), rtol=1e-8),
        Case("k", "k", "Student-t log-likelihood of 10M points and d/d nu", data_student_t,
             (k_numpy, k_symbolic, k_jax), rtol=1e-8),
        Case("l.cumsum", "l", "cumsum along both axes of 4000x4000", data_cumsum,
             _array_op_runners(_cumsums, ("a",), ("axis0", "axis1"))),
        Case("l.sort", "l", "sort 10M floats", data_sort,
             _array_op_runners(lambda m, x: m.sort(x), ("x",), ("out",))),
        Case("l.searchsorted", "l", "searchsorted of 1M queries into 10M sorted floats",
             data_searchsorted,
             _array_op_runners(lambda m, a, q: m.searchsorted(a, q), ("sorted", "queries"), ("out",))),
        Case("m", "m", "1-d convolution, 10M signal, 64 taps (valid)", data_convolve,
             (m_numpy, m_symbolic, m_jax), rtol=1e-8, atol=1e-8),
        Case("n.loop", "n", "1000-step recurrence h = tanh(W @ h + x_t), hidden 16, all states",
             data_recurrence, (n_loop_numpy, n_loop_symbolic, n_loop_jax), rtol=1e-8),
        Case("n.train", "n", "one training step of the recurrence (BPTT through 1000 steps)",
             data_recurrence, (n_train_numpy, n_train_symbolic, n_train_jax), rtol=1e-7),
    ]


__all__ = ["library_cases"]
