"""Numba kernels of ``SortOp`` and ``ArgSortOp``.

Each row along the axis is sorted on its own (see ``to_rows``). The axis
is an input of the node: a constant axis gives a kernel for that axis only;
a symbolic one gives one branch per possible axis, chosen at run time.
``argsort`` always uses a stable merge sort: equal entries keep their
order, which is a valid answer for every ``kind`` and the only one for
``"stable"`` / ``"mergesort"``.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.extra_ops import from_rows, to_rows
from lucent.link.numba.dispatch.shape import INT, dtype_text, fail, make_kernel
from lucent.tensor.sort import ArgSortOp, SortOp, constant_axis


def _sort_kernel(name, node, body_for_row, out_dtype):
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
        branch += [f"out = np.empty((r_m, r_n), {dt})", "for i in range(r_m):"]
        branch += ["    " + line for line in body_for_row]
        branch.append(f"return {from_rows('out', 'x', ndim, axis, 'r_n')}")
        if fixed is None:
            lines.append(f"{'if' if k == 0 else 'elif'} ax == {axis}:")
            lines += ["    " + line for line in branch]
        else:
            lines += branch
    if fixed is None:
        lines.append(f"return np.empty({tuple([0] * ndim)}, {dt})")
    return make_kernel(name, ["x", "axis_"], lines)


@numba_funcify.register(SortOp, version=1)
def numba_funcify_SortOp(op, node, **kwargs):
    """Every row sorted in ascending order (NaNs last, as NumPy)."""
    body = ["out[i, :] = np.sort(r[i, :])"]
    return _sort_kernel("sort", node, body, node.outputs[0].type.dtype)


@numba_funcify.register(ArgSortOp, version=1)
def numba_funcify_ArgSortOp(op, node, **kwargs):
    """The stable sorting permutation of every row, as int64."""
    body = ["out[i, :] = np.argsort(r[i, :], kind='mergesort')"]
    return _sort_kernel("argsort", node, body, "int64")


__all__ = ["numba_funcify_ArgSortOp", "numba_funcify_SortOp"]
