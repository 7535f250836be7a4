"""Broadcasting helpers and evenly spaced samples, by composition.

``broadcast_shape`` computes the shape NumPy broadcasting would give, as
symbolic lengths, checking at run time (with an ``Assert``) that lengths
not known to be 1 agree. ``broadcast_to`` is an ``alloc``,
``broadcast_arrays`` a chain of ``second``, and ``linspace`` /
``geomspace`` / ``logspace`` are ``arange`` arithmetic; so all of them have
gradients and Numba kernels through the ops they are made of. They are
public at PyTensor's path, :mod:`lucent.tensor.extra_ops`.
"""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Constant, Variable
from lucent.raise_op import Assert
from lucent.tensor import basic as ptb
from lucent.tensor.basic import as_tensor_variable, cast, constant

_broadcast_assert = Assert(
    "Could not broadcast dimensions. Broadcasting is only allowed along axes that have a statically "
    "known length 1. Use `specify_broadcastable` to inform lucent of a known shape."
)
_runtime_broadcast_assert = Assert("Could not broadcast dimensions.")


def _is_one(s):
    if isinstance(s, (int, np.integer)):
        return int(s) == 1
    if isinstance(s, Constant):
        return np.asarray(s.data).size == 1 and int(np.asarray(s.data)) == 1
    return False


def _const_value(s):
    if isinstance(s, (int, np.integer)):
        return int(s)
    if isinstance(s, Constant):
        return int(np.asarray(s.data))
    return None


def _as_length(s):
    """A length as a 0-d int64 tensor: a constant stays a constant (so it can be compared
    when the graph is built), anything else is cast."""
    if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
        return constant(int(s), dtype="int64")
    s = as_tensor_variable(s)
    if isinstance(s, Constant) and np.ndim(s.data) == 0:
        return constant(int(np.asarray(s.data)), dtype="int64")
    return cast(s, "int64")


def broadcast_shape(*arrays, **kwargs):
    """The shape (a tuple of 0-d int64 tensors) of the broadcast of ``arrays``.

    With ``arrays_are_shapes=True`` the arguments are shapes (tuples whose
    length-1 entries are the constant 1).
    """
    return broadcast_shape_iter(arrays, **kwargs)


def broadcast_shape_iter(arrays, arrays_are_shapes=False, allow_runtime_broadcast=False):
    """``broadcast_shape`` over an iterable of tensors or shapes.

    Lengths not known to be 1 must agree; that is checked at run time unless
    all are constants. With ``allow_runtime_broadcast`` a length that turns
    out to be 1 at run time broadcasts too.
    """
    from lucent.tensor import math as lm

    one = constant(1, dtype="int64")
    arrays = list(arrays)
    if not arrays:
        return ()
    if arrays_are_shapes:
        ndim = max(len(a) for a in arrays)
        shapes = [
            (one,) * (ndim - len(a)) + tuple(one if _is_one(s) else _as_length(s) for s in a)
            for a in arrays
        ]
    else:
        arrays = [as_tensor_variable(a) for a in arrays]
        ndim = max(a.type.ndim for a in arrays)
        shapes = [
            (one,) * (ndim - a.type.ndim)
            + tuple(one if a.type.shape[d] == 1 else (constant(a.type.shape[d], dtype="int64")
                                                       if a.type.shape[d] is not None else a.shape[d])
                    for d in range(a.type.ndim))
            for a in arrays
        ]
    result = []
    for dim_shapes in zip(*shapes):
        others = [s for s in dim_shapes if s is not one and not _is_one(s)]
        if not others:
            result.append(one)
            continue
        consts = {_const_value(s) for s in others if _const_value(s) is not None}
        symbolic = list(dict.fromkeys(s for s in others if _const_value(s) is None))
        if len(consts) > 1:
            raise ValueError(f"Could not broadcast dimensions. Incompatible shapes were {shapes}.")
        if consts:
            first, rest = constant(consts.pop(), dtype="int64"), symbolic
        else:
            first, rest = symbolic[0], symbolic[1:]
        if not rest:
            result.append(first)
            continue
        if not allow_runtime_broadcast:
            cond = lm.all(ptb.stack([lm.eq(first, r) for r in rest]))
            result.append(_broadcast_assert(first, cond))
        else:
            lengths = ptb.stack([cast(x, "int64") for x in (first, *rest)])
            is_one = lm.eq(lengths, 1)
            dim = lm.abs(lm.max(lm.switch(is_one, -1, lengths)))
            cond = lm.all(lm.switch(is_one, True, lm.eq(lengths, dim)))
            result.append(_runtime_broadcast_assert(dim, cond))
    return tuple(result)


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (a new array; only length-1 axes of ``x`` broadcast)."""
    from lucent.tensor.creation import _shape_entries

    return ptb.alloc(x, *_shape_entries(shape))


def broadcast_arrays(*args):
    """``args`` broadcast against each other (a list, in order)."""
    args = [as_tensor_variable(a) for a in args]
    out = []
    for i, a in enumerate(args):
        for j, other in enumerate(args):
            if j != i:
                a = ptb.second(other, a)
        out.append(a)
    return out


def concat_with_broadcast(tensor_list, axis=0):
    """Join tensors along ``axis`` after broadcasting their other dimensions to agree."""
    from lucent.tensor.extra_ops import normalize_axis_index

    if not tensor_list:
        raise ValueError("Cannot concatenate an empty list of tensors.")
    tensor_list = [as_tensor_variable(t) for t in tensor_list]
    ndim = tensor_list[0].type.ndim
    if any(t.type.ndim != ndim for t in tensor_list):
        raise TypeError(
            "Only tensors with the same number of dimensions can be concatenated. "
            f"Input ndims were: {[t.type.ndim for t in tensor_list]}"
        )
    axis = normalize_axis_index(axis, ndim, "concat_with_broadcast")
    target = [1] * ndim
    for t in tensor_list:
        for d in range(ndim):
            if d != axis and t.type.shape[d] != 1:
                target[d] = t.shape[d]
    parts = []
    for t in tensor_list:
        target[axis] = t.shape[axis]
        parts.append(broadcast_to(t, list(target)))
    return ptb.join(axis, *parts)


def _float_dtype(*values):
    from lucent.scalar.dtypes import upcast

    dtype = upcast(*[v.type.dtype for v in values])
    return dtype if dtype.startswith(("float", "complex")) else config.floatX


def _linspace_core(start, stop, num, endpoint, axis):
    """``num`` samples from ``start`` to ``stop`` along a new leading axis, then moved to ``axis``."""
    from lucent.tensor import math as lm
    from lucent.tensor.rearrange import moveaxis
    from lucent.tensor.shape import shape_padright
    from lucent.tensor.subtensor import set_subtensor

    num = as_tensor_variable(num)
    div = num - 1 if endpoint else num
    delta = stop - start
    steps = shape_padright(ptb.arange(0, num), delta.type.ndim)
    step = delta / lm.maximum(div, 1)
    samples = lm.switch(lm.gt(div, 0), steps * delta / div + start, steps * delta + start)
    if endpoint:
        samples = lm.switch(lm.gt(num, 1), set_subtensor(samples[-1, ...], stop), samples)
    if axis != 0:
        samples = moveaxis(samples, 0, axis)
    return samples, step


def _sample_axis(axis, ndim):
    from lucent.tensor.extra_ops import normalize_axis_index

    return normalize_axis_index(axis, ndim + 1, "linspace")


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced samples over ``[start, stop]`` (``stop`` excluded without ``endpoint``).

    ``start`` / ``stop`` may be arrays: the samples then run along ``axis``.
    ``dtype`` defaults to floatX. With ``retstep``, also the spacing.
    """
    dtype = config.floatX if dtype is None else dtype
    start, stop = broadcast_arrays(start, stop)
    calc = _float_dtype(start, stop)
    start, stop = cast(start, calc), cast(stop, calc)
    axis = _sample_axis(axis, start.type.ndim)
    samples, step = _linspace_core(start, stop, num, endpoint, axis)
    if retstep:
        return cast(samples, dtype), step
    return cast(samples, dtype)


