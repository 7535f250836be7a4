"""Tests of lucent/link/numba/dispatch/reduce_loop.py: reductions whose loops are emitted as IR.

The IR kernel must compute what the kernel written as statements computes,
bit for bit (the same order of operations), and what ``perform`` computes
within rounding: both are compared here on the rows loop (trailing axes of
C inputs, rows longer than a block) and the general one (other axes,
strides, broadcasting), for several dtypes, NaN, 0-d and empty inputs.
"""

import functools

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify  # noqa: E402
from lucent.link.numba.dispatch import reduction  # noqa: E402
from lucent.link.numba.dispatch.basic import kernel_from_source  # noqa: E402
from lucent.link.numba.dispatch.elemwise import HELPER_IMPORT, KERNEL_OPTIONS  # noqa: E402
from lucent.link.numba.dispatch.reduce_loop import BLOCK  # noqa: E402
from lucent.scalar import basic as ps  # noqa: E402
from lucent.scalar.composite import Composite  # noqa: E402
from lucent.tensor.fused_reduction import FusedCAReduce  # noqa: E402
from lucent.tensor.reduction import All, Any, Max, Min, Prod, Sum  # noqa: E402

RNG = np.random.default_rng(5)


def perform(node, values):
    storage = [[None]]
    node.op.perform(node, values, storage)
    return storage[0][0]


def statements_kernel(node):
    """The same node's kernel written as Python statements (as before ``reduce_loop``)."""
    ins = node.inputs
    op = node.op
    scalar_op, reduce_op = (op.scalar_op, op.reduce_op) if isinstance(op, FusedCAReduce) else (None, op)
    codegen = reduction.ReduceCodegen(
        scalar_op, reduce_op, node, [i.type.shape for i in ins], [i.type.dtype for i in ins],
        max(i.type.ndim for i in ins), threads=1,
    )
    codegen.emits_ir = lambda: False
    imports = HELPER_IMPORT + reduction.LANE_FOLD_IMPORT + (codegen.prog.imports() if codegen.prog is not None else "")
    return kernel_from_source(codegen.source(), "reduce_kernel", imports, **KERNEL_OPTIONS)


@functools.lru_cache(maxsize=None)
def kernels(op_class, axis, dtype, ndim=2):
    x = lt.tensor(dtype=dtype, shape=(None,) * ndim)
    node = op_class(axis).make_node(x)
    return node, numba_funcify(node.op, node), statements_kernel(node)


def check(node, kernel, old, values, exact=True):
    """``exact``: bit for bit with the statements (``False``: the statements' general loop used
    libm where the IR's uses the vectorisable functions, within an ulp)."""
    got = kernel(*values)
    expected = perform(node, values)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if exact:
        np.testing.assert_array_equal(got, old(*values))  # the same operations in the same order
    else:
        np.testing.assert_allclose(got, old(*values), rtol=1e-14)
    if expected.dtype.kind == "f":
        rtol = 1e-5 if expected.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-12, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


def test_kernels_are_one_reduce_loop_call_where_it_applies():
    x = lt.dmatrix("x")
    node = Sum(axis=1).make_node(x)
    source = reduction.ReduceCodegen(None, node.op, node, [x.type.shape], ["float64"], 2).source()
    assert "return reduce_loop((i0, ), reduce_body, '>a0', 'Sum', '..', 'add', 'float64', 'float64', '1', '')" in source
    assert "for " not in source
    z = lt.zmatrix("z")  # complex accumulators keep their statements
    znode = Sum(axis=1).make_node(z)
    assert "reduce_loop" not in reduction.ReduceCodegen(None, znode.op, znode, [z.type.shape], ["complex128"], 2).source()


@pytest.mark.parametrize("axis", [None, (0,), (1,)])
@pytest.mark.parametrize("op_class", [Sum, Max, Min, Prod])
@pytest.mark.parametrize("layout", ["c", "fortran", "strided"])
def test_float64_rows_and_general_loops(op_class, axis, layout):
    node, k, old = kernels(op_class, axis, "float64")
    a = RNG.standard_normal((5, 2 * BLOCK + 7))  # rows of several blocks and a remainder
    if op_class is Prod:
        a = 1.0 + a * 1e-3
    if layout == "fortran":
        a = np.asfortranarray(a)
    elif layout == "strided":
        a = a[:, ::2]
    check(node, k, old, [a])


@pytest.mark.parametrize("op_class", [Sum, Max, Min, Prod, All, Any])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "bool"])
def test_other_dtypes(op_class, dtype):
    node, k, old = kernels(op_class, (1,), dtype)
    a = RNG.standard_normal((4, 37)) * 50
    a = a > 0 if dtype == "bool" else a.astype(dtype)
    check(node, k, old, [a])
    check(node, k, old, [a[:, ::3]])


def test_nan_wins_in_max_and_min_and_spreads_in_sums():
    for op_class in (Max, Min, Sum):
        node, k, old = kernels(op_class, (1,), "float64")
        a = RNG.standard_normal((3, 700))
        a[0, 5] = np.nan
        a[2, 699] = np.nan
        check(node, k, old, [a])


def test_zero_d_and_empty_inputs():
    node, k, old = kernels(Sum, None, "float64", ndim=0)
    check(node, k, old, [np.array(2.5)])
    node, k, old = kernels(Sum, (1,), "float64")
    check(node, k, old, [np.zeros((3, 0))])
    check(node, k, old, [np.zeros((0, 3))])
    node, k, _ = kernels(Max, (1,), "float64")
    with pytest.raises(ValueError, match="Max: cannot reduce an empty array over axes \\(1,\\)"):
        k(np.zeros((3, 0)))
    assert k(np.zeros((0, 3))).shape == (0,)


def test_fused_reductions_with_broadcast_inputs():
    a, b, c = ps.float64(), ps.float64(), ps.float64()
    comp = Composite([a, b, c], [a * b - ps.exp(c)])
    x = lt.dmatrix("x")
    one = lt.tensor(dtype="float64", shape=(1, 1))
    row = lt.tensor(dtype="float64", shape=(1, None))
    for axis in [(1,), (0,), None]:
        node = FusedCAReduce(comp, Sum(axis)).make_node(x, one, x)
        k, old = numba_funcify(node.op, node), statements_kernel(node)
        values = [RNG.standard_normal((6, 9)), np.array([[0.5]]), RNG.standard_normal((6, 9))]
        check(node, k, old, values, exact=axis != (0,))  # rows loop unless the axis is the first
        node = FusedCAReduce(comp, Sum(axis)).make_node(x, row, x)  # partial broadcast: general loop
        k, old = numba_funcify(node.op, node), statements_kernel(node)
        values[1] = RNG.standard_normal((1, 9))
        check(node, k, old, values, exact=False)
        check(node, k, old, [values[0][::-1], values[1], values[2].T.copy().T], exact=False)
