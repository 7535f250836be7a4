"""Seed 003: the C-interface types (``lucent.link.c.type``) and the Variable/Constant docs."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.basic import Constant, Variable
from lucent.graph.utils import MethodNotDefined
from lucent.link.c.interface import CLinkerType
from lucent.link.c.type import CDataType, CEnumType, EnumList, EnumType, Generic, generic


def test_cdatatype_constructor_and_make_value():
    t = CDataType("void *", freefunc=None, headers=(), header_dirs=(), libraries=(), lib_dirs=(),
                  compile_args=(), extra_support_code="", version=None)
    value = t.make_value(12345)
    assert int(value) == 12345 and t.filter(value) is value


def test_cenumtype_example():
    enum = CEnumType("CONSTANT_CNAME_1", "CONSTANT_CNAME_2", "CONSTANT_CNAME_3", ctype="long")
    assert enum.ctype == "long"
    values = [enum.CONSTANT_CNAME_1, enum.CONSTANT_CNAME_2, enum.CONSTANT_CNAME_3]
    assert len(set(values)) == 3  # arbitrary but distinct: only good for choices
    aliased = CEnumType(("CONSTANT_CNAME_1", "one"), "CONSTANT_CNAME_2")
    assert aliased.fromalias("one") == aliased.CONSTANT_CNAME_1
    assert CEnumType("A").ctype == "int"


def test_clinkertype_required_methods_raise():
    ct = CLinkerType()
    for method, args in [("c_declare", ("n", {})), ("c_init", ("n", {})), ("c_extract", ("n", {})),
                         ("c_sync", ("n", {})), ("c_cleanup", ("n", {}))]:
        with pytest.raises(MethodNotDefined):
            getattr(ct, method)(*args)
    assert ct.c_code_cache_version() == ()  # unversioned
    assert ct.c_is_simple() is False


def test_enumlist_example(capsys):
    enum = EnumList("CONSTANT_1", "CONSTANT_2", "CONSTANT_3", "CONSTANT_4", "CONSTANT_5")
    print(enum.CONSTANT_1, enum.CONSTANT_2, enum.CONSTANT_3, enum.CONSTANT_4, enum.CONSTANT_5)
    assert capsys.readouterr().out == "0 1 2 3 4\n"
    enum = EnumList("CONSTANT_1", "CONSTANT_2", "CONSTANT_3", "CONSTANT_4", ctype="unsigned int")
    assert enum.ctype == "unsigned int"
    enum = EnumList(("A", "alpha"), ("B", "beta"), "C", "D", "E", "F", ("G", "gamma"))
    assert enum.fromalias("alpha") == enum.A == 0 and enum.fromalias("gamma") == enum.G == 6


def test_enumtype_example(capsys):
    enum = EnumType(CONSTANT_1=1, CONSTANT_2=2.5, CONSTANT_3=False, CONSTANT_4=True)
    print(enum.CONSTANT_1, enum.CONSTANT_2, enum.CONSTANT_3, enum.CONSTANT_4)
    assert capsys.readouterr().out == "1 2.5 0 1\n"
    assert enum.ctype == "double"
    enum = EnumType(CONSTANT_1=0, CONSTANT_2=1, CONSTANT_3=2, ctype="size_t")
    assert enum.ctype == "size_t" and enum.cname == "size_t"
    enum = EnumType(CONSTANT_1=0, CONSTANT_2=1, CONSTANT_3=2, ctype="size_t", cname="MyEnumName")
    assert enum.cname == "MyEnumName"
    assert EnumType(A=1, ctype="unsigned int").cname == "unsigned_int"


def test_enumtype_name_rule():
    with pytest.raises(ValueError):
        EnumType(constant_1=1)


def test_enumtype_alias_example(capsys):
    enum = EnumType(A=("alpha", 1), B=("beta", 2), C=3, D=("delta", 4))
    print(enum.A, enum.B, enum.C, enum.D)
    assert capsys.readouterr().out == "1 2 3 4\n"
    a = enum.fromalias("alpha")
    b = enum.fromalias("beta")
    d = enum.fromalias("delta")
    c = enum.fromalias("C")
    assert (a, b, c, d) == (enum.A, enum.B, enum.C, enum.D)
    value = enum.filter("delta", strict=False)
    assert value == enum.D == 4
    assert enum.get_aliases() == ("alpha", "beta", "delta")
    assert enum.has_alias("beta") and not enum.has_alias("C")


def test_generic_represents_any_python_object():
    assert isinstance(generic, Generic)
    for obj in (1, "s", [1, 2], {"a": 1}, None, object()):
        assert generic.filter(obj) is obj


def test_constant_and_variable_docs():
    a = lt.constant(1.5)
    b = lt.fscalar()
    assert isinstance(a, Constant) and isinstance(a, Variable) and a.owner is None
    c = a + b
    assert c.owner is not None and c.owner.outputs[c.index] is c
    assert c.owner.inputs == [a, b] or a in lucent.graph.graph_inputs([c])
    cc = a.clone()
    assert cc.data is a.data and a.value == 1.5
    x = lt.dscalar("x")
    y = lt.dscalar("y")
    z = x + y
    assert np.allclose(z.eval({x: 16.3, y: 12.1}), 28.4)


def test_variable_clone_doc():
    x = lt.dscalar("x")
    x.tag.note = "kept"
    c = x.clone()
    assert c.owner is None and c.index is None and c.name == "x" and c.tag.note == "kept"


@pytest.mark.both_modes
def test_function_examples():
    a = lt.constant(1.5)
    b = lt.fscalar()
    c = a + b
    f = lucent.function([b], [c])
    assert 4.0 == f(2.5)[0]
    with pytest.raises(Exception, match="(?i)missing|not provided|input"):
        lucent.function([a], [c])
    with pytest.raises(TypeError):
        lucent.function([a, b], [c])
    d = lt.value(1.5)
    e = d + b
    g = lucent.function([d, b], [e])
    assert np.allclose(g(3.0, 1.0)[0], 4.0)  # d's default is ignored
