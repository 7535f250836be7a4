"""TensorSharedVariable and the tensor / scalar shared constructors."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.tensor.sharedvar import TensorSharedVariable, scalar_constructor, tensor_constructor


def test_ndarray_gives_tensor_shared_variable():
    s = lucent.shared(np.zeros((2, 3), dtype="float32"), name="W")
    assert isinstance(s, TensorSharedVariable)
    assert s.type == lt.TensorType("float32", (None, None))
    assert s.name == "W" and s.ndim == 2 and s.dtype == "float32"


def test_operators_work_on_shared():
    s = lucent.shared(np.array([1.0, 2.0]))
    f = lucent.function([], (s * 2).sum())
    assert f() == 6.0


def test_shape_and_broadcastable_keywords():
    s = lucent.shared(np.zeros((1, 3)), shape=(1, None))
    assert s.type.shape == (1, None)
    with pytest.warns(DeprecationWarning, match="broadcastable"):
        b = lucent.shared(np.zeros((1, 3)), broadcastable=(True, False))
    assert b.type.shape == (1, None)
    with pytest.raises(ValueError):
        lucent.shared(np.zeros((1, 3)), shape=(1,))
    with pytest.raises(TypeError):
        lucent.shared(np.zeros((2, 3)), shape=(1, None))  # value does not fit


def test_borrow():
    data = np.zeros(3)
    s = lucent.shared(data, borrow=True)
    assert s.get_value(borrow=True) is data
    c = lucent.shared(data)
    assert c.get_value(borrow=True) is not data


@pytest.mark.parametrize(
    "value, dtype",
    [(3, "int64"), (1.5, "float64"), (True, "bool"), (1 + 2j, "complex128"),
     (np.float32(2), "float32"), (np.int8(1), "int8")],
)
def test_scalar_constructor_dtypes(value, dtype):
    s = lucent.shared(value)
    assert isinstance(s, TensorSharedVariable)
    assert s.type == lt.TensorType(dtype, ())


def test_scalar_strict():
    s = lucent.shared(3, strict=True)
    with pytest.raises(TypeError):
        s.set_value(4)
    s.set_value(np.array(4, dtype="int64"))
    assert s.get_value() == 4


def test_constructors_decline_other_values():
    with pytest.raises(TypeError):
        tensor_constructor(3)
    with pytest.raises(TypeError):
        scalar_constructor(np.zeros(2))
    with pytest.raises(TypeError):
        tensor_constructor(np.zeros(2), target="gpu")


def test_set_value_casting_rules():
    s = lucent.shared(np.zeros(2, dtype="float32"))
    with pytest.raises(TypeError):
        s.set_value(np.zeros(2))
    d = lucent.shared(np.zeros(2, dtype="float32"), allow_downcast=True)
    d.set_value(np.ones(2))
    assert d.get_value().dtype == np.float32


def test_zero():
    s = lucent.shared(np.ones(2))
    s.zero()
    np.testing.assert_array_equal(s.get_value(), [0, 0])


def test_masked_arrays_are_refused():
    with pytest.raises(NotImplementedError, match="MaskedArrays are not supported"):
        lucent.shared(np.ma.masked_greater(np.arange(4), 2))


def test_scalar_shared_variable_is_a_deprecated_alias():
    from lucent.tensor import sharedvar

    with pytest.warns(FutureWarning, match="deprecated"):
        assert sharedvar.ScalarSharedVariable is TensorSharedVariable
    with pytest.raises(AttributeError, match="no attribute"):
        sharedvar.NoSuchThing


def test_shape_of_shared_is_a_vector_of_lengths():
    s = lucent.shared(np.zeros((2, 4)))
    f = lucent.function([], s.shape, mode="FAST_RUN")
    kinds = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    assert kinds == ["Shape_i", "Shape_i", "MakeVector"]
    np.testing.assert_array_equal(f(), [2, 4])
    s.set_value(np.zeros((3, 1)))
    np.testing.assert_array_equal(f(), [3, 1])
