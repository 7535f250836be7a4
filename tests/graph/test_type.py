"""The Type contract: defaults of ``lucent.graph.type.Type`` and how TensorType fills it in."""

import numpy as np
import pytest

from lucent import config
from lucent.graph.basic import Constant, Variable
from lucent.graph.type import DataType, Type
from lucent.graph.utils import MethodNotDefined
from lucent.tensor.type import TensorType


class IntType(Type):
    def filter(self, data, strict=False, allow_downcast=None):
        if type(data) is int:
            return data
        if not strict and isinstance(data, float) and data.is_integer():
            return int(data)
        raise TypeError(f"expected an int, got {data!r}")


# --- defaults of the base class -------------------------------------------------------

def test_base_filter_raises_method_not_defined():
    with pytest.raises(MethodNotDefined):
        Type().filter(1)
    with pytest.raises(MethodNotDefined):
        Type().get_size(())


def test_is_valid_value_uses_strict_filter():
    it = IntType()
    assert it.is_valid_value(3)
    assert not it.is_valid_value(3.0)  # strict by default
    assert it.is_valid_value(3.0, strict=False)
    assert it.value_validity_msg(3) == "value is valid"
    assert "expected an int" in it.value_validity_msg("x")


def test_values_eq_defaults():
    it = IntType()
    assert it.values_eq(2, 2) and not it.values_eq(2, 3)
    assert it.values_eq_approx(2, 2) and not it.values_eq_approx(2, 3)
    assert it.may_share_memory(it, it) and not it.may_share_memory([], [])
    assert it.get_shape_info(5) == 5


def test_make_variable_and_call():
    it = IntType()
    v = it.make_variable("v")
    assert isinstance(v, Variable) and v.type is it and v.name == "v" and v.owner is None
    w = it("w")
    assert w.type is it and w.name == "w"
    assert it().name is None
    c = it.make_constant(2.0)
    assert isinstance(c, Constant) and c.data == 2


def test_equality_defaults_to_identity():
    a, b = IntType(), IntType()
    assert a == a and a != b and hash(a) != hash(b)


def test_in_same_class_and_is_super_defaults():
    a, b = IntType(), IntType()
    assert a.in_same_class(a) is True and a.in_same_class(b) is False
    assert a.is_super(a) is True and a.is_super(b) is None


def test_filter_variable_and_convert_variable_defaults():
    a, b = IntType(), IntType()
    va, vb = a("va"), b("vb")
    assert a.filter_variable(va) is va
    assert a.convert_variable(va) is va and a.convert_variable(vb) is None
    with pytest.raises(TypeError, match="Cannot convert"):
        a.filter_variable(vb)
    with pytest.raises(TypeError):
        a.filter_variable(va, allow_convert=False) and a.filter_variable(vb, allow_convert=False)
    const = a.filter_variable(4.0)  # non-variables become constants
    assert isinstance(const, Constant) and const.data == 4 and const.type is a


def test_clone_builds_a_new_instance():
    class Sized(DataType):
        __props__ = ("n",)

        def __init__(self, n=0):
            self.n = n

        def filter(self, data, strict=False, allow_downcast=None):
            return data

    s = Sized(3)
    assert s.clone(4) == Sized(4) and s.clone(3) == s and hash(s.clone(3)) == hash(s)


def test_filter_inplace_default_not_implemented():
    with pytest.raises(NotImplementedError):
        IntType().filter_inplace(1, None)


# --- TensorType ----------------------------------------------------------------------

def test_tensortype_repr_and_structure():
    tt = TensorType("float64", (2, None))
    assert repr(tt) == "TensorType(float64, (2, ?))"
    assert str(tt) == "Matrix(float64, shape=(2, ?))"
    assert repr(TensorType("int8", ())) == "TensorType(int8, ())"
    assert repr(TensorType("float32", (None,))) == "TensorType(float32, (?,))"
    assert tt.ndim == 2 and tt.broadcastable == (False, False) and tt.dtype == "float64"
    assert str(TensorType("float64", (None,), name="vec")) == "vec"


def test_tensortype_broadcastable_keyword():
    with pytest.warns(DeprecationWarning, match="broadcastable"):
        tt = TensorType("float32", broadcastable=(True, False))
    assert tt.shape == (1, None) and tt.broadcastable == (True, False)
    assert tt == TensorType("float32", (1, None))
    with pytest.raises(ValueError):
        TensorType("float32", shape=(1,), broadcastable=(True,))
    assert TensorType("float32", shape=5).shape == (5,)  # an int is a 1-d shape
    with pytest.raises(ValueError):
        TensorType("float32", shape=(-1,))


