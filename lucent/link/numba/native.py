"""Cached graph functions loaded without importing Numba.

A warm compile (a new process whose disk cache already holds the graph)
spent most of its time on things the cached machine code does not need:
importing Numba (about 0.15 s), its lowering registries and the kernel
modules (0.06 s), and Numba's cache loader rebuilding 15-20 compiled
functions one by one (0.06 s). So after the Numba linker has compiled or
loaded a graph function, it also saves a **bundle**: one file holding the
machine code of the graph function and of every kernel it calls through a
slot, what each of their external symbols is, and how to call the result.
A later process loads the bundle with ``llvmlite`` alone (tens of
milliseconds), and Numba is imported only if something else needs it.

What makes a bundle safe to use:

* **Its key** (``bundle_key``) is computed from the rewritten graph without
  any kernel: each node's op (class path and props), where its inputs come
  from, the types, the values of every constant except array constants
  (those are arguments of the graph function), lucent's version, the
  digests of the files that generate kernels and graph functions, the
  Numba and llvmlite versions, and the ``numba__*`` flags. Only graphs
  whose description names nothing but lucent's, NumPy's and SciPy's classes
  and functions get bundles (inner graphs included), so no user-written
  code can change behind the key; a process where a kernel was registered
  from outside lucent (``numba_funcify.register``, which could replace one
  of lucent's) neither writes nor loads bundles.
* **Array constants whose values a kernel baked into its code** (those not
  passed as arguments) are recorded by digest and compared at load.
* **The machine**: the bundle records the target triple, CPU name and
  features (and the ``NUMBA_CPU_*`` overrides) it was compiled for, and is
  only used on the same.
* **The file**: a sha256 of the key and content; a damaged, truncated or
  swapped file is ignored (and rewritten by the next ordinary compile).
* **Symbols**: every symbol the machine code needs is resolved before any
  of it is loaded (Numba's C helpers, NumPy's BLAS, the process); a bundle
  needing anything else is not written. Machine code shared by several
  bundles (a kernel) is loaded once per process; different machine code
  for a function already loaded makes the bundle unusable, never replaces
  it. (Helpers that several objects define under one name, such as
  Numba's content-named ``__excinfo_unwrap_args...``, are the same code.)
* **Arguments**: the graph function was compiled for C-contiguous,
  writeable, aligned arrays; a call with anything else (a transposed view,
  a read-only array) goes to the ordinary Numba dispatcher, built the first
  time it is needed, which compiles the specialisation as before.

A graph function a process already has (compiled by Numba or loaded from a
bundle) also serves, by the same key, every later graph of the process that
differs only in the values of its array constants: a variant of a model
(another learning rate) then generates, keys and loads nothing.

``config.numba__native_cache`` turns bundles off.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.machinery
import importlib.util
import os
import pickle
import struct
import sys
import threading

import numpy as np

from lucent.graph.basic import Constant

#: File layout version; bumped when the bundle format changes.
FORMAT = b"lucent-native-5\n"

_lock = threading.RLock()


# ---------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------
def _package_file_digest(package, relative):
    """sha256 of a file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise _NotBundleable(f"{package} is not installed")
    path = os.path.join(spec.submodule_search_locations[0], relative)
    from lucent.link.numba.describe import _file_digest

    return _file_digest(path)


def _numba_flags():
    from lucent.configdefaults import config

    return tuple(
        (name, repr(getattr(config, name)))
        for name in ("numba__cache", "numba__kernel_calls", "numba__graph_program", "numba__fastmath", "numba__num_threads")
    )


class _NotBundleable(Exception):
    """This graph, or this process, cannot use bundles; the message says why."""


#: Modules whose classes and functions may appear in a bundled graph's
#: description: lucent's own and the libraries it builds on. Anything else
#: (a user's op, a user's function among an op's props, perhaps inside a
#: loop's inner graph) may be compiled from code that changes between
#: processes without changing the key, so such graphs get no bundle.
_KNOWN_CODE = ("lucent", "numpy", "scipy", "builtins", "math", "cmath", "operator")


