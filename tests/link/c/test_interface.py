"""The C-linker interfaces: unimplemented hooks raise MethodNotDefined."""

import pytest

from lucent.graph.utils import MethodNotDefined
from lucent.link.c.interface import CLinkerObject, CLinkerOp, CLinkerType


def test_required_type_hooks_raise():
    ct = CLinkerType()
    for call in (
        lambda: ct.c_declare("x", {}),
        lambda: ct.c_init("x", {}),
        lambda: ct.c_extract("x", {}),
        lambda: ct.c_extract_out("x", {}),
        lambda: ct.c_cleanup("x", {}),
        lambda: ct.c_sync("x", {}),
        lambda: ct.c_literal(1),
        lambda: ct.c_element_type(),
    ):
        with pytest.raises(MethodNotDefined, match="Numba"):
            call()


def test_optional_hooks_have_defaults():
    ct = CLinkerType()
    assert ct.c_is_simple() is False
    assert ct.c_code_cache_version() == ()
    obj = CLinkerObject()
    assert obj.c_headers() == [] and obj.c_header_dirs() == [] and obj.c_libraries() == []
    assert obj.c_lib_dirs() == [] and obj.c_compile_args() == [] and obj.c_no_compile_args() == []
    assert obj.c_support_code() == "" and obj.c_init_code() == []


def test_subclass_overrides_are_used():
    class Mine(CLinkerType):
        def c_extract(self, name, sub, check_input=True, **kwargs):
            return f"extract({name});"

        def c_init(self, name, sub):
            return f"init({name});"

    code = Mine().c_extract_out("v", {})
    assert "extract(v);" in code and "init(v);" in code and "Py_None" in code


def test_op_hooks():
    op = CLinkerOp()
    with pytest.raises(MethodNotDefined):
        op.c_code(None, "n", [], [], {})
    with pytest.raises(MethodNotDefined):
        op.c_code_cleanup(None, "n", [], [], {})
    assert op.c_code_cache_version_apply(None) == ()
    assert op.c_support_code_apply(None, "n") == ""
    assert op.c_init_code_struct(None, "n", {}) == ""
