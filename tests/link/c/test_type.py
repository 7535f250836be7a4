"""EnumType family, CDataType and Generic as lucent Types."""

import gc
import pickle

import numpy as np
import pytest

from lucent.graph.basic import Constant, Variable
from lucent.graph.type import Type
from lucent.link.c import type as ctypes_module
from lucent.link.c.interface import CLinkerType
from lucent.link.c.type import CDataType, CDataValue, CEnumType, EnumList, EnumType, Generic, generic


def test_all_are_types_and_clinker_types():
    for tp in (EnumType(A=1), EnumList("A"), CEnumType("A"), CDataType("void *"), generic):
        assert isinstance(tp, Type) and isinstance(tp, CLinkerType)
        v = tp("v")
        assert isinstance(v, Variable) and v.type is tp


# --- EnumType ----------------------------------------------------------------------

def test_enum_values_and_bools():
    e = EnumType(A=1, B=2.5, C=False, D=True)
    assert (e.A, e.B, e.C, e.D) == (1, 2.5, 0, 1)
    assert type(e.C) is int and type(e.D) is int
    assert e.ctype == "double" and e.cname == "double"
    assert list(e) == ["A", "B", "C", "D"] and len(e) == 4 and e["B"] == 2.5
    assert dict(e.items()) == {"A": 1, "B": 2.5, "C": 0, "D": 1}
    assert EnumType(A=np.int32(3), B=np.float64(0.5)).A == 3


@pytest.mark.parametrize("name", ["a", "Ab", "_A", "1A", "A-B", "A B"])
def test_enum_rejects_bad_names(name):
    with pytest.raises(AttributeError, match="capital letter"):
        EnumType(**{name: 1})


def test_enum_accepts_capitals_digits_underscores():
    assert EnumType(A_1=1, Z9=2).Z9 == 2


@pytest.mark.parametrize("value", ["x", None, [1], 1j])
def test_enum_rejects_bad_values(value):
    with pytest.raises(TypeError, match="int, float or bool"):
        EnumType(A=value)


def test_enum_ctype_and_cname():
    e = EnumType(A=0, ctype="unsigned  long int")
    assert e.ctype == "unsigned long int" and e.cname == "unsigned_long_int"
    assert EnumType(A=0, ctype="size_t", cname="MyEnumName").cname == "MyEnumName"
    with pytest.raises(TypeError, match="C identifier"):
        EnumType(A=0, cname="not valid")


def test_enum_aliases():
    e = EnumType(A=("alpha", 1), B=("beta", 2), C=3, D=("delta", 4))
    assert (e.A, e.B, e.C, e.D) == (1, 2, 3, 4)
    assert e.fromalias("alpha") == 1 and e.fromalias("delta") == 4
    assert e.fromalias("C") == 3  # unknown alias: looked up as a constant name
    with pytest.raises(KeyError, match="neither an alias nor a constant"):
        e.fromalias("gamma")
    assert e.get_aliases() == ("alpha", "beta", "delta")
    assert e.has_alias("alpha") and not e.has_alias("A") and not e.has_alias("zeta")
    assert "alpha" in e and "A" in e and "zeta" not in e


def test_enum_alias_errors():
    with pytest.raises(TypeError, match="used by two"):
        EnumType(A=("x", 1), B=("x", 2))
    with pytest.raises(TypeError, match="another constant"):
        EnumType(A=("B", 1), B=2)
    with pytest.raises(TypeError, match="alias"):
        EnumType(A=(1, 2))


def test_enum_filter():
    e = EnumType(A=("alpha", 1), B=2.5)
    assert e.filter(1) == 1 and e.filter(2.5, strict=True) == 2.5
    assert e.filter("alpha", strict=False) == 1
    assert e.filter(True) == 1 and type(e.filter(True)) is int
    assert e.filter(np.int64(1)) == 1
    with pytest.raises(TypeError, match="not a value"):
        e.filter("alpha", strict=True)
    with pytest.raises(TypeError, match="not a value"):
        e.filter(True, strict=True)
    with pytest.raises(TypeError, match="expected one of A=1, B=2.5"):
        e.filter(7)
    with pytest.raises(KeyError):
        e.filter("nope")
    assert e.is_valid_value(1) and not e.is_valid_value(3)
    assert e.values_eq(1, 1) and not e.values_eq(1, 2)


def test_enum_equality_hash_repr():
    a = EnumType(A=("alpha", 1), B=2)
    assert a == EnumType(A=("alpha", 1), B=2) and hash(a) == hash(EnumType(A=("alpha", 1), B=2))
    assert a != EnumType(A=1, B=2)  # aliases matter
    assert a != EnumType(A=("alpha", 1), B=2, ctype="int")
    assert EnumType(A=0) != EnumList("A", ctype="double")  # different classes
    assert repr(a) == "EnumType<double>(A(alpha):1, B:2)"
    assert str(EnumList("X", "Y")) == "EnumList<int>(X:0, Y:1)"


def test_enum_is_read_only_and_attribute_errors():
    e = EnumType(A=1)
    with pytest.raises(AttributeError, match="read-only"):
        e.A = 2
    with pytest.raises(AttributeError, match="no constant 'B'"):
        e.B


def test_enum_pickles_and_constants():
    e = EnumType(A=("alpha", 1), B=2)
    e2 = pickle.loads(pickle.dumps(e))
    assert e2 == e and e2.fromalias("alpha") == 1
    c = Constant(e, "alpha")
    assert c.data == 1
    assert e.name_of(2) == "B"
    with pytest.raises(ValueError):
        e.name_of(5)


