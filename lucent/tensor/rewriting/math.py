"""Canonical algebra: one way of writing each element-wise expression.

Two expressions that compute the same thing should, after this stage, be
the same graph, so that merging finds them and the later stages
(stabilisation, specialisation, fusion) have one pattern to look for
instead of many. The rewrites here:

* drop neutral elements (``x * 1``, ``x + 0``, ``x - 0``, ``x / 1``,
  ``x ** 1``, ``x // 1`` for integers) and double negations;
* flatten nested ``add`` / ``mul`` into one n-ary node, order its operands
  by a structural key (so ``a + b`` and ``b + a`` are one node) and combine
  its constant operands into one constant, written last;
* turn a division by a power of two into a multiplication by its
  reciprocal, which is bit-identical and cheaper;
* write a matrix product ``a @ b`` of two matrices as ``dot(a, b)``, so
  that ``@`` and ``dot`` merge and both reach the BLAS specialisations
  (``Dot22``, folding into ``Gemm``);
* merge a reduction of a reduction of the same kind (``sum(sum(x, 1))``)
  into one.

Each rewrite is exact except for the reassociation of floating-point sums
and products (``(a + b) + c`` versus ``a + (b + c)``), the freedom every
optimising compiler of array programs takes. Rewrites that would change
what an intermediate result's dtype is (mixing dtypes in one ``add``) do not
apply, so integer overflow behaves as written.
"""

from __future__ import annotations

import hashlib
import warnings
from collections import Counter
from functools import reduce

import numpy as np

from lucent.graph.basic import Constant
from lucent.graph.rewriting.basic import node_rewriter
from lucent.scalar import basic as ps
from lucent.scalar.dtypes import float_dtypes, integer_dtypes
from lucent.tensor.basic import constant
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.math import MatMul, cast, dot
from lucent.tensor.reduction import CAReduce
from lucent.tensor.rewriting.basic import fit_to_output, is_elemwise, scalar_fill_value
from lucent.tensor.rewriting.registry import register_canonicalize

_add = Elemwise(ps.add)
_mul = Elemwise(ps.mul)
_sub = Elemwise(ps.sub)
_neg = Elemwise(ps.neg)


def _is_value(var, value):
    """True if every element of ``var`` is known to equal ``value``."""
    v = scalar_fill_value(var)
    if v is None:
        return False
    with np.errstate(all="ignore"):
        return bool(v == value) and not (np.issubdtype(v.dtype, np.floating) and np.isnan(v))


def _single_client(fgraph, var):
    clients = fgraph.clients.get(var, ())
    return len(clients) == 1 and clients[0][0] != "output"


# --------------------------------------------------------------------------- #
# Neutral elements and negation
# --------------------------------------------------------------------------- #
@node_rewriter([Elemwise])
def local_neutral_elements(fgraph, node):
    """Remove operands that do not change the result.

    ``x + 0``, ``0 + x``, ``x * 1``, ``1 * x``, ``x - 0``, ``x / 1``,
    ``x ** 1`` and, for integers, ``x // 1`` equal ``x`` for every ``x``
    (NaN and infinities included); ``0 - x`` is ``-x``. The dropped operand
    may have given the output its dtype or broadcast shape, which
    ``fit_to_output`` restores (``cast``, ``alloc`` or ``second``).
    """
    op = node.op.scalar_op
    out = node.outputs[0]
    inputs = node.inputs
    if isinstance(op, (ps.Add, ps.Mul)) and len(inputs) >= 1:
        neutral = 0 if isinstance(op, ps.Add) else 1
        flags = [_is_value(i, neutral) for i in inputs]
        dropped = [i for i, f in zip(inputs, flags) if f]
        if not dropped or len(dropped) == len(inputs):
            return False
        kept = [i for i, f in zip(inputs, flags) if not f]
        # The n-ary op combines its operands pairwise in order; keep the
        # dtype of every partial result by requiring the output dtype.
        if len(kept) > 1 and any(
            i.type.dtype != out.type.dtype for i in kept if not isinstance(i, Constant)
        ):
            return False
        new = kept[0] if len(kept) == 1 else node.op(*kept)
        return [fit_to_output(new, out, dropped)]
    if isinstance(op, ps.Sub):
        x, y = inputs
        if _is_value(y, 0):
            return [fit_to_output(x, out, [y])]
        if _is_value(x, 0):
            # Negate in the output dtype: -(-128) wraps in int8, not in float64.
            return [fit_to_output(_neg(cast(y, out.type.dtype)), out, [x])]
        return False
    if isinstance(op, ps.TrueDiv) and _is_value(inputs[1], 1):
        return [fit_to_output(inputs[0], out, [inputs[1]])]
    if isinstance(op, ps.Pow) and _is_value(inputs[1], 1):
        return [fit_to_output(inputs[0], out, [inputs[1]])]
    if isinstance(op, ps.IntDiv) and out.type.dtype in integer_dtypes and _is_value(inputs[1], 1):
        return [fit_to_output(inputs[0], out, [inputs[1]])]
    return False


