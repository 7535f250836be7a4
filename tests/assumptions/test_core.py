"""The three-valued facts, their implications and the graph feature that infers them."""

import pytest

import lucent.tensor as lt
from lucent.assumptions import (
    ALL_KEYS,
    DIAGONAL,
    LOWER_TRIANGULAR,
    ORTHOGONAL,
    PERMUTATION,
    POSITIVE_DEFINITE,
    SELECTION,
    SYMMETRIC,
    UPPER_TRIANGULAR,
    AssumptionFeature,
    ConflictingAssumptionsError,
    FactState,
    assume,
    check_assumption,
)
from lucent.graph.features import AlreadyThere
from lucent.graph.fg import FunctionGraph


def _feature(*outputs):
    fgraph = FunctionGraph(outputs=list(outputs), clone=False)
    feature = AssumptionFeature()
    fgraph.attach_feature(feature)
    return fgraph, feature


def test_factstate_joins_as_evidence_and_has_no_truth_value():
    assert FactState.join(FactState.UNKNOWN, FactState.TRUE) is FactState.TRUE
    assert FactState.join(FactState.TRUE, FactState.FALSE) is FactState.CONFLICT
    with pytest.raises(TypeError, match="no boolean value"):
        bool(FactState.TRUE)


def test_implications_forward_and_backward():
    x = lt.dmatrix("x")
    d = assume(x, diagonal=True)
    _, f = _feature(d)
    for key in (LOWER_TRIANGULAR, UPPER_TRIANGULAR, SYMMETRIC):
        assert f.check(d, key)
    not_sym = assume(x, symmetric=False)
    _, f = _feature(not_sym)
    assert f.get(not_sym, POSITIVE_DEFINITE) is FactState.FALSE
    assert f.get(not_sym, DIAGONAL) is FactState.FALSE
    assert f.get(not_sym, ORTHOGONAL) is FactState.UNKNOWN
    perm = assume(x, permutation=True)
    _, f = _feature(perm)
    assert f.check(perm, SELECTION) and f.check(perm, ORTHOGONAL)


def test_conflict_is_reported_at_query():
    x = lt.dmatrix("x")
    y = assume(assume(x, diagonal=True), diagonal=False)
    _, f = _feature(y)
    with pytest.raises(ConflictingAssumptionsError, match="diagonal"):
        f.get(y, DIAGONAL)
    # A declared FALSE is taken as given over a fact only implied by another declaration.
    z = assume(x, diagonal=True, symmetric=False)
    _, f = _feature(z)
    assert f.get(z, SYMMETRIC) is FactState.FALSE


def test_feature_attaches_once_and_check_assumption_attaches_it():
    x = lt.dmatrix("x")
    y = assume(x, orthogonal=True)
    fgraph = FunctionGraph(outputs=[y], clone=False)
    assert check_assumption(fgraph, y, ORTHOGONAL)
    assert isinstance(fgraph.assumption_feature, AssumptionFeature)
    with pytest.raises(AlreadyThere):
        AssumptionFeature().on_attach(fgraph)
    assert not check_assumption(None, y, ORTHOGONAL)


def test_replacement_carries_facts_to_the_new_variable():
    x = lt.dmatrix("x")
    declared = assume(x, symmetric=True)
    out = lt.exp(declared)
    fgraph, f = _feature(out)
    assert f.check(out, SYMMETRIC)
    fgraph.replace(declared, x)
    assert f.check(x, SYMMETRIC)
    assert f.check(fgraph.outputs[0], SYMMETRIC)


def test_unknown_is_reprobed_after_a_replacement():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    out = lt.exp(x)
    fgraph = FunctionGraph(inputs=[x, y], outputs=[out], clone=False)
    f = AssumptionFeature()
    fgraph.attach_feature(f)
    assert f.get(out, SYMMETRIC) is FactState.UNKNOWN
    fgraph.replace(x, assume(y, symmetric=True))
    assert f.check(fgraph.outputs[0], SYMMETRIC)


def test_keys_have_short_names():
    assert [k.short_name for k in ALL_KEYS] == ["diag", "tril", "triu", "sym", "pd", "orth", "sel", "perm", "uniq"]
    assert repr(PERMUTATION) == "permutation"
