"""Numba kernels of the products: ``Dot``, ``MatMul`` and ``BatchedDot`` (batched), ``Dot22``, ``Gemm``, ``Gemv``, ``Ger``.

Matrix-matrix products (``Dot22``, 2-d ``Dot``, ``Gemm``) in float32/64
call CBLAS ``?gemm`` directly (``cblas.py``): transposed operands are
passed with a flag instead of copied, and ``Gemm`` lets BLAS scale and
accumulate into its output. The rest, and every product when NumPy's BLAS
library cannot be found, use the ``np.dot`` scheme below.

Floating products go to BLAS through Numba's ``np.dot(a, b, out)`` (which
needs SciPy's BLAS), writing straight into the output buffer. BLAS wants
each operand contiguous in C *or* Fortran order; ``_dot_into`` checks that
at run time and copies only an operand that is neither (a transposed
matrix, ``X.T``, is Fortran-ordered and goes to BLAS as it is, as in
NumPy). Integer and boolean products, which BLAS does not do, are explicit
loops with NumPy's results (a boolean dot is OR of ANDs).

The scaling and accumulation of ``Gemm``/``Gemv``/``Ger`` is one explicit
loop after the product, in ``perform``'s order of operations; ``beta == 0``
never reads the accumulator (BLAS semantics, so ``nan`` there does not
leak). The ``inplace``/``destructive`` variants write into their first
input, as their ``destroy_map`` declares.
"""

from __future__ import annotations

import numpy as np

from lucent.link.numba.describe import dispatch_files_digest
from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.cblas import (
    CBLAS_VERSION,
    NO_TRANS,
    TRANS,
    gemm_symbol,
    gemv_symbol,
)
from lucent.link.numba.dispatch.blas_loops import LOOPS_HASH, SMALL_GEMV
from lucent.link.numba.dispatch.threads import kernel_threads
from lucent.link.numba.kernel_calls import mark_any_layout
from lucent.link.numba.dispatch.shape import dtype_text, esc, fail, loops, make_kernel
from lucent.tensor.blas import BatchedDot, Dot22, Gemm, Gemv, Ger
from lucent.tensor.math import Dot, MatMul

# Product of contiguous operands into ``out`` (C-contiguous, the result's dtype).
DOT_INTO = '''
@numba.njit
def _dot_b(a, b, out):
    if b.ndim == 2 and b.flags.f_contiguous and not b.flags.c_contiguous:
        np.dot(a, np.asfortranarray(b), out)
    else:
        np.dot(a, np.ascontiguousarray(b), out)

@numba.njit
def _dot_into(a, b, out):
    if a.ndim == 2 and a.flags.f_contiguous and not a.flags.c_contiguous:
        _dot_b(np.asfortranarray(a), b, out)
    else:
        _dot_b(np.ascontiguousarray(a), b, out)
'''

def _loop_dot_text(na, nb, dtype):
    """``_loop_dot(a, b, out)`` for the ranks given: the product for dtypes BLAS does not
    handle (ints, bool), as NumPy computes it (a boolean dot is OR of ANDs)."""
    is_bool = str(dtype) == "bool"
    ai = (lambda i, p: f"a[{i}, {p}]") if na == 2 else (lambda i, p: f"a[{p}]")
    bi = (lambda p, j: f"b[{p}, {j}]") if nb == 2 else (lambda p, j: f"b[{p}]")
    oi = [["i"] if na == 2 else [], ["j"] if nb == 2 else []]
    target = "out[" + ", ".join(oi[0] + oi[1]) + "]" if oi[0] + oi[1] else "out[()]"
    term = f"{ai('i', 'p')} and {bi('p', 'j')}" if is_bool else f"{ai('i', 'p')} * {bi('p', 'j')}"
    update = f"acc = acc or ({term})" if is_bool else f"acc += {term}"
    zero = "False" if is_bool else f"{dtype_text(dtype)}(0)"
    return f"""
@numba.njit
def _loop_dot(a, b, out):
    for i in range({'a.shape[0]' if na == 2 else 1}):
        for j in range({'b.shape[1]' if nb == 2 else 1}):
            acc = {zero}
            for p in range(b.shape[0]):
                {update}
            {target} = acc
"""


