"""Direct calls to the CBLAS ``?gemm`` and ``?gemv`` of the BLAS NumPy itself uses, from generated kernels.

Why not Numba's ``np.dot(a, b, out)``: it compiles a separate set of
helpers for every combination of operand layouts (C, F, A), which made the
products the largest share of a model's cold compile time; it cannot
accumulate into an existing buffer (``Gemm`` computed a product and then
added it in a second loop over the accumulator); and it makes Numba import
``scipy.linalg`` (about 0.3 s) the first time a process compiles or even
loads a cached function.

Here a product is one call of ``cblas_?gemm`` with the transposition flags
and leading dimensions worked out from the operands' strides at run time
(a transposed C array is passed as it is, with ``Trans``), and ``alpha`` /
``beta`` given to BLAS, so ``Gemm{inplace}`` writes straight into its
accumulator. The function is the one exported by the OpenBLAS bundled
with NumPy (``numpy.libs``); its address is registered with LLVM under a
fixed name (``lucent_cblas_dgemm64``) before any kernel is compiled or
loaded, so the cached machine code refers to the name, never to an
address, and stays valid in a new process. When no such library is found,
``gemm_symbol`` returns ``None`` and the kernels use ``np.dot`` as before.

A matrix-vector product (``Gemv``) is one ``cblas_?gemv`` call the same way
(``gemv_symbol``, ``cblas_gemv``): in a loop body it runs once per step, so
what Numba's ``np.dot`` adds around BLAS (a layout dispatch and a result
allocation) was a large part of a small step's time.
"""

from __future__ import annotations

import ctypes
import glob
import os

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

#: Written into every kernel calling ``cblas_gemm``: bump it when the call's
#: code generation changes, so no kernel cached with the old one is loaded.
CBLAS_VERSION = 1

#: CBLAS enumerations (cblas.h).
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

#: The BLAS precision letter of each dtype a CBLAS routine exists for.
_LETTER = {"float64": "d", "float32": "s"}
_resolved: dict = {}


def _candidates(routine, dtype):
    """Exported names tried for ``routine`` (``gemm``, ``gemv``), in order, with their integer width."""
    name = _LETTER[dtype] + routine
    return ((f"scipy_cblas_{name}64_", 64), (f"cblas_{name}64_", 64), (f"cblas_{name}", 32))


def _libraries():
    import numpy

    root = os.path.dirname(os.path.dirname(os.path.abspath(numpy.__file__)))
    return sorted(glob.glob(os.path.join(root, "numpy.libs", "*openblas*")))


def blas_symbol(routine, dtype):
    """``(llvm_name, exported_name, int_bits)`` of CBLAS ``routine`` for ``dtype``, or ``None``.

    Resolving also registers the address with LLVM under ``llvm_name``,
    which must happen before a kernel calling it is compiled or loaded from
    the cache; kernel generators call this, so it always does.
    """
    dtype = str(dtype)
    if (routine, dtype) in _resolved:
        return _resolved[routine, dtype]
    found = None
    if dtype in _LETTER:
        for path in _libraries():
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name, bits in _candidates(routine, dtype):
                fn = getattr(lib, name, None)
                if fn is None:
                    continue
                import llvmlite.binding as llvm

                llvm_name = f"lucent_cblas_{_LETTER[dtype]}{routine}{bits}"
                llvm.add_symbol(llvm_name, ctypes.cast(fn, ctypes.c_void_p).value)
                found = (llvm_name, name, bits)
                break
            if found:
                break
    _resolved[routine, dtype] = found
    return found


def gemm_symbol(dtype):
    """``blas_symbol('gemm', dtype)``: the matrix-matrix product."""
    return blas_symbol("gemm", dtype)


def gemv_symbol(dtype):
    """``blas_symbol('gemv', dtype)``: the matrix-vector product."""
    return blas_symbol("gemv", dtype)


def _integer(context, builder, value, typ, width):
    value = context.cast(builder, value, typ, types.int64)
    return builder.trunc(value, ir.IntType(width)) if width < 64 else value


def _data(context, builder, value, typ):
    return context.make_array(typ)(context, builder, value).data


