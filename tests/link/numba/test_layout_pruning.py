"""Tests of lucent/link/numba/dispatch/layout_pruning.py: only the reachable layout branch is compiled."""

import numpy as np
import pytest

pytest.importorskip("numba")

import numba  # noqa: E402

import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify  # noqa: E402
from lucent.link.numba.dispatch.elemwise import is_c_layout  # noqa: E402
from lucent.link.numba.dispatch.python_entry import kernel_dispatcher  # noqa: E402


def _typed_names(kernel, args):
    cres = kernel.overloads[tuple(numba.typeof(a) for a in args)]
    return set(cres.type_annotation.typemap)


def test_a_c_call_compiles_only_the_flat_loop_and_a_strided_call_only_the_other():
    # a complex reduction's kernel branches on its input's layout in its text
    # (other kernels decide it while their one loop intrinsic is typed)
    x = lt.zvector("x")
    node = lt.sum(x, axis=0).owner
    # the generated kernel's function, compiled here (not loaded from the disk cache)
    kernel = kernel_dispatcher(numba_funcify(node.op, node).py_func, {"error_model": "numpy"})
    a = np.linspace(-1, 1, 9) + 0.5j
    np.testing.assert_allclose(kernel(a), a.sum())
    c_names = _typed_names(kernel, (a,))
    assert any(n.startswith("f0") for n in c_names)  # the flat view
    assert not any(n.startswith("k0") for n in c_names)  # no strided loop
    s = a[::2]
    np.testing.assert_allclose(kernel(s), s.sum())
    strided_names = _typed_names(kernel, (s,))
    assert any(n.startswith("k0") for n in strided_names)
    assert not any(n.startswith("f0") for n in strided_names)


def _branchy(x, y):
    local = x
    if is_c_layout(x):
        first = 1
    else:
        first = 2
    if is_c_layout(local):  # not an argument: left to the intrinsic
        second = 10
    else:
        second = 20
    if is_c_layout(y):  # not an array: False
        third = 100
    else:
        third = 200
    return first + second + third


@pytest.mark.parametrize("make, expected", [
    (lambda: np.ones(3), 1 + 10 + 200),
    (lambda: np.ones(6)[::2], 2 + 20 + 200),
    (lambda: np.ones((3, 2), order="F"), 2 + 20 + 200),
])
def test_resolved_tests_give_what_the_intrinsic_gives(make, expected):
    kernel = kernel_dispatcher(_branchy, {})
    assert kernel(make(), 1.5) == expected
    assert numba.njit(_branchy)(make(), 1.5) == expected
