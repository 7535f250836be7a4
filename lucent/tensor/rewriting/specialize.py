"""Specialisation rewrites: general ops replaced by faster special cases.

These run in the ``specialize`` stage, after canonicalisation and
stabilisation, because the special forms are harder for the earlier
rewrites to see through:

* ``local_pow_specialize``: ``x ** 2`` -> ``sqr(x)``, ``x ** 0.5`` ->
  ``sqrt(x)``, ``x ** -1`` -> ``reciprocal(x)`` (and ``x ** 1``,
  ``x ** -2``, ``x ** -0.5``), for constant exponents given as a number or
  as an array of one repeated value;
* ``local_sum_mul_to_dot``: ``sum(x * y)`` of two vectors -> ``dot(x, y)``;
  ``sum(A * v[None, :], axis=1)`` -> ``dot(A, v)`` and ``sum(A * v[:, None],
  axis=0)`` -> ``dot(v, A)``;
* ``local_dot_to_blas``: ``dot`` by operand ranks -> ``Dot22`` (matrix ·
  matrix) or ``Gemv`` (matrix · vector, vector · matrix);
* ``local_gemm_fold``: ``b * Z + a * dot(X, Y)`` -> ``Gemm``, ``b * y + a *
  dot(A, x)`` -> ``Gemv`` and ``A + a * outer(x, y)`` -> ``Ger``;
* ``local_blas_inplace`` (``inplace`` stage): the accumulating BLAS ops
  overwrite their accumulator when the in-place machinery allows it.
"""

from __future__ import annotations

from lucent.graph.rewriting.basic import node_rewriter
from lucent.scalar import basic as ps
from lucent.tensor import math as tm
from lucent.tensor.basic import zeros
from lucent.tensor.blas import Dot22, Gemm, Gemv, Ger
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.math import Dot
from lucent.tensor.reduction import Sum
from lucent.tensor.rewriting.registry import register_inplace, register_specialize
from lucent.tensor.rewriting.stabilize import (
    add_terms,
    build_sum,
    constant_value,
    fit_type,
    is_constant,
    typed_constant,
)
from lucent.tensor.rewriting.special import mul_factors
from lucent.tensor.shape import shape_i

_BLAS_DTYPES = ("float32", "float64")


# ---------------------------------------------------------------------------
# x ** c
# ---------------------------------------------------------------------------
@register_specialize
@node_rewriter([Elemwise])
def local_pow_specialize(fgraph, node):
    """``x ** c`` for a constant ``c`` in {2, 0.5, -1, 1, -2, -0.5} -> a cheaper op.

    ``pow`` is a general ``exp(c * log(x))``-style computation; ``sqr``,
    ``sqrt`` and ``reciprocal`` compute the same values (they are exactly
    rounded where ``pow`` may not be) faster. ``x`` is cast to the result
    dtype first, so ``int8 ** 2.0`` squares in float and cannot overflow.
    Exponents that make an integer result from a negative or fractional
    power (which NumPy rejects) are left alone. An exponent array whose
    shape widens the result is kept as a broadcast shape source.
    """
    if not isinstance(node.op.scalar_op, ps.Pow):
        return None
    x, c = node.inputs
    out = node.outputs[0]
    value = constant_value(c)
    if value is None:
        return None
    is_float = out.type.dtype in ("float16", "float32", "float64")
    xc = tm.cast(x, out.type.dtype)
    if value == 2:
        new = tm.sqr(xc)
    elif value == 1:
        new = xc
    elif not is_float:
        return None
    elif value == 0.5:
        new = tm.sqrt(xc)
    elif value == -1:
        new = tm.reciprocal(xc)
    elif value == -2:
        new = tm.reciprocal(tm.sqr(xc))
    elif value == -0.5:
        new = tm.reciprocal(tm.sqrt(xc))
    else:
        return None
    return [fit_type(new, out, c)]