def _is_blas(dtype):
    return str(dtype) in ("float32", "float64", "complex64", "complex128")


def _product_helpers(dtype, na=2, nb=2):
    """Helper text and the name of the function computing ``out = a @ b`` for ``dtype``."""
    if _is_blas(dtype):
        return [DOT_INTO], "_dot_into"
    return [_loop_dot_text(na, nb, dtype)], "_loop_dot"


#: The files whose intrinsics product kernels call, in their text (Numba's cache tracks only the kernel's file).
_HELPERS_DIGEST = dispatch_files_digest(
    "cblas.py", "memory.py", "cold_paths.py", "overlap.py", "borrowed.py", "product_glue.py", "inline_values.py"
)


def _cblas(dtype, routine="gemm"):
    """The helper text importing ``cblas_<routine>`` for ``dtype``, or ``None`` without a CBLAS."""
    symbol = {"gemm": gemm_symbol, "gemv": gemv_symbol}[routine]
    found = symbol(dtype) if str(dtype) in ("float32", "float64") else None
    if found is None:
        return None
    kernel_threads()  # BLAS gets config.numba__num_threads threads when that is above 1
    # The exported name and integer width are part of the text: a different
    # BLAS gives different kernels, never a stale cached one.
    return (
        f"# cblas v{CBLAS_VERSION} {_HELPERS_DIGEST}: {found[1]} as {found[0]}, int{found[2]}\n"
        f"from lucent.link.numba.dispatch.cblas import cblas_{routine}, blas_matrix, blas_rows, cblas_gemm_into, gemv_operands\n"
        "from lucent.link.numba.dispatch.overlap import overlaps\n"
        "from lucent.link.numba.dispatch.borrowed import borrowed\n"
        "from lucent.link.numba.dispatch.memory import c_order_copy\n"
        "from lucent.link.numba.dispatch.cold_paths import blend_into\n"
        "from lucent.link.numba.dispatch.product_glue import dot22_new, gemm_accumulate"
    )


def _gemm_lines(dtype, a, b, out, alpha, beta):
    """Lines computing ``out = alpha * a @ b + beta * out`` with one ``?gemm`` call (``cblas.cblas_gemm_into``).

    ``out`` must pass ``blas_rows`` (a new C array always does).
    """
    return [f"cblas_gemm_into({out}, {alpha}, {a}, {b}, {beta})"]


def _operand(name, var, dtype):
    """``name`` cast to the product dtype when its own dtype differs (NumPy upcasts first)."""
    if var.type.dtype == str(dtype):
        return name
    return f"{name}.astype({dtype_text(dtype)})"