def test_tensortype_equality_and_clone():
    a = TensorType("float64", (2, None))
    assert a == TensorType("float64", (2, None)) and hash(a) == hash(TensorType("float64", (2, None)))
    assert a != TensorType("float32", (2, None)) and a != TensorType("float64", (None, None))
    assert a.clone(shape=(None, 3)) == TensorType("float64", (None, 3))
    assert a.clone(dtype="int32") == TensorType("int32", (2, None))
    assert TensorType("floatX", ()).dtype == config.floatX


def test_tensortype_filter_strict():
    tt = TensorType("float64", (None,))
    a = np.ones(3)
    assert tt.filter(a, strict=True) is a
    with pytest.raises(TypeError, match="strict"):
        tt.filter([1.0, 2.0], strict=True)
    with pytest.raises(TypeError, match="dtype"):
        tt.filter(np.ones(3, dtype="float32"), strict=True)


def test_tensortype_filter_upcast_only_by_default():
    f32 = TensorType("float32", (None,))
    f64 = TensorType("float64", (None,))
    out = f64.filter(np.ones(2, dtype="float32"))
    assert out.dtype == "float64"
    with pytest.raises(TypeError, match="loss of precision"):
        f32.filter(np.ones(2, dtype="float64"))
    with pytest.raises(TypeError, match="loss of precision"):
        f32.filter(np.ones(2, dtype="float64"), allow_downcast=False)
    assert f32.filter(np.ones(2, dtype="float64"), allow_downcast=True).dtype == "float32"
    i8 = TensorType("int8", ())
    assert i8.filter(5).dtype == "int8"
    with pytest.raises(TypeError, match="accurately"):
        i8.filter(300)
    assert i8.filter(300, allow_downcast=True).dtype == "int8"


def test_tensortype_python_float_downcasts_only_to_floatx():
    with config.change_flags(floatX="float32"):
        f32 = TensorType("float32", ())
        assert f32.filter(0.1).dtype == "float32"  # allow_downcast=None: OK to floatX
        with pytest.raises(TypeError):
            f32.filter(0.1, allow_downcast=False)
    with config.change_flags(floatX="float64"):
        f32 = TensorType("float32", ())
        with pytest.raises(TypeError):
            f32.filter(0.1)  # float32 is not floatX any more
        assert f32.filter(0.5).dtype == "float32"  # exactly representable


def test_tensortype_filter_checks_rank_and_static_shape():
    tt = TensorType("float64", (2, None))
    with pytest.raises(TypeError, match="number of dimensions"):
        tt.filter(np.ones(2))
    with pytest.raises(TypeError, match="not compatible"):
        tt.filter(np.ones((3, 1)))
    assert tt.filter(np.ones((2, 7))).shape == (2, 7)
    with pytest.raises(TypeError):
        tt.filter("hello")
    assert tt.is_valid_value(np.ones((2, 3))) and not tt.is_valid_value([[1.0]])


def test_tensortype_filter_inplace_reuses_storage():
    tt = TensorType("float64", (None,))
    storage = np.zeros(3)
    out = tt.filter_inplace(np.ones(3), storage)
    assert out is storage and storage.tolist() == [1, 1, 1]
    assert tt.filter_inplace(np.ones(4), storage).shape == (4,)


