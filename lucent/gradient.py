"""Reverse-mode automatic differentiation of lucent graphs.

``grad(cost, wrt)`` walks the graph from ``cost`` back to ``wrt`` in reverse
topological order. Each Apply node is asked, through its op's
``L_op(inputs, outputs, output_grads)``, for the gradient of the cost with
respect to its inputs given the gradients with respect to its outputs.
Contributions reaching a variable along several paths are added.

The result is again a symbolic graph, so gradients can be compiled,
optimised and differentiated again (``hessian``).

Two special types mark what is not an ordinary gradient:

* ``DisconnectedType``: the output does not depend on that input at all;
* ``NullType``: the gradient exists mathematically but is not defined or not
  implemented; using it is an error unless the caller asks for it back.

``verify_grad`` checks an op's symbolic gradient against finite differences.
"""

from __future__ import annotations

import warnings

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op
from lucent.graph.traversal import io_toposort
from lucent.graph.type import Type
from lucent.scalar.dtypes import continuous_dtypes, discrete_dtypes


class DisconnectedType(Type):
    """Type of a gradient that does not exist because there is no dependency."""

    def filter(self, data, strict=False, allow_downcast=None):
        raise AssertionError(
            "A DisconnectedType variable has no value: it only marks that an output does "
            "not depend on an input"
        )

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "DisconnectedType"


def disconnected_type():
    """A fresh variable marking a disconnected gradient."""
    return DisconnectedType()()


class NullType(Type):
    """Type of a gradient that is undefined or not implemented (``why_null`` says which)."""

    def __init__(self, why_null="(no explanation given)"):
        self.why_null = why_null

    def filter(self, data, strict=False, allow_downcast=None):
        raise ValueError(f"A NullType variable has no value: {self.why_null}")

    def __eq__(self, other):
        return type(self) is type(other) and self.why_null == other.why_null

    def __hash__(self):
        return hash((type(self), self.why_null))

    def __str__(self):
        return "NullType"


def grad_undefined(op, x_pos, x, comment=""):
    """The gradient of ``op`` wrt its input ``x_pos`` is mathematically undefined."""
    return NullType(
        f"This variable is Null because the grad method for input {x_pos} ({x}) of the "
        f"{op} op is mathematically undefined. {comment}"
    )()


def grad_not_implemented(op, x_pos, x, comment=""):
    """The gradient of ``op`` wrt its input ``x_pos`` exists but lucent does not compute it."""
    return NullType(
        f"This variable is Null because the grad method for input {x_pos} ({x}) of the "
        f"{op} op is not implemented. {comment}"
    )()


class DisconnectedInputError(ValueError):
    """``grad`` was asked for the gradient wrt a variable the cost does not use."""


class NullTypeGradError(TypeError):
    """A gradient needed by ``grad`` is undefined or not implemented."""


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


# ---------------------------------------------------------------------------
# Ops that only change the gradient
# ---------------------------------------------------------------------------
class _GradientBarrier(Op):
    """Identity on values (a view); subclasses say what the gradient becomes."""

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x):
        from lucent.tensor.basic import as_tensor_variable

        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]


class ZeroGrad(_GradientBarrier):
    """Passes values through; the gradient through it is zero."""

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.elemwise import _zeros_like

        return [_zeros_like(inputs[0])]


class DisconnectedGrad(_GradientBarrier):
    """Passes values through; for ``grad`` its input is not connected to its output."""

    def connection_pattern(self, node):
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        return [disconnected_type()]


_zero_grad = ZeroGrad()
_disconnected_grad = DisconnectedGrad()


def zero_grad(x):
    """``x`` itself, but its gradient is zero (it is treated as a constant)."""
    return _zero_grad(x)


def disconnected_grad(x):
    """``x`` itself, but ``grad`` considers the result independent of ``x``."""
    return _disconnected_grad(x)


