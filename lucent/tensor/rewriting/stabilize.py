"""Stabilisation rewrites: formulas that lose precision replaced by exact ones.

A naive formula can be mathematically right and numerically useless:
``log(1 + x)`` is ``0`` for ``x = 1e-20`` because ``1 + 1e-20`` rounds to
``1``; ``log(sigmoid(-800))`` is ``log(0) = -inf`` although the true value
is ``-800``. The rewrites here (registered in the ``stabilize`` stage, which
runs after ``canonicalize``) recognise such formulas and use the functions
that compute them without the intermediate rounding:

* ``log(1 + x)`` -> ``log1p(x)`` (``log(1 - x)`` -> ``log1p(-x)``);
* ``log1p(exp(x))`` -> ``softplus(x)``;
* ``exp(x) - 1`` -> ``expm1(x)``;
* ``log(sigmoid(x))`` -> ``-softplus(-x)``;
* ``log(1 - sigmoid(x))`` (also as ``log1p(-sigmoid(x))``) -> ``-softplus(x)``;
* ``log(sum(exp(x), axis))`` -> ``m + log(sum(exp(x - m), axis))`` with
  ``m = max(x, axis)`` (0 where ``m`` is infinite).

The patterns accept their operands in any order (``1 + x`` and ``x + 1``,
n-ary additions containing a 1, constants broadcast by ``DimShuffle``), so
they apply whether or not canonicalisation reordered the graph. Every
replacement is given exactly the type of the variable it replaces
(:func:`fit_type`).

The helpers at the top are shared with ``special`` and ``specialize``.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant
from lucent.graph.rewriting.basic import node_rewriter
from lucent.scalar import basic as ps
from lucent.scalar.dtypes import continuous_dtypes
from lucent.tensor import math as tm
from lucent.tensor.basic import as_tensor_variable, constant
from lucent.tensor.elemwise import DimShuffle, Elemwise, broadcast_static_shape
from lucent.tensor.reduction import Max, Sum
from lucent.tensor.rewriting.registry import register_stabilize


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------
def scalar_op_of(var, *classes):
    """The scalar op of ``var``'s owner if it is an ``Elemwise`` of ``classes``."""
    node = getattr(var, "owner", None)
    if node is None or not isinstance(node.op, Elemwise):
        return None
    if classes and not isinstance(node.op.scalar_op, classes):
        return None
    return node.op.scalar_op


def is_elemwise(var, *classes):
    """True if ``var`` is computed by an ``Elemwise`` whose scalar op is one of ``classes``."""
    return scalar_op_of(var, *classes) is not None


def constant_value(var):
    """The single value of ``var`` if it is a constant with one repeated value, else None.

    Looks through ``DimShuffle`` (which only adds or drops length-1 axes of a
    constant) and ``second(shape_source, c)``, the two ways a broadcast
    constant appears in a graph built by the tensor helpers or gradients.
    """
    while True:
        if isinstance(var, Constant):
            data = np.asarray(var.data)
            if data.size == 0 or data.dtype.kind not in "biuf":
                return None
            first = data.flat[0]
            if data.size > 1 and not np.all(data == first):
                return None
            return first.item()
        node = getattr(var, "owner", None)
        if node is None:
            return None
        if isinstance(node.op, DimShuffle):
            var = node.inputs[0]
        elif is_elemwise(var, ps.Second):
            var = node.inputs[1]
        else:
            return None


def is_constant(var, value):
    """True if ``var`` is a constant whose every element equals ``value``."""
    v = constant_value(var)
    return v is not None and v == value


def pad_left(x, ndim):
    """``x`` with length-1 axes added on the left up to ``ndim`` dimensions."""
    if x.type.ndim >= ndim:
        return x
    k = ndim - x.type.ndim
    return DimShuffle(x.type.ndim, ("x",) * k + tuple(range(x.type.ndim)))(x)


