"""The on-disk cache of compiled graph functions.

The Numba linker generates one Python function per graph and lets Numba
compile it. Numba can cache machine code on disk, but only per *source
file*: its index is keyed by the file's content hash and the argument
types. So the graph function is written to a file whose name is a hash of
everything that decides what the compiled code does - the **graph key**:

* for each node, in execution order: the op's class path and props (a
  structural description, never ``id``/``hash``), the positions of its
  inputs, its output types, and a fingerprint of its kernel (the kernel's
  source text digest, or its code object and registered ``version``);
* the graph's input types, and the hashes of the constants' data;
* lucent's version, Numba's version, ``CODEGEN_VERSION``, and a digest of
  the files implementing the Numba path (so editing a kernel in a checkout
  never loads stale code).

A new process compiling the same function finds the same file, Numba finds
its index, and nothing is compiled. Anything that cannot be described
structurally - an op run through the object-mode fallback, a user kernel
that is a closure registered without ``version=``, a constant whose value
cannot be hashed - raises ``Uncacheable`` with the reason; the linker then
compiles in memory and reports it (``config.cache_uncacheable``).

Files are written atomically (temporary file + rename) and Numba writes its
index and data the same way, so processes sharing the directory do not
corrupt each other; a corrupt entry is dropped and recompiled
(``dispatch.basic.harden_cache``).
"""

from __future__ import annotations

import os
import types as pytypes

from lucent.link.numba.cache_dir import CODEGEN_VERSION
from lucent.link.numba.cache_dir import kernel_dir as _kernel_dir
from lucent.link.numba.describe import (  # noqa: F401  (re-exported)
    _CODEGEN_FILES,
    Uncacheable,
    _describe_public,
    _digest_files,
    _file_digest,
    _file_digests,
    builtin_kernels_digest,
    class_path,
    describe,
    describe_code,
    describe_op,
    implementation_digest,
    make_key,
)


def _is_lucent(module_name):
    return module_name == "lucent" or (module_name or "").startswith("lucent.")


def kernel_fingerprint(op, kernel, registry, _depth=0):
    """What decides the compiled code of ``kernel`` (the kernel of ``op``).

    A kernel made by ``kernel_from_source`` is described by its text digest.
    Otherwise its code object is described; a closure's captured values are
    trusted to follow from the op's props and the node's types (both are in
    the key) when the kernel is lucent's own or was registered with an
    explicit ``version=``; a user closure without ``version=`` is refused.
    """
    origin = getattr(kernel, "__lucent_origin__", None)
    if origin is not None:
        return ("source",) + tuple(origin)
    py = getattr(kernel, "py_func", kernel)
    code = getattr(py, "__code__", None)
    if code is None:
        raise Uncacheable(f"the Numba implementation of {type(op).__name__} is not a Python function")
    entry = registry.lookup(op) if op is not None else None
    factory = entry[0] if entry else None
    own = _is_lucent(getattr(py, "__module__", "")) and (
        factory is None or _is_lucent(getattr(factory, "__module__", ""))
    )
    is_closure = py.__closure__ is not None or "<locals>" in py.__qualname__
    if is_closure and not own and not (op is not None and registry.version_is_explicit(op)):
        raise Uncacheable(
            f"the Numba implementation of {type(op).__name__} is a closure "
            f"({py.__qualname__}) registered without version=; register it with "
            f"numba_funcify.register({type(op).__name__}, version=N) to vouch that it depends "
            "only on the op's props and the node's types, or make it a module-level function"
        )
    cells = []
    for cell in py.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:
            cells.append("empty")
            continue
        if hasattr(value, "py_func") and _depth < 8:
            cells.append(kernel_fingerprint(None, value, registry, _depth + 1))
        else:
            try:
                cells.append(describe(value))
            except Uncacheable:
                cells.append(("unnamed", class_path(type(value))))
    files = [getattr(code, "co_filename", "")]
    factory_code = getattr(factory, "__code__", None)
    if factory_code is not None:
        files.append(factory_code.co_filename)
    return (
        "fn",
        getattr(py, "__module__", ""),
        py.__qualname__,
        describe_code(code),
        tuple(cells),
        tuple(_file_digest(f) if os.path.isfile(f) else f for f in files),
        builtin_kernels_digest() if own else tuple(_dependencies(py, set())),
    )


# ---------------------------------------------------------------------------
# What a user kernel calls
# ---------------------------------------------------------------------------
def _is_installed(module_name):
    """Whether a module belongs to Python or an installed package (versioned elsewhere)."""
    import sys

    top = (module_name or "").split(".")[0]
    if top in sys.stdlib_module_names or top in ("numba", "numpy", "scipy", "llvmlite") or _is_lucent(top):
        return True
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None) or ""
    return "site-packages" in path or "dist-packages" in path


