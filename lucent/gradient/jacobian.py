"""Jacobians, Hessians and Hessian-vector products, built from ``grad`` and ``pullback``."""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Variable
from lucent.gradient.reverse import _as_list_or_tuple, grad, pullback
from lucent.scalar.dtypes import continuous_dtypes

# ---------------------------------------------------------------------------
# Jacobians and Hessians
# ---------------------------------------------------------------------------
def _one_hot_sum(expr, index, like_dtype):
    """``expr.flatten()[index]`` written as ``sum(expr * onehot)`` (needs only Elemwise)."""
    from lucent.tensor import math as tm
    from lucent.tensor.basic import constant

    mask = np.zeros(expr.type.shape, dtype=expr.type.dtype)
    mask.flat[index] = 1
    return tm.sum(tm.mul(expr, constant(mask)))


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise", vectorize=False):
    """Jacobian of ``expression`` (shape S) wrt each of ``wrt``: shape ``S + wrt.shape``.

    With ``vectorize=True`` the Jacobian is one graph: the pull-back of a
    single row of the flattened expression, vectorized (``vectorize_graph``)
    over the rows of an identity matrix. Otherwise the rows are built one by
    one, which needs the number of elements of ``expression`` statically;
    when it is not known, the vectorized form is used as well. The result
    has the form of ``wrt``.
    """
    from lucent.tensor.basic import as_tensor_variable

    if not isinstance(expression, Variable):
        raise TypeError(f"jacobian expects a Variable as `expression`, got {type(expression).__name__}")
    expression = as_tensor_variable(expression)
    using_list, using_tuple = isinstance(wrt, list), isinstance(wrt, tuple)
    wrt_list = list(wrt) if isinstance(wrt, (list, tuple)) else [wrt]
    grad_kwargs = {"consider_constant": consider_constant, "disconnected_inputs": disconnected_inputs}

    if all(expression.type.broadcastable):
        jacs = grad(expression.squeeze(), wrt_list, **grad_kwargs)
    elif vectorize:
        jacs = _jacobian_vectorized(expression, wrt_list, grad_kwargs)
    elif any(s is None for s in expression.type.shape):
        jacs = _jacobian_scan(expression, wrt_list, grad_kwargs)
    else:
        jacs = _jacobian_by_rows(expression, wrt_list, grad_kwargs)
    jacs = list(jacs)
    for j, (jac, w) in enumerate(zip(jacs, wrt_list)):
        if jac.type.ndim < expression.type.ndim + w.type.ndim:
            jacs[j] = jac.reshape(_static_or_symbolic_shape(expression) + _static_or_symbolic_shape(w))
    return _as_list_or_tuple(using_list, using_tuple, jacs)


def _static_or_symbolic_shape(x):
    return tuple(s if s is not None else x.shape[d] for d, s in enumerate(x.type.shape))


def _jacobian_vectorized(expression, wrt_list, grad_kwargs):
    from lucent.graph.replace import vectorize_graph
    from lucent.tensor.creation import Alloc, eye

    flat = expression.flatten()
    dtype = flat.type.dtype if flat.type.dtype in continuous_dtypes else config.floatX
    from lucent.tensor.type import TensorType

    row_tangent = TensorType(dtype, flat.type.shape)("row_tangent")
    rows = pullback(flat, wrt_list, row_tangent, **grad_kwargs)
    n_rows = flat.type.shape[0] if flat.type.shape[0] is not None else flat.shape[0]
    jacs = vectorize_graph(rows, replace={row_tangent: eye(n_rows, dtype=dtype)})
    # A row that does not depend on the tangent (a disconnected input's zeros)
    # is not batched by vectorize_graph: repeat it for every row.
    for j, (row, jac) in enumerate(zip(rows, jacs)):
        if row.type.ndim == jac.type.ndim:
            jacs[j] = Alloc()(jac, n_rows, *[jac.shape[d] for d in range(jac.type.ndim)])
    return jacs


