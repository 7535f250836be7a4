"""Stabilisation of softmax formulas and of their gradients.

``softmax(x)`` rounds to exactly 0 wherever ``x`` is far below the row
maximum (``x = [1000, 0]`` gives ``[1, 0]``), so

* the cost ``-sum(y * log(softmax(x)))`` evaluates ``log(0) = -inf`` and
  ``0 * -inf = nan``;
* its gradient, built by ``grad`` from the naive graph, contains
  ``g / softmax(x)`` (``Log``'s derivative) multiplied back by
  ``softmax(x)`` (``Softmax``'s derivative ``(gz - sum(gz * sm)) * sm``):
  ``inf * 0 = nan``.

Three rewrites in the ``stabilize`` stage repair both:

* ``local_log_softmax``: ``log(softmax(x))`` -> ``log_softmax(x)``, also
  through indexing (``log(softmax(x)[i, labels])`` ->
  ``log_softmax(x)[i, labels]``) and ``DimShuffle``;
* ``local_mul_cancel_reciprocal``: in a product, a factor ``s`` and a factor
  ``1 / s`` cancel when ``s`` is a strictly positive function output whose
  zeros and infinities only come from rounding (``softmax``, ``exp``,
  ``sigmoid``): mathematically ``s * (1 / s) = 1``, and it is exactly the
  limit the rounded values should have given;
* ``local_mul_distribute_softmax``: ``(a - b) * s`` -> ``a * s - b * s``
  when ``a`` (or any term of an n-ary sum) contains ``1 / s``, so that the
  cancellation above can apply to that term.

Together they turn the softmax gradient of the cross-entropy into the stable
form ``g - softmax(x) * sum(g)`` (``g`` the gradient with respect to
``log(softmax(x))``), and the cost into one using ``log_softmax``.

``local_exp_over_sum_exp`` recognises the written-out softmax
``exp(x) / sum(exp(x), axis)`` and computes it with ``Softmax``.

The last section stabilises logarithms of special functions:
``log1p(-exp(x))`` -> ``log1mexp(x)``, ``log(erfc(x))`` through ``erfcx``,
``log(gamma(x))`` -> ``gammaln(x)`` and ``log(exp(a) + exp(b))`` ->
``logaddexp(a, b)``.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.rewriting.basic import node_rewriter
from lucent.scalar import basic as ps
from lucent.tensor import math as tm
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.rewriting.registry import register_stabilize
from lucent.tensor.rewriting.stabilize import (
    add_terms,
    build_sum,
    fit_type,
    is_elemwise,
    negated,
    removes_overflow,
    typed_constant,
)
from lucent.tensor.special import LogSoftmax, Softmax
from lucent.tensor.subtensor import AdvancedSubtensor, AdvancedSubtensor1, Subtensor

_INDEXING = (Subtensor, AdvancedSubtensor, AdvancedSubtensor1)


# ---------------------------------------------------------------------------
# log(softmax(x)) -> log_softmax(x)
# ---------------------------------------------------------------------------
@register_stabilize
@node_rewriter([Elemwise])
def local_log_softmax(fgraph, node):
    """``log(softmax(x, axis))`` -> ``log_softmax(x, axis)``.

    The two are equal; ``log_softmax`` computes ``x - max - log(sum(exp(x -
    max)))`` and so stays finite (about ``-1000``) where the softmax rounds
    to 0. ``log`` is element-wise, so it commutes with indexing and with
    ``DimShuffle``: ``log(softmax(x)[idx])`` becomes
    ``log_softmax(x)[idx]`` with the same indexing op (the cross-entropy of
    integer labels ``-log(softmax(x))[arange(n), labels]``).
    """
    if not isinstance(node.op.scalar_op, ps.Log):
        return None
    (arg,) = node.inputs
    wrappers = []
    v = arg
    while v.owner is not None and isinstance(v.owner.op, _INDEXING + (DimShuffle,)):
        wrappers.append(v.owner)
        v = v.owner.inputs[0]
    if v.owner is None or not isinstance(v.owner.op, Softmax):
        return None
    x = v.owner.inputs[0]
    new = LogSoftmax(v.owner.op.axis)(x)
    if new.type.dtype != v.type.dtype:
        new = tm.cast(new, v.type.dtype)
    for w in reversed(wrappers):
        new = w.op(new, *w.inputs[1:])
    return [removes_overflow(fit_type(new, node.outputs[0]))]


# ---------------------------------------------------------------------------
# exp(x) / sum(exp(x), axis) -> softmax(x, axis)
# ---------------------------------------------------------------------------
def _summed_back_axes(den, ndim):
    """``(sum node, axes)`` if ``den`` is a sum over ``axes`` broadcast back along
    exactly those axes (keepdims, or length-1 axes put back in their places), else None."""
    from lucent.tensor.reduction import Sum

    if den.owner is None or not isinstance(den.owner.op, DimShuffle):
        return None
    order = tuple(den.owner.op.new_order)
    summed = den.owner.inputs[0]
    if summed.owner is None or not isinstance(summed.owner.op, Sum) or len(order) != ndim:
        return None
    axes = tuple(range(ndim)) if summed.owner.op.axis is None else tuple(summed.owner.op.axis)
    kept = [d for d in range(ndim) if d not in axes]
    if [o for o in order if o != "x"] != list(range(len(kept))):
        return None
    if tuple(d for d, o in enumerate(order) if o == "x") != axes:
        return None
    return summed.owner, axes


@register_stabilize
@node_rewriter([Elemwise])
def local_exp_over_sum_exp(fgraph, node):
    """``exp(x) / sum(exp(x), axis)`` (broadcast back along ``axis``) -> ``softmax(x, axis)``.

    The same function; the written-out form overflows to ``inf / inf = nan``
    as soon as an element of ``x`` exceeds about 709 (88 in float32), where
    ``Softmax`` subtracts the maximum first. The denominator may sum over
    several axes or all of them.
    """
    if not isinstance(node.op.scalar_op, ps.TrueDiv):
        return None
    num, den = node.inputs
    if not is_elemwise(num, ps.Exp):
        return None
    found = _summed_back_axes(den, num.type.ndim)
    if found is None:
        return None
    sum_node, axes = found
    inner = sum_node.inputs[0]
    x = num.owner.inputs[0]
    if inner is not num and not (is_elemwise(inner, ps.Exp) and inner.owner.inputs[0] is x):
        return None
    if x.type.ndim != num.type.ndim or x.type.dtype.startswith("complex"):
        return None
    new = Softmax(None if len(axes) == x.type.ndim else axes)(x)
    return [removes_overflow(fit_type(new, node.outputs[0]))]


# ---------------------------------------------------------------------------
# s * (1 / s) -> 1 for softmax-like s
# ---------------------------------------------------------------------------
def _cancellable(var):
    """True for outputs of positive functions whose 0 / inf values are roundings."""
    if var.owner is None:
        return False
    if isinstance(var.owner.op, Softmax):
        return True
    return is_elemwise(var, ps.Exp, ps.Sigmoid)


def mul_factors(var, depth=8):
    """``var`` as ``(sign, [(factor, power)])`` with powers +1 / -1.

    Looks through nested products, ``true_div``, ``reciprocal`` and ``neg``
    (a negation becomes a sign), so ``-(a * (1 / s)) * s`` gives
    ``(-1, [(a, 1), (s, -1), (s, 1)])``.
    """
    if depth > 0 and var.owner is not None and isinstance(var.owner.op, Elemwise):
        op = var.owner.op.scalar_op
        ins = var.owner.inputs
        if isinstance(op, ps.Mul):
            sign, out = 1, []
            for i in ins:
                s, f = mul_factors(i, depth - 1)
                sign *= s
                out += f
            return sign, out
        if isinstance(op, ps.TrueDiv):
            sa, fa = mul_factors(ins[0], depth - 1)
            sb, fb = mul_factors(ins[1], depth - 1)
            return sa * sb, fa + [(f, -p) for f, p in fb]
        if isinstance(op, ps.Reciprocal):
            s, f = mul_factors(ins[0], depth - 1)
            return s, [(v, -p) for v, p in f]
        if isinstance(op, ps.Neg):
            s, f = mul_factors(ins[0], depth - 1)
            return -s, f
    return 1, [(var, 1)]


def build_product(sign, factors, like):
    """The product ``sign * prod(f ** p)`` (``1`` of ``like``'s dtype when empty)."""
    num = [f for f, p in factors if p > 0]
    den = [f for f, p in factors if p < 0]
    if num:
        out = num[0] if len(num) == 1 else tm.mul(*num)
    else:
        out = None
    if den:
        d = den[0] if len(den) == 1 else tm.mul(*den)
        out = tm.reciprocal(d) if out is None else tm.true_div(out, d)
    if out is None:
        out = typed_constant(1, like)
    if sign < 0:
        out = tm.neg(out)
    return out


def _cancel(factors):
    """``factors`` without one pair ``s``, ``1 / s`` (cancellable ``s``); None if none."""
    for i, (f, p) in enumerate(factors):
        if p != 1 or not _cancellable(f):
            continue
        for j, (g, q) in enumerate(factors):
            if q == -1 and g is f:
                return f, [fp for k, fp in enumerate(factors) if k not in (i, j)]
    return None


@register_stabilize
@node_rewriter([Elemwise])
def local_mul_cancel_reciprocal(fgraph, node):
    """``a * (1 / s) * s`` -> ``a`` for ``s = softmax(x)``, ``exp(x)`` or ``sigmoid(x)``.

    ``s * (1 / s) = 1`` wherever ``s`` is finite and non-zero. For these
    functions the true value is always finite and positive; a computed 0
    or ``inf`` is an under- or overflow, for which the naive product gives
    ``nan`` and the cancelled form the correct limit. The gradient of
    ``log(softmax(x))`` is the main beneficiary. The product may be spread
    over nested ``mul`` / ``true_div`` / ``reciprocal`` / ``neg`` nodes.
    """
    if not isinstance(node.op.scalar_op, (ps.Mul, ps.TrueDiv)):
        return None
    out = node.outputs[0]
    if out.type.dtype not in ("float16", "float32", "float64"):
        return None
    sign, factors = mul_factors(out)
    found = _cancel(factors)
    if found is None:
        return None
    s, rest = found
    new = _keep_nan_of_argument(s, build_product(sign, rest, out), out)
    return [removes_overflow(fit_type(new, out, s))]


def _keep_nan_of_argument(s, cancelled, out):
    """``cancelled``, but NaN where the naive ``s / s`` is NaN because of ``s``'s argument.

    The cancellation is meant for over- and underflow of a finite argument.
    A NaN or infinite argument is not a rounding: ``exp(inf) / exp(inf)``,
    ``exp(-inf) / exp(-inf)`` and ``sigmoid(-inf) / sigmoid(-inf)`` are NaN
    in NumPy and stay NaN here (``sigmoid(inf) = 1`` cancels exactly).
    The guard is an element-wise comparison, fused into the same loop.
    ``softmax`` is left unguarded: a ``-inf`` logit is how entries are
    masked out, and its gradient is meant to be finite there.
    """
    if isinstance(s.owner.op, Softmax):
        return cancelled
    (arg,) = s.owner.inputs
    inf = typed_constant(np.inf, arg)
    if is_elemwise(s, ps.Exp):
        ok = tm.lt(tm.abs(arg), inf)  # finite
    else:
        ok = tm.gt(arg, tm.neg(inf))  # not NaN, not -inf
    return tm.switch(ok, cancelled, typed_constant(np.nan, out))


@register_stabilize
@node_rewriter([Elemwise])
def local_mul_distribute_softmax(fgraph, node):
    """``(a - b) * s`` -> ``a * s - b * s`` when ``a`` contains ``1 / s``.

    Distributivity is exact in real arithmetic. It is applied only where it
    lets ``local_mul_cancel_reciprocal`` remove ``s * (1 / s)`` from a term
    (``s`` a softmax, ``exp`` or ``sigmoid`` output), which is the shape of
    ``Softmax``'s gradient ``(gz - sum(gz * s)) * s`` when ``gz = g / s``
    comes from ``log``. Sums and differences with any number of terms, in
    any order, are handled; the other factors of the product multiply every
    term.
    """
    if not isinstance(node.op.scalar_op, ps.Mul):
        return None
    out = node.outputs[0]
    if out.type.dtype not in ("float16", "float32", "float64"):
        return None
    ins = list(node.inputs)
    for k, a in enumerate(ins):
        terms = add_terms(a)
        if terms is None:
            continue
        others = ins[:k] + ins[k + 1:]
        other_factors = [fp for o in others for fp in mul_factors(o)[1]]
        positive = [f for f, p in other_factors if p == 1 and _cancellable(f)]
        if not positive:
            continue
        hit = False
        for _, t in terms:
            _, tf = mul_factors(t)
            if any(p == -1 and any(f is s for s in positive) for f, p in tf):
                hit = True
                break
        if not hit:
            continue
        new_terms = [(sgn, tm.mul(t, *others)) for sgn, t in terms]
        new = build_sum(new_terms, out)
        return [removes_overflow(fit_type(new, out, *others))]
    return None


__all__ = [
    "local_log_softmax",
    "local_mul_cancel_reciprocal",
    "local_mul_distribute_softmax",
    "mul_factors",
    "build_product",
]


# ---------------------------------------------------------------------------
# Logarithms of special functions
# ---------------------------------------------------------------------------
def _arg_of(var, cls):
    """The argument of ``var`` if it is ``Elemwise(cls)(x)``, else None."""
    return var.owner.inputs[0] if is_elemwise(var, cls) else None


@register_stabilize
@node_rewriter([Elemwise])
def local_log1mexp(fgraph, node):
    """``log1p(-exp(x))`` and ``log(-expm1(x))`` -> ``log1mexp(x)``.

    ``log1p(-exp(x))`` loses all digits as ``x`` approaches 0 from below
    (``exp(x)`` rounds to 1) and ``log(-expm1(x))`` loses them for very
    negative ``x`` (``expm1(x)`` rounds to -1); ``log1mexp`` switches
    between the two at ``log(1/2)``. (``log(1 - exp(x))`` reaches the first
    form through ``local_log1p``.)
    """
    scalar_op = node.op.scalar_op
    out = node.outputs[0]
    if out.type.dtype.startswith("complex"):
        return None  # log1mexp is a real function
    if isinstance(scalar_op, ps.Log1p):
        inner = negated(node.inputs[0])
        x = _arg_of(inner, ps.Exp) if inner is not None else None
    elif isinstance(scalar_op, ps.Log):
        inner = negated(node.inputs[0])
        x = _arg_of(inner, ps.Expm1) if inner is not None else None
    else:
        return None
    if x is None:
        return None
    return [removes_overflow(fit_type(tm.log1mexp(x), out))]


@register_stabilize
@node_rewriter([Elemwise])
def local_log_erfc(fgraph, node):
    """``log(erfc(x))`` -> ``log(erfcx(x)) - x**2`` for ``x > 0``.

    ``erfc(x)`` underflows to 0 near ``x = 27`` (``log`` then gives
    ``-inf``), while ``erfcx(x) = exp(x**2) erfc(x)`` stays near
    ``1 / (x sqrt(pi))``: the identity is exact, so the result is finite for
    every positive ``x``. For ``x <= 0`` (where ``erfcx`` overflows) it is
    ``log1p(erf(-x))``, since ``erfc(x) = 1 + erf(-x)``.
    """
    if not isinstance(node.op.scalar_op, ps.Log):
        return None
    x = _arg_of(node.inputs[0], ps.Erfc)
    if x is None:
        return None
    out = node.outputs[0]
    stable = tm.sub(tm.log(tm.erfcx(x)), tm.sqr(x))
    # erfc(x) = 1 + erf(-x) for x <= 0 (in [1, 2]: no cancellation).
    new = tm.switch(tm.gt(x, 0), stable, tm.log1p(tm.erf(tm.neg(x))))
    return [removes_overflow(fit_type(new, out))]


@register_stabilize
@node_rewriter([Elemwise])
def local_log_gamma(fgraph, node):
    """``log(gamma(x))`` -> ``gammaln(x)`` where ``gamma(x) > 0``.

    ``gamma`` overflows past ``x = 171.6``, ``gammaln`` does not. ``gammaln``
    is ``log(|gamma(x)|)``, so it is used where ``gamma(x) >= 0`` and NaN is
    kept where ``gamma`` is negative, as ``log`` gives.
    """
    if not isinstance(node.op.scalar_op, ps.Log):
        return None
    x = _arg_of(node.inputs[0], ps.Gamma)
    if x is None:
        return None
    out = node.outputs[0]
    # log(gamma(x)) is log|gamma(x)| where gamma(x) >= 0 and NaN where it is
    # negative or NaN; for x > 0 gamma is positive (its overflow is harmless).
    new = tm.switch(tm.ge(node.inputs[0], 0), tm.gammaln(x), np.nan)
    return [removes_overflow(fit_type(new, out))]


def _max_shifted(var):
    """Whether ``var`` is ``x - switch(...)``: an argument shifted by ``logaddexp``'s guarded max."""
    return is_elemwise(var, ps.Sub) and is_elemwise(var.owner.inputs[1], ps.Switch)


@register_stabilize
@node_rewriter([Elemwise])
def local_log_add_exp(fgraph, node):
    """``log(exp(a) + exp(b) + ...)`` -> ``logaddexp(a, b, ...)``.

    The naive sum overflows once any argument passes about 709 (float64);
    ``logaddexp`` factors the largest argument out first.
    """
    if not isinstance(node.op.scalar_op, ps.Log):
        return None
    terms = add_terms(node.inputs[0])
    if terms is None or len(terms) < 2 or any(s < 0 or not is_elemwise(t, ps.Exp) for s, t in terms):
        return None
    if all(_max_shifted(t.owner.inputs[0]) for _, t in terms):
        return None  # already the inside of a stable logaddexp
    from lucent.tensor.special import logaddexp

    out = node.outputs[0]
    new = logaddexp(*[t.owner.inputs[0] for _, t in terms])
    return [removes_overflow(fit_type(new, out, *[t for _, t in terms]))]
