"""``ShapeFeature``: symbolic shapes of a graph's variables, derived on demand.

Rewrites that need to know "how long is this axis" (the random-variable
lifts, reshape simplifications) ask the graph's ``ShapeFeature`` instead of
building ``shape(x)`` nodes themselves. It answers with expressions made of
constants (static lengths), ``Shape_i`` reads of graph inputs, and the
arithmetic of each op's ``infer_shape``, so the answer no longer depends on
the variable itself being computed.

The feature is lazy: nothing is computed when nodes are imported. A node's
output shapes are computed the first time they are asked for, from its
inputs' shapes (bottom-up with an explicit stack, so deep graphs do not
exhaust Python's recursion), and cached. A changed input only marks its
node stale; the next query drops the cached shapes of that node and of
everything downstream of it, so the expressions handed out always refer to
variables that are still in the graph.

``get_non_recursive_shape`` gives a shape in terms of the node's own inputs
only: such an expression can be placed next to any reader of those inputs
whatever in-place ops the rest of the graph has.
"""

from __future__ import annotations

import warnings
from collections import deque

import numpy as np

from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.equality import equal_computations
from lucent.graph.features import AlreadyThere, Feature
from lucent.graph.op import call_infer_shape
from lucent.graph.rewriting.basic import GraphRewriter
from lucent.graph.utils import MethodNotDefined
from lucent.scalar.dtypes import integer_dtypes
from lucent.tensor.exceptions import ShapeError


def _has_shape(var):
    """True for variables whose type has a rank and static lengths (tensors)."""
    t = getattr(var, "type", None)
    return isinstance(getattr(t, "shape", None), tuple) and isinstance(getattr(t, "ndim", None), int)


def _int64_constant(value):
    from lucent.tensor.basic import constant

    return constant(np.asarray(value, dtype="int64"))


def _fresh_shape_i(var, i):
    """``var``'s length ``i``: a constant when static, else a new ``Shape_i`` read."""
    length = var.type.shape[i]
    if length is not None:
        return _int64_constant(length)
    from lucent.tensor.shape import Shape_i

    return Shape_i(i)(var)


