"""Building blocks of tensor graphs: conversion to tensors, constants, and the
basic structural ops (allocation, joining, stacking, flattening, copies).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lucent.graph.basic import Apply, Constant, Variable
from lucent.scalar.dtypes import normalize_dtype, python_scalar_dtype
from lucent.tensor.type import TensorType
from lucent.tensor.variable import TensorConstant, TensorValue, TensorVariable


def _as_array(x, dtype=None):
    """``x`` as an ndarray, giving Python numbers their weak (smallest exact) dtype."""
    if dtype is not None:
        dtype = normalize_dtype(dtype)
        arr = np.asarray(x)
        if arr.dtype.name != dtype:
            with np.errstate(all="ignore"):
                cast = arr.astype(dtype)
            arr = cast
        return arr
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return np.asarray(x, dtype=python_scalar_dtype(x))
    if isinstance(x, (list, tuple)):
        arr = np.asarray(x)
        if arr.dtype == np.float64 and arr.size and all(
            isinstance(v, (int, float)) for v in np.ravel(np.asarray(x, dtype=object))
        ):
            from lucent.configdefaults import config

            if config.floatX == "float32":
                arr = arr.astype("float32")
        return arr
    arr = np.asarray(x)
    if arr.dtype == object:
        raise TypeError(f"Cannot convert {x!r} to a tensor: it is not numeric")
    return arr


def constant(x, name=None, ndim=None, dtype=None) -> TensorConstant:
    """A ``TensorConstant`` holding ``x``.

    Python ints get the smallest int dtype holding them (``2`` is int8) and
    Python floats the smallest float dtype representing them exactly, so that
    constants do not upcast the tensors they are combined with.
    """
    if isinstance(x, TensorConstant) and name is None and ndim is None and (dtype is None or x.dtype == dtype):
        return x
    if isinstance(x, Variable):
        raise TypeError(f"constant() needs a value, got the symbolic variable {x}")
    arr = _as_array(x, dtype)
    if ndim is not None:
        if arr.ndim < ndim:
            arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
        elif arr.ndim > ndim:
            squeezable = [i for i in range(arr.ndim - ndim) if arr.shape[i] == 1]
            if len(squeezable) != arr.ndim - ndim:
                raise ValueError(f"ndarray with shape {arr.shape} cannot be made {ndim}-d")
            arr = arr.reshape(arr.shape[arr.ndim - ndim :])
    ttype = TensorType(arr.dtype.name, arr.shape)
    return TensorConstant(ttype, arr, name=name)


def value(x, name=None, dtype=None) -> TensorValue:
    """A graph input with a default value (Theano's ``tensor.value``).

    Listed as an input of ``function``, its default is ignored and a value
    must be passed; used without being listed, its value is used.
    """
    arr = _as_array(x, dtype)
    return TensorValue(TensorType(arr.dtype.name, (None,) * arr.ndim), arr, name=name)


def as_tensor_variable(x, name=None, ndim=None, dtype=None) -> TensorVariable:
    """Convert ``x`` into a tensor variable.

    Tensor variables are returned as they are (cast if ``dtype`` is given);
    an Apply gives its default output; scalar variables are wrapped; a
    list/tuple that contains variables is stacked; anything numeric becomes a
    ``TensorConstant``.
    """
    if isinstance(x, Apply):
        x = x.default_output()
    if isinstance(x, Variable):
        if isinstance(x.type, TensorType):
            out = x
        else:
            from lucent.scalar.basic import ScalarType

            if isinstance(x.type, ScalarType):
                out = tensor_from_scalar(x)  # noqa: F821 - defined below
            else:
                raise TypeError(
                    f"Cannot convert {x} of type {x.type} to a tensor variable"
                )
        if ndim is not None and out.type.ndim != ndim:
            if out.type.ndim > ndim:
                from lucent.tensor.basic import squeeze

                drop = [i for i in range(out.type.ndim - ndim) if out.type.shape[i] == 1]
                if len(drop) != out.type.ndim - ndim:
                    raise ValueError(
                        f"Tensor of type {out.type} could not be cast to have {ndim} dimensions"
                    )
                out = squeeze(out, axis=drop)
            else:
                from lucent.tensor.shape import shape_padleft

                out = shape_padleft(out, ndim - out.type.ndim)
        if dtype is not None and out.type.dtype != normalize_dtype(dtype):
            from lucent.tensor.basic import cast

            out = cast(out, dtype)
        if name is not None and out is not x:
            out.name = name
        return out
    if isinstance(x, (list, tuple)) and any(isinstance(v, Variable) for v in _flatten_seq(x)):
        from lucent.tensor.basic import stack

        parts = [as_tensor_variable(v, dtype=dtype) for v in x]
        return stack(parts)
    try:
        return constant(x, name=name, ndim=ndim, dtype=dtype)
    except TypeError as e:
        raise TypeError(f"Cannot convert {x!r} to a tensor variable: {e}") from None


as_tensor = as_tensor_variable


def _flatten_seq(x):
    for v in x:
        if isinstance(v, (list, tuple)):
            yield from _flatten_seq(v)
        else:
            yield v


__all__ = ["as_tensor_variable", "as_tensor", "constant", "value"]