@node_rewriter([Elemwise])
def local_double_negation(fgraph, node):
    """``-(-x)`` is ``x``: negation is its own inverse, also for wrapping integers."""
    if not isinstance(node.op.scalar_op, ps.Neg):
        return False
    (y,) = node.inputs
    if is_elemwise(y, ps.Neg):
        return [fit_to_output(y.owner.inputs[0], node.outputs[0])]
    return False


@node_rewriter([Elemwise])
def local_sub_neg_to_add(fgraph, node):
    """``x - (-y)`` is ``x + y``: negation is exact for floats and modular for
    integers, so this holds when the negation has the subtraction's dtype."""
    if not isinstance(node.op.scalar_op, ps.Sub):
        return False
    x, y = node.inputs
    if not is_elemwise(y, ps.Neg) or y.type.dtype != node.outputs[0].type.dtype:
        return False  # -y wrapping in a narrower integer dtype is not +y
    return [fit_to_output(_add(x, y.owner.inputs[0]), node.outputs[0])]


@node_rewriter([Elemwise])
def local_neg_mul_constant(fgraph, node):
    """``-(x * c)`` and ``(-x) * c`` are ``x * (-c)`` for a constant ``c``.

    Changing the sign of one factor is exact, so the negation moves into the
    constant, where it costs nothing.
    """
    op = node.op.scalar_op
    out = node.outputs[0]
    dtype = out.type.dtype
    if isinstance(op, ps.Neg):
        (y,) = node.inputs
        if not is_elemwise(y, ps.Mul) or not _single_client(fgraph, y) or y.type.dtype != dtype:
            return False
        factors = list(y.owner.inputs)
    elif isinstance(op, ps.Mul):
        factors = list(node.inputs)
    else:
        return False
    if dtype.startswith(("uint", "bool")):
        return False
    consts = [i for i, f in enumerate(factors) if isinstance(f, Constant)]
    if not consts or any(f.type.dtype != dtype for f in factors if not isinstance(f, Constant)):
        return False
    negs = None
    if isinstance(op, ps.Mul):
        # the structural test first: most products with a constant have no negated factor
        negs = [i for i, f in enumerate(factors) if is_elemwise(f, ps.Neg) and _single_client(fgraph, f)
                and f.owner.inputs[0].type.dtype == dtype]
        if not negs:
            return False
    k = consts[-1]
    value = _exact_constant(factors[k], dtype)
    if value is None:
        return False
    with np.errstate(all="ignore"):
        negated = constant(np.negative(value).astype(dtype))
    if negs is None:
        factors[k] = negated
        return [fit_to_output(y.owner.op(*factors), out)]
    factors[negs[0]] = factors[negs[0]].owner.inputs[0]
    factors[k] = negated
    return [fit_to_output(node.op(*factors), out)]


register_canonicalize(local_neutral_elements)
register_canonicalize(local_double_negation)
register_canonicalize(local_sub_neg_to_add)
register_canonicalize(local_neg_mul_constant)