class ShapeFeature(Feature):
    """Lazily derived symbolic shapes of the variables of the graph it is attached to.

    ``shape_tuple(var)`` / ``get_shape(var, i)`` give lengths in terms of the
    graph's inputs; ``get_non_recursive_shape(var, i)`` in terms of
    ``var.owner``'s inputs only; ``same_shape(x, y)`` tells whether two
    shapes are provably equal. Attaching it sets ``fgraph.shape_feature``.
    """

    def __init__(self):
        self.fgraph = None
        self._cache = {}  # node -> per output: tuple of length expressions (or None)
        self._stale = set()  # nodes with a changed input since the last query
        self._shape_i_cache = {}  # var -> {i: its Shape_i read}, one node per (var, i)
        self.lscalar_one = _int64_constant(1)
        # Shape_i nodes whose input was replaced: rewrites may move them to the new input.
        self.scheduled = {}

    # ----------------------------------------------------------------- reads
    def _shape_i_var(self, var, i):
        per_dim = self._shape_i_cache.setdefault(var, {})
        if i not in per_dim:
            per_dim[i] = _fresh_shape_i(var, i)
        return per_dim[i]

    def _coerce(self, element, node):
        """One entry of an ``infer_shape`` answer as an int64 scalar variable."""
        if isinstance(element, np.ndarray):
            if element.ndim != 0:
                raise TypeError(f"infer_shape of {node.op} gave a non-scalar array as a length: {element!r}")
            element = element.item()
        if isinstance(element, (bool, np.bool_)):
            raise TypeError(f"infer_shape of {node.op} gave a boolean as a length: {element!r}")
        if isinstance(element, (int, np.integer)):
            if int(element) < 0:
                raise ValueError(f"infer_shape of {node.op} gave a negative length: {int(element)}")
            return _int64_constant(int(element))
        if isinstance(element, Variable):
            dtype = getattr(element.type, "dtype", None)
            if dtype not in integer_dtypes:
                raise TypeError(f"infer_shape of {node.op} gave a length that is not an integer: {element!r}")
            if getattr(element.type, "ndim", 0):
                raise TypeError(f"infer_shape of {node.op} gave a length that is not a scalar: {element!r}")
            if dtype == "int64":
                return element
            if isinstance(element, Constant):
                return _int64_constant(int(np.asarray(element.data)))
            from lucent.tensor.basic import cast

            return cast(element, "int64")
        raise TypeError(
            f"infer_shape of {node.op} gave a length of type {type(element).__name__} "
            f"(expected an int or an integer scalar variable): {element!r}"
        )

    def _compute(self, node, recursive):
        """Each output's shape tuple for ``node`` (None for outputs without a shape)."""
        if recursive:
            in_len, out_len = self.get_shape, self._shape_i_var
        else:
            in_len = out_len = _fresh_shape_i
        input_shapes = [
            tuple(in_len(inp, j) for j in range(inp.type.ndim)) if _has_shape(inp) else None
            for inp in node.inputs
        ]
        inferred = None
        infer = getattr(node.op, "infer_shape", None)
        if infer is not None:
            try:
                inferred = call_infer_shape(node.op, self.fgraph, node, input_shapes)
            except (ShapeError, NotImplementedError, MethodNotDefined):
                inferred = None
            except Exception as exc:
                from lucent.configdefaults import config

                if config.on_shape_error == "raise":
                    raise
                warnings.warn(
                    f"infer_shape of {node.op} failed ({type(exc).__name__}: {exc}); its outputs' "
                    "shapes are read with Shape_i instead",
                    stacklevel=3,
                )
                inferred = None
        result = []
        for k, out in enumerate(node.outputs):
            if not _has_shape(out):
                result.append(None)
                continue
            sh = inferred[k] if inferred is not None and k < len(inferred) else None
            if not isinstance(sh, (list, tuple)):
                result.append(tuple(out_len(out, j) for j in range(out.type.ndim)))
                continue
            if len(sh) != out.type.ndim:
                raise ValueError(
                    f"infer_shape of {node.op} gave {len(sh)} lengths for output {k}, "
                    f"which has {out.type.ndim} dimensions"
                )
            result.append(tuple(self._coerce(s, node) for s in sh))
        return tuple(result)

    def _node_shapes(self, node):
        """Cached recursive shapes of ``node``, filling its ancestors' bottom-up."""
        if self._stale:
            self._flush_stale()
        cache = self._cache
        if node in cache:
            return cache[node]
        stack = [node]
        while stack:
            top = stack[-1]
            if top in cache:
                stack.pop()
                continue
            missing = [
                inp.owner
                for inp in top.inputs
                if inp.owner is not None
                and inp.owner not in cache
                and _has_shape(inp)
                and any(s is None for s in inp.type.shape)
            ]
            if missing:
                stack.extend(missing)
            else:
                stack.pop()
                cache[top] = self._compute(top, recursive=True)
        return cache[node]

    def get_shape(self, var, idx):
        """An expression for ``var.shape[idx]`` in terms of the graph's inputs."""
        length = var.type.shape[idx]
        if length is not None:
            return _int64_constant(length)
        node = var.owner
        if node is None:
            return self._shape_i_var(var, idx)
        sh = self._node_shapes(node)[node.outputs.index(var)]
        return sh[idx] if sh is not None else self._shape_i_var(var, idx)

    def get_non_recursive_shape(self, var, idx):
        """An expression for ``var.shape[idx]`` reading only ``var.owner``'s inputs.

        Works without being attached to a graph.
        """
        length = var.type.shape[idx]
        if length is not None:
            return _int64_constant(length)
        node = var.owner
        if node is None:
            return _fresh_shape_i(var, idx)
        sh = self._compute(node, recursive=False)[node.outputs.index(var)]
        return sh[idx] if sh is not None else _fresh_shape_i(var, idx)

    def shape_tuple(self, var):
        """``var``'s shape as a tuple of int64 scalar expressions (None for shapeless types)."""
        if not _has_shape(var):
            return None
        return tuple(self.get_shape(var, i) for i in range(var.type.ndim))

    @property
    def shape_of(self):
        """Mapping view ``shape_of[var] -> shape_tuple(var)`` (kept for older rewrites)."""
        warnings.warn(
            "ShapeFeature.shape_of is deprecated; use shape_tuple(var) instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        return _ShapeOfView(self)

    def same_shape(self, x, y, dim_x=None, dim_y=None):
        """True when ``x`` and ``y`` (or their axes ``dim_x``/``dim_y``) provably have the same lengths."""
        sx, sy = self.shape_tuple(x), self.shape_tuple(y)
        if sx is None or sy is None:
            return False
        if dim_x is not None:
            sx = (sx[dim_x],)
        if dim_y is not None:
            sy = (sy[dim_y],)
        if len(sx) != len(sy):
            return False
        for dx, dy in zip(sx, sy):
            if dx is dy:
                continue
            if isinstance(dx, Constant) and isinstance(dy, Constant):
                if np.array_equal(dx.data, dy.data):
                    continue
                return False
            if not equal_computations([dx], [dy]):
                return False
        return True

    # -------------------------------------------------------------- callbacks
    def on_attach(self, fgraph):
        if hasattr(fgraph, "shape_feature"):
            raise AlreadyThere("this FunctionGraph already has a ShapeFeature")
        if self.fgraph is not None and self.fgraph is not fgraph:
            raise ValueError("this ShapeFeature is already attached to another FunctionGraph")
        self.fgraph = fgraph
        fgraph.shape_feature = self

    def on_detach(self, fgraph):
        self._cache.clear()
        self._stale.clear()
        self._shape_i_cache.clear()
        self.scheduled.clear()
        self.fgraph = None
        if getattr(fgraph, "shape_feature", None) is self:
            del fgraph.shape_feature

    def _flush_stale(self):
        """Forget the shapes of the stale nodes and of every node downstream of them."""
        clients = self.fgraph.clients
        queue = deque(self._stale)
        seen = set(self._stale)
        self._stale = set()
        while queue:
            node = queue.popleft()
            self._cache.pop(node, None)
            for out in node.outputs:
                for client, _ in clients.get(out, ()):
                    if isinstance(client, Apply) and client not in seen:
                        seen.add(client)
                        queue.append(client)

    def on_prune(self, fgraph, node, reason):
        self._cache.pop(node, None)
        self._stale.discard(node)
        for out in node.outputs:
            self._shape_i_cache.pop(out, None)

    def on_change_input(self, fgraph, node, i, r, new_r, reason=None):
        if r is new_r or not isinstance(node, Apply):
            return
        self._stale.add(node)
        if _has_shape(r):
            from lucent.tensor.shape import Shape_i

            for client, _ in fgraph.clients.get(r, ()):
                if isinstance(client, Apply) and isinstance(client.op, Shape_i):
                    self.scheduled[client] = new_r

    def clone(self):
        return type(self)()


class _ShapeOfView:
    """Read-only ``shape_of[var]`` mapping over a ``ShapeFeature``."""

    def __init__(self, feature):
        self._feature = feature

    def __getitem__(self, var):
        return self._feature.shape_tuple(var)

    def get(self, var, default=None):
        result = self._feature.shape_tuple(var)
        return default if result is None else result

    def __contains__(self, var):
        return _has_shape(var)


class ShapeOptimizer(GraphRewriter):
    """A graph rewriter that attaches a ``ShapeFeature`` (it changes no node)."""

    def apply(self, fgraph):
        fgraph.attach_feature(ShapeFeature())


class UnShapeOptimizer(GraphRewriter):
    """A graph rewriter that removes the graph's ``ShapeFeature``."""

    def apply(self, fgraph):
        for feature in list(fgraph._features):
            if isinstance(feature, ShapeFeature):
                fgraph.remove_feature(feature)


__all__ = ["ShapeFeature", "ShapeOptimizer", "UnShapeOptimizer"]