def _with_base(start, stop, base, axis):
    base = as_tensor_variable(base)
    if base.type.ndim > 0:
        ndim = len(broadcast_shape(start, stop, base))
        start, stop, base = (ptb.shape_padleft(a, ndim - a.type.ndim) for a in (start, stop, base))
        base = ptb.expand_dims(base, axis)
    return start, stop, base


def logspace(start, stop, num=50, base=10.0, endpoint=True, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``: samples evenly spaced on a log scale."""
    dtype = config.floatX if dtype is None else dtype
    start, stop = broadcast_arrays(start, stop)
    calc = _float_dtype(start, stop)
    start, stop = cast(start, calc), cast(stop, calc)
    axis = _sample_axis(axis, start.type.ndim)
    start, stop, base = _with_base(start, stop, base, axis)
    samples, _ = _linspace_core(start, stop, num, endpoint, axis)
    return cast(base ** samples, dtype)


def geomspace(start, stop, num=50, base=10.0, endpoint=True, dtype=None, axis=0):
    """Samples of a geometric progression from ``start`` to ``stop`` (both non-zero, same sign)."""
    from lucent.tensor import math as lm
    from lucent.tensor.rearrange import moveaxis
    from lucent.tensor.subtensor import set_subtensor

    dtype = config.floatX if dtype is None else dtype
    start, stop = broadcast_arrays(start, stop)
    calc = _float_dtype(start, stop)
    start, stop = cast(start, calc), cast(stop, calc)
    axis = _sample_axis(axis, start.type.ndim)
    start, stop, base = _with_base(start, stop, base, axis)
    sign = lm.sign(start)
    log_base = lm.log(base)
    samples, _ = _linspace_core(lm.log(start * sign) / log_base, lm.log(stop * sign) / log_base, num, endpoint, 0)
    samples = base ** samples
    num = as_tensor_variable(num)
    samples = lm.switch(lm.gt(num, 0), set_subtensor(samples[0, ...], start * sign), samples)
    if endpoint:
        samples = lm.switch(lm.gt(num, 1), set_subtensor(samples[-1, ...], stop * sign), samples)
    samples = samples * sign
    if axis != 0:
        samples = moveaxis(samples, 0, axis)
    return cast(samples, dtype)


__all__ = [
    "broadcast_arrays",
    "broadcast_shape",
    "broadcast_shape_iter",
    "broadcast_to",
    "concat_with_broadcast",
    "geomspace",
    "linspace",
    "logspace",
]
