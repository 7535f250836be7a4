"""Which dtype a Python number gets when it enters a graph (``config.cast_policy``).

A literal such as ``1.1`` in ``fvector() + 1.1`` has no dtype of its own;
the one it is given decides the dtype of the whole expression. Two policies
exist:

* ``'custom'`` (the default): a number gets the first dtype of an ordered
  list that represents it exactly, else the last one. For floats the list is
  ``autocast_float.dtypes`` (``float16`` is skipped unless ``floatX`` is
  ``float16``; with ``floatX=float32`` a float becomes ``float32`` when that
  is in the list), so ``1.5`` is float32 and ``1.1`` float64, and ``fvector
  + 1.5`` stays float32. ``autocast_float_as('float64')`` changes the list
  for a ``with`` block, e.g. to make every float literal double precision.
* ``'numpy+floatX'``: NumPy's own choice (``np.asarray(x).dtype``), except
  that a Python float becomes ``floatX``.

NumPy scalars and arrays keep their dtype under both policies: a user who
wrote ``np.float64(1.1)`` asked for float64.
"""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config


class NumpyAutocaster:
    """Casts a Python ``int`` / ``float`` (or a 0-d array) to a 0-d array of the policy's dtype.

    ``dtypes`` is the ordered list of preferred dtypes used by the
    ``'custom'`` policy (see the module docstring).
    """

    def __init__(self, dtypes):
        self.dtypes = tuple(dtypes)

    def __repr__(self):
        return f"NumpyAutocaster({self.dtypes})"

    def __call__(self, x):
        if not (isinstance(x, (int, float)) or (isinstance(x, np.ndarray) and x.ndim == 0)):
            raise TypeError(
                f"NumpyAutocaster casts Python ints/floats or 0-d arrays, got {type(x).__name__} {x!r}"
            )
        if config.cast_policy == "numpy+floatX":
            arr = np.asarray(x)
            if not hasattr(x, "dtype") and arr.dtype.name in ("float32", "float64") and arr.dtype != config.floatX:
                arr = arr.astype(config.floatX)
            return arr
        if config.cast_policy != "custom":
            raise ValueError(f"Unknown config.cast_policy {config.cast_policy!r}: expected 'custom' or 'numpy+floatX'")
        dtype = getattr(x, "dtype", None)
        if dtype is not None and str(dtype) in self.dtypes:
            return np.asarray(x)
        if isinstance(x, float) and config.floatX in self.dtypes and config.floatX != "float64":
            return np.asarray(x, dtype=config.floatX)
        candidates = [d for d in self.dtypes if config.floatX == "float16" or d != "float16"]
        if not candidates:
            raise ValueError(f"{self!r} has no dtype left to cast {x!r} to (float16 needs floatX=float16)")
        value = np.asarray(x)
        if isinstance(x, int) and not isinstance(x, bool):
            # Integers: the first dtype whose range holds the value; none holds it -> OverflowError.
            for d in candidates:
                if np.dtype(d).kind in "iu" and np.iinfo(d).min <= x <= np.iinfo(d).max:
                    return np.asarray(x, dtype=d)
            if all(np.dtype(d).kind in "iu" for d in candidates):
                raise OverflowError(f"{x} does not fit any of the dtypes {candidates}")
        with np.errstate(all="ignore"):
            for d in candidates:
                cast = value.astype(d)
                if np.all(value == cast):
                    return cast
        return cast


class autocast_float_as:
    """``with autocast_float_as('float32'):`` float literals are autocast with these dtypes.

    Only meaningful under ``config.cast_policy == 'custom'`` (the others
    ignore ``autocast_float.dtypes``), so any other policy is an error.
    Blocks nest: leaving one restores the dtypes it found.
    """

    def __init__(self, *dtypes):
        _require_custom_policy()
        self.dtypes = tuple(dtypes)

    def __enter__(self):
        _require_custom_policy()
        self.old_dtypes = autocast_float.dtypes
        autocast_float.dtypes = self.dtypes
        return self

    def __exit__(self, *exc):
        autocast_float.dtypes = self.old_dtypes
        return False


def _require_custom_policy():
    if config.cast_policy != "custom":
        raise AssertionError(
            f"autocast_float_as needs config.cast_policy == 'custom', it is {config.cast_policy!r}"
        )


def convert(x, dtype=None):
    """``x`` as a NumPy array, with ``dtype`` if given, else the dtype the cast policy gives it."""
    if isinstance(x, np.ma.MaskedArray):
        raise NotImplementedError("MaskedArrays are not supported")
    if dtype is not None:
        return np.asarray(x).astype(config.floatX if dtype == "floatX" else dtype)
    if isinstance(x, bool):
        return np.asarray(x)
    if isinstance(x, int):
        try:
            return autocast_int(x)
        except OverflowError:
            # As NumPy does: a number past int64 may still fit uint64.
            return np.asarray(x, dtype="uint64")
    if isinstance(x, float):
        return autocast_float(x)
    if isinstance(x, np.ndarray):
        return x
    arr = np.asarray(x)
    if arr.size == 0 and not hasattr(x, "dtype"):
        arr = np.asarray(x, dtype=config.floatX)
    return arr


autocast_int = NumpyAutocaster(("int8", "int16", "int32", "int64"))
autocast_float = NumpyAutocaster(("float16", "float32", "float64"))

__all__ = ["NumpyAutocaster", "autocast_int", "autocast_float", "autocast_float_as", "convert"]