def _names_used(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            names |= _names_used(c)
    return names


def _dependencies(py, seen, depth=0):
    """Descriptions of the user code and values a kernel reaches through its globals.

    Numba compiles a kernel together with every function it calls and
    freezes the global values it reads, so all of them decide the machine
    code. A helper in another module of the user's (``from mymod import
    helper``, or ``mymod.helper(...)``) is described by its code and its
    file's digest, recursively; a global number or array by its value.
    Python's and installed packages' code is left to their versions.
    """
    import sys

    if depth > 8 or id(py) in seen:
        return []
    seen.add(id(py))
    glob = getattr(py, "__globals__", None) or {}
    code = getattr(py, "__code__", None)
    if code is None:
        return []
    found = []
    names = _names_used(code)
    for name in sorted(names):
        if name not in glob:
            continue
        value = glob[name]
        if isinstance(value, pytypes.ModuleType):
            if _is_installed(value.__name__):
                continue
            path = getattr(value, "__file__", None) or ""
            found.append(("module", value.__name__, _file_digest(path) if os.path.isfile(path) else ""))
            for attr in sorted(names):
                member = getattr(value, attr, None)
                if member is not None and not isinstance(member, pytypes.ModuleType):
                    found.extend(_describe_dependency(f"{name}.{attr}", member, seen, depth))
        else:
            found.extend(_describe_dependency(name, value, seen, depth))
    return found


def _describe_dependency(name, value, seen, depth):
    inner = getattr(value, "py_func", value)  # a Numba dispatcher's Python function
    if isinstance(inner, pytypes.FunctionType):
        module = getattr(inner, "__module__", "") or ""
        if _is_installed(module):
            return []
        path = inner.__code__.co_filename
        return [
            (
                "call",
                name,
                module,
                inner.__qualname__,
                describe_code(inner.__code__),
                _file_digest(path) if os.path.isfile(path) else path,
            )
        ] + _dependencies(inner, seen, depth + 1)
    if isinstance(value, (type, pytypes.BuiltinFunctionType)) or callable(value):
        return []
    try:
        return [("value", name, describe(value))]
    except Uncacheable:
        return [("value", name, class_path(type(value)))]


def versions():
    import numba

    from lucent._version import __version__

    return (__version__, numba.__version__, CODEGEN_VERSION, implementation_digest())


# ---------------------------------------------------------------------------
# Graph modules
# ---------------------------------------------------------------------------
_loaded: dict = {}


def graph_dir():
    return os.path.join(_kernel_dir(), "graphs")


def graph_module_path(key):
    """Where the cached graph module of ``key`` is written."""
    return os.path.join(graph_dir(), f"lucent_graph_{key[:40]}.py")


def load_graph_function(key, source, namespace, cacheable, name="graph_fn"):
    """The Numba dispatcher of the function ``name`` defined by ``source``.

    ``namespace`` (kernels, scalar constants) becomes the module's globals.
    A cacheable graph is a module file named by ``key`` compiled with
    Numba's disk cache; in one process the same key gives the same
    dispatcher. An uncacheable graph is compiled in memory only. The graph
    function (``graph_fn``) is what Python calls; the other functions made
    here (a loop's driver and body, a Blockwise's loop) are kernels called
    from compiled code, whose Python entry is built on demand
    (``dispatch/python_entry.py``).
    """
    from lucent.configdefaults import config
    from lucent.link.numba.dispatch.basic import harden_cache, load_module_from_text

    def dispatcher_of(fn, cache):
        import numba

        options = {"cache": cache, "fastmath": config.numba__fastmath, "no_cfunc_wrapper": True}
        if name == "graph_fn":
            from lucent.link.numba.dispatch.layout_pruning import KernelCompiler

            # compiled like a kernel (``KernelCompiler``), with a CPython wrapper
            return numba.njit(pipeline_class=KernelCompiler, **options)(fn)
        from lucent.link.numba.dispatch.python_entry import kernel_dispatcher

        return kernel_dispatcher(fn, options)

    if not cacheable:
        ns = dict(namespace)
        ns["__name__"] = f"lucent_graph_{key[:16]}"
        exec(compile(source, f"<lucent graph {key[:16]}>", "exec"), ns)
        return dispatcher_of(ns[name], False), False
    module_name = f"lucent_graph_{key[:40]}"
    if module_name in _loaded:
        return _loaded[module_name], True
    path = graph_module_path(key)
    module = load_module_from_text(module_name, path, source, namespace)
    dispatcher = dispatcher_of(getattr(module, name), True)
    harden_cache(dispatcher)
    _loaded[module_name] = dispatcher
    return dispatcher, False


__all__ = [
    "Uncacheable",
    "describe",
    "describe_op",
    "graph_module_path",
    "kernel_fingerprint",
    "load_graph_function",
    "make_key",
    "versions",
]
