"""Reasoning about indices symbolically: canonical slices, indexed shapes, sign proofs.

Rewrites that merge, lift or remove indexing (``x[a:b][c:d]`` -> one
slice, ``x[i].shape`` without computing ``x[i]``) need indices in a form
that does not depend on Python's conventions for negative and out-of-range
bounds. This module supplies that vocabulary, at PyTensor's names:

* ``get_canonical_form_slice(slc, length)``: a slice ``start:stop:step`` with
  ``0 <= start <= stop <= length`` and ``step > 0``, plus the direction
  (1, or -1 when the elements must then be reversed), symbolic where the
  bounds are; an integer index becomes a non-negative one.
* ``slice_len``, ``basic_shape``, ``indexed_result_shape``: the shape
  ``x[indices]`` has, following NumPy's rules for mixing basic and advanced
  indices (advanced groups separated by a slice go to the front).
* ``_is_provably_positive`` / ``_is_provably_non_negative``: a cheap static
  proof that an index expression is > 0 / >= 0, so that a rewrite can drop a
  ``switch`` guarding the negative case.
* ``as_index_literal`` (the Python value of a constant index entry) and
  ``slice_at_axis`` (NumPy's helper building ``(:, :, sl, ...)``).
"""

from __future__ import annotations

import itertools
import sys

import numpy as np

from lucent.graph.basic import Constant, Variable
from lucent.scalar.basic import ScalarConstant, ScalarType
from lucent.tensor.basic import ScalarFromTensor, TensorFromScalar, as_tensor_variable, constant
from lucent.tensor.exceptions import NotScalarConstantError
from lucent.tensor.type import TensorType
from lucent.tensor.variable import TensorConstant


def as_index_literal(idx):
    """The Python value of an index entry: ints stay, constants give their int, slices go
    entry by entry; a non-constant variable raises ``NotScalarConstantError``."""
    if idx is None or isinstance(idx, (int, np.integer)):
        return idx
    if isinstance(idx, slice):
        return slice(as_index_literal(idx.start), as_index_literal(idx.stop), as_index_literal(idx.step))
    if not isinstance(idx, Variable):
        raise TypeError(f"Not an index entry: {idx!r}")
    if isinstance(idx, ScalarConstant):
        return int(idx.data)
    if isinstance(idx.type, ScalarType) and idx.owner is not None and isinstance(idx.owner.op, ScalarFromTensor):
        return as_index_literal(idx.owner.inputs[0])
    if isinstance(idx, TensorConstant):
        return int(np.asarray(idx.data).item())
    raise NotScalarConstantError(f"the index {idx} is not a constant")


def _is_provably_positive(var, strict=True):
    """True when ``var`` is statically known to be > 0 (``strict``) or >= 0 (not ``strict``).

    What is recognised: Python ints; constants (every element); ``MakeVector``
    of such entries; views and conversions (``Subtensor``, ``DimShuffle``,
    scalar <-> tensor) of such a value; ``minimum`` of such values and
    ``maximum`` with one such value. Only for ``>= 0``: unsigned dtypes, shape
    entries and casts of such a value (each may be 0). Anything else is
    "not proven" (False), never an error.
    """
    from lucent.scalar.basic import Cast, Maximum, Minimum
    from lucent.tensor.elemwise import DimShuffle, Elemwise
    from lucent.tensor.shape import Shape, Shape_i
    from lucent.tensor.subtensor import Subtensor

    if isinstance(var, (int, np.integer)) and not isinstance(var, bool):
        return bool(var > 0) if strict else bool(var >= 0)
    if not isinstance(var, Variable):
        return False
    dtype = getattr(var.type, "dtype", "")
    if not strict and isinstance(dtype, str) and dtype.startswith("uint"):
        return True
    if isinstance(var, Constant):
        tag = "is_positive" if strict else "is_non_negative"
        known = getattr(var.tag, tag, None)
        if known is None:
            data = np.asarray(var.data)
            known = bool((data > 0).all()) if strict else bool((data >= 0).all())
            setattr(var.tag, tag, known)
        return known
    if var.owner is None:
        return False
    op = var.owner.op
    inputs = var.owner.inputs
    from lucent.tensor.basic import MakeVector

    if not strict and isinstance(op, (Shape, Shape_i)):
        return True
    if isinstance(op, MakeVector):
        return all(_is_provably_positive(i, strict) for i in inputs)
    if isinstance(op, (Subtensor, ScalarFromTensor, TensorFromScalar, DimShuffle)):
        return _is_provably_positive(inputs[0], strict)
    if isinstance(op, Elemwise):
        scalar_op = op.scalar_op
        if not strict and isinstance(scalar_op, Cast):
            return _is_provably_positive(inputs[0], strict)
        if isinstance(scalar_op, Minimum):
            return all(_is_provably_positive(i, strict) for i in inputs)
        if isinstance(scalar_op, Maximum):
            return any(_is_provably_positive(i, strict) for i in inputs)
    return False


