"""The typed-list ops, checked against Python's own list methods on both paths.

A graph holding a typed list runs on the Python linker even in FAST_RUN
(lucent has no Numba representation of lists of arrays): the [numba]
variants check that this fallback is taken with its warning and computes
the same values.
"""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.io import In
from lucent.typed_list import (
    Append,
    TypedListType,
    append,
    count,
    extend,
    getitem,
    index_,
    insert,
    length,
    make_list,
    remove,
    reverse,
)
from tests.helpers import current_mode, run

A = np.arange(4.0).reshape(2, 2)
B = np.zeros((3, 1))
C = np.full((1, 2), 7.0)


def _run(outputs, givens):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Python linker.*")
        return run(outputs, givens)


def _eq(got, want):
    assert isinstance(got, list)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_ops_match_python_lists():
    x = TypedListType(lt.dmatrix)()
    y = TypedListType(lt.dmatrix)()
    m = lt.dmatrix()
    i = lt.lscalar()
    outs = [
        append(x, m), extend(x, y), insert(x, i, m), remove(x, m), reverse(x),
        index_(x, m), count(x, m), length(x), getitem(x, i), getitem(x, slice(1, None)),
        x.append(m), x[0], x.length(), x.ind(m), x.count(m),
    ]
    (ap, ex, ins, rm, rev, ind, cnt, ln, gi, sl, ap2, first, ln2, ind2, cnt2) = _run(
        outs, {x: [A, B, C, B], y: [C], m: B, i: -1}
    )
    _eq(ap, [A, B, C, B, B])
    _eq(ex, [A, B, C, B, C])
    _eq(ins, [A, B, C, B, B])
    _eq(rm, [A, C, B])
    _eq(rev, [B, C, B, A])
    assert int(ind) == 1 and int(cnt) == 2 and int(ln) == 4
    assert np.asarray(ind).dtype == "int64" and np.asarray(ln).dtype == "int64"
    np.testing.assert_array_equal(gi, B)
    _eq(sl, [B, C, B])
    _eq(ap2, [A, B, C, B, B])
    np.testing.assert_array_equal(first, A)
    assert int(ln2) == 4 and int(ind2) == 1 and int(cnt2) == 2


def test_make_list_and_nested_lists():
    a, b = lt.dvector(), lt.dvector()
    lst = make_list([a, b])
    assert lst.type == TypedListType(lt.dvector)
    nested = TypedListType(lt.dvector, depth=1)()
    assert nested.type.get_depth() == 1 and nested.ttype == TypedListType(lt.dvector)
    out, inner = _run([lst.append(a * 2), nested[1]], {a: [1.0, 2.0], b: [3.0], nested: [[[0.0]], [[1.0], [2.0, 3.0]]]})
    _eq(out, [[1.0, 2.0], [3.0], [2.0, 4.0]])
    _eq(inner, [[1.0], [2.0, 3.0]])


def test_inputs_are_not_changed_and_added_elements_are_copied():
    x = TypedListType(lt.dvector)()
    m = lt.dvector()
    value, elem = [np.ones(2)], np.zeros(2)
    out = _run(append(x, m), {x: value, m: elem})
    assert len(value) == 1
    assert out[1] is not elem


def test_missing_element_and_bad_index_raise():
    x = TypedListType(lt.dvector)()
    m = lt.dvector()
    with pytest.raises(ValueError, match="not in the list"):
        _run(remove(x, m), {x: [np.ones(1)], m: np.zeros(1)})
    with pytest.raises(ValueError, match="not in the list"):
        _run(index_(x, m), {x: [np.ones(1)], m: np.zeros(1)})
    i = lt.lscalar()
    with pytest.raises(IndexError, match="out of range"):
        _run(getitem(x, i), {x: [np.ones(1)], i: 3})


def test_make_node_errors():
    x = TypedListType(lt.dvector)()
    with pytest.raises(TypeError, match="list holds"):
        append(x, lt.dmatrix())
    with pytest.raises(TypeError, match="TypedList variable"):
        append(lt.dvector(), lt.dvector())
    with pytest.raises(TypeError, match="same type"):
        make_list([lt.dvector(), lt.dmatrix()])
    with pytest.raises(TypeError, match="index"):
        getitem(x, 1.5)
    with pytest.raises(TypeError, match="length"):
        len(x)


def test_fast_run_falls_back_to_python_linker_with_a_warning():
    if current_mode() != "FAST_RUN":
        pytest.skip("only the fast path falls back")
    x = TypedListType(lt.dvector)()
    with pytest.warns(UserWarning, match="Python linker"):
        f = lucent.function([x], length(x), mode="FAST_RUN")
    assert int(f([np.ones(1), np.ones(2)])) == 2


def test_inplace_rewrite_only_with_a_mutable_input():
    x = TypedListType(lt.dvector)()
    m = lt.dvector()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Python linker.*")
        f = lucent.function([In(x, mutable=True), m], append(x, m), mode="FAST_RUN")
        g = lucent.function([x, m], append(x, m), mode="FAST_RUN")
    [node] = f.maker.fgraph.toposort()
    assert isinstance(node.op, Append) and node.op.inplace
    [node] = g.maker.fgraph.toposort()
    assert not node.op.inplace
    value = [np.ones(1)]
    g(value, np.zeros(1))
    assert len(value) == 1
    np.testing.assert_array_equal(f(value, np.zeros(1))[1], [0.0])