# --------------------------------------------------------------------------- #
# Flattening, ordering and constants of add / mul
# --------------------------------------------------------------------------- #
#: How many levels of ancestors the structural key looks at. Deeper
#: differences are rare in the operands of one ``add``; bounding the depth
#: keeps the key cheap on long chains (its cost does not grow with the graph).
KEY_DEPTH = 6


def structural_key(var, fgraph, memo, depth=KEY_DEPTH):
    """A key equal for variables computed the same way from the same inputs.

    Graph inputs are identified by their position, constants by their type
    and shape, and computed variables by their op and their inputs' keys,
    ``depth`` levels up. The key is a digest, so it is the same in every
    process (sorting by it gives a deterministic graph, which the on-disk
    kernel cache relies on). Constants' values are left out: the order of a
    graph must not change with its numbers, or the same model with another
    constant would be fused into other kernels and compiled again (ties
    keep the order the graph was built in).
    """
    key = memo.get((var, depth))
    if key is not None:
        return key
    if isinstance(var, Constant):
        text = f"c|{var.type}|{np.shape(var.data)}"
    elif var.owner is None:
        try:
            pos = fgraph.inputs.index(var)
        except ValueError:
            pos = -1
        text = f"i|{pos}|{var.type}|{var.name}"
    else:
        node = var.owner
        op = node.op
        props = getattr(op, "__props__", ())
        parts = [type(op).__name__, str(op), *(str(getattr(op, p, None)) for p in props), str(var.index)]
        if depth > 0:
            parts += [structural_key(i, fgraph, memo, depth - 1) for i in node.inputs]
        text = "n|" + "|".join(parts)
    key = hashlib.sha1(text.encode()).hexdigest()
    memo[(var, depth)] = key
    return key


def _coarse_order_key(var, fgraph):
    """Operands of every shape first, then those broadcast along more dimensions.

    Within that: graph inputs in their order, computed operands (then
    ordered by their structural key, see ``_canonical_operand_order``),
    constants last. Ranking by broadcasting first makes the same
    computation on differently-built operands come out in one order
    (``x @ W1 + b1`` and ``b2 + h @ W2`` both as matrix + row), so fusion
    makes one element-wise kernel of both instead of two mirror images.
    """
    broadcast = sum(var.type.broadcastable)
    if isinstance(var, Constant):
        return (broadcast, 2, 0)
    if var.owner is None and var in fgraph.inputs:
        return (broadcast, 0, fgraph.inputs.index(var))
    return (broadcast, 1, 0)


def _canonical_operand_order(operands, fgraph):
    """``operands`` sorted by ``_coarse_order_key``, computed operands it ties by their structural key.

    The structural key (a digest of a few levels of ancestors) is worked out
    only for the computed operands that tie, usually none: an ``add`` of a
    product and a bias ties nothing, and computing keys was the largest
    cost of a rewriting pass. The order is the one a full key would give.
    """
    coarse = [_coarse_order_key(var, fgraph) for var in operands]
    ties = Counter(key for key in coarse if key[1] == 1)
    memo = {}
    keyed = [
        (key + (structural_key(var, fgraph, memo) if ties[key] > 1 else "",), var)
        for key, var in zip(coarse, operands)
    ]
    return [var for _, var in sorted(keyed, key=lambda pair: pair[0])]


def _exact_constant(c, dtype):
    """``c``'s data in ``dtype`` if the conversion keeps every value, else None."""
    data = np.asarray(c.data)
    if data.dtype.kind == "c" and np.dtype(dtype).kind != "c" and np.any(data.imag != 0):
        return None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # imaginary parts are all 0 here
        converted = data.astype(dtype)
        back = converted.astype(data.dtype)
    same = (back == data) | (np.isnan(data) & np.isnan(back) if data.dtype.kind in "fc" else False)
    return converted if np.all(same) else None


def _absorbable(fgraph, var, op, out):
    """True if ``var`` (an operand of a node of ``op`` computing ``out``) can be
    merged into that node: same op, used only there, and all of its
    operands already in ``out``'s dtype (so no partial result changes dtype)."""
    return (
        var.owner is not None
        and var.owner.op == op
        and var.type.dtype == out.type.dtype
        and var.type.ndim == out.type.ndim
        and _single_client(fgraph, var)
        and all(i.type.dtype == out.type.dtype for i in var.owner.inputs if not isinstance(i, Constant))
    )