def _check_known_code(description):
    """Raise ``_NotBundleable`` if ``description`` names a class or function from outside ``_KNOWN_CODE``."""
    stack = [description]
    while stack:
        item = stack.pop()
        if not isinstance(item, tuple) or not item:
            continue
        tag = item[0]
        if tag in ("op", "class", "type", "obj") and len(item) > 1 and isinstance(item[1], str):
            if item[1].split(".")[0] not in _KNOWN_CODE:
                raise _NotBundleable(f"{item[1]} is not lucent's")
        elif tag == "fn" and len(item) > 1 and isinstance(item[1], str):
            if item[1].split(".")[0] not in _KNOWN_CODE:
                raise _NotBundleable(f"the function {item[1]}.{item[2]} is not lucent's")
        stack.extend(x for x in item[1:] if isinstance(x, tuple))


def _layout(a):
    """How Numba types an array argument: (layout, writeable, aligned, dtype, ndim)."""
    flags = a.flags
    layout = "C" if flags.c_contiguous else ("F" if flags.f_contiguous else "A")
    return (layout, bool(flags.writeable), bool(flags.aligned), a.dtype.str, a.ndim)


def bundle_key(fgraph, order):
    """The bundle key of ``fgraph`` scheduled as ``order`` (raises ``_NotBundleable``)."""
    from lucent._version import __version__
    from lucent.link.numba.cache_dir import CODEGEN_VERSION
    from lucent.link.numba.describe import (
        Uncacheable,
        builtin_kernels_digest,
        describe,
        describe_op,
        implementation_digest,
        make_key,
    )
    from lucent.tensor.type import TensorType

    for var in fgraph.inputs:
        if not isinstance(var.type, TensorType):
            raise _NotBundleable(f"the input {var} is not a tensor")
    try:
        parts = [
            FORMAT,
            __version__,
            CODEGEN_VERSION,
            implementation_digest(),
            builtin_kernels_digest(),
            _package_file_digest("numba", "_version.py"),
            _package_file_digest("llvmlite", "_version.py"),
            _numba_flags(),
            tuple(describe(v.type) for v in fgraph.inputs),
        ]
        position = {var: ("in", k) for k, var in enumerate(fgraph.inputs)}
        # Array constants are arguments, one per distinct constant: the key
        # says which uses share one (Gemm's alpha and beta may be one
        # constant 1.0 in one graph and two in another).
        arrays = {}
        for n, node in enumerate(order):
            op_description = describe_op(node.op)
            _check_known_code(op_description)
            ins = []
            for var in node.inputs:
                if var in position:
                    ins.append(position[var])
                elif isinstance(var, Constant):
                    if isinstance(var.data, np.ndarray):
                        number = arrays.setdefault(var, len(arrays))
                        ins.append(("array", number, describe(var.type), _layout(var.data), var.data.shape))
                    else:
                        ins.append(("const", describe(var.type), describe(var.data)))
                else:  # pragma: no cover - FunctionGraph refuses it
                    raise _NotBundleable(f"{var} has no source")
            for j, out in enumerate(node.outputs):
                position[out] = ("node", n, j)
            parts.append((op_description, tuple(ins), tuple(describe(o.type) for o in node.outputs)))
        outputs = []
        for var in fgraph.outputs:
            if var in position:
                outputs.append(position[var])
            elif isinstance(var, Constant):
                outputs.append(("const", describe(var.type), describe(var.data)))
            else:  # pragma: no cover - FunctionGraph refuses it
                raise _NotBundleable(f"the output {var} has no source")
        parts.append(tuple(outputs))
    except Uncacheable as e:
        raise _NotBundleable(str(e)) from None
    return make_key(parts)


def _bundle_path(key):
    from lucent.link.numba.cache_dir import kernel_dir

    return os.path.join(kernel_dir(), "native", f"graph-{key[:40]}.bin")


