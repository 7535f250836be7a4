"""Element-wise ops on tensors: ``Elemwise``, ``DimShuffle`` and ``CAReduce``.

These three ops carry most of a numerical program:

* ``Elemwise(scalar_op)`` maps a scalar op over arrays with NumPy
  broadcasting. Its dtype rule and gradient come from the scalar op, so every
  element-wise function is defined once, at the level of one element.
* ``DimShuffle`` permutes, inserts (``'x'``) and drops (length-1) dimensions.
  It is a *view*: the output shares the input's memory.
* ``CAReduce(scalar_op, axis)`` folds a commutative, associative scalar op
  over some axes (``Sum``, ``Prod``, ``Max``, ``Min``, ``All``, ``Any``).

Broadcasting is decided statically: a dimension broadcasts only when its
static length is 1. A value whose length turns out to be 1 only at run time
where the type says "unknown" is an error, because the gradient (which must
sum over broadcast dimensions) was built without knowing it.
"""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.graph.traversal import io_toposort
from lucent.scalar import basic as ps
from lucent.scalar.dtypes import continuous_dtypes, discrete_dtypes, normalize_dtype
from lucent.tensor.basic import as_tensor_variable, constant
from lucent.tensor.type import TensorType


def _shape_str(shape):
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast_static_shape(*shapes):
    """The static shape of the broadcast of ``shapes`` (all of the same rank).

    A known length other than 1 wins over 1 and over unknown; two different
    known lengths (neither 1) cannot broadcast and raise ``ValueError``.
    """
    out = []
    for dims in zip(*shapes):
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(
                "Incompatible Elemwise input shapes "
                f"[{', '.join(_shape_str(s) for s in shapes)}]: lengths {sorted(known)} "
                "cannot be broadcast together"
            )
        if known:
            out.append(known.pop())
        elif all(d == 1 for d in dims):
            out.append(1)
        else:
            out.append(None)
    return tuple(out)


