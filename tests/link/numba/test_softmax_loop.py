"""Tests of lucent/link/numba/dispatch/softmax_loop.py: softmax rows along the last axis emitted as IR.

The IR kernel is compared bit for bit with the same kernel written as
statements (``special.py`` without the intrinsic) and with ``perform``, on
1-d to 3-d inputs in C, Fortran and strided layouts, float32 outputs,
integer inputs, rows holding inf and NaN, and empty rows.
"""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify, special  # noqa: E402
from lucent.link.numba.dispatch.basic import kernel_from_source  # noqa: E402
from lucent.link.numba.dispatch.scalar import VECMATH_IMPORT  # noqa: E402
from lucent.tensor.special import LogSoftmax, Softmax  # noqa: E402

RNG = np.random.default_rng(17)


def perform(node, values):
    storage = [[None]]
    node.op.perform(node, values, storage)
    return storage[0][0]


def statements_kernel(node, monkeypatch):
    """The node's kernel written as Python statements, as without ``softmax_loop``."""
    x = node.inputs[0]
    with monkeypatch.context() as patch:
        patch.setattr(special, "_emits_ir", lambda *args: False)
        source = special._source(
            "softmax" if isinstance(node.op, Softmax) else "log_softmax", x.type.ndim, node.op.axis,
            node.outputs[0].type.dtype, x.type.dtype, 1,
        )
    imports = (
        VECMATH_IMPORT + "\nfrom lucent.link.numba.dispatch.special import last_axis_row\n"
        "from lucent.link.numba.dispatch.lane_fold import fold_lanes\n"
    )
    return kernel_from_source(source, "softmax_kernel", imports, error_model="numpy")


def rows(shape):
    a = RNG.standard_normal(shape) * 20
    flat = a.reshape(-1, shape[-1]) if a.size else a
    if a.size and shape[-1] > 6:
        flat[0, 3] = np.inf
        flat[-1, 5] = np.nan
        flat[min(1, flat.shape[0] - 1), :] = -np.inf
    return a


@pytest.mark.parametrize("cls", [Softmax, LogSoftmax])
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_matches_the_statements_and_perform(cls, ndim, monkeypatch):
    x = lt.tensor(dtype="float64", shape=(None,) * ndim)
    node = cls(-1 if ndim > 1 else None).make_node(x)
    k = numba_funcify(node.op, node)
    assert "softmax_loop" in special._source(
        "softmax" if cls is Softmax else "log_softmax", ndim, node.op.axis, "float64", "float64", 1
    )
    old = statements_kernel(node, monkeypatch)
    shape = {1: (301,), 2: (7, 301), 3: (3, 4, 37)}[ndim]
    a = rows(shape)
    values = [a, np.asfortranarray(a), a[..., ::2], a[::-1]]
    if ndim > 1:
        values.append(np.zeros((0,) + shape[1:]))
    values.append(np.zeros(shape[:-1] + (0,)))
    for value in values:
        with np.errstate(all="ignore"):
            got, expected = k(value), perform(node, [value])
            np.testing.assert_array_equal(got, old(value))
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14, equal_nan=True)


@pytest.mark.parametrize("cls", [Softmax, LogSoftmax])
@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_float32_outputs_and_integer_inputs(cls, dtype, monkeypatch):
    x = lt.tensor(dtype=dtype, shape=(None, None))
    node = cls(1).make_node(x)
    k = numba_funcify(node.op, node)
    old = statements_kernel(node, monkeypatch)
    a = (RNG.standard_normal((5, 33)) * 10).astype(dtype)
    for value in (a, a[:, ::2]):
        got, expected = k(value), perform(node, [value])
        np.testing.assert_array_equal(got, old(value))
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)


def test_other_axes_keep_their_statements():
    assert "softmax_loop" not in special._source("softmax", 2, (0,), "float64", "float64", 1)
    assert "softmax_loop" not in special._source("softmax", 2, None, "float64", "float64", 1)
