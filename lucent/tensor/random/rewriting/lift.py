"""Lifting indexing, transposition and ``size`` into the parameters of a draw.

A draw's batch dimensions are independent draws, one per broadcast set of
parameters. Selecting or re-ordering those dimensions after drawing is the
same, in distribution, as drawing from the selected or re-ordered
parameters: ``normal(mu, sd)[2:]`` is ``normal(mu[2:], sd[2:])`` and
``normal(mu, sd).T`` is ``normal(mu.T, sd.T)``. The lifted form draws only
what is used, which matters when a large draw is immediately indexed, and
it lets probabilistic code reason about each selected variable directly.

These rewrites change *which* numbers a given generator state produces
(fewer values are drawn), so they are not part of the default pipeline, as
in PyTensor; they are applied explicitly (``dfs_rewriter(local_...)``).
Each applies only when nothing else reads the original draw, and never
acts on core (support) dimensions, which are not independent.

``sidestep_unused_rng_consumer`` removes a draw whose value nobody reads and
connects its next generator to its input generator. It is registered in the
canonicalize and stabilize stages under the tag ``random_unsafe`` (exclude
that tag to keep such a generator advancing).
"""

from __future__ import annotations

from lucent.graph.basic import Apply, Variable
from lucent.graph.rewriting.basic import copy_stack_trace, node_rewriter
from lucent.graph.traversal import ancestors
from lucent.tensor.advanced_subtensor import AdvancedSubtensor
from lucent.tensor.basic import constant
from lucent.tensor.elemwise import DimShuffle
from lucent.tensor.random.op import RandomVariable, RNGConsumerOp
from lucent.tensor.random.utils import broadcast_params
from lucent.tensor.rewriting.registry import register_canonicalize, register_stabilize
from lucent.tensor.shape import NoneTypeT, Shape, Shape_i
from lucent.tensor.subtensor import Subtensor, _split_inputs
from lucent.tensor.type import integer_dtypes


def is_rv_used_in_graph(base_rv, node, fgraph):
    """True if a node other than ``node`` reads the values of ``base_rv``.

    Nodes that only read its shape (``Shape``, ``Shape_i``) do not count:
    they do not depend on the drawn values.
    """
    for client, _ in fgraph.clients.get(base_rv, ()):
        if client is node:
            continue
        if isinstance(client, Apply) and isinstance(client.op, (Shape, Shape_i)):
            continue
        return True
    return False


def _rv_node(var):
    node = var.owner
    if node is not None and isinstance(node.op, RandomVariable):
        return node
    return None


@node_rewriter(None)
def local_rv_size_lift(fgraph, node):
    """Move ``size`` into the parameters: ``normal(0, 1, size=(1, 2))`` is
    ``normal([[0, 0]], [[1, 1]])`` (the parameters broadcast to ``size`` plus
    their core dimensions), leaving the draw without a ``size``."""
    if not isinstance(node.op, RandomVariable):
        return None
    op = node.op
    rng, size, *params = node.inputs
    if isinstance(size.type, NoneTypeT):
        return None
    from lucent.tensor.spacing import broadcast_to

    params = broadcast_params(params, op.ndims_params)
    batch = tuple(size)
    new_params = []
    for p, nd in zip(params, op.ndims_params):
        core = tuple(p.shape)[p.type.ndim - nd:] if nd > 0 else ()
        new_params.append(broadcast_to(p, batch + core))
    return op.make_node(rng, None, *new_params).outputs


@node_rewriter([DimShuffle])
def local_dimshuffle_rv_lift(fgraph, node):
    """``normal(mu, sd).T`` is ``normal(mu.T, sd.T)``.

    Applies to transpositions and added broadcastable dimensions of the batch
    dimensions only (dropped dimensions and any change of the core dimensions
    are left alone), when the draw is read by nothing else.
    """
    ds = node.op
    if ds.drop:
        return None
    rv_node = _rv_node(node.inputs[0])
    if rv_node is None:
        return None
    op = rv_node.op
    rng, size, *params = rv_node.inputs
    next_rng, rv = rv_node.outputs
    if is_rv_used_in_graph(rv, node, fgraph):
        return None

    supp_dims = set(range(rv.type.ndim - op.ndim_supp, rv.type.ndim))
    moved = {d for i, d in enumerate(ds.shuffle) if d != i}
    added = {d - op.ndim_supp for d in ds.augment}
    if (moved | added) & supp_dims:
        return None

    n_batch = rv.type.ndim - op.ndim_supp
    batch_order = tuple(o for o in ds.new_order if o not in supp_dims)
    if isinstance(size.type, NoneTypeT):
        new_size = size
    else:
        new_size = [constant(1, dtype="int64") if o == "x" else size[o] for o in batch_order]

    new_params = []
    for p, nd in zip(params, op.ndims_params):
        # Parameters are padded to the draw's batch rank first, so the batch
        # part of the pattern applies to them as it does to the draw.
        missing = n_batch - (p.type.ndim - nd)
        if missing > 0:
            p = p.dimshuffle(*(["x"] * missing), *range(p.type.ndim))
        new_params.append(p.dimshuffle(*batch_order, *range(n_batch, n_batch + nd)))

    new_next_rng, new_rv = op.make_node(rng, new_size, *new_params).outputs
    if rv.name:
        new_rv.name = f"{rv.name}_lifted"
    return {node.outputs[0]: new_rv, next_rng: new_next_rng}