# ---------------------------------------------------------------------------
# sum(x * y) -> dot
# ---------------------------------------------------------------------------
def _vector_of(var):
    """``(v, kind)`` if ``var`` is a 1-d ``v`` as a row ``(1, n)`` or a column ``(n, 1)``."""
    node = var.owner
    if node is None or not isinstance(node.op, DimShuffle) or node.op.input_ndim != 1:
        return None
    if node.op.new_order == ("x", 0):
        return node.inputs[0], "row"
    if node.op.new_order == (0, "x"):
        return node.inputs[0], "col"
    return None


def _float_same(*vars_):
    dtypes = {v.type.dtype for v in vars_}
    return len(dtypes) == 1 and dtypes.pop() in _BLAS_DTYPES


@register_specialize
@node_rewriter([Sum])
def local_sum_mul_to_dot(fgraph, node):
    """``sum(x * y)`` -> ``dot(x, y)`` where the sum of products is a dot product.

    * two vectors of one length (neither broadcast), summed entirely;
    * ``A * v[None, :]`` summed over axis 1: ``sum_j A[i, j] v[j] = dot(A, v)[i]``;
    * ``A * v[:, None]`` summed over axis 0: ``sum_i v[i] A[i, j] = dot(v, A)[j]``.

    Only for operands of one float dtype that also is the sum's dtype, and
    only when the product has no other use (else it is computed anyway).
    """
    if type(node.op) is not Sum:
        return None
    (p,) = node.inputs
    out = node.outputs[0]
    if p.owner is None or not isinstance(p.owner.op, Elemwise) or not isinstance(p.owner.op.scalar_op, ps.Mul):
        return None
    if len(p.owner.inputs) != 2 or len(fgraph.clients.get(p, ())) > 1:
        return None
    a, b = p.owner.inputs
    if not _float_same(a, b, out):
        return None
    axes = tuple(range(p.type.ndim)) if node.op.axis is None else node.op.axis
    if p.type.ndim == 1:
        if a.type.ndim != 1 or b.type.ndim != 1:
            return None
        if (a.type.shape[0] == 1) != (b.type.shape[0] == 1):
            return None
        return [fit_type(tm.dot(a, b), out)]
    if p.type.ndim != 2 or len(axes) != 1:
        return None
    (axis,) = axes
    for A, other in ((a, b), (b, a)):
        found = _vector_of(other)
        if found is None or _vector_of(A) is not None:
            continue
        v, kind = found
        if A.type.shape[axis] == 1 and v.type.shape[0] != 1:
            continue  # A is broadcast along the summed axis: not a dot
        if kind == "row" and axis == 1:
            return [fit_type(tm.dot(A, v), out)]
        if kind == "col" and axis == 0:
            return [fit_type(tm.dot(v, A), out)]
    return None


# ---------------------------------------------------------------------------
# dot -> BLAS ops
# ---------------------------------------------------------------------------
def _zero_vector(length_of, axis, dtype):
    return zeros((shape_i(length_of, axis),), dtype=dtype)


@register_specialize
@node_rewriter([Dot])
def local_dot_to_blas(fgraph, node):
    """``dot`` by ranks: (2, 2) -> ``Dot22``; (2, 1) and (1, 2) -> ``Gemv``.

    ``dot(A, x)`` is ``Gemv(y, 1, A, x, 0)`` for any ``y`` (``beta = 0``
    means ``y`` is not read) and ``dot(x, B) = dot(B.T, x)``. Vector · vector
    stays a ``Dot``. Operands are cast to the result dtype (``dot`` upcasts
    them the same way); only float32 / float64 results are specialised.
    """
    a, b = node.inputs
    out = node.outputs[0]
    dtype = out.type.dtype
    if dtype not in _BLAS_DTYPES:
        return None
    a, b = tm.cast(a, dtype), tm.cast(b, dtype)
    na, nb = a.type.ndim, b.type.ndim
    one, zero = typed_constant(1, out), typed_constant(0, out)
    if na == 2 and nb == 2:
        new = Dot22()(a, b)
    elif na == 2 and nb == 1:
        new = Gemv()(_zero_vector(a, 0, dtype), one, a, b, zero)
    elif na == 1 and nb == 2:
        new = Gemv()(_zero_vector(b, 1, dtype), one, b.T, a, zero)
    else:
        return None
    return [fit_type(new, out)]


