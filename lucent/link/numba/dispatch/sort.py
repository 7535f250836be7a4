"""Numba kernels of ``SortOp`` and ``ArgSortOp``.

Each row along the axis is sorted on its own (see ``to_rows``). The axis
is an input of the node: a constant axis gives a kernel for that axis only;
a symbolic one gives one branch per possible axis, chosen at run time.
Rows of real numbers and bools are sorted by radix sort
(:mod:`lucent.link.numba.dispatch.radix_sort`), which is stable and several
times faster than Numba's comparison sorts on long rows. Short rows keep
Numba's own sorts, which are quicker there: ``np.sort`` for the unstable
kinds and a merge sort for ``argsort``. Both give a valid answer for every
``kind`` (equal entries keep their order in ``argsort``), and the stable
kinds of ``sort`` always take the radix path, which keeps the input order
of ``-0.0`` and ``0.0`` as NumPy's stable sort does.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.extra_ops import from_rows, to_rows
from lucent.link.numba.dispatch.radix_sort import RADIX_VERSION, radix_dtype_supported
from lucent.link.numba.dispatch.shape import INT, dtype_text, fail, make_kernel
from lucent.tensor.sort import ArgSortOp, SortOp, constant_axis


#: Rows at least this long use the radix sort for ``sort`` / ``argsort``
#: (measured crossovers with Numba's quicksort and merge sort).
SORT_RADIX_FROM = 1500
ARGSORT_RADIX_FROM = 500


def _sort_kernel(name, node, body_for_row, out_dtype, prologue=(), helpers=()):
    ndim = node.inputs[0].type.ndim
    fixed = constant_axis(node)
    axes = [fixed] if fixed is not None else list(range(ndim))
    dt = dtype_text(out_dtype)
    lines = [f"ax = {INT('axis_')}"]
    if fixed is None:
        lines += [
            f"if ax < -{ndim} or ax >= {ndim}:",
            "    " + fail("Value", f"{name}: axis {{}} is out of bounds for a tensor of dimension {ndim}", "ax"),
            f"if ax < 0:",
            f"    ax += {ndim}",
        ]
    for k, axis in enumerate(axes):
        branch = []
        branch += to_rows("x", ndim, axis, "r")
        branch += [f"out = empty_output((r_m, r_n), {dt})", *prologue, "for i in range(r_m):"]
        branch += ["    " + line for line in body_for_row]
        branch.append(f"return {from_rows('out', 'x', ndim, axis, 'r_n')}")
        if fixed is None:
            lines.append(f"{'if' if k == 0 else 'elif'} ax == {axis}:")
            lines += ["    " + line for line in branch]
        else:
            lines += branch
    if fixed is None:
        lines.append(f"return np.empty({tuple([0] * ndim)}, {dt})")
    return make_kernel(name, ["x", "axis_"], lines, helpers=helpers)


#: The import line of the shared radix sort (its version is part of each kernel's text).
RADIX_IMPORT = (f"# radix sort v{RADIX_VERSION}\n"
                "from lucent.link.numba.dispatch.radix_sort import radix_argsort_row, radix_sort_row")


def _scratch(with_positions):
    """Lines allocating the radix sort's scratch rows (once per call, reused by every row)."""
    lines = ["a_ = empty_output(r_n, np.uint64)", "t_ = empty_output(r_n, np.uint64)"]
    return lines + (["q_ = empty_output(r_n, np.int64)"] if with_positions else [])


@numba_funcify.register(SortOp, version=2 + RADIX_VERSION)
def numba_funcify_SortOp(op, node, **kwargs):
    """Every row sorted in ascending order (NaNs last, as NumPy)."""
    dtype = node.inputs[0].type.dtype
    if not radix_dtype_supported(dtype):
        return _sort_kernel("sort", node, ["out[i, :] = np.sort(r[i, :])"], dtype)
    radix = "radix_sort_row(r[i, :], out[i, :], a_, t_)"
    if op.kind in ("stable", "mergesort"):
        body = [radix]
    else:
        body = [f"if r_n < {SORT_RADIX_FROM}:", "    out[i, :] = np.sort(r[i, :])", "else:", "    " + radix]
    return _sort_kernel("sort", node, body, dtype, _scratch(False), [RADIX_IMPORT])


@numba_funcify.register(ArgSortOp, version=2 + RADIX_VERSION)
def numba_funcify_ArgSortOp(op, node, **kwargs):
    """The stable sorting permutation of every row, as int64."""
    dtype = node.inputs[0].type.dtype
    merge = "out[i, :] = np.argsort(r[i, :], kind='mergesort')"
    if not radix_dtype_supported(dtype):
        return _sort_kernel("argsort", node, [merge], "int64")
    body = [f"if r_n < {ARGSORT_RADIX_FROM}:", "    " + merge, "else:",
            "    radix_argsort_row(r[i, :], out[i, :], a_, t_, q_)"]
    return _sort_kernel("argsort", node, body, "int64", _scratch(True), [RADIX_IMPORT])


__all__ = ["numba_funcify_ArgSortOp", "numba_funcify_SortOp"]