# ---------------------------------------------------------------------------
# grad
# ---------------------------------------------------------------------------
def _is_disconnected(v):
    return isinstance(getattr(v, "type", None), DisconnectedType)


def _is_null(v):
    return isinstance(getattr(v, "type", None), NullType)


def _zeros_for(var):
    from lucent.tensor.elemwise import _zeros_like

    dtype = var.type.dtype if var.type.dtype in continuous_dtypes else config.floatX
    return _zeros_like(var, dtype)


def _connected_ancestors(outputs, blockers):
    """Variables on which ``outputs`` depend, following each op's connection pattern."""
    seen = set()
    stack = list(outputs)
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v.owner is None or v in blockers:
            continue
        node = v.owner
        pattern = node.op.connection_pattern(node)
        j = node.outputs.index(v)
        for i, inp in enumerate(node.inputs):
            if pattern[i][j] and inp not in seen:
                stack.append(inp)
    return seen


def grad(
    cost,
    wrt,
    consider_constant=None,
    disconnected_inputs="raise",
    add_names=True,
    known_grads=None,
    return_disconnected="zero",
    null_gradients="raise",
):
    """Symbolic gradient of the 0-d ``cost`` with respect to ``wrt``.

    Parameters
    ----------
    cost
        A 0-d variable, or None when ``known_grads`` gives the starting gradients.
    wrt
        A variable or a list/tuple of variables; the result has the same form.
    consider_constant
        Variables treated as constants: no gradient flows through them.
    disconnected_inputs
        What to do when the cost does not depend on an element of ``wrt``:
        ``'raise'`` (default), ``'warn'`` or ``'ignore'``.
    known_grads
        ``{variable: gradient}`` to start from, in addition to (or instead of) the cost.
    return_disconnected
        What to return for a disconnected ``wrt``: ``'zero'``, ``'none'`` or
        ``'disconnected'`` (a ``DisconnectedType`` variable).
    null_gradients
        ``'raise'`` if an undefined gradient is reached, ``'return'`` to return it.
    """
    from lucent.tensor.basic import as_tensor_variable, constant
    from lucent.tensor.elemwise import Elemwise
    from lucent.scalar import basic as ps

    if cost is None and not known_grads:
        raise AssertionError("grad needs a cost, or known_grads to start from")
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"disconnected_inputs must be 'raise', 'warn' or 'ignore', got {disconnected_inputs!r}")
    if return_disconnected not in ("zero", "none", "disconnected"):
        raise ValueError(f"return_disconnected must be 'zero', 'none' or 'disconnected', got {return_disconnected!r}")
    if null_gradients not in ("raise", "return"):
        raise ValueError(f"null_gradients must be 'raise' or 'return', got {null_gradients!r}")
    if cost is not None:
        if not isinstance(cost, Variable):
            raise TypeError(f"cost must be a Variable, got {cost!r}")
        if getattr(cost.type, "ndim", 0) != 0:
            raise TypeError(
                f"cost must be a scalar (0-d), got {cost} of type {cost.type}; "
                "take a sum or mean first, or pass known_grads"
            )

    single = not isinstance(wrt, (list, tuple))
    wrt_list = [wrt] if single else list(wrt)
    for w in wrt_list:
        if not isinstance(w, Variable):
            raise TypeError(f"grad: each wrt must be a Variable, got {w!r} ({type(w).__name__})")

    blockers = set(consider_constant or ())
    seeds: dict = {}
    if cost is not None:
        dtype = cost.type.dtype if cost.type.dtype in continuous_dtypes else config.floatX
        seeds[cost] = Elemwise(ps.second)(cost, constant(np.ones((), dtype=dtype)))
    for var, g in (known_grads or {}).items():
        if not isinstance(var, Variable):
            raise TypeError(f"known_grads keys must be Variables, got {var!r}")
        if not (_is_disconnected(g) or _is_null(g)):
            g = as_tensor_variable(g)
            if g.type.ndim != var.type.ndim:
                raise ValueError(f"known_grads[{var}] has {g.type.ndim} dimensions, {var} has {var.type.ndim}")
        seeds[var] = g

    outputs = list(seeds)
    connected = _connected_ancestors(outputs, blockers)
    # Forward pass: which variables depend on some wrt (prunes useless work).
    wrt_set = set(wrt_list)
    order = io_toposort(list(blockers | set(v for v in connected if v.owner is None)), outputs)
    depends = set(wrt_set)
    for node in order:
        if node.inputs and any(i in depends and i not in blockers for i in node.inputs):
            pattern = node.op.connection_pattern(node)
            for j, out in enumerate(node.outputs):
                if any(pattern[i][j] and inp in depends and inp not in blockers for i, inp in enumerate(node.inputs)):
                    depends.add(out)

    terms: dict = {}
    for var, g in seeds.items():
        terms.setdefault(var, []).append(g)

    def total(var):
        ts = terms.get(var)
        if not ts:
            return None
        nulls = [t for t in ts if _is_null(t)]
        if nulls:
            return nulls[0]
        ts = [t for t in ts if not _is_disconnected(t)]
        if not ts:
            return None
        if len(ts) == 1:
            return ts[0]
        return Elemwise(ps.add)(*ts)

    for node in reversed(order):
        if not any(o in depends for o in node.outputs) or not any(i in depends for i in node.inputs):
            continue
        out_grads = []
        for o in node.outputs:
            g = total(o)
            out_grads.append(disconnected_type() if g is None else g)
        if all(_is_disconnected(g) for g in out_grads):
            continue
        pattern = node.op.connection_pattern(node)
        null = next((g for g in out_grads if _is_null(g)), None)
        if null is not None:
            in_grads = [null] * len(node.inputs)
        else:
            in_grads = node.op.L_op(list(node.inputs), list(node.outputs), out_grads)
            if len(in_grads) != len(node.inputs):
                raise ValueError(
                    f"{node.op}.L_op returned {len(in_grads)} gradients for {len(node.inputs)} inputs"
                )
        for i, (inp, g) in enumerate(zip(node.inputs, in_grads)):
            if inp not in depends or inp in blockers or g is None or _is_disconnected(g):
                continue
            if not builtins_any(pattern[i]):
                continue
            if _is_null(g):
                terms.setdefault(inp, []).append(g)
                continue
            if getattr(inp.type, "dtype", None) in discrete_dtypes:
                continue  # integers carry no gradient; wrt integers get zeros below
            g = as_tensor_variable(g)
            if g.type.ndim != inp.type.ndim:
                raise ValueError(
                    f"{node.op}.L_op returned a gradient with {g.type.ndim} dimensions for input "
                    f"{i} ({inp}, type {inp.type}) which has {inp.type.ndim}"
                )
            if g.type.dtype != inp.type.dtype:
                from lucent.tensor.math import cast

                g = cast(g, inp.type.dtype)
            terms.setdefault(inp, []).append(g)

    results = []
    for w in wrt_list:
        if w not in connected:
            msg = (
                f"grad method was asked to compute the gradient with respect to a variable "
                f"that is not part of the computational graph of the cost, or is used only by "
                f"a non-differentiable operator: {w}. Pass disconnected_inputs='ignore' to "
                f"get a zero gradient for it (or 'warn' to be warned and get zeros)."
            )
            if disconnected_inputs == "raise":
                raise DisconnectedInputError(msg)
            if disconnected_inputs == "warn":
                warnings.warn(msg, stacklevel=2)
            if return_disconnected == "zero":
                results.append(_zeros_for(w))
            elif return_disconnected == "none":
                results.append(None)
            else:
                results.append(disconnected_type())
            continue
        g = total(w)
        if _is_null(g):
            if null_gradients == "raise":
                raise NullTypeGradError(f"grad encountered a NaN (undefined) gradient for {w}: {g.type.why_null}")
            results.append(g)
            continue
        if g is None or getattr(w.type, "dtype", None) in discrete_dtypes:
            g = _zeros_for(w)
        if add_names and cost is not None and cost.name and w.name and g.name is None:
            g.name = f"(d{cost.name}/d{w.name})"
        results.append(g)
    if single:
        return results[0]
    return tuple(results) if isinstance(wrt, tuple) else results