# ---------------------------------------------------------------------------
# b * Z + a * dot(X, Y) -> Gemm / Gemv;  A + a * outer(x, y) -> Ger
# ---------------------------------------------------------------------------
def _is_scalar_like(var, ndim):
    return var.type.ndim <= ndim and all(s == 1 for s in var.type.shape)


def _to_scalar(var, dtype):
    """A 0-d version of a tensor whose every dimension has static length 1.

    A ``DimShuffle`` that only broadcast a 0-d tensor is looked through
    rather than undone by a second one.
    """
    while var.type.ndim and var.owner is not None and isinstance(var.owner.op, DimShuffle):
        var = var.owner.inputs[0]
    if var.type.ndim:
        var = DimShuffle(var.type.ndim, ())(var)
    return tm.cast(var, dtype)


def _scale(sign, scalars, dtype, like):
    """``sign * prod(scalars)`` as a 0-d tensor of ``dtype``."""
    if scalars:
        s = _to_scalar(scalars[0] if len(scalars) == 1 else tm.mul(*scalars), dtype)
    else:
        s = typed_constant(1, like)
    return tm.neg(s) if sign < 0 else s


def _split_scaled(term, out):
    """``(sign, scalars, cores)`` with ``term = sign * prod(scalars) * prod(cores)``.

    ``cores`` are the factors that are not scalar-like (one for a product
    or an accumulator, two for an outer product); None if a factor is a
    division (a ``1 / a`` scale would need a reciprocal anyway).
    """
    sign, factors = mul_factors(term)
    if any(p != 1 for _, p in factors):
        return None
    scalars = [f for f, _ in factors if _is_scalar_like(f, out.type.ndim)]
    cores = [f for f, _ in factors if not _is_scalar_like(f, out.type.ndim)]
    if not 1 <= len(cores) <= 2:
        return None
    return sign, scalars, cores


def _single_use(fgraph, var):
    return len(fgraph.clients.get(var, ())) <= 1


def _product_of(fgraph, core):
    """``(kind, operands, alpha)`` if ``core`` is a matrix/vector product with one use."""
    node = core.owner
    if node is None or not _single_use(fgraph, core):
        return None
    if isinstance(node.op, Dot22) or (isinstance(node.op, Dot) and [i.type.ndim for i in node.inputs] == [2, 2]):
        return "gemm", list(node.inputs), None
    if isinstance(node.op, Gemv) and is_constant(node.inputs[4], 0):
        return "gemv", [node.inputs[2], node.inputs[3]], node.inputs[1]
    if isinstance(node.op, Dot) and [i.type.ndim for i in node.inputs] == [2, 1]:
        return "gemv", list(node.inputs), None
    return None


def _outer_of(cores):
    """``(x, y)`` if ``cores`` are ``x[:, None]`` and ``y[None, :]`` (the form of ``outer``)."""
    if len(cores) != 2:
        return None
    p, q = (_vector_of(c) for c in cores)
    if p is None or q is None:
        return None
    if p[1] == "col" and q[1] == "row":
        return p[0], q[0]
    if p[1] == "row" and q[1] == "col":
        return q[0], p[0]
    return None


