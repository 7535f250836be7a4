"""Numba kernel of ``TriangleOfProduct``: the lower triangle of ``a @ b`` by blocks of rows.

Rows ``i0:i1`` of the triangle need the columns ``:i1`` of the product
only, one ``gemm`` of the row block of ``a`` with those columns of ``b``.
With an upper-triangular ``a`` the row block starts at column ``i0`` of
``a`` (everything left of it is zero); the diagonal block of ``a`` is first
copied with its lower part zeroed (that part is not read), the rest of the
row block multiplies directly. The few entries above the diagonal inside
each diagonal block are computed and then zeroed. Operands are read where
they lie, transposed or not, as by ``Dot22``.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.blas import _cblas, _gemm_lines
from lucent.link.numba.dispatch.elemwise import _indent
from lucent.link.numba.dispatch.shape import dtype_text, fail, make_kernel
from lucent.tensor.linalg.triangle_product import TriangleOfProduct

#: Rows per block: small enough that the part above the diagonal computed
#: in vain stays a small share, large enough for BLAS to run at full rate.
BLOCK_ROWS = 64


@numba_funcify.register(TriangleOfProduct, version=1)
def numba_funcify_TriangleOfProduct(op, node, **kwargs):
    dtype = node.outputs[0].type.dtype
    cblas = _cblas(dtype)
    if cblas is None:
        raise NotImplementedError("TriangleOfProduct needs the CBLAS bundled with NumPy")
    gemm_into = "@numba.njit(cache=False)\ndef gemm_into(x, y, z, beta):\n" + "\n".join(
        _indent(_gemm_lines(dtype, "x", "y", "z", "1.0", "beta"), 1)
    ) + "\n"
    if op.a_upper:
        block = [
            "if i0 < k:",
            "    d1 = min(i1, k)",
            # the diagonal block of ``a``, read as upper triangular
            "    gemm_into(np.triu(a[i0:i1, i0:d1]), b[i0:d1, :jn], c, 0.0)",
            "    if d1 < k:",
            "        gemm_into(a[i0:i1, d1:k], b[d1:k, :jn], c, 1.0)",
        ]
    else:
        block = ["gemm_into(a[i0:i1, :], b[:, :jn], c, 0.0)"]
    body = [
        "if a.shape[1] != b.shape[0]:",
        "    " + fail("Value", "TriangleOfProduct: shapes {} and {} are not aligned", "a.shape", "b.shape"),
        "m = a.shape[0]",
        "k = a.shape[1]",
        "n = b.shape[1]",
        f"out = np.zeros((m, n), dtype={dtype_text(dtype)})",
        "if n == 0:",
        "    return out",
        f"for i0 in range(0, m, {BLOCK_ROWS}):",
        f"    i1 = min(i0 + {BLOCK_ROWS}, m)",
        "    jn = min(i1, n)",
        "    c = out[i0:i1, :jn]",
        *_indent(block, 1),
        # the part above the diagonal inside the block
        "    for i in range(i0, i1):",
        "        for j in range(i + 1, jn):",
        "            out[i, j] = 0",
        "return out",
    ]
    return make_kernel("triangle_of_product", ["a", "b"], body, [cblas, gemm_into])


__all__ = ["numba_funcify_TriangleOfProduct"]