# --------------------------------------------------------------------------- #
# Dot and Dot22
# --------------------------------------------------------------------------- #
def _dot_kernel(op, node, what):
    a_var, b_var = node.inputs
    na, nb = a_var.type.ndim, b_var.type.ndim
    dtype = node.outputs[0].type.dtype
    helpers, fn = _product_helpers(dtype, na, nb)
    ka = f"a.shape[{na - 1}]"
    if what == "Dot22":
        message = f"{esc(op)}: X {{}} and Y {{}} are not aligned"
        args = ["a.shape", "b.shape"]
    else:
        message = "Dot: shapes {} and {} not aligned: {} != {}"
        args = ["a.shape", "b.shape", ka, "b.shape[0]"]
    a, b = _operand("a", a_var, dtype), _operand("b", b_var, dtype)
    cblas = _cblas(dtype) if na == 2 and nb == 2 else None
    if cblas is not None:
        # the checks, the new array and the call: one intrinsic (``product_glue``)
        lines = [f"a2 = {a}", f"b2 = {b}", f"return dot22_new(a2, b2, {message!r})"]
        kernel = make_kernel(what.lower() + "_glue", ["a", "b"], lines, [cblas])
        return mark_any_layout(kernel)
    lines = [f"if {ka} != b.shape[0]:", "    " + fail("Value", message, *args)]
    out_shape = ([] if na == 1 else ["a.shape[0]"]) + ([] if nb == 1 else ["b.shape[1]"])
    shape = "(" + ", ".join(out_shape) + ("," if len(out_shape) == 1 else "") + ")"
    lines.append(f"out = empty_output({shape}, {dtype_text(dtype)})")
    if na == 1 and nb == 1 and _is_blas(dtype):
        # vdot: a 0-d result cannot be BLAS's ``out``.
        lines.append(f"out[()] = np.dot(np.ascontiguousarray({a}), np.ascontiguousarray({b}))")
    else:
        lines.append(f"{fn}({a}, {b}, out)")
    lines.append("return out")
    return make_kernel(what.lower(), ["a", "b"], lines, helpers)


@numba_funcify.register(Dot, version=2)
def numba_funcify_Dot(op, node, **kwargs):
    """``np.dot`` of 1-d/2-d operands through BLAS (loops for ints and bool)."""
    return _dot_kernel(op, node, "Dot")


@numba_funcify.register(Dot22, version=2)
def numba_funcify_Dot22(op, node, **kwargs):
    """Matrix product (xGEMM with alpha=1, beta=0) into a new C-contiguous array."""
    return _dot_kernel(op, node, "Dot22")


# --------------------------------------------------------------------------- #
# MatMul
# --------------------------------------------------------------------------- #
@numba_funcify.register(MatMul, version=1)
def numba_funcify_MatMul(op, node, **kwargs):
    """``np.matmul`` of equal-rank operands: one BLAS product per batch position.

    A batch dimension broadcasts only when its static length is 1, as in
    ``perform``; it is then read at index 0.
    """
    a_var, b_var = node.inputs
    nd = a_var.type.ndim
    dtype = node.outputs[0].type.dtype
    helpers, fn = _product_helpers(dtype)
    lines = []
    for d in range(nd - 2):
        la, lb = f"a.shape[{d}]", f"b.shape[{d}]"
        ok = [f"{la} == {lb}"]
        if a_var.type.shape[d] == 1:
            ok.append(f"{la} == 1")
        if b_var.type.shape[d] == 1:
            ok.append(f"{lb} == 1")
        lines += [
            f"if not ({' or '.join(ok)}):",
            "    " + fail("Value", "matmul: batch shapes {} and {} are not compatible (a batch dimension can "
                         "broadcast only if its static length is 1)", f"a.shape[:{nd - 2}]", f"b.shape[:{nd - 2}]"),
        ]
    lines += [
        f"if a.shape[{nd - 1}] != b.shape[{nd - 2}]:",
        "    " + fail("Value", "matmul: shapes {} and {} do not match: {} != {}", "a.shape", "b.shape",
                     f"a.shape[{nd - 1}]", f"b.shape[{nd - 2}]"),
    ]
    batch = [f"n{d}" for d in range(nd - 2)]
    lines += [f"n{d} = b.shape[{d}] if a.shape[{d}] == 1 else a.shape[{d}]" for d in range(nd - 2)]
    out_dims = batch + [f"a.shape[{nd - 2}]", f"b.shape[{nd - 1}]"]
    lines.append(f"out = empty_output(({', '.join(out_dims)}), {dtype_text(dtype)})")
    a, b = _operand("a", a_var, dtype), _operand("b", b_var, dtype)
    if a != "a" or b != "b":
        lines += [f"ax = {a}", f"bx = {b}"]
        a, b = "ax", "bx"
    cvars = [f"c{d}" for d in range(nd - 2)]
    ia = ["0" if a_var.type.shape[d] == 1 else cvars[d] for d in range(nd - 2)]
    ib = ["0" if b_var.type.shape[d] == 1 else cvars[d] for d in range(nd - 2)]

    def sub(name, items):
        return f"{name}[{', '.join(items)}]" if items else name

    call = f"{fn}({sub(a, ia)}, {sub(b, ib)}, {sub('out', cvars)})"
    lines += loops(zip(cvars, batch), [call])
    lines.append("return out")
    return make_kernel("matmul", ["a", "b"], lines, helpers)


