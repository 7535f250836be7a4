"""``TensorType``: the type of NumPy arrays with a fixed dtype and rank.

A TensorType fixes the dtype and the number of dimensions, and may fix some
dimension lengths (``shape=(2, None)`` is "2 by anything", printed
``TensorType(float64, (2, ?))``). A dimension of static length 1 is
*broadcastable*. Types with fewer known lengths are *supertypes* of types
with more (``is_super``); replacing a variable by one of a more specific type
is always allowed, and the other direction inserts a ``SpecifyShape`` that
checks the shape at run time (``convert_variable``).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from lucent.configdefaults import config
from lucent.graph.type import Type
from lucent.scalar.dtypes import all_dtypes, normalize_dtype, upcast

# Default tolerances for ``values_eq_approx``, by dtype: tight for float64,
# looser for narrow floats whose last bits legitimately differ between a
# NumPy and a vectorised (SVML) implementation.
_TOLERANCES = {
    "float16": (1e-3, 1e-3),
    "float32": (1e-5, 1e-4),
    "float64": (1e-8, 1e-5),
    "complex64": (1e-5, 1e-4),
    "complex128": (1e-8, 1e-5),
}


def _normalise_shape(shape, broadcastable):
    if shape is not None and broadcastable is not None:
        raise ValueError("Give TensorType either shape= or broadcastable=, not both")
    if broadcastable is not None:
        if isinstance(broadcastable, (str, bytes)) or not isinstance(broadcastable, Iterable):
            raise TypeError(f"broadcastable must be a sequence of booleans, got {broadcastable!r}")
        return tuple(1 if b else None for b in broadcastable)
    if shape is None:
        raise TypeError("TensorType needs a shape (use None for an unknown length)")
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Iterable):
        raise TypeError(f"shape must be a sequence of ints or None, got {shape!r}")
    out = []
    for s in shape:
        if s is None:
            out.append(None)
        elif isinstance(s, (bool, np.bool_)):
            # Old code passes broadcastable patterns as shapes.
            out.append(1 if s else None)
        elif isinstance(s, (int, np.integer)):
            if s < 0:
                raise ValueError(f"Static shape lengths must be >= 0 or None, got {shape!r}")
            out.append(int(s))
        else:
            raise TypeError(f"Static shape entries must be int or None, got {s!r} in {shape!r}")
    return tuple(out)


class TensorType(Type):
    """Symbolic type of ``numpy.ndarray`` values (see module docstring).

    Parameters
    ----------
    dtype
        A NumPy dtype name (``'float64'``, ``'int32'``, ...) or ``'floatX'``.
    shape
        A tuple with an int for each known length and ``None`` for unknown.
    name
        Optional name used when printing.
    broadcastable
        Old-style alternative to ``shape``: ``True`` means length 1.
    """

    filter_checks_isfinite = False

    def __init__(self, dtype, shape=None, name=None, broadcastable=None):
        if isinstance(dtype, TensorType):
            raise TypeError("TensorType expects a dtype, not another TensorType")
        self.dtype = normalize_dtype(dtype)
        self.shape = _normalise_shape(shape, broadcastable)
        self.name = name
        self.numpy_dtype = np.dtype(self.dtype)

    # --- structure ----------------------------------------------------------
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def broadcastable(self):
        """For each dimension, True if its static length is 1."""
        return tuple(s == 1 for s in self.shape)

    def clone(self, dtype=None, shape=None, broadcastable=None, **kwargs):
        if dtype is None:
            dtype = self.dtype
        if shape is None and broadcastable is None:
            shape = self.shape
        return type(self)(dtype, shape, name=kwargs.get("name", None), broadcastable=broadcastable)

    def __eq__(self, other):
        return type(self) is type(other) and other.dtype == self.dtype and other.shape == self.shape

    def __hash__(self):
        return hash((type(self), self.dtype, self.shape))

    def __str__(self):
        if self.name:
            return self.name
        dims = ", ".join("?" if s is None else str(s) for s in self.shape)
        if len(self.shape) == 1:
            dims += ","
        return f"TensorType({self.dtype}, ({dims}))"

    def __repr__(self):
        return str(self)

    # --- filtering run-time values ---------------------------------------------
    def filter(self, data, strict=False, allow_downcast=None):
        """Return ``data`` as an ndarray of this type, or raise ``TypeError``.

        See ``lucent.graph.type`` for the casting rules; the shape must also
        agree with the static shape.
        """
        if isinstance(data, np.ndarray) and data.dtype == self.numpy_dtype:
            pass
        elif strict:
            if not isinstance(data, np.ndarray):
                raise TypeError(
                    f"{self} expected an ndarray object (got {type(data).__name__}) "
                    "in strict mode; pass a numpy array of the right dtype"
                )
            raise TypeError(
                f"{self} expected an ndarray with dtype={self.dtype} (got {data.dtype}) in strict mode"
            )
        elif allow_downcast:
            # Cast like C would (wrapping out-of-range integers): NumPy 2
            # refuses np.asarray(300, dtype="int8") with an OverflowError.
            try:
                with np.errstate(all="ignore"):
                    data = np.asarray(data).astype(self.dtype, copy=False)
            except (TypeError, ValueError, OverflowError) as e:
                raise TypeError(f"{self} cannot convert {data!r}: {e}") from None
        else:
            if isinstance(data, np.ndarray):
                if upcast(self.dtype, data.dtype) == self.dtype:
                    data = data.astype(self.dtype)
                else:
                    raise TypeError(
                        f"{self} cannot store a value of dtype {data.dtype} without "
                        "risking loss of precision. If you do not mind this loss, you can: "
                        f"1) explicitly cast your data to {self.dtype}, or 2) set "
                        '"allow_input_downcast=True" when calling "function". '
                        f"Value: {data!r}"
                    )
            elif allow_downcast is None and isinstance(data, float) and self.dtype == config.floatX:
                data = np.asarray(data, dtype=self.dtype)
            else:
                try:
                    original = np.asarray(data)
                except Exception as e:
                    raise TypeError(f"{self} cannot convert {data!r} to an array: {e}") from None
                if original.dtype == object:
                    raise TypeError(
                        f"{self} cannot convert {type(data).__name__} {data!r} to an array of {self.dtype}"
                    )
                with np.errstate(all="ignore"):
                    try:
                        converted = original.astype(self.dtype)
                    except (TypeError, ValueError) as e:
                        raise TypeError(f"{self} cannot convert {data!r}: {e}") from None
                if original.shape == converted.shape and _equal_after_cast(original, converted):
                    data = converted
                else:
                    raise TypeError(
                        f"{self} cannot store accurately value {data!r}, it would be "
                        f"represented as {converted!r}. If you do not mind this precision "
                        "loss, you can: 1) explicitly convert your data to a numpy array "
                        f"of dtype {self.dtype}, or 2) set "
                        '"allow_input_downcast=True" when calling "function".'
                    )
        if data.ndim != self.ndim:
            raise TypeError(
                f"Wrong number of dimensions: expected {self.ndim}, got {data.ndim} "
                f"with shape {data.shape}."
            )
        if any(s is not None and s != d for s, d in zip(self.shape, data.shape)):
            raise TypeError(
                f"The type's shape ({_shape_str(self.shape)}) is not compatible with the "
                f"data's ({data.shape})"
            )
        if self.filter_checks_isfinite and not np.all(np.isfinite(data)):
            raise ValueError("Non-finite elements not allowed")
        return data

    def filter_inplace(self, value, storage, strict=False, allow_downcast=None):
        """Copy ``value`` into ``storage`` when shapes and dtypes allow; else filter."""
        new = self.filter(value, strict=strict, allow_downcast=allow_downcast)
        if (
            isinstance(storage, np.ndarray)
            and storage.shape == new.shape
            and storage.dtype == new.dtype
            and storage.flags.writeable
            and not np.may_share_memory(storage, new)
        ):
            storage[...] = new
            return storage
        return new

    def is_valid_value(self, data, strict=True):
        try:
            self.filter(data, strict=strict)
            return True
        except (TypeError, ValueError):
            return False

    # --- comparing values ----------------------------------------------------------
    @staticmethod
    def values_eq(a, b, force_same_dtype=True):
        """Exact equality of two arrays; NaNs at the same positions count as equal."""
        a = np.asarray(a)
        b = np.asarray(b)
        if a.shape != b.shape:
            return False
        if force_same_dtype and a.dtype != b.dtype:
            return False
        with np.errstate(invalid="ignore"):
            eq = a == b
        if np.all(eq):
            return True
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            a_nan = np.isnan(a)
            return bool(np.all(eq | (a_nan & np.isnan(b))))
        return False

    def values_eq_approx(self, a, b, allow_remove_inf=False, allow_remove_nan=False, rtol=None, atol=None):
        """Approximate equality with dtype-dependent tolerances.

        NaNs must be at the same positions and infinities equal (unless
        ``allow_remove_nan`` / ``allow_remove_inf``), shapes must match.
        """
        a = np.asarray(a)
        b = np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
            return self.values_eq(a, b, force_same_dtype=False)
        # The narrowest floating dtype involved decides the tolerance.
        floats = [d.name for d in (a.dtype, b.dtype) if d.name in _TOLERANCES]
        narrow = min(floats, key=_width) if floats else "float64"
        default_atol, default_rtol = _TOLERANCES[narrow]
        atol = default_atol if atol is None else atol
        rtol = default_rtol if rtol is None else rtol
        with np.errstate(all="ignore"):
            close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        if np.all(close):
            return True
        if allow_remove_nan or allow_remove_inf:
            mask = np.zeros(a.shape, dtype=bool)
            if allow_remove_nan:
                mask |= np.isnan(a) | np.isnan(b)
            if allow_remove_inf:
                mask |= np.isinf(a) | np.isinf(b)
            return bool(np.all(close | mask))
        return False

    def may_share_memory(self, a, b):
        """True if the arrays ``a`` and ``b`` could overlap in memory."""
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return bool(np.may_share_memory(a, b))
        return False

    def get_shape_info(self, obj):
        """The array's shape (cheap to record during a run)."""
        return obj.shape

    def get_size(self, shape_info):
        """Bytes of data of an array of this dtype with shape ``shape_info``."""
        if shape_info:
            return int(np.prod(shape_info, dtype="int64")) * self.numpy_dtype.itemsize
        return self.numpy_dtype.itemsize

    def value_zeros(self, shape):
        return np.zeros(shape, dtype=self.dtype)

    # --- comparing types ----------------------------------------------------------------
    def in_same_class(self, otype):
        """Same dtype, rank and broadcastable dimensions (static length 1).

        ``TensorType('float64', (2, None))`` and ``(2, 1)`` are not in the same
        class: the second dimension is broadcastable in one only.
        """
        if self == otype:
            return True
        if (
            isinstance(otype, TensorType)
            and otype.dtype == self.dtype
            and otype.ndim == self.ndim
            and otype.broadcastable == self.broadcastable
        ):
            return True
        return False

    def is_super(self, otype):
        """True if every array of ``otype`` is also an array of this type."""
        if (
            isinstance(otype, type(self))
            and otype.dtype == self.dtype
            and otype.ndim == self.ndim
            and all(s is None or s == o for s, o in zip(self.shape, otype.shape))
        ):
            return True
        return False

    def convert_variable(self, var):
        """``var`` itself if its type is more specific; ``specify_shape`` if less."""
        if self.is_super(var.type):
            return var
        if isinstance(var.type, TensorType) and var.type.is_super(self):
            from lucent.tensor.shape import specify_shape

            return specify_shape(var, self.shape)
        return None

    def make_variable(self, name=None):
        return self.variable_type(self, None, name=name)


