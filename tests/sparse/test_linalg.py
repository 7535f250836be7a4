"""lucent.sparse.linalg.block_diag: sparse or dense blocks on the diagonal of a sparse matrix."""

import numpy as np
import pytest
import scipy.sparse as sp

import lucent.tensor as lt
from lucent.sparse import basic as sb
from lucent.sparse.linalg import SparseBlockDiagonal, block_diag
from tests.helpers import run


@pytest.mark.parametrize("format", ["csr", "csc"])
def test_block_diag_of_sparse_and_dense_blocks(format):
    a, d = sb.csr_matrix("a", dtype="float64"), lt.dmatrix("d")
    out = block_diag(a, d, format=format)
    assert isinstance(out.owner.op, SparseBlockDiagonal) and out.type.format == format
    av, dv = sp.csr_matrix(np.array([[1.0, 0.0], [2.0, 3.0]])), np.ones((1, 3))
    got = run(out, {a: av, d: dv})
    expected = sp.block_diag([av, dv], format=format)
    assert got.format == format
    np.testing.assert_allclose(got.toarray(), expected.toarray())


def test_one_matrix_and_bad_format():
    x = lt.dmatrix("x")
    assert block_diag(x) == (x,)
    with pytest.raises(ValueError, match="'csc' or 'csr'"):
        block_diag(x, x, format="coo")
