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

import warnings
from typing import Iterable

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Variable
from lucent.graph.type import Type
from lucent.scalar import dtypes as _dtypes
from lucent.scalar.dtypes import normalize_dtype, upcast
from lucent.tensor.exceptions import NotANumberError, ValueOutOfRangeError

# The dtype groups, as lists of names (``'float32' in continuous_dtypes``).
bool_dtypes = list(_dtypes.bool_dtypes)
int_dtypes = list(_dtypes.int_dtypes)
uint_dtypes = list(_dtypes.uint_dtypes)
integer_dtypes = list(_dtypes.integer_dtypes)
discrete_dtypes = list(_dtypes.discrete_dtypes)
float_dtypes = list(_dtypes.float_dtypes)
complex_dtypes = list(_dtypes.complex_dtypes)
continuous_dtypes = list(_dtypes.continuous_dtypes)
all_dtypes = list(_dtypes.all_dtypes)

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


def _static_length(entry, shape):
    """One entry of a static shape as ``int`` (known length) or ``None``."""
    if entry is None:
        return None
    if isinstance(entry, (bool, np.bool_)):
        # Broadcastable patterns given as shapes: True is a length of 1.
        return 1 if entry else None
    if isinstance(entry, (int, np.integer)):
        if entry < 0:
            raise ValueError(f"Static shape lengths must be >= 0 or None, got {tuple(shape)!r}")
        return int(entry)
    raise ValueError(
        "TensorType broadcastable/shape must be a boolean, integer or None, "
        f"got {type(entry).__name__} {entry!r} in {tuple(shape)!r}"
    )


