"""How each tensor op is mapped over new leading (batch) dimensions.

``lucent.graph.vectorize_graph`` rebuilds a graph for inputs that gained
dimensions on the left and asks ``_vectorize_node`` (dispatched on the op's
type) how to rebuild each node. The rules live here because they need the
tensor ops, which sit above the graph layer.

Every rule follows one convention: an input's *batch* dimensions are the
ones it has beyond what the original node saw (``new.ndim - old.ndim``);
batch dimensions of different inputs broadcast against each other, aligned
on the right of the batch part, exactly like ``numpy.vectorize``. A rule only
has to say how the op's own parameters (axes, index lists, target shapes)
move when ``b`` dimensions are added in front. Where an op's parameters are
themselves batched (a batched shape, a batched index), there is no single op
that does it, and the rule says so.
"""

from __future__ import annotations

from lucent.graph.replace import _vectorize_node, _vectorize_not_needed
from lucent.tensor import blockwise as _blockwise  # noqa: F401  (the fallback rule: Blockwise)
from lucent.tensor.basic import Join
from lucent.tensor.blockwise import vectorize_node_fallback
from lucent.tensor.creation import Alloc, MakeVector
from lucent.tensor.diagonal import ExtractDiag
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.math import Argmax, Dot, MatMul, ReducedSize, matmul
from lucent.tensor.reduction import CAReduce
from lucent.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape, shape_i
from lucent.tensor.special import _AxisOp
from lucent.tensor.subtensor import _FULL, _INT, IncSubtensor, Subtensor


def _batch_ndim(old, new):
    return new.type.ndim - old.type.ndim


def _unbatched(node, batched_inputs, positions, what):
    """Refuse batch dimensions on inputs that parametrise the op (shapes, indices)."""
    for i in positions:
        if not hasattr(node.inputs[i].type, "ndim"):
            continue  # not a tensor (NoneConst in a shape): nothing to batch
        if _batch_ndim(node.inputs[i], batched_inputs[i]) != 0:
            raise NotImplementedError(
                f"vectorize_graph cannot map {node.op} over a batched {what} (input {i}: "
                f"{node.inputs[i].type} -> {batched_inputs[i].type}); only its data input may "
                "gain batch dimensions"
            )


def _insert_core_axes(x, batch, core_ndim, target_core_ndim):
    """``x`` (``batch`` + ``core_ndim`` dims) with broadcastable axes put between batch and core.

    Broadcasting aligns dimensions on the right, so a core part of lower rank
    must be padded *after* the batch dimensions, or the batch would line up
    with core dimensions.
    """
    pad = target_core_ndim - core_ndim
    if pad <= 0:
        return x
    order = tuple(range(batch)) + ("x",) * pad + tuple(range(batch, batch + core_ndim))
    return DimShuffle(x.type.ndim, order)(x)


def _pad_batch(x, batch, target_batch):
    """Add broadcastable batch dimensions on the left up to ``target_batch``."""
    if batch >= target_batch:
        return x
    order = ("x",) * (target_batch - batch) + tuple(range(x.type.ndim))
    return DimShuffle(x.type.ndim, order)(x)


# Ops whose make_node already accepts, and broadcasts, inputs of any rank.
_vectorize_node.register(Elemwise, _vectorize_not_needed)


@_vectorize_node.register(DimShuffle)
def _vectorize_dimshuffle(op, node, x):
    b = _batch_ndim(node.inputs[0], x)
    order = tuple(range(b)) + tuple(d if d == "x" else d + b for d in op.new_order)
    return DimShuffle(x.type.ndim, order).make_node(x)


@_vectorize_node.register(CAReduce)
def _vectorize_careduce(op, node, x):
    b = _batch_ndim(node.inputs[0], x)
    core = node.inputs[0].type.ndim
    axis = range(core) if op.axis is None else op.axis
    return op.clone(axis=tuple(a + b for a in axis)).make_node(x)


@_vectorize_node.register(Argmax)
def _vectorize_argmax(op, node, x):
    b = _batch_ndim(node.inputs[0], x)
    axis = range(node.inputs[0].type.ndim) if op.axis is None else op.axis
    return type(op)(tuple(a + b for a in axis)).make_node(x)


@_vectorize_node.register(ReducedSize)
def _vectorize_reduced_size(op, node, x):
    # The count of reduced elements is the same for every batch entry.
    b = _batch_ndim(node.inputs[0], x)
    axis = range(node.inputs[0].type.ndim) if op.axis is None else op.axis
    return type(op)(tuple(a + b for a in axis)).make_node(x)


