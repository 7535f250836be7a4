"""Canonicalisation of shape computations.

Shapes are mostly known before the graph runs: static lengths are in the
types, and the shape of an element-wise result is the shape of one of its
inputs. Replacing ``shape(x)[i]``, ``Shape_i`` and ``ReducedSize`` by
constants where the lengths are static, and otherwise by the length of the
*earliest* variable that has it, removes nodes and, more importantly, stops
a shape computation from keeping a large intermediate alive (``mean``'s
divisor no longer depends on the summed array, only on the input).

Reshapes that do not change the shape go, and a reshape of a reshape is
one reshape: only the final shape of the elements (in C order) matters.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant, Variable
from lucent.graph.rewriting.basic import node_rewriter
from lucent.graph.utils import MethodNotDefined
from lucent.tensor.basic import MakeVector, NotScalarConstantError, constant, get_scalar_constant_value
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.math import ReducedSize
from lucent.tensor.rewriting.basic import _is_length_of, fit_to_output
from lucent.tensor.rewriting.registry import register_canonicalize, register_specialize
from lucent.tensor.rewriting.shape_feature import ShapeFeature, ShapeOptimizer, UnShapeOptimizer
from lucent.tensor.shape import Reshape, Shape, Shape_i
from lucent.tensor.type import TensorType


def _int64(value):
    return constant(np.asarray(value, dtype="int64"))


# --------------------------------------------------------------------------- #
# Shape, Shape_i, shape(x)[i]
# --------------------------------------------------------------------------- #
@node_rewriter([Shape])
def local_shape_to_constant(fgraph, node):
    """``shape(x)`` is a constant when every length of ``x`` is static."""
    x = node.inputs[0]
    if any(s is None for s in x.type.shape):
        return False
    return [_int64(np.asarray(x.type.shape, dtype="int64").reshape(x.type.ndim))]


@node_rewriter([Shape])
def local_shape_to_shape_i(fgraph, node):
    """``shape(x)`` is the vector of its lengths, ``[Shape_i{0}(x), 2, ...]``.

    Run late (specialize), once the canonical rewrites that look for
    ``shape(x)`` have had their chance: each entry is then either a constant
    (a static length) or a ``Shape_i``, which later rewrites and the linker
    treat one by one.
    """
    x = node.inputs[0]
    if not isinstance(x.type, TensorType) or x.type.ndim == 0:
        return False
    if all(s is not None for s in x.type.shape):
        return False  # a constant: local_shape_to_constant's job
    entries = [_int64(s) if s is not None else Shape_i(d)(x) for d, s in enumerate(x.type.shape)]
    return [fit_to_output(MakeVector("int64")(*entries), node.outputs[0])]


def _on_shape_error(node, exc):
    """An ``infer_shape`` that failed: warn and go on without the shape, or raise.

    ``config.on_shape_error`` decides; a failing ``infer_shape`` is a bug in
    the Op, so it is never silently ignored.
    """
    from lucent.configdefaults import config

    if config.on_shape_error == "raise":
        raise exc
    import warnings

    warnings.warn(
        f"{node.op}.infer_shape failed for node {node} ({type(exc).__name__}: {exc}); the shape "
        "rewrites go on without this shape. Set config.on_shape_error='raise' to stop here.",
        stacklevel=2,
    )


@node_rewriter([Shape_i])
def local_shape_i_to_constant(fgraph, node):
    """``Shape_i{i}(x)`` is a constant when ``x``'s length ``i`` is static."""
    length = node.inputs[0].type.shape[node.op.i]
    if length is None:
        return False
    return [_int64(length)]


def _subtensor_of_shape(node):
    """``(x, i)`` if ``node`` is ``shape(x)[i]`` with a constant ``i``, else None."""
    from lucent.tensor.subtensor import Subtensor

    if not isinstance(node.op, Subtensor) or tuple(node.op.idx_list) != ("i",):
        return None
    base = node.inputs[0]
    if base.owner is None or not isinstance(base.owner.op, Shape):
        return None
    try:
        i = int(get_scalar_constant_value(node.inputs[1]))
    except NotScalarConstantError:
        return None
    x = base.owner.inputs[0]
    if not -x.type.ndim <= i < x.type.ndim:
        return None
    return x, i % x.type.ndim


def _subtensor_tracks():
    from lucent.tensor.subtensor import Subtensor

    return [Subtensor]


@node_rewriter(_subtensor_tracks())
def local_subtensor_of_shape(fgraph, node):
    """``shape(x)[i]`` is ``Shape_i{i}(x)``: one node instead of two, and a
    constant when the length is static."""
    found = _subtensor_of_shape(node)
    if found is None:
        return False
    x, i = found
    out = node.outputs[0]
    length = x.type.shape[i]
    new = _int64(length) if length is not None else Shape_i(i)(x)
    return [fit_to_output(new, out)]


_SIMPLE_SHAPE_OPS = (Shape_i,)


