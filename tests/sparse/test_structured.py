"""Structured element-wise functions: the stored entries change, the pattern stays (both paths)."""

import numpy as np
import pytest

from lucent.gradient import verify_grad
from lucent.sparse import basic as sb
from lucent.sparse import math as sm
from lucent.sparse import structured
from tests.helpers import run
from tests.sparse.test_basic import FORMATS, sample

UNARY = {
    "abs": np.abs, "structured_sigmoid": lambda d: 1 / (1 + np.exp(-d)), "structured_exp": np.exp,
    "sin": np.sin, "sinh": np.sinh, "arcsinh": np.arcsinh, "tan": np.tan, "tanh": np.tanh,
    "arctan": np.arctan, "rint": np.rint, "sign": np.sign, "ceil": np.ceil, "floor": np.floor,
    "expm1": np.expm1, "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "trunc": np.trunc,
    "sqr": np.square,
}
POSITIVE = {"structured_log": np.log, "log1p": np.log1p, "sqrt": np.sqrt}
SMALL = {"arcsin": np.arcsin, "arctanh": np.arctanh}


@pytest.mark.parametrize("format", list(FORMATS))
def test_every_structured_function_keeps_the_pattern(format):
    x = sb.matrix(format, "x", dtype="float64")
    a = sample(format, shape=(3, 4))
    pos, small = abs(a), a / (abs(a).max() * 2)
    table = [(UNARY, a), (POSITIVE, pos), (SMALL, small)]
    names = [n for t, _ in table for n in t]
    ys = [sb.matrix(format, f"y{k}", dtype="float64") for k in range(3)]
    outs = [getattr(sm, n)(ys[k]) for k, (t, _) in enumerate(table) for n in t]
    outs += [sm.structured_pow(ys[0], 3), sm.structured_minimum(ys[0], 0.1),
             sm.structured_maximum(ys[0], 0.1), sm.structured_add(ys[0], 2.0)]
    got = run(outs, {ys[0]: a, ys[1]: pos, ys[2]: small})
    k = 0
    for t, value in table:
        d = value.toarray()
        for name, fn in t.items():
            assert got[k].format == format, name
            np.testing.assert_allclose(got[k].toarray(), np.where(d != 0, fn(d), 0), err_msg=name)
            k += 1
    d = a.toarray()
    for out, expected in zip(got[k:], [d**3, np.minimum(d, 0.1), np.maximum(d, 0.1), d + 2]):
        np.testing.assert_allclose(out.toarray(), np.where(d != 0, expected, 0))
    assert len(names) + 4 == len(structured.__all__) - 1  # every function is checked


def test_structured_gradient_flows_to_stored_entries_only():
    rng = np.random.default_rng(0)
    dense = rng.random((3, 4)) + 0.5  # every entry stored

    def fn(a):
        return sb.dense_from_sparse(sm.structured_exp(sb.csr_from_dense(a)))

    verify_grad(fn, [dense], rng=rng)


def test_refuses_non_compressed_formats():
    with pytest.raises(TypeError, match="CSR or CSC"):
        sm.structured_exp(sb.bsr_matrix("b"))