# --------------------------------------------------------------------------- #
# BatchedDot
# --------------------------------------------------------------------------- #
@numba_funcify.register(BatchedDot, version=1)
def numba_funcify_BatchedDot(op, node, **kwargs):
    """``out[i] = x[i] @ y[i]``: one CBLAS ``?gemm`` per batch entry for float32/64.

    Each entry's operands are passed to BLAS with their own strides (a
    transposed entry is read transposed, not copied); an entry BLAS cannot
    read is copied, as in ``Dot22``. Other dtypes use the ``np.dot`` scheme
    or, for integers, the explicit loop. Batch lengths must be equal: the
    batch dimension does not broadcast.
    """
    x_var, y_var = node.inputs
    dtype = node.outputs[0].type.dtype
    lines = [
        "if x.shape[0] != y.shape[0]:",
        "    " + fail("Value", "Inputs of BatchedDot must have the same size in axis 0 (the batch dimension, which does not "
                     "broadcast at run time), but have sizes "
                     "[{}, {}] (shapes {} and {})", "x.shape[0]", "y.shape[0]", "x.shape", "y.shape"),
        "if x.shape[2] != y.shape[1]:",
        "    " + fail("Value", "BatchedDot: x {} and y {} are not aligned: {} != {}",
                     "x.shape", "y.shape", "x.shape[2]", "y.shape[1]"),
        f"out = empty_output((x.shape[0], x.shape[1], y.shape[2]), {dtype_text(dtype)})",
    ]
    cblas = _cblas(dtype)
    if cblas is not None:
        helpers = [cblas]
        body = ["a2 = x[i]", "b2 = y[i]", "o2 = out[i]"] + _gemm_lines(dtype, "a2", "b2", "o2", "1.0", "0.0")
    else:
        helpers, fn = _product_helpers(dtype)
        body = [f"{fn}(x[i], y[i], out[i])"]
    lines += loops([("i", "x.shape[0]")], body)
    lines.append("return out")
    return make_kernel("batched_dot", ["x", "y"], lines, helpers)


# --------------------------------------------------------------------------- #
# Gemm, Gemv, Ger
# --------------------------------------------------------------------------- #
def _accumulate_messages(op, first, second):
    """The error templates of ``z = beta z + alpha a @ b``: unaligned operands, an accumulator of another shape."""
    return (
        f"{esc(op)}: {first} {{}} and {second} {{}} are not aligned",
        f"{esc(op)}: the accumulator has shape {{}} but the product has shape {{}}",
    )


def _accumulate_checks(op, first, second, product_shape):
    """Lines reading ``alpha``/``beta`` and checking the operands of ``z = beta z + alpha a @ b``."""
    not_aligned, wrong_shape = _accumulate_messages(op, first, second)
    return [
        "alpha = item_of(alpha_)",
        "beta = item_of(beta_)",
        "if a.shape[1] != b.shape[0]:",
        "    " + fail("Value", not_aligned, "a.shape", "b.shape"),
        f"if z.shape != {product_shape}:",
        "    " + fail("Value", wrong_shape, "z.shape", product_shape),
    ]


