"""``verify_grad``: an op's symbolic gradient checked against finite differences."""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config
from lucent.gradient.reverse import grad
from lucent.scalar.dtypes import continuous_dtypes


class GradientError(Exception):
    """``verify_grad`` found a symbolic gradient far from the finite difference."""

    def __init__(self, arg, err_pos, shape, val1, val2, abs_err, rel_err, abs_tol, rel_tol):
        super().__init__()
        self.arg = arg
        self.err_pos = err_pos
        self.shape = shape
        self.val1 = val1
        self.val2 = val2
        self.abs_err = abs_err
        self.rel_err = rel_err
        self.abs_tol = abs_tol
        self.rel_tol = rel_tol

    def __str__(self):
        return (
            f"GradientError: numeric gradient and analytic gradient differ for input "
            f"{self.arg} (shape {self.shape}) at flat position {self.err_pos}: "
            f"analytic {self.val1!r}, numeric {self.val2!r}; max abs error "
            f"{self.abs_err:.4g} (tolerance {self.abs_tol:.4g}), max rel error "
            f"{self.rel_err:.4g} (tolerance {self.rel_tol:.4g})"
        )


class numeric_grad:
    """One-sided finite-difference gradient of a scalar function ``f`` at ``pt``.

    ``pt`` is an array or a list/tuple of arrays; ``gf`` holds the estimate
    with the same structure. The step defaults to one suited to the least
    precise float dtype of ``pt`` (``type_eps``): smaller steps lose the
    difference to rounding, larger ones to curvature. All points are copied
    into one working buffer of the least precise dtype involved, so every
    perturbed input is representable.
    """

    type_eps = {"float64": 1e-7, "float32": 3e-4, "float16": 1e-1}

    def __init__(self, f, pt, eps=None, out_type=None):
        packed = not isinstance(pt, (list, tuple))
        arrays = [np.array(p) for p in ([pt] if packed else pt)]
        dtypes = [str(a.dtype) for a in arrays]
        for dt in dtypes:
            if dt not in self.type_eps:
                raise TypeError(f"numeric_grad works on float16/32/64 points, got one of dtype {dt}")
        working = min(dtypes, key=lambda dt: self.type_eps[dt])
        if eps is None:
            eps = max(self.type_eps[dt] for dt in dtypes)
        grad_dtype = out_type if out_type is not None and str(out_type).startswith("complex") else working
        point = [a.astype(working) for a in arrays]
        f_x = f(*[p.copy() for p in point])
        self.gf = []
        for p in point:
            g = np.empty(p.shape, dtype=grad_dtype)
            for k in range(p.size):
                saved = p.flat[k]
                p.flat[k] = saved + eps
                g.flat[k] = (f(*[q.copy() for q in point]) - f_x) / eps
                p.flat[k] = saved
            self.gf.append(g)
        if packed:
            self.gf = self.gf[0]

    @staticmethod
    def abs_rel_err(a, b):
        """``(|a - b|, |a - b| / max(|a| + |b|, 1e-8))`` elementwise."""
        abs_err = abs(a - b)
        rel_err = abs_err / np.maximum(abs(a) + abs(b), [1e-8])
        return np.asarray(abs_err), np.asarray(rel_err)

    def abs_rel_errors(self, g_pt):
        """Absolute and relative errors of the gradients ``g_pt`` against ``gf``, per argument."""
        gf = self.gf if isinstance(self.gf, list) else [self.gf]
        if len(g_pt) != len(gf):
            raise ValueError(f"argument has wrong number of elements: {len(g_pt)}, expected {len(gf)}")
        errs = []
        for i, (a, b) in enumerate(zip(g_pt, gf)):
            if a.shape != b.shape:
                raise ValueError(f"argument element {i} has wrong shapes {a.shape}, {b.shape}")
            errs.append(numeric_grad.abs_rel_err(a, b))
        return errs

    def max_err(self, g_pt, abs_tol, rel_tol):
        """Where the tolerances are exceeded most: ``(arg, flat pos, abs_err, rel_err)``.

        The error of an element is ``min(abs_err / abs_tol, rel_err / rel_tol)``
        (above 1 means both tolerances are exceeded).
        """
        best = None
        for arg, (abs_err, rel_err) in enumerate(self.abs_rel_errors(g_pt)):
            if not np.all(np.isfinite(abs_err)):
                raise ValueError("abs_err not finite", repr(abs_err))
            if not np.all(np.isfinite(rel_err)):
                raise ValueError("rel_err not finite", repr(rel_err))
            scaled = np.minimum(abs_err / abs_tol, rel_err / rel_tol).ravel()
            if scaled.size == 0:
                continue
            pos = int(scaled.argmax())
            if best is None or scaled[pos] > best[0]:
                best = (scaled[pos], arg, pos, abs_err.ravel()[pos], rel_err.ravel()[pos])
        if best is None:
            return 0, 0, 0.0, 0.0
        return best[1], best[2], best[3], best[4]


