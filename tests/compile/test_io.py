"""In / Out normalisation and validation."""

import pytest

import lucent.tensor as lt
from lucent.compile.io import In, Out, SymbolicInput, normalize_input, normalize_output


def test_constant_input_rejected():
    with pytest.raises(TypeError, match="constant"):
        normalize_input(lt.constant(1.0))


def test_bad_shortcut_rejected():
    with pytest.raises(TypeError, match="Unknown input"):
        normalize_input((1, 2, 3, 4))
    with pytest.raises(TypeError):
        normalize_input("x")


def test_symbolic_input_upgraded():
    x = lt.dscalar("x")
    i = normalize_input(SymbolicInput(x))
    assert isinstance(i, In) and i.variable is x and i.name == "x"


def test_normalize_output():
    x = lt.dscalar("x")
    assert normalize_output(x).variable is x
    o = Out(x, borrow=True)
    assert normalize_output(o) is o
    with pytest.raises(TypeError, match="output"):
        normalize_output(3)


def test_in_update_non_variable_converted():
    x = lt.dscalar("x")
    i = In(x, value=1.0, update=0.0)
    assert i.update.type == x.type
