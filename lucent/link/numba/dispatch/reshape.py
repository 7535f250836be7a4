"""Numba kernels of ``JoinDims`` and ``SplitDims``.

Canonicalize turns both into ``Reshape``, so these run only in graphs
compiled without that rewrite; they reshape like ``perform`` (a view when
the input is contiguous, else a copy, as NumPy's reshape).
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.shape import make_kernel
from lucent.tensor.reshape import JoinDims, SplitDims

RESHAPE_VERSION = 1


def _shape_text(items):
    return "(" + "".join(f"{i}, " for i in items) + ")"


@numba_funcify.register(JoinDims, version=RESHAPE_VERSION)
def numba_funcify_JoinDims(op, node, **kwargs):
    nd = node.inputs[0].type.ndim
    start, stop = op.start_axis, op.start_axis + op.n_axes
    joined = " * ".join([f"x.shape[{d}]" for d in range(start, stop)]) or "1"
    items = [f"x.shape[{d}]" for d in range(start)] + [joined] + [f"x.shape[{d}]" for d in range(stop, nd)]
    body = [f"return np.ascontiguousarray(x).reshape({_shape_text(items)})"]
    return make_kernel("join_dims", ["x"], body)


@numba_funcify.register(SplitDims, version=RESHAPE_VERSION)
def numba_funcify_SplitDims(op, node, **kwargs):
    nd = node.inputs[0].type.ndim
    k = node.inputs[1].type.shape[0]
    ax = op.axis
    new = [f"np.int64(shape[{i}])" for i in range(k)]
    items = [f"x.shape[{d}]" for d in range(ax)] + new + [f"x.shape[{d}]" for d in range(ax + 1, nd)]
    prod = " * ".join(new) or "1"
    body = [
        f"if {prod} != x.shape[{ax}]:",
        f"    raise ValueError('SplitDims: cannot split dimension {ax}: the new lengths do not multiply to its length')",
        f"return np.ascontiguousarray(x).reshape({_shape_text(items)})",
    ]
    return make_kernel("split_dims", ["x", "shape"], body)


__all__ = ["numba_funcify_JoinDims", "numba_funcify_SplitDims"]