# ---------------------------------------------------------------------------
# DimShuffle
# ---------------------------------------------------------------------------
class DimShuffle(Op):
    """Reorder, add (``'x'``) and drop dimensions of a tensor, as a view.

    ``new_order`` lists, for each output dimension, the input dimension it
    comes from, or ``'x'`` for a new length-1 dimension. Input dimensions not
    listed are dropped; they must have static length 1.
    """

    __props__ = ("input_ndim", "new_order")
    view_map = {0: [0]}

    def __init__(self, input_ndim, new_order):
        if not isinstance(input_ndim, (int, np.integer)) or input_ndim < 0:
            raise TypeError(f"input_ndim must be a non-negative int, got {input_ndim!r}")
        new_order = tuple("x" if o == "x" else o for o in new_order)
        for o in new_order:
            if o == "x":
                continue
            if not isinstance(o, (int, np.integer)) or isinstance(o, bool):
                raise TypeError(f"DimShuffle order entries must be ints or 'x', got {o!r} in {new_order}")
            if not 0 <= o < input_ndim:
                raise ValueError(
                    f"DimShuffle order {new_order} refers to dimension {o}, but the input has "
                    f"only {input_ndim} dimensions"
                )
        kept = [int(o) for o in new_order if o != "x"]
        if len(set(kept)) != len(kept):
            raise ValueError(f"DimShuffle order {new_order} repeats an input dimension: a dimension may not appear twice")
        self.input_ndim = int(input_ndim)
        self.new_order = tuple(o if o == "x" else int(o) for o in new_order)
        self.shuffle = kept
        self.drop = [i for i in range(input_ndim) if i not in kept]
        self.augment = [i for i, o in enumerate(self.new_order) if o == "x"]
        self.is_transpose = not self.drop and not self.augment and kept != sorted(kept)
        self.is_squeeze = bool(self.drop) and not self.augment and kept == sorted(kept)
        self.is_expand_dims = bool(self.augment) and not self.drop and kept == sorted(kept)
        self.is_left_expand_dims = self.is_expand_dims and self.augment == list(range(len(self.augment)))

    def __str__(self):
        def ax(name, axes):
            if len(axes) == 1:
                return f"{name}{{axis={axes[0]}}}"
            return f"{name}{{axes={list(axes)}}}"

        n = self.input_ndim
        if self.is_expand_dims:
            return ax("ExpandDims", self.augment)
        if self.is_squeeze:
            return ax("Squeeze", self.drop)
        if self.is_transpose:
            if n >= 2 and self.shuffle == [*range(n - 2), n - 1, n - 2]:
                return "MatrixTranspose"
            return f"Transpose{{axes={tuple(self.shuffle)}}}"
        if not self.drop and not self.augment:
            return "Identity"  # never built by helpers, but printable
        return "DimShuffle{order=[" + ",".join(str(o) for o in self.new_order) + "]}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.type.ndim != self.input_ndim:
            raise TypeError(
                f"{self} expects an input with {self.input_ndim} dimensions, got {x.type} "
                f"({x.type.ndim} dimensions)"
            )
        for d in self.drop:
            if x.type.shape[d] != 1:
                raise ValueError(
                    f"{self}: cannot drop dimension {d} of {x} with type {x.type}: only "
                    "dimensions of static length 1 can be dropped (use specify_shape or "
                    "squeeze on a length-1 dimension)"
                )
        shape = tuple(1 if o == "x" else x.type.shape[o] for o in self.new_order)
        return Apply(self, [x], [TensorType(x.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        if x.ndim != self.input_ndim:
            raise ValueError(f"{self} got an array with {x.ndim} dimensions, expected {self.input_ndim}")
        for d in self.drop:
            if x.shape[d] != 1:
                raise ValueError(f"{self} cannot drop dimension {d} of length {x.shape[d]} (shape {x.shape})")
        v = np.transpose(x, self.shuffle + self.drop)
        if self.drop:
            v = v[(Ellipsis,) + (0,) * len(self.drop)]
        if self.augment:
            v = np.expand_dims(v, tuple(self.augment))
        output_storage[0][0] = np.asarray(v) if not isinstance(v, np.ndarray) else v

    def infer_shape(self, fgraph, node, input_shapes):
        (ish,) = input_shapes
        return [tuple(1 if o == "x" else ish[o] for o in self.new_order)]

    def L_op(self, inputs, outputs, output_grads):
        (x,), (gz,) = inputs, output_grads
        if x.type.dtype not in continuous_dtypes:
            return [_zeros_like(x)]
        gz = as_tensor_variable(gz)
        order = []
        for i in range(self.input_ndim):
            order.append(self.new_order.index(i) if i in self.shuffle else "x")
        # The gradient drops the added axes; an op between may have lost their
        # static length 1 (e.g. an FFT's output type), so it is asserted again.
        unknown = [i for i, o in enumerate(self.new_order) if o == "x" and gz.type.shape[i] is None]
        if unknown:
            from lucent.tensor.shape import specify_broadcastable

            gz = specify_broadcastable(gz, *unknown)
        return [DimShuffle(gz.type.ndim, tuple(order))(gz)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            return [None]
        return self(*eval_points, return_list=True)


def transpose(x, axes=None):
    """Permute the dimensions of ``x`` (reverse them when ``axes`` is None)."""
    x = as_tensor_variable(x)
    if axes is None:
        axes = tuple(range(x.type.ndim - 1, -1, -1))
    axes = tuple(_normalize_axis(a, x.type.ndim) for a in axes)
    if sorted(axes) != list(range(x.type.ndim)):
        raise ValueError(f"transpose axes {axes} are not a permutation of the {x.type.ndim} dimensions of {x}")
    if axes == tuple(range(x.type.ndim)):
        return x
    out = DimShuffle(x.type.ndim, axes)(x)
    if x.name and x.type.ndim == 2:
        out.name = x.name + ".T"
    return out


def _normalize_axis(axis, ndim):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"An axis must be an int, got {axis!r}")
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0):
        raise np.exceptions.AxisError(
            f"axis {axis} is out of bounds for a tensor with {ndim} dimensions"
        ) if ndim else ValueError(f"axis {axis} is out of bounds for a 0-d tensor")
    return int(axis) % ndim


def _pad_left(x, ndim):
    """``x`` with length-1 dimensions added on the left up to ``ndim``."""
    if x.type.ndim == ndim:
        return x
    k = ndim - x.type.ndim
    return DimShuffle(x.type.ndim, ("x",) * k + tuple(range(x.type.ndim)))(x)


def _zeros_like(x, dtype=None):
    """A zero tensor with the shape of ``x``: a float zero gradient by default."""
    if dtype is None:
        dtype = x.type.dtype if x.type.dtype in continuous_dtypes else config.floatX
    zero = constant(np.zeros((), dtype=dtype))
    return Elemwise(ps.second)(x, zero)


# ---------------------------------------------------------------------------
# Elemwise
# ---------------------------------------------------------------------------
class Elemwise(Op):
    """Apply ``scalar_op`` element by element, with NumPy broadcasting.

    ``inplace_pattern`` maps output indices to the input they overwrite
    (``{0: 0}``: the result is written into input 0). Such ops are made by
    the in-place rewrites; the output must then have the input's dtype and
    shape.
    """

    __props__ = ("scalar_op", "inplace_pattern")

    def __init__(self, scalar_op, inplace_pattern=None, name=None):
        if not isinstance(scalar_op, ps.ScalarOp):
            raise TypeError(f"Elemwise needs a ScalarOp, got {scalar_op!r}")
        self.scalar_op = scalar_op
        self._inplace = dict(inplace_pattern or {})
        self.destroy_map = {o: [i] for o, i in self._inplace.items()}
        self.name = name
        self.nin = scalar_op.nin
        self.nout = scalar_op.nout

    @property
    def inplace_pattern(self):
        return tuple(sorted(self._inplace.items()))

    def __str__(self):
        if self.name:
            return self.name
        return str(self.scalar_op).capitalize()

    def __getstate__(self):
        return dict(self.__dict__)

    def make_node(self, *inputs):
        inputs = [as_tensor_variable(i) for i in inputs]
        if self.scalar_op.nin >= 0 and len(inputs) != self.scalar_op.nin:
            raise TypeError(f"{self} takes {self.scalar_op.nin} inputs, got {len(inputs)}")
        ndim = max((i.type.ndim for i in inputs), default=0)
        inputs = [_pad_left(i, ndim) for i in inputs]
        shadow = self.scalar_op.make_node(*[ps.get_scalar_type(i.type.dtype)() for i in inputs])
        out_shape = broadcast_static_shape(*[i.type.shape for i in inputs])
        outputs = [TensorType(o.type.dtype, out_shape)() for o in shadow.outputs]
        for o, i in self._inplace.items():
            if inputs[i].type != outputs[o].type:
                raise TypeError(
                    f"{self} cannot work in place on input {i} of type {inputs[i].type}: the "
                    f"output has type {outputs[o].type}"
                )
        return Apply(self, inputs, outputs)

    def inplace_shape_constraints(self, node):
        """Each input's lengths equal those of the input the result overwrites."""
        destroyed = [ins[0] for ins in (self.destroy_map or {}).values()]
        if not destroyed:
            return []
        dest = destroyed[0]
        ndim = node.inputs[dest].type.ndim
        return [
            ((k, d), (dest, d))
            for k, var in enumerate(node.inputs)
            if k != dest and getattr(var.type, "ndim", None) == ndim
            for d in range(ndim)
            if var.type.shape[d] != 1
        ]

    def perform(self, node, inputs, output_storage):
        # Shapes are checked before anything is written, so an in-place node
        # that fails leaves the buffer it would overwrite untouched.
        out_shape = _check_runtime_shapes(node, inputs)
        op = self.scalar_op
        args = inputs
        if op.compute_in_output_dtype:
            dtype = node.outputs[0].type.numpy_dtype
            args = [a if a.dtype == dtype else a.astype(dtype) for a in inputs]
        targets = self._inplace_targets(node, inputs, out_shape)
        if op.nout == 1 and 0 in targets:
            from lucent.scalar.composite import call_into

            if call_into(op, args, targets[0]):
                output_storage[0][0] = targets[0]
                return
        with np.errstate(all="ignore"):
            results = op.impl(*args)
        if op.nout == 1:
            results = (results,)
        for o, (storage, out, res) in enumerate(zip(output_storage, node.outputs, results)):
            dtype = out.type.numpy_dtype
            if o in targets:
                # Every result was computed before this first write.
                with np.errstate(all="ignore"):
                    np.copyto(targets[o], res, casting="unsafe")
                storage[0] = targets[o]
                continue
            res = np.asarray(res)
            if res.shape != out_shape:
                res = np.broadcast_to(res, out_shape)
            prev = storage[0]
            if (
                isinstance(prev, np.ndarray)
                and prev.shape == out_shape
                and prev.dtype == dtype
                and prev.flags.writeable
                and not any(np.may_share_memory(prev, a) for a in inputs)
            ):
                # Reuse the buffer of the previous call.
                with np.errstate(all="ignore"):
                    np.copyto(prev, res, casting="unsafe")
                continue
            if res.dtype != dtype:
                with np.errstate(all="ignore"):
                    res = res.astype(dtype)
            elif any(np.may_share_memory(res, a) for a in inputs) or not res.flags.writeable:
                res = res.copy()
            storage[0] = res

    def _inplace_targets(self, node, inputs, out_shape):
        """``{output: input array}`` for the in-place outputs that can be written.

        An input that is read-only, or (against its type) not of the output's
        shape and dtype, is not overwritten: that output is computed into a
        new array instead, which is always correct.
        """
        targets = {}
        for o, i in self._inplace.items():
            t = inputs[i]
            if (
                isinstance(t, np.ndarray)
                and t.shape == out_shape
                and t.dtype == node.outputs[o].type.numpy_dtype
                and t.flags.writeable
            ):
                targets[o] = t
        return targets

    def infer_shape(self, fgraph, node, input_shapes):
        out_shape = []
        static = node.outputs[0].type.shape
        for d, s in enumerate(static):
            if s is not None:
                out_shape.append(s)
                continue
            for inp, ish in zip(node.inputs, input_shapes):
                if inp.type.shape[d] != 1:
                    out_shape.append(ish[d])
                    break
            else:  # pragma: no cover - all broadcastable means static 1
                out_shape.append(1)
        return [tuple(out_shape) for _ in node.outputs]

    def outer(self, x, y):
        """``op(x, y)`` for every pair of elements (``numpy.ufunc.outer``): shape ``x.shape + y.shape``."""
        if self.scalar_op.nin not in (-1, 2):
            raise NotImplementedError("outer is only available for binary operators")
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        x_ = x.dimshuffle(*range(x.type.ndim), *(["x"] * y.type.ndim))
        y_ = y.dimshuffle(*(["x"] * x.type.ndim), *range(y.type.ndim))
        return self(x_, y_)

    def L_op(self, inputs, outputs, output_grads):
        if all(o.type.dtype in discrete_dtypes for o in outputs):
            return [_zeros_like(i) for i in inputs]
        from lucent.gradient import DisconnectedType, NullType

        # One scalar variable per distinct input: an op applied to the same
        # variable twice (``xlogy(x, x)``) sees that in its gradient.
        scalar_of = {}
        for i in inputs:
            if i not in scalar_of:
                scalar_of[i] = ps.get_scalar_type(i.type.dtype)()
        s_inputs = [scalar_of[i] for i in inputs]
        s_outputs = self.scalar_op.make_node(*s_inputs).outputs
        s_ograds = []
        for g, o in zip(output_grads, outputs):
            dtype = g.type.dtype if isinstance(g.type, TensorType) else o.type.dtype
            s_ograds.append(ps.get_scalar_type(dtype)())
        s_grads = self.scalar_op.L_op(s_inputs, s_outputs, s_ograds)

        memo = dict(zip(s_inputs, inputs))
        memo.update(zip(s_outputs, outputs))
        memo.update(zip(s_ograds, output_grads))
        to_lift = [g for g in s_grads if isinstance(getattr(g, "type", None), ps.ScalarType)]
        for node in io_toposort(list(memo), to_lift):
            new_inputs = [_lift(v, memo) for v in node.inputs]
            new_outs = Elemwise(node.op)(*new_inputs, return_list=True)
            memo.update(zip(node.outputs, new_outs))

        grads = []
        for inp, g in zip(inputs, s_grads):
            if isinstance(g.type, (DisconnectedType, NullType)):
                grads.append(g)
                continue
            g = _lift(g, memo)
            grads.append(_fit_grad(g, inp))
        return grads


def _lift(v, memo):
    """The tensor counterpart of a scalar variable of a gradient graph."""
    if v in memo:
        return memo[v]
    if isinstance(v, Constant):
        t = constant(np.asarray(v.data))
        memo[v] = t
        return t
    raise ValueError(f"Cannot lift the scalar variable {v} to a tensor: it is not connected to the node")


def _fit_grad(g, inp):
    """Make the gradient ``g`` have the shape and dtype of ``inp``.

    Sums over the dimensions along which ``inp`` was broadcast, fills a
    gradient that does not depend on the full shape (e.g. a constant), and
    casts to the input's float dtype (integers get floatX zeros).
    """
    if inp.type.dtype not in continuous_dtypes:
        return _zeros_like(inp)
    g = as_tensor_variable(g)
    if g.type.ndim < inp.type.ndim:
        g = _pad_left(g, inp.type.ndim)
    axes = [d for d, (si, sg) in enumerate(zip(inp.type.shape, g.type.shape)) if si == 1 and sg != 1]
    if axes:
        g = Sum(axis=tuple(axes), dtype=g.type.dtype)(g)
        order = []
        j = 0
        for d in range(inp.type.ndim):
            if d in axes:
                order.append("x")
            else:
                order.append(j)
                j += 1
        g = DimShuffle(g.type.ndim, tuple(order))(g)
    if any(si != 1 and sg == 1 for si, sg in zip(inp.type.shape, g.type.shape)) or g.type.ndim == 0 and inp.type.ndim:
        g = Elemwise(ps.second)(inp, g)
    if g.type.dtype != inp.type.dtype:
        g = Elemwise(ps.Cast(ps.get_scalar_type(inp.type.dtype)))(g)
    return g


def _check_runtime_shapes(node, inputs):
    """The output shape; raises a clear error for impossible broadcasting."""
    ndim = node.outputs[0].type.ndim
    out = []
    for d in range(ndim):
        length = None
        for inp, val in zip(node.inputs, inputs):
            if val.ndim != ndim:
                raise ValueError(f"{node.op}: input {inp} has {val.ndim} dimensions, expected {ndim}")
            n = val.shape[d]
            if n == 1 and inp.type.shape[d] is None:
                continue  # checked below, with a message about runtime broadcasting
            if inp.type.shape[d] == 1:
                if n != 1:
                    raise ValueError(f"{node.op}: input {inp} has length {n} in dimension {d}, its type says 1")
                continue
            if length is None:
                length = n
            elif n != length:
                raise ValueError(
                    f"{node.op}: input shapes {[tuple(v.shape) for v in inputs]} are not "
                    f"compatible: dimension {d} has lengths {length} and {n}"
                )
        if length is None:
            length = 1
        out.append(length)
    for inp, val in zip(node.inputs, inputs):
        for d, (s, n) in enumerate(zip(inp.type.shape, val.shape)):
            if s is None and n == 1 and out[d] != 1:
                raise ValueError(
                    f"{node.op}: input {inp} has length 1 in dimension {d} at run time but its "
                    f"type {inp.type} does not say so, and the other inputs have length "
                    f"{out[d]}. Runtime broadcasting is not allowed: give the variable a static "
                    "shape with 1 there (e.g. lt.tensor(shape=(1, None)) or specify_shape)"
                )
    return tuple(out)


from lucent.tensor.reduction import (  # noqa: E402,F401
    All,
    Any,
    CAReduce,
    Max,
    Min,
    Prod,
    Sum,
)

__all__ = ["Elemwise", "DimShuffle", "CAReduce", "transpose"]
