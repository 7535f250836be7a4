"""Numba kernels for ``Softmax`` and ``LogSoftmax`` (stable, along any axis).

Each is computed one *row* (the 1-d slice along ``axis``) at a time, in
separate simple passes so that every pass is a loop LLVM vectorises:
the maximum, ``exp(x - max)`` written into the output (with the vectorised
``vexp``), the sum of those (four interleaved accumulators, in float64),
then the normalisation. As in ``perform``, a non-finite maximum is
replaced by 0 before subtracting, so rows holding inf/NaN give the same
values. Axes covering the whole array make it one row; several (not
all) axes are moved last and flattened first. With more than one kernel
thread (``config.numba__num_threads``), a large input's rows are shared
among the threads.

The lucent ops have no separate gradient ops (their gradients are built
from element-wise ops and sums), so nothing else is needed here.
"""

from __future__ import annotations

import math


from lucent.link.numba.dispatch.basic import kernel_from_source, numba_funcify
from lucent.link.numba.dispatch.elemwise import KERNEL_OPTIONS, _indent
from lucent.link.numba.dispatch.scalar import VECMATH_IMPORT
from lucent.link.numba.dispatch.threads import PARALLEL_MIN, chunk_bounds, kernel_threads, parallel_decorator
from lucent.tensor.special import LogSoftmax, Softmax
from numba import njit

SPECIAL_VERSION = 3


@njit(error_model="numpy", fastmath={"contract"})
def row_max(row):
    """Largest element (NaN wins), replaced by 0 when not finite (as ``perform``)."""
    n = row.shape[0]
    m0 = -math.inf
    m1 = -math.inf
    m2 = -math.inf
    m3 = -math.inf
    nn = n - n % 4
    for j in range(0, nn, 4):
        a = float(row[j])
        b = float(row[j + 1])
        c = float(row[j + 2])
        d = float(row[j + 3])
        m0 = m0 if (m0 >= a) | (m0 != m0) else a
        m1 = m1 if (m1 >= b) | (m1 != m1) else b
        m2 = m2 if (m2 >= c) | (m2 != m2) else c
        m3 = m3 if (m3 >= d) | (m3 != m3) else d
    for j in range(nn, n):
        a = float(row[j])
        m0 = m0 if (m0 >= a) | (m0 != m0) else a
    m = m0
    for v in (m1, m2, m3):
        m = m if (m >= v) | (m != m) else v
    return m if (m - m) == 0.0 else 0.0


@njit(error_model="numpy", fastmath={"contract"})
def row_sum(row):
    """Sum in float64 with four interleaved accumulators."""
    n = row.shape[0]
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    nn = n - n % 4
    for j in range(0, nn, 4):
        s0 += row[j]
        s1 += row[j + 1]
        s2 += row[j + 2]
        s3 += row[j + 3]
    for j in range(nn, n):
        s0 += row[j]
    return (s0 + s1) + (s2 + s3)


def _source(kind, nd, axes, out_dtype, threads=1):
    """Kernel text: loop over all rows along ``axes`` (a sorted tuple, or None for all axes)."""
    if axes is not None and len(axes) == 1:
        axis = axes[0]
    elif axes is None or len(axes) == nd:
        axis = None
    else:
        return _multi_axis_source(kind, nd, axes, out_dtype)
    lines = [f"out = empty_output(x.shape, np.{out_dtype})"]
    if axis is None or nd <= 1:
        # ``out`` is C-contiguous, so the reshape below is a view either way.
        lines += ["xr = np.ravel(x)", "orow = np.ravel(out)"]
        lines += _row_lines(kind, out_dtype)
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
    body = [f"xr = xt[{idx}:]", f"orow = ot[{idx}:]"] + _row_lines(kind, out_dtype)
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


def _multi_axis_source(kind, nd, axes, out_dtype):
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
        *_indent(["xr = x2[r]", "orow = o2[r]"] + _row_lines(kind, out_dtype), 1),
        f"return np.ascontiguousarray(np.transpose(o2.reshape(xt.shape), {tup(inverse)}))",
    ]
    return "def softmax_kernel(x):\n" + "\n".join(_indent(lines, 1)) + "\n"


def _row_lines(kind, out_dtype):
    n = "xr.shape[0]"
    lines = ["m = row_max(xr)"]
    if kind == "softmax":
        lines += [f"for j in range({n}):", f"    orow[j] = np.{out_dtype}(vexp(np.float64(xr[j]) - m))"]
        lines += ["s = row_sum(orow)", f"for j in range({n}):", f"    orow[j] = np.{out_dtype}(orow[j] / s)"]
    else:
        lines += [f"for j in range({n}):", f"    orow[j] = np.{out_dtype}(vexp(np.float64(xr[j]) - m))"]
        lines += ["ls = vlog(row_sum(orow))", f"for j in range({n}):"]
        lines += [f"    orow[j] = np.{out_dtype}(np.{out_dtype}(np.float64(xr[j]) - m) - ls)"]
    return lines


def _funcify(kind, op, node):
    x = node.inputs[0]
    out_dtype = node.outputs[0].type.dtype
    source = _source(kind, x.type.ndim, op.axis, out_dtype, kernel_threads())
    imports = "import numba\n" + VECMATH_IMPORT + (
        f"\n# special v{SPECIAL_VERSION}\nfrom lucent.link.numba.dispatch.special import row_max, row_sum"
    )
    return kernel_from_source(source, "softmax_kernel", imports, error_model="numpy")


@numba_funcify.register(Softmax, version=SPECIAL_VERSION)
def numba_funcify_Softmax(op, node, **kwargs):
    return _funcify("softmax", op, node)


@numba_funcify.register(LogSoftmax, version=SPECIAL_VERSION)
def numba_funcify_LogSoftmax(op, node, **kwargs):
    return _funcify("log_softmax", op, node)


__all__ = ["numba_funcify_Softmax", "numba_funcify_LogSoftmax", "row_max", "row_sum"]