def _width(dtype_name):
    return np.dtype(dtype_name).itemsize


def _shape_str(shape):
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _equal_after_cast(original, converted):
    if original.dtype.kind in "fc" and converted.dtype.kind in "fc":
        with np.errstate(all="ignore"):
            back = converted.astype(original.dtype)
        return TensorType.values_eq(original, back, force_same_dtype=False)
    with np.errstate(all="ignore"):
        back = converted.astype(original.dtype)
    try:
        return bool(np.all(back == original))
    except Exception:
        return False


_type_cache: dict = {}


def _cached_type(dtype, shape):
    """One TensorType instance per (dtype, shape), so ``fvector().type is fvector().type``."""
    dtype = normalize_dtype(dtype)
    key = (dtype, tuple(shape))
    t = _type_cache.get(key)
    if t is None:
        t = _type_cache[key] = TensorType(dtype, shape)
    return t


def _check_name(name):
    if name is not None and not isinstance(name, str):
        raise TypeError(f"A variable name must be a string or None, got {name!r}")


def tensor(dtype=None, shape=None, name=None, *, broadcastable=None, ndim=None):
    """A symbolic tensor variable: ``tensor('float32', shape=(None, 3), name='x')``.

    For compatibility, ``tensor('x', shape=...)`` (name first) is accepted.
    """
    if isinstance(dtype, str) and dtype not in all_dtypes and dtype != "floatX":
        try:
            normalize_dtype(dtype)
        except TypeError:
            # Called as tensor(name, ...)
            if name is not None:
                raise
            name, dtype = dtype, None
    if dtype is None:
        dtype = config.floatX
    if shape is None and broadcastable is None:
        if ndim is None:
            raise TypeError("tensor() needs shape= (or ndim=, or broadcastable=)")
        shape = (None,) * ndim
    elif shape is None:
        shape = tuple(1 if b else None for b in broadcastable)
    elif isinstance(shape, (int, np.integer)):
        shape = (shape,)
    if ndim is not None and len(shape) != ndim:
        raise ValueError(f"shape {shape} does not have ndim={ndim} entries")
    _check_name(name)
    return _cached_type(dtype, _normalise_shape(shape, None))(name)


