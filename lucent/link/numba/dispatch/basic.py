"""The registry of Numba implementations, and how kernels are compiled and cached.

Every op gets its fast implementation from ``numba_funcify(op, node)``,
registered *by op class*::

    @numba_funcify.register(MyOp)
    def numba_funcify_MyOp(op, node, **kwargs):
        @numba_njit
        def my_op(x):
            return x * 2
        return my_op

The factory returns a jittable function taking the node's input values
positionally and returning the output (a tuple for several outputs). This
keeps ops free of any Numba dependency (DESIGN: the Numba implementation
lives here, not in the op).

**Caching.** A kernel generated from *source text* with
:func:`kernel_from_source` is written to a file under
``config.base_compiledir`` named by the hash of its text and compiled with
Numba's on-disk cache, so a new process (or a second function using the
same op on the same types) does not compile it again. A factory that
returns a closure still works, but the graph using it cannot be cached on
disk; ``numba_funcify.register(MyOp, version=N)`` with a module-level
function makes it cacheable (bump ``N`` when the implementation changes).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import warnings

from lucent.configdefaults import config

from lucent.link.numba.cache_dir import (  # noqa: F401  (re-exported)
    CODEGEN_VERSION,
    CacheDirectoryWarning,
    _usable_dirs,
    kernel_dir as _kernel_dir,
)


def _stop_llvm_lock_events():
    """Stop Numba from announcing every call into LLVM as a pair of events.

    Numba wraps each of the tens of thousands of calls a compile makes into
    LLVM (``llvmlite``) in ``numba:llvm_lock`` start and end events, only
    to record the total as ``timers["llvm_lock"]`` in compile metadata,
    which lucent never reads. The events cost about 3% of a cold compile
    and 5% of loading a cached function. Nothing else changes: the lock
    itself is still taken around every call.
    """
    try:
        import numba.core.base  # noqa: F401  (registers the callbacks)
        from llvmlite.binding import ffi

        for acquire, release in list(ffi.lib._lock._cblist):
            if getattr(acquire, "__module__", None) == "numba.core.base":
                ffi.unregister_lock_callback(acquire, release)
    except Exception:  # pragma: no cover - another llvmlite: keep Numba's default
        pass


_stop_llvm_lock_events()

from lucent.link.numba.dispatch import runtime_cache as _runtime_cache  # noqa: E402

_runtime_cache.install()

from lucent.link.numba import native as _native  # noqa: E402

_native.keep_object_code()


class NoNumbaImplementation(NotImplementedError):
    """No Numba implementation is registered for an op's class."""


class NumbaDispatcher:
    """Maps op classes to factories of jittable functions (with an implementation version).

    Lookup follows the op's MRO, so registering a base class covers its
    subclasses unless they register their own.
    """

    def __init__(self):
        self._registry: dict[type, tuple] = {}
        # op classes whose registration gave ``version=`` explicitly: only
        # those may return closures and still be cached on disk.
        self._explicit_version: set = set()
        # loaders of implementations registered on demand (``defer``)
        self._deferred: list = []
        #: Implementations registered from outside lucent (a user's kernel,
        #: maybe replacing one of lucent's): native bundles, whose keys
        #: only describe lucent's own kernels, are then not used.
        self.foreign_registrations = 0

    def register(self, op_class, version=None):
        """Decorator: ``@numba_funcify.register(MyOp)`` or ``register(MyOp, version=2)``.

        ``version`` (default 0) is part of the disk-cache key of every graph
        using the op: bump it when the implementation changes. Giving it
        explicitly also vouches that a factory returning a *closure*
        produces code that depends only on the op's props and the node's
        types, which is what lets such graphs be cached.
        """
        if not isinstance(op_class, type):
            raise TypeError(f"register expects an Op class, got {op_class!r}")

        def decorator(factory):
            if not (getattr(factory, "__module__", None) or "").startswith("lucent."):
                self.foreign_registrations += 1
            self._registry[op_class] = (factory, 0 if version is None else version)
            if version is None:
                self._explicit_version.discard(op_class)
            else:
                self._explicit_version.add(op_class)
            return factory

        return decorator

    def lookup_class(self, op):
        """The registered class that ``op`` resolves to (first in its MRO), or ``None``."""
        for klass in type(op).__mro__:
            if klass in self._registry:
                return klass
        return None

    def version_is_explicit(self, op) -> bool:
        return self.lookup_class(op) in self._explicit_version

    def defer(self, load):
        """Call ``load()`` (which registers more implementations) the first time a lookup misses."""
        self._deferred.append(load)

    def lookup(self, op):
        """``(factory, version)`` for ``op``'s class, or ``None``."""
        for klass in type(op).__mro__:
            entry = self._registry.get(klass)
            if entry is not None:
                return entry
        if self._deferred:
            loads, self._deferred = self._deferred, []
            for load in loads:
                load()
            return self.lookup(op)
        return None

    def has_implementation(self, op) -> bool:
        return self.lookup(op) is not None

    def version(self, op):
        entry = self.lookup(op)
        return None if entry is None else entry[1]

    def __call__(self, op, node=None, **kwargs):
        entry = self.lookup(op)
        if entry is None:
            raise NoNumbaImplementation(
                f"No Numba implementation is registered for {type(op).__name__}; register "
                f"one with @numba_funcify.register({type(op).__name__})"
            )
        factory, _ = entry
        return factory(op, node=node, **kwargs)