def _subtensor_indices(node):
    """The Python-style index tuple of a ``Subtensor`` / ``AdvancedSubtensor`` node."""
    out = []
    for entry, parts in _split_inputs(node.op.idx_list, node.inputs[1:]):
        out.append(slice(*parts) if isinstance(entry, tuple) else parts)
    return tuple(out)


def _is_array_index(idx, kinds):
    return isinstance(idx, Variable) and getattr(idx.type, "ndim", 0) >= 1 and getattr(idx.type, "dtype", None) in kinds


def _is_full_slice(idx):
    return isinstance(idx, slice) and idx.start is None and idx.stop is None and idx.step is None


@node_rewriter([Subtensor, AdvancedSubtensor])
def local_subtensor_rv_lift(fgraph, node):
    """``normal(mu, sd)[idx]`` is ``normal(mu[idx], sd[idx])``.

    Applies to indexing of the batch dimensions (trailing full slices over
    core dimensions are dropped), with basic indices and boolean masks; an
    integer-array index is left alone because it could repeat a draw. With a
    ``size``, the new size comes from the graph's ``ShapeFeature``.
    """
    rv_node = _rv_node(node.inputs[0])
    if rv_node is None:
        return None
    op = rv_node.op
    rng, size, *params = rv_node.inputs
    next_rng, rv = rv_node.outputs
    [indexed] = node.outputs
    if is_rv_used_in_graph(rv, node, fgraph):
        return None

    indices = _subtensor_indices(node)
    if any(_is_array_index(i, integer_dtypes) for i in indices):
        return None

    n_batch = op.batch_ndim(rv_node)
    # Masks index as many dimensions as they have.
    consumed = sum(i.type.ndim if _is_array_index(i, ("bool",)) else 1 for i in indices)
    if consumed > n_batch:
        kept = list(indices)
        while consumed > n_batch and kept:
            if not _is_full_slice(kept.pop()):
                return None  # an index on a core dimension
            consumed -= 1
        if consumed > n_batch:
            return None
        indices = tuple(kept)

    if isinstance(size.type, NoneTypeT):
        new_size = size
    else:
        shape_feature = getattr(fgraph, "shape_feature", None)
        if shape_feature is None:
            return None
        out_shape = shape_feature.shape_tuple(indexed)
        if out_shape is None or {indexed, rv} & set(ancestors(out_shape)):
            return None
        new_size = out_shape[: len(out_shape) - op.ndim_supp]

    new_params = []
    for p, nd in zip(params, op.ndims_params):
        # Dimensions where the parameter is broadcast (length 1, the draw not)
        # are indexed by 0 / a full slice so the parameter still broadcasts.
        missing = n_batch - (p.type.ndim - nd)
        if missing > 0:
            p = p.dimshuffle(*(["x"] * missing), *range(p.type.ndim))
        bcast = {
            d for d, (pb, ob) in enumerate(zip(p.type.broadcastable, rv.type.broadcastable)) if pb and not ob
        }
        p_idx, dim = [], 0
        for idx in indices:
            if _is_array_index(idx, ("bool",)):
                dims = range(dim, dim + idx.type.ndim)
                if bcast & set(dims):
                    from lucent.tensor.selection import nonzero

                    parts = list(nonzero(idx))
                    for d in dims:
                        if d in bcast:
                            parts[d - dim] = 0
                    p_idx.extend(parts)
                else:
                    p_idx.append(idx)
                dim += idx.type.ndim
            else:
                if dim in bcast:
                    p_idx.append(slice(None) if isinstance(idx, slice) else 0)
                else:
                    p_idx.append(idx)
                dim += 1
        new_params.append(p[tuple(p_idx)] if p_idx else p)

    new_next_rng, new_rv = op.make_node(rng, new_size, *new_params).outputs
    copy_stack_trace(rv, new_rv)
    return {indexed: new_rv, next_rng: new_next_rng}


@node_rewriter([RNGConsumerOp])
def sidestep_unused_rng_consumer(fgraph, node):
    """A draw whose values nobody reads is removed: its next generator is its input generator.

    This changes the generator's trajectory (the skipped draw no longer
    advances it), hence the ``random_unsafe`` tag. It waits while the input
    generator has other readers (duplicates the merge rewrite will fold).
    """
    update = node.op.update(node)
    if not update:
        return None
    rng_outs = set(update.values())
    if any(fgraph.clients.get(o) for o in node.outputs if o not in rng_outs):
        return None
    if any(len(fgraph.clients.get(r, ())) > 1 for r in update):
        return None
    return {out: inp for inp, out in update.items()}


register_canonicalize(sidestep_unused_rng_consumer, "fast_compile", "random_unsafe")
register_stabilize(sidestep_unused_rng_consumer, "random_unsafe")


__all__ = [
    "is_rv_used_in_graph",
    "local_dimshuffle_rv_lift",
    "local_rv_size_lift",
    "local_subtensor_rv_lift",
    "sidestep_unused_rng_consumer",
]