def _fixed_rank(ndim, default_dtype=None, kind="tensor"):
    def constructor(name=None, *, dtype=None, shape=None):
        if dtype is None:
            dtype = default_dtype or config.floatX
        if shape is None:
            shape = (None,) * ndim
        shape = _normalise_shape(shape, None)
        if len(shape) != ndim:
            raise ValueError(f"A {kind} must have shape of length {ndim}, got {shape}")
        _check_name(name)
        return _cached_type(dtype, shape)(name)

    constructor.__name__ = kind
    constructor.__doc__ = (
        f"A symbolic {ndim}-d variable ({kind}) named ``name``, dtype "
        f"{default_dtype or 'config.floatX'} unless ``dtype=`` says otherwise."
    )
    return constructor


def _plural(single):
    def constructor(*names, dtype=None):
        """Several variables at once: ``scalars('xys')`` or ``scalars('x', 'y')``.

        A single integer gives that many unnamed variables.
        """
        if len(names) == 1 and isinstance(names[0], int):
            return [single(dtype=dtype) for _ in range(names[0])]
        if len(names) == 1 and isinstance(names[0], str) and "," in names[0]:
            names = tuple(n.strip() for n in names[0].split(","))
        elif len(names) == 1 and isinstance(names[0], str):
            names = tuple(names[0])
        variables = [single(n, dtype=dtype) for n in names]
        return variables

    return constructor


