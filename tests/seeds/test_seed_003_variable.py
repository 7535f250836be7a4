"""Seed 003 (Variable part): constants, tensor.value, eval and its cache."""

import numpy as np
import pytest

import lucent
from lucent import tensor
from lucent.compile.function_module import FunctionMaker
from lucent.graph.basic import Constant
from lucent.graph.fg import MissingInputError

# Compiles with the default mode: run each test on both paths.
pytestmark = pytest.mark.both_modes


def test_constant_and_function_examples():
    a = tensor.constant(1.5)  # declare a symbolic constant
    b = tensor.fscalar()  # declare a symbolic floating-point scalar
    c = a + b  # create a simple expression
    assert isinstance(a, Constant)
    f = lucent.function([b], [c])  # works because a has a value already
    assert 4.0 == f(2.5)[0]  # bind 2.5 to an internal copy of b and evaluate c
    # compilation error because b (required by c) is undefined
    with pytest.raises(TypeError, match="constant"):
        lucent.function([a], [c])
    # compilation error because a is constant, it can't be an input
    with pytest.raises(TypeError, match="constant"):
        lucent.function([a, b], [c])


def test_missing_input_names_variable():
    x = tensor.dscalar("x")
    y = tensor.dscalar("y")
    with pytest.raises(MissingInputError, match=r"\by\b") as info:
        lucent.function([x], [x + y])
    assert info.value.variable is y


def test_tensor_value_listed_and_unlisted():
    b = tensor.fscalar()
    d = tensor.value(1.5)  # create a value similar to the constant 'a'
    e = d + b
    f = lucent.function([d, b], [e])  # d's default value of 1.5 is ignored
    assert f(10.0, 2.5)[0] == 12.5
    with pytest.raises(TypeError, match="Missing required input"):
        f()
    # Not listed: its value is used.
    g = lucent.function([b], e)
    assert g(2.5) == 4.0


def test_eval_example():
    x = tensor.dscalar("x")
    y = tensor.dscalar("y")
    z = x + y
    assert np.allclose(z.eval({x: 16.3, y: 12.1}), 28.4)


def test_eval_caches_compiled_function():
    x = tensor.dscalar("x")
    y = tensor.dscalar("y")
    z = x * y
    before = FunctionMaker.n_instances
    assert z.eval({x: 2.0, y: 3.0}) == 6.0
    assert FunctionMaker.n_instances == before + 1
    assert z.eval({x: 4.0, y: 3.0}) == 12.0
    assert z.eval({y: 1.0, x: 5.0}) == 5.0
    assert FunctionMaker.n_instances == before + 1


def test_eval_without_inputs_and_with_names():
    assert tensor.constant(2.0).eval() == 2.0
    s = lucent.shared(np.float64(3.0))
    assert (s * 2).eval() == 6.0
    x = tensor.dscalar("x")
    assert (x + 1).eval({"x": 1.0}) == 2.0


def test_clone_copies_name_and_tags():
    x = tensor.dscalar("x")
    x.tag.note = "hello"
    y = x.clone()
    assert y is not x and y.name == "x" and y.owner is None
    assert y.tag.note == "hello"