@node_rewriter([Elemwise])
def local_add_mul_flatten(fgraph, node):
    """``(a + b) + c`` is ``a + b + c`` (one n-ary node; same for ``mul``).

    Only an inner node used by nobody else is absorbed (otherwise its work
    would be done twice), and only when it has the outer node's dtype, so
    that no intermediate result changes dtype. A whole tree is flattened at
    once, from its root, so a long chain costs one replacement, not one per
    link.
    """
    op = node.op.scalar_op
    if not isinstance(op, (ps.Add, ps.Mul)) or node.op.destroy_map:
        return False
    out = node.outputs[0]
    clients = fgraph.clients.get(out, ())
    if len(clients) == 1 and clients[0][0] != "output" and clients[0][0].op == node.op:
        if _absorbable(fgraph, out, node.op, clients[0][0].outputs[0]):
            return False  # the parent will absorb this whole subtree
    if any(i.type.dtype != out.type.dtype for i in node.inputs if not isinstance(i, Constant)):
        return False
    new_inputs = []
    stack = list(reversed(node.inputs))
    changed = False
    while stack:
        inp = stack.pop()
        if _absorbable(fgraph, inp, node.op, out):
            stack.extend(reversed(inp.owner.inputs))
            changed = True
        else:
            new_inputs.append(inp)
    if not changed:
        return False
    return [fit_to_output(node.op(*new_inputs), out)]


@node_rewriter([Elemwise])
def local_add_mul_canonical_order(fgraph, node):
    """Operands of ``add`` / ``mul`` in a canonical order, constants combined.

    Both ops are commutative and associative, so any order computes the same
    value (up to the rounding of reassociated floating-point operations).
    Graph inputs come first in their order, then computed operands by their
    structural key, then one constant (all constants combined in the
    output dtype). Applies only when every non-constant operand already has
    the output dtype, so that reordering cannot change the dtype in which
    partial results are computed.
    """
    op = node.op.scalar_op
    if not isinstance(op, (ps.Add, ps.Mul)) or node.op.destroy_map:
        return False
    out = node.outputs[0]
    dtype = out.type.dtype
    inputs = list(node.inputs)
    if dtype == "bool":
        return False
    consts = [i for i in inputs if isinstance(i, Constant)]
    others = [i for i in inputs if not isinstance(i, Constant)]
    if any(i.type.dtype != dtype for i in others):
        return False
    if len(others) < 2 and (not consts or (len(consts) == 1 and consts[0].type.dtype == dtype)):
        # at most one computed operand and one constant of the output dtype: nothing to reorder
        # unless the constant is not last
        if not consts or inputs[-1] is consts[0]:
            return False
    others_sorted = _canonical_operand_order(others, fgraph)
    new_consts = consts
    if len(consts) > 1 or (consts and consts[0].type.dtype != dtype):
        values = [_exact_constant(c, dtype) for c in consts]
        if any(v is None for v in values):
            return False
        ufunc = np.add if isinstance(op, ps.Add) else np.multiply
        with np.errstate(all="ignore"):
            combined = np.asarray(reduce(ufunc, values), dtype=dtype)
        new_consts = [constant(combined)]
    new_inputs = others_sorted + new_consts
    if len(new_inputs) == len(inputs) and all(a is b for a, b in zip(new_inputs, inputs)):
        return False
    if len(new_inputs) == 1:
        return [fit_to_output(new_inputs[0], out, consts)]
    return [fit_to_output(node.op(*new_inputs), out, consts)]


register_canonicalize(local_add_mul_flatten)
register_canonicalize(local_add_mul_canonical_order)