def fit_type(new, old, *shape_sources):
    """``new`` converted to exactly ``old``'s type.

    A rewrite that drops an operand (the ``1`` of ``log(1 + x)``) may drop
    a contribution to the broadcast shape: each of ``shape_sources`` that
    would widen ``new`` is put back with ``second(source, new)``. The dtype
    is then cast to ``old``'s; a static shape that is still less specific is
    completed by ``replace_validated`` with a checking ``SpecifyShape``.
    """
    new = as_tensor_variable(new)
    ndim = old.type.ndim
    new = pad_left(new, ndim)
    for src in shape_sources:
        src = as_tensor_variable(src)
        if src.type.ndim > ndim:
            continue
        src_shape = (1,) * (ndim - src.type.ndim) + tuple(src.type.shape)
        try:
            widened = broadcast_static_shape(tuple(new.type.shape), src_shape)
        except ValueError:
            continue
        if widened != tuple(new.type.shape):
            new = tm.second(src, new)
    if new.type.dtype != old.type.dtype:
        new = tm.cast(new, old.type.dtype)
    return new


def typed_constant(value, like):
    """A 0-d constant of ``like``'s dtype."""
    return constant(np.asarray(value, dtype=like.type.dtype))


def add_terms(var):
    """``var`` as a list of ``(sign, term)`` if it is an addition or a subtraction.

    ``a + b + c`` gives ``[(1, a), (1, b), (1, c)]`` and ``a - b`` gives
    ``[(1, a), (-1, b)]``; anything else gives None.
    """
    op = scalar_op_of(var)
    if isinstance(op, ps.Add):
        return [(1, t) for t in var.owner.inputs]
    if isinstance(op, ps.Sub):
        a, b = var.owner.inputs
        return [(1, a), (-1, b)]
    return None


def build_sum(terms, like):
    """Rebuild ``sum(sign * term)``; subtraction is used for negative terms."""
    pos = [t for s, t in terms if s > 0]
    neg = [t for s, t in terms if s < 0]
    if not pos:
        out = tm.neg(neg[0] if len(neg) == 1 else tm.add(*neg))
    else:
        out = pos[0] if len(pos) == 1 else tm.add(*pos)
        if neg:
            out = tm.sub(out, neg[0] if len(neg) == 1 else tm.add(*neg))
    return out


def negated(var):
    """``y`` if ``var`` is ``-y`` (``neg(y)`` or ``-1 * y``), else None."""
    if is_elemwise(var, ps.Neg):
        return var.owner.inputs[0]
    if is_elemwise(var, ps.Mul) and len(var.owner.inputs) == 2:
        a, b = var.owner.inputs
        if is_constant(a, -1):
            return b
        if is_constant(b, -1):
            return a
    return None


def _is_float(var):
    return var.type.dtype in continuous_dtypes


def removes_overflow(var):
    """Mark ``var`` as the finite value of an expression that may overflow (and return it).

    A stabilising replacement computes the same function, but where the old
    expression overflowed (``log(0) = -inf``, ``exp(800) = inf``) the new one
    is finite. DebugMode compares the two values with the comparison tagged
    here, which accepts any value where the old one is infinite or NaN.
    """
    from lucent.tensor.type import values_eq_approx_remove_inf_nan

    var.tag.values_eq_approx = values_eq_approx_remove_inf_nan
    return var


# ---------------------------------------------------------------------------
# log(1 + x) -> log1p(x)
# ---------------------------------------------------------------------------
@register_stabilize
@node_rewriter([Elemwise])
def local_log1p(fgraph, node):
    """``log(1 + x)`` -> ``log1p(x)``, ``log(1 - x)`` -> ``log1p(-x)``.

    Valid for every ``x``: both sides are the same function, but ``1 + x``
    rounds ``x`` away when ``|x|`` is below the float epsilon while
    ``log1p`` keeps it. Applies to additions in either operand order and to
    n-ary additions with one operand equal to 1 (``log(1 + a + b)`` ->
    ``log1p(a + b)``).
    """
    if not isinstance(node.op.scalar_op, ps.Log):
        return None
    (arg,) = node.inputs
    terms = add_terms(arg)
    if terms is None:
        return None
    for i, (sign, t) in enumerate(terms):
        if sign > 0 and is_constant(t, 1):
            rest = terms[:i] + terms[i + 1:]
            if not rest:
                return None
            new = tm.log1p(build_sum(rest, arg))
            return [fit_type(new, node.outputs[0], t)]
    return None