def _host():
    """What the machine code was compiled for, as llvmlite and Numba's overrides see it."""
    import llvmlite.binding as ll

    try:
        features = ll.get_host_cpu_features().flatten()
    except RuntimeError:  # pragma: no cover - LLVM cannot tell
        features = ""
    env = tuple(os.environ.get(k) for k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_ENABLE_AVX", "NUMBA_OPT"))
    return (ll.get_process_triple(), ll.get_host_cpu_name(), features, env)


# ---------------------------------------------------------------------------
# The file
# ---------------------------------------------------------------------------
def _seal(key, full_key, payload):
    head = full_key.encode()
    body = struct.pack("<Q", len(head)) + head + payload
    return FORMAT + hashlib.sha256(key.encode() + body).digest() + body


def _full_key_of(blob):
    start = len(FORMAT) + 32
    if not blob.startswith(FORMAT) or len(blob) < start + 8:
        return None
    (n,) = struct.unpack_from("<Q", blob, start)
    return blob[start + 8 : start + 8 + n].decode(errors="replace")


def _unseal(key, blob):
    """The payload of a bundle file's bytes, or ``None`` if they are not this key's bundle."""
    start = len(FORMAT)
    if not blob.startswith(FORMAT) or len(blob) < start + 40:
        return None
    digest, body = blob[start : start + 32], blob[start + 32 :]
    if hashlib.sha256(key.encode() + body).digest() != digest:
        return None
    (n,) = struct.unpack_from("<Q", body)
    return body[8 + n :]


# ---------------------------------------------------------------------------
# ELF symbol tables (the objects Numba emits on Linux)
# ---------------------------------------------------------------------------
def elf_symbols(obj):
    """``(strong, weak, undefined)`` global symbol names of an ELF64 little-endian object, or ``None``.

    Common symbols (the environment pointers Numba declares in every
    module that links a function) count as weak: the loader merges them.
    """
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    strong, weak, undefined = set(), set(), set()
    for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link][4]
        for k in range(size // (entsize or 24)):
            st_name, st_info, _, st_shndx, _, _ = struct.unpack_from("<IBBHQQ", obj, offset + k * 24)
            bind = st_info >> 4
            if bind not in (1, 2) or not st_name:  # STB_GLOBAL, STB_WEAK
                continue
            end = obj.index(b"\0", strtab + st_name)
            name = obj[strtab + st_name : end].decode()
            if st_shndx == 0:
                undefined.add(name)
            elif bind == 1 and st_shndx != 0xFFF2:  # SHN_COMMON: merged, like a weak symbol
                strong.add(name)
            else:
                weak.add(name)
    return strong, weak, undefined


# ---------------------------------------------------------------------------
# Saving (the Numba path, after a graph function is compiled or loaded)
# ---------------------------------------------------------------------------
def keep_object_code():
    """Make Numba keep the machine code of libraries it loads from its cache (needed to write bundles).

    Numba hands a cached library's object code to LLVM and drops it; the
    bytes (a few kilobytes per kernel) are kept on the library instead.
    """
    from numba.core import codegen

    cls = codegen.JITCodeLibrary
    if getattr(cls, "__lucent_keeps_objects__", False):
        return
    original = cls._unserialize.__func__

    def _unserialize(klass, codegen_, state):
        library = original(klass, codegen_, state)
        if state[1] == "object":
            library._lucent_object = state[2][0]
        return library

    cls._unserialize = classmethod(_unserialize)
    cls.__lucent_keeps_objects__ = True


def _object_of(library):
    obj = getattr(library, "_compiled_object", None) or getattr(library, "_lucent_object", None)
    if obj is None:
        raise _NotBundleable(f"the machine code of {library.name} is not at hand")
    return obj


def _symbol_provider(name):
    """Where the loader finds ``name``: a tuple, or ``None`` when it cannot."""
    import builtins

    from numba import _dynfunc, _helperlib
    from numba.core.runtime import _nrt_python

    if name == "_Py_NoneStruct":
        return ("none",)
    if name.startswith("PyExc_"):
        exc = getattr(builtins, name[6:], None)
        if isinstance(exc, type) and issubclass(exc, BaseException):
            return ("exc", name[6:])
    if name.startswith("numba_") and name[6:] in _helperlib.c_helpers:
        return ("helperlib", name[6:])
    if name.startswith("numba_") and name[6:] in _dynfunc.c_helpers:
        return ("dynfunc", name[6:])
    if name.startswith("NRT_") and name[4:] in _nrt_python.c_helpers:
        return ("nrt", name[4:])
    if name.startswith("_") and name in _nrt_python.c_helpers:
        return ("nrt", name)
    if name in _helperlib.c_helpers:
        return ("math", name)
    if name.startswith("lucent_cblas_"):
        from lucent.link.numba.dispatch import cblas

        for (routine, dtype), found in cblas._resolved.items():
            if found is not None and found[0] == name:
                return ("cblas", routine, dtype)
        return None
    try:
        if getattr(ctypes.CDLL(None), name, None) is not None:
            return ("process",)
    except (OSError, AttributeError):  # pragma: no cover
        pass
    return None


def _collect_objects(dispatcher, signature, objects, slots, envs, seen):
    """Add the machine code (and environment) of ``dispatcher``'s specialisation and of the kernels its slots call."""
    cres = dispatcher.overloads[tuple(signature)]
    name = cres.fndesc.llvm_func_name
    if name in seen:
        return cres
    seen.add(name)
    objects.append((name, _object_of(cres.library)))
    consts = list(cres.environment.consts) if cres.environment is not None else []
    for c in consts:
        if type(c).__module__.split(".")[0] not in ("builtins", "numpy"):
            raise _NotBundleable(f"the environment of {cres.fndesc.qualname} holds a {type(c).__name__}")
    # Compiled code reads its environment (constants, and what raising an
    # error with run-time values needs) through this global.
    envs.append((cres.fndesc.env_name, pickle.dumps(consts)))
    for site in getattr(dispatcher, "__lucent_sites__", None) or ():
        for slot, arg_types in site.targets.items():
            kernel_cres = _collect_objects(site.kernel, arg_types, objects, slots, envs, seen)
            slots[slot] = kernel_cres.fndesc.llvm_func_name
    return cres


def save(program, fgraph, order, extra_vars, dispatcher, signature):
    """Write the bundle of a graph function just compiled or loaded by Numba (never raises)."""
    from lucent.configdefaults import config

    if not config.numba__native_cache or program.cache_key is None:
        return False
    basic = sys.modules.get("lucent.link.numba.dispatch.basic")
    if basic is None or basic.numba_funcify.foreign_registrations:
        return False  # only machine code made of lucent's own kernels is bundled
    try:
        with _lock:
            return _save(program, fgraph, order, extra_vars, dispatcher, signature)
    except _NotBundleable:
        return False
    except Exception:  # pragma: no cover - a bundle is an optimisation: never fail a compile
        return False


def _layout_of(program, order, extra_vars):
    """How to call a graph function and read its results, for any graph with the same bundle key."""
    position = {}
    for n, node in enumerate(order):
        for i, var in enumerate(node.inputs):
            if isinstance(var, Constant):
                position.setdefault(var, (n, i))
    passed = set(extra_vars)
    return {
        "arg_inputs": list(program.arg_inputs),
        "extra": [position[var] for var in extra_vars],
        "extra_layouts": [_layout(a) for a in program.extra_args],
        # array constants a kernel read when it was generated: their values must match
        "baked": [
            (n, i, _digest(var.data))
            for var, (n, i) in position.items()
            if isinstance(var.data, np.ndarray) and var not in passed
        ],
        "n_results": program.n_results,
        "output_plan": [(k, None if k == "c" else w) for k, w in program.output_plan],
        "source": program.source,
        "cache_key": program.cache_key,
    }


def _digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).view(np.uint8).reshape(-1)).hexdigest()