@intrinsic
def cblas_gemm(typingctx, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    """``c = alpha * op(a) @ op(b) + beta * c`` (row-major CBLAS ``?gemm``; ``c`` is written)."""
    if not (isinstance(a, types.Array) and isinstance(b, types.Array) and isinstance(c, types.Array)):
        return None
    dtype = c.dtype
    if dtype not in (types.float64, types.float32) or a.dtype != dtype or b.dtype != dtype:
        return None
    found = _resolved.get(("gemm", str(dtype)))
    if found is None:
        return None
    llvm_name, _, bits = found
    sig = types.void(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)

    def codegen(context, builder, signature, args):
        ta_, tb_, m_, n_, k_, alpha_, a_, lda_, b_, ldb_, beta_, c_, ldc_ = args
        targs = signature.args
        fty = context.get_value_type(dtype)
        ity = ir.IntType(bits)
        enum = ir.IntType(32)
        ptr = fty.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [enum, enum, enum, ity, ity, ity, fty, ptr, ity, ptr, ity, fty, ptr, ity])
        fn = cgutils.get_or_insert_function(builder.module, fnty, llvm_name)

        def integer(value, typ, width):
            return _integer(context, builder, value, typ, width)

        def data(value, typ):
            return _data(context, builder, value, typ)

        builder.call(fn, [
            ir.Constant(enum, ROW_MAJOR),
            integer(ta_, targs[0], 32),
            integer(tb_, targs[1], 32),
            integer(m_, targs[2], bits),
            integer(n_, targs[3], bits),
            integer(k_, targs[4], bits),
            context.cast(builder, alpha_, targs[5], dtype),
            data(a_, targs[6]),
            integer(lda_, targs[7], bits),
            data(b_, targs[8]),
            integer(ldb_, targs[9], bits),
            context.cast(builder, beta_, targs[10], dtype),
            data(c_, targs[11]),
            integer(ldc_, targs[12], bits),
        ])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def cblas_gemv(typingctx, ta, m, n, alpha, a, lda, x, incx, beta, y, incy):
    """``y = alpha * op(a) @ x + beta * y`` (row-major CBLAS ``?gemv``; ``y`` is written).

    ``m`` x ``n`` is the shape of ``a`` as stored (row-major, leading
    dimension ``lda``); with ``ta == Trans`` the product is with its
    transpose. ``incx``/``incy`` are the vectors' steps in elements (> 0).
    """
    if not (isinstance(a, types.Array) and isinstance(x, types.Array) and isinstance(y, types.Array)):
        return None
    dtype = y.dtype
    if dtype not in (types.float64, types.float32) or a.dtype != dtype or x.dtype != dtype:
        return None
    found = _resolved.get(("gemv", str(dtype)))
    if found is None:
        return None
    llvm_name, _, bits = found
    sig = types.void(ta, m, n, alpha, a, lda, x, incx, beta, y, incy)

    def codegen(context, builder, signature, args):
        ta_, m_, n_, alpha_, a_, lda_, x_, incx_, beta_, y_, incy_ = args
        targs = signature.args
        fty = context.get_value_type(dtype)
        ity = ir.IntType(bits)
        enum = ir.IntType(32)
        ptr = fty.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [enum, enum, ity, ity, fty, ptr, ity, ptr, ity, fty, ptr, ity])
        fn = cgutils.get_or_insert_function(builder.module, fnty, llvm_name)
        builder.call(fn, [
            ir.Constant(enum, ROW_MAJOR),
            _integer(context, builder, ta_, targs[0], 32),
            _integer(context, builder, m_, targs[1], bits),
            _integer(context, builder, n_, targs[2], bits),
            context.cast(builder, alpha_, targs[3], dtype),
            _data(context, builder, a_, targs[4]),
            _integer(context, builder, lda_, targs[5], bits),
            _data(context, builder, x_, targs[6]),
            _integer(context, builder, incx_, targs[7], bits),
            context.cast(builder, beta_, targs[8], dtype),
            _data(context, builder, y_, targs[9]),
            _integer(context, builder, incy_, targs[10], bits),
        ])
        return context.get_dummy_value()

    return sig, codegen


def operand_lines(name, rows, cols, item, out):
    """Lines choosing how BLAS reads the matrix ``name`` (``rows`` x ``cols`` texts).

    Sets ``{out}`` (the array passed), ``{out}_t`` (``NoTrans`` when it is
    read row by row, ``Trans`` when column by column, i.e. a transposed C
    array) and ``{out}_ld`` (its leading dimension). An operand that is
    neither (general strides, negative or unaligned steps) is copied to C
    order, the only case that copies.
    """
    s0, s1 = f"{name}.strides[0]", f"{name}.strides[1]"
    return [
        f"if ({cols} <= 1 or {s1} == {item}) and ({rows} <= 1 or ({s0} % {item} == 0 and {s0} // {item} >= max(1, {cols}))):",
        f"    {out} = {name}",
        f"    {out}_t = {NO_TRANS}",
        f"    {out}_ld = {s0} // {item} if {rows} > 1 else max(1, {cols})",
        f"elif ({rows} <= 1 or {s0} == {item}) and ({cols} <= 1 or ({s1} % {item} == 0 and {s1} // {item} >= max(1, {rows}))):",
        f"    {out} = {name}",
        f"    {out}_t = {TRANS}",
        f"    {out}_ld = {s1} // {item} if {cols} > 1 else max(1, {rows})",
        "else:",
        f"    {out} = {name}.copy()",
        f"    {out}_t = {NO_TRANS}",
        f"    {out}_ld = max(1, {cols})",
    ]


def row_major_test(name, rows, cols, item):
    """Text true when ``name`` can be BLAS's output: rows of unit stride, non-negative row step."""
    s0, s1 = f"{name}.strides[0]", f"{name}.strides[1]"
    return (
        f"(({cols} <= 1 or {s1} == {item}) and ({rows} <= 1 or ({s0} % {item} == 0 and "
        f"{s0} // {item} >= max(1, {cols}))))"
    )


def extent_lines(name, out):
    """Lines setting ``{out}_lo`` / ``{out}_hi``: the byte range the 2-d array ``name`` spans."""
    return [
        f"{out}_lo = {name}.ctypes.data",
        f"{out}_hi = {out}_lo + {name}.itemsize",
        f"if {name}.size == 0:",
        f"    {out}_hi = {out}_lo",
        "else:",
        "    for _d in range(2):",
        f"        _span = ({name}.shape[_d] - 1) * {name}.strides[_d]",
        "        if _span < 0:",
        f"            {out}_lo += _span",
        "        else:",
        f"            {out}_hi += _span",
    ]


__all__ = [
    "CBLAS_VERSION",
    "blas_symbol",
    "cblas_gemm",
    "cblas_gemv",
    "extent_lines",
    "gemm_symbol",
    "gemv_symbol",
    "operand_lines",
    "row_major_test",
]
