"""Seed 002: In, Out, the input shortcuts, value/container access, errors."""

import numpy as np
import pytest

import lucent
import lucent.tensor as T
from lucent import In, Out, function

# Compiles with the default mode: run each test on both paths.
pytestmark = pytest.mark.both_modes


def test_inc_example_defaults_and_updates():
    u, x, s = T.scalars("u", "x", "s")
    inc = function([u, In(x, value=3), In(s, update=(s + x * u), value=10.0)], [])
    assert inc(5) == []  # update s with 10+3*5
    assert inc[s] == 25.0
    inc(3, 4)  # update s with 25 + 3*4
    assert inc[s] == 37.0
    assert inc[x] == 3.0  # the override value of 4 was only temporary
    inc(3, 4, 7)  # update s with 7 + 3*4
    assert inc[s] == 19.0
    inc[s] = 10
    assert inc[s] == 10.0


def test_value_and_container_access():
    a, b, c = T.scalars("xys")  # set the internal names of graph nodes
    assert c.name == "s"
    fn = function([a, b, ((c, c + a + b), 10.0)], [])
    assert fn["s"] is fn.value[c]
    assert fn["s"] is fn.container[c].value
    assert fn["s"] == 10.0
    fn(1, 2)
    assert fn["s"] == 13.0
    fn["s"] = 99.0
    fn(1, 0)
    assert fn["s"] == 100.0
    fn.value[c] = 99.0
    fn(1, 0)
    assert fn["s"] == 100.0
    assert fn["s"] == fn.value[c]
    assert fn["s"] == fn.container[c].value


def test_value_access_by_position_name_and_variable():
    a, b, c = T.scalars("xys")
    fn = function([a, b, ((c, c + a + b), 10.0)], [])
    assert fn.value[2] is fn.value["s"] is fn.value[c]
    assert fn.container[2] is fn.container["s"] is fn.container[c]
    fn.value[2] = 5.0
    assert fn["s"] == 5.0


def test_input_shortcuts_example():
    x = T.scalar()
    y = T.scalar("y")
    z = T.scalar("z")
    w = T.scalar("w")
    fn = function(inputs=[x, y, In(z, value=42), ((w, w + x), 0)], outputs=x + y + z)
    with pytest.raises(TypeError, match=r"^Missing required input: y$"):
        fn(1)
    assert fn["w"] == 0
    assert fn(1, 2) == 45  # z is 42, w goes 0 -> 1
    assert fn["w"] == 1
    assert fn(1, y=2) == 45  # w goes 1 -> 2
    assert fn["w"] == 2
    with pytest.raises(TypeError) as info:
        fn(x=1, y=2)
    assert str(info.value) == (
        "Unknown input or state: x. The function has 3 named inputs (y, z, w), and 1 unnamed "
        "input which thus cannot be accessed through keyword argument (use 'name=...' in a "
        "variable's constructor to give it a name)."
    )
    assert fn["w"] == 2  # the failed call changed nothing
    assert fn(1, 2, 3) == 6  # z is 3, w goes 2 -> 3
    assert fn["w"] == 3
    assert fn(1, z=3, y=2) == 6  # w goes 3 -> 4
    assert fn["w"] == 4
    assert fn(1, 2, w=400) == 45  # z is 42 again, w goes 400 -> 401
    assert fn["w"] == 401
    assert fn(1, 2) == 45  # w goes 401 -> 402
    assert fn["w"] == 402
    assert fn["z"] == 42


@pytest.mark.parametrize(
    "make, name, value, has_update",
    [
        (lambda r, up: r, "r", None, False),
        (lambda r, up: ("n", r), "n", None, False),
        (lambda r, up: (r, 5.0), "r", 5.0, False),
        (lambda r, up: ((r, up), 5.0), "r", 5.0, True),
        (lambda r, up: ("n", r, 5.0), "n", 5.0, False),
        (lambda r, up: ("n", (r, up), 5.0), "n", 5.0, True),
    ],
)
def test_the_six_shortcuts(make, name, value, has_update):
    from lucent.compile.io import normalize_input

    r = T.dscalar("r")
    up = r + 1
    inp = normalize_input(make(r, up))
    assert isinstance(inp, In)
    assert inp.variable is r
    assert inp.name == name
    assert inp.value == value
    assert (inp.update is up) == has_update


