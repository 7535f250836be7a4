"""PyTensor's lazy-thunk protocol (``lucent.link.python.lazy``) and ``VMLinker``."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.ifelse import ifelse
from lucent.link.vm import VMLinker


class Pick(Op):
    """``pick(c, a, b)``: a lazy thunk that asks for ``c`` and then only ``a`` or ``b``."""

    __props__ = ()

    def make_node(self, c, a, b):
        return Apply(self, [lt.as_tensor_variable(c), a, b], [a.type()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl):
        done = [compute_map[v] for v in node.inputs]
        cells = [storage_map[v] for v in node.inputs]
        out = storage_map[node.outputs[0]]
        out_done = compute_map[node.outputs[0]]

        def thunk():
            if not done[0][0]:
                return [0]
            k = 1 if cells[0][0] else 2
            if not done[k][0]:
                return [k]
            out[0] = cells[k][0].copy()
            out_done[0] = True
            return []

        thunk.lazy = True
        return thunk

    def perform(self, node, inputs, output_storage):
        raise NotImplementedError("Pick runs through its own thunk")


class Fails(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl):
        def thunk():
            raise ZeroDivisionError("Fails ran")

        thunk.lazy = False
        return thunk


def _mode(**kwargs):
    return lucent.Mode(linker=VMLinker(**kwargs), optimizer="fast_compile")


def test_lazy_thunk_asks_only_for_what_it_needs():
    c = lt.iscalar("c")
    x, y = lt.dvectors("x", "y")
    out = Pick()(c, x * 2, Fails()(y))
    for linker in (VMLinker(), lucent.link.python.PythonLinker()):
        f = lucent.function([c, x, y], out, mode=lucent.Mode(linker=linker, optimizer="fast_compile"))
        np.testing.assert_allclose(f(1, np.ones(2), np.ones(2)), [2.0, 2.0])
        with pytest.raises(ZeroDivisionError, match="Fails ran"):
            f(0, np.ones(2), np.ones(2))


def test_not_lazy_runs_everything():
    c = lt.iscalar("c")
    x, y = lt.dvectors("x", "y")
    f = lucent.function([c, x, y], Pick()(c, x, Fails()(y)), mode=_mode(lazy=False))
    with pytest.raises(ZeroDivisionError):
        f(1, np.ones(2), np.ones(2))
    with lucent.config.change_flags(vm__lazy=False):
        g = lucent.function([c, x, y], ifelse(c, x, Fails()(y)), mode=_mode())
        with pytest.raises(ZeroDivisionError):
            g(1, np.ones(2), np.ones(2))


def test_lazy_ops_and_ifelse_mix():
    c, d = lt.iscalars("c", "d")
    x, y = lt.dvectors("x", "y")
    inner = ifelse(d, x + 1, Fails()(x))
    out = Pick()(c, inner * 10, Fails()(y))
    f = lucent.function([c, d, x, y], out, mode=_mode(lazy=True))
    np.testing.assert_allclose(f(1, 1, np.zeros(2), np.zeros(2)), [10.0, 10.0])


def test_callbacks_and_attributes():
    c = lt.iscalar("c")
    x = lt.dvector("x")
    seen, given = [], []
    linker = VMLinker(
        callback=lambda node, thunk, storage_map, compute_map: seen.append(str(node.op)),
        callback_input=lambda var, value: given.append(var.name),
        use_cloop=False,
    )
    assert linker.use_cloop is False and linker.allow_partial_eval is None
    f = lucent.function([c, x], ifelse(c, lt.exp(x), lt.log(x)), mode=lucent.Mode(linker=linker, optimizer=None))
    f(1, np.ones(2))
    assert "c" in given and "x" in given
    assert any("exp" in s.lower() for s in seen) and not any("log" in s.lower() for s in seen)
    with pytest.raises(ValueError, match="lazy"):
        VMLinker(lazy="yes")


def test_vm_lazy_flag_values():
    with lucent.config.change_flags(vm__lazy=True):
        assert lucent.config.vm__lazy is True
    with pytest.raises(ValueError):
        lucent.config.vm__lazy = "sometimes"
    assert lucent.config.vm__lazy is None
