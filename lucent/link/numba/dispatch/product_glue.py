"""The BLAS product kernels ``Dot22`` and ``Gemm{inplace}``, each emitted as IR in one piece.

A BLAS product kernel is checks, at most one allocation and one ``?gemm``
call. Written as Python statements (the shape checks raising with the
shapes in their message, reading ``alpha`` and ``beta``, the choice
between writing the accumulator itself and a new array, the fallback
blend), Numba typed and lowered each statement and each ``raise`` block on
its own: the two kernels of an MLP training step took 0.24 s of its cold
compile, for what is a few dozen instructions around a call. Here each
kernel's body is one intrinsic call, lowered straight to IR from the
pieces the statements called (``cblas.cblas_gemm_into``,
``overlap.overlaps``, ``cold_paths.blend_into``, ``memory.allocate_extents``).

* ``dot22_new(a, b, template)``: ``a @ b`` in a new C array (``Dot22``, and
  ``Dot`` of two matrices);
* ``gemm_accumulate(z, alpha, a, b, beta, not_aligned, wrong_shape)``:
  ``z = beta * z + alpha * a @ b`` in place, by BLAS writing ``z`` itself
  when it can (``alpha != 0``, ``z`` stored by rows and sharing no memory
  with ``a`` or ``b``), otherwise by the product into a new array and
  ``perform``'s blend; returns ``z``.

The templates are the kernel text's string constants, with ``{}`` for the
shapes; the errors are ``KernelValueError``, formatted in Python, with the
messages the statements raised. As with the other intrinsic checks
(``kernel_prologue``), a failed check returns the error from inside the
kernel without releasing the arrays it holds.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from lucent.link.numba.dispatch.cblas import _matrix_parts, _resolved, _row_major, cblas_gemm_into
from lucent.link.numba.dispatch.cold_paths import blend_into
from lucent.link.numba.dispatch.inline_values import item_of
from lucent.link.numba.dispatch.memory import allocate_extents
from lucent.link.numba.dispatch.overlap import _intersect
from lucent.link.numba.dispatch.shape import KernelValueError

_SHAPE = types.UniTuple(types.intp, 2)


def _blas_dtype(*arrays):
    """The common float dtype of 2-d ``arrays`` when a CBLAS ``?gemm`` serves it, else ``None``."""
    if not all(isinstance(x, types.Array) and x.ndim == 2 for x in arrays):
        return None
    dtype = arrays[0].dtype
    if dtype not in (types.float64, types.float32) or any(x.dtype != dtype for x in arrays):
        return None
    return dtype if _resolved.get(("gemm", str(dtype))) is not None else None


def _raise_formatted(context, builder, failed, template, values):
    """Emit: when ``failed``, return ``KernelValueError(template, *values)``; ``values``: ``(numba type, value)``."""
    with cgutils.if_unlikely(builder, failed):
        context.call_conv.return_dynamic_user_exc(
            builder, KernelValueError, (template, *(v for _, v in values)), (None, *(t for t, _ in values))
        )


def _gemm_into(context, builder, out, alpha, a, b, beta):
    """Emit ``cblas_gemm_into``: each argument is ``(numba type, value)``."""
    signature, codegen = cblas_gemm_into._defn(context.typing_context, *(t for t, _ in (out, alpha, a, b, beta)))
    codegen(context, builder, signature, [v for _, v in (out, alpha, a, b, beta)])


def _number(context, builder, typ, value):
    """``item_of(value)`` (a 0-d array's element or the number) as ``(numba type, value)``, a float.

    A float keeps its type (the blend computes in the type NumPy would); an
    integer or boolean becomes float64.
    """
    signature, codegen = item_of._defn(context.typing_context, typ)
    number = codegen(context, builder, signature, [value])
    kind = signature.return_type
    if isinstance(kind, types.Float):
        return kind, number
    return types.float64, context.cast(builder, number, kind, types.float64)


def _checked_lengths(context, builder, a_t, a_v, b_t, b_v, template):
    """``(m, k, n)`` of ``a @ b`` after checking ``a``'s columns against ``b``'s rows.

    The error's template is formatted with both shapes and both inner
    lengths (``str.format`` ignores what a template does not use).
    """
    a = context.make_array(a_t)(context, builder, a_v)
    b = context.make_array(b_t)(context, builder, b_v)
    m, k = cgutils.unpack_tuple(builder, a.shape, 2)
    k2, n = cgutils.unpack_tuple(builder, b.shape, 2)
    values = ((_SHAPE, a.shape), (_SHAPE, b.shape), (types.intp, k), (types.intp, k2))
    _raise_formatted(context, builder, builder.icmp_signed("!=", k, k2), template, values)
    return m, k, n


@intrinsic
def dot22_new(typingctx, a, b, template):
    """``a @ b`` in a new C array by one ``?gemm`` call; ``template`` formats the error of unaligned operands."""
    dtype = _blas_dtype(a, b)
    if dtype is None or not isinstance(template, types.StringLiteral):
        return None
    result = types.Array(dtype, 2, "C")
    message = template.literal_value

    def codegen(context, builder, sig, args):
        a_t, b_t, _ = sig.args
        a_v, b_v, _ = args
        m, _, n = _checked_lengths(context, builder, a_t, a_v, b_t, b_v, message)
        out = allocate_extents(context, builder, result, [m, n])._getvalue()
        one, zero = (context.get_constant(types.float64, v) for v in (1.0, 0.0))
        _gemm_into(context, builder, (result, out), (types.float64, one), (a_t, a_v), (b_t, b_v), (types.float64, zero))
        return out

    return result(a, b, template), codegen


@intrinsic
def gemm_accumulate(typingctx, z, alpha, a, b, beta, not_aligned, wrong_shape):
    """``z = beta * z + alpha * a @ b`` written into ``z`` (see the module docstring); returns ``z``."""
    dtype = _blas_dtype(z, a, b)
    if dtype is None or not z.mutable:
        return None
    if not all(isinstance(t, types.StringLiteral) for t in (not_aligned, wrong_shape)):
        return None
    if not all(isinstance(t, (types.Number, types.Boolean)) or isinstance(t, types.Array) for t in (alpha, beta)):
        return None
    fresh = types.Array(dtype, 2, "C")
    messages = not_aligned.literal_value, wrong_shape.literal_value

    def codegen(context, builder, sig, args):
        z_t, alpha_t, a_t, b_t, beta_t = sig.args[:5]
        z_v, alpha_v, a_v, b_v, beta_v = args[:5]
        alpha_n = _number(context, builder, alpha_t, alpha_v)
        beta_n = _number(context, builder, beta_t, beta_v)
        m, _, n = _checked_lengths(context, builder, a_t, a_v, b_t, b_v, messages[0])
        z_array = context.make_array(z_t)(context, builder, z_v)
        rows, cols = cgutils.unpack_tuple(builder, z_array.shape, 2)
        product_shape = context.make_tuple(builder, _SHAPE, [m, n])
        differs = builder.or_(builder.icmp_signed("!=", rows, m), builder.icmp_signed("!=", cols, n))
        _raise_formatted(context, builder, differs, messages[1], ((_SHAPE, z_array.shape), (_SHAPE, product_shape)))

        intp = context.get_value_type(types.intp)
        usable = _row_major(builder, intp, *_matrix_parts(context, builder, z_t, z_v))[0]
        a_array = context.make_array(a_t)(context, builder, a_v)
        b_array = context.make_array(b_t)(context, builder, b_v)
        shared = builder.or_(
            _intersect(context, builder, z_array, 2, a_array, 2), _intersect(context, builder, z_array, 2, b_array, 2)
        )
        nonzero = builder.fcmp_unordered("!=", alpha_n[1], ir.Constant(alpha_n[1].type, 0.0))
        direct = builder.and_(builder.and_(nonzero, usable), builder.not_(shared))
        with builder.if_else(direct, likely=True) as (blas_accumulates, blended):
            with blas_accumulates:
                _gemm_into(context, builder, (z_t, z_v), alpha_n, (a_t, a_v), (b_t, b_v), beta_n)
            with blended:
                # BLAS would skip the product for alpha == 0 (losing NaN and inf), or cannot write z
                out = allocate_extents(context, builder, fresh, [m, n])._getvalue()
                one, zero = (context.get_constant(types.float64, v) for v in (1.0, 0.0))
                _gemm_into(context, builder, (fresh, out), (types.float64, one), (a_t, a_v), (b_t, b_v),
                           (types.float64, zero))
                blend_sig, blend = blend_into._defn(context.typing_context, z_t, z_t, fresh, alpha_n[0], beta_n[0])
                blend(context, builder, blend_sig, [z_v, z_v, out, alpha_n[1], beta_n[1]])
                context.nrt.decref(builder, fresh, out)
        context.nrt.incref(builder, z_t, z_v)  # the kernel returns z: a new reference
        return z_v

    return z(z, alpha, a, b, beta, not_aligned, wrong_shape), codegen


__all__ = ["dot22_new", "gemm_accumulate"]
