"""PythonLinker: node-by-node perform, storage reuse and garbage collection."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.graph.basic import Apply
from lucent.graph.fg import FunctionGraph
from lucent.graph.op import Op
from lucent.link.python import PythonLinker


class ReusingDouble(Op):
    """Doubles its input, writing into the previous output array when it can."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        out = output_storage[0][0]
        if out is not None and out.shape == x.shape:
            np.multiply(x, 2, out=out)
        else:
            output_storage[0][0] = x * 2


class NoOutput(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        pass


def _link(inputs, outputs, **kwargs):
    fg = FunctionGraph(inputs, outputs, clone=False)
    linker = PythonLinker(**kwargs).accept(fg)
    return fg, linker.make_all()


def test_runs_nodes_in_order():
    x = lt.dvector("x")
    y = (x * 2) + 1
    fg, (run, ins, outs, thunks, order, storage) = _link([x], [y])
    ins[0][0] = np.array([1.0, 2.0])
    run()
    np.testing.assert_array_equal(outs[0][0], [3.0, 5.0])
    assert len(thunks) == len(order) == len(fg.apply_nodes)


def test_output_storage_reused_between_runs():
    x = lt.dvector("x")
    y = ReusingDouble()(x)
    fg, (run, ins, outs, *_rest) = _link([x], [y])
    ins[0][0] = np.array([1.0, 2.0])
    run()
    first = outs[0][0]
    ins[0][0] = np.array([3.0, 4.0])
    run()
    assert outs[0][0] is first
    np.testing.assert_array_equal(first, [6.0, 8.0])


def test_gc_frees_intermediates():
    x = lt.dvector("x")
    mid = ReusingDouble()(x)
    y = ReusingDouble()(mid)
    _, (run, ins, outs, _t, _o, storage) = _link([x], [y], allow_gc=True)
    ins[0][0] = np.array([1.0])
    run()
    assert storage[mid][0] is None
    assert outs[0][0] is not None and ins[0][0] is not None
    _, (run, ins, outs, _t, _o, storage) = _link([x], [y], allow_gc=False)
    ins[0][0] = np.array([1.0])
    run()
    assert storage[mid][0] is not None


def test_gc_follows_config():
    import lucent

    x = lt.dvector("x")
    mid = ReusingDouble()(x)
    y = ReusingDouble()(mid)
    with lucent.config.change_flags(allow_gc=False):
        _, (run, ins, outs, _t, _o, storage) = _link([x], [y])
        ins[0][0] = np.array([1.0])
        run()
        assert storage[mid][0] is not None


def test_missing_output_is_an_error():
    x = lt.dvector("x")
    y = NoOutput()(x)
    _, (run, ins, *_rest) = _link([x], [y])
    ins[0][0] = np.array([1.0])
    with pytest.raises(ValueError, match="did not store"):
        run()


def test_constants_get_storage():
    x = lt.dvector("x")
    y = x + lt.constant(np.array([1.0, 1.0]))
    _, (run, ins, outs, *_rest) = _link([x], [y])
    ins[0][0] = np.array([1.0, 2.0])
    run()
    np.testing.assert_array_equal(outs[0][0], [2.0, 3.0])


def test_make_thunk_returns_containers():
    x = lt.dvector("x")
    fg = FunctionGraph([x], [x * 2], clone=False)
    thunk, ins, outs = PythonLinker().accept(fg).make_thunk()
    ins[0].value = [1.0, 2.0]
    thunk()
    np.testing.assert_array_equal(outs[0].value, [2.0, 4.0])
