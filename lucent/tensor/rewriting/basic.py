"""Canonicalisation of structure: constant folding and ops that do nothing.

Gradients and the user-facing helpers build graphs with many nodes that
compute nothing new: a ``Squeeze`` undoing an ``ExpandDims``, a ``Cast`` to
the dtype the value already has, a ``fill`` of a value that already has the
target's shape, a ``SpecifyShape`` repeating what the type already says.
Removing them early makes every later stage (merge, fusion, in-place) see a
smaller, more regular graph.

Every rewrite here returns a variable whose type equals (or refines) the
replaced output's type: the framework rejects anything else, so a rewrite
that would change the broadcast shape or the dtype either restores it
explicitly (``second`` / ``alloc`` / ``cast``) or does not apply.

The helpers at the top (``scalar_fill_value``, ``fit_to_output``) are shared
with the algebraic rewrites of ``lucent.tensor.rewriting.math``.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant
from lucent.graph.rewriting.basic import MergeRewriter, node_rewriter
from lucent.graph.rewriting.db import canonicalize_db
from lucent.scalar import basic as ps
from lucent.scalar.basic import ScalarType
from lucent.tensor.basic import Alloc, TensorCopy, alloc, constant
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.rewriting.registry import register_canonicalize, register_specialize, register_stabilize
from lucent.tensor.shape import Shape, Shape_i, SpecifyShape, _is_none_const, specify_shape
from lucent.tensor.type import TensorType

#: Constant folding never creates a constant with more elements than this
#: when the result is larger than its inputs (``alloc(0, 10**4, 10**4)``
#: must stay a cheap instruction, not become a 800 MB literal).
MAX_FOLDED_SIZE = 4096


# --------------------------------------------------------------------------- #
# Shared helpers
# --------------------------------------------------------------------------- #
def is_elemwise(var, scalar_op_class):
    """True if ``var`` is computed by an ``Elemwise`` of ``scalar_op_class``."""
    return (
        var.owner is not None
        and isinstance(var.owner.op, Elemwise)
        and isinstance(var.owner.op.scalar_op, scalar_op_class)
    )


def scalar_fill_value(var):
    """The single value every element of ``var`` has, if known when the graph is built.

    Looks through constants (all entries equal), ``DimShuffle`` / ``alloc``
    / ``second`` of such a value, and ``Cast`` of it. Returns a 0-d array
    (of ``var``'s dtype) or ``None``. Used to recognise neutral elements
    written as ``zeros_like(x)``, ``ones((3, 4))`` and broadcast constants.
    """
    for _ in range(8):
        if isinstance(var, Constant):
            data = np.asarray(var.data)
            if data.size == 0:
                return None
            flat = data.reshape(-1)
            first = flat[0]
            if data.size > 1 and not np.all(flat == first):
                return None
            return np.asarray(first, dtype=var.type.dtype)
        node = var.owner
        if node is None:
            return None
        op = node.op
        if isinstance(op, DimShuffle) or isinstance(op, Alloc):
            var = node.inputs[0]
        elif is_elemwise(var, ps.Second):
            var = node.inputs[1]
        elif is_elemwise(var, ps.Cast):
            inner = scalar_fill_value(node.inputs[0])
            if inner is None:
                return None
            with np.errstate(all="ignore"):
                return np.asarray(inner).astype(op.scalar_op.o_type.dtype)
        else:
            return None
    return None


def _static_shape_entries(shape):
    return [constant(int(s), dtype="int64") for s in shape]


def fit_to_output(new, out, shape_sources=()):
    """``new`` given exactly the dtype and broadcast pattern of ``out``.

    A rewrite that drops an operand (``x + 0 -> x``) may lose the dtype the
    operand contributed (cast back) or the dimensions it broadcast ``x`` to:
    then ``new`` is broadcast again, with ``alloc`` when ``out``'s shape is
    static and with ``second(source, new)`` from one of ``shape_sources``
    (the dropped operands, whose shapes made ``out``'s) otherwise. Returns
    ``None`` when that is not possible.
    """
    if not isinstance(out.type, TensorType):
        return None
    new_type = getattr(new, "type", None)
    if not isinstance(new_type, TensorType) or new_type.ndim > out.type.ndim:
        return None
    if new.type.dtype != out.type.dtype:
        from lucent.tensor.math import cast

        new = cast(new, out.type.dtype)
    if new.type.ndim < out.type.ndim:
        k = out.type.ndim - new.type.ndim
        new = DimShuffle(new.type.ndim, ("x",) * k + tuple(range(new.type.ndim)))(new)
    needs_broadcast = any(n == 1 and o != 1 for n, o in zip(new.type.shape, out.type.shape))
    if needs_broadcast:
        if all(s is not None for s in out.type.shape):
            new = alloc(new, *_static_shape_entries(out.type.shape))
        else:
            for src in shape_sources:
                candidate = Elemwise(ps.second)(src, new)
                if candidate.type.broadcastable == out.type.broadcastable:
                    new = candidate
                    break
            else:
                return None
    if out.type.is_super(new.type):
        return new
    if new.type.is_super(out.type):
        return specify_shape(new, out.type.shape)
    return None


def _is_output(fgraph, var):
    return any(client == "output" for client, _ in fgraph.clients.get(var, ()))


# --------------------------------------------------------------------------- #
# Constant folding
# --------------------------------------------------------------------------- #
def _constant_of_type(value, out_type):
    """A constant holding ``value`` for an output of type ``out_type``, or None."""
    if isinstance(out_type, TensorType):
        arr = np.asarray(value)
        if arr.ndim != out_type.ndim or arr.dtype.name != out_type.dtype:
            return None
        if any(s is not None and s != n for s, n in zip(out_type.shape, arr.shape)):
            return None
        return constant(np.array(arr, copy=True))
    if isinstance(out_type, ScalarType):
        return ps.constant(np.asarray(value).item(), dtype=out_type.dtype)
    return None


@node_rewriter(None)
def constant_folding(fgraph, node):
    """Replace a node whose inputs are all constants by the constant it computes.

    The value is computed once, with the op's reference ``perform``, so the
    result is what the node would have produced at every call. Ops may opt
    out with ``do_constant_folding`` (random draws, ops meant to allocate at
    run time), and a result that would be much larger than its inputs (an
    ``alloc``, ``arange`` or ``eye`` of a big shape) is left to run time so
    that compiled functions stay small.
    """
    if not node.inputs or not all(isinstance(i, Constant) for i in node.inputs):
        return False
    if not node.op.do_constant_folding(fgraph, node):
        return False
    if node.op.destroy_map:
        return False
    input_size = sum(int(np.asarray(i.data).size) for i in node.inputs)
    for out in node.outputs:
        shape = getattr(out.type, "shape", None)
        if shape is not None and all(s is not None for s in shape):
            size = int(np.prod(shape, dtype="int64"))
            if size > MAX_FOLDED_SIZE and size > input_size:
                return False
    values = [np.array(i.data, copy=True) if isinstance(i.data, np.ndarray) else i.data for i in node.inputs]
    storage = [[None] for _ in node.outputs]
    node.op.perform(node, values, storage)
    result = []
    for out, (value,) in zip(node.outputs, storage):
        size = int(np.asarray(value).size)
        if size > MAX_FOLDED_SIZE and size > input_size:
            return False
        const = _constant_of_type(value, out.type)
        if const is None:
            return False
        result.append(const)
    return result


register_canonicalize(constant_folding, "fast_compile")
# Merging inside the equilibrium lets canonically ordered copies of the same
# expression (``a + b`` and ``b + a``) become one node before later rewrites.
canonicalize_db.register("canonicalize_merge", MergeRewriter(), "fast_run", "fast_compile", "canonicalize")


# --------------------------------------------------------------------------- #
# DimShuffle
# --------------------------------------------------------------------------- #
def _is_noop_dimshuffle(op, in_type, out_type):
    """True if ``op`` maps every array of ``in_type`` to an equal array.

    Dropping, adding or permuting *length-1* dimensions leaves the elements
    in the same C order, so a DimShuffle is the identity when its output has
    the input's static shape and the other dimensions keep their order.
    """
    if in_type.shape != out_type.shape:
        return False
    kept = [o for o in op.new_order if o != "x" and in_type.shape[o] != 1]
    return kept == sorted(kept)


@node_rewriter([DimShuffle])
def local_useless_dimshuffle(fgraph, node):
    """``DimShuffle`` that does not change the array (identity order, or only
    moving length-1 dimensions around) is its input."""
    (x,) = node.inputs
    if _is_noop_dimshuffle(node.op, x.type, node.outputs[0].type):
        return [x]
    return False


@node_rewriter([DimShuffle])
def local_dimshuffle_dimshuffle(fgraph, node):
    """``DimShuffle(DimShuffle(x))`` is one DimShuffle: output dimension ``d``
    of the outer comes from inner dimension ``outer[d]``, which comes from
    ``inner[outer[d]]`` of ``x`` (or is new). Dimensions dropped by either
    have length 1, so dropping them from ``x`` directly is valid.
    ``Squeeze(ExpandDims(x))`` on the same axes composes to the identity."""
    (y,) = node.inputs
    if y.owner is None or not isinstance(y.owner.op, DimShuffle):
        return False
    inner = y.owner.op
    x = y.owner.inputs[0]
    order = tuple("x" if o == "x" else inner.new_order[o] for o in node.op.new_order)
    out = node.outputs[0]
    if order == tuple(range(x.type.ndim)) or _is_noop_dimshuffle(DimShuffle(x.type.ndim, order), x.type, out.type):
        return [x]
    return [DimShuffle(x.type.ndim, order)(x)]


@node_rewriter([DimShuffle])
def local_dimshuffle_lift(fgraph, node):
    """Move a ``DimShuffle`` below an ``Elemwise`` that only it uses.

    Rearranging dimensions commutes with element-wise functions; applied to
    the inputs it reaches constants (which then fold) and other
    DimShuffles (which then merge), and lets nested ``add``/``mul`` become
    one. A dropped output dimension has static length 1, which means every
    input has static length 1 there, so each input can drop it too.
    """
    (y,) = node.inputs
    if y.owner is None or not isinstance(y.owner.op, Elemwise) or y.owner.op.destroy_map:
        return False
    if len(y.owner.outputs) != 1 or len(fgraph.clients.get(y, ())) != 1 or _is_output(fgraph, y):
        return False
    # Each input not already a constant or a DimShuffle gets a new node;
    # allow one (the DimShuffle that disappears) so the graph never grows.
    fresh = [i for i in y.owner.inputs if not isinstance(i, Constant)
             and not (i.owner is not None and isinstance(i.owner.op, DimShuffle))]
    if len(fresh) > 1:
        return False
    new_inputs = []
    for inp in y.owner.inputs:
        new_inputs.append(DimShuffle(inp.type.ndim, node.op.new_order)(inp))
    new = y.owner.op(*new_inputs)
    return [fit_to_output(new, node.outputs[0])]


register_canonicalize(local_useless_dimshuffle, "fast_compile")
register_canonicalize(local_dimshuffle_dimshuffle, "fast_compile")
register_canonicalize(local_dimshuffle_lift)


# --------------------------------------------------------------------------- #
# SpecifyShape
# --------------------------------------------------------------------------- #
def _is_length_of(entry, x, dim):
    """True if the shape entry ``entry`` is known to equal ``x.shape[dim]``."""
    if _is_none_const(entry):
        return True
    static = x.type.shape[dim]
    if isinstance(entry, Constant):
        return static is not None and int(np.asarray(entry.data)) == static
    owner = entry.owner
    if owner is None:
        return False
    if isinstance(owner.op, Shape_i):
        return owner.op.i == dim and owner.inputs[0] is x
    from lucent.tensor.basic import get_scalar_constant_value, NotScalarConstantError

    try:
        value = int(get_scalar_constant_value(entry))
    except NotScalarConstantError:
        value = None
    if value is not None:
        return static is not None and value == static
    # shape(x)[dim]
    from lucent.tensor.subtensor import Subtensor

    if isinstance(owner.op, Subtensor) and owner.inputs[0].owner is not None:
        base = owner.inputs[0].owner
        if isinstance(base.op, Shape) and base.inputs[0] is x and len(owner.inputs) == 2:
            try:
                return int(get_scalar_constant_value(owner.inputs[1])) % max(x.type.ndim, 1) == dim
            except NotScalarConstantError:
                return False
    return False


@node_rewriter([SpecifyShape])
def local_useless_specify_shape(fgraph, node):
    """``SpecifyShape`` whose every entry is already implied (``None``, the
    input's static length, or ``x.shape[d]`` itself) checks nothing."""
    x, *shape = node.inputs
    if all(_is_length_of(s, x, d) for d, s in enumerate(shape)):
        return [x]
    return False


@node_rewriter([SpecifyShape])
def local_specify_shape_specify_shape(fgraph, node):
    """Two nested ``SpecifyShape`` are one, when they do not both constrain
    the same dimension differently (then both checks are kept)."""
    y, *outer = node.inputs
    if y.owner is None or not isinstance(y.owner.op, SpecifyShape):
        return False
    x, *inner = y.owner.inputs
    merged = []
    for a, b in zip(outer, inner):
        if _is_none_const(a):
            merged.append(None if _is_none_const(b) else b)
        elif _is_none_const(b) or a is b or (
            isinstance(a, Constant) and isinstance(b, Constant) and a.equals(b)
        ):
            merged.append(a)
        elif isinstance(a, Constant) and isinstance(b, Constant):
            return False  # contradictory: keep both so the error happens at run time
        else:
            return False
    new = specify_shape(x, tuple(merged))
    return [fit_to_output(new, node.outputs[0])]


register_canonicalize(local_useless_specify_shape, "fast_compile")
register_canonicalize(local_specify_shape_specify_shape, "fast_compile")


# --------------------------------------------------------------------------- #
# Casts
# --------------------------------------------------------------------------- #
@node_rewriter([Elemwise])
def local_useless_cast(fgraph, node):
    """A ``Cast`` to the dtype its input already has is its input."""
    if not isinstance(node.op.scalar_op, ps.Cast):
        return False
    (x,) = node.inputs
    out = node.outputs[0]
    if x.type.dtype == out.type.dtype and out.type.is_super(x.type):
        return [x]
    return False


def _lossless(src, dst):
    """True if every value of dtype ``src`` is exactly representable in ``dst``.

    Stricter than NumPy's "safe" casting, which calls ``int64 -> float64``
    safe although integers above 2**53 are rounded.
    """
    src, dst = np.dtype(src), np.dtype(dst)
    if not np.can_cast(src, dst, casting="safe"):
        return False
    if src.kind in "iu" and dst.kind in "fc":
        mantissa = np.finfo(dst).nmant + 1
        return src.itemsize * 8 - (src.kind == "i") <= mantissa
    return True


@node_rewriter([Elemwise])
def local_cast_cast(fgraph, node):
    """``cast(cast(x, a), b)`` is ``cast(x, b)`` when ``x -> a`` is lossless.

    The inner cast then holds ``x``'s exact value, so converting it to ``b``
    rounds (or truncates) exactly as converting ``x`` directly would.
    """
    if not isinstance(node.op.scalar_op, ps.Cast):
        return False
    (y,) = node.inputs
    if not is_elemwise(y, ps.Cast):
        return False
    x = y.owner.inputs[0]
    if not _lossless(x.type.dtype, y.type.dtype):
        return False
    from lucent.tensor.math import cast

    return [fit_to_output(cast(x, node.outputs[0].type.dtype), node.outputs[0])]


register_canonicalize(local_useless_cast, "fast_compile")
register_canonicalize(local_cast_cast, "fast_compile")


# --------------------------------------------------------------------------- #
# Alloc and fill (second)
# --------------------------------------------------------------------------- #
@node_rewriter([Alloc])
def local_useless_alloc(fgraph, node):
    """``alloc(v, *shape)`` where ``v`` needs no broadcasting is ``v``.

    When ``v`` already has the output's rank and no length-1 dimension of
    ``v`` is stretched, the alloc only copies ``v``; the requested lengths
    are kept as a ``SpecifyShape`` check unless they are already implied.
    """
    value, *shape = node.inputs
    out = node.outputs[0]
    if value.type.ndim != out.type.ndim or value.type.dtype != out.type.dtype:
        return False
    if any(v == 1 and o != 1 for v, o in zip(value.type.shape, out.type.shape)):
        return False
    if any(v == 1 and not _is_length_of(s, value, d) for d, (v, s) in enumerate(zip(value.type.shape, shape))):
        return False
    entries = tuple(None if _is_length_of(s, value, d) else s for d, s in enumerate(shape))
    return [fit_to_output(specify_shape(value, entries), out)]


@node_rewriter([Elemwise])
def local_useless_fill(fgraph, node):
    """``second(model, v)`` is ``v`` when ``v`` already has the output's type:
    broadcasting to ``model``'s shape then adds nothing."""
    if not isinstance(node.op.scalar_op, ps.Second):
        return False
    _, value = node.inputs
    out = node.outputs[0]
    if value.type.broadcastable == out.type.broadcastable and value.type.dtype == out.type.dtype:
        return [fit_to_output(value, out)]
    return False


@node_rewriter([Elemwise])
def local_fill_fill(fgraph, node):
    """``second(a, second(b, v))`` is ``second(a, v)`` when ``b`` adds no
    dimension that ``a`` does not already broadcast to."""
    if not isinstance(node.op.scalar_op, ps.Second):
        return False
    a, inner = node.inputs
    if not is_elemwise(inner, ps.Second):
        return False
    new = Elemwise(ps.second)(a, inner.owner.inputs[1])
    if new.type.broadcastable != node.outputs[0].type.broadcastable:
        return False
    return [fit_to_output(new, node.outputs[0])]


@node_rewriter([Elemwise])
def local_fill_sink(fgraph, node):
    """``f(second(m, v), y)`` is ``second(m, f(v, y))`` for element-wise ``f``.

    Broadcasting commutes with element-wise functions, so the fill can move
    past ``f``; ``v`` (often a constant) then meets the other operands,
    where constants fold and ``second`` often becomes useless because
    ``f(v, y)`` already has the full shape. A fill used elsewhere too is
    only sunk when no new ``second`` is needed, so the graph never grows.
    """
    scalar_op = node.op.scalar_op
    if isinstance(scalar_op, ps.Second) or node.op.destroy_map or len(node.outputs) != 1:
        return False
    models = []
    new_inputs = []
    shared = False
    for inp in node.inputs:
        if is_elemwise(inp, ps.Second):
            models.append(inp.owner.inputs[0])
            new_inputs.append(inp.owner.inputs[1])
            shared = shared or len(fgraph.clients.get(inp, ())) > 1
        elif (
            inp.owner is not None
            and isinstance(inp.owner.op, DimShuffle)
            and is_elemwise(inp.owner.inputs[0], ps.Second)
        ):
            # DimShuffle(second(m, v)) == second(DimShuffle(m), DimShuffle(v)):
            # a dimension it drops has static length 1 in m and v alike.
            ds = inp.owner.op
            m, v = inp.owner.inputs[0].owner.inputs
            models.append(DimShuffle(m.type.ndim, ds.new_order)(m))
            new_inputs.append(DimShuffle(v.type.ndim, ds.new_order)(v))
            shared = True  # the shuffled model would be a new node: sink only if not needed
        else:
            new_inputs.append(inp)
    if not models:
        return False
    new = node.op(*new_inputs)
    out = node.outputs[0]
    if new.type.dtype != out.type.dtype:
        return False
    if shared and new.type.broadcastable != out.type.broadcastable:
        return False
    for m in models:
        if new.type.broadcastable == out.type.broadcastable:
            break
        new = Elemwise(ps.second)(m, new)
    return [fit_to_output(new, out, models)]


register_canonicalize(local_useless_alloc, "fast_compile")
register_canonicalize(local_useless_fill, "fast_compile")
register_canonicalize(local_fill_fill, "fast_compile")
register_canonicalize(local_fill_sink)

# Later stages create constant subexpressions and shuffles of shuffles too
# (e.g. a BLAS call's scaling factor); fold and merge them there as well.
for _register in (register_stabilize, register_specialize):
    _register(constant_folding, name="constant_folding")
    _register(local_useless_dimshuffle, name="local_useless_dimshuffle")
    _register(local_dimshuffle_dimshuffle, name="local_dimshuffle_dimshuffle")


# --------------------------------------------------------------------------- #
# Copies
# --------------------------------------------------------------------------- #
@node_rewriter([TensorCopy])
def local_useless_tensor_copy(fgraph, node):
    """A copy inside the graph is not needed: only a graph output must not
    share memory with an input, and in-place rewrites decide separately what
    may be overwritten."""
    if _is_output(fgraph, node.outputs[0]):
        return False
    return [node.inputs[0]]


register_canonicalize(local_useless_tensor_copy, "fast_compile")


__all__ = [
    "MAX_FOLDED_SIZE",
    "constant_folding",
    "fit_to_output",
    "is_elemwise",
    "scalar_fill_value",
    "local_useless_dimshuffle",
    "local_dimshuffle_dimshuffle",
    "local_dimshuffle_lift",
    "local_useless_specify_shape",
    "local_specify_shape_specify_shape",
    "local_useless_cast",
    "local_cast_cast",
    "local_useless_alloc",
    "local_useless_fill",
    "local_fill_fill",
    "local_fill_sink",
    "local_useless_tensor_copy",
]
