"""``pad``: NumPy's ``np.pad`` with every mode, as one op with an inner graph.

Padding is done one axis at a time, as NumPy does: the array padded along
the earlier axes is extended along the next one, so corners take the value
the later axis gives them. Each mode is a small graph per axis:

* ``constant`` / ``empty``: blocks of the value (uninitialised) joined on;
* ``edge``, ``wrap``, ``symmetric``, ``reflect``: a gather (``take``) with
  an index map: clamped, periodic, or mirrored positions;
* ``linear_ramp``: ``arange`` arithmetic from the end value to the edge;
* ``maximum``, ``minimum``, ``mean``, ``median``: a statistic of (the first
  / last ``stat_length`` entries of) the axis, broadcast over the pad.

``Pad`` holds that graph as its inner graph (``HasInnerGraph``): the Numba
path compiles it like any inner graph and the gradient is the graph's
gradient, while ``perform`` calls ``np.pad`` itself, an independent
reference for DebugMode.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from lucent.graph.basic import Apply, Constant
from lucent.graph.op import HasInnerGraph, Op
from lucent.scalar.dtypes import integer_dtypes
from lucent.tensor.basic import as_tensor_variable, cast, constant

PadMode = Literal[
    "constant", "edge", "linear_ramp", "maximum", "minimum", "mean", "median",
    "wrap", "symmetric", "reflect", "empty",
]

#: The keyword options each mode accepts (as in ``np.pad``).
mode_options = {
    "constant": {"constant_values"},
    "edge": set(),
    "empty": set(),
    "wrap": set(),
    "linear_ramp": {"end_values"},
    "maximum": {"stat_length"},
    "minimum": {"stat_length"},
    "mean": {"stat_length"},
    "median": {"stat_length"},
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
}


# --------------------------------------------------------------------------- #
# Per-axis pieces
# --------------------------------------------------------------------------- #
def _pairs(value, ndim, what):
    """``value`` broadcast to ``ndim`` (before, after) pairs of scalars (ints or 0-d tensors)."""
    if isinstance(value, Constant):
        value = value.data
    if not hasattr(value, "type"):
        arr = np.asarray(value)
        try:
            arr = np.broadcast_to(arr, (ndim, 2))
        except ValueError:
            raise ValueError(f"pad: {what} of shape {arr.shape} cannot be broadcast to ({ndim}, 2)") from None
        return [(arr[d, 0].item(), arr[d, 1].item()) for d in range(ndim)]
    from lucent.tensor.spacing import broadcast_to

    value = broadcast_to(value, (ndim, 2))
    return [(value[d, 0], value[d, 1]) for d in range(ndim)]


def _sl(ndim, axis, s):
    index = [slice(None)] * ndim
    index[axis] = s
    return tuple(index)


def _along(vec, ndim, axis):
    """A vector laid along ``axis`` of an ``ndim``-d array (length 1 elsewhere)."""
    pattern = ["x"] * ndim
    pattern[axis] = 0
    return vec.dimshuffle(pattern)


def _block(x, axis, length, value):
    """An array shaped like ``x`` but of ``length`` along ``axis``, filled with ``value`` (broadcast)."""
    from lucent.tensor.basic import alloc

    shape = [x.shape[d] for d in range(x.type.ndim)]
    shape[axis] = length
    return alloc(value, *shape)


def _gather_index(kind, n, before, after):
    """Source positions along an axis of length ``n`` for the padded positions."""
    from lucent.tensor import math as lm
    from lucent.tensor.basic import arange

    pos = arange(-as_tensor_variable(before), as_tensor_variable(n) + after)
    if kind == "edge":
        return lm.clip(pos, 0, lm.maximum(n - 1, 0))
    if kind == "wrap":
        return pos % lm.maximum(n, 1)
    if kind == "symmetric":
        period = lm.maximum(2 * n, 1)
        folded = pos % period
        return lm.switch(lm.lt(folded, n), folded, period - 1 - folded)
    period = lm.maximum(2 * n - 2, 1)  # reflect: the edge entries are not repeated
    folded = pos % period
    return lm.switch(lm.lt(folded, n), folded, period - folded)


def _entry(x, axis, i):
    """``x[..., i, ...]`` along ``axis``, keeping that axis (with static length 1)."""
    from lucent.tensor.basic import expand_dims

    return expand_dims(x[_sl(x.type.ndim, axis, i)], axis)


def _round_if_int(stat, dtype):
    from lucent.tensor import math as lm

    if dtype in integer_dtypes:
        stat = lm.round(stat, mode="half_to_even")
    return cast(stat, dtype)


def _stat(region, axis, kind):
    from lucent.tensor import math as lm

    if kind == "maximum":
        return lm.max(region, axis=axis, keepdims=True)
    if kind == "minimum":
        return lm.min(region, axis=axis, keepdims=True)
    if kind == "mean":
        return lm.mean(region, axis=axis, keepdims=True)
    from lucent.tensor.sort import sort

    ordered = sort(region, axis=axis)
    m = region.shape[axis]
    lo = _entry(ordered, axis, (m - 1) // 2)
    hi = _entry(ordered, axis, m // 2)
    return (cast(lo, "float64") + cast(hi, "float64")) / 2 if region.type.dtype in integer_dtypes else (lo + hi) / 2


def _pad_axis(x, axis, before, after, mode, option):
    """``x`` padded along ``axis`` by ``before`` / ``after`` entries."""
    from lucent.tensor import math as lm
    from lucent.tensor.basic import arange, join

    ndim, dtype = x.type.ndim, x.type.dtype
    n = x.shape[axis]
    if mode in ("edge", "wrap", "symmetric", "reflect"):
        return x.take(_gather_index(mode, n, before, after), axis=axis)
    if mode == "constant":
        c_before, c_after = option
        left = _block(x, axis, before, cast(as_tensor_variable(c_before), dtype))
        right = _block(x, axis, after, cast(as_tensor_variable(c_after), dtype))
    elif mode == "empty":
        from lucent.tensor.joining import empty

        def _empty(length):
            shape = [x.shape[d] for d in range(ndim)]
            shape[axis] = length
            return empty(shape, dtype)

        left, right = _empty(before), _empty(after)
    elif mode == "linear_ramp":
        e_before, e_after = option
        ramp_dtype = "float64" if dtype in integer_dtypes or dtype == "bool" else dtype
        edge_l = cast(_entry(x, axis, 0), ramp_dtype)
        edge_r = cast(_entry(x, axis, n - 1), ramp_dtype)
        e_b = cast(as_tensor_variable(e_before), ramp_dtype)
        e_a = cast(as_tensor_variable(e_after), ramp_dtype)
        b = as_tensor_variable(before)
        a = as_tensor_variable(after)
        steps_l = _along(cast(arange(b), ramp_dtype), ndim, axis)
        steps_r = _along(cast(a - 1 - arange(a), ramp_dtype), ndim, axis)
        left = steps_l * ((edge_l - e_b) / cast(lm.maximum(b, 1), ramp_dtype)) + e_b
        right = steps_r * ((edge_r - e_a) / cast(lm.maximum(a, 1), ramp_dtype)) + e_a
        if ramp_dtype != dtype:
            left, right = cast(lm.floor(left), dtype), cast(lm.floor(right), dtype)
    else:
        len_before, len_after = option
        if len_before is None:
            region_l = region_r = x
        else:
            k_b = lm.minimum(as_tensor_variable(len_before), n)
            k_a = lm.minimum(as_tensor_variable(len_after), n)
            region_l = x[_sl(ndim, axis, slice(0, k_b))]
            region_r = x[_sl(ndim, axis, slice(n - k_a, None))]
        stat_l = _stat(region_l, axis, mode)
        stat_r = _stat(region_r, axis, mode)
        if mode in ("mean", "median"):
            stat_l, stat_r = _round_if_int(stat_l, dtype), _round_if_int(stat_r, dtype)
        left = _block(x, axis, before, cast(stat_l, dtype))
        right = _block(x, axis, after, cast(stat_r, dtype))
    return join(axis, left, x, right)


def _symbolic_pad(x, widths, mode, options):
    for axis, (before, after) in enumerate(widths):
        x = _pad_axis(x, axis, before, after, mode, options[axis] if options is not None else None)
    return x


# --------------------------------------------------------------------------- #
# The op
# --------------------------------------------------------------------------- #
def _interior_comparison(static_pad_width):
    """``values_eq_approx`` for ``pad(..., mode="empty")``: compare the unpadded interior only.

    With a symbolic ``pad_width`` the interior's place is not known here, so
    nothing is compared.
    """
    from lucent.tensor.type import TensorType, values_eq_approx_always_true

    if static_pad_width is None:
        return values_eq_approx_always_true

    def values_eq_approx_interior(a, b):
        if a.shape != b.shape:
            return False
        inside = tuple(slice(lo, n - hi) for (lo, hi), n in zip(static_pad_width, a.shape))
        return TensorType.values_eq_approx(a[inside], b[inside])

    return values_eq_approx_interior


class Pad(Op, HasInnerGraph):
    """``np.pad(x, pad_width, mode, ...)``; its graph is built for the input types.

    Inputs: ``x``, ``pad_width`` (int64, ``(ndim, 2)``) and the mode's option
    (``constant_values`` / ``end_values`` / ``stat_length``, ``(ndim, 2)``).
    A constant ``pad_width`` is also kept as ``static_pad_width`` so that the
    output shape is known when the graph is built.
    """

    __props__ = ("pad_mode", "reflect_type", "has_stat_length", "static_pad_width")

    def __init__(self, pad_mode="constant", reflect_type=None, has_stat_length=False, static_pad_width=None):
        if pad_mode not in mode_options:
            raise ValueError(f"Invalid mode: {pad_mode}; expected one of {sorted(mode_options)}")
        self.pad_mode = pad_mode
        self.reflect_type = reflect_type
        self.has_stat_length = bool(has_stat_length)
        self.static_pad_width = static_pad_width
        self.fgraph = None

    def _inner_graph(self, inputs):
        from lucent.graph.fg import FunctionGraph

        dummies = [i.type() for i in inputs]
        x, width = dummies[0], dummies[1]
        ndim = x.type.ndim
        if self.static_pad_width is not None:
            widths = [tuple(p) for p in self.static_pad_width]
        else:
            widths = [(width[d, 0], width[d, 1]) for d in range(ndim)]
        option = None
        if self.pad_mode in ("constant", "linear_ramp") or self.has_stat_length:
            extra = dummies[2]
            option = [(extra[d, 0], extra[d, 1]) for d in range(ndim)]
        elif self.pad_mode in ("maximum", "minimum", "mean", "median"):
            option = [(None, None)] * ndim
        out = _symbolic_pad(x, widths, self.pad_mode, option)
        return FunctionGraph(dummies, [out], clone=False)

    def make_node(self, x, pad_width, *extra):
        x = as_tensor_variable(x)
        pad_width = as_tensor_variable(pad_width)
        extra = [as_tensor_variable(e) for e in extra]
        node_op = self
        if self.fgraph is None or [i.type for i in self.fgraph.inputs] != [v.type for v in (x, pad_width, *extra)]:
            node_op = Pad(self.pad_mode, self.reflect_type, self.has_stat_length, self.static_pad_width)
            node_op.fgraph = node_op._inner_graph([x, pad_width, *extra])
        out = node_op.fgraph.outputs[0].type()
        if self.pad_mode == "empty":
            # The padding is uninitialised memory: two runs (or DebugMode's
            # two paths) agree only on the copy of ``x`` inside it.
            out.tag.values_eq_approx = _interior_comparison(self.static_pad_width)
        return Apply(node_op, [x, pad_width, *extra], [out])

    def perform(self, node, inputs, output_storage):
        x, width, *extra = inputs
        kwargs = {}
        if self.pad_mode == "constant":
            kwargs["constant_values"] = extra[0]
        elif self.pad_mode == "linear_ramp":
            kwargs["end_values"] = extra[0]
        elif self.has_stat_length:
            kwargs["stat_length"] = extra[0]
        if self.reflect_type is not None:
            kwargs["reflect_type"] = self.reflect_type
        out = np.pad(x, width, mode=self.pad_mode, **kwargs)
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        width = node.inputs[1]
        if self.static_pad_width is not None:
            return [tuple(s + b + a for s, (b, a) in zip(x_shape, self.static_pad_width))]
        return [tuple(s + cast(width[d, 0], "int64") + cast(width[d, 1], "int64") for d, s in enumerate(x_shape))]

    def connection_pattern(self, node):
        pattern = [[True], [False]]
        if len(node.inputs) > 2:
            pattern.append([self.pad_mode in ("constant", "linear_ramp")])
        return pattern

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import DisconnectedType, pullback
        from lucent.graph.replace import clone_replace

        node_op = outputs[0].owner.op if outputs[0].owner is not None else self
        fgraph = node_op.fgraph if node_op.fgraph is not None else self._inner_graph(inputs)
        (composed,) = clone_replace(fgraph.outputs, dict(zip(fgraph.inputs, inputs)))
        wrt = [inputs[0]] + ([inputs[2]] if len(inputs) > 2 and self.pad_mode in ("constant", "linear_ramp") else [])
        grads = pullback([composed], wrt, [output_grads[0]], disconnected_inputs="ignore")
        result = [grads[0], DisconnectedType()()]
        if len(inputs) > 2:
            result.append(grads[1] if len(wrt) > 1 else DisconnectedType()())
        return result

    def clone(self):
        new = Pad(self.pad_mode, self.reflect_type, self.has_stat_length, self.static_pad_width)
        new.fgraph = self.fgraph.clone() if self.fgraph is not None else None
        return new

    def __str__(self):
        return f"Pad{{{self.pad_mode}}}"


def _static_pad_width(pad_width, ndim):
    if not isinstance(pad_width, Constant):
        return None
    widths = np.asarray(pad_width.data)
    return tuple((int(b), int(a)) for b, a in np.broadcast_to(widths, (ndim, 2)))


def pad(x, pad_width, mode="constant", *, constant_values=None, end_values=None, stat_length=None,
        reflect_type=None):
    """``x`` padded by ``pad_width`` entries per axis side, like ``numpy.pad``.

    ``pad_width`` is an int, ``(before, after)`` or one pair per axis
    (symbolic allowed). ``mode`` is one of NumPy's: constant (with
    ``constant_values``), edge, linear_ramp (``end_values``), maximum /
    minimum / mean / median (``stat_length``), reflect / symmetric
    (``reflect_type="even"``), wrap, empty.
    """
    if mode not in mode_options:
        raise ValueError(f"Invalid mode: {mode}; expected one of {sorted(mode_options)}")
    given = {k for k, v in dict(constant_values=constant_values, end_values=end_values,
                                 stat_length=stat_length, reflect_type=reflect_type).items() if v is not None}
    invalid = given - mode_options[mode]
    if invalid:
        raise ValueError(f"Invalid keyword arguments for mode '{mode}': {sorted(invalid)}")
    if reflect_type not in (None, "even"):
        if reflect_type == "odd":
            raise NotImplementedError("pad: reflect_type='odd' is not implemented; only 'even' is")
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    x = as_tensor_variable(x)
    ndim = x.type.ndim
    pad_width = as_tensor_variable(pad_width)
    if pad_width.type.dtype not in integer_dtypes:
        raise TypeError(f"`pad_width` must be of integral type, got {pad_width.type.dtype}")
    if pad_width.type.ndim > 2:
        raise ValueError(f"pad: pad_width must have at most 2 dimensions, got {pad_width.type.ndim}")
    static = _static_pad_width(pad_width, ndim)
    if static is not None and any(v < 0 for pair in static for v in pair):
        raise ValueError(f"pad: index can't contain negative values, got pad_width={static}")
    from lucent.tensor.spacing import broadcast_to

    widths = cast(broadcast_to(pad_width, (ndim, 2)), "int64") if static is None else constant(
        np.asarray(static, dtype="int64").reshape(ndim, 2))
    extra = []
    if mode == "constant":
        extra.append(broadcast_to(as_tensor_variable(0 if constant_values is None else constant_values), (ndim, 2)))
    elif mode == "linear_ramp":
        extra.append(broadcast_to(as_tensor_variable(0 if end_values is None else end_values), (ndim, 2)))
    elif stat_length is not None:
        lengths = as_tensor_variable(stat_length)
        if lengths.type.dtype not in integer_dtypes:
            raise TypeError(f"pad: stat_length must be integers, got {lengths.type.dtype}")
        extra.append(cast(broadcast_to(lengths, (ndim, 2)), "int64"))
    op = Pad(mode, reflect_type, stat_length is not None, static)
    return op(x, widths, *extra)


__all__ = ["Pad", "PadMode", "pad"]
