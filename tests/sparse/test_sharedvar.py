"""Shared sparse variables."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import lucent
from lucent.link.numba.linker import NumbaLinkerWarning
from lucent.sparse import basic as sb
from lucent.sparse.sharedvar import SparseTensorSharedVariable, sparse_constructor
from lucent.sparse.variable import SparseVariable


def test_shared_makes_a_sparse_shared_variable():
    m = sp.csr_matrix(np.eye(4))
    s = lucent.shared(m, name="s")
    assert isinstance(s, SparseTensorSharedVariable) and isinstance(s, SparseVariable)
    assert s.format == "csr" and s.dtype == "float64" and s.name == "s"
    assert s.get_value() is not m
    assert lucent.shared(m, borrow=True).get_value(borrow=True) is m
    assert lucent.shared(m, format="csc").get_value().format == "csc"
    assert lucent.sparse.shared is sparse_constructor
    with pytest.raises(TypeError, match="scipy.sparse"):
        sparse_constructor(np.eye(2))


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_shared_in_functions_and_updates(mode):
    s = lucent.shared(sp.csc_matrix(np.eye(3)), name="s")
    x = sb.csc_matrix("x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaLinkerWarning)
        f = lucent.function([x], s.toarray().sum(), updates=[(s, s + x)], mode=mode)
    assert f(sp.csc_matrix(np.ones((3, 3)))) == 3.0
    np.testing.assert_array_equal(s.get_value().toarray(), np.eye(3) + 1)
    s.set_value(sp.csr_matrix(np.zeros((3, 3))))  # filtered into the variable's format
    assert s.get_value().format == "csc"
    s.set_value(sp.csc_matrix(np.eye(3)))
    s.zero()
    assert s.get_value().nnz == 0 and s.get_value().shape == (3, 3)
