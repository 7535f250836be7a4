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


def test_link_returns_one_linked_object_for_every_linker():
    """``link`` hands the compiler one declared object; ``make_thunk`` is the same as a triple."""
    from lucent.link.basic import Linked
    from lucent.link.numba.linker import NumbaLinker

    for linker, per_node in [(PythonLinker(allow_gc=False), True), (NumbaLinker(), False)]:
        fgraph = _two_node_graph()
        linked = linker.accept(fgraph).link()
        assert isinstance(linked, Linked)
        assert [c.type for c in linked.inputs] == [v.type for v in fgraph.inputs]
        linked.inputs[0].data = [1.0, 2.0]
        linked.inputs[1].data = [3.0, 4.0]
        linked()
        np.testing.assert_allclose(linked.outputs[0].data, [8.0, 12.0])
        if per_node:
            assert linked.order == fgraph.toposort() and len(linked.thunks) == len(linked.order)
            assert linked.program is None and not linked.allow_gc
        else:
            assert linked.thunks is None and linked.program is not None
        with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
            linked.nonexistent
        thunk, inputs, outputs = linker.accept(_two_node_graph()).make_thunk()
        assert isinstance(thunk, Linked) and inputs == thunk.inputs and outputs == thunk.outputs


def test_a_linker_with_only_make_thunk_still_links():
    from lucent.link.basic import Linked

    class OldStyle(Linker):
        def accept(self, fgraph, no_recycling=None):
            self.fgraph = fgraph
            return self

        def make_thunk(self, input_storage=None, output_storage=None, storage_map=None):
            return PythonLinker().accept(self.fgraph).make_thunk(input_storage, output_storage)

    linked = OldStyle().accept(_two_node_graph()).link()
    assert isinstance(linked, Linked)
    with pytest.raises(NotImplementedError, match="neither link nor make_thunk"):
        Linker().link()