def test_in_defaults_and_autoname():
    x = T.dscalar("x")
    i = In(x)
    assert (i.name, i.value, i.update, i.mutable, i.strict, i.implicit) == (
        "x", None, None, False, False, False
    )
    assert In(x, autoname=False).name is None
    assert In(x, name="other").name == "other"


def test_in_implicit():
    from lucent.link.basic import Container

    x = T.dscalar("x")
    with pytest.raises(TypeError):
        In(x, implicit=True)  # requires a value
    c = Container(x, [np.float64(3.0)])
    assert In(x, value=c).implicit is True  # None -> True for a container
    assert In(x, value=3.0).implicit is False
    y = T.dscalar("y")
    f = function([y, In(x, value=c)], x + y)
    assert f(1.0) == 4.0
    with pytest.raises(TypeError, match="implicit"):
        f(1.0, x=2.0)
    with pytest.raises(TypeError, match="Too many"):
        f(1.0, 2.0)
    # implicit=False with a container: a given value overwrites its content.
    g = function([y, In(x, value=c, implicit=False)], x + y)
    assert g(1.0) == 4.0
    assert g(1.0, 10.0) == 11.0
    assert c.value == 10.0


def test_mutable_requires_borrow_semantics():
    x = T.dvector("x")
    i = In(x, value=np.zeros(2), mutable=True)
    assert i.mutable and i.borrow
    with pytest.raises(ValueError):
        In(x, mutable=True, borrow=False)


def test_strict_input():
    x = T.dvector("x")
    f = function([In(x, strict=True)], x * 2)
    with pytest.raises(TypeError):
        f([1.0, 2.0])
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2, 4])
    g = function([x], x * 2)
    np.testing.assert_array_equal(g([1.0, 2.0]), [2, 4])


def test_duplicate_names_raise():
    x = T.dscalar("a")
    y = T.dscalar("a")
    with pytest.raises(ValueError, match="named 'a'"):
        function([x, y], x + y)
    # Naming explicitly (or autoname=False) resolves it.
    f = function([x, In(y, name="b")], x + y)
    assert f(1, b=2) == 3
    g = function([x, In(y, autoname=False)], x + y)
    assert g(1, 2) == 3


def test_same_variable_twice_raises():
    x = T.dscalar("x")
    with pytest.raises(ValueError, match="twice"):
        function([x, x], x * 2)
    with pytest.raises(ValueError, match="twice"):
        function([x, In(x, name="other")], x * 2)


def test_outputs_forms():
    x, y, s = T.matrices("xys")
    fn1 = function([x], [x + x, Out((x + x).T, borrow=True)])
    res = fn1(np.asarray([[1, 0], [0, 1]]))
    assert isinstance(res, list) and len(res) == 2
    np.testing.assert_array_equal(res[0], [[2.0, 0.0], [0.0, 2.0]])
    np.testing.assert_array_equal(res[1], [[2.0, 0.0], [0.0, 2.0]])
    fn2 = function([x], [x + x])
    res = fn2(np.asarray([[1, 0], [0, 1]]))
    assert isinstance(res, list) and len(res) == 1
    np.testing.assert_array_equal(res[0], [[2.0, 0.0], [0.0, 2.0]])
    fn3 = function([x], outputs=x + x)
    res = fn3(np.asarray([[1, 0], [0, 1]]))
    assert isinstance(res, np.ndarray)
    np.testing.assert_array_equal(res, [[2.0, 0.0], [0.0, 2.0]])
    assert function([x], None, on_unused_input="ignore")(np.eye(2)) is None
    assert isinstance(function([x], Out(x + x))(np.eye(2)), np.ndarray)
    assert isinstance(function([x], (x + x, x * x))(np.eye(2)), list)


def test_out_borrow_default_false():
    x = T.dmatrix("x")
    assert Out(x).borrow is False
    assert Out(x, borrow=True).borrow is True