@register_stabilize
@node_rewriter([Elemwise])
def local_log1p_special(fgraph, node):
    """``log1p(exp(x))`` -> ``softplus(x)``; ``log1p(-sigmoid(x))`` -> ``-softplus(x)``.

    ``softplus(x) = log(1 + exp(x))`` by definition and is evaluated
    without overflowing ``exp``; ``1 - sigmoid(x) = sigmoid(-x)`` and
    ``log(sigmoid(-x)) = -softplus(x)``, so the result stays finite (about
    ``-x``) where ``sigmoid(x)`` rounds to 1.
    """
    if not isinstance(node.op.scalar_op, ps.Log1p):
        return None
    (arg,) = node.inputs
    out = node.outputs[0]
    if out.type.dtype.startswith("complex"):
        return None  # softplus is a real function
    if is_elemwise(arg, ps.Exp):
        return [removes_overflow(fit_type(tm.softplus(arg.owner.inputs[0]), out))]
    inner = negated(arg)
    if inner is not None and is_elemwise(inner, ps.Sigmoid):
        return [removes_overflow(fit_type(tm.neg(tm.softplus(inner.owner.inputs[0])), out))]
    return None


# ---------------------------------------------------------------------------
# log(sigmoid(x)) and log(1 - sigmoid(x))
# ---------------------------------------------------------------------------
@register_stabilize
@node_rewriter([Elemwise])
def local_log_sigmoid(fgraph, node):
    """``log(sigmoid(x))`` -> ``-softplus(-x)``; ``log(1 - sigmoid(x))`` -> ``-softplus(x)``.

    ``sigmoid(x) = 1 / (1 + exp(-x))``, so ``log(sigmoid(x)) =
    -log(1 + exp(-x)) = -softplus(-x)`` exactly; likewise ``1 - sigmoid(x) =
    sigmoid(-x)``. ``sigmoid(-800)`` underflows to 0 and ``1 - sigmoid(800)``
    rounds to 0, but ``softplus(800)`` is ``800``. A negated argument is
    folded (``log(sigmoid(-y))`` -> ``-softplus(y)``).
    """
    if not isinstance(node.op.scalar_op, ps.Log):
        return None
    (arg,) = node.inputs
    out = node.outputs[0]
    if is_elemwise(arg, ps.Sigmoid):
        x = arg.owner.inputs[0]
        y = negated(x)
        inner = y if y is not None else tm.neg(x)
        return [removes_overflow(fit_type(tm.neg(tm.softplus(inner)), out))]
    terms = add_terms(arg)
    if terms is None or len(terms) != 2:
        return None
    (s1, a), (s2, b) = terms
    for (sa, one), (sb, other) in (((s1, a), (s2, b)), ((s2, b), (s1, a))):
        if sa > 0 and is_constant(one, 1):
            if sb < 0 and is_elemwise(other, ps.Sigmoid):
                x = other.owner.inputs[0]
            elif sb > 0 and negated(other) is not None and is_elemwise(negated(other), ps.Sigmoid):
                x = negated(other).owner.inputs[0]
            else:
                continue
            return [removes_overflow(fit_type(tm.neg(tm.softplus(x)), out, one))]
    return None


# ---------------------------------------------------------------------------
# exp(x) - 1 -> expm1(x)
# ---------------------------------------------------------------------------
@register_stabilize
@node_rewriter([Elemwise])
def local_expm1(fgraph, node):
    """``exp(x) - 1`` -> ``expm1(x)`` (also ``exp(x) + (-1)`` and n-ary sums).

    Valid for every ``x``; ``exp(1e-20)`` rounds to 1 so the naive
    difference is 0, while ``expm1(1e-20) = 1e-20``. Only one ``exp`` term
    and one ``-1`` are combined; other terms of the sum are kept.
    """
    if not isinstance(node.op.scalar_op, (ps.Add, ps.Sub)):
        return None
    out = node.outputs[0]
    terms = add_terms(out)
    one_i = exp_i = None
    for i, (sign, t) in enumerate(terms):
        if one_i is None and ((sign < 0 and is_constant(t, 1)) or (sign > 0 and is_constant(t, -1))):
            one_i = i
        elif exp_i is None and sign > 0 and is_elemwise(t, ps.Exp):
            exp_i = i
    if one_i is None or exp_i is None:
        return None
    exp_var = terms[exp_i][1]
    new_term = tm.expm1(exp_var.owner.inputs[0])
    if exp_var.type.dtype != new_term.type.dtype:
        new_term = tm.cast(new_term, exp_var.type.dtype)
    rest = [(s, t) for i, (s, t) in enumerate(terms) if i not in (one_i, exp_i)]
    new = build_sum([(1, new_term)] + rest, out)
    return [fit_type(new, out, terms[one_i][1])]


