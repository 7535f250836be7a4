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


def test_container_data_is_value():
    c = Container(lt.dscalar("s"), [None])
    c.data = 2
    assert c.value == 2.0 and c.data is c.value and c.value.dtype == np.float64


def _two_node_graph():
    x, y = lt.dvector("x"), lt.dvector("y")
    return FunctionGraph([x, y], [(x + y) * 2])


def test_perform_linker_is_the_python_linker():
    from lucent.link.basic import PerformLinker

    assert PerformLinker is PythonLinker
    fn = PerformLinker().accept(_two_node_graph()).make_function()
    np.testing.assert_allclose(fn(np.ones(2), np.arange(2.0)), [2.0, 4.0])


def test_wrap_linker_runs_nodes_in_lockstep():
    from lucent.link.basic import WrapLinker

    seen = []

    def run_first_and_compare(fgraph, i, node, first, second):
        seen.append(node.op)
        first()
        second()

    linker = WrapLinker([PythonLinker(allow_gc=False), PythonLinker(allow_gc=False)], run_first_and_compare)
    fgraph = _two_node_graph()
    fn, inputs, outputs = linker.accept(fgraph).make_thunk()
    inputs[0].data = [1.0, 2.0]
    inputs[1].data = [3.0, 4.0]
    fn()
    assert seen == [node.op for node in fgraph.toposort()]
    np.testing.assert_allclose(outputs[0].data, [8.0, 12.0])


def test_wrap_linker_leaves_running_to_the_wrapper():
    from lucent.link.basic import WrapLinker

    linker = WrapLinker([PythonLinker(allow_gc=False)], lambda fgraph, i, node, thunk: None)
    fn, inputs, outputs = linker.accept(_two_node_graph()).make_thunk()
    inputs[0].data = [1.0]
    inputs[1].data = [1.0]
    fn()
    assert outputs[0].data is None


def test_wrap_linker_needs_node_linkers():
    from lucent.link.basic import WrapLinker

    with pytest.raises(TypeError, match="make_all"):
        WrapLinker([Linker()], lambda *a: None).accept(_two_node_graph()).make_thunk()
