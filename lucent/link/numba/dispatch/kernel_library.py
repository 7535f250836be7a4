"""Kernels are optimised by LLVM once per module, not once per function and again per module.

Numba optimises a compiled function's LLVM code three times: each function
of the new module on its own (``_optimize_functions``, a function-level O3
pipeline meant to shrink what is linked later), then the linked module with
a cheaper module pipeline, then with the full one. For a lucent kernel, a
module of a few small functions that is compiled once and called through a
slot (``kernel_calls``), the first round is work the module pipelines
repeat: they include the same function simplifications, run after the
callees are linked in and inlined, where they see more. Leaving it out
makes a kernel about a tenth cheaper to compile; the machine code is
optimised by the same module pipelines as before.

``UseKernelCodeLibrary`` is a pass of ``KernelCompiler`` that runs after
typing (before lowering, which makes the library otherwise) and gives the
compilation a ``KernelCodeLibrary``, Numba's JIT library without the
per-function round. Everything else (linking, caching, loading from the
cache) is Numba's own.

Code without loops gets lighter treatment: LLVM's O0 pipeline, Numba's
reference-count pruning and a few cheap passes (scalar replacement of
aggregates, instruction combining, dead code removal), which shrink Numba's
IR to about the size O1 gives for a third of O1's time. Kernels named
``*_glue`` (a BLAS product's checks and call) and kernels that are one
expression (a view, a shape: marked ``__lucent_glue__`` by
``kernel_from_source``, compiled when DebugMode or a profile calls them)
go into a ``GlueCodeLibrary``, which also simplifies the control flow.
Graph functions and the Python entries of kernels (``python_entry``) go
into an ``EntryCodeLibrary``: what Python calls, once per call, and costs
microseconds of Python either way (the MLP step's graph function took
LLVM's cheap O3 and O1 rounds 85 ms; now about 25).

Both are turned into machine code by LLVM's fast code generator (the
``O0`` target machine: fast instruction selection and register
allocation) instead of the JIT engine's ``O3`` one, in a fifth to a
third of the time for the same IR (the graph function: 23 against 68 ms). The object is handed to the JIT engine as Numba
hands it a cached one (``_set_compiled_object``), and kept for the disk
cache and the native bundles.
"""

from __future__ import annotations

import llvmlite.binding as ll
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler_machinery import FunctionPass, register_pass


class KernelCodeLibrary(JITCodeLibrary):
    """Numba's JIT code library whose functions are optimised only with their module."""

    def _optimize_functions(self, ll_module):
        # Only what the module pipelines need from this step: the target's data layout.
        ll_module.data_layout = self._codegen._data_layout

    def _optimize_final_module(self):
        leave_python_wrappers_unoptimised(self._final_module)
        super()._optimize_final_module()


#: How Numba's mangling starts the name of a function's CPython wrapper.
PYTHON_WRAPPER_PREFIX = "_ZN7cpython"


def leave_python_wrappers_unoptimised(module):
    """Mark the CPython wrappers defined in ``module`` ``optnone`` (LLVM leaves them as they are).

    A kernel Python calls first (DebugMode, a profile) is compiled with its
    wrapper in its module: unboxing the arguments, one call of the kernel and
    boxing its result, about a third of the module's IR. LLVM's optimiser
    skips an ``optnone`` function and its code generator selects its
    instructions the fast way, so the wrapper costs a fraction of what it
    did, for a few more instructions around a call that does the work.
    """
    for function in module.functions:
        if function.name.startswith(PYTHON_WRAPPER_PREFIX) and not function.is_declaration:
            function.add_function_attribute("noinline")
            function.add_function_attribute("optnone")


class GlueCodeLibrary(KernelCodeLibrary):
    """A ``KernelCodeLibrary`` for code without loops: a few cheap passes, the fast code generator."""

    #: The LLVM passes the library's module gets, after LLVM's O0 pipeline and Numba's
    #: reference-count pruning (then unused globals are removed).
    passes = ("sroa", "instruction_combine", "simplify_cfg", "dead_code_elimination")

    def _optimize_final_module(self):
        from numba.core import config
        from numba.core.codegen import remove_redundant_nrt_refct

        manager, builder = self._codegen._module_pass_manager(opt=0, loop_vectorize=False, slp_vectorize=False)
        for name in self.passes:
            getattr(manager, f"add_{name}_pass")()
        # Numba's lowering leaves loads it never uses (a dispatcher's address, read from a dynamic
        # global): kept, they would make the library impossible to cache on disk
        manager.add_global_dead_code_eliminate_pass()
        with self._recorded_timings.record("Module passes (glue)", builder):
            manager.run(self._final_module, builder)
        if not config.LLVM_REFPRUNE_PASS:
            self._final_module = remove_redundant_nrt_refct(self._final_module)

    def _finalize_final_module(self):
        if self._object_caching_enabled and not self._compiled and self._compiled_object is None:
            with self._recorded_timings.record_legacy("Machine code (O0 code generator)"):
                code = fast_target_machine(self._codegen).emit_object(self._final_module)
            self._set_compiled_object(code)  # the engine takes this instead of compiling the module
            super()._finalize_final_module()
            # the engine's object-cache hook took the bytes off the library: keep them for saving
            self._compiled_object = code
            self._compiled = True
        else:
            super()._finalize_final_module()


class EntryCodeLibrary(GlueCodeLibrary):
    """A ``GlueCodeLibrary`` for what Python calls (graph functions, Python entries)."""

    passes = ("sroa", "instruction_combine", "dead_code_elimination")


def fast_target_machine(codegen):
    """A target machine like ``codegen``'s JIT one (CPU, features, relocations, code model) at opt level 0."""
    machine = getattr(codegen, "_lucent_fast_target_machine", None)
    if machine is None:
        options = {}
        codegen._customize_tm_options(options)
        options["opt"] = 0
        machine = ll.Target.from_triple(ll.get_process_triple()).create_target_machine(**options)
        codegen._lucent_fast_target_machine = machine
    return machine


#: Functions compiled into an ``EntryCodeLibrary``: the outer graph function.
ENTRY_FUNCTIONS = ("graph_fn",)
#: Kernels whose name ends so are glue (``GlueCodeLibrary``), as are Python functions marked
#: ``__lucent_glue__``.
GLUE_SUFFIX = "_glue"


@register_pass(mutates_CFG=False, analysis_only=False)
class UseKernelCodeLibrary(FunctionPass):
    """Gives the compilation a ``KernelCodeLibrary`` (when Numba's JIT codegen would make a ``JITCodeLibrary``)."""

    _name = "lucent_kernel_code_library"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        if state.library is not None:
            return False
        codegen = state.targetctx.codegen()
        if getattr(codegen, "_library_class", None) is not JITCodeLibrary:
            return False  # another target: Numba makes its own library
        name = state.func_id.func_qualname
        if name in ENTRY_FUNCTIONS:
            library_class = EntryCodeLibrary
        elif name.endswith(GLUE_SUFFIX) or getattr(state.func_id.func, "__lucent_glue__", False):
            library_class = GlueCodeLibrary
        else:
            library_class = KernelCodeLibrary
        state.library = library_class(codegen, name)
        # as Numba's lowering does for the library it makes: serialisable for the disk cache
        state.library.enable_object_caching()
        return False


__all__ = [
    "ENTRY_FUNCTIONS",
    "GLUE_SUFFIX",
    "EntryCodeLibrary",
    "GlueCodeLibrary",
    "KernelCodeLibrary",
    "UseKernelCodeLibrary",
    "fast_target_machine",
]