# ---------------------------------------------------------------------------
# log(sum(exp(x))) -> stable logsumexp
# ---------------------------------------------------------------------------
def _stable_logsumexp(x, sum_op):
    """``m + log(sum(exp(x - m)))`` reduced like ``sum_op`` (no kept dims).

    ``m`` is the maximum over the reduced axes, replaced by 0 where it is
    infinite: a row of ``-inf`` then gives ``log(0) = -inf`` and a row
    containing ``+inf`` gives ``+inf``, as the naive formula does in NumPy.
    """
    axis = sum_op.axis
    nd = x.type.ndim
    axes = tuple(range(nd)) if axis is None else axis
    m = Max(axis=axes)(x)
    m = tm.switch(tm.eq(tm.abs(m), np.inf), typed_constant(0, m), m)
    keep = []
    j = 0
    for d in range(nd):
        if d in axes:
            keep.append("x")
        else:
            keep.append(j)
            j += 1
    m_b = DimShuffle(m.type.ndim, tuple(keep))(m)
    s = Sum(axis=axes, dtype=sum_op.dtype, acc_dtype=sum_op.acc_dtype)(tm.exp(tm.sub(x, m_b)))
    return tm.add(tm.log(s), m)


def _is_max_shifted(x):
    """True if ``x`` is already ``a - max(a)`` (the form this rewrite produces)."""
    if not is_elemwise(x, ps.Sub):
        return False
    a, m = x.owner.inputs
    while m.owner is not None and isinstance(m.owner.op, DimShuffle):
        m = m.owner.inputs[0]
    if is_elemwise(m, ps.Switch):
        m = m.owner.inputs[2]
    return m.owner is not None and isinstance(m.owner.op, Max) and m.owner.inputs[0] is a


@register_stabilize
@node_rewriter([Elemwise])
def local_log_sum_exp(fgraph, node):
    """``log(sum(exp(x), axis))`` -> ``max + log(sum(exp(x - max), axis))``.

    Subtracting the maximum ``m`` multiplies every ``exp`` by ``exp(-m)``,
    which the final ``+ m`` undoes exactly; afterwards the largest term is
    ``exp(0) = 1``, so the sum neither overflows (``x = 1000``) nor
    underflows to ``log(0)`` (``x = -1000``). Applies for any axes
    (including all of them), and with ``keepdims`` (a ``DimShuffle``
    between ``log`` and the sum, which commutes with the element-wise
    ``log``). Only floating-point ``x`` is handled.
    """
    if not isinstance(node.op.scalar_op, ps.Log):
        return None
    (arg,) = node.inputs
    out = node.outputs[0]
    shuffle = None
    s = arg
    if s.owner is not None and isinstance(s.owner.op, DimShuffle):
        shuffle = s.owner.op
        s = s.owner.inputs[0]
    if s.owner is None or type(s.owner.op) is not Sum:
        return None
    e = s.owner.inputs[0]
    if not is_elemwise(e, ps.Exp):
        return None
    x = e.owner.inputs[0]
    if not _is_float(e) or _is_max_shifted(x):
        return None
    if x.type.dtype != e.type.dtype:
        x = tm.cast(x, e.type.dtype)
    new = _stable_logsumexp(x, s.owner.op)
    if new.type.dtype != s.type.dtype:
        new = tm.cast(new, s.type.dtype)
    if shuffle is not None:
        new = DimShuffle(new.type.ndim, shuffle.new_order)(new)
    return [removes_overflow(fit_type(new, out))]


__all__ = [
    "local_log1p",
    "local_log1p_special",
    "local_log_sigmoid",
    "local_expm1",
    "local_log_sum_exp",
    "constant_value",
    "is_constant",
    "fit_type",
    "removes_overflow",
    "add_terms",
    "build_sum",
    "negated",
]