def _save(program, fgraph, order, extra_vars, dispatcher, signature):
    key = bundle_key(fgraph, order)
    layout = _layout_of(program, order, extra_vars)
    # A variant of this graph compiled later in this process reuses the
    # dispatcher (unless it already has the native code of this graph).
    _in_process.setdefault(key, (layout, dispatcher, False))
    path = _bundle_path(key)
    try:
        with open(path, "rb") as f:
            if _full_key_of(f.read(len(FORMAT) + 32 + 8 + 256)) == program.cache_key:
                return True  # this graph's bundle is already there
    except OSError:
        pass
    objects, slots, envs = [], {}, []
    cres = _collect_objects(dispatcher, signature, objects, slots, envs, set())
    entries = []
    defined = set()
    needed = set()
    slot_globals = set()
    for name, obj in objects:
        table = elf_symbols(obj)
        if table is None:
            raise _NotBundleable("the machine code is not an ELF object")
        strong, weak, undefined = table
        entries.append((name, hashlib.sha256(obj).hexdigest(), obj))
        defined |= strong | weak
        needed |= undefined
        slot_globals |= {s for s in strong | weak if s.startswith("lucent_slot_")}
    if not slot_globals <= set(slots):
        raise _NotBundleable("a slot of the machine code is filled by code the bundle does not hold")
    symbols = {}
    for name in sorted(needed - defined):
        provider = _symbol_provider(name)
        if provider is None:
            raise _NotBundleable(f"the machine code needs the symbol {name}, which the loader cannot find")
        symbols[name] = provider
    payload = pickle.dumps(
        {
            "host": _host(),
            "objects": entries,
            "symbols": symbols,
            "slots": sorted(slots.items()),
            "wrapper": cres.fndesc.llvm_cpython_wrapper_name,
            "env_name": cres.fndesc.env_name,
            "envs": envs,
            "layout": layout,
        },
        protocol=pickle.HIGHEST_PROTOCOL,
    )
    from lucent.link.numba.cache_dir import write_atomically

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    except OSError:
        return False
    return write_atomically(path, _seal(key, program.cache_key, payload))