_RANKS = {"scalar": 0, "vector": 1, "matrix": 2, "tensor3": 3, "tensor4": 4, "tensor5": 5,
          "tensor6": 6, "tensor7": 7, "row": None, "col": None}
_PREFIXES = {"": None, "c": "complex64", "z": "complex128", "f": "float32", "d": "float64",
             "b": "int8", "w": "int16", "i": "int32", "l": "int64"}
_PLURALS = {"scalar": "scalars", "vector": "vectors", "matrix": "matrices", "tensor3": "tensor3s",
            "tensor4": "tensor4s", "tensor5": "tensor5s", "tensor6": "tensor6s", "tensor7": "tensor7s",
            "row": "rows", "col": "cols"}

_constructors = {}
for _kind, _ndim in _RANKS.items():
    for _prefix, _dtype in _PREFIXES.items():
        if _kind in ("row", "col"):
            def _make(kind=_kind, dtype=_dtype):
                def constructor(name=None, *, dtype=dtype, shape=None):
                    if dtype is None:
                        dtype = config.floatX
                    static = (1, None) if kind == "row" else (None, 1)
                    if shape is not None:
                        static = _normalise_shape(shape, None)
                    _check_name(name)
                    return _cached_type(dtype, static)(name)

                constructor.__name__ = kind
                constructor.__doc__ = f"A symbolic {kind} (a matrix with one {'row' if kind == 'row' else 'column'})."
                return constructor

            _single = _make()
        else:
            _single = _fixed_rank(_ndim, _dtype, _kind)
        _single.__name__ = _prefix + _kind
        _constructors[_prefix + _kind] = _single
        _many = _plural(_single)
        _many.__name__ = _prefix + _PLURALS[_kind]
        _constructors[_prefix + _PLURALS[_kind]] = _many

globals().update(_constructors)

__all__ = ["TensorType", "all_dtypes", "tensor", *sorted(_constructors)]
