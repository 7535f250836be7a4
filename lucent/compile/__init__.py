"""Compiling graphs into callables: ``function``, ``shared``, ``In``/``Out``, modes.

Importing this package also lets ``Variable.eval`` compile (it installs
``function`` as the graph layer's function builder).
"""

from lucent.compile.sharedvalue import SharedVariable, shared, shared_constructor
from lucent.compile.io import In, Out, SymbolicInput, SymbolicOutput
from lucent.compile.mode import (
    FAST_COMPILE,
    FAST_RUN,
    Mode,
    get_default_mode,
    get_mode,
    predefined_linkers,
    predefined_modes,
    predefined_optimizers,
    register_linker,
    register_mode,
    register_optimizer,
)
from lucent.graph.rewriting.db import optdb
from lucent.compile.profiling import ProfileStats
from lucent.compile.ops import DeepCopyOp, ViewOp, as_op, deep_copy_op, view_op
from lucent.compile.aliasing import (
    Supervisor,
    add_supervisor_to_fgraph,
    alias_root,
    infer_reuse_pattern,
    view_tree_set,
)
from lucent.compile.function_module import (
    DuplicateInputError,
    Function,
    FunctionMaker,
    UnusedInputError,
)
# Load the ``lucent.compile.function`` module path first: importing it later
# would rebind ``lucent.compile.function`` from the function to the module.
import lucent.compile.function as _function_path  # noqa: E402,F401
from lucent.compile.maker import function  # noqa: E402
from lucent.compile.monitormode import MonitorMode  # noqa: E402
from lucent.graph.basic import set_function_builder as _set_function_builder

_set_function_builder(function)

__all__ = [
    "function",
    "shared",
    "shared_constructor",
    "SharedVariable",
    "In",
    "Out",
    "SymbolicInput",
    "SymbolicOutput",
    "Mode",
    "get_mode",
    "get_default_mode",
    "register_mode",
    "register_optimizer",
    "predefined_modes",
    "predefined_optimizers",
    "predefined_linkers",
    "register_linker",
    "optdb",
    "MonitorMode",
    "FAST_COMPILE",
    "FAST_RUN",
    "Function",
    "FunctionMaker",
    "ProfileStats",
    "UnusedInputError",
    "DuplicateInputError",
    "DeepCopyOp",
    "deep_copy_op",
    "ViewOp",
    "view_op",
    "as_op",
    "Supervisor",
    "add_supervisor_to_fgraph",
    "alias_root",
    "infer_reuse_pattern",
    "view_tree_set",
]