numba_funcify = NumbaDispatcher()


def numba_njit(fn=None, **kwargs):
    """``numba.njit`` with lucent's defaults (no Python fallback, config's fastmath)."""
    import numba

    options = {"cache": False, "fastmath": config.numba__fastmath}
    options.update(kwargs)
    if fn is None:
        return lambda f: numba.njit(**options)(f)
    return numba.njit(**options)(fn)


def kernel_from_source(source: str, name: str, imports: str = "", cache=None, inline=None, **njit_options):
    """Compile the function ``name`` defined in ``source`` as a cached Numba kernel.

    ``imports`` holds the import lines the source needs (module-level names
    only, so the file is self-contained and can be loaded by a new
    process). The file is named by the hash of its full text, so any change
    in the generated code gives a new file and a stale kernel is never
    loaded. Writing is atomic (temporary file + rename), so concurrent
    processes never see a half-written file.

    ``inline``: for a kernel that is one expression (a view, a shape), that
    expression as a ``str.format`` template of the arguments (``{0}``...),
    using names the module imports. A graph function then writes the
    expression in place of a call (``codegen.BodyWriter``), so the kernel
    costs no compile of its own there; it is still a kernel for everything
    that calls it from Python (DebugMode, profiles). The template is part
    of the hashed text.
    """
    inline_text = f"\n# inline: {inline}\n" if inline is not None else ""
    text = (
        f"# generated by lucent (codegen {CODEGEN_VERSION})\nimport numpy as np\nimport math\n"
        f"from lucent.link.numba.dispatch.memory import empty_output, full_output\n"
        f"from lucent.link.numba.dispatch.inline_values import item_of\n{imports}\n\n{source}\n{inline_text}"
    )
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    module_name = f"lucent_kernel_{digest}"
    module = sys.modules.get(module_name)
    if module is None:
        path = os.path.join(_kernel_dir(), module_name + ".py")
        module = load_module_from_text(module_name, path, text)
    py_fn = getattr(module, name)
    if inline is not None:
        # one expression (a view, a shape): glue for LLVM's light pipelines (``kernel_library``)
        py_fn.__lucent_glue__ = True
    if cache is None:
        cache = config.numba__cache
    # No C-callable wrapper: kernels are only called from graph functions
    # (or from Python), never passed as first-class function pointers, and
    # the wrapper is a second function to optimise and emit per kernel.
    options = {"cache": cache, "fastmath": config.numba__fastmath, "no_cfunc_wrapper": True}
    options.update(njit_options)
    # One dispatcher per (function, options) and process: a second request
    # for the same kernel reuses its compiled specialisations.
    memo = module.__dict__.setdefault("__lucent_dispatchers__", {})
    memo_key = (name, tuple(sorted(options.items())))
    dispatcher = memo.get(memo_key)
    if dispatcher is None:
        # Compiled without a CPython wrapper, built on a first call from Python
        # (python_entry.py): graph functions call kernels from compiled code.
        from lucent.link.numba.dispatch.python_entry import kernel_dispatcher

        dispatcher = kernel_dispatcher(py_fn, options)
        if cache:
            harden_cache(dispatcher)
        # What the graph-level cache key records for this kernel: its text
        # decides what it computes.
        dispatcher.__lucent_origin__ = (
            digest,
            name,
            tuple((k, _stable_option(v)) for k, v in memo_key[1]),
        )
        if inline is not None:
            dispatcher.__lucent_inline__ = (inline, module.__dict__)
        memo[memo_key] = dispatcher
    return dispatcher


def _stable_option(value):
    """An option value with a process-independent repr (sets are sorted)."""
    if isinstance(value, (str, bytes, int, float, bool, type(None), tuple)):
        return value
    try:
        return tuple(sorted(str(v) for v in value))
    except TypeError:
        return repr(value)


