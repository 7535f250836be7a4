import numpy as np
import pytest
import scipy.sparse as sp

from lucent.misc.may_share_memory import may_share_memory


def test_ndarrays():
    a = np.zeros(4)
    assert may_share_memory(a, a[1:])
    assert not may_share_memory(a, np.zeros(4))


def test_sparse_and_mixed():
    m = sp.csc_matrix(np.eye(3))
    assert may_share_memory(m, m)
    assert may_share_memory(m, m.data)
    assert may_share_memory(m.indptr, m)
    assert not may_share_memory(m, m.copy())
    assert not may_share_memory(m, np.zeros(2))


def test_other_types():
    with pytest.raises(TypeError, match="ndarray and scipy.sparse"):
        may_share_memory([1], np.zeros(1))
    assert may_share_memory([1], np.zeros(1), raise_other_type=False) is False
