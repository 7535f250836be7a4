"""Seed 004: the Type contract, TensorType comparisons and the DoubleType example."""

import numpy as np
import pytest

import lucent
from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op
from lucent.graph.type import Type
from lucent.graph.utils import MethodNotDefined
from lucent.tensor.type import TensorType


# --- TensorType comparisons ---------------------------------------------------------

@pytest.fixture
def v1_v2():
    return TensorType("float64", (2, None))(), TensorType("float64", (2, 1))()


def test_tensortype_reprs(v1_v2):
    v1, v2 = v1_v2
    assert repr(v1.type) == "TensorType(float64, (2, ?))"
    assert repr(v2.type) == "TensorType(float64, (2, 1))"


def test_in_same_class_and_is_super(v1_v2):
    v1, v2 = v1_v2
    assert v1.type.in_same_class(v2.type) is False  # dim 1 broadcastable in v2 only
    assert v1.type.is_super(v2.type) is True
    assert v2.type.is_super(v1.type) is False


def test_filter_variable_narrows(v1_v2):
    v1, v2 = v1_v2
    out = v1.type.filter_variable(v2)
    assert out is v2 and repr(out) == "<TensorType(float64, (2, 1))>"


def test_filter_variable_other_direction_adds_specify_shape(v1_v2, capsys):
    v1, v2 = v1_v2
    v3 = v2.type.filter_variable(v1)
    assert type(v3.owner.op).__name__ == "SpecifyShape"
    assert repr(v3) == "SpecifyShape.0"
    lucent.dprint(v3, print_type=True)
    assert capsys.readouterr().out == (
        "SpecifyShape [id A] <TensorType(float64, (2, 1))>\n"
        " |<TensorType(float64, (2, ?))> [id B] <TensorType(float64, (2, ?))>\n"
        " |TensorConstant{2} [id C] <TensorType(int8, ())>\n"
        " |TensorConstant{1} [id D] <TensorType(int8, ())>\n"
    )


def test_convert_variable_none_for_incompatible():
    a = TensorType("float64", (2, None))
    assert a.convert_variable(TensorType("float32", (2, None))()) is None
    assert a.convert_variable(TensorType("float64", (None,))()) is None
    with pytest.raises(TypeError, match="Cannot convert"):
        a.filter_variable(TensorType("float64", (3, None))())


# --- the contract's defaults ------------------------------------------------------------

class Minimal(Type):
    def filter(self, data, strict=False, allow_downcast=None):
        if isinstance(data, str):
            return data
        raise TypeError("expected a str")


def test_contract_defaults():
    m = Minimal()
    assert m.is_valid_value("a") and not m.is_valid_value(1)
    assert m.values_eq("a", "a") and m.values_eq_approx("a", "a") and not m.values_eq_approx("a", "b")
    v = m.make_variable("v")
    assert isinstance(v, Variable) and v.type is m and v.name == "v"
    assert m("w").type is m and m() .name is None
    assert m == m and m != Minimal() and hash(m) == hash(m)
    assert m.in_same_class(m) and not m.in_same_class(Minimal())
    assert m.is_super(m) and m.is_super(Minimal()) is None
    with pytest.raises(MethodNotDefined):
        Type().filter("a")
    assert isinstance(m.clone(), Minimal) and m.clone() is not m


def test_filter_inplace_may_reuse_storage():
    tt = TensorType("float64", (None,))
    old = np.zeros(2)
    assert tt.filter_inplace(np.array([1.0, 2.0]), old) is old


def test_may_share_memory_and_memory_profile_hooks():
    tt = TensorType("float64", (None, None))
    a = np.zeros((3, 5))
    assert tt.may_share_memory(a, a[:1]) and not tt.may_share_memory(a, np.zeros(1))
    assert tt.get_size(tt.get_shape_info(a)) == a.nbytes


# --- the DoubleType example ------------------------------------------------------------------

def filter(x, strict=False, allow_downcast=None):
    if strict:
        if isinstance(x, float):
            return x
        else:
            raise TypeError("Expected a float!")
    elif allow_downcast:
        return float(x)
    else:  # covers both the False and None cases.
        x_float = float(x)
        if x_float == x:
            return x_float
        else:
            raise TypeError(
                "The double type cannot accurately represent "
                f"value {x} (of type {type(x)}): you must explicitly "
                "allow downcasting if you want to do this."
            )


def values_eq_approx(x, y, tolerance=1e-4):
    return abs(x - y) / (abs(x) + abs(y)) < tolerance


class DoubleType(Type):
    def filter(self, x, strict=False, allow_downcast=None):
        return filter(x, strict, allow_downcast)

    def values_eq_approx(self, x, y, tolerance=1e-4):
        return values_eq_approx(x, y, tolerance)

    def __str__(self):
        return "double"


double = DoubleType()


class DoubleAdd(Op):
    """Adds two doubles: the smallest op over a user-defined Type."""

    __props__ = ()

    def make_node(self, x, y):
        x = double.filter_variable(x)
        y = double.filter_variable(y)
        return Apply(self, [x, y], [double()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + inputs[1]


def test_double_filter():
    assert double.filter(1.5, strict=True) == 1.5
    with pytest.raises(TypeError, match="Expected a float"):
        double.filter(1, strict=True)
    assert double.filter(3) == 3.0 and isinstance(double.filter(3), float)
    assert double.filter(np.float32(0.1), allow_downcast=True) == float(np.float32(0.1))
    with pytest.raises(TypeError, match="cannot accurately represent"):
        double.filter(2**60 + 1)
    with pytest.raises(TypeError, match="cannot accurately represent"):
        double.filter(2**60 + 1, allow_downcast=False)
    assert double.filter(2**60 + 1, allow_downcast=True) == float(2**60)


def test_double_values_eq_approx():
    a = 0.1
    six = a + a + a + a + a + a
    assert six != 6 * a
    assert double.values_eq_approx(six, 6 * a)
    assert not double.values_eq_approx(1.0, 1.1)
    assert double.values_eq_approx(1.0, 1.00001, tolerance=1e-4)
    assert not double.values_eq_approx(1.0, 1.00001, tolerance=1e-6)


def test_double_instances_are_not_equal():
    double1 = DoubleType()
    double2 = DoubleType()
    assert (double1 == double2) is False


def test_double_with_eq_override():
    class EqDouble(DoubleType):
        def __eq__(self, other):
            return type(self) == type(other)

        def __hash__(self):
            return hash(type(self))

    assert EqDouble() == EqDouble()


@pytest.mark.both_modes
def test_double_in_a_compiled_function():
    x, y = double("x"), double("y")
    z = DoubleAdd()(x, y)
    assert z.type is double
    f = lucent.function([x, y], z)
    assert f(1.5, 2.25) == 3.75
    assert f(1, 2) == 3.0 and isinstance(f(1, 2), float)  # ints are filtered to floats
    with pytest.raises(TypeError, match="cannot accurately represent"):
        f(2**60 + 1, 0.0)
    assert DoubleAdd()(x, 2.0).owner.inputs[1].data == 2.0  # constants via filter_variable
