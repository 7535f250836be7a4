"""The Numba form of SciPy CSR / CSC matrices: a struct of their three arrays and shape.

A compiled graph takes and returns ``scipy.sparse.csr_matrix`` /
``csc_matrix`` values like the Python path does; inside the machine code a
matrix is the struct ``(data, indices, indptr, shape)`` of
``CSMatrixType``, so kernels loop over the arrays natively (no object
mode):

* **unboxing** (a SciPy matrix entering compiled code) reads the four
  attributes and unboxes each; nothing is copied;
* **boxing** (a matrix leaving it) calls ``_box_csr`` / ``_box_csc``, which
  wrap the arrays in a SciPy matrix without copying them;
* ``make_csr`` / ``make_csc`` build a matrix from its arrays inside a kernel;
* ``numba.typeof`` knows SciPy matrices (constants and per-node kernels),
  and constant matrices are frozen into the code like constant arrays.

The type is parametrised by format, value dtype and index dtype. The graph
function is compiled for int32 indices, which is what lucent's sparse ops
produce; ``as_kernel_input`` converts a value whose indices SciPy stored
as int64 (or whose arrays are not contiguous) before the call.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed, lower_constant
from numba.extending import (
    NativeValue,
    box,
    intrinsic,
    make_attribute_wrapper,
    models,
    register_model,
    typeof_impl,
    unbox,
)
from numba.np.numpy_support import as_dtype, from_dtype

_FORMAT_CLASS = {"csr": scipy.sparse.csr_matrix, "csc": scipy.sparse.csc_matrix}


class CSMatrixType(types.Type):
    """A CSR or CSC matrix of ``dtype`` values and ``index_dtype`` indices, in compiled code."""

    def __init__(self, format, dtype, index_dtype="int32"):
        if format not in _FORMAT_CLASS:
            raise ValueError(f"Numba holds CSR and CSC matrices only, not {format!r}")
        self.format = format
        self.dtype = np.dtype(dtype)
        self.index_dtype = np.dtype(index_dtype)
        self.data = types.Array(from_dtype(self.dtype), 1, "C")
        self.indices = types.Array(from_dtype(self.index_dtype), 1, "C")
        self.indptr = self.indices
        self.shape = types.UniTuple(types.intp, 2)
        super().__init__(name=f"{format}_matrix({self.dtype.name}, {self.index_dtype.name})")

    @property
    def key(self):
        return (self.format, self.dtype.str, self.index_dtype.str)


@register_model(CSMatrixType)
class CSMatrixModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [
            ("data", fe_type.data),
            ("indices", fe_type.indices),
            ("indptr", fe_type.indptr),
            ("shape", fe_type.shape),
        ]
        super().__init__(dmm, fe_type, members)


for _attr in ("data", "indices", "indptr", "shape"):
    make_attribute_wrapper(CSMatrixType, _attr, _attr)


def numba_sparse_type(format, dtype, index_dtype="int32"):
    """The ``CSMatrixType`` of a sparse type's run-time values."""
    return CSMatrixType(format, dtype, index_dtype)


def _kernel_ready(value):
    return (
        value.indices.dtype == value.indptr.dtype
        and value.data.flags.c_contiguous
        and value.indices.flags.c_contiguous
        and value.indptr.flags.c_contiguous
        and value.data.ndim == 1
    )


@typeof_impl.register(scipy.sparse.csr_matrix)
@typeof_impl.register(scipy.sparse.csc_matrix)
def _typeof_cs_matrix(value, context):
    if value.format not in _FORMAT_CLASS or not _kernel_ready(value):
        raise TypeError(f"a {value.format} matrix with these arrays has no Numba form")
    return CSMatrixType(value.format, value.dtype, value.indices.dtype)


def as_kernel_input(value, format, dtype):
    """``value`` as a matrix the int32 ``CSMatrixType`` unboxes (the same object when it already is)."""
    if (
        value.__class__ is _FORMAT_CLASS[format]
        and value.indices.dtype == np.int32
        and value.indptr.dtype == np.int32
        and value.data.dtype == dtype
        and _kernel_ready(value)
    ):
        return value
    nnz = value.indptr[-1] if len(value.indptr) else 0
    if nnz > np.iinfo(np.int32).max:
        raise ValueError(
            f"a sparse matrix with {nnz} stored entries needs int64 indices, which the compiled "
            "function does not take; use mode='FAST_COMPILE'"
        )
    value = value.asformat(format)
    return _FORMAT_CLASS[format](
        (
            np.ascontiguousarray(value.data, dtype=dtype),
            np.ascontiguousarray(value.indices, dtype=np.int32),
            np.ascontiguousarray(value.indptr, dtype=np.int32),
        ),
        shape=value.shape,
        copy=False,
    )


