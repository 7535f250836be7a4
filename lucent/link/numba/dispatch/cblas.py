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

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from lucent.link.numba.blas_symbols import blas_address

#: Written into every kernel calling ``cblas_gemm``: bump it when the call's
#: code generation changes, so no kernel cached with the old one is loaded.
CBLAS_VERSION = 4

#: CBLAS enumerations (cblas.h).
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

#: ``(routine, dtype) -> (llvm_name, exported_name, int_bits)`` or ``None``, once resolved.
_resolved: dict = {}


def blas_symbol(routine, dtype):
    """``(llvm_name, exported_name, int_bits)`` of CBLAS ``routine`` for ``dtype``, or ``None``.

    Resolving also registers the address with LLVM under ``llvm_name``,
    which must happen before a kernel calling it is compiled or loaded from
    the cache; kernel generators call this, so it always does.
    """
    dtype = str(dtype)
    if (routine, dtype) in _resolved:
        return _resolved[routine, dtype]
    found = blas_address(routine, dtype)
    if found is not None:
        import llvmlite.binding as llvm

        llvm_name, address, name, bits = found
        llvm.add_symbol(llvm_name, address)
        found = (llvm_name, name, bits)
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


def _row_major(builder, intp, rows, cols, s_rows, s_cols, item):
    """Emit: can BLAS read this matrix row by row, and with which leading dimension.

    Rows of unit step (or a single column), and a row step that is a
    non-negative multiple of the item size, at least the row length (or a
    single row); the leading dimension is the row step in items, or the
    row length (at least 1) for a single row.
    """
    one = ir.Constant(intp, 1)
    size = ir.Constant(intp, item)
    zero = ir.Constant(intp, 0)
    cols_at_least_1 = builder.select(builder.icmp_signed(">", cols, one), cols, one)
    step = builder.sdiv(s_rows, size)
    unit_cols = builder.or_(builder.icmp_signed("<=", cols, one), builder.icmp_signed("==", s_cols, size))
    exact = builder.icmp_signed("==", builder.srem(s_rows, size), zero)
    long_enough = builder.icmp_signed(">=", step, cols_at_least_1)
    rows_ok = builder.or_(builder.icmp_signed("<=", rows, one), builder.and_(exact, long_enough))
    ld = builder.select(builder.icmp_signed(">", rows, one), step, cols_at_least_1)
    return builder.and_(unit_cols, rows_ok), ld


def _matrix_parts(context, builder, typ, value):
    array = context.make_array(typ)(context, builder, value)
    rows, cols = cgutils.unpack_tuple(builder, array.shape, 2)
    s_rows, s_cols = cgutils.unpack_tuple(builder, array.strides, 2)
    return rows, cols, s_rows, s_cols, context.get_abi_sizeof(context.get_data_type(typ.dtype))


@intrinsic
def blas_matrix(typingctx, x):
    """``(trans, ld)``: how BLAS reads the 2-d array ``x`` in place, or ``(0, 0)`` when it cannot.

    ``NoTrans`` when it is stored by rows, ``Trans`` when by columns (a
    transposed C array), with its leading dimension; general strides,
    negative or unaligned steps give 0, and the kernel copies ``x``. The
    test is emitted inline from the shape and strides: written as Python in
    every product kernel it was a large share of their compile time.
    """
    if not (isinstance(x, types.Array) and x.ndim == 2):
        return None
    result = types.UniTuple(types.intp, 2)

    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        rows, cols, s_rows, s_cols, item = _matrix_parts(context, builder, sig.args[0], args[0])
        by_rows, ld_rows = _row_major(builder, intp, rows, cols, s_rows, s_cols, item)
        by_cols, ld_cols = _row_major(builder, intp, cols, rows, s_cols, s_rows, item)
        zero = ir.Constant(intp, 0)
        trans = builder.select(
            by_rows, ir.Constant(intp, NO_TRANS), builder.select(by_cols, ir.Constant(intp, TRANS), zero)
        )
        ld = builder.select(by_rows, ld_rows, builder.select(by_cols, ld_cols, zero))
        return context.make_tuple(builder, result, [trans, ld])

    return result(x), codegen


@intrinsic
def blas_rows(typingctx, x):
    """``(usable, ld)``: whether BLAS can write the 2-d array ``x`` as a row-major output, and its leading dimension."""
    if not (isinstance(x, types.Array) and x.ndim == 2):
        return None
    result = types.Tuple((types.boolean, types.intp))

    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        rows, cols, s_rows, s_cols, item = _matrix_parts(context, builder, sig.args[0], args[0])
        usable, ld = _row_major(builder, intp, rows, cols, s_rows, s_cols, item)
        return context.make_tuple(builder, result, [usable, ld])

    return result(x), codegen


