import numpy as np
import scipy.sparse as sp

from lucent.sparse.utils import hash_from_sparse
from lucent.sparse.variable import constant


def test_hash_distinguishes_values_shapes_dtypes_and_formats():
    values = [
        [[-1]], [[0]], [[1]], np.zeros((1, 5)), np.zeros((1, 6)),
        np.arange(25).reshape(5, 5), np.arange(25).reshape(5, 5).T,
        np.zeros((5, 5), dtype="uint32"), np.zeros((5, 5), dtype="int32"),
    ]
    hashes = [hash_from_sparse(cls(np.asarray(v))) for cls in (sp.csr_matrix, sp.csc_matrix) for v in values]
    assert len(set(hashes)) == len(hashes)


def test_views_hash_like_their_copies():
    x = sp.csr_matrix(np.random.default_rng(0).random((5, 5)))
    for view in (x[1:], x[:4], x[1:3]):
        assert hash_from_sparse(view) == hash_from_sparse(view.copy())
    assert constant(x).signature().lucent_hash() == hash_from_sparse(x)