def _accumulate_kernel(op, node, name, ndim):
    """``beta * z + alpha * (a @ b)``; in place writes z (perform's order of operations)."""
    dtype = node.outputs[0].type.dtype
    helpers, fn = _product_helpers(dtype)
    first = "X" if ndim == 2 else "A"
    second = "Y" if ndim == 2 else "x"
    prod_shape = "(a.shape[0], b.shape[1])" if ndim == 2 else "(a.shape[0],)"
    lines = _accumulate_checks(op, first, second, prod_shape) + [
        f"prod = np.empty({prod_shape}, {dtype_text(dtype)})",
        f"{fn}(a, b, prod)",
    ]
    ivars = ["i", "j"][:ndim]
    idx = ", ".join(ivars)
    dims = list(zip(ivars, ["prod.shape[0]", "prod.shape[1]"][:ndim]))
    if op.inplace:
        lines += [
            "if beta == 0:",
            *["    " + ln for ln in loops(dims, [f"z[{idx}] = alpha * prod[{idx}]"])],
            "else:",
            *["    " + ln for ln in loops(dims, [f"z[{idx}] = beta * z[{idx}] + alpha * prod[{idx}]"])],
            "return z",
        ]
    else:
        lines += [
            "if beta == 0:",
            "    if alpha != 1:",
            *["        " + ln for ln in loops(dims, [f"prod[{idx}] = alpha * prod[{idx}]"])],
            "else:",
            *["    " + ln for ln in loops(dims, [f"prod[{idx}] = alpha * prod[{idx}] + beta * z[{idx}]"])],
            "return prod",
        ]
    return make_kernel(name, ["z", "alpha_", "a", "b", "beta_"], lines, helpers)


def _accumulate_tail(op, ndim):
    """The end of a BLAS-calling ``Gemm``/``Gemv`` kernel: when BLAS did not accumulate
    (``not direct``), ``out`` holds the product and perform's accumulation follows."""
    target = "z" if op.inplace else "out"
    return [
        "if not direct:",
        # a seldom-taken loop, compiled small (``cold_paths``)
        f"    blend_into({target}, z, out, alpha, beta)",
        "    return z" if op.inplace else "    return out",
        "return out",
    ]


def _gemm_kernel(op, node, cblas):
    """``Gemm`` with BLAS doing the scaling and accumulation (see ``_accumulate_kernel``).

    BLAS writes ``C = alpha * A @ B + beta * C`` straight into the result:
    the accumulator itself for ``Gemm{inplace}`` (when BLAS can write it,
    i.e. row-major steps, and it shares no memory with the operands:
    ``product_glue.gemm_accumulate``), or a copy of it. Otherwise, and when
    ``alpha == 0`` (BLAS would skip the product and so lose NaN/inf of the
    operands), the product goes to a new array and is accumulated by a
    loop, as ``perform`` does. There is one BLAS call site per kernel: the
    kernel's compile time grows with each.
    """
    dtype = node.outputs[0].type.dtype
    dt = dtype_text(dtype)
    a, b = _operand("a", node.inputs[2], dtype), _operand("b", node.inputs[3], dtype)
    if op.inplace:
        # checks, the choice of where BLAS writes, the call and the fallback blend: one
        # intrinsic (``product_glue``), glue for LLVM's light passes (``kernel_library``)
        not_aligned, wrong_shape = _accumulate_messages(op, "X", "Y")
        call = f"gemm_accumulate(z, alpha_, a2, b2, beta_, {not_aligned!r}, {wrong_shape!r})"
        lines = [f"a2 = {a}", f"b2 = {b}", f"return {call}"]
        return mark_any_layout(make_kernel("gemm_glue", ["z", "alpha_", "a", "b", "beta_"], lines, [cblas]))
    lines = _accumulate_checks(op, "X", "Y", "(a.shape[0], b.shape[1])") + [
        f"a2 = {a}",
        f"b2 = {b}",
        "direct = alpha != 0",
        f"out = empty_output(z.shape, {dt})",
        "ga, gb = 1.0, 0.0",
        "if direct:",
        "    ga, gb = alpha, beta",
        "    if beta != 0:",
        *["        " + ln for ln in loops([("i", "z.shape[0]"), ("j", "z.shape[1]")], ["out[i, j] = z[i, j]"])],
    ]
    lines += _gemm_lines(dtype, "a2", "b2", "out", "ga", "gb")
    lines += _accumulate_tail(op, 2)
    # it copies the accumulator in a loop worth vectorising: not glue
    return mark_any_layout(make_kernel("gemm", ["z", "alpha_", "a", "b", "beta_"], lines, [cblas]))