def _operand(context, builder, typ, value, cols):
    """Emit how BLAS reads the matrix ``value`` (type ``typ``): ``(data, trans, ld, copy)``.

    In place by rows (``NoTrans``) or by columns (``Trans``, a transposed C
    array), the test of ``blas_matrix``; an operand that is neither
    (general strides, negative or unaligned steps) is copied in C order,
    with the leading dimension ``max(cols, 1)``: the only case that copies.
    ``copy`` is the copy's array value, null when none was made, for the
    caller to release after the call.
    """
    from lucent.link.numba.dispatch.memory import c_order_copy

    intp = context.get_value_type(types.intp)
    rows_, cols_, s_rows, s_cols, item = _matrix_parts(context, builder, typ, value)
    by_rows, ld_rows = _row_major(builder, intp, rows_, cols_, s_rows, s_cols, item)
    by_cols, ld_cols = _row_major(builder, intp, cols_, rows_, s_cols, s_rows, item)
    trans = builder.select(by_rows, ir.Constant(intp, NO_TRANS), ir.Constant(intp, TRANS))
    ld = builder.select(by_rows, ld_rows, ld_cols)
    data = _data(context, builder, value, typ)
    copy_type = types.Array(typ.dtype, 2, "C")
    null = ir.Constant(context.get_value_type(copy_type), None)
    entry = builder.block
    with builder.if_then(builder.not_(builder.or_(by_rows, by_cols)), likely=False):
        copy_sig, copy_codegen = c_order_copy._defn(context.typing_context, typ)
        made = copy_codegen(context, builder, copy_sig, [value])
        copy_data = _data(context, builder, made, copy_type)
        one = ir.Constant(intp, 1)
        copy_ld = builder.select(builder.icmp_signed(">", cols, one), cols, one)
        copied = builder.block
    results = []
    for kept, replaced in ((data, copy_data), (trans, ir.Constant(intp, NO_TRANS)), (ld, copy_ld), (null, made)):
        phi = builder.phi(kept.type)
        phi.add_incoming(kept, entry)
        phi.add_incoming(replaced, copied)
        results.append(phi)
    return results


def _gemm_function(builder, dtype):
    """The declared CBLAS ``?gemm`` for ``dtype`` (registered by ``gemm_symbol``) and its int width."""
    llvm_name, _, bits = _resolved[("gemm", str(dtype))]
    fty = ir.DoubleType() if dtype == types.float64 else ir.FloatType()
    ity = ir.IntType(bits)
    enum = ir.IntType(32)
    ptr = fty.as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [enum, enum, enum, ity, ity, ity, fty, ptr, ity, ptr, ity, fty, ptr, ity])
    return cgutils.get_or_insert_function(builder.module, fnty, llvm_name), bits


@intrinsic
def cblas_gemm_into(typingctx, out, alpha, a, b, beta):
    """``out = alpha * a @ b + beta * out`` with one ``?gemm`` call (see ``cblas_gemm``).

    What a product kernel did in statements (each operand read in place or
    copied, ``_operand``; the output's leading dimension; the call when the
    product is not empty), emitted as IR in one piece: as statements it was
    about half of compiling ``Dot22`` and ``Gemm``. ``out`` must pass
    ``blas_rows``.
    """
    if not all(isinstance(x, types.Array) and x.ndim == 2 for x in (out, a, b)):
        return None
    dtype = out.dtype
    if dtype not in (types.float64, types.float32) or a.dtype != dtype or b.dtype != dtype:
        return None
    if _resolved.get(("gemm", str(dtype))) is None:
        return None

    def codegen(context, builder, sig, args):
        out_t, alpha_t, a_t, b_t, beta_t = sig.args
        out_v, alpha_v, a_v, b_v, beta_v = args
        intp = context.get_value_type(types.intp)
        zero = ir.Constant(intp, 0)
        m, k = cgutils.unpack_tuple(builder, context.make_array(a_t)(context, builder, a_v).shape, 2)
        n = cgutils.unpack_tuple(builder, context.make_array(b_t)(context, builder, b_v).shape, 2)[1]
        nonempty = builder.and_(builder.icmp_signed(">", m, zero), builder.icmp_signed(">", n, zero))
        with builder.if_then(nonempty):
            a_data, a_trans, a_ld, a_copy = _operand(context, builder, a_t, a_v, k)
            b_data, b_trans, b_ld, b_copy = _operand(context, builder, b_t, b_v, n)
            rows, cols, s_rows, s_cols, item = _matrix_parts(context, builder, out_t, out_v)
            c_ld = _row_major(builder, intp, rows, cols, s_rows, s_cols, item)[1]
            fn, bits = _gemm_function(builder, dtype)
            ity = ir.IntType(bits)
            enum = ir.IntType(32)

            def width(v):
                return builder.trunc(v, ity) if bits < 64 else v

            builder.call(fn, [
                ir.Constant(enum, ROW_MAJOR), builder.trunc(a_trans, enum), builder.trunc(b_trans, enum),
                width(m), width(n), width(k), context.cast(builder, alpha_v, alpha_t, dtype),
                a_data, width(a_ld), b_data, width(b_ld), context.cast(builder, beta_v, beta_t, dtype),
                _data(context, builder, out_v, out_t), width(c_ld),
            ])
            copy_type = types.Array(dtype, 2, "C")
            for copy in (a_copy, b_copy):
                meminfo = builder.extract_value(copy, 0)
                with builder.if_then(cgutils.is_not_null(builder, meminfo), likely=False):
                    context.nrt.decref(builder, copy_type, copy)
        return context.get_dummy_value()

    return types.void(out, alpha, a, b, beta), codegen