def _is_provably_non_negative(var):
    """``_is_provably_positive(var, strict=False)``: a static proof of ``var >= 0``."""
    return _is_provably_positive(var, strict=False)


def _as_index_tensor(x):
    """A scalar index variable as a 0-d tensor (undoing ``ScalarFromTensor``)."""
    if isinstance(x, Variable) and isinstance(x.type, ScalarType):
        if isinstance(x, ScalarConstant):
            return constant(x.data, dtype=x.type.dtype)
        if x.owner is not None and isinstance(x.owner.op, ScalarFromTensor):
            return x.owner.inputs[0]
        return as_tensor_variable(x)
    return x


def _literal_or_tensor(x):
    """``(value, True)`` for a constant entry (a Python int or None), else ``(0-d tensor, False)``."""
    try:
        return as_index_literal(x), True
    except NotScalarConstantError:
        return _as_index_tensor(x), False


def get_canonical_form_slice(theslice, length):
    """``(canonical slice, direction)`` for a slice, or ``(non-negative index, 1)`` for an index.

    A canonical slice has ``0 <= start <= stop <= length`` and ``step > 0``;
    ``x[slc]`` equals ``x[canonical][::direction]``. Entries are Python ints
    where everything needed is constant, 0-d tensors otherwise (the
    direction too, when the sign of the step is only known at run time).
    """
    from lucent.tensor.math import ge, lt, maximum, minimum, sign, switch

    length, length_const = _literal_or_tensor(length)

    if not isinstance(theslice, slice):
        if not (
            (isinstance(theslice, (int, np.integer)) and not isinstance(theslice, bool))
            or (isinstance(theslice, Variable) and isinstance(theslice.type, ScalarType))
            or (isinstance(theslice, Variable) and isinstance(theslice.type, TensorType) and theslice.type.ndim == 0)
        ):
            raise ValueError(f"Slice {theslice} is not a supported slice type: expected a slice or a scalar index")
        idx, idx_const = _literal_or_tensor(theslice)
        if idx_const:
            return (idx, 1) if idx >= 0 else (idx + length, 1)
        return switch(lt(idx, 0), idx + length, idx), 1

    start, start_const = _literal_or_tensor(theslice.start)
    stop, stop_const = _literal_or_tensor(theslice.stop)
    step, step_const = _literal_or_tensor(theslice.step)
    if step_const and step == 0:
        raise ValueError("slice step cannot be zero")

    if start_const and stop_const and step_const and length_const:
        lo, hi, st = slice(start, stop, step).indices(int(length))
        if st > 0:
            return slice(lo, max(lo, hi), st), 1
        n = len(range(lo, hi, st))
        if n == 0:
            return slice(0, 0, -st), -1
        return slice(lo + (n - 1) * st, lo + 1, -st), -1

    if step is None:
        step, step_const = 1, True

    if step_const and step == 1:
        # The common case, with small graphs: start:stop with a unit step.
        start_is_0 = start is None or (start_const and (start == 0 or (length_const and start + length <= 0)))
        stop_is_end = (
            stop is None
            or (stop_const and stop == sys.maxsize)
            or (stop is length)
            or (stop_const and length_const and stop >= length)
        )
        if start_is_0 and stop_is_end:
            return slice(0, length, 1), 1
        if start_is_0:
            if _is_provably_non_negative(stop):
                return slice(0, minimum(stop, length), 1), 1
            return slice(0, _clip_bound(stop, length), 1), 1
        if stop_is_end:
            if start_const and start >= 0:
                return slice(switch(lt(start, length), start, length), length, 1), 1
            return slice(_clip_bound(start, length), length, 1), 1

    # The general case: the sign of the step decides the defaults and the direction.
    if step_const:
        negative = step < 0

        def if_negative(a, b):
            return a if negative else b

        abs_step, direction = abs(step), (-1 if negative else 1)
    else:
        is_negative = lt(step, 0)

        def if_negative(a, b):
            return switch(is_negative, a, b)

        abs_step, direction = abs(step), sign(step)

    # Bounds resolved as NumPy does: negative counts from the end, then clipped
    # to [0, length] (positive step) or [-1, length - 1] (negative step).
    if start is None:
        first = if_negative(length - 1, 0)
    else:
        first = switch(lt(start, 0), start + length, start)
        first = switch(lt(first, 0), if_negative(-1, 0), first)
        first = switch(ge(first, length), if_negative(length - 1, length), first)
    if stop is None or (stop_const and stop == sys.maxsize):
        last = if_negative(-1, length)
    else:
        last = switch(lt(stop, 0), stop + length, stop)
        last = switch(lt(last, 0), if_negative(-1, 0), last)
        last = switch(ge(last, length), if_negative(length - 1, length), last)

    # Positive step: [first, last) as it is. Negative step: the elements
    # first, first - |step|, ... > last, listed in ascending order.
    count = maximum((first - last - 1) // abs_step + 1, 0)
    low = first - (count - 1) * abs_step
    new_start = if_negative(switch(lt(count, 1), first + 1, low), first)
    new_stop = if_negative(first + 1, last)
    new_start = maximum(new_start, 0)
    new_stop = maximum(new_stop, 0)
    new_start = minimum(new_start, new_stop)
    return slice(new_start, new_stop, abs_step), direction


def _clip_bound(bound, length):
    """A slice bound resolved as Python does for a unit step: negative from the end, in [0, length]."""
    from lucent.tensor.math import lt, switch

    plus_length = bound + length
    return switch(
        lt(bound, 0),
        switch(lt(plus_length, 0), 0, plus_length),
        switch(lt(bound, length), bound, length),
    )


def slice_len(slc, n):
    """The length of ``x[slc]`` along an axis of length ``n`` (``len(range(*slc.indices(n)))``)."""
    from lucent.tensor.math import maximum

    canon, _ = get_canonical_form_slice(slc, n)
    start, stop, step = canon.start, canon.stop, canon.step
    if isinstance(start, int) and start == 0 and isinstance(step, int) and step == 1 and _is_provably_non_negative(stop):
        return as_tensor_variable(stop) if isinstance(stop, (int, np.integer)) else stop
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        return constant(len(range(start, stop, step)), dtype="int64")
    # In canonical form start <= stop and step > 0.
    length = (stop - start + step - 1) // step
    return maximum(as_tensor_variable(length), 0)


def basic_shape(shape, indices):
    """The shape of ``x[indices]`` for basic indices (slices, ``None`` for a new axis)."""
    out = ()
    for n, idx in zip(shape[: len(indices)], indices):
        if isinstance(idx, slice):
            out += (slice_len(idx, n),)
        elif idx is None:
            out += (constant(1, dtype="int64"),)
        else:
            raise ValueError(f"basic_shape: invalid basic index {idx!r} (expected a slice or None)")
    return out


def group_indices(indices):
    """Consecutive runs of basic (slice) and advanced indices: ``[(is_basic, [(dim, idx), ...]), ...]``.

    ``dim`` is the axis of the indexed array an entry applies to (``None``
    entries, new axes, do not consume one).
    """
    groups = []
    dim = -1
    for basic, run in itertools.groupby(indices, key=lambda i: isinstance(i, slice)):
        entries = []
        for idx in run:
            if idx is not None:
                dim += 1
            entries.append((dim, idx))
        groups.append((basic, entries))
    return groups


def _non_consecutive_adv_indexing(indices):
    """True when advanced indices are split by basic ones (NumPy then moves them to the front)."""
    groups = group_indices(indices)
    return len(groups) > 3 or (len(groups) == 3 and not groups[0][0])


def indexed_result_shape(array_shape, indices, indices_are_shapes=False):
    """The symbolic shape of ``a[indices]`` when ``a.shape == array_shape`` (NumPy's rules).

    ``indices`` are slices, ``None``, and index arrays, or with
    ``indices_are_shapes`` the shapes of the index arrays (length-1 entries
    given as the constant 1).
    """
    from lucent.tensor.basic import get_vector_length
    from lucent.tensor.spacing import broadcast_shape

    remaining = list(range(get_vector_length(array_shape)))
    groups = group_indices(indices)
    if _non_consecutive_adv_indexing(indices):
        ordered = sorted(groups, key=lambda g: g[0])  # advanced groups first
        flat = itertools.chain.from_iterable(entries for _, entries in ordered)
        groups = [
            (basic, list(run)) for basic, run in itertools.groupby(flat, key=lambda e: isinstance(e[1], slice))
        ]
    out = ()
    for basic, entries in groups:
        dims = [d for d, _ in entries]
        idxs = [i for _, i in entries]
        remaining = [d for d in remaining if d not in dims]
        if basic:
            out += basic_shape(tuple(array_shape[d] for d in dims), idxs)
        elif not indices_are_shapes and len(idxs) > 1 and all(i is idxs[0] for i in idxs[1:]):
            out += tuple(idxs[0].shape[d] for d in range(idxs[0].type.ndim))
        else:
            out += broadcast_shape(*idxs, arrays_are_shapes=indices_are_shapes, allow_runtime_broadcast=True)
    out += tuple(array_shape[d] for d in remaining)
    return out


def slice_at_axis(sl, axis):
    """``(slice(None),) * axis + (sl, ...)``: index one axis with ``sl`` (``axis`` may be negative)."""
    if axis >= 0:
        return (slice(None),) * axis + (sl, Ellipsis)
    return (Ellipsis, sl) + (slice(None),) * (-axis - 1)


__all__ = [
    "as_index_literal",
    "basic_shape",
    "get_canonical_form_slice",
    "group_indices",
    "indexed_result_shape",
    "slice_at_axis",
    "slice_len",
]
