"""Schur and generalised Schur (QZ) decompositions, as ``scipy.linalg.schur`` / ``qz`` / ``ordqz``.

``schur(A)`` gives ``T`` (quasi-)upper triangular and ``Z`` unitary with
``A = Z T Z^H``; ``qz(A, B)`` gives ``AA, BB, Q, Z`` with ``A = Q AA Z^H``
and ``B = Q BB Z^H``. Both run LAPACK's driver without ordering first
(``?gees`` / ``?gges``) and, when a ``sort`` is asked, move the selected
eigenvalues to the top-left with ``?trsen`` / ``?tgsen``: this is what the
drivers do internally when given a selection callback, so the factors are
SciPy's, and the Numba kernels (``lucent/link/numba/dispatch/linalg_schur.py``)
make the same LAPACK calls. A failed factorisation, or non-finite input,
gives NaN in every output instead of an error. No gradient is defined (the
factors are not unique where eigenvalues meet; PyTensor defines none either).

Sort criteria on an eigenvalue ``w`` (``alpha / beta`` for QZ, where
``beta == 0`` is an infinite eigenvalue):

* ``'lhp'``: ``Re w < 0``; ``'rhp'``: ``Re w >= 0`` (Schur), ``> 0`` (QZ);
* ``'iuc'``: ``|w| <= 1`` (Schur), ``< 1`` (QZ);
* ``'ouc'``: ``|w| > 1`` (QZ also selects infinite eigenvalues).
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.decomposition._compare import columns_equal_up_to_phase
from lucent.tensor.linalg.dtype_utils import check_core_ndim, check_static_square, linalg_output_dtype
from lucent.tensor.type import TensorType

SORTS = ("lhp", "rhp", "iuc", "ouc")


def _check_sort(sort):
    if sort is not None and sort not in SORTS:
        raise ValueError(f"sort must be None or one of {SORTS}, got {sort!r}")


def _complex_of(dtype):
    return "complex64" if np.dtype(dtype) in (np.float32, np.complex64) else "complex128"


def schur_select(sort, w):
    """Which eigenvalues ``w`` (complex array) the Schur ``sort`` criterion selects."""
    if sort == "lhp":
        return w.real < 0.0
    if sort == "rhp":
        return w.real >= 0.0
    if sort == "iuc":
        return np.abs(w) <= 1.0
    return np.abs(w) > 1.0


def qz_select(sort, alpha, beta):
    """Which generalised eigenvalues ``alpha / beta`` the QZ ``sort`` criterion selects."""
    finite = beta != 0
    ratio = np.where(finite, alpha, 0) / np.where(finite, beta, 1)
    if sort == "lhp":
        sel = ratio.real < 0.0
    elif sort == "rhp":
        sel = ratio.real > 0.0
    elif sort == "iuc":
        sel = np.abs(ratio) < 1.0
    else:
        sel = np.abs(ratio) > 1.0
        return np.where(finite, sel, alpha != 0)
    return finite & sel


def _lwork(result, position=-2):
    return max(1, int(np.asarray(result[position]).ravel()[0].real))


def _store_in_place(buffer, value, dtype):
    """``value`` written into the destroyed input ``buffer`` when it can hold it (an
    in-place op leaves its result there, as LAPACK does); otherwise ``value`` itself."""
    if (isinstance(buffer, np.ndarray) and buffer.dtype == dtype and buffer.shape == np.shape(value)
            and buffer.flags.writeable):
        buffer[...] = value
        return buffer
    return np.ascontiguousarray(value, dtype=dtype)


class Schur(BatchedCoreOp):
    """Schur decomposition of a square matrix: outputs ``T`` and ``Z``.

    ``output='complex'`` makes the form of a real matrix complex (upper
    triangular); complex input always gives a complex form.
    """

    __props__ = ("output", "overwrite_a", "sort")
    gufunc_signature = "(m,m)->(m,m),(m,m)"

    def __init__(self, output="real", overwrite_a=False, sort=None):
        if output not in ("real", "complex"):
            raise ValueError(f"output must be 'real' or 'complex', got {output!r}")
        _check_sort(sort)
        self.output = output
        self.overwrite_a = bool(overwrite_a)
        self.sort = sort
        self.destroy_map = {0: [0]} if self.overwrite_a else {}

    def make_node(self, A):
        A = as_tensor_variable(A)
        check_core_ndim(A, 2, "Schur")
        check_static_square(A, "Schur")
        dtype = linalg_output_dtype(A.type.dtype)
        if self.output == "complex":
            dtype = _complex_of(dtype)
        T, Z = TensorType(dtype, A.type.shape)(), TensorType(dtype, A.type.shape)()
        Z.tag.values_eq_approx = columns_equal_up_to_phase
        return Apply(self, [A], [T, Z])

    def perform(self, node, inputs, output_storage):
        from scipy.linalg import get_lapack_funcs

        dtype = node.outputs[0].type.dtype
        a = np.array(inputs[0], dtype=dtype, order="F")
        if a.shape[0] != a.shape[1]:
            raise ValueError(f"Schur: input array is expected to be square but has the shape: {a.shape}")
        nan = np.full(a.shape, np.nan, dtype=dtype)
        if a.size == 0:
            output_storage[0][0], output_storage[1][0] = a.copy(), a.copy()
            return
        if not np.isfinite(a).all():
            output_storage[0][0], output_storage[1][0] = nan, nan.copy()
            return
        (gees,) = get_lapack_funcs(("gees",), (a,))
        no_sort = lambda *args: None  # noqa: E731
        lwork = _lwork(gees(no_sort, a, lwork=-1, sort_t=0))
        res = gees(no_sort, a, lwork=lwork, sort_t=0, overwrite_a=True)
        T, Z, info = res[0], res[-3], res[-1]
        if info == 0 and self.sort is not None:
            w = res[2] if np.iscomplexobj(T) else res[2] + 1j * res[3]
            select = schur_select(self.sort, w).astype(np.int32)
            (trsen,) = get_lapack_funcs(("trsen",), (T,))
            out = trsen(select, T, Z, job="N", lwork=max(1, T.shape[0]))
            T, Z, info = out[0], out[1], out[-1]
        if info != 0:
            T, Z = nan, nan.copy()
        output_storage[0][0] = _store_in_place(inputs[0], T, dtype) if self.overwrite_a else (
            np.ascontiguousarray(T, dtype=dtype))
        output_storage[1][0] = np.ascontiguousarray(Z, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0]), tuple(input_shapes[0])]

    def inplace_on_inputs(self, allowed_inplace_inputs):
        if not allowed_inplace_inputs:
            return self
        return type(self)(output=self.output, overwrite_a=True, sort=self.sort)


def schur(A, output="real", sort=None):
    """Schur decomposition ``A = Z T Z^H`` of a square matrix (``scipy.linalg.schur``).

    Returns ``(T, Z)``. ``sort`` (``'lhp'``, ``'rhp'``, ``'iuc'``,
    ``'ouc'``) moves the selected eigenvalues to the top-left of ``T``;
    unlike SciPy the number selected is not returned.
    """
    return Schur(output=output, sort=sort)(A)


class QZ(BatchedCoreOp):
    """Generalised Schur decomposition of a pair of square matrices.

    Outputs ``AA, BB, Q, Z``, with ``alpha, beta`` (the generalised
    eigenvalues ``alpha / beta``) between them when ``return_eigenvalues``;
    ``alpha`` is complex for real input (eigenvalues may be complex).
    """

    __props__ = ("complex_output", "overwrite_a", "overwrite_b", "sort", "return_eigenvalues")

    def __init__(self, complex_output=False, overwrite_a=False, overwrite_b=False, sort=None,
                 return_eigenvalues=False):
        _check_sort(sort)
        self.complex_output = bool(complex_output)
        self.overwrite_a = bool(overwrite_a)
        self.overwrite_b = bool(overwrite_b)
        self.sort = sort
        self.return_eigenvalues = bool(return_eigenvalues)
        if self.return_eigenvalues:
            self.gufunc_signature = "(m,m),(m,m)->(m,m),(m,m),(m),(m),(m,m),(m,m)"
        else:
            self.gufunc_signature = "(m,m),(m,m)->(m,m),(m,m),(m,m),(m,m)"
        self.destroy_map = {}
        if self.overwrite_a:
            self.destroy_map[0] = [0]
        if self.overwrite_b:
            self.destroy_map[1] = [1]

    def make_node(self, A, B):
        A, B = as_tensor_variable(A), as_tensor_variable(B)
        check_core_ndim(A, 2, "QZ")
        check_core_ndim(B, 2, "QZ", "a matrix as second input")
        check_static_square(A, "QZ")
        check_static_square(B, "QZ")
        dtype = linalg_output_dtype(A.type.dtype, B.type.dtype)
        if self.complex_output:
            dtype = _complex_of(dtype)
        shape = tuple(a if a is not None else b for a, b in zip(A.type.shape, B.type.shape))
        AA, BB, Q, Z = (TensorType(dtype, shape)() for _ in range(4))
        Q.tag.values_eq_approx = columns_equal_up_to_phase
        Z.tag.values_eq_approx = columns_equal_up_to_phase
        if not self.return_eigenvalues:
            return Apply(self, [A, B], [AA, BB, Q, Z])
        m = (shape[0],)
        alpha, beta = TensorType(_complex_of(dtype), m)(), TensorType(dtype, m)()
        return Apply(self, [A, B], [AA, BB, alpha, beta, Q, Z])

    def perform(self, node, inputs, output_storage):
        from scipy.linalg import get_lapack_funcs

        dtype = node.outputs[0].type.dtype
        a = np.array(inputs[0], dtype=dtype, order="F")
        b = np.array(inputs[1], dtype=dtype, order="F")
        for name, v in (("A", a), ("B", b)):
            if v.shape[0] != v.shape[1]:
                raise ValueError(f"QZ: input {name} is expected to be square but has the shape: {v.shape}")
        if a.shape != b.shape:
            raise ValueError(f"QZ: A and B must have the same shape, got {a.shape} and {b.shape}")
        n = a.shape[0]
        results = self._compute(get_lapack_funcs, a, b, n) if n else None
        if results is None:
            fill = np.nan if n else 0
            results = [np.full(a.shape, fill, dtype=dtype) for _ in range(4)]
            results.insert(2, np.full((n,), fill, dtype=node.outputs[2].type.dtype))
            results.insert(3, np.full((n,), fill, dtype=dtype))
        if not self.return_eigenvalues:
            results = results[:2] + results[4:]
        for cell, value, out in zip(output_storage, results, node.outputs):
            cell[0] = np.ascontiguousarray(value, dtype=out.type.dtype)
        for k, flag in ((0, self.overwrite_a), (1, self.overwrite_b)):
            if flag:
                output_storage[k][0] = _store_in_place(inputs[k], output_storage[k][0], dtype)

    def _compute(self, get_lapack_funcs, a, b, n):
        """``[AA, BB, alpha, beta, Q, Z]``, or ``None`` when LAPACK fails or the input is not finite."""
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            return None
        (gges,) = get_lapack_funcs(("gges",), (a, b))
        no_sort = lambda *args: None  # noqa: E731
        lwork = _lwork(gges(no_sort, a, b, lwork=-1, sort_t=0))
        AA, BB, _sdim, *ab, Q, Z, _work, info = gges(no_sort, a, b, lwork=lwork, sort_t=0,
                                                     overwrite_a=True, overwrite_b=True)
        if info != 0:
            return None
        real = not np.iscomplexobj(AA)
        if self.sort is not None:
            alpha = ab[0] + 1j * ab[1] if real else ab[0]
            select = qz_select(self.sort, alpha, ab[-1]).astype(np.int32)
            (tgsen,) = get_lapack_funcs(("tgsen",), (AA, BB))
            out = tgsen(select, AA, BB, Q, Z, ijob=0, lwork=4 * n + 16 if real else 1, liwork=1)
            AA, BB, *ab, Q, Z = out[: (7 if real else 6)]
            if out[-1] != 0:
                return None
        alpha = ab[0] + 1j * ab[1] if real else ab[0]
        return [AA, BB, alpha, ab[-1], Q, Z]

    def infer_shape(self, fgraph, node, input_shapes):
        sa, sb = (tuple(s) for s in input_shapes)
        if self.return_eigenvalues:
            return [sa, sb, (sa[0],), (sa[0],), sa, sa]
        return [sa, sb, sa, sa]

    def inplace_on_inputs(self, allowed_inplace_inputs):
        if not allowed_inplace_inputs:
            return self
        props = self._props_dict()
        props["overwrite_a"] = self.overwrite_a or 0 in allowed_inplace_inputs
        props["overwrite_b"] = self.overwrite_b or 1 in allowed_inplace_inputs
        return type(self)(**props)


def qz(A, B, output="real", sort=None, return_eigenvalues=False):
    """Generalised Schur decomposition of ``(A, B)`` (``scipy.linalg.qz``, ``ordqz`` when sorted).

    Returns ``(AA, BB, Q, Z)``, or ``(AA, BB, alpha, beta, Q, Z)`` with
    ``return_eigenvalues=True``.
    """
    if output not in ("real", "complex"):
        raise ValueError(f"output must be 'real' or 'complex', got {output!r}")
    op = QZ(complex_output=output == "complex", sort=sort, return_eigenvalues=return_eigenvalues)
    return op(A, B)


def ordqz(A, B, sort=None, output="real"):
    """``qz`` with the eigenvalues returned: ``(AA, BB, alpha, beta, Q, Z)`` (``scipy.linalg.ordqz``)."""
    return qz(A, B, output=output, sort=sort, return_eigenvalues=True)


__all__ = ["QZ", "Schur", "ordqz", "qz", "schur"]