# ---------------------------------------------------------------------------
# verify_grad
# ---------------------------------------------------------------------------
def _compile(inputs, outputs, mode):
    """Compile ``outputs`` with ``lucent.function`` (installed as the graph's builder).

    ``lucent.compile`` lives above this module; it registers ``function`` with
    ``lucent.graph.basic`` when lucent is imported, which keeps the import
    direction downwards.
    """
    from lucent.graph import basic

    if basic._function_builder is None:  # pragma: no cover - importing lucent sets it
        import lucent.compile  # noqa: F401
    kwargs = {"on_unused_input": "ignore"}
    if mode is not None:
        kwargs["mode"] = mode
    f = basic._function_builder(list(inputs), list(outputs), **kwargs)

    def call(*values):
        res = f(*values)
        return res if isinstance(res, (list, tuple)) else [res]

    return call


_DEFAULT_TOL = {"float16": 5e-2, "float32": 1e-2, "float64": 1e-4}
_DEFAULT_EPS = {"float16": 1e-1, "float32": 1e-3, "float64": 1e-6}


def verify_grad(
    fun,
    pt,
    n_tests=2,
    rng=None,
    eps=None,
    out_type=None,
    abs_tol=None,
    rel_tol=None,
    mode=None,
    cast_to_output_type=False,
    no_debug_ref=True,
):
    """Check the symbolic gradient of ``fun`` at the point ``pt`` numerically.

    ``fun`` maps symbolic tensors (one per array of ``pt``) to one tensor. A
    random projection ``sum(r * fun(*x))`` makes it a scalar; its symbolic
    gradient is compared, element by element, with a central finite
    difference. Raises ``GradientError`` when an element is off by more than
    both ``abs_tol`` and ``rel_tol``.
    """
    from lucent.tensor import math as tm
    from lucent.tensor.basic import as_tensor_variable
    from lucent.tensor.type import TensorType

    if not isinstance(pt, (list, tuple)):
        raise TypeError("verify_grad: pt must be a list or tuple of numpy arrays")
    pt = [np.array(p) for p in pt]
    for i, p in enumerate(pt):
        if p.dtype.name not in ("float16", "float32", "float64"):
            raise TypeError(f"verify_grad can only check float inputs; input {i} has dtype {p.dtype}")
    if rng is None:
        rng = np.random.default_rng(42)
    elif isinstance(rng, (int, np.integer)):
        rng = np.random.default_rng(int(rng))
    inputs = [TensorType(p.dtype.name, p.shape)(f"input {i}") for i, p in enumerate(pt)]
    out = fun(*inputs)
    if isinstance(out, (list, tuple)):
        raise TypeError("verify_grad: fun must return a single tensor; wrap it to return one output")
    out = as_tensor_variable(out)
    # The precision of the finite difference is that of the narrowest float
    # involved, inputs or output: pick step and tolerances from it.
    dtypes = [p.dtype.name for p in pt]
    if out.type.dtype in _DEFAULT_TOL:
        dtypes.append(out.type.dtype)
    narrowest = min(dtypes, key=lambda d: np.dtype(d).itemsize)
    abs_tol = _DEFAULT_TOL[narrowest] if abs_tol is None else abs_tol
    rel_tol = _DEFAULT_TOL[narrowest] if rel_tol is None else rel_tol
    out_fn = _compile(inputs, [out], mode)
    out_value = np.asarray(out_fn(*pt)[0])
    proj_dtype = out.type.dtype if out.type.dtype in continuous_dtypes else config.floatX
    proj = TensorType(proj_dtype, out_value.shape)("random_projection")
    cost = tm.sum(tm.mul(proj, out))
    cost_fn = _compile(inputs + [proj], [cost], mode)
    grads = grad(cost, inputs, disconnected_inputs="ignore")
    grad_fn = _compile(inputs + [proj], list(grads), mode)

    for _ in range(n_tests):
        r = np.asarray(rng.random(out_value.shape) + 0.5, dtype=proj_dtype)
        analytic = [np.asarray(g) for g in grad_fn(*pt, r)]
        for i, p in enumerate(pt):
            step = _DEFAULT_EPS[narrowest] if eps is None else eps
            numeric = np.zeros(p.shape, dtype="float64")
            for k in range(p.size):
                plus = [q.copy() for q in pt]
                minus = [q.copy() for q in pt]
                plus[i].flat[k] += step
                minus[i].flat[k] -= step
                h = float(plus[i].flat[k]) - float(minus[i].flat[k])
                fp = float(np.asarray(cost_fn(*plus, r)[0], dtype="float64"))
                fm = float(np.asarray(cost_fn(*minus, r)[0], dtype="float64"))
                numeric.flat[k] = (fp - fm) / h
            a = analytic[i].astype("float64")
            if a.shape != p.shape:
                raise GradientError(i, 0, p.shape, a.shape, p.shape, np.inf, np.inf, abs_tol, rel_tol)
            abs_err = np.abs(a - numeric)
            denom = np.abs(a) + np.abs(numeric)
            with np.errstate(all="ignore"):
                rel_err = np.where(denom > 0, abs_err / np.where(denom > 0, denom, 1), 0.0)
            bad = (abs_err > abs_tol) & (rel_err > rel_tol) | ~np.isfinite(a) & np.isfinite(numeric)
            if p.size and np.any(bad):
                pos = int(np.argmax(np.where(bad, abs_err, -1).ravel()))
                raise GradientError(
                    i, pos, p.shape, a.flat[pos], numeric.flat[pos],
                    float(np.nanmax(abs_err)), float(np.nanmax(rel_err)), abs_tol, rel_tol,
                )


