"""Tridiagonal systems: LU factorisation (LAPACK ``?gttrf``) and solve from it (``?gttrs``).

A tridiagonal matrix is given by its three diagonals ``dl`` (below, length
``n-1``), ``d`` (length ``n``) and ``du`` (above, ``n-1``). The
factorisation with partial pivoting returns LAPACK's compact form: the
multipliers ``dl``, the diagonal of ``U`` ``d``, its two upper diagonals
``du`` and ``du2`` (``n-2``), and the pivots ``ipiv`` (1-based, as LAPACK
and SciPy's wrapper give them). Solving from the factors costs ``O(n)`` per
right-hand side instead of the ``O(n^3)`` of a dense solve, which is why
``solve(..., assume_a='tridiagonal')`` graphs can be rewritten to these
ops. The Numba kernels (``linalg_tridiagonal.py``) call the same LAPACK
routines. Neither op has a gradient (PyTensor defines none): gradients are
taken through the dense ``Solve`` before rewriting.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import linalg_output_dtype
from lucent.tensor.type import TensorType


def _first_known(*candidates):
    for c in candidates:
        if c is not None:
            return c
    return None


class LUFactorTridiagonal(BatchedCoreOp):
    """``?gttrf`` of the diagonals ``(dl, d, du)``: outputs ``dl, d, du, du2, ipiv``."""

    __props__ = ("overwrite_dl", "overwrite_d", "overwrite_du")
    gufunc_signature = "(dl),(d),(dl)->(dl),(d),(dl),(du2),(d)"

    def __init__(self, overwrite_dl=False, overwrite_d=False, overwrite_du=False):
        self.overwrite_dl = bool(overwrite_dl)
        self.overwrite_d = bool(overwrite_d)
        self.overwrite_du = bool(overwrite_du)
        flags = (self.overwrite_dl, self.overwrite_d, self.overwrite_du)
        self.destroy_map = {i: [i] for i, flag in enumerate(flags) if flag}

    def inplace_on_inputs(self, allowed_inplace_inputs):
        return type(self)(
            overwrite_dl=0 in allowed_inplace_inputs,
            overwrite_d=1 in allowed_inplace_inputs,
            overwrite_du=2 in allowed_inplace_inputs,
        )

    def make_node(self, dl, d, du):
        dl, d, du = (as_tensor_variable(v) for v in (dl, d, du))
        if not all(v.type.ndim == 1 for v in (dl, d, du)):
            raise ValueError(
                "LUFactorTridiagonal: the diagonals dl, d, du must be vectors, got "
                f"{dl.type.ndim}-d, {d.type.ndim}-d and {du.type.ndim}-d inputs"
            )
        ndl, nd, ndu = dl.type.shape[0], d.type.shape[0], du.type.shape[0]
        n = _first_known(None if ndl is None else ndl + 1, nd, None if ndu is None else ndu + 1)
        dtype = linalg_output_dtype(dl.type.dtype, d.type.dtype, du.type.dtype)
        sub = None if n is None else max(n - 1, 0)
        sub2 = None if n is None else max(n - 2, 0)
        outputs = [
            TensorType(dtype, (sub,))(),
            TensorType(dtype, (n,))(),
            TensorType(dtype, (sub,))(),
            TensorType(dtype, (sub2,))(),
            TensorType("int32", (n,))(),
        ]
        return Apply(self, [dl, d, du], outputs)

    def perform(self, node, inputs, output_storage):
        from scipy.linalg import get_lapack_funcs

        dtype = node.outputs[0].type.dtype
        dl, d, du = (np.array(v, dtype=dtype) for v in inputs)
        n = d.shape[0]
        if dl.shape[0] != max(n - 1, 0) or du.shape[0] != max(n - 1, 0):
            raise ValueError(
                f"LUFactorTridiagonal: dl and du must have len(d) - 1 = {max(n - 1, 0)} entries, "
                f"got {dl.shape[0]} and {du.shape[0]}"
            )
        if n <= 1:
            # SciPy's wrapper refuses empty off-diagonals; LAPACK has nothing to do here.
            du2, ipiv = np.zeros(0, dtype=dtype), np.ones(n, dtype=np.int32)
        else:
            gttrf = get_lapack_funcs("gttrf", dtype=dtype)
            dl, d, du, du2, ipiv, _info = gttrf(dl, d, du, overwrite_dl=True, overwrite_d=True, overwrite_du=True)
        for cell, value, out in zip(output_storage, (dl, d, du, du2, ipiv), node.outputs):
            cell[0] = np.asarray(value, dtype=out.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor.math import maximum

        n = input_shapes[1][0]
        # du2 has n - 2 entries, none (not -1) for a 1 x 1 system
        return [(input_shapes[0][0],), (n,), (input_shapes[2][0],), (maximum(n - 2, 0),), (n,)]


class SolveLUFactorTridiagonal(BatchedCoreOp):
    """``?gttrs``: solve ``A x = b`` (``A^T x = b`` if ``transposed``) from ``LUFactorTridiagonal``'s outputs."""

    __props__ = ("b_ndim", "overwrite_b", "transposed")

    def __init__(self, b_ndim, transposed, overwrite_b=False):
        if b_ndim not in (1, 2):
            raise ValueError(f"SolveLUFactorTridiagonal: b_ndim must be 1 or 2, got {b_ndim!r}")
        self.b_ndim = b_ndim
        self.transposed = bool(transposed)
        self.overwrite_b = bool(overwrite_b)
        rhs = "(d)" if b_ndim == 1 else "(d,rhs)"
        self.gufunc_signature = f"(dl),(d),(dl),(du2),(d),{rhs}->{rhs}"
        self.destroy_map = {0: [5]} if self.overwrite_b else {}

    def inplace_on_inputs(self, allowed_inplace_inputs):
        if 5 in allowed_inplace_inputs:
            return type(self)(b_ndim=self.b_ndim, transposed=self.transposed, overwrite_b=True)
        return self

    def make_node(self, dl, d, du, du2, ipiv, b):
        dl, d, du, du2, ipiv, b = (as_tensor_variable(v) for v in (dl, d, du, du2, ipiv, b))
        if b.type.ndim != self.b_ndim:
            raise ValueError(
                f"SolveLUFactorTridiagonal: b must have b_ndim={self.b_ndim} dimensions, got {b.type.ndim}"
            )
        if not all(v.type.ndim == 1 for v in (dl, d, du, du2, ipiv)):
            raise ValueError("SolveLUFactorTridiagonal: dl, d, du, du2 and ipiv must be vectors")
        if ipiv.type.dtype not in ("int32", "int64", "int16", "int8"):
            raise TypeError(f"SolveLUFactorTridiagonal: ipiv must hold integers, got {ipiv.type.dtype}")
        s = [v.type.shape[0] for v in (dl, d, du, du2, ipiv)]
        n = _first_known(
            None if s[0] is None else s[0] + 1,
            s[1],
            None if s[2] is None else s[2] + 1,
            None if s[3] is None else s[3] + 2,
            s[4],
            b.type.shape[0],
        )
        dtype = linalg_output_dtype(dl.type.dtype, d.type.dtype, du.type.dtype, du2.type.dtype, b.type.dtype)
        shape = (n,) if self.b_ndim == 1 else (n, b.type.shape[1])
        return Apply(self, [dl, d, du, du2, ipiv, b], [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        from scipy.linalg import get_lapack_funcs

        dtype = node.outputs[0].type.dtype
        dl, d, du, du2 = (np.asarray(v, dtype=dtype) for v in inputs[:4])
        ipiv = np.asarray(inputs[4], dtype=np.int32)
        b = np.array(inputs[5], dtype=dtype)
        if b.shape[0] != d.shape[0]:
            raise ValueError(
                f"SolveLUFactorTridiagonal: b has {b.shape[0]} rows, the matrix is {d.shape[0]} x {d.shape[0]}"
            )
        if d.shape[0] <= 1:
            # A 1 x 1 (or empty) system; SciPy's wrapper refuses its empty off-diagonals.
            output_storage[0][0] = b / d[0] if d.shape[0] else b
            return
        gttrs = get_lapack_funcs("gttrs", dtype=dtype)
        x, _info = gttrs(dl, d, du, du2, ipiv, b, overwrite_b=True, trans="T" if self.transposed else "N")
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[5])]


