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

import hashlib
import os
import types as pytypes

import numpy as np

from lucent.link.numba.dispatch.basic import CODEGEN_VERSION, _kernel_dir


class Uncacheable(Exception):
    """The graph cannot be cached on disk; the message says why."""


# ---------------------------------------------------------------------------
# Structural descriptions
# ---------------------------------------------------------------------------
def class_path(klass):
    return f"{klass.__module__}.{klass.__qualname__}"


def describe(obj, _depth=0):
    """A deterministic, process-independent description of ``obj`` (nested tuples of str).

    Raises ``Uncacheable`` for values whose identity is only their address.
    """
    if _depth > 60:
        raise Uncacheable("a value nests too deeply to be described")
    d = _depth + 1
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return (type(obj).__name__, repr(obj))
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise Uncacheable("a constant is an ndarray of Python objects")
        data = np.ascontiguousarray(obj)
        return ("nd", obj.dtype.str, obj.shape, hashlib.sha256(data.view(np.uint8).reshape(-1)).hexdigest())
    if isinstance(obj, np.generic):
        return ("np", obj.dtype.str, obj.tobytes().hex())
    if getattr(obj, "format", None) in ("csr", "csc", "bsr") and hasattr(obj, "indptr"):
        # A SciPy sparse matrix: its format, shape and arrays.
        return ("sparse", obj.format, tuple(obj.shape)) + tuple(
            describe(np.asarray(a), d) for a in (obj.data, obj.indices, obj.indptr)
        )
    if isinstance(obj, np.dtype):
        return ("dtype", obj.str)
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__,) + tuple(describe(x, d) for x in obj)
    if isinstance(obj, (set, frozenset)):
        return ("set",) + tuple(sorted((describe(x, d) for x in obj), key=repr))
    if isinstance(obj, dict):
        return ("dict",) + tuple(sorted(((describe(k, d), describe(v, d)) for k, v in obj.items()), key=repr))
    if isinstance(obj, slice):
        return ("slice", describe(obj.start, d), describe(obj.stop, d), describe(obj.step, d))
    if isinstance(obj, type):
        return ("class", class_path(obj))
    if isinstance(obj, (pytypes.FunctionType, pytypes.BuiltinFunctionType)):
        if "<locals>" in obj.__qualname__ or "<lambda>" in obj.__qualname__:
            raise Uncacheable(f"the local function {obj.__qualname__} is part of an op's identity")
        return ("fn", obj.__module__, obj.__qualname__)

    from lucent.graph.basic import Constant, Variable
    from lucent.graph.op import Op
    from lucent.graph.type import Type

    if isinstance(obj, Op):
        return describe_op(obj, d)
    if isinstance(obj, Type):
        return ("type", class_path(type(obj)), _describe_public(obj, d))
    if isinstance(obj, Constant):
        return ("const", describe(obj.type, d), describe(obj.data, d))
    if isinstance(obj, Variable):
        raise Uncacheable(f"the variable {obj} is part of an op's identity")
    props = getattr(type(obj), "__props__", None)
    if props is not None:
        return ("obj", class_path(type(obj))) + tuple(describe(getattr(obj, p), d) for p in props)
    if type(obj).__repr__ is not object.__repr__:
        text = repr(obj)
        if " at 0x" not in text:
            return ("obj", class_path(type(obj)), text)
    raise Uncacheable(f"a {type(obj).__name__} value ({obj!r}) has no structural description")


def _describe_public(obj, depth):
    return tuple(
        (name, describe(value, depth))
        for name, value in sorted(vars(obj).items())
        if not name.startswith("_") and name != "name"
    )


def describe_op(op, depth=0):
    """An op's identity: its class path and props (or, without ``__props__``, its public state)."""
    from lucent.graph.op import _declares_props

    head = ("op", class_path(type(op)))
    if _declares_props(type(op)):
        desc = head + tuple(describe(getattr(op, p), depth + 1) for p in op.__props__)
    else:
        desc = head + (_describe_public(op, depth + 1),)
    key = getattr(op, "_key", None)  # ops whose equality is a structural key (Composite)
    if key is not None:
        desc += (describe(key, depth + 1),)
    return desc


def describe_code(code, _depth=0):
    """A description of a code object: bytecode, constants (nested code too) and names."""
    consts = []
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            consts.append(describe_code(c, _depth + 1))
        else:
            try:
                consts.append(describe(c))
            except Uncacheable:
                consts.append(repr(type(c)))
    return ("code", code.co_code.hex(), tuple(consts), code.co_names, code.co_varnames)


# ---------------------------------------------------------------------------
# Kernel fingerprints
# ---------------------------------------------------------------------------
_file_digests: dict = {}


def _file_digest(path):
    if path not in _file_digests:
        try:
            with open(path, "rb") as f:
                _file_digests[path] = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            _file_digests[path] = "missing"
    return _file_digests[path]


_CODEGEN_FILES = (
    "linker.py", "codegen.py", "cache.py", "dispatch/basic.py", "dispatch/fallback.py",
    "../shared_writes.py",  # the in-place update checks written into graph functions
)


def _digest_files(paths):
    h = hashlib.sha256()
    for path in paths:
        h.update(os.path.basename(path).encode())
        h.update(_file_digest(path).encode())
    return h.hexdigest()


def implementation_digest():
    """A digest of the files that generate graph functions (computed once per process)."""
    key = "__codegen__"
    if key not in _file_digests:
        here = os.path.dirname(os.path.abspath(__file__))
        _file_digests[key] = _digest_files([os.path.join(here, f) for f in _CODEGEN_FILES])
    return _file_digests[key]


def builtin_kernels_digest():
    """A digest of every file of ``lucent.link.numba.dispatch``.

    Part of the fingerprint of lucent's own kernels: they call helpers
    across these modules, so an edit to any of them (in a development
    checkout, without a version bump) must not load stale code.
    """
    key = "__dispatch__"
    if key not in _file_digests:
        folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dispatch")
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
        except OSError:
            names = []
        _file_digests[key] = _digest_files([os.path.join(folder, n) for n in names])
    return _file_digests[key]


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


def make_key(parts):
    """The hex sha256 of a description."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()


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
            return numba.njit(**options)(fn)
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
