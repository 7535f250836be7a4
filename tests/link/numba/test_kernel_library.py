"""Tests of lucent/link/numba/dispatch/kernel_library.py: kernels optimised once per module."""

import numpy as np
import pytest

pytest.importorskip("numba")

import numba  # noqa: E402
from numba.core.codegen import JITCodeLibrary  # noqa: E402

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify  # noqa: E402
from lucent.link.numba.dispatch.kernel_library import (  # noqa: E402
    EntryCodeLibrary,
    GlueCodeLibrary,
    KernelCodeLibrary,
)
from lucent.link.numba.dispatch.python_entry import kernel_dispatcher  # noqa: E402


def _fresh_kernel(expr):
    """The generated kernel of ``expr``'s node, compiled here (not loaded from the disk cache)."""
    node = expr.owner
    return kernel_dispatcher(numba_funcify(node.op, node).py_func, {"error_model": "numpy"})


def test_a_kernel_is_lowered_into_a_kernel_library_and_computes_the_same():
    x, y = lt.dvector("x"), lt.dvector("y")
    kernel = _fresh_kernel(lt.true_div(x, y))
    a, b = np.linspace(-2, 2, 37), np.linspace(3, -1, 37)
    a[5] = np.nan
    with np.errstate(divide="ignore"):  # b has a zero: inf, as on the kernel's side
        np.testing.assert_array_equal(kernel(a, b), a / b)
    (cres,) = kernel.overloads.values()
    assert type(cres.library) is KernelCodeLibrary


def test_loops_are_still_vectorised_by_the_module_pipelines():
    """The per-function round left out must not cost the machine code its SIMD loops."""
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    kernel = _fresh_kernel(x * y)
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(kernel(a, a + 1), a * (a + 1))
    ir = kernel.inspect_llvm(tuple(numba.typeof(v) for v in (a, a)))
    assert "x double>" in ir  # vector instructions on doubles


def test_graph_functions_are_compiled_the_same_way():
    x = lt.dvector("x")
    f = lucent.function([x], [lt.tanh(x) * 2.0, x.sum()], mode="FAST_RUN")
    v = np.linspace(-1, 1, 11)
    got = f(v)
    np.testing.assert_allclose(got[0], np.tanh(v) * 2.0, rtol=1e-15)
    np.testing.assert_allclose(got[1], v.sum(), atol=1e-15)
    program = f.maker.linker.program
    fn = program.fn
    assert set(EntryCodeLibrary.passes) < set(GlueCodeLibrary.passes)
    if not program.native:  # compiled by Numba in this process (not loaded from a bundle)
        libraries = [cres.library for cres in fn.overloads.values()]
        assert libraries and all(isinstance(lib, JITCodeLibrary) for lib in libraries)
        fresh = [lib for lib in libraries if type(lib) is not JITCodeLibrary]
        # loaded from Numba's disk cache: a plain JIT library; compiled: an entry library (not optimised)
        assert all(type(lib) is EntryCodeLibrary for lib in fresh)


def test_glue_kernels_get_the_light_pipeline_and_compute_the_same(monkeypatch):
    """A BLAS product's kernel (checks and a call) is glue: a few cheap passes, no vectorised loops to lose."""
    from numba.core.codegen import JITCPUCodegen

    from lucent.tensor.blas import Dot22

    levels = []
    real = JITCPUCodegen._module_pass_manager

    def recording(self, **kwargs):
        levels.append(kwargs.get("opt"))
        return real(self, **kwargs)

    monkeypatch.setattr(JITCPUCodegen, "_module_pass_manager", recording)
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    node = Dot22()(x, y).owner
    kernel = kernel_dispatcher(numba_funcify(node.op, node).py_func, {"error_model": "numpy"})
    assert kernel.py_func.__name__.endswith("_glue")
    a, b = np.arange(12.0).reshape(3, 4), np.arange(8.0).reshape(4, 2)
    np.testing.assert_allclose(kernel(a, b), a @ b)
    (cres,) = kernel.overloads.values()
    assert type(cres.library) is GlueCodeLibrary
    # LLVM's O0 pipeline and a few passes: neither the cheap O3 round nor the default full one
    assert levels and set(levels) == {0}
    with pytest.raises(ValueError, match="not aligned"):
        kernel(a, a)


def test_another_codegen_keeps_numba_s_own_library():
    """The pass only replaces the JIT library it knows; other targets make their own."""
    from numba.core.compiler import StateDict

    from lucent.link.numba.dispatch.kernel_library import UseKernelCodeLibrary

    class OtherCodegen:
        _library_class = object

    class Target:
        def codegen(self):
            return OtherCodegen()

    state = StateDict()
    state.library = None
    state.targetctx = Target()
    assert UseKernelCodeLibrary().run_pass(state) is False
    assert state.library is None