def _usable_length(var, node, depth=6):
    """True if ``var`` can stand for a length without recomputing ``node``'s work."""
    if not isinstance(var, Variable) or not isinstance(var.type, TensorType) or var.type.ndim != 0:
        return False
    if var.type.dtype not in ("int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "bool"):
        return False
    if isinstance(var, Constant) or var in node.inputs:
        return True
    if var.owner is not None and isinstance(var.owner.op, Elemwise) and depth > 0:
        # Scalar arithmetic of usable lengths (``minimum(n - k, m)``, ``a + b``): a few
        # integer operations, cheaper than computing the node to read its shape.
        return type(var.owner.op.scalar_op).__name__ in _LENGTH_ARITHMETIC and all(
            _usable_length(i, node, depth - 1) for i in var.owner.inputs
        )
    from lucent.tensor.subtensor import SliceLength

    if var.owner is not None and isinstance(var.owner.op, SliceLength) and depth > 0:
        # The length of a slice of a usable length (a Subtensor's infer_shape):
        # a few integer operations too.
        return all(_usable_length(i, node, depth - 1) for i in var.owner.inputs)
    return (
        var.owner is not None
        and isinstance(var.owner.op, _SIMPLE_SHAPE_OPS)
        and all(var.owner.inputs[0] is not o for o in node.outputs)
    )


_LENGTH_ARITHMETIC = frozenset(
    ["Add", "Sub", "Mul", "Neg", "IntDiv", "Mod", "Maximum", "Minimum", "Switch", "Cast", "Identity",
     "LT", "GT", "LE", "GE", "EQ", "NEQ", "Abs", "Ceil", "Floor", "TrueDiv", "AND", "OR", "Invert"]
)


@node_rewriter([Shape_i])
def local_shape_i_lift(fgraph, node):
    """``Shape_i{i}(f(a, b))`` is the length ``i`` of an input of ``f``.

    The op's ``infer_shape`` says how its output lengths follow from its
    inputs' (for an element-wise op: the length of any input that is not
    broadcast there). Only cheap answers are used (a constant, an input of
    the node, another ``Shape_i``, or a little integer arithmetic of these,
    e.g. ``minimum(n - k, m)`` for a diagonal), so the shape no longer
    depends on ``f`` being computed.
    """
    (v,) = node.inputs
    owner = v.owner
    if owner is None or isinstance(owner.op, (Shape, Shape_i)):
        return False
    infer = getattr(owner.op, "infer_shape", None)
    if infer is None:
        return False
    from lucent.tensor.shape import shape_i

    input_shapes = []
    for inp in owner.inputs:
        if isinstance(inp.type, TensorType):
            input_shapes.append(tuple(shape_i(inp, d) for d in range(inp.type.ndim)))
        else:
            input_shapes.append(())
    try:
        shapes = infer(fgraph, owner, input_shapes)
    except (NotImplementedError, MethodNotDefined):  # the op does not infer shapes
        return False
    except Exception as exc:
        _on_shape_error(owner, exc)
        return False
    try:
        length = shapes[v.index][node.op.i]
    except Exception:  # shapes it cannot express
        return False
    if isinstance(length, (int, np.integer)):
        return [_int64(int(length))]
    if isinstance(length, Constant) and np.asarray(length.data).ndim == 0:
        return [_int64(int(np.asarray(length.data)))]
    if not _usable_length(length, owner):
        return False
    return [fit_to_output(length, node.outputs[0]) if length.type.dtype == "int64" else None]


@node_rewriter([ReducedSize])
def local_reduced_size(fgraph, node):
    """``ReducedSize`` is the product of the reduced lengths: a constant when
    they are static, ``Shape_i`` (times a constant) when one is not.

    With several unknown lengths, the size of an element-wise result is the
    size of any input with the same broadcast pattern (the result has that
    input's shape), so the count moves to that input and no longer needs
    the element-wise result to be computed.
    """
    (x,) = node.inputs
    axes = range(x.type.ndim) if node.op.axis is None else node.op.axis
    static = [x.type.shape[a] for a in axes]
    known = int(np.prod([s for s in static if s is not None], dtype="int64"))
    unknown = [a for a, s in zip(axes, static) if s is None]
    if not unknown:
        return [_int64(known)]
    if x.owner is not None and isinstance(x.owner.op, Elemwise):
        for inp in x.owner.inputs:
            if inp.type.broadcastable == x.type.broadcastable:
                return [ReducedSize(node.op.axis)(inp)]
    if len(unknown) > 1:
        return False
    new = Shape_i(unknown[0])(x)
    if known != 1:
        from lucent.tensor.math import mul

        new = mul(new, _int64(known))
    return [fit_to_output(new, node.outputs[0])]


@node_rewriter(_subtensor_tracks())
def local_subtensor_make_vector(fgraph, node):
    """``MakeVector(a, b, c)[1]`` is ``b``; ``MakeVector(a, b, c)[:-1]`` is ``MakeVector(a, b)``.

    Shape vectors are ``MakeVector``s of lengths once ``Shape`` became
    ``Shape_i`` entries; picking some of them then no longer needs the
    others (nor the nodes those read).
    """
    vec = node.inputs[0]
    if vec.owner is None or not isinstance(vec.owner.op, MakeVector) or len(node.op.idx_list) != 1:
        return False
    entries = list(vec.owner.inputs)
    (entry,) = node.op.idx_list
    try:
        values = [int(get_scalar_constant_value(v)) for v in node.inputs[1:]]
    except NotScalarConstantError:
        return False
    out = node.outputs[0]
    if entry == "i":
        i = values[0]
        if not -len(entries) <= i < len(entries):
            return False
        picked = entries[i]
    elif isinstance(entry, tuple):
        it = iter(values)
        bounds = [next(it) if part is not None else None for part in entry]
        chosen = entries[slice(*bounds)]
        picked = MakeVector(vec.owner.op.dtype)(*chosen) if chosen else None
        if picked is None:
            return False
    else:
        return False
    if picked.type.dtype != out.type.dtype or picked.type.ndim != out.type.ndim:
        return False
    return [fit_to_output(picked, out)]


register_canonicalize(local_shape_to_constant, "fast_compile")
register_canonicalize(local_subtensor_make_vector)
register_specialize(local_subtensor_make_vector, name="local_subtensor_make_vector_specialize")
register_canonicalize(local_shape_i_to_constant, "fast_compile")
register_canonicalize(local_subtensor_of_shape, "fast_compile")
register_canonicalize(local_shape_i_lift)
register_specialize(local_shape_to_shape_i)
# again after ``Shape`` became ``Shape_i`` (specialize), so those lengths are lifted too
register_specialize(local_shape_i_lift, name="local_shape_i_lift_specialize")
register_canonicalize(local_reduced_size, "fast_compile")


# --------------------------------------------------------------------------- #
# Reshape
# --------------------------------------------------------------------------- #
def _shape_entries(shp, ndim):
    """The entries of a shape vector as a list of variables, when cheaply known."""
    if isinstance(shp, Constant):
        data = np.asarray(shp.data).reshape(-1)
        return [_int64(int(v)) for v in data]
    if shp.owner is not None and isinstance(shp.owner.op, MakeVector):
        return list(shp.owner.inputs)
    if shp.owner is not None and isinstance(shp.owner.op, Shape):
        x = shp.owner.inputs[0]
        return [Shape_i(d)(x) if x.type.shape[d] is None else _int64(x.type.shape[d]) for d in range(ndim)]
    return None


def _is_minus_one(entry):
    try:
        return int(get_scalar_constant_value(entry)) == -1
    except NotScalarConstantError:
        return False


@node_rewriter([Reshape])
def local_useless_reshape(fgraph, node):
    """A reshape to the shape its input already has is the input.

    Holds when the rank is unchanged and every entry is the input's own
    length (its static length, ``Shape_i``, ``shape(x)[d]``), with at most
    one ``-1``, which then can only stand for the remaining length.
    """
    x, shp = node.inputs
    out = node.outputs[0]
    if out.type.ndim != x.type.ndim:
        return False
    if x.type.shape == out.type.shape and all(s is not None for s in x.type.shape):
        return [x]
    if shp.owner is not None and isinstance(shp.owner.op, Shape) and shp.owner.inputs[0] is x:
        return [fit_to_output(x, out)]
    entries = _shape_entries(shp, out.type.ndim)
    if entries is None:
        return False
    flags = [_is_length_of(e, x, d) for d, e in enumerate(entries)]
    missing = [d for d, f in enumerate(flags) if not f]
    if not missing or (len(missing) == 1 and _is_minus_one(entries[missing[0]])):
        return [fit_to_output(x, out)]
    return False


@node_rewriter([Reshape])
def local_reshape_reshape(fgraph, node):
    """``reshape(reshape(x, s1), s2)`` is ``reshape(x, s2)``: a reshape keeps
    the elements in C order, so only the last requested shape matters."""
    y, shp = node.inputs
    if y.owner is None or not isinstance(y.owner.op, Reshape):
        return False
    x = y.owner.inputs[0]
    new = Reshape(node.op.ndim)(x, shp)
    return [fit_to_output(new, node.outputs[0])]


register_canonicalize(local_useless_reshape, "fast_compile")
register_canonicalize(local_reshape_reshape, "fast_compile")


__all__ = [
    "ShapeFeature",
    "ShapeOptimizer",
    "UnShapeOptimizer",
    "local_shape_to_constant",
    "local_shape_i_to_constant",
    "local_subtensor_of_shape",
    "local_subtensor_make_vector",
    "local_shape_i_lift",
    "local_reduced_size",
    "local_useless_reshape",
    "local_reshape_reshape",
]