@numba_funcify.register(Gemm, version=3)
def numba_funcify_Gemm(op, node, **kwargs):
    """``beta * Z + alpha * dot(X, Y)``; ``Gemm{inplace}`` overwrites Z."""
    cblas = _cblas(node.outputs[0].type.dtype)
    if cblas is not None:
        return _gemm_kernel(op, node, cblas)
    return _accumulate_kernel(op, node, "gemm", 2)


def _gemv_kernel(op, node, cblas, into=False):
    """``Gemv`` as one ``?gemv`` call (see ``_gemm_kernel``, whose scheme this follows).

    BLAS computes ``y = alpha * A @ x + beta * y`` into the accumulator
    itself (``Gemv{inplace}``, when it has a positive step and shares no
    memory with ``A`` or ``x``) or into a new vector holding a copy of it.
    A transposed ``A`` is read with ``Trans``. ``alpha == 0`` and an empty
    inner dimension (where BLAS would skip the product, or return without
    scaling ``y``) go through the product-then-accumulate loop of
    ``perform``. A small matrix (up to ``SMALL_GEMV`` elements) is
    multiplied by ``rows_gemv`` (stored by rows) or ``cols_gemv`` (by
    columns, ``blas_loops.py``) instead of BLAS, reading the accumulator where it is: a loop
    step's product is dominated by the cost of the BLAS call, not by its
    arithmetic.
    """
    dtype = node.outputs[0].type.dtype
    dt = dtype_text(dtype)
    item = np.dtype(dtype).itemsize
    a, x = _operand("a", node.inputs[2], dtype), _operand("b", node.inputs[3], dtype)
    lines = _accumulate_checks(op, "A", "x", "(a.shape[0],)")
    # a cast operand gets a name of its own; otherwise the argument is used as it is
    a2, x2 = ("a2", "x2") if (a, x) != ("a", "b") else ("a", "b")
    if a2 == "a2":
        lines += [f"a2 = {a}", f"x2 = {x}"]
    lines += [f"_m = {a2}.shape[0]", f"_k = {a2}.shape[1]"]
    lines += [f"_A, _A_t, _A_ld, _x, _x_inc = gemv_operands({a2}, {x2})"]
    usable = "alpha != 0 and _k > 0"
    if op.inplace:
        # byte ranges: a vector BLAS reads or writes has a positive step (or one element)
        lines += [
            f"_zf = z.shape[0] <= 1 or (z.strides[0] > 0 and z.strides[0] % {item} == 0)",
            f"_zx = z.strides[0] // {item} if z.shape[0] > 1 else 1",
        ]
        lines += [
            f"direct = {usable} and _zf and not overlaps(z, _A) and not overlaps(z, _x)",
            "if direct:",
            "    out = z",
            "    out_inc = _zx",
            "    ga, gb = alpha, beta",
            "else:",
            f"    out = empty_output(z.shape, {dt})",
            "    out_inc = 1",
            "    ga, gb = 1.0, 0.0",
        ]
    else:
        if into:
            # the caller's buffer (a loop's state row), sharing no memory with the operands
            lines += [
                "if dest.shape != z.shape:",
                "    raise ValueError('Gemv: the destination given for the result has the wrong shape')",
            ]
        lines += [
            f"direct = {usable}",
            "out = dest" if into else f"out = empty_output(z.shape, {dt})",
            "out_inc = 1",
            "ga, gb = 1.0, 0.0",
            f"if direct and not _m * _k <= {SMALL_GEMV}:",
            "    ga, gb = alpha, beta",
            "    if beta != 0:",
            *["        " + ln for ln in loops([("i", "z.shape[0]")], ["out[i] = z[i]"])],
        ]
    lines += [
        "if _m > 0:",
        "    if _k == 0:",
        *["        " + ln for ln in loops([("i", "_m")], [f"out[i] = {dt}(0)"])],
        f"    elif direct and _A_t == {NO_TRANS} and _m * _k <= {SMALL_GEMV}:",
        "        rows_gemv(padded_c_view(_A, _m, _A_ld), _k, _x, z, out, alpha, beta)",
        f"    elif direct and _m * _k <= {SMALL_GEMV}:",
        "        cols_gemv(padded_c_view(_A, _k, _A_ld), _m, _x, z, out, alpha, beta)",
        f"    elif _A_t == {NO_TRANS}:",
        "        cblas_gemv(_A_t, _m, _k, ga, _A, _A_ld, _x, _x_inc, gb, out, out_inc)",
        "    else:",
        # a transposed C array: the k x m matrix it stores, read with Trans
        "        cblas_gemv(_A_t, _k, _m, ga, _A, _A_ld, _x, _x_inc, gb, out, out_inc)",
    ]
    lines += _accumulate_tail(op, 1)
    params = ["z", "alpha_", "a", "b", "beta_"] + (["dest"] if into else [])
    loops_import = (
        f"# gemv loops {LOOPS_HASH}\nfrom lucent.link.numba.dispatch.blas_loops import rows_gemv, cols_gemv\n"
        "from lucent.link.numba.dispatch.borrowed import padded_c_view"
    )
    # the matrix goes to BLAS (or to a padded C view) by pointer and strides: a C
    # and a strided matrix (a loop's gradient reads W and W.T) share one compile
    return mark_any_layout(make_kernel("gemv", params, lines, [cblas, loops_import]), positions=(2,))