builtins_any = any


def _one_hot_sum(expr, index, like_dtype):
    """``expr.flatten()[index]`` written as ``sum(expr * onehot)`` (needs only Elemwise)."""
    from lucent.tensor import math as tm
    from lucent.tensor.basic import constant

    mask = np.zeros(expr.type.shape, dtype=expr.type.dtype)
    mask.flat[index] = 1
    return tm.sum(tm.mul(expr, constant(mask)))


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise"):
    """Jacobian of ``expression`` (shape S) wrt ``wrt``: one gradient per element.

    The result for each ``wrt`` has shape ``S + wrt.shape``. The number of
    elements of ``expression`` must be known statically, because the rows
    are built one by one.
    """
    from lucent.tensor import math as tm
    from lucent.tensor.basic import as_tensor_variable
    from lucent.tensor.elemwise import DimShuffle

    expression = as_tensor_variable(expression)
    single = not isinstance(wrt, (list, tuple))
    wrt_list = [wrt] if single else list(wrt)
    if expression.type.ndim == 0:
        out = grad(expression, wrt_list, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
        return out[0] if single else out
    if any(s is None for s in expression.type.shape):
        raise ValueError(
            f"jacobian needs the static shape of the expression to build one gradient per "
            f"element; {expression} has type {expression.type}. Use specify_shape first."
        )
    n = int(np.prod(expression.type.shape))
    rows = [
        grad(_one_hot_sum(expression, k, expression.type.dtype), wrt_list,
             consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
        for k in range(n)
    ]
    results = []
    for j, w in enumerate(wrt_list):
        parts = [DimShuffle(w.type.ndim, ("x",) + tuple(range(w.type.ndim)))(r[j]) for r in rows]
        stacked = _concat0(parts)
        if expression.type.ndim != 1:
            stacked = stacked.reshape(tuple(expression.type.shape) + tuple(w.shape[d] for d in range(w.type.ndim)))
        results.append(stacked)
    return results[0] if single else results


def _concat0(parts):
    """Concatenate along axis 0 tensors with a leading length-1 dimension."""
    from lucent.tensor import basic as tb

    concatenate = getattr(tb, "concatenate", None)
    if concatenate is not None:
        return concatenate(parts, axis=0)
    # Without concatenate: sum of one-hot placements, using only Elemwise.
    from lucent.tensor import math as tm
    from lucent.tensor.basic import constant

    n = len(parts)
    out = None
    for k, p in enumerate(parts):
        sel = np.zeros((n,) + (1,) * (p.type.ndim - 1), dtype=p.type.dtype)
        sel[k] = 1
        term = tm.mul(p, constant(sel))
        out = term if out is None else tm.add(out, term)
    return out


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """Hessian of the 0-d ``cost`` wrt each variable in ``wrt`` (vectors)."""
    single = not isinstance(wrt, (list, tuple))
    wrt_list = [wrt] if single else list(wrt)
    out = []
    for w in wrt_list:
        g = grad(cost, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
        if g.type.shape != w.type.shape:
            from lucent.tensor.shape import specify_shape

            g = specify_shape(g, w.type.shape)
        out.append(jacobian(g, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs))
    return out[0] if single else out


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


__all__ = [
    "grad", "jacobian", "hessian", "verify_grad", "zero_grad", "disconnected_grad",
    "DisconnectedType", "disconnected_type", "NullType", "grad_undefined", "grad_not_implemented",
    "DisconnectedInputError", "NullTypeGradError", "GradientError", "ZeroGrad", "DisconnectedGrad",
]