# --------------------------------------------------------------------------- #
# Division by a power of two
# --------------------------------------------------------------------------- #
def _exact_reciprocal(c, dtype):
    """``1 / c`` in ``dtype`` when every entry of ``c`` is a power of two whose
    reciprocal is representable there (then ``x / c == x * (1 / c)`` exactly:
    both are the correctly rounded value of the same real number)."""
    with np.errstate(all="ignore"):
        data = np.asarray(c.data).astype(dtype)
        if data.size == 0 or not np.all(np.isfinite(data)) or np.any(data == 0):
            return None
        mantissa, _ = np.frexp(data)
        if not np.all(np.abs(mantissa) == 0.5):
            return None
        recip = (np.asarray(1, dtype=dtype) / data).astype(dtype)
        if not np.all(np.isfinite(recip)) or not np.all(np.abs(np.frexp(recip)[0]) == 0.5):
            return None
        if not np.all(recip * data == 1):
            return None
    return recip


@node_rewriter([Elemwise])
def local_div_by_power_of_two(fgraph, node):
    """``x / c`` is ``x * (1 / c)`` when ``c`` is a constant power of two.

    Multiplying by the exact reciprocal gives bit-identical results and
    lets the factor combine with other constants of a product.
    """
    if not isinstance(node.op.scalar_op, ps.TrueDiv):
        return False
    x, c = node.inputs
    out = node.outputs[0]
    if not isinstance(c, Constant) or out.type.dtype not in float_dtypes:
        return False
    recip = _exact_reciprocal(c, out.type.dtype)
    if recip is None:
        return False
    new = _mul(x, constant(recip))
    if new.type.dtype != out.type.dtype:
        return False
    return [fit_to_output(new, out, [c])]


register_canonicalize(local_div_by_power_of_two)


@node_rewriter([MatMul])
def local_matmul_to_dot(fgraph, node):
    """``a @ b`` of two matrices -> ``dot(a, b)`` (the same product, one spelling)."""
    a, b = node.inputs
    if a.type.ndim != 2 or b.type.ndim != 2:
        return None
    new = fit_to_output(dot(a, b), node.outputs[0])
    return None if new is None else [new]


register_canonicalize(local_matmul_to_dot)


@node_rewriter([CAReduce])
def local_reduce_chain(fgraph, node):
    """``sum(sum(x, axis=1))`` -> ``sum(x)``: a reduction of a reduction of the same kind is one reduction.

    One pass over ``x`` instead of two, and one kernel instead of two. The
    inner reduction must be read by nothing else (otherwise its result is
    computed anyway), be of the same class and scalar op, and produce its
    values in the dtype the merged reduction accumulates in with the same
    ``acc_dtype``: an inner reduction that narrows (``sum(x, dtype="int8")``)
    wraps or rounds at a point the merged one would not, so it stays. The
    sums are then added in another order, which changes floating-point
    rounding only.
    """
    (inner,) = node.inputs
    inner_node = inner.owner
    if inner_node is None or type(inner_node.op) is not type(node.op):
        return None
    outer_op, inner_op = node.op, inner_node.op
    if outer_op.scalar_op != inner_op.scalar_op or outer_op.acc_dtype != inner_op.acc_dtype:
        return None
    if len(fgraph.clients.get(inner, ())) != 1:
        return None
    (x,) = inner_node.inputs
    if outer_op.axis is None or inner_op.axis is None:
        axis = None
    else:
        # the outer axes number the dimensions the inner reduction left
        kept = [d for d in range(x.type.ndim) if d not in inner_op.axis]
        axis = tuple(sorted(set(inner_op.axis) | {kept[a] for a in outer_op.axis}))
        if len(axis) == x.type.ndim:
            axis = None
    new = outer_op.clone(axis=axis)(x)
    if new.type != node.outputs[0].type or inner.type.dtype != new.type.dtype:
        return None
    return [new]


register_canonicalize(local_reduce_chain)


__all__ = [
    "structural_key",
    "local_neutral_elements",
    "local_double_negation",
    "local_sub_neg_to_add",
    "local_neg_mul_constant",
    "local_add_mul_flatten",
    "local_add_mul_canonical_order",
    "local_div_by_power_of_two",
    "local_matmul_to_dot",
    "local_reduce_chain",
]