# ---------------------------------------------------------------------------
# Loading (no Numba import)
# ---------------------------------------------------------------------------
class _Runtime:
    """What running Numba-compiled machine code needs, set up once per process without importing Numba."""

    def __init__(self):
        import llvmlite.binding as ll

        self.ll = ll
        self.helperlib = _numba_extension("numba._helperlib", "_helperlib")
        self.dynfunc = _numba_extension("numba._dynfunc", "_dynfunc")
        self.nrt = _numba_extension("numba.core.runtime._nrt_python", os.path.join("core", "runtime", "_nrt_python"))
        self.nrt.memsys_use_cpython_allocator()  # as numba.core.runtime.nrt does on import
        ll.initialize_native_target()
        ll.initialize_native_asmprinter()
        _prime_unpickle(self.helperlib)
        target = ll.Target.from_default_triple()
        machine = target.create_target_machine(codemodel="jitdefault", jit=True)
        module = ll.parse_assembly("")
        module.triple = ll.get_process_triple()
        self.engine = ll.create_mcjit_compiler(module, machine)
        self.machine = machine
        self.loaded = set()  # digests of the objects in the engine
        self.owner = {}  # function an object was loaded for -> the object's digest
        self.symbols_added = set()
        self.environments = {}  # environment global -> the Environment it points to
        self.host = _host()

    def provide(self, name, provider):
        """Make ``name`` resolvable; ``False`` if it cannot be."""
        ll = self.ll
        kind = provider[0]
        if name not in self.symbols_added:
            address = None
            if kind == "none":
                address = id(None)
            elif kind == "exc":
                import builtins

                address = id(getattr(builtins, provider[1]))
            elif kind == "helperlib" or kind == "math":
                address = self.helperlib.c_helpers.get(provider[1])
            elif kind == "dynfunc":
                address = self.dynfunc.c_helpers.get(provider[1])
            elif kind == "nrt":
                address = self.nrt.c_helpers.get(provider[1])
            elif kind == "cblas":
                from lucent.link.numba.blas_symbols import blas_address

                found = blas_address(provider[1], provider[2])
                address = found[1] if found is not None and found[0] == name else None
            if address is not None:
                ll.add_symbol(name, address)
            self.symbols_added.add(name)
        return bool(ll.address_of_symbol(name))


_runtime = None


def _numba_extension(name, relative):
    """One of Numba's C extension modules, loaded without running ``numba/__init__.py``."""
    if name in sys.modules:
        return sys.modules[name]
    if "numba" in sys.modules:
        return importlib.import_module(name)
    spec = importlib.util.find_spec("numba")
    folder = spec.submodule_search_locations[0]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, relative + suffix)
        if os.path.exists(path):
            break
    else:
        raise _NotBundleable(f"Numba's {name} extension is not installed")
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    module_spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(module_spec)
    loader.exec_module(module)
    sys.modules[name] = module  # ``import numba`` later finds it rather than loading it twice
    return module