def load_module_from_text(module_name, path, text, namespace=None):
    """Write ``text`` to ``path`` (atomically, only if it differs) and import it as ``module_name``.

    ``namespace`` entries are set in the module before its code runs; the
    graph functions use this to receive their kernels and constants as
    globals. The module is registered in ``sys.modules``.
    """
    if not _file_has_text(path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.{id(text)}.tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    if namespace:
        module.__dict__.update(namespace)
    spec.loader.exec_module(module)
    sys.modules[module_name] = module
    return module


def _file_has_text(path, text):
    try:
        with open(path) as f:
            return f.read() == text
    except (OSError, UnicodeDecodeError):
        return False


def harden_cache(dispatcher):
    """Make a corrupt or unreadable Numba cache entry a cache miss instead of a crash.

    Numba unpickles its index (``.nbi``) and data (``.nbc``) files without
    guarding against truncation or garbage. A failed load deletes the
    entry's files (so the recompiled code can be saved again) and returns
    ``None``, which Numba treats as "not cached". A failed save only warns:
    the compiled code is still used in this process.
    """
    cache = getattr(dispatcher, "_cache", None)
    if cache is None or getattr(cache, "_lucent_hardened", False):
        return dispatcher
    load, save = cache.load_overload, cache.save_overload

    def _drop_entry():
        cache_file = getattr(cache, "_cache_file", None)
        index = getattr(cache_file, "_index_path", None)
        if not index:
            return
        stem = index[: -len(".nbi")]
        folder = os.path.dirname(index)
        try:
            names = os.listdir(folder)
        except OSError:
            return
        base = os.path.basename(stem)
        for fname in names:
            if fname == base + ".nbi" or (
                fname.startswith(base + ".") and fname.endswith((".nbc", ".nbc.sum"))
            ):
                try:
                    os.unlink(os.path.join(folder, fname))
                except OSError:
                    pass

    def safe_load(sig, target_context):
        # Numba's ``load_overload`` first runs ``target_context.refresh()``,
        # which imports every lowering registry (and, through NumPy's BLAS
        # check, ``scipy.linalg``): about half a second that a cache hit
        # does not need. Rebuilding the cached code needs none of it, and a
        # miss compiles, which refreshes the context itself.
        inner = getattr(cache, "_load_overload", None)
        try:
            if inner is None:
                return load(sig, target_context)
            from numba.core.runtime import rtsys

            _import_arraymath_without_scipy()

            rtsys.initialize(target_context)  # the one part of refresh() cached code needs
            with cache._guard_against_spurious_io_errors():
                return inner(sig, target_context)
        except Exception:
            _drop_entry()
            return None

    def safe_save(sig, data):
        data = _without_type_annotation(data)
        try:
            return save(sig, data)
        except Exception:
            _drop_entry()
            try:
                return save(sig, data)
            except Exception as e:
                warnings.warn(f"lucent could not save a compiled kernel in the cache: {e}")

    cache.load_overload = safe_load
    cache.save_overload = safe_save
    cache_file = getattr(cache, "_cache_file", None)
    if cache_file is not None and hasattr(cache_file, "_load_data"):
        _checksum_entries(cache_file)
    cache._lucent_hardened = True
    return dispatcher


#: What a cache entry of lucent holds instead of Numba's type annotation text.
TYPE_ANNOTATION_NOT_CACHED = (
    "(the disk cache does not keep the type annotation: inspect_types() shows it in the process that compiled)"
)


def _without_type_annotation(cres):
    """``cres`` as the disk cache keeps it: without Numba's type annotation text.

    Numba writes ``str(type_annotation)`` (the function's source with the
    type of every variable) into each entry, for ``inspect_types()`` of a
    loaded function; making that text was a fifth of saving a kernel, in
    every cold compile. The compiled code and everything that runs it are
    saved as before.
    """
    replace = getattr(cres, "_replace", None)
    if replace is None or getattr(cres, "type_annotation", None) is None:
        return cres
    return replace(type_annotation=TYPE_ANNOTATION_NOT_CACHED)


class CacheEntryMismatch(ValueError):
    """A cache entry's data is not the data saved under its name (swapped or altered)."""


#: The first bytes of a checksummed cache data file (then 64 hex digits and a newline).
_CHECKSUM_HEAD = b"lucent-sha256:"


def _checksum_entries(cache_file):
    """Tie each data file of a Numba cache entry to its name with a checksum.

    Numba's index maps a signature to a data file by number, and loads
    whatever that file holds. A data file copied over from another entry
    (another graph's machine code, maybe with other argument types) would
    then run silently. Each saved data file starts with a checksum: the
    sha256 of the index's name, the data file's name and the bytes that
    follow. Checksum and data are one file, written by one rename, so two
    processes saving the same entry at once can never leave one's checksum
    beside the other's data. Loading checks it first; a mismatch raises
    ``CacheEntryMismatch``, which the hardened loader treats as a corrupt
    entry (dropped and recompiled).
    """
    import pickle

    def tag(name, blob):
        h = hashlib.sha256()
        h.update(cache_file._index_name.encode())
        h.update(b"\0")
        h.update(name.encode())
        h.update(b"\0")
        h.update(blob)
        return h.hexdigest().encode()

    def save_data(name, data):
        blob = cache_file._dump(data)
        with cache_file._open_for_write(cache_file._data_path(name)) as f:
            f.write(_CHECKSUM_HEAD + tag(name, blob) + b"\n" + blob)

    def load_data(name):
        path = cache_file._data_path(name)
        with open(path, "rb") as f:
            content = f.read()
        head = len(_CHECKSUM_HEAD)
        expected, blob = content[head : head + 64], content[head + 65 :]
        if not content.startswith(_CHECKSUM_HEAD) or expected != tag(name, blob):
            if content.startswith(_CHECKSUM_HEAD):
                warnings.warn(
                    f"lucent's cache entry {path} does not hold the code saved under its name "
                    "(it was swapped or altered); it is dropped and compiled again",
                    CacheDirectoryWarning,
                    stacklevel=2,
                )
            raise CacheEntryMismatch(
                f"the cache entry {path} does not match its checksum "
                "(swapped, altered or saved without one); it is compiled again"
            )
        return pickle.loads(blob)

    cache_file._save_data = save_data
    cache_file._load_data = load_data


def _import_arraymath_without_scipy():
    """Import ``numba.np.arraymath`` without its eager ``import scipy.linalg`` (~0.1-0.3 s).

    Numba's first compile in a process imports every lowering registry,
    and rebuilding cached code imports the modules whose functions it
    uses; both import ``arraymath``, which checks at import whether SciPy's
    BLAS is available by importing it. This runs when this module is
    imported, before either can happen. Only a few
    reductions (``np.cov``-style inner products) read the answer, and
    whether SciPy is installed answers it as well. Compiling ``np.dot``
    still checks for real.
    """
    if "numba.np.arraymath" in sys.modules:
        return
    import importlib.util

    import numba.np.linalg as linalg

    real = linalg.ensure_blas
    linalg.ensure_blas = lambda: None
    try:
        import numba.np.arraymath as arraymath
    finally:
        linalg.ensure_blas = real
    arraymath.ensure_blas = real
    arraymath._HAVE_BLAS = importlib.util.find_spec("scipy") is not None


_warned_fallback: set = set()


class NumbaFallbackWarning(UserWarning):
    """An op runs its Python ``perform`` inside a Numba-compiled function."""


def warn_fallback(op, reason=None):
    """Say once per op class that ``op`` runs its Python ``perform`` on the Numba path.

    ``reason`` replaces the default explanation ("no Numba implementation")
    when the implementation exists but could not be used.
    """
    klass = type(op)
    if klass in _warned_fallback:
        return
    _warned_fallback.add(klass)
    name = klass.__name__
    why = reason or f"lucent has no Numba implementation for {name}"
    warnings.warn(
        f"{why}; on the Numba path it runs {name}.perform in object mode (slower, and the "
        f"function cannot be cached on disk). Register an implementation with "
        f"@lucent.link.numba.dispatch.numba_funcify.register({name}).",
        NumbaFallbackWarning,
        stacklevel=3,
    )


__all__ = [
    "numba_funcify",
    "numba_njit",
    "kernel_from_source",
    "NumbaDispatcher",
    "NoNumbaImplementation",
    "warn_fallback",
    "NumbaFallbackWarning",
    "harden_cache",
    "load_module_from_text",
    "CODEGEN_VERSION",
]


def capsule_entry(capsule):
    """``(signature, address)`` of a Cython ``__pyx_capi__`` capsule (SciPy's LAPACK and special functions).

    The capsule's name is the C signature of the function it holds; the
    address lets a kernel call it by a fixed symbol name.
    """
    import ctypes

    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    signature = get_name(capsule)
    return signature.decode(), get_pointer(capsule, signature)


_import_arraymath_without_scipy()