def _borrowed_value(context, builder, typ, value):
    """The array ``value`` as a value holding no reference to its memory (``borrowed.borrowed``'s lowering)."""
    from lucent.link.numba.dispatch.borrowed import borrowed

    sig, codegen = borrowed._defn(context.typing_context, typ)
    return codegen(context, builder, sig, [value])


@intrinsic
def gemv_operands(typingctx, a, x):
    """``(A, A_t, A_ld, x_, x_inc)``: how ``?gemv`` reads the matrix ``a`` and the vector ``x``.

    What a ``Gemv`` kernel decided in statements, emitted as IR in one piece: ``A`` is ``a`` itself (a
    borrowed alias, no reference-count updates) read by rows or by columns,
    or a C-order copy; ``x_`` is ``x`` itself when its step is a positive
    multiple of the item size (or it has at most one element), with that
    step in items, or a C copy with step 1. A copy is a new array, freed
    when its name dies.
    """
    if not (isinstance(a, types.Array) and a.ndim == 2 and isinstance(x, types.Array) and x.ndim == 1):
        return None
    a_result = a if a.layout == "C" else a.copy(layout="A")
    x_result = x if x.layout == "C" else x.copy(layout="A")
    result = types.Tuple((a_result, types.intp, types.intp, x_result, types.intp))

    def codegen(context, builder, sig, args):
        from lucent.link.numba.dispatch.memory import c_order_copy

        a_t, x_t = sig.args
        a_v, x_v = args
        intp = context.get_value_type(types.intp)
        one = ir.Constant(intp, 1)
        k = cgutils.unpack_tuple(builder, context.make_array(a_t)(context, builder, a_v).shape, 2)[1]
        data, trans, ld, copy = _operand(context, builder, a_t, a_v, k)
        del data
        a_struct = _borrowed_value(context, builder, a_t, a_v)
        copied = cgutils.is_not_null(builder, builder.extract_value(copy, 0))
        a_c = types.Array(a.dtype, 2, "C")
        a_out = builder.select(
            copied, context.cast(builder, copy, a_c, a_result), context.cast(builder, a_struct, a_t, a_result)
        )
        vector = context.make_array(x_t)(context, builder, x_v)
        (length,) = cgutils.unpack_tuple(builder, vector.shape, 1)
        (step,) = cgutils.unpack_tuple(builder, vector.strides, 1)
        item = ir.Constant(intp, context.get_abi_sizeof(context.get_data_type(x.dtype)))
        zero = ir.Constant(intp, 0)
        usable = builder.or_(
            builder.icmp_signed("<=", length, one),
            builder.and_(builder.icmp_signed(">", step, zero), builder.icmp_signed("==", builder.srem(step, item), zero)),
        )
        inc = builder.select(builder.icmp_signed(">", length, one), builder.sdiv(step, item), one)
        x_borrowed = context.cast(builder, _borrowed_value(context, builder, x_t, x_v), x_t, x_result)
        entry = builder.block
        with builder.if_then(builder.not_(usable), likely=False):
            copy_sig, copy_codegen = c_order_copy._defn(context.typing_context, x_t)
            x_copy = context.cast(builder, copy_codegen(context, builder, copy_sig, [x_v]), copy_sig.return_type, x_result)
            copied_block = builder.block
        x_out = builder.phi(x_borrowed.type)
        x_out.add_incoming(x_borrowed, entry)
        x_out.add_incoming(x_copy, copied_block)
        x_inc = builder.phi(intp)
        x_inc.add_incoming(inc, entry)
        x_inc.add_incoming(one, copied_block)
        return context.make_tuple(builder, result, [a_out, trans, ld, x_out, x_inc])

    return result(a, x), codegen


__all__ = [
    "CBLAS_VERSION",
    "blas_symbol",
    "cblas_gemm",
    "cblas_gemv",
    "cblas_gemm_into",
    "gemv_operands",
    "blas_matrix",
    "blas_rows",
    "gemm_symbol",
    "gemv_symbol",
]