def _prime_unpickle(helperlib):
    """Let compiled code unpickle its constants without importing Numba.

    Boxing a returned array calls Numba's C helper ``numba_unpickle``, whose
    first call imports ``numba.core.serialize`` for its ``_numba_unpickle``
    (a memoised ``pickle.loads``) and keeps that function for good. Before
    Numba is imported, the helper is given an equivalent function once,
    through a module registered under that name only for the call.
    """
    if "numba" in sys.modules:
        return
    memo = {}

    def _numba_unpickle(address, bytedata, hashed):
        key = (address, hashed)
        try:
            return memo[key]
        except KeyError:
            memo[key] = obj = pickle.loads(bytedata)
            return obj

    import types

    # ``PyImport_ImportModule("numba.core.serialize")`` also looks up the
    # top-level package, so both names are registered for the one call.
    stubs = {"numba": types.ModuleType("numba"), "numba.core.serialize": types.ModuleType("numba.core.serialize")}
    stubs["numba.core.serialize"]._numba_unpickle = _numba_unpickle
    sys.modules.update(stubs)
    try:
        call = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p)(
            helperlib.c_helpers["unpickle"]
        )
        data = pickle.dumps(None)
        call(data, len(data), b"\0" * 20)
    finally:
        for name, stub in stubs.items():
            if sys.modules.get(name) is stub:
                del sys.modules[name]


def _checked_entry(entry, n_checked, n_args, slow):
    """``entry`` behind a check that the first ``n_checked`` arguments are what it was compiled for."""
    params = ", ".join(f"x{k}" for k in range(n_args))
    lines = [f"def graph_fn({params}):"]
    for k in range(n_checked):
        lines.append(f"    if x{k}.__class__ is not ndarray:")
        lines.append(f"        return slow({params})")
        lines.append(f"    f = x{k}.flags")
        lines.append("    if not (f.c_contiguous and f.writeable and f.aligned):")
        lines.append(f"        return slow({params})")
    lines.append(f"    return entry({params})")
    namespace = {"ndarray": np.ndarray, "entry": entry, "slow": slow}
    exec(compile("\n".join(lines) + "\n", "<lucent native graph_fn>", "exec"), namespace)
    return namespace["graph_fn"]


#: ``bundle key -> (layout, callable, native)`` of the graph functions this
#: process already has: a variant of a graph (other values of its array
#: constants) reuses one without generating, keying or loading anything.
_in_process: dict = {}


def load_program(fgraph):
    """The ``GraphProgram`` of ``fgraph`` from this process or its bundle, or ``None`` (then Numba builds it)."""
    from lucent.configdefaults import config

    if not (config.numba__native_cache and config.numba__cache and config.numba__kernel_calls == "slots"):
        return None
    basic = sys.modules.get("lucent.link.numba.dispatch.basic")
    if basic is not None and basic.numba_funcify.foreign_registrations:
        return None  # a user's kernel may have replaced one of lucent's
    try:
        with _lock:
            return _load(fgraph)
    except _NotBundleable:
        return None
    except Exception:  # pragma: no cover - a bundle is an optimisation: Numba builds the program
        return None


def _extra_args_for(order, layout):
    """The array-constant arguments of this graph for ``layout``, or ``None`` if the layout does not fit it."""
    for n, i, digest in layout["baked"]:
        if _digest(order[n].inputs[i].data) != digest:
            return None
    extra_args = [order[n].inputs[i].data for n, i in layout["extra"]]
    if [_layout(a) for a in extra_args] != layout["extra_layouts"]:
        return None
    return extra_args


def _load(fgraph):
    from lucent.link.numba.codegen import schedule

    order, _ = schedule(fgraph)
    key = bundle_key(fgraph, order)
    known = _in_process.get(key)
    if known is not None:
        layout, fn, native = known
        extra_args = _extra_args_for(order, layout)
        if extra_args is not None:
            return _program(fgraph, layout, fn, native, extra_args)
    try:
        with open(_bundle_path(key), "rb") as f:
            blob = f.read()
    except OSError:
        return None
    payload = _unseal(key, blob)
    if payload is None:
        # Damaged, truncated or another graph's: dropped, so that the
        # ordinary path, which compiles or loads this graph, writes it again.
        try:
            os.unlink(_bundle_path(key))
        except OSError:
            pass
        return None
    b = pickle.loads(payload)
    layout = b["layout"]
    extra_args = _extra_args_for(order, layout)
    if extra_args is None:
        return None
    entry = _load_machine_code(b)
    if entry is None:
        return None
    _in_process[key] = (layout, entry, True)
    return _program(fgraph, layout, entry, True, extra_args)


