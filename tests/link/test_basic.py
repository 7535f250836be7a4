"""Container and the Linker base."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.graph.fg import FunctionGraph
from lucent.link.basic import Container, Linker
from lucent.link.python import PythonLinker


def test_container_filters_on_write_and_shares_cell():
    x = lt.dvector("x")
    cell = [None]
    c = Container(x, cell)
    c.value = [1, 2]
    assert isinstance(cell[0], np.ndarray) and cell[0].dtype == np.float64
    assert c.value is cell[0] and c.name == "x"
    with pytest.raises(TypeError):
        c.value = np.zeros((2, 2))
    c.value = None
    assert cell[0] is None


def test_container_strict_readonly_and_downcast():
    t = lt.fvector().type
    c = Container(t, [None], strict=True)
    with pytest.raises(TypeError):
        c.value = [1.0]
    ro = Container(t, [None], readonly=True)
    with pytest.raises(Exception):
        ro.value = np.zeros(1, dtype="float32")
    d = Container(t, [None], allow_downcast=True)
    d.value = np.zeros(2)
    assert d.value.dtype == np.float32
    with pytest.raises(TypeError):
        Container(t, "not a list")


def test_linker_make_function():
    x = lt.dvector("x")
    fg = FunctionGraph([x], [x * 2])
    f = PythonLinker().accept(fg).make_function()
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    assert isinstance(PythonLinker(), Linker)
    with pytest.raises(NotImplementedError):
        Linker().make_thunk()