def _jacobian_scan(expression, wrt_list, grad_kwargs):
    """One row per element of ``expression`` when their number is known only at run time.

    A ``scan`` over the indices of the flattened expression computes the
    gradient of one element per step, so the graph stays the size of one row.
    """
    from lucent.scan.basic import scan
    from lucent.tensor.creation import arange

    flat = expression.flatten()

    def row(idx, flat_expr, *wrt):
        return [grad(flat_expr[idx], w, **grad_kwargs) for w in wrt]

    jacs = scan(
        row,
        sequences=[arange(flat.shape[0])],
        non_sequences=[flat, *wrt_list],
        return_list=True,
        return_updates=False,
    )
    return jacs


def _jacobian_by_rows(expression, wrt_list, grad_kwargs):
    from lucent.tensor.elemwise import DimShuffle

    n = int(np.prod(expression.type.shape))
    rows = [grad(_one_hot_sum(expression, k, expression.type.dtype), wrt_list, **grad_kwargs) for k in range(n)]
    results = []
    for j, w in enumerate(wrt_list):
        parts = [DimShuffle(w.type.ndim, ("x",) + tuple(range(w.type.ndim)))(r[j]) for r in rows]
        results.append(_concat0(parts))
    return results


def _concat0(parts):
    """Concatenate along axis 0 tensors with a leading length-1 dimension."""
    from lucent.tensor.basic import concatenate

    return concatenate(parts, axis=0)


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """Hessian of the 0-d ``cost`` wrt each vector of ``wrt`` (same form as ``wrt``)."""
    if not isinstance(cost, Variable):
        raise TypeError(f"hessian expects a Variable as `cost`, got {type(cost).__name__}")
    if cost.type.ndim != 0:
        raise ValueError(f"hessian expects a 0 dimensional variable as `cost`, got {cost.type.ndim} dimensions")
    using_list, using_tuple = isinstance(wrt, list), isinstance(wrt, tuple)
    wrt_list = list(wrt) if isinstance(wrt, (list, tuple)) else [wrt]
    out = []
    for w in wrt_list:
        if not isinstance(w, Variable):
            raise TypeError(f"hessian expects a (list of) Variable as `wrt`, got {type(w).__name__}")
        if w.type.ndim != 1:
            raise ValueError(f"hessian expects a (list of) 1 dimensional variable as `wrt`, got {w} of type {w.type}")
        g = grad(cost, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
        if g.type.shape != w.type.shape and w.type.shape[0] is not None:
            from lucent.tensor.shape import specify_shape

            g = specify_shape(g, w.type.shape)
        # The gradient may not depend on w even when the cost does (a linear cost).
        out.append(jacobian(g, w, consider_constant=consider_constant, disconnected_inputs="ignore"))
    return _as_list_or_tuple(using_list, using_tuple, out)


def hessian_vector_product(cost, wrt, p, **grad_kwargs):
    """The Hessian of ``cost`` wrt ``wrt`` times the vector(s) ``p``, by two reverse passes.

    ``grad(sum_k <grad(cost, wrt[k]), p[k]>, wrt)``: never builds the
    Hessian. ``grad_kwargs`` go to both ``grad`` calls.
    """
    wrt_list = list(wrt) if isinstance(wrt, (list, tuple)) else [wrt]
    p_list = list(p) if isinstance(p, (list, tuple)) else [p]
    if len(wrt_list) != len(p_list):
        raise ValueError(f"hessian_vector_product needs one p per wrt: got {len(wrt_list)} wrt and {len(p_list)} p")
    from lucent.tensor.math import add

    grads = grad(cost, wrt=wrt_list, **grad_kwargs)
    terms = [(g * v).sum() for g, v in zip(grads, p_list)]
    inner = add(*terms) if len(terms) > 1 else terms[0]
    hp = grad(inner, wrt=wrt_list, **grad_kwargs)
    if isinstance(wrt, Variable):
        return hp[0]
    return hp