def _load_machine_code(b):
    """The Python entry of a bundle's graph function, its machine code loaded; ``None`` if it cannot be."""
    global _runtime
    if _runtime is None:
        _runtime = _Runtime()
    rt = _runtime
    if rt.host != b["host"]:
        return None
    for name, provider in b["symbols"].items():
        if not rt.provide(name, provider):
            return None
    new = [(name, digest, obj) for name, digest, obj in b["objects"] if digest not in rt.loaded]
    for name, digest, _ in new:
        if rt.owner.get(name, digest) != digest:
            return None  # other machine code for this function is loaded already
    ll, engine = rt.ll, rt.engine
    for name, digest, obj in new:
        engine.add_object_file(ll.ObjectFileRef.from_data(obj))
        rt.loaded.add(digest)
        rt.owner[name] = digest
    engine.finalize_object()
    for slot, function in b["slots"]:
        where = engine.get_global_value_address(slot)
        address = engine.get_function_address(function)
        if not where or not address:
            return None
        ctypes.c_void_p.from_address(where).value = address
    wrapper = engine.get_function_address(b["wrapper"])
    if not wrapper:
        return None
    env = None
    for env_name, consts in b["envs"]:
        where = engine.get_global_value_address(env_name)
        if not where:
            continue  # code that never reads its environment has none
        if ctypes.c_void_p.from_address(where).value and env_name in rt.environments:
            this = rt.environments[env_name]  # set when the object was loaded for another bundle
        else:
            this = rt.dynfunc.Environment({"__name__": "lucent_native_graph"})
            this.consts[:] = pickle.loads(consts)
            rt.environments[env_name] = this  # kept alive as long as the machine code
            ctypes.c_void_p.from_address(where).value = id(this)
        if env_name == b["env_name"]:
            env = this
    if env is None:
        return None
    import types

    module = types.ModuleType("lucent_native_graph")
    return rt.dynfunc.make_function(
        module, "graph_fn", "a lucent graph function (native bundle)", wrapper, env, (engine,)
    )


def _program(fgraph, layout, fn, native, extra_args):
    """A ``GraphProgram`` of ``fgraph`` calling ``fn`` (a native entry, or Numba's dispatcher)."""
    from lucent.link.numba.linker import GraphProgram, result_converter

    program = GraphProgram()
    program.arg_inputs = list(layout["arg_inputs"])
    if native:
        fallback = {}

        def slow(*args):
            # Arguments the machine code was not compiled for: Numba's dispatcher compiles them.
            if "fn" not in fallback:
                from lucent.link.numba.codegen import build_program

                fallback["fn"] = build_program(fgraph).fn
            return fallback["fn"](*args)

        n_args = len(program.arg_inputs) + len(extra_args)
        program.fn = _checked_entry(fn, len(program.arg_inputs), n_args, slow)
        program.fn.native_entry = fn
    else:
        program.fn = fn
    program.native = native
    program.extra_args = extra_args
    program.n_results = layout["n_results"]
    results = []
    for var in fgraph.outputs:
        if var.owner is not None and var not in results:
            results.append(var)
    program.result_converters = [result_converter(var.type) for var in results]
    program.arg_converters = [None] * len(program.arg_inputs)
    program.output_plan = [
        ("c", fgraph.outputs[p].data) if kind == "c" else (kind, what)
        for p, (kind, what) in enumerate(layout["output_plan"])
    ]
    program.fallback_ops = []
    program.source = layout["source"]
    program.cache_key = layout["cache_key"]
    program.cache_hit = True
    return program


__all__ = ["bundle_key", "elf_symbols", "keep_object_code", "load_program", "save"]
