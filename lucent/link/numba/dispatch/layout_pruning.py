"""Generated kernels compile only the loop their arguments' layouts can take.

An Elemwise or reduction kernel has two loops: a flat one for arrays typed
C-contiguous, chosen by ``if is_c_layout(i0) and ...:``, and a strided one
for everything else. ``is_c_layout`` is decided by the types, but Numba
only learns that while typing, so it typed, lowered and handed LLVM both
loops for every specialisation, although one of them could never run (a
fifth to a third of compiling such a kernel).

``KernelCompiler`` is Numba's nopython pipeline with one more pass before
its dead-branch pruning: a call ``is_c_layout(x)`` where ``x`` is one of the
function's arguments becomes the constant the argument's type gives, so
Numba's own pruning drops the branch that cannot run before anything is
typed. A call on any other value is left to the intrinsic, which gives the
same answer later; behaviour does not change, only what is compiled.
"""

from __future__ import annotations

from numba.core import ir, types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import guard, get_definition
from numba.core.typed_passes import NopythonTypeInference
from numba.core.untyped_passes import DeadBranchPrune

from lucent.link.numba.dispatch.kernel_library import UseKernelCodeLibrary


def _is_layout_test(func_ir, expr):
    """Whether ``expr`` is a call of the ``is_c_layout`` intrinsic with one argument."""
    if not (isinstance(expr, ir.Expr) and expr.op == "call" and len(expr.args) == 1 and not expr.kws):
        return False
    from lucent.link.numba.dispatch.elemwise import is_c_layout

    callee = guard(get_definition, func_ir, expr.func)
    return isinstance(callee, (ir.Global, ir.FreeVar)) and callee.value is is_c_layout


@register_pass(mutates_CFG=True, analysis_only=False)
class ResolveArgumentLayouts(FunctionPass):
    """Replace ``is_c_layout(argument)`` by the constant its type gives (see the module docstring)."""

    _name = "lucent_resolve_argument_layouts"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        func_ir = state.func_ir
        changed = False
        for block in func_ir.blocks.values():
            for stmt in block.body:
                if not (isinstance(stmt, ir.Assign) and _is_layout_test(func_ir, stmt.value)):
                    continue
                argument = guard(get_definition, func_ir, stmt.value.args[0])
                if not isinstance(argument, ir.Arg):
                    continue
                arg_type = state.args[argument.index]
                # what the intrinsic answers for this type
                constant = ir.Const(isinstance(arg_type, types.Array) and arg_type.layout == "C", loc=stmt.loc)
                definitions = func_ir._definitions[stmt.target.name]
                definitions[definitions.index(stmt.value)] = constant
                stmt.value = constant
                changed = True
        return changed


class KernelCompiler(CompilerBase):
    """Numba's nopython pipeline, with the layouts of arguments resolved before branches are pruned.

    It also lowers into a ``KernelCodeLibrary`` (``kernel_library``): LLVM
    optimises a kernel's module once, not its functions first.
    """

    def define_pipelines(self):
        pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline.add_pass_after(ResolveArgumentLayouts, _pass_before(pipeline, DeadBranchPrune))
        pipeline.add_pass_after(UseKernelCodeLibrary, NopythonTypeInference)
        pipeline.finalize()
        return [pipeline]


def _pass_before(pipeline, pass_class):
    """The pass that runs just before ``pass_class`` in ``pipeline``."""
    names = [p for p, _ in pipeline.passes]
    return names[names.index(pass_class) - 1]


__all__ = ["KernelCompiler", "ResolveArgumentLayouts"]