def test_tensortype_values_eq():
    tt = TensorType("float64", (None,))
    assert tt.values_eq(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
    assert not tt.values_eq(np.array([1.0]), np.array([1.0, 2.0]))
    assert not tt.values_eq(np.array([1.0]), np.array([1.0], dtype="float32"))
    assert tt.values_eq(np.array([1.0]), np.array([1.0], dtype="float32"), force_same_dtype=False)


def test_tensortype_values_eq_approx_with_nan_and_inf():
    tt = TensorType("float64", (None,))
    a = np.array([1.0, np.nan, np.inf, -np.inf])
    assert tt.values_eq_approx(a, a.copy())
    assert tt.values_eq_approx(np.array([1.0]), np.array([1.0 + 1e-10]))
    assert not tt.values_eq_approx(np.array([1.0]), np.array([1.1]))
    assert not tt.values_eq_approx(np.array([np.inf]), np.array([-np.inf]))
    assert not tt.values_eq_approx(np.array([np.nan]), np.array([1.0]))
    assert tt.values_eq_approx(np.array([np.nan, 1.0]), np.array([3.0, 1.0]), allow_remove_nan=True)
    assert tt.values_eq_approx(np.array([np.inf, 1.0]), np.array([3.0, 1.0]), allow_remove_inf=True)
    assert not tt.values_eq_approx(np.ones(2), np.ones(3))
    # float32 gets a looser tolerance than float64
    f32 = TensorType("float32", (None,))
    x = np.array([1.0], dtype="float32")
    assert f32.values_eq_approx(x, x + np.float32(2e-6))
    assert not tt.values_eq_approx(np.array([1.0]), np.array([1.0 + 2e-4]))
    # values of different dtypes are different values (two paths disagreeing on a dtype is a bug)
    assert not tt.values_eq_approx(np.array([1], dtype="int8"), np.array([1.0], dtype="float16"))
    # integers compare exactly
    it = TensorType("int64", (None,))
    assert it.values_eq_approx(np.array([1, 2]), np.array([1, 2]))
    assert not it.values_eq_approx(np.array([1, 2]), np.array([1, 3]))


def test_tensortype_may_share_memory():
    tt = TensorType("float64", (None,))
    a = np.arange(6.0)
    assert tt.may_share_memory(a, a[2:])
    assert not tt.may_share_memory(a, a.copy())
    assert not tt.may_share_memory(a, 3)


def test_tensortype_shape_info_and_size():
    tt = TensorType("float32", (None, None))
    info = tt.get_shape_info(np.zeros((3, 4), dtype="float32"))
    assert info == (3, 4) and tt.get_size(info) == 48
    assert TensorType("float64", ()).get_size(()) == 8
    assert tt.get_size((0, 4)) == 0


# --- the PureType / CLinkerType split, singletons, conversion, transfers --------------------
from lucent.graph.type import (  # noqa: E402
    PureType,
    SingletonType,
    register_transfer,
    transfer,
)


def test_type_combines_pure_type_and_clinker_type():
    from lucent.link.c.interface import CLinkerType

    assert issubclass(Type, PureType) and issubclass(Type, CLinkerType)
    assert isinstance(TensorType("float64", (None,)), CLinkerType)
    with pytest.raises(MethodNotDefined):
        TensorType("float64", (None,)).c_declare("x", {})

    class PyOnly(PureType):
        def filter(self, data, strict=False, allow_downcast=None):
            return data

    v = PyOnly()("v")
    assert v.type.filter(3) == 3 and not hasattr(v.type, "c_declare")


def test_singleton_type_gets_equality_for_free():
    class Unit(SingletonType):
        def filter(self, data, strict=False, allow_downcast=None):
            if data is not None:
                raise TypeError(f"Unit only holds None, got {data!r}")
            return data

    class Other(SingletonType):
        def filter(self, data, strict=False, allow_downcast=None):
            return data

    assert Unit() == Unit() and hash(Unit()) == hash(Unit()) and str(Unit()) == "Unit"
    assert Unit() != Other()
    assert Unit().filter_variable(Unit()("u")).type == Unit()


class Thingy(Type):
    def __init__(self, n):
        self.n = n

    def filter(self, data, strict=False, allow_downcast=None):
        return data

    def __eq__(self, other):
        return type(other) is type(self) and other.n == self.n

    def __hash__(self):
        return hash((type(self), self.n))


class WideThingy(Thingy):
    def is_super(self, other):
        return self.n <= other.n or None


def test_convert_variable_default():
    v1, v2 = Variable(Thingy(1), None), Variable(Thingy(2), None)
    assert Thingy(1).convert_variable(v1) is v1
    assert Thingy(1).convert_variable(v2) is None
    with pytest.raises(NotImplementedError, match="cannot narrow"):
        Thingy(1).convert_variable(Variable(WideThingy(0), None))


def test_transfer_to_cpu_and_registered_targets():
    import lucent.tensor as lt

    x = lt.dvector("x")
    assert x.transfer("cpu") is x
    with pytest.raises(ValueError, match="'gpu'"):
        x.transfer("gpu")
    marker = []

    def to_gpu(var, target):
        if target == "gpu":
            marker.append(var)
            return var.copy() if hasattr(var, "copy") else var
        return None

    register_transfer(to_gpu)
    try:
        moved = transfer(x, "gpu")
        assert marker == [x] and moved.type == x.type
        assert x.transfer("cpu") is x
    finally:
        from lucent.graph import type as type_module

        type_module._transfer_functions.remove(to_gpu)
    with pytest.raises(TypeError, match="function"):
        register_transfer("cpu")