@_vectorize_node.register(_AxisOp)
def _vectorize_axis_op(op, node, x):
    # The node's op holds its axes as a tuple (None was resolved to every core axis).
    b = _batch_ndim(node.inputs[0], x)
    axis = range(node.inputs[0].type.ndim) if op.axis is None else op.axis
    return type(op)(tuple(a + b for a in axis)).make_node(x)


def _vectorized_product(node, a, b):
    """``a @ b`` per batch entry, for core operands of rank 1 or more (matmul rules)."""
    core_a, core_b = node.inputs[0].type.ndim, node.inputs[1].type.ndim
    ba, bb = _batch_ndim(node.inputs[0], a), _batch_ndim(node.inputs[1], b)
    a_vec, b_vec = core_a == 1, core_b == 1
    # Vectors become one-row / one-column matrices, so matmul's broadcasting
    # never confuses a batch dimension with a matrix dimension.
    if a_vec:
        a = DimShuffle(a.type.ndim, tuple(range(ba)) + ("x", ba))(a)
    if b_vec:
        b = DimShuffle(b.type.ndim, tuple(range(bb)) + (bb, "x"))(b)
    mat_a, mat_b = max(core_a, 2), max(core_b, 2)
    core = max(mat_a, mat_b)
    a = _insert_core_axes(a, ba, mat_a, core)
    b = _insert_core_axes(b, bb, mat_b, core)
    out = matmul(a, b)
    nd = out.type.ndim
    drop = ([nd - 2] if a_vec else []) + ([nd - 1] if b_vec else [])
    if drop:
        out = DimShuffle(nd, tuple(d for d in range(nd) if d not in drop))(out)
    dtype = node.outputs[0].type.dtype
    if out.type.dtype != dtype:
        from lucent.tensor.math import cast

        out = cast(out, dtype)
    return [out]


@_vectorize_node.register(Dot)
def _vectorize_dot(op, node, a, b):
    return _vectorized_product(node, a, b)


@_vectorize_node.register(MatMul)
def _vectorize_matmul(op, node, a, b):
    return _vectorized_product(node, a, b)


@_vectorize_node.register(Shape)
def _vectorize_shape(op, node, x):
    # Every batch entry has the core part of the batched shape: that vector,
    # repeated over the batch dimensions.
    from lucent.tensor.spacing import broadcast_to

    b = _batch_ndim(node.inputs[0], x)
    if b == 0:
        return op.make_node(x)
    x_shape = x.shape
    core_ndim = x.type.ndim - b
    # Static batch lengths stay static: a batch dimension of length 1 must keep
    # broadcasting against the other inputs' batches in what reads the shape.
    batch = [x.type.shape[d] if x.type.shape[d] is not None else x_shape[d] for d in range(b)]
    return [broadcast_to(x_shape[b:], (*batch, core_ndim))]


@_vectorize_node.register(Shape_i)
def _vectorize_shape_i(op, node, x):
    b = _batch_ndim(node.inputs[0], x)
    return Shape_i(op.i + b).make_node(x)


@_vectorize_node.register(SpecifyShape)
def _vectorize_specify_shape(op, node, x, *shape):
    _unbatched(node, (x, *shape), range(1, len(node.inputs)), "shape")
    b = _batch_ndim(node.inputs[0], x)
    return op.make_node(x, *([None] * b), *shape)


@_vectorize_node.register(Reshape)
def _vectorize_reshape(op, node, x, shp):
    """The batch lengths of ``x`` followed by the target shape.

    A target shape that gained batch dimensions itself (a matrix of shapes)
    needs ``Blockwise``. A target shape may also be replaced by a longer
    vector that already includes the batch lengths (as many more entries as
    ``x`` gained dimensions); any other length is an error.
    """
    from lucent.tensor.basic import get_vector_length
    from lucent.tensor.shape import reshape

    if shp.type.ndim != 1:
        return vectorize_node_fallback(op, node, x, shp)
    b = _batch_ndim(node.inputs[0], x)
    old_len, new_len = get_vector_length(node.inputs[1]), get_vector_length(shp)
    if new_len == old_len:
        if b == 0:
            return op.make_node(x, shp)
        # Entry by entry (``x.shape[:b]`` then the entries of the target shape, not a
        # concatenation), so constant core lengths stay visible to Reshape and the
        # output keeps the static shape it had.
        new_shape = [*x.shape[:b], *(shp[k] for k in range(new_len))]
        return reshape(x, new_shape, ndim=new_len + b).owner
    if new_len == old_len + b:
        return reshape(x, shp, ndim=new_len).owner
    raise ValueError(
        f"Invalid shape length passed into vectorize node of Reshape: the target shape had "
        f"{old_len} entries, it now has {new_len}, but the input gained {b} dimension(s)"
    )