@register_specialize
@node_rewriter([Elemwise])
def local_gemm_fold(fgraph, node):
    """Fold the accumulation around a product into one BLAS call.

    In a sum (or difference) of terms, a term ``a * P`` where ``P`` is a
    matrix-matrix (``Dot22``) or matrix-vector (``Gemv`` with ``beta = 0``)
    product used only here, and another term ``b * Z`` with ``Z`` of the
    result's exact shape, become ``Gemm(Z, a, X, Y, b)`` /
    ``Gemv(Z, a, A, x, b)``: the same arithmetic, with ``Z`` accumulated by
    the BLAS routine instead of a separate elementwise pass. A term
    ``a * outer(x, y)`` with a matrix term ``A`` becomes ``Ger(A, a, x,
    y)``. ``a`` and ``b`` are products of scalar-like factors (0-d or all
    lengths 1) and signs. Other terms of the sum are kept. All operands
    must share the result's float dtype, and ``Z`` must not be broadcast.
    """
    if not isinstance(node.op.scalar_op, (ps.Add, ps.Sub)):
        return None
    out = node.outputs[0]
    dtype = out.type.dtype
    if dtype not in _BLAS_DTYPES or out.type.ndim not in (1, 2):
        return None
    terms = add_terms(out)
    split = [_split_scaled(t, out) for _, t in terms]
    for i, sp in enumerate(split):
        if sp is None:
            continue
        sign_i, scal_i, cores = sp
        sign_i *= terms[i][0]
        prod = _product_of(fgraph, cores[0]) if len(cores) == 1 else None
        outer = None if prod is not None else _outer_of(cores)
        if prod is None and outer is None:
            continue
        for j, sq in enumerate(split):
            if j == i or sq is None:
                continue
            sign_j, scal_j, z_cores = sq
            if len(z_cores) != 1:
                continue
            (Z,) = z_cores
            sign_j *= terms[j][0]
            if Z.type.dtype != dtype or Z.type.ndim != out.type.ndim:
                continue
            if tuple(s == 1 for s in Z.type.shape) != tuple(s == 1 for s in out.type.shape):
                continue
            if outer is not None:
                if out.type.ndim != 2 or scal_j or sign_j < 0:
                    continue
                x, y = outer
                if not _float_same(x, y, Z):
                    continue
                new = Ger()(Z, _scale(sign_i, scal_i, dtype, out), x, y)
            else:
                kind, operands, alpha0 = prod
                if not _float_same(*operands, Z):
                    continue
                alpha = _scale(sign_i, scal_i, dtype, out)
                if alpha0 is not None:
                    alpha = tm.mul(alpha, alpha0)
                beta = _scale(sign_j, scal_j, dtype, out)
                if kind == "gemm" and out.type.ndim == 2:
                    new = Gemm()(Z, alpha, *operands, beta)
                elif kind == "gemv" and out.type.ndim == 1:
                    new = Gemv()(Z, alpha, *operands, beta)
                else:
                    continue
            rest = [terms[k] for k in range(len(terms)) if k not in (i, j)]
            result = build_sum([(1, new)] + rest, out)
            return [fit_type(result, out)]
    return None


# ---------------------------------------------------------------------------
# In place
# ---------------------------------------------------------------------------
@register_inplace
@node_rewriter([Gemm, Gemv, Ger], inplace=True)
def local_blas_inplace(fgraph, node):
    """Make ``Gemm`` / ``Gemv`` / ``Ger`` overwrite their accumulator.

    Valid when nothing else needs the accumulator's value afterwards; the
    ``DestroyHandler`` checks that (and that it is not a protected input or
    constant) and rejects the replacement otherwise. A graph input qualifies
    only when the function allows overwriting it: a shared variable whose
    update this is (``W - lr * dot(x.T, g)`` then runs in ``W``'s buffer).
    """
    op = node.op
    if isinstance(op, Ger):
        if op.destructive:
            return None
        new_op = Ger(destructive=True)
    else:
        if op.inplace:
            return None
        new_op = type(op)(inplace=True)
    acc = node.inputs[0]
    if acc.owner is None and acc not in getattr(fgraph, "destroyable_inputs", ()):
        return None
    return [new_op(*node.inputs)]


__all__ = [
    "local_pow_specialize",
    "local_sum_mul_to_dot",
    "local_dot_to_blas",
    "local_gemm_fold",
    "local_blas_inplace",
]
