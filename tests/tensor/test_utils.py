"""lucent.tensor.utils: gufunc signatures, static broadcasting, axes and hashing helpers."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.graph.fg import FunctionGraph
from lucent.tensor.utils import (
    _parse_gufunc_signature,
    broadcast_static_dim_lengths,
    faster_broadcast_to,
    faster_ndindex,
    get_static_shape_from_size_variables,
    hash_from_ndarray,
    import_func_from_string,
    normalize_reduce_axis,
    safe_signature,
    shape_of_variables,
)


def test_parse_gufunc_signature():
    assert _parse_gufunc_signature("(m,n),(n)->(m)") == ([("m", "n"), ("n",)], [("m",)])
    assert _parse_gufunc_signature(" (m, m) -> (m, m) ") == ([("m", "m")], [("m", "m")])
    assert _parse_gufunc_signature("(),()->()") == ([(), ()], [()])
    assert _parse_gufunc_signature("->(2,a)") == ([], [("2", "a")])
    for bad in ("(m,n)", "(m,)->()", "m->n", "(m)->"):
        with pytest.raises(ValueError, match="not a valid gufunc signature"):
            _parse_gufunc_signature(bad)
    with pytest.raises(TypeError):
        _parse_gufunc_signature(None)


def test_blockwise_uses_the_same_parser():
    from lucent.tensor import blockwise

    assert blockwise._parse_gufunc_signature is _parse_gufunc_signature
    assert blockwise.safe_signature is safe_signature


def test_safe_signature():
    assert safe_signature([1, 2], [1, 2]) == "(i00),(i10,i11)->(o00),(o10,o11)"
    assert safe_signature([0], [0]) == "()->()"


def test_broadcast_static_dim_lengths():
    assert broadcast_static_dim_lengths([3, 3]) == 3
    assert broadcast_static_dim_lengths([None, 1]) is None
    assert broadcast_static_dim_lengths([1, 1]) == 1
    assert broadcast_static_dim_lengths([1, None, 5]) == 5
    with pytest.raises(ValueError, match="cannot be broadcast"):
        broadcast_static_dim_lengths([2, 3])


def test_normalize_reduce_axis():
    assert normalize_reduce_axis(None, 3) is None
    assert normalize_reduce_axis(None, 3, normalize_none=True) == (0, 1, 2)
    assert normalize_reduce_axis(-1, 3) == (2,)
    assert normalize_reduce_axis((0, -1), 2) == (0, 1)
    assert normalize_reduce_axis(0, 0) == (0,)
    with pytest.raises(np.exceptions.AxisError):
        normalize_reduce_axis(3, 3)


def test_faster_broadcast_to_and_ndindex():
    x = np.arange(3.0)
    b = faster_broadcast_to(x, (2, 3))
    np.testing.assert_array_equal(b, np.broadcast_to(x, (2, 3)))
    assert list(faster_ndindex((2, 2))) == list(np.ndindex(2, 2))
    assert list(faster_ndindex(())) == [()]


def test_hash_from_ndarray_sees_layout_and_dtype():
    a = np.zeros((2, 3))
    assert hash_from_ndarray(a) == hash_from_ndarray(a.copy())
    assert hash_from_ndarray(a) != hash_from_ndarray(a.T)
    assert hash_from_ndarray(np.zeros(3, "int32")) != hash_from_ndarray(np.zeros(3, "uint32"))
    assert hash_from_ndarray(np.zeros((1, 0))) != hash_from_ndarray(np.zeros((2, 0)))


def test_import_func_from_string():
    assert import_func_from_string("sum") is np.sum
    import scipy.special

    assert import_func_from_string("scipy.special.gammaln") is scipy.special.gammaln
    assert import_func_from_string("no_such_module.f") is None
    assert import_func_from_string("scipy.special.no_such_function") is None


def test_get_static_shape_from_size_variables():
    n = lt.lscalar("n")
    assert get_static_shape_from_size_variables([lt.constant(3), n, 2]) == (3, None, 2)


def test_shape_of_variables():
    x = lt.dmatrix("x")
    y = x[512:]
    fg = FunctionGraph([x], [y], clone=False)
    shapes = shape_of_variables(fg, {x: (1024, 1000)})
    assert tuple(int(s) for s in shapes[y]) == (512, 1000)
    assert tuple(int(s) for s in shapes[x]) == (1024, 1000)
    with pytest.raises(ValueError, match="inputs of the FunctionGraph"):
        shape_of_variables(fg, {lt.dmatrix("z"): (1, 1)})