@numba_funcify.register(Gemv, version=5)
def numba_funcify_Gemv(op, node, into=None, **kwargs):
    """``beta * y + alpha * dot(A, x)``; ``Gemv{inplace}`` overwrites y.

    ``into=0``: the result is written into a buffer passed as an extra last
    argument (see ``numba_funcify_Elemwise``); only for ``Gemv{no_inplace}``
    with CBLAS.
    """
    cblas = _cblas(node.outputs[0].type.dtype, "gemv")
    if into is not None:
        if op.inplace or cblas is None:
            raise ValueError(f"{op} cannot write its result into a destination")
        return _gemv_kernel(op, node, cblas, into=True)
    if cblas is not None:
        return _gemv_kernel(op, node, cblas)
    return _accumulate_kernel(op, node, "gemv", 1)


@numba_funcify.register(Ger, version=1)
def numba_funcify_Ger(op, node, **kwargs):
    """``A + alpha * outer(x, y)`` in one loop; ``Ger{destructive}`` overwrites A."""
    lines = [
        "alpha = item_of(alpha_)",
        "if A.shape[0] != x.shape[0] or A.shape[1] != y.shape[0]:",
        "    " + fail("Value", f"{esc(op)}: A has shape {{}} but outer(x, y) has shape {{}}",
                     "A.shape", "(x.shape[0], y.shape[0])"),
        "out = A" if op.destructive else f"out = empty_output(A.shape, {dtype_text(node.outputs[0].type.dtype)})",
        "for i in range(A.shape[0]):",
        "    ax = alpha * x[i]",
        "    for j in range(A.shape[1]):",
        "        out[i, j] = A[i, j] + ax * y[j]",
        "return out",
    ]
    return make_kernel("ger", ["A", "alpha_", "x", "y"], lines)


__all__ = [
    "numba_funcify_BatchedDot",
    "numba_funcify_Dot",
    "numba_funcify_Dot22",
    "numba_funcify_Gemm",
    "numba_funcify_Gemv",
    "numba_funcify_Ger",
    "numba_funcify_MatMul",
]
