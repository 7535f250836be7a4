"""``function``'s argument rules: givens, updates, default updates, shared integers."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent import In, function, shared
from lucent.compile.maker import FunctionMaker, UnusedInputError
from lucent.compile.function_module import FunctionMaker as _Maker, UnusedInputError as _Unused
from lucent.utils import PYTHON_INT_BITWIDTH

pytestmark = pytest.mark.both_modes


def test_maker_module_holds_the_compiler_and_its_errors():
    assert FunctionMaker is _Maker and UnusedInputError is _Unused


def test_givens_cannot_replace_an_input():
    x = lt.dscalar("x")
    with pytest.raises(RuntimeError, match="input of the function"):
        function([x], x * 2, givens={x: x + 1})


def test_rebuild_strict_false_lets_a_given_change_the_type():
    w = lt.imatrix("w")
    x, y = lt.ivectors("x", "y")
    with pytest.raises(TypeError, match="does not have its type"):
        function([w, y], x * y, givens=[(x, w)])
    f = function([w, y], x * y, givens=[(x, w)], rebuild_strict=False)
    out = f(np.ones((3, 5), dtype="int32"), np.arange(5, dtype="int32"))
    np.testing.assert_array_equal(out, np.ones((3, 5)) * np.arange(5))


def test_update_must_keep_dtype_and_broadcastable_dims():
    m = shared(np.ones((3, 3)))
    with pytest.raises(TypeError, match="broadcastable"):
        function([], [], updates={m: m.sum().dimshuffle("x", "x")})
    v = shared(np.ones(3))
    f = function([], [], updates={v: lt.zeros(3)})  # a static length is fine
    f()
    np.testing.assert_array_equal(v.get_value(), 0)
    a, b = lt.dscalar("a"), lt.dvector("b")
    with pytest.raises(TypeError, match="update of the input a"):
        In(a, update=b)


def test_no_default_updates_must_be_a_bool_or_shared_variables():
    x = shared(0)
    x.default_update = x + 2
    for bad in (1, x, "canard", [x, 3]):
        with pytest.raises(TypeError, match="no_default_updates"):
            function([], [x], no_default_updates=bad)
    function([], [x], no_default_updates=[x])()
    assert x.get_value() == 0
    function([], [x], no_default_updates=False)()
    assert x.get_value() == 2


def test_default_update_only_for_shared_variables_the_graph_reads():
    a = shared(0)
    a.default_update = a + 1
    b = 2 * a
    f = function([b], b)  # b is given: a is not read
    assert f(21) == 21
    assert a.get_value() == 0
    g = function([], b)
    g()
    assert a.get_value() == 1


def test_python_ints_make_default_width_integer_shared_variables():
    assert shared(7).type.dtype == f"int{PYTHON_INT_BITWIDTH}"
    assert shared(7).type.ndim == 0
    assert shared(7.0).type.dtype == "float64"