def test_glue_machine_code_comes_from_the_fast_code_generator_and_is_kept(monkeypatch):
    """Glue is turned into machine code by the O0 target machine; the object stays on the library."""
    from lucent.link.numba.dispatch import kernel_library
    from lucent.tensor.blas import Dot22

    emitted = []
    real = kernel_library.fast_target_machine

    def recording(codegen):
        machine = real(codegen)
        emitted.append(machine)
        return machine

    monkeypatch.setattr(kernel_library, "fast_target_machine", recording)
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    node = Dot22()(x, y).owner
    kernel = kernel_dispatcher(numba_funcify(node.op, node).py_func, {"error_model": "numpy"})
    a, b = np.arange(12.0).reshape(3, 4), np.arange(8.0).reshape(4, 2)
    np.testing.assert_allclose(kernel(a, b), a @ b)
    (cres,) = kernel.overloads.values()
    assert emitted and len({id(m) for m in emitted}) == 1  # one machine per codegen, made once
    # the engine ran the object it was handed; the bytes are still there for the caches
    code = cres.library._get_compiled_object()
    assert code[:4] == b"\x7fELF"
    name, kind, (obj, _bitcode) = cres.library.serialize_using_object_code()
    assert kind == "object" and obj == code
    with pytest.raises(ValueError, match="not aligned"):
        kernel(a, a)


def test_the_python_wrapper_in_a_kernel_module_is_left_unoptimised():
    """A kernel compiled for a Python call carries its wrapper marked optnone; the kernel is optimised."""
    from lucent.link.numba.dispatch.kernel_library import PYTHON_WRAPPER_PREFIX

    x, y = lt.dvector("x"), lt.dvector("y")
    kernel = _fresh_kernel(x * y)
    a, b = np.linspace(-1, 1, 19), np.linspace(2, 3, 19)
    args = tuple(numba.typeof(v) for v in (a, b))
    entry = kernel.compile_for_python(args)
    np.testing.assert_array_equal(entry(a, b), a * b)
    module = kernel.overloads[args].library._final_module
    attributes = {
        f.name: " ".join(str(a) for a in f.attributes) for f in module.functions if not f.is_declaration
    }
    wrappers = [name for name in attributes if name.startswith(PYTHON_WRAPPER_PREFIX)]
    assert len(wrappers) == 1
    assert "optnone" in attributes[wrappers[0]]
    kernels = [name for name in attributes if "elemwise_kernel" in name and name not in wrappers]
    assert kernels and all("optnone" not in attributes[name] for name in kernels)
    assert "x double>" in str(module)  # the kernel's loop is still vectorised


def test_a_wrapper_built_later_is_an_entry_library(monkeypatch):
    """A kernel compiled for compiled callers gets its Python entry later, in an entry library."""
    from lucent.link.numba.dispatch import python_entry

    made = []

    class Recorded(EntryCodeLibrary):
        def finalize(self):
            made.append(self)
            super().finalize()

    monkeypatch.setattr(python_entry, "EntryCodeLibrary", Recorded)
    x = lt.dvector("x")
    kernel = _fresh_kernel(lt.exp(x))
    a = np.linspace(-3, 3, 23)
    a[4] = np.nan
    args = (numba.typeof(a),)
    kernel.compile(args)  # no wrapper: what a graph function's call site compiles
    assert not kernel.has_python_entry(args)
    entry = kernel.python_entry(args)
    np.testing.assert_allclose(entry(a), np.exp(a), rtol=1e-14)
    assert kernel.has_python_entry(args)
    assert len(made) == 1 and made[0].name.startswith("python_entry_")
    assert made[0]._get_compiled_object()[:4] == b"\x7fELF"  # machine code from the fast code generator


def test_a_one_expression_kernel_is_glue():
    """A view kernel (a transpose) gets the light pipelines and still computes the view."""
    x = lt.dmatrix("x")
    kernel = _fresh_kernel(x.T)
    assert kernel.py_func.__lucent_glue__
    a = np.arange(12.0).reshape(3, 4)
    got = kernel.compile_for_python((numba.typeof(a),))(a)
    np.testing.assert_array_equal(got, a.T)
    assert np.shares_memory(got, a)
    (cres,) = kernel.overloads.values()
    assert type(cres.library) is GlueCodeLibrary