def test_enumlist():
    e = EnumList("CONSTANT_1", "CONSTANT_2", "CONSTANT_3", "CONSTANT_4", "CONSTANT_5")
    assert [e.CONSTANT_1, e.CONSTANT_2, e.CONSTANT_3, e.CONSTANT_4, e.CONSTANT_5] == [0, 1, 2, 3, 4]
    assert e.ctype == "int"
    e2 = EnumList(("A", "alpha"), ("B", "beta"), "C", "D", "E", "F", ("G", "gamma"))
    assert e2.G == 6 and e2.fromalias("gamma") == 6 and e2.get_aliases() == ("alpha", "beta", "gamma")
    assert EnumList("A", "B", ctype="unsigned int").cname == "unsigned_int"
    with pytest.raises(TypeError, match="ctype and cname"):
        EnumList("A", B=2)
    with pytest.raises(TypeError):
        EnumList(3)
    with pytest.raises(TypeError):
        EnumList(("A", "a", "extra"))
    with pytest.raises(TypeError, match="twice"):
        EnumList("A", "A")


def test_cenumtype():
    e = CEnumType("CONSTANT_CNAME_1", "CONSTANT_CNAME_2", "CONSTANT_CNAME_3", ctype="long")
    assert e.ctype == "long" and e.c_defined
    assert len({e.CONSTANT_CNAME_1, e.CONSTANT_CNAME_2, e.CONSTANT_CNAME_3}) == 3
    a = CEnumType(("X", "ex"), "Y")
    assert a.fromalias("ex") == a.X and a.filter("ex") == a.X
    assert isinstance(a, EnumList) and a != EnumList(("X", "ex"), "Y")


# --- CDataType --------------------------------------------------------------------------

def test_cdatatype_values():
    t = CDataType("void *")
    v = t.make_value(0x1234)
    assert isinstance(v, CDataValue) and int(v) == 0x1234 and v.type == t
    assert t.filter(v) is v and t.filter(None) is None
    assert v == t.make_value(0x1234) and hash(v) == hash(t.make_value(0x1234))
    with pytest.raises(TypeError, match="make_value"):
        t.filter(0x1234)
    with pytest.raises(TypeError, match="make_value"):
        t.filter(CDataType("int *").make_value(1))
    with pytest.raises(TypeError, match="integer address"):
        t.make_value("0x12")
    with pytest.raises(ValueError, match="negative"):
        t.make_value(-1)
    assert t.is_valid_value(v) and not t.is_valid_value(3)
    assert t.may_share_memory(v, t.make_value(0x1234)) and not t.may_share_memory(v, None)
    assert repr(v) == "<CDataType{void *} at 0x1234>"


def test_cdatatype_identity_and_settings():
    t = CDataType("cudnnHandle_t", freefunc="cudnnDestroy", headers=("cudnn.h",),
                  libraries=("cudnn",), version=2)
    assert t == CDataType("cudnnHandle_t", freefunc="cudnnDestroy", headers=("cudnn.h",),
                          libraries=("cudnn",), version=2)
    assert t != CDataType("cudnnHandle_t") and str(t) == "CDataType{cudnnHandle_t}"
    assert t.c_headers() == ["cudnn.h"] and t.c_libraries() == ["cudnn"]
    assert t.c_code_cache_version() == (2,) and CDataType("void *").c_code_cache_version() == ()
    with pytest.raises(TypeError):
        CDataType(3)
    with pytest.raises(TypeError):
        CDataType("void *", freefunc=3)


def test_cdatatype_python_freefunc_called_once():
    freed = []
    t = CDataType("void *", freefunc=freed.append)
    v = t.make_value(42)
    v.free()
    v.free()
    assert freed == [42]
    w = t.make_value(7)
    del w
    gc.collect()
    assert freed == [42, 7]


# --- Generic ------------------------------------------------------------------------------

def test_generic():
    obj = object()
    assert generic.filter(obj) is obj and generic.filter([1], strict=True) == [1]
    assert generic.is_valid_value(None)
    assert Generic() == generic and hash(Generic()) == hash(generic)
    assert str(generic) == "Generic"
    assert generic.values_eq([1], [1]) and not generic.values_eq(1, 2)
    a = np.ones(2)
    assert generic.values_eq(a, a) and not generic.values_eq(a, np.ones(2))
    assert generic.get_size(generic.get_shape_info([1, 2])) > 0
    assert ctypes_module.generic is generic


def test_enum_alias_equal_to_its_own_name_is_refused():
    with pytest.raises(TypeError, match="its own name"):
        EnumList(("A", "a"), ("B", "B"))
    assert EnumList(("A", "a"), ("B", "b")).fromalias("b") == 1


def test_enum_c_to_string_is_the_seed_function():
    e = EnumList("RED", ("GREEN", "green"), ctype="unsigned int", cname="Colour")
    code = e.c_to_string()
    assert "int theano_enum_to_string_Colour(unsigned int value, char* output_string)" in code
    assert 'case RED: strcpy(output_string, "RED"); return 0;' in code
    assert 'case GREEN: strcpy(output_string, "GREEN"); return 0;' in code
    assert "PyErr_SetString(PyExc_ValueError" in code and "return -1;" in code
    assert "#define pytensor_enum_to_string_Colour theano_enum_to_string_Colour" in code
    # default cname: the ctype with spaces replaced by underscores
    assert "theano_enum_to_string_unsigned_int(" in EnumList("A", ctype="unsigned int").c_to_string()
