"""``assume`` and the ``SpecifyAssumptions`` identity op, on both paths."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.assumptions import DIAGONAL, UNIQUE_INDICES, FactState, SpecifyAssumptions, assume, assumption_tags
from lucent.assumptions.specify import specify_assumption_rule  # noqa: F401
from lucent.gradient import grad
from tests.helpers import run


def test_assume_is_identity_at_run_time():
    x = lt.dmatrix("x")
    value = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(run(assume(x, diagonal=True) * 2, {x: value}), value * 2)


def test_specify_assumptions_op_contract():
    op = SpecifyAssumptions({"symmetric": FactState.FALSE, "diagonal": FactState.TRUE})
    assert op == SpecifyAssumptions({"diagonal": FactState.TRUE, "symmetric": FactState.FALSE})
    assert str(op) == "SpecifyAssumptions{diagonal, !symmetric}"
    assert op.view_map == {0: [0]}
    x = lt.dmatrix("x")
    node = op.make_node(x)
    out = [[None]]
    value = np.eye(2)
    op.perform(node, [value], out)
    assert out[0][0] is value
    with pytest.raises(ValueError, match="unknown assumption 'banana'"):
        SpecifyAssumptions({"banana": FactState.TRUE})
    with pytest.raises(TypeError):
        SpecifyAssumptions([("diagonal", FactState.TRUE)])


def test_assume_without_facts_returns_input_and_converts_constants():
    x = lt.dmatrix("x")
    assert assume(x) is x
    assert assume(x, symmetric=None) is x
    c = assume(np.eye(2), diagonal=True)
    assert isinstance(c.owner.op, SpecifyAssumptions)


def test_assume_shape_and_gradient_pass_through():
    x = lt.dmatrix("x")
    y = assume(x, symmetric=True)
    g = grad((y**2).sum(), x)
    f = lucent.function([x], [g, y.shape])
    gv, shape = f(np.ones((2, 3)))
    np.testing.assert_allclose(gv, 2 * np.ones((2, 3)))
    np.testing.assert_array_equal(shape, [2, 3])


def test_unique_indices_on_vector():
    idx = lt.lvector("idx")
    tags = assumption_tags([assume(idx, unique_indices=True)])
    assert "{uniq}" in tags.values()
    assert UNIQUE_INDICES.short_name == "uniq" and DIAGONAL.name == "diagonal"


def test_declarations_are_drained_before_compiling():
    x = lt.dmatrix("x")
    f = lucent.function([x], assume(assume(x, symmetric=True), positive_definite=True) + 1)
    assert not any(isinstance(n.op, SpecifyAssumptions) for n in f.maker.fgraph.apply_nodes)
    np.testing.assert_allclose(f(np.eye(2)), np.eye(2) + 1)


def test_undrained_declaration_runs_on_both_paths(lucent_mode):
    # Without rewrites the node reaches the linker: perform and the Numba kernel return the input.
    x = lt.dmatrix("x")
    linker = "py" if lucent_mode == "FAST_COMPILE" else "numba"
    mode = lucent.Mode(linker=linker, optimizer=None)
    f = lucent.function([x], assume(x, symmetric=True), mode=mode)
    assert any(isinstance(n.op, SpecifyAssumptions) for n in f.maker.fgraph.apply_nodes)
    np.testing.assert_array_equal(f(np.eye(2)), np.eye(2))
