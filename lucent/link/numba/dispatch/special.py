"""Numba kernels for ``Softmax`` and ``LogSoftmax`` (stable, along any axis).

Each is computed one *row* (the 1-d slice along ``axis``) at a time, in
separate simple passes so that every pass is a loop LLVM vectorises:
the maximum, ``exp(x - max)`` written into the output (with the vectorised
``vexp``), the sum of those (four interleaved accumulators, in float64,
``lane_fold``),
then the normalisation. As in ``perform``, a non-finite maximum is
replaced by 0 before subtracting, so rows holding inf/NaN give the same
values. Axes covering the whole array make it one row; several (not
all) axes are moved last and flattened first. With more than one kernel
thread (``config.numba__num_threads``), a large input's rows are shared
among the threads. A single thread's rows along the last axis (the usual
case, a classifier's output) are one ``softmax_loop`` call, whose passes
are emitted as IR (:mod:`.softmax_loop`).

The lucent ops have no separate gradient ops (their gradients are built
from element-wise ops and sums), so nothing else is needed here.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

from lucent.link.numba.dispatch.basic import kernel_from_source, numba_funcify
from lucent.link.numba.dispatch.elemwise import KERNEL_OPTIONS, _indent
from lucent.link.numba.dispatch.scalar import VECMATH_IMPORT
from lucent.link.numba.dispatch.softmax_loop import SOFTMAX_LOOP_VERSION
from lucent.link.numba.dispatch.threads import PARALLEL_MIN, chunk_bounds, kernel_threads, parallel_decorator
from lucent.tensor.special import LogSoftmax, Softmax

SPECIAL_VERSION = 6


@intrinsic
def last_axis_row(typingctx, x, index):
    """``x[index + (:,)]``: the 1-d view along the last axis at the leading ``index`` (in range).

    What ``x[k0, :]`` gives, typed C when ``x`` is, without Numba's slicing:
    typing and lowering a slice of each of two arrays was a fifth of
    compiling the kernel. The view keeps ``x``'s memory alive, as any view.
    """
    if not (isinstance(x, types.Array) and isinstance(index, types.BaseTuple)):
        return None
    if x.ndim != len(index) + 1 or not all(isinstance(k, types.Integer) for k in index):
        return None
    result = x.copy(ndim=1, layout="C" if x.layout == "C" else "A")

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        out = context.make_array(sig.return_type)(context, builder)
        intp = context.get_value_type(types.intp)
        shapes = cgutils.unpack_tuple(builder, src.shape, x.ndim)
        strides = cgutils.unpack_tuple(builder, src.strides, x.ndim)
        offset = ir.Constant(intp, 0)
        for k, k_type, stride in zip(cgutils.unpack_tuple(builder, args[1], len(index)), index, strides):
            offset = builder.add(offset, builder.mul(context.cast(builder, k, k_type, types.intp), stride))
        data = builder.gep(builder.bitcast(src.data, ir.IntType(8).as_pointer()), [offset])
        context.populate_array(
            out,
            data=builder.bitcast(data, src.data.type),
            shape=cgutils.pack_array(builder, [shapes[-1]], ty=intp),
            strides=cgutils.pack_array(builder, [strides[-1]], ty=intp),
            itemsize=src.itemsize,
            meminfo=src.meminfo,
            parent=src.parent,
        )
        return impl_ret_borrowed(context, builder, sig.return_type, out._getvalue())

    return result(x, index), codegen


def _row_max_lines(row, result):
    """Lines setting ``result`` to the largest element of ``row`` (NaN wins), 0 when not finite (as ``perform``).

    Four interleaved maxima in float64 (``lane_fold``), emitted as IR in the
    kernel rather than called as a jitted helper (a Numba compile of its own).
    """
    return [f"mx_m = fold_lanes({row}, 0, {row}.shape[0], 'max', 'float64')", f"{result} = mx_m if (mx_m - mx_m) == 0.0 else 0.0"]


def _row_sum_lines(row, result):
    """Lines setting ``result`` to the float64 sum of ``row``, with four interleaved accumulators."""
    return [f"{result} = fold_lanes({row}, 0, {row}.shape[0], 'add', 'float64')"]


def _source(kind, nd, axes, out_dtype, in_dtype, threads=1):
    """Kernel text: loop over all rows along ``axes`` (a sorted tuple, or None for all axes)."""
    if axes is not None and len(axes) == 1:
        axis = axes[0]
    elif axes is None or len(axes) == nd:
        axis = None
    else:
        return _multi_axis_source(kind, nd, axes, out_dtype, in_dtype)
    if _emits_ir(nd, axis, out_dtype, threads):
        return f"def softmax_kernel(x):\n    return softmax_loop(x, {kind!r}, {out_dtype!r})\n"
    lines = [f"out = empty_output(x.shape, np.{out_dtype})"]
    if axis is None or nd <= 1:
        # ``out`` is C-contiguous, so the reshape below is a view either way.
        lines += ["xr = np.ravel(x)", "orow = np.ravel(out)"]
        lines += _row_lines(kind, out_dtype, in_dtype)
        lines += ["return orow.reshape(x.shape)"]
        return "def softmax_kernel(x):\n" + "\n".join(_indent(lines, 1)) + "\n"
    perm = [d for d in range(nd) if d != axis] + [axis]
    ptxt = "".join(f"{d}, " for d in perm)
    if axis == nd - 1:
        # No transpose: rows of a C-contiguous array stay typed contiguous.
        lines += ["xt = x", "ot = out"]
    else:
        lines += [f"xt = np.transpose(x, ({ptxt}))", f"ot = np.transpose(out, ({ptxt}))"]
    loops = [("    " * k) + f"for k{k} in range(xt.shape[{k}]):" for k in range(nd - 1)]
    idx = "".join(f"k{k}, " for k in range(nd - 1))
    body = [f"xr = last_axis_row(xt, ({idx}))", f"orow = last_axis_row(ot, ({idx}))"] + _row_lines(kind, out_dtype, in_dtype)
    serial = loops + _indent(body, nd - 1)
    parallel = ""
    if threads > 1:
        # The rows are independent: the first batch dimension is cut into one
        # chunk per thread (see .threads); small inputs stay on one thread.
        chunk = ["for c in numba.prange(%d):" % threads] + _indent(
            chunk_bounds("c", threads, "xt.shape[0]")
            + ["for k0 in range(lo, hi):"]
            + _indent(loops[1:] and [line[4:] for line in loops[1:]], 1)
            + _indent(body, nd - 1),
            1,
        )
        parallel = (
            parallel_decorator(**KERNEL_OPTIONS)
            + "\ndef softmax_rows_parallel(xt, ot):\n" + "\n".join(_indent(chunk, 1)) + "\n\n\n"
        )
        serial = [f"if x.size >= {PARALLEL_MIN} and xt.shape[0] > 1:", "    softmax_rows_parallel(xt, ot)", "else:"] + _indent(serial, 1)
    lines += serial
    lines.append("return out")
    return parallel + "def softmax_kernel(x):\n" + "\n".join(_indent(lines, 1)) + "\n"


def _emits_ir(nd, axis, out_dtype, threads):
    """Whether the kernel is one ``softmax_loop`` call: rows along the last axis, one thread."""
    last = axis == nd - 1 or (axis is None and nd == 1)
    return threads <= 1 and nd >= 1 and last and out_dtype in ("float64", "float32")


def _multi_axis_source(kind, nd, axes, out_dtype, in_dtype):
    """Several (not all) axes: their elements moved last and flattened, one row per batch entry."""
    rest = [d for d in range(nd) if d not in axes]
    perm = rest + list(axes)
    inverse = [perm.index(d) for d in range(nd)]
    tup = lambda ds: "(" + "".join(f"{d}, " for d in ds) + ")"  # noqa: E731
    lines = [
        f"xt = np.ascontiguousarray(np.transpose(x, {tup(perm)}))",
        "rows = 1",
        *[f"rows *= xt.shape[{k}]" for k in range(len(rest))],
        "n = 1",
        *[f"n *= xt.shape[{k}]" for k in range(len(rest), nd)],
        "x2 = xt.reshape((rows, n))",
        f"o2 = empty_output((rows, n), np.{out_dtype})",
        "for r in range(rows):",
        *_indent(["xr = x2[r]", "orow = o2[r]"] + _row_lines(kind, out_dtype, in_dtype), 1),
        f"return np.ascontiguousarray(np.transpose(o2.reshape(xt.shape), {tup(inverse)}))",
    ]
    return "def softmax_kernel(x):\n" + "\n".join(_indent(lines, 1)) + "\n"


def _row_lines(kind, out_dtype, in_dtype):
    """The passes over one row ``xr`` writing ``orow``.

    Values are computed in float64 and stored in ``out_dtype``; the casts are
    left out where both dtypes are float64 (they change nothing there, and
    each is a call Numba types and lowers).
    """
    n = "xr.shape[0]"

    def as_out(text):
        return text if out_dtype == "float64" else f"np.{out_dtype}({text})"

    element = "xr[{}]" if in_dtype == "float64" else "np.float64(xr[{}])"
    lines = _row_max_lines("xr", "m")
    lines += [f"for j in range({n}):", f"    orow[j] = {as_out('vexp(' + element.format('j') + ' - m)')}"]
    lines += _row_sum_lines("orow", "s")
    if kind == "softmax":
        lines += [f"for i in range({n}):", f"    orow[i] = {as_out('orow[i] / s')}"]
    else:
        lines += ["ls = vlog(s)", f"for i in range({n}):"]
        lines += [f"    orow[i] = {as_out(as_out(element.format('i') + ' - m') + ' - ls')}"]
    return lines


def _funcify(kind, op, node):
    x = node.inputs[0]
    out_dtype = node.outputs[0].type.dtype
    source = _source(kind, x.type.ndim, op.axis, out_dtype, x.type.dtype, kernel_threads())
    imports = (
        "import numba\n" + VECMATH_IMPORT + f"\n# special v{SPECIAL_VERSION}\n"
        "from lucent.link.numba.dispatch.special import last_axis_row\n"
        "from lucent.link.numba.dispatch.lane_fold import fold_lanes\n"
        f"# softmax loop v{SOFTMAX_LOOP_VERSION}\n"
        "from lucent.link.numba.dispatch.softmax_loop import softmax_loop\n"
    )
    return kernel_from_source(source, "softmax_kernel", imports, error_model="numpy")


@numba_funcify.register(Softmax, version=SPECIAL_VERSION)
def numba_funcify_Softmax(op, node, **kwargs):
    return _funcify("softmax", op, node)


@numba_funcify.register(LogSoftmax, version=SPECIAL_VERSION)
def numba_funcify_LogSoftmax(op, node, **kwargs):
    return _funcify("log_softmax", op, node)


__all__ = ["numba_funcify_Softmax", "numba_funcify_LogSoftmax"]