def _normalise_shape(shape, broadcastable):
    if broadcastable is not None:
        if shape is not None:
            raise ValueError("Give TensorType either shape= or broadcastable=, not both")
        warnings.warn(
            "The `broadcastable` keyword is deprecated; use `shape` (None for an unknown "
            "length, 1 for a broadcastable dimension).",
            DeprecationWarning,
            stacklevel=3,
        )
        if isinstance(broadcastable, (str, bytes)) or not isinstance(broadcastable, Iterable):
            raise TypeError(f"broadcastable must be a sequence of booleans, got {broadcastable!r}")
        shape = [bool(b) for b in broadcastable]
    if shape is None:
        raise TypeError("TensorType needs a shape (use None for an unknown length)")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Iterable):
        raise TypeError(f"shape must be a sequence of ints or None, got {shape!r}")
    shape = list(shape)
    out = tuple(_static_length(s, shape) for s in shape)
    if len(out) > 64:
        raise ValueError(f"maximum supported dimension for a TensorType is currently 64, found {len(out)}")
    return out


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

    def __call__(self, name=None, *, shape=None):
        """A new variable of this type; ``shape=`` narrows unknown lengths first.

        ``lt.fmatrix(shape=(1, None))`` is a variable of type ``frow``. The new
        shape may only fix lengths this type leaves open: ``drow(shape=(None,
        None))`` would lose the known 1 and raises ``ValueError``.
        """
        if shape is not None:
            narrowed = self.clone(shape=shape)
            if not self.is_super(narrowed):
                raise ValueError(
                    f"shape={tuple(shape)!r} is incompatible with the type's shape "
                    f"{self.shape!r}: it may only fix lengths left unknown (None)"
                )
            return narrowed(name)
        return super().__call__(name)

    # --- structure ----------------------------------------------------------
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def broadcastable(self):
        """For each dimension, True if its static length is 1."""
        return tuple(s == 1 for s in self.shape)

    def clone(self, dtype=None, shape=None, broadcastable=None, **kwargs):
        """A TensorType like this one with ``dtype`` and/or ``shape`` replaced."""
        if dtype is None:
            dtype = self.dtype
        if shape is None and broadcastable is None:
            shape = self.shape
        return type(self)(dtype, shape, name=kwargs.get("name", self.name), broadcastable=broadcastable)

    def __eq__(self, other):
        return type(self) is type(other) and other.dtype == self.dtype and other.shape == self.shape

    def __hash__(self):
        return hash((type(self), self.dtype, self.shape))

    def __str__(self):
        """The rank-named form PyTensor 3 prints: ``Matrix(float64, shape=(2, ?))``."""
        if self.name:
            return self.name
        rank = self.ndim
        kind = ("Scalar", "Vector", "Matrix")[rank] if rank <= 2 else f"Tensor{rank}"
        return f"{kind}({self.dtype}, shape={_shape_str(self.shape)})"

    def __repr__(self):
        """The form of the Type documentation: ``TensorType(float64, (2, ?))``.

        Debug prints (``dprint`` with ``print_type``, an unnamed variable's
        ``<...>``) use it, so a graph's types read the same as in that text.
        """
        if self.name:
            return self.name
        return f"TensorType({self.dtype}, {_shape_str(self.shape)})"

    # --- filtering run-time values ---------------------------------------------
    def filter(self, data, strict=False, allow_downcast=None):
        """Return ``data`` as an ndarray of this type, or raise ``TypeError``.

        See ``lucent.graph.type`` for the casting rules; the shape must also
        agree with the static shape.
        """
        if isinstance(data, Variable):
            raise TypeError(
                f"{self} expected an array-like value, but got the symbolic variable {data}: "
                "a function is called with numbers (ndarrays), not with (possibly shared) "
                "variables; pass shared_var.get_value() for a shared variable's value"
            )
        if isinstance(data, (np.matrix, np.ma.MaskedArray)):
            data = _plain_ndarray(self, data)
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
        elif not isinstance(data, np.ndarray) and _holds_text(data):
            raise NotANumberError(
                f"{self} expected numbers, got the text {data!r}; convert it to numbers "
                "first (float(...), numpy.asarray(..., dtype=...)) if it holds numbers"
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
                if original.dtype.kind in "USV":
                    raise NotANumberError(
                        f"{self} expected numbers, got the text {data!r}; convert it to "
                        "numbers first (float(...), numpy.asarray(..., dtype=...)) if it holds numbers"
                    )
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
                elif _integers_out_of_range(original, self.dtype):
                    raise ValueOutOfRangeError(
                        f"{self} cannot store accurately value {data!r}: it is outside the "
                        f"range of {self.dtype} [{np.iinfo(self.dtype).min}, "
                        f"{np.iinfo(self.dtype).max}] and would be represented as {converted!r}"
                    )
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
        if not data.flags.aligned:
            raise TypeError(
                f"{self}: the numpy.ndarray is not aligned; pass an aligned copy "
                "(numpy.array(value)) instead"
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

    @staticmethod
    def values_eq_approx(a, b, allow_remove_inf=False, allow_remove_nan=False, rtol=None, atol=None):
        """Approximate equality of two arrays (``b`` is the reference).

        A static method: it depends only on the values. See the module-level
        ``values_eq_approx``.
        """
        return values_eq_approx(a, b, allow_remove_inf, allow_remove_nan, rtol, atol)

    @staticmethod
    def may_share_memory(a, b):
        """True if the arrays ``a`` and ``b`` could overlap in memory.

        A static method (``TensorType.may_share_memory(a, b)``): anything
        that is not an ndarray shares memory with nothing.
        """
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
        """``var`` if its type is as specific as this one, else ``specify_shape(var, ...)``.

        Types of the same dtype and rank whose known lengths do not
        contradict each other convert: ``(1, ?, 3)`` and ``(?, 5, 3)`` meet
        in ``(1, 5, 3)``. A known length that differs gives ``None``.
        """
        if self.is_super(var.type):
            return var
        vtype = var.type
        if (
            isinstance(vtype, TensorType)
            and vtype.ndim == self.ndim
            and vtype.dtype == self.dtype
            and all(s is None or o is None or s == o for s, o in zip(self.shape, vtype.shape))
        ):
            from lucent.tensor.shape import specify_shape

            return specify_shape(var, self.shape)
        return None

    # --- the C-interface description of the element type ------------------------------
    dtype_specs_map = {
        "float16": (float, "npy_float16", "NPY_FLOAT16"),
        "float32": (float, "npy_float32", "NPY_FLOAT32"),
        "float64": (float, "npy_float64", "NPY_FLOAT64"),
        "bool": (bool, "npy_bool", "NPY_BOOL"),
        "uint8": (int, "npy_uint8", "NPY_UINT8"),
        "int8": (int, "npy_int8", "NPY_INT8"),
        "uint16": (int, "npy_uint16", "NPY_UINT16"),
        "int16": (int, "npy_int16", "NPY_INT16"),
        "uint32": (int, "npy_uint32", "NPY_UINT32"),
        "int32": (int, "npy_int32", "NPY_INT32"),
        "uint64": (int, "npy_uint64", "NPY_UINT64"),
        "int64": (int, "npy_int64", "NPY_INT64"),
        "complex128": (complex, "pytensor_complex128", "NPY_COMPLEX128"),
        "complex64": (complex, "pytensor_complex64", "NPY_COMPLEX64"),
    }

    def dtype_specs(self):
        """``(python type, C element type, NumPy type number name)`` of the dtype.

        lucent compiles with Numba, but Ops written against the Type
        interface ask for these names (``c_element_type``) and the Type
        documentation defines them.
        """
        try:
            return self.dtype_specs_map[self.dtype]
        except KeyError:
            raise TypeError(f"Unsupported dtype for {type(self).__name__}: {self.dtype}") from None

    def c_element_type(self):
        """The C name of one element: ``'npy_float64'`` for float64."""
        return self.dtype_specs()[1]

    def to_scalar_type(self):
        """The ``lucent.scalar`` type of one element."""
        from lucent.scalar.basic import get_scalar_type

        return get_scalar_type(self.dtype)

    def make_variable(self, name=None):
        return self.variable_type(self, None, name=name)


class _DenseTypeMeta(type):
    """Makes ``isinstance(t, DenseTensorType)`` true for plain ``TensorType`` instances."""

    def __instancecheck__(cls, obj):
        return type(obj) is TensorType or isinstance(type(obj), _DenseTypeMeta)


class DenseTensorType(TensorType, metaclass=_DenseTypeMeta):
    """The dense tensor types: ``TensorType`` itself, not its sparse subclass.

    ``SparseTensorType`` derives from ``TensorType``, so "is this a dense
    array?" is asked as ``isinstance(t, DenseTensorType)``, which is true
    for every plain ``TensorType``.
    """


def _width(dtype_name):
    return np.dtype(dtype_name).itemsize


def _get_atol_rtol(a, b):
    """Default ``(atol, rtol)`` for comparing arrays ``a`` and ``b``: the narrowest float decides."""
    floats = [d.name for d in (a.dtype, b.dtype) if d.name in _TOLERANCES]
    narrow = min(floats, key=_width) if floats else "float64"
    return _TOLERANCES[narrow]


def _allclose(a, b, rtol=None, atol=None):
    """``numpy.allclose`` with tolerances chosen by the arrays' dtypes unless given."""
    a = np.asarray(a)
    b = np.asarray(b)
    default_atol, default_rtol = _get_atol_rtol(a, b)
    return bool(
        np.allclose(
            a,
            b,
            rtol=default_rtol if rtol is None else rtol,
            atol=default_atol if atol is None else atol,
        )
    )


def values_eq_approx(a, b, allow_remove_inf=False, allow_remove_nan=False, rtol=None, atol=None):
    """True if the arrays ``a`` and ``b`` are equal up to dtype-dependent tolerances.

    Shapes and dtypes must match; integer arrays must be exactly equal. NaNs
    count as equal to NaNs and infinities to infinities of the same sign.
    With ``allow_remove_inf`` / ``allow_remove_nan``, an inf / NaN in ``a``
    accepts any value of ``b`` at that position (a rewrite that removes an
    overflow or a NaN is not wrong). Subtracting infinities makes NumPy warn
    (``RuntimeWarning``), which is left visible: it tells that non-finite
    values took part in the comparison.
    """
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.name not in continuous_dtypes:
        return bool(np.all(a == b))
    if _allclose(a, b, rtol=rtol, atol=atol):
        return True
    a_nan = np.isnan(a)
    a_inf = np.isinf(a)
    if not (a_nan.any() or a_inf.any()):
        return False
    default_atol, default_rtol = _get_atol_rtol(a, b)
    atol = default_atol if atol is None else atol
    rtol = default_rtol if rtol is None else rtol
    close = np.absolute(a - b) <= (atol + rtol * np.absolute(b))
    both_nan = a_nan & np.isnan(b)
    both_inf = a_inf & np.isinf(b)
    # inf - inf is NaN, so equal infinities are decided by ==, not by |a - b|.
    close = np.where(both_inf, a == b, close)
    accepted = close | both_nan
    if allow_remove_inf:
        accepted |= a_inf
    if allow_remove_nan:
        accepted |= a_nan
    return bool(accepted.all())


def values_eq_approx_remove_inf(a, b):
    return values_eq_approx(a, b, True)


def values_eq_approx_remove_nan(a, b):
    return values_eq_approx(a, b, False, True)


def values_eq_approx_remove_inf_nan(a, b):
    return values_eq_approx(a, b, True, True)


def values_eq_approx_always_true(a, b):
    return True


def _shape_str(shape):
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _plain_ndarray(type_, data):
    """A ``np.matrix`` or masked array as a plain ndarray view, or ``TypeError``.

    These two subclasses change what operators mean (``np.matrix``: ``*`` is
    a matrix product and every result stays 2-d; a masked array skips its
    masked elements), so an op's ``perform`` would compute something else
    than its Numba kernel, which only sees the buffer. The plain view has
    the same memory, so nothing is copied. A masked array with masked
    elements is refused: dropping its mask would silently use the
    masked-out values. Other subclasses (``np.memmap``, a user's subclass
    that keeps NumPy's operators) are taken as they are, as PyTensor does.
    """
    if isinstance(data, np.ma.MaskedArray):
        if np.ma.getmask(data) is np.ma.nomask or not np.ma.getmaskarray(data).any():
            return np.ma.getdata(data)
        raise TypeError(
            f"{type_} cannot take a masked array with masked elements: lucent ignores masks, "
            "so the masked-out values would be used. Pass data.filled(value) or "
            "numpy.ma.getdata(data) to say what the masked elements hold"
        )
    return data.view(np.ndarray)


def _holds_text(data):
    """True for a str/bytes value, or a (nested) list or tuple whose first leaf is one."""
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return isinstance(data, (str, bytes, np.str_, np.bytes_))


def _integers_out_of_range(original, dtype):
    """True when integer values do not fit the integer ``dtype`` (a cast would wrap them)."""
    if original.dtype.kind not in "iub" or np.dtype(dtype).kind not in "iu" or original.size == 0:
        return False
    info = np.iinfo(dtype)
    return bool(original.min() < info.min or original.max() > info.max)


def _equal_after_cast(original, converted):
    if _integers_out_of_range(original, converted.dtype):
        return False
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
    """One TensorType instance per (dtype, shape), so ``vector().type is vector().type``.

    The predefined types (``dvector``, ``frow``, ...) are the cached ones, so
    ``vector(dtype="float64").type is dvector``.
    """
    dtype = normalize_dtype(dtype)
    key = (dtype, tuple(shape))
    t = _type_cache.get(key)
    if t is None:
        t = _type_cache[key] = TensorType(dtype, shape)
    return t


def _check_name(name):
    if name is not None and not isinstance(name, str):
        raise TypeError(f"A variable name must be a string or None, got {name!r}")


def _looks_like_dtype(value):
    """True for ``'float64'``, ``'floatX'``, ``np.int64``, ``bool``: not a variable name.

    Short strings (``'a'``, ``'f8'``) are taken as names even though NumPy
    would read some of them as dtype codes.
    """
    if isinstance(value, str):
        if value == "floatX":
            return True
        if len(value) <= 2:
            return False
    try:
        np.dtype(value)
    except (TypeError, ValueError):
        return False
    return True


def tensor(name=None, *, dtype=None, shape=None, **kwargs):
    """A symbolic tensor variable: ``tensor("x", dtype="float32", shape=(None, 3))``.

    ``name`` is the only positional argument; ``dtype`` (default
    ``config.floatX``) and ``shape`` (a tuple with an int per known length
    and ``None`` per unknown one) are keywords. Further keywords go to
    ``TensorType`` (``broadcastable=``, deprecated).
    """
    if name is not None and _looks_like_dtype(name):
        raise ValueError(
            f"The first and only positional argument of tensor is now `name`. Got {name!r}.\n"
            "This name looks like a dtype, which you should pass as a keyword argument only: "
            f"tensor(dtype={name!r}, shape=...)."
        )
    _check_name(name)
    if dtype is None:
        dtype = config.floatX
    if shape is None and "broadcastable" not in kwargs:
        raise TypeError(
            "tensor() needs shape=: a tuple with an int for each known length and None "
            "for each unknown one, e.g. tensor('x', shape=(None, 3))"
        )
    return TensorType(dtype=dtype, shape=shape, **kwargs)(name=name)


def _validate_static_shape(shape, ndim, kind):
    if not isinstance(shape, tuple):
        raise TypeError(
            f"{kind}(): Shape must be a tuple, got {type(shape).__name__} {shape!r}; "
            f"give a tuple of {ndim} ints or None"
        )
    if len(shape) != ndim:
        raise ValueError(f"{kind}(): Shape must be a tuple of length {ndim}, got {shape}")
    if not all(s is None or (isinstance(s, (int, np.integer)) and not isinstance(s, bool)) for s in shape):
        raise TypeError(f"{kind}(): Shape entries must be None or integer, got {shape}")
    return shape


def _rank_constructor(kind, ndim, default_shape, check=None):
    def constructor(name=None, *, dtype=None, shape=default_shape):
        if name is not None and not isinstance(name, str):
            hint = " (a dtype is given as dtype=...)" if _looks_like_dtype(name) else ""
            raise TypeError(f"{kind}(): name must be a string or None, got {name!r}{hint}")
        if dtype is None:
            dtype = config.floatX
        shape = _validate_static_shape(shape, ndim, kind)
        if check is not None:
            check(shape)
        return _cached_type(dtype, shape)(name)

    constructor.__name__ = constructor.__qualname__ = kind
    constructor.__doc__ = (
        f"A symbolic {kind} variable named ``name``: dtype ``config.floatX`` unless "
        f"``dtype=`` is given, static shape {default_shape} unless ``shape=`` (a tuple) is given."
    )
    return constructor


def _check_row(shape):
    if shape[0] != 1:
        raise ValueError(f"The first dimension of a `row` must have shape 1, got {shape[0]}")


def _check_col(shape):
    if shape[1] != 1:
        raise ValueError(f"The second dimension of a `col` must have shape 1, got {shape[1]}")


def _plural(single, plural_name):
    def constructor(*names, **kwargs):
        if len(names) == 1 and isinstance(names[0], (int, np.integer)) and not isinstance(names[0], bool):
            return [single(**kwargs) for _ in range(int(names[0]))]
        if len(names) == 1 and isinstance(names[0], str):
            text = names[0]
            names = tuple(n.strip() for n in text.split(",")) if "," in text else tuple(text)
        if len(names) == 1:
            return single(names[0], **kwargs)
        return [single(n, **kwargs) for n in names]

    constructor.__name__ = constructor.__qualname__ = plural_name
    constructor.__doc__ = (
        f"Several variables at once: ``{plural_name}('xy')`` or ``{plural_name}('x', 'y')`` "
        "(one letter per name), ``'a, b'`` (comma-separated names), or an int for that many "
        "unnamed variables. A single name gives a single variable."
    )
    return constructor


# kind: (ndim, default static shape, extra check)
_KINDS = {
    "scalar": (0, (), None),
    "vector": (1, (None,), None),
    "matrix": (2, (None, None), None),
    "row": (2, (1, None), _check_row),
    "col": (2, (None, 1), _check_col),
    **{f"tensor{n}": (n, (None,) * n, None) for n in range(3, 8)},
}
_PLURALS = {"scalar": "scalars", "vector": "vectors", "matrix": "matrices", "row": "rows", "col": "cols",
            **{f"tensor{n}": f"tensor{n}s" for n in range(3, 8)}}
# Prefix letters of the predefined types: ``dmatrix`` is a float64 matrix type.
_PREFIXES = {"c": "complex64", "z": "complex128", "f": "float32", "d": "float64",
             "b": "int8", "w": "int16", "i": "int32", "l": "int64"}
_UNSIGNED_SCALARS = {"ubscalar": "uint8", "uwscalar": "uint16", "uiscalar": "uint32", "ulscalar": "uint64"}

_constructors = {}
for _kind, (_ndim, _shape, _check) in _KINDS.items():
    _single = _rank_constructor(_kind, _ndim, _shape, _check)
    _constructors[_kind] = _single
    _constructors[_PLURALS[_kind]] = _plural(_single, _PLURALS[_kind])
    for _prefix, _dtype in _PREFIXES.items():
        _type = _cached_type(_dtype, _shape)
        _constructors[_prefix + _kind] = _type
        _constructors[_prefix + _PLURALS[_kind]] = _plural(_type, _prefix + _PLURALS[_kind])
for _name, _dtype in _UNSIGNED_SCALARS.items():
    _constructors[_name] = _cached_type(_dtype, ())

globals().update(_constructors)

int_types = int_scalar_types = (bscalar, wscalar, iscalar, lscalar)  # noqa: F821
float_types = float_scalar_types = (fscalar, dscalar)  # noqa: F821
complex_types = complex_scalar_types = (cscalar, zscalar)  # noqa: F821
int_vector_types = (bvector, wvector, ivector, lvector)  # noqa: F821
float_vector_types = (fvector, dvector)  # noqa: F821
complex_vector_types = (cvector, zvector)  # noqa: F821
int_matrix_types = (bmatrix, wmatrix, imatrix, lmatrix)  # noqa: F821
float_matrix_types = (fmatrix, dmatrix)  # noqa: F821
complex_matrix_types = (cmatrix, zmatrix)  # noqa: F821

__all__ = [
    "TensorType",
    "DenseTensorType",
    "all_dtypes",
    "tensor",
    "int_types", "float_types", "complex_types",
    "int_scalar_types", "float_scalar_types", "complex_scalar_types",
    "int_vector_types", "float_vector_types", "complex_vector_types",
    "int_matrix_types", "float_matrix_types", "complex_matrix_types",
    *sorted(_constructors),
]
