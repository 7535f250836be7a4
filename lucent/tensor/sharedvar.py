"""Shared tensors: ``lucent.shared(np.zeros(3))`` gives a ``TensorSharedVariable``.

Two constructors are registered with ``shared_constructor``: one for
ndarrays and one for Python and NumPy scalars. A shared tensor's static
shape is unknown in every dimension by default, because its value may be
replaced by one of another shape; ``shape=`` (or the older
``broadcastable=``) fixes some lengths.
"""

from __future__ import annotations

import warnings

import numpy as np

from lucent.compile.sharedvalue import SharedVariable, shared_constructor
from lucent.tensor.type import TensorType
from lucent.tensor.variable import _tensor_py_operators


def __getattr__(name):
    # Scalars are 0-d tensors: there is no separate class for them any more.
    if name == "ScalarSharedVariable":
        warnings.warn(
            "The class `ScalarSharedVariable` has been deprecated. Use "
            "`TensorSharedVariable` instead and check for `ndim == 0`.",
            FutureWarning,
            stacklevel=2,
        )
        return TensorSharedVariable
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class TensorSharedVariable(_tensor_py_operators, SharedVariable):
    """A shared variable holding an ndarray; usable like any symbolic tensor."""

    _zeros_like = staticmethod(np.zeros_like)


def _static_shape(value, shape, broadcastable):
    if shape is not None and broadcastable is not None:
        raise TypeError("Give shared() either shape= or broadcastable=, not both")
    if broadcastable is not None:
        warnings.warn(
            "The `broadcastable` keyword is deprecated; use `shape` (1 for a broadcastable "
            "dimension, None for an unknown length).",
            DeprecationWarning,
            stacklevel=4,
        )
        if len(broadcastable) != value.ndim:
            raise ValueError(
                f"broadcastable={broadcastable!r} has {len(broadcastable)} entries for a "
                f"value with {value.ndim} dimensions"
            )
        return tuple(1 if b else None for b in broadcastable)
    if shape is None:
        return (None,) * value.ndim
    shape = tuple(shape)
    if len(shape) != value.ndim:
        raise ValueError(
            f"shape={shape!r} has {len(shape)} entries for a value with {value.ndim} dimensions"
        )
    return shape


@shared_constructor
def tensor_constructor(
    value,
    name=None,
    strict=False,
    allow_downcast=None,
    borrow=False,
    shape=None,
    target="cpu",
    broadcastable=None,
):
    """A ``TensorSharedVariable`` for an ndarray (declines anything else).

    ``shape`` gives static lengths (``None`` = unknown); ``broadcastable``
    is the older spelling (``True`` = length 1). The value is copied unless
    ``borrow=True``.
    """
    if target != "cpu":
        raise TypeError(f"lucent only has the 'cpu' target, got target={target!r}")
    if not isinstance(value, np.ndarray):
        raise TypeError(f"tensor_constructor only takes ndarrays, got {type(value).__name__}")
    if isinstance(value, np.ma.MaskedArray):
        # Not a TypeError: no other constructor should take it either. The mask
        # would be silently dropped by every op.
        raise NotImplementedError(
            "MaskedArrays are not supported by shared(); pass value.filled(fill_value) "
            "or value.data with the mask handled explicitly"
        )
    static = _static_shape(value, shape, broadcastable)
    type_ = TensorType(value.dtype, shape=static)
    return TensorSharedVariable(
        type=type_,
        value=value if borrow else value.copy(),
        name=name,
        strict=strict,
        allow_downcast=allow_downcast,
    )


@shared_constructor
def scalar_constructor(
    value, name=None, strict=False, allow_downcast=None, borrow=False, target="cpu"
):
    """A 0-d ``TensorSharedVariable`` for a Python or NumPy number.

    Python ints become int64, floats float64, complex complex128 and bools
    bool; NumPy scalars keep their dtype. ``borrow`` is accepted and
    meaningless here (a new 0-d array is always made).
    """
    if target != "cpu":
        raise TypeError(f"lucent only has the 'cpu' target, got target={target!r}")
    if isinstance(value, np.generic):
        dtype = value.dtype
    elif isinstance(value, bool):
        dtype = np.dtype("bool")
    elif isinstance(value, int):
        dtype = np.dtype("int64")
    elif isinstance(value, float):
        dtype = np.dtype("float64")
    elif isinstance(value, complex):
        dtype = np.dtype("complex128")
    else:
        raise TypeError(f"scalar_constructor only takes numbers, got {type(value).__name__}")
    if dtype.kind not in "biufc":
        raise TypeError(f"scalar_constructor does not take values of dtype {dtype}")
    type_ = TensorType(dtype, shape=())
    return TensorSharedVariable(
        type=type_,
        value=np.array(value, dtype=dtype),
        name=name,
        strict=strict,
        allow_downcast=allow_downcast,
    )


__all__ = ["TensorSharedVariable", "tensor_constructor", "scalar_constructor"]
