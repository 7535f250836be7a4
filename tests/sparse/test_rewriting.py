"""Sparse rewrites: Remove0 works in place when its input may be overwritten."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import lucent
from lucent.link.numba.linker import NumbaLinkerWarning
from lucent.sparse import basic as sb


def _with_zero():
    return sp.csr_matrix((np.array([0.0, 1.0]), np.array([0, 1]), np.array([0, 2])), shape=(1, 2))


@pytest.mark.parametrize("mutable", [True, False])
def test_inplace_remove0_only_on_mutable_inputs(mutable):
    x = sb.csr_matrix("x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaLinkerWarning)
        f = lucent.function([lucent.In(x, borrow=True, mutable=mutable)], sb.Remove0()(x), mode="FAST_RUN")
    ops = [n.op for n in f.maker.fgraph.toposort()]
    assert ops == [sb.Remove0(inplace=mutable)]
    m = _with_zero()
    assert f(m).nnz == 1
    assert m.nnz == (1 if mutable else 2)


def test_no_inplace_on_fast_compile():
    x = sb.csr_matrix("x")
    f = lucent.function([lucent.In(x, mutable=True)], sb.remove0(x), mode="FAST_COMPILE")
    assert not any(getattr(n.op, "inplace", False) for n in f.maker.fgraph.toposort())
