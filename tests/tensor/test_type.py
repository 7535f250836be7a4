"""``lucent.tensor.type``: TensorType's PyTensor 3 surface and the variable constructors."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.tensor import type as ltype
from lucent.tensor.shape import SpecifyShape
from lucent.tensor.type import TensorType, tensor
from lucent.tensor.exceptions import NotANumberError, ValueOutOfRangeError
from tests.helpers import run


# --- printing ----------------------------------------------------------------------

@pytest.mark.parametrize(
    "shape, text",
    [((), "Scalar(float64, shape=())"), ((None,), "Vector(float64, shape=(?,))"),
     ((2, 3), "Matrix(float64, shape=(2, 3))"), ((1, None, 4), "Tensor3(float64, shape=(1, ?, 4))")],
)
def test_str_names_the_rank_and_repr_keeps_the_documented_form(shape, text):
    t = TensorType("float64", shape)
    assert str(t) == text
    dims = ", ".join("?" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "")
    assert repr(t) == f"TensorType(float64, ({dims}))"
    assert repr(t()) == f"<TensorType(float64, ({dims}))>"


def test_dprint_styles_use_repr_and_str():
    x = TensorType("float64", (2, None))("x")
    ascii_text = lucent.dprint(x, print_type=True, file="str")
    assert "<TensorType(float64, (2, ?))>" in ascii_text
    unicode_text = lucent.dprint(x, print_type=True, style="unicode", file="str")
    assert "<Matrix(float64, shape=(2, ?))>" in unicode_text


# --- construction -------------------------------------------------------------------

def test_shape_entries_are_checked():
    assert TensorType("float64", shape=np.array([3, 1])).shape == (3, 1)
    assert all(type(s) is int for s in TensorType("float64", shape=np.array([3], dtype="int32")).shape)
    assert TensorType("float64", shape=4).shape == (4,)
    with pytest.raises(ValueError, match="boolean, integer or None"):
        TensorType("float64", shape=("1", "2"))
    with pytest.raises(ValueError, match=">= 0"):
        TensorType("float64", shape=(-1,))


def test_broadcastable_keyword_is_deprecated():
    with pytest.warns(DeprecationWarning, match="broadcastable"):
        t = TensorType("float64", broadcastable=(True, False))
    assert t.shape == (1, None)
    with pytest.warns(DeprecationWarning, match="broadcastable"):
        assert t.clone(broadcastable=(False, True)).shape == (None, 1)


def test_calling_a_type_with_shape_narrows_it():
    assert lt.fmatrix(shape=(1, None)).type == lt.frow
    assert lt.drow(shape=(1, 5)).type.shape == (1, 5)
    with pytest.raises(ValueError, match="incompatible"):
        lt.drow(shape=(None, None))
    with pytest.raises(ValueError, match="incompatible"):
        lt.fmatrix(shape=(3, 5)).type(shape=(4, 5))


def test_dtype_specs_and_groups():
    assert TensorType("float64", ()).c_element_type() == "npy_float64"
    assert TensorType("int32", (None,)).dtype_specs() == (int, "npy_int32", "NPY_INT32")
    assert TensorType("float32", ()).to_scalar_type().dtype == "float32"
    assert ltype.continuous_dtypes == ["float16", "float32", "float64", "complex64", "complex128"]
    assert "bool" in ltype.discrete_dtypes and "bool" not in ltype.integer_dtypes
    assert ltype.uint_dtypes == ["uint8", "uint16", "uint32", "uint64"]
    assert set(ltype.all_dtypes) == set(ltype.discrete_dtypes) | set(ltype.continuous_dtypes)


# --- values -----------------------------------------------------------------------------

def test_filter_rejects_variables_and_unaligned_arrays():
    t = TensorType("float64", (None,))
    with pytest.raises(TypeError, match="symbolic variable"):
        t.filter(t())
    raw = np.zeros(17, dtype=np.uint8)
    unaligned = raw[1:].view(np.float64) if raw[1:].size % 8 == 0 else raw[1:9].view(np.float64)
    if not unaligned.flags.aligned:
        with pytest.raises(TypeError, match="not aligned"):
            t.filter(unaligned)


def test_may_share_memory_is_static():
    a = np.arange(3.0)
    assert TensorType.may_share_memory(a, a[1:]) is True
    assert TensorType.may_share_memory(a, np.arange(3.0)) is False
    assert TensorType.may_share_memory(a, None) is False


def test_values_eq_approx():
    # inf - inf in the element-wise fallback makes NumPy warn; NaN == NaN, inf == inf.
    a = np.array([-np.inf, -1.0, 0.0, np.inf, np.nan])
    with pytest.warns(RuntimeWarning):
        assert TensorType.values_eq_approx(a, a)
    with pytest.warns(RuntimeWarning):
        assert not TensorType.values_eq_approx(a, np.array([np.inf, -1.0, 0.0, np.inf, np.nan]))
    assert TensorType.values_eq_approx(a, np.array([5.0, -1.0, 0.0, 7.0, np.nan]), allow_remove_inf=True)
    assert not TensorType.values_eq_approx(a, np.array([5.0, -1.0, 0.0, 7.0, 6.0]), allow_remove_inf=True)
    assert TensorType.values_eq_approx(a[:3], np.array([-np.inf, -1.0, 3.0]), allow_remove_nan=True) is False
    b = np.array([1.0, np.nan])
    assert TensorType.values_eq_approx(b, np.array([1.0, 3.0]), allow_remove_nan=True)
    assert not TensorType.values_eq_approx(b, np.array([1.0, 3.0]))
    assert not TensorType.values_eq_approx(np.ones(2), np.ones(2, dtype="float32"))
    assert not TensorType.values_eq_approx(np.ones(2), np.ones(3))
    assert TensorType.values_eq_approx(np.ones(2, "float32"), np.ones(2, "float32") + 1e-6)
    assert not TensorType.values_eq_approx(np.ones(2), np.ones(2) + 1e-3)


def test_convert_variable_meets_partial_shapes():
    t1 = TensorType("float64", (1, None, 3))
    t2 = TensorType("float64", (None, 5, 3))
    out = t1.convert_variable(t2())
    assert isinstance(out.owner.op, SpecifyShape) and out.type.shape == (1, 5, 3)
    assert t2.convert_variable(t1()).type.shape == (1, 5, 3)
    assert TensorType("float64", (2, None)).convert_variable(TensorType("float64", (3, None))()) is None


# --- constructors -----------------------------------------------------------------------

def test_tensor_takes_the_name_first_and_keywords_after():
    x = tensor("A", dtype="float64", shape=(3, None))
    assert x.name == "A" and x.type == TensorType("float64", (3, None))
    assert tensor(shape=(5,)).type.dtype == lucent.config.floatX
    assert tensor("a", shape=(None,)).name == "a"
    for dtype in ("float64", "floatX", "int32", bool, np.int64):
        with pytest.raises(ValueError, match="looks like a dtype"):
            tensor(dtype, shape=(None,))
    with pytest.raises(TypeError):
        tensor("x", "float64")
    with pytest.raises(TypeError, match="needs shape="):
        tensor("x", dtype="float64")


@pytest.mark.parametrize("helper, ndim", [(lt.vector, 1), (lt.matrix, 2), (lt.tensor3, 3), (lt.tensor7, 7)])
def test_rank_helpers_check_their_shape(helper, ndim):
    v = helper("v", dtype="int64", shape=tuple(range(ndim)))
    assert v.type.shape == tuple(range(ndim)) and v.type.dtype == "int64" and v.name == "v"
    with pytest.raises(TypeError, match="Shape must be a tuple"):
        helper(shape=[None] * ndim)
    with pytest.raises(ValueError, match=f"Shape must be a tuple of length {ndim}"):
        helper(shape=(None,) * (ndim + 1))
    with pytest.raises(TypeError, match="Shape entries must be None or integer"):
        helper(shape=(1.0,) * ndim)
    with pytest.raises(TypeError, match="name must be a string"):
        helper(np.float64)


def test_row_and_col_keep_their_length_one():
    with pytest.raises(ValueError, match="first dimension of a `row` must have shape 1, got 2"):
        lt.row(shape=(2, 5))
    with pytest.raises(ValueError, match="second dimension of a `col` must have shape 1, got 5"):
        lt.col(shape=(2, 5))
    assert lt.col(shape=(4, 1)).type.shape == (4, 1)


def test_predefined_types_are_tensor_types():
    assert isinstance(lt.dscalar, TensorType) and lt.dscalar.shape == ()
    for name, dtype, shape in [("fvector", "float32", (None,)), ("imatrix", "int32", (None, None)),
                               ("zrow", "complex128", (1, None)), ("bcol", "int8", (None, 1)),
                               ("ltensor3", "int64", (None,) * 3), ("ubscalar", "uint8", ())]:
        t = getattr(lt, name)
        assert isinstance(t, TensorType) and t.dtype == dtype and t.shape == shape
    x = lt.dmatrix("x")
    assert x.type is lt.dmatrix and x.name == "x"
    assert lt.matrix(dtype="float64").type is lt.dmatrix
    assert lt.dscalar in ltype.float_types and lt.lvector in ltype.int_vector_types


def test_plural_constructors():
    a, b = lt.dscalars("ab")
    assert a.type is lt.dscalar and (a.name, b.name) == ("a", "b")
    assert lt.scalars("x").name == "x"
    assert [v.name for v in lt.fmatrices("p", "q")] == ["p", "q"]
    assert len(lt.vectors(3)) == 3
    assert [v.name for v in lt.matrices("u, w")] == ["u", "w"]


def test_predefined_types_compute():
    x, y = lt.dvectors("xy")
    out = run(x * y + 1, {x: np.arange(3.0), y: np.full(3, 2.0)})
    np.testing.assert_allclose(out, np.arange(3.0) * 2 + 1)


# --- values a type refuses -------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype,value",
    [("int8", [300]), ("int64", 2**63), ("int64", np.uint64(2**63)), ("uint8", -1), ("int32", [1, 2**40])],
)
def test_out_of_range_integers_are_refused_not_wrapped(dtype, value):
    t = TensorType(dtype, shape=(None,) * np.ndim(value))
    with pytest.raises(ValueOutOfRangeError, match="outside the range") as info:
        t.filter(value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, OverflowError)


def test_in_range_integers_of_other_kinds_are_accepted():
    assert TensorType("int64", shape=()).filter(np.uint64(5)) == 5
    assert TensorType("int64", shape=()).filter(2**63 - 1) == 2**63 - 1
    assert TensorType("uint8", shape=(None,)).filter([0, 255]).tolist() == [0, 255]


@pytest.mark.parametrize("value", ["3", b"7", ["1", "2"], "adsf", np.str_("2.5")])
@pytest.mark.parametrize("allow_downcast", [None, False, True])
def test_text_is_refused_even_when_it_spells_a_number(value, allow_downcast):
    t = TensorType("float64", shape=(None,) * np.ndim(value))
    with pytest.raises(NotANumberError, match="expected numbers, got the text") as info:
        t.filter(value, allow_downcast=allow_downcast)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_refused_inputs_name_the_input_on_both_paths():
    import lucent

    x = lucent.tensor.lscalar("x")
    for mode in ("FAST_COMPILE", "FAST_RUN"):
        f = lucent.function([x], x * 2, mode=mode)
        with pytest.raises(ValueOutOfRangeError, match='name "x"'):
            f(2**63)
        with pytest.raises(NotANumberError, match='name "x"'):
            f("3")
        assert f(3) == 6
