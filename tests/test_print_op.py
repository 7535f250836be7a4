"""``Print``: an identity that prints its value when the graph runs, on both paths."""

import pickle

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.printing import Print
from tests.helpers import run


@pytest.mark.not_debugmode(
    reason="DebugMode runs Print on both paths and again in its checks, so the text is printed more than once"
)
def test_prints_message_and_str_and_passes_the_value_through(capsys):
    x = lt.dvector("x")
    out = run(Print("hello")(x * 2) + 1, {x: np.array([1.0, 2.0])})
    np.testing.assert_array_equal(out, [3.0, 5.0])
    assert capsys.readouterr().out == "hello __str__ = [2. 4.]\n"


@pytest.mark.not_debugmode(
    reason="DebugMode runs Print on both paths and again in its checks, so the text is printed more than once"
)
def test_attrs_print_attributes_and_call_methods(capsys):
    x = lt.dvector("x")
    run(Print("v", attrs=("shape", "sum"))(x), {x: np.array([1.0, 2.0, 3.0])})
    assert capsys.readouterr().out == "v shape = (3,)\nv sum = 6.0\n"


def test_global_fn_replaces_the_printing(capsys):
    seen = []
    x = lt.dvector("x")
    op = Print("collect", global_fn=lambda op, value: seen.append((op.message, value.copy())))
    run(op(x) * 3, {x: np.array([1.0])})
    assert capsys.readouterr().out == ""
    assert seen[0][0] == "collect"
    np.testing.assert_array_equal(seen[0][1], [1.0])


def test_runs_every_call_and_is_not_constant_folded(capsys):
    y = lt.as_tensor_variable(1.0) * lt.as_tensor_variable(3.0)
    f = lucent.function([], Print("c")(y), mode="FAST_RUN")
    assert any(isinstance(n.op, Print) for n in f.maker.fgraph.toposort())
    f()
    f()
    assert capsys.readouterr().out == "c __str__ = 3.0\nc __str__ = 3.0\n"


def test_gradient_shape_and_view():
    x = lt.dvector("x")
    p = Print("g")(x)
    assert Print.view_map == {0: [0]}
    g = lucent.function([x], lucent.grad((p ** 2).sum(), x), mode="FAST_COMPILE")
    np.testing.assert_allclose(g(np.array([1.0, 2.0])), [2.0, 4.0])
    assert Print("s").infer_shape(None, p.owner, [("n",)]) == [("n",)]


def test_props_pickle_and_errors():
    assert Print("a") == Print("a") and Print("a") != Print("b")
    assert Print("a", attrs=("shape",)) != Print("a")
    op = pickle.loads(pickle.dumps(Print("p", attrs=["shape"])))
    assert op.attrs == ("shape",) and op.message == "p"
    with pytest.raises(TypeError, match="sequence of attribute names"):
        Print("m", attrs="shape")
    with pytest.raises(TypeError, match="callable"):
        Print("m", global_fn=3)
    x = lt.dvector("x")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        lucent.function([x], Print("m", attrs=("nope",))(x), mode="FAST_COMPILE")([1.0])
