"""The layer rule of lucent's design: imports point down, never up.

The layers, bottom to top::

    base       configuration, version, small utilities
    graph      Variable, Apply, Type, Op, FunctionGraph, rewriting
    ops        tensor, scalar, gradient, sparse, ifelse, printing, and
               the Types of link/c
    link       the Python and Numba execution paths
    compile    function, In/Out, shared, Mode, profiling; scan (its op
               runs a compiled inner function, as PyTensor's does)
    debugmode  both paths node by node, compared and reported
    notebook   widgets and the IPython extension

Every ``import`` and ``from ... import`` of every module counts, including
the ones inside functions (a lazy import is still a dependency). The
exceptions below are the ones that exist today, each with its reason; the
list may only shrink: an exception that is no longer needed fails the test
too, so it gets deleted when the import does.
"""

import ast
from pathlib import Path

import lucent

PACKAGE = Path(lucent.__file__).resolve().parent

LAYERS = {
    "_version": 0,
    "progress": 0,
    "configdefaults": 0,
    "configparser": 0,
    "utils": 0,
    "npy_2_compat": 0,
    "graph": 1,
    "tensor": 2,
    "scalar": 2,
    "gradient": 2,
    "sparse": 2,
    "typed_list": 2,
    "assumptions": 2,
    "misc": 2,
    "raise_op": 2,
    "ifelse": 2,
    "printing": 2,
    "printers": 2,
    "print_op": 2,
    # link/c holds only Types (the C-interface types of the specification:
    # EnumType, Generic, CDataType), which ops use like any other Type.
    "link.c": 2,
    "link.c.basic": 3,  # PyTensor's C linker names, which run lucent's Numba linkers
    "link": 3,
    "compile": 4,
    "scan": 4,
    # Its node is an OpFromGraph (a graph op, defined in compile), as PyTensor's Einsum.
    "tensor.einsum": 4,
    "debugmode": 5,
    "widgets": 6,
    "kernel_ext": 6,
}
NOTEBOOK = 6

#: (importing module, imported module): why the upward import is there.
EXCEPTIONS = {
    # PyTensor's module paths: the name lives above, PyTensor users import it here.
    ("lucent.compile.debug.debugmode", "lucent.debugmode"): "PyTensor's path of DebugMode",
    ("lucent.compile.nanguardmode", "lucent.debugmode.nanguard"): "PyTensor's path of NanGuardMode",
    ("lucent.compile.debug.nanguardmode", "lucent.debugmode.nanguard"): "PyTensor's path of NanGuardMode",
    ("lucent.tensor.sharedvar", "lucent.compile.sharedvalue"): (
        "PyTensor's path of the tensor shared constructor; SharedVariable lives in compile"
    ),
    ("lucent.tensor.random.variable", "lucent.compile.sharedvalue"): (
        "PyTensor's path of the shared generator (shared_rng); SharedVariable lives in compile"
    ),
    ("lucent.sparse.sharedvar", "lucent.compile.sharedvalue"): (
        "PyTensor's path of the sparse shared constructor; SharedVariable lives in compile"
    ),
    ("lucent.link.numba.dispatch.tensor_basic", "lucent.compile.ops"): (
        "the kernels of DeepCopyOp and ViewOp, which live at PyTensor's path in compile"
    ),
    ("lucent.tensor", "lucent.tensor.einsum"): (
        "PyTensor's path of pt.einsum, whose Einsum node is an OpFromGraph (compile layer)"
    ),
    # scan: an op whose perform runs a compiled inner function, so it sits with compile.
    ("lucent.gradient.jacobian", "lucent.scan.basic"): (
        "a jacobian whose length is known only at run time loops with scan, as PyTensor's does"
    ),
    ("lucent.link.numba.dispatch.scan", "lucent.scan.op"): (
        "the Scan kernel is generated from the op's description of its inputs and outputs"
    ),
    # Debugging helpers that compile or print on request (imports inside functions).
    ("lucent.gradient.verify", "lucent.compile"): "verify_grad compiles the functions it checks",
    ("lucent.graph.basic", "lucent.printing"): "Variable.dprint / Apply.dprint",
    ("lucent.graph.fg", "lucent.printing"): "FunctionGraph.dprint",
    ("lucent.graph.dot", "lucent.printing"): "node labels of the drawn graph use the printer's text",
}


def _layer(module):
    parts = module.split(".")
    if parts[0] != "lucent":
        return None
    if len(parts) == 1:
        return "top"
    for n in range(len(parts), 1, -1):  # the longest listed prefix decides
        key = ".".join(parts[1:n])
        if key in LAYERS:
            return LAYERS[key]
    return LAYERS.get(parts[1], "unknown")


def _module_name(path):
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    name = ".".join(rel.parts)
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def _imports(path, module):
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            if source == "lucent":  # ``from lucent import progress`` imports a submodule
                for alias in node.names:
                    yield f"lucent.{alias.name}"
            else:
                yield source


def upward_imports():
    """``{(module, imported)}`` for every import that points up a layer."""
    found, unknown = set(), set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        mine = _layer(module)
        if mine == "top":
            continue  # the package itself re-exports every layer
        if mine == "unknown":
            unknown.add(module)
            continue
        for imported in _imports(path, module):
            theirs = _layer(imported)
            if theirs is None:
                continue
            if theirs == "unknown":
                unknown.add(imported)
            elif theirs == "top":
                if mine != NOTEBOOK:  # the notebook layer uses the public facade
                    found.add((module, imported))
            elif theirs > mine:
                found.add((module, imported))
    return found, unknown


def test_every_package_has_a_layer():
    _, unknown = upward_imports()
    assert not unknown, f"modules with no layer in tests/test_layers.py LAYERS: {sorted(unknown)}"


def test_imports_point_down_the_layers():
    found, _ = upward_imports()
    new = sorted(found - set(EXCEPTIONS))
    assert not new, "imports that point up a layer (see the layer list in this file):\n" + "\n".join(
        f"  {a} imports {b}" for a, b in new
    )


def test_exceptions_only_shrink():
    found, _ = upward_imports()
    stale = sorted(set(EXCEPTIONS) - found)
    assert not stale, "exceptions no longer needed: delete them from EXCEPTIONS:\n" + "\n".join(
        f"  {a} -> {b}" for a, b in stale
    )
