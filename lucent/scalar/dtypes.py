"""Dtype names, groups and promotion rules shared by scalars and tensors.

Promotion follows NumPy's rules for *arrays* (``np.result_type`` on dtypes),
so a lucent expression has the dtype NumPy would give the same computation
on arrays. Python numbers are *weak*: a literal is given the smallest dtype
that holds it exactly (``2`` is int8, ``1.5`` float32, ``0.1`` float64), so
``fvector + 1.5`` stays float32 as users expect.
"""

from __future__ import annotations

import numpy as np

bool_dtypes = ("bool",)
int_dtypes = ("int8", "int16", "int32", "int64")
uint_dtypes = ("uint8", "uint16", "uint32", "uint64")
float_dtypes = ("float16", "float32", "float64")
complex_dtypes = ("complex64", "complex128")
integer_dtypes = int_dtypes + uint_dtypes
discrete_dtypes = bool_dtypes + integer_dtypes
continuous_dtypes = float_dtypes + complex_dtypes
all_dtypes = discrete_dtypes + continuous_dtypes


def normalize_dtype(dtype) -> str:
    """Canonical string name of ``dtype``; ``'floatX'`` means ``config.floatX``."""
    if dtype == "floatX":
        from lucent.configdefaults import config

        return config.floatX
    if isinstance(dtype, str) and dtype in all_dtypes:
        return dtype
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise TypeError(f"Unsupported dtype {dtype!r}: expected one of {', '.join(all_dtypes)}") from None
    if name not in all_dtypes:
        raise TypeError(f"Unsupported dtype {dtype!r}: expected one of {', '.join(all_dtypes)}")
    return name


def upcast(dtype, *dtypes) -> str:
    """The dtype NumPy gives to an operation on arrays of these dtypes."""
    return np.result_type(*[np.dtype(normalize_dtype(d)) for d in (dtype, *dtypes)]).name


def is_float(dtype) -> bool:
    return normalize_dtype(dtype) in float_dtypes


def is_discrete(dtype) -> bool:
    return normalize_dtype(dtype) in discrete_dtypes


def smallest_int_dtype(value: int) -> str:
    """The smallest signed int dtype that holds ``value`` (uint64 beyond int64)."""
    for dtype in int_dtypes:
        info = np.iinfo(dtype)
        if info.min <= value <= info.max:
            return dtype
    if 0 <= value <= np.iinfo("uint64").max:
        return "uint64"
    raise OverflowError(f"The integer {value} does not fit any supported dtype")


def smallest_float_dtype(value: float) -> str:
    """float32 if it represents ``value`` exactly (or floatX is float32), else float64."""
    from lucent.configdefaults import config

    if config.floatX == "float32":
        return "float32"
    if np.isnan(value) or np.isinf(value) or float(np.float32(value)) == value:
        return "float32"
    return "float64"


def python_scalar_dtype(value) -> str:
    """The dtype lucent gives a Python ``bool``, ``int``, ``float`` or ``complex``."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, float)):
        # config.cast_policy decides (lucent.scalar.autocast).
        from lucent.scalar.autocast import convert

        return convert(value).dtype.name
    if isinstance(value, complex):
        return "complex128"
    raise TypeError(f"{value!r} is not a Python scalar")
