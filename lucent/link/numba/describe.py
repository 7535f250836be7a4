"""Structural descriptions of graphs and file digests, the material of every cache key.

A description is nested tuples of strings that depend only on what an op,
type or constant *is* (class path, props, data), never on addresses, so the
same graph gives the same key in every process. Free of Numba imports: the
Numba linker's disk cache (``cache.py``) and the loader of cached machine
code that runs without Numba (``native.py``) both key on them.
"""

from __future__ import annotations

import hashlib
import os
import types as pytypes

import numpy as np


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
    "linker.py", "codegen.py", "graph_program.py", "kernel_calls.py", "cache.py", "cache_dir.py", "describe.py",
    "native.py",
    "dispatch/basic.py", "dispatch/fallback.py",
    "../shared_writes.py",  # the in-place update checks written into graph functions
)


def _digest_files(paths):
    h = hashlib.sha256()
    for path in paths:
        h.update(os.path.basename(path).encode())
        h.update(_file_digest(path).encode())
    return h.hexdigest()


def dispatch_files_digest(*names):
    """A short digest of these files of ``lucent.link.numba.dispatch`` (names like ``"memory.py"``).

    Written into the text of kernels whose code an intrinsic of those files
    emits: Numba's disk cache tracks only a kernel's own file, so an edit
    to the intrinsic gives new kernel files instead of loading stale code.
    """
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dispatch")
    return _digest_files([os.path.join(folder, n) for n in names])[:16]


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


def make_key(parts):
    """The hex sha256 of a description."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()