def _box_csr(data, indices, indptr, shape):
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=shape, copy=False)


def _box_csc(data, indices, indptr, shape):
    return scipy.sparse.csc_matrix((data, indices, indptr), shape=shape, copy=False)


@unbox(CSMatrixType)
def _unbox_cs_matrix(typ, obj, c):
    matrix = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    failed = cgutils.alloca_once_value(c.builder, cgutils.false_bit)
    for name, member_type in (
        ("data", typ.data),
        ("indices", typ.indices),
        ("indptr", typ.indptr),
        ("shape", typ.shape),
    ):
        attr = c.pyapi.object_getattr_string(obj, name)
        native = c.unbox(member_type, attr)
        c.pyapi.decref(attr)
        setattr(matrix, name, native.value)
        with c.builder.if_then(native.is_error, likely=False):
            c.builder.store(cgutils.true_bit, failed)
    return NativeValue(matrix._getvalue(), is_error=c.builder.load(failed))


@box(CSMatrixType)
def _box_cs_matrix(typ, val, c):
    matrix = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    members = [
        c.box(typ.data, matrix.data),
        c.box(typ.indices, matrix.indices),
        c.box(typ.indptr, matrix.indptr),
        c.box(typ.shape, matrix.shape),
    ]
    maker = _box_csr if typ.format == "csr" else _box_csc
    maker_obj = c.pyapi.unserialize(c.pyapi.serialize_object(maker))
    result = c.pyapi.call_function_objargs(maker_obj, members)
    for obj in members:
        c.pyapi.decref(obj)
    c.pyapi.decref(maker_obj)
    return result


def _build_struct(context, builder, sig, args):
    matrix = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    matrix.data, matrix.indices, matrix.indptr, matrix.shape = args
    return impl_ret_borrowed(context, builder, sig.return_type, matrix._getvalue())


def _shape_type(shape):
    if not isinstance(shape, types.UniTuple) or shape.count != 2 or not isinstance(shape.dtype, types.Integer):
        raise TypeError(f"a sparse matrix's shape must be a pair of integers, got {shape}")


def _maker(format):
    def make(typingctx, data, indices, indptr, shape):
        _shape_type(shape)
        for name, arr in (("data", data), ("indices", indices), ("indptr", indptr)):
            if not isinstance(arr, types.Array) or arr.ndim != 1 or arr.layout != "C":
                raise TypeError(f"make_{format}: {name} must be a contiguous vector, got {arr}")
        typ = CSMatrixType(format, as_dtype(data.dtype), as_dtype(indices.dtype))
        sig = typ(typ.data, typ.indices, typ.indptr, typ.shape)

        def codegen(context, builder, signature, args):
            data_v, indices_v, indptr_v, shape_v = args
            shape_v = context.cast(builder, shape_v, shape, typ.shape)
            sig2 = typ(typ.data, typ.indices, typ.indptr, typ.shape)
            return _build_struct(context, builder, sig2, (data_v, indices_v, indptr_v, shape_v))

        return typ(data, indices, indptr, shape), codegen

    make.__name__ = f"make_{format}"
    return intrinsic(make)


#: ``make_csr(data, indices, indptr, (rows, cols))``: a CSR matrix of these arrays (no copy).
make_csr = _maker("csr")
#: ``make_csc(data, indices, indptr, (rows, cols))``: a CSC matrix of these arrays (no copy).
make_csc = _maker("csc")


@lower_constant(CSMatrixType)
def _constant_cs_matrix(context, builder, ty, pyval):
    data = context.make_constant_array(builder, ty.data, np.ascontiguousarray(pyval.data))
    indices = context.make_constant_array(builder, ty.indices, np.ascontiguousarray(pyval.indices))
    indptr = context.make_constant_array(builder, ty.indptr, np.ascontiguousarray(pyval.indptr))
    shape = context.get_constant_generic(builder, ty.shape, tuple(int(s) for s in pyval.shape))
    sig = ty(ty.data, ty.indices, ty.indptr, ty.shape)
    return _build_struct(context, builder, sig, (data, indices, indptr, shape))


__all__ = [
    "CSMatrixType",
    "numba_sparse_type",
    "as_kernel_input",
    "make_csr",
    "make_csc",
]