def _batched_params(node, batched_inputs, positions):
    """Whether any of the inputs at ``positions`` (indices, shapes) gained batch dimensions."""
    return any(
        hasattr(node.inputs[i].type, "ndim") and _batch_ndim(node.inputs[i], batched_inputs[i]) != 0
        for i in positions
    )


@_vectorize_node.register(Subtensor)
def _vectorize_subtensor(op, node, x, *index_inputs):
    """A batched index (one index per batch entry) needs ``Blockwise``; otherwise the
    batch dimensions are taken whole (``:``) in front of the index list."""
    if _batched_params(node, (x, *index_inputs), range(1, len(node.inputs))):
        return vectorize_node_fallback(op, node, x, *index_inputs)
    b = _batch_ndim(node.inputs[0], x)
    return Subtensor((_FULL,) * b + tuple(op.idx_list)).make_node(x, *index_inputs)


def _batch_shape(var, b):
    return [shape_i(var, d) for d in range(b)]


@_vectorize_node.register(IncSubtensor)
def _vectorize_inc_subtensor(op, node, x, y, *index_inputs):
    if _batched_params(node, (x, y, *index_inputs), range(2, len(node.inputs))):
        return vectorize_node_fallback(op, node, x, y, *index_inputs)
    bx, by = _batch_ndim(node.inputs[0], x), _batch_ndim(node.inputs[1], y)
    b = max(bx, by)
    if bx < b:
        # Every batch entry writes into its own copy of x.
        x = _pad_batch(x, bx, b)
        target = [shape_i(y, d - (b - by)) if d >= b - by else shape_i(x, d) for d in range(b)]
        x = Alloc()(x, *target, *[shape_i(x, d) for d in range(b, x.type.ndim)])
    region_ndim = node.inputs[0].type.ndim - sum(1 for e in op.idx_list if e == _INT)
    y = _insert_core_axes(y, by, node.inputs[1].type.ndim, region_ndim)
    y = _pad_batch(y, by, b)
    new_op = IncSubtensor((_FULL,) * b + tuple(op.idx_list), op.inplace, op.set_instead_of_inc)
    return new_op.make_node(x, y, *index_inputs)


@_vectorize_node.register(Alloc)
def _vectorize_alloc(op, node, value, *shape):
    if any(_batch_ndim(old, new) for old, new in zip(node.inputs[1:], shape)):
        # Lengths that differ per batch entry (computed from a batched shape): each
        # entry is allocated on its own, and the entries must agree, as Blockwise checks.
        return vectorize_node_fallback(op, node, value, *shape)
    b = _batch_ndim(node.inputs[0], value)
    value = _insert_core_axes(value, b, node.inputs[0].type.ndim, len(shape))
    return op.make_node(value, *_batch_shape(value, b), *shape)


@_vectorize_node.register(Join)
def _vectorize_join(op, node, *tensors):
    """A join along the shifted axis when every piece has the same batch dimensions
    (count and broadcastable pattern); otherwise the pieces' batch shapes must be
    broadcast against each other, which ``Blockwise`` does."""
    batches = {_batch_ndim(old, new) for old, new in zip(node.inputs, tensors)}
    if len(batches) == 1:
        (b,) = batches
        if b == 0:
            return op.make_node(*tensors)
        if len({t.type.broadcastable[:b] for t in tensors}) == 1:
            return Join(op.axis + b).make_node(*tensors)
    return vectorize_node_fallback(op, node, *tensors)


@_vectorize_node.register(MakeVector)
def _vectorize_make_vector(op, node, *scalars):
    """A vector of batched scalars is their stack along a new last axis (broadcast first)."""
    from lucent.tensor.basic import cast, stack
    from lucent.tensor.spacing import broadcast_arrays

    if not scalars:
        return op.make_node()
    if any(s.type.broadcastable != scalars[0].type.broadcastable for s in scalars):
        scalars = broadcast_arrays(*scalars)
    scalars = [cast(s, op.dtype) for s in scalars]
    return stack(scalars, axis=-1).owner


@_vectorize_node.register(ExtractDiag)
def _vectorize_extract_diag(op, node, x):
    """The same diagonal, its two axes moved past the batch dimensions."""
    b = _batch_ndim(node.inputs[0], x)
    return ExtractDiag(offset=op.offset, axis1=op.axis1 + b, axis2=op.axis2 + b, view=op.view).make_node(x)
