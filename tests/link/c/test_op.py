"""COp / ExternalCOp: Ops written with C code run on perform or a Numba kernel, never C."""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.basic import Apply
from lucent.link.c import op as c_op
from lucent.link.c.op import CCodeNotUsedWarning, COp, COpWithoutImplementation, ExternalCOp
from tests.helpers import current_mode, run


def _fresh_warning_state(klass):
    c_op._warned_c_unused.discard(klass)


class AddOneC(COp):
    """A COp with C code and a perform: lucent runs perform."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = inputs[0] + 1

    def c_code(self, node, name, inputs, outputs, sub):
        return f"{outputs[0]} = {inputs[0]} + 1;  /* never compiled by lucent */"

    def c_code_cache_version(self):
        return (1,)


class OnlyC(COp):
    """A COp with C code and nothing lucent can run."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def c_code(self, node, name, inputs, outputs, sub):
        return f"{outputs[0]} = {inputs[0]};"


def test_cop_with_perform_runs_and_warns_once_that_c_is_unused():
    _fresh_warning_state(AddOneC)
    x = lt.dvector("x")
    with pytest.warns(CCodeNotUsedWarning, match="AddOneC.*C code.*not used"):
        out = run(AddOneC()(x), {x: np.array([1.0, 2.0])})
    np.testing.assert_array_equal(out, [2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", CCodeNotUsedWarning)
        out = run(AddOneC()(x) * 2, {x: np.array([0.0])})  # no second warning
    np.testing.assert_array_equal(out, [2.0])


def test_cop_without_perform_fails_at_compile_time_with_how_to_fix():
    x = lt.dvector("x")
    with pytest.raises(COpWithoutImplementation, match=r"(?s)OnlyC.*no perform.*numba_funcify\.register"):
        lucent.function([x], OnlyC()(x), mode=current_mode())


def test_cop_without_perform_runs_on_a_registered_numba_kernel():
    import numba

    from lucent.link.numba.dispatch import numba_funcify

    class DoubleC(OnlyC):
        pass

    @numba_funcify.register(DoubleC)
    def _double(op, node=None, **kwargs):
        @numba.njit
        def kernel(x):
            return x * 2

        return kernel

    x = lt.dvector("x")
    f = lucent.function([x], DoubleC()(x), mode="FAST_RUN")
    np.testing.assert_array_equal(f(np.array([1.0, 3.0])), [2.0, 6.0])
    with pytest.raises(COpWithoutImplementation, match="Python path"):
        lucent.function([x], DoubleC()(x), mode="FAST_COMPILE")


def test_cop_is_a_c_linker_op():
    from lucent.graph.op import Op
    from lucent.link.c.interface import CLinkerOp

    assert issubclass(COp, Op) and issubclass(COp, CLinkerOp)
    assert AddOneC().c_code_cache_version() == (1,)


def test_external_cop_reads_sections(tmp_path):
    src = tmp_path / "add.c"
    src.write_text(
        "#section support_code\nstatic int helper(void) { return 1; }\n"
        "#section code\nOUT = IN + 1;\n"
    )

    class AddFromFile(ExternalCOp):
        __props__ = ()

        def __init__(self):
            super().__init__(str(src))

        def make_node(self, x):
            x = lt.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, outputs):
            outputs[0][0] = inputs[0] + 1

    op = AddFromFile()
    assert "helper" in op.c_support_code()
    assert op.c_code(None, "n", ["IN"], ["OUT"], {"fail": ""}).strip() == "OUT = IN + 1;"
    x = lt.dvector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CCodeNotUsedWarning)
        np.testing.assert_array_equal(run(op(x), {x: np.array([1.0])}), [2.0])


def test_external_cop_rejects_bad_files(tmp_path):
    empty = tmp_path / "empty.c"
    empty.write_text("int x;\n")
    with pytest.raises(ValueError, match="before the first '#section'"):
        ExternalCOp(str(empty))
    unknown = tmp_path / "unknown.c"
    unknown.write_text("#section nonsense\nint x;\n")
    with pytest.raises(ValueError, match="unknown section 'nonsense'"):
        ExternalCOp(str(unknown))
    with pytest.raises(OSError, match="cannot read"):
        ExternalCOp(str(tmp_path / "missing.c"))
