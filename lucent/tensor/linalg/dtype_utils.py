"""The dtype a linear-algebra op computes in, and the 2-d check every core op makes.

LAPACK works in four types only (float32, float64, complex64, complex128),
so a linear-algebra result is in the LAPACK type nearest to each input:
small integers and float16 are computed in float32, wider integers and
floats in float64. Fixing it from the input dtypes (not from what NumPy
happens to return) gives the same output type on both execution paths.
"""

from __future__ import annotations

import numpy as np


def _lapack_dtype(dtype) -> np.dtype:
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return np.dtype("complex64") if dt.itemsize <= 8 else np.dtype("complex128")
    if dt.kind == "f" and dt.itemsize > 4:
        return np.dtype("float64")
    if dt.kind in "iub" and dt.itemsize > 2:
        return np.dtype("float64")
    return np.dtype("float32")


def linalg_output_dtype(*input_dtypes) -> str:
    """The LAPACK dtype an op on inputs of ``input_dtypes`` computes in (as a name)."""
    return np.result_type(*(_lapack_dtype(d) for d in input_dtypes)).name


def linalg_real_output_dtype(*input_dtypes) -> str:
    """Like ``linalg_output_dtype``, for results that are real even for complex input."""
    dt = np.dtype(linalg_output_dtype(*input_dtypes))
    return np.finfo(dt).dtype.name if dt.kind == "c" else dt.name


def check_core_ndim(x, ndim, who, what="a matrix"):
    """Raise a ``ValueError`` unless ``x`` (a tensor variable) has exactly ``ndim`` dimensions.

    A core op's ``make_node`` sees its core case only: a stacked input is
    mapped over by ``Blockwise`` (which the op's ``__call__`` applies).
    """
    if x.type.ndim != ndim:
        raise ValueError(f"{who} expects {what} ({ndim}-d), got a {x.type.ndim}-d input of type {x.type}")


def check_static_square(x, who):
    """Raise when the static shape of the matrix ``x`` is known and not square."""
    rows, cols = x.type.shape
    if rows is not None and cols is not None and rows != cols:
        raise ValueError(f"{who} expects a square matrix, got static shape {x.type.shape}")


def check_square_value(value, who):
    """Raise at run time when the matrix ``value`` is not square."""
    if value.shape[0] != value.shape[1]:
        raise ValueError(f"{who}: input array is expected to be square but has the shape: {value.shape}")

def real_float_matrices(a, b, who):
    """``a`` and ``b`` as matrices of their common dtype, which must be float32 or float64.

    For the internal ops of the factorisations' gradients, whose fast paths
    call the real BLAS/LAPACK routines only.
    """
    from lucent.tensor.basic import as_tensor_variable, cast

    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.type.ndim != 2 or b.type.ndim != 2:
        raise TypeError(f"{who} needs two matrices, got {a.type.ndim}-D and {b.type.ndim}-D inputs")
    dtype = np.result_type(a.type.dtype, b.type.dtype).name
    if dtype not in ("float32", "float64"):
        raise TypeError(f"{who} computes in float32 or float64, not {dtype}")
    a = a if a.type.dtype == dtype else cast(a, dtype)
    b = b if b.type.dtype == dtype else cast(b, dtype)
    return a, b, dtype


__all__ = [
    "linalg_output_dtype",
    "linalg_real_output_dtype",
    "real_float_matrices",
]
