"""vectorize_graph over sparse ops: a dense operand may be batched, a sparse one never."""

import numpy as np
import pytest
import scipy.sparse as sp

import lucent
import lucent.tensor as lt
from lucent.graph.replace import vectorize_graph
from lucent.sparse import basic as sb
from lucent.sparse import math as sm


def test_structured_dot_batches_its_dense_operand():
    s = sb.as_sparse_variable(sp.csr_matrix(np.arange(9.0).reshape(3, 3)))
    x = lt.dmatrix("x")
    xb = lt.tensor("xb", shape=(None, None, None, None))
    yb = vectorize_graph(sm.structured_dot(s, x), {x: xb})
    assert yb.type.ndim == 4
    value = np.random.default_rng(0).normal(size=(2, 4, 3, 5))
    np.testing.assert_allclose(lucent.function([xb], yb)(value), np.arange(9.0).reshape(3, 3) @ value)
    same = vectorize_graph(sm.structured_dot(s, x), {x: lt.dmatrix("x2")})
    assert isinstance(same.owner.op, sm.StructuredDot)


def test_batching_a_sparse_operand_or_an_elementwise_partner_is_refused():
    s = sb.as_sparse_variable(sp.csr_matrix(np.eye(3)))
    x = lt.dmatrix("x")
    with pytest.raises(NotImplementedError, match="sparse \\(left\\) input is batched"):
        vectorize_graph(sm.structured_dot(s, x), {s: lt.tensor3("sb"), x: lt.tensor3("xb")})
    for out in (sm.add(s, x), sm.multiply(s, x)):
        with pytest.raises(NotImplementedError, match="no batched-sparse"):
            vectorize_graph(out, {x: lt.tensor3("xb")})