def tridiagonal_lu_factor(a):
    """LU factors ``(dl, d, du, du2, ipiv)`` of the tridiagonal part of ``a`` (LAPACK's ``gttrf``)."""
    from lucent.tensor.basic import diagonal

    a = as_tensor_variable(a)
    if a.type.ndim < 2:
        raise ValueError(f"tridiagonal_lu_factor expects a matrix (or a stack of them), got a {a.type.ndim}-d input")
    dl, d, du = (diagonal(a, offset=o, axis1=-2, axis2=-1) for o in (-1, 0, 1))
    return LUFactorTridiagonal()(dl, d, du)


def tridiagonal_lu_solve(a_diagonals, b, *, b_ndim, transposed=False):
    """Solve with the factors ``tridiagonal_lu_factor`` returned (LAPACK's ``gttrs``).

    ``b_ndim`` (1 or 2) says whether ``b``'s core is a vector or a matrix of
    right-hand sides; ``transposed=True`` solves ``A^T x = b``.
    """
    dl, d, du, du2, ipiv = a_diagonals
    return SolveLUFactorTridiagonal(b_ndim=b_ndim, transposed=transposed)(dl, d, du, du2, ipiv, b)


__all__ = ["LUFactorTridiagonal", "SolveLUFactorTridiagonal", "tridiagonal_lu_factor", "tridiagonal_lu_solve"]
