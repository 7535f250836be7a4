"""Kernels are compiled without a Python entry; one is built the first time Python calls them.

Numba compiles every function with a *CPython wrapper*: a second function
that unboxes Python arguments, calls the compiled code and boxes its
result. A graph function calls its kernels through slots
(``kernel_calls``), from compiled code, and never uses their wrappers, yet
each one cost about a sixth of its kernel's compile (20 ms of a 120 ms
element-wise kernel; a cold training step compiles 16 to 35 kernels).

``KernelDispatcher`` compiles kernels with ``no_cpython_wrapper`` when
compiled code asks for them. Compiled callers (graph functions, loop
bodies, other kernels) use the machine code as before. A specialisation
that Python asks for first (DebugMode and profiles run node by node
through ``NodeKernel``; tests call kernels directly) is compiled with its
wrapper, as Numba does, and cached on disk with it. When Python calls a
specialisation compiled (or cached) without one, its wrapper is built on
its own, from Numba's wrapper code generator, into a small library that
calls the compiled function by its symbol: about 25 ms, once per
specialisation and process, and the kernel is never compiled again.

A specialisation without a wrapper is kept out of Numba's C-level
dispatch table until it has one, so a Python call can never reach a
missing entry point: the call falls back to ``_compile_for_args``, which
builds the wrapper and registers it.
"""

from __future__ import annotations

import contextlib

from numba import _dynfunc
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

from lucent.link.numba.dispatch.kernel_library import EntryCodeLibrary
from lucent.link.numba.dispatch.layout_pruning import KernelCompiler


def _has_python_entry(cres) -> bool:
    """Whether ``cres`` came with its CPython wrapper (compiled with one, or loaded with one)."""
    if cres.objectmode:
        return True
    return cres.library.get_pointer_to_function(cres.fndesc.llvm_cpython_wrapper_name) != 0


def _build_python_entry(cres):
    """The Python-callable entry point of a specialisation compiled without one.

    Numba's wrapper code generator writes the wrapper into a library of its
    own; the wrapper declares the compiled function, which the JIT resolves
    by its symbol in the kernel's library (already finalised), so no code
    is compiled twice. Returns the new ``CompileResult`` (``entry_point``
    set); the wrapper's library lives as long as the entry point.
    """
    context = cres.target_context
    if not context.enable_nrt:
        # a specialisation loaded from the disk cache holds the base context; the
        # wrapper boxes arrays through the runtime the kernel was compiled with
        context = context.subtarget(enable_nrt=True)
    fndesc = cres.fndesc
    with global_compiler_lock:
        # unboxing, a call and boxing, once per Python call: not worth optimising (``kernel_library``)
        library = EntryCodeLibrary(context.codegen(), f"python_entry_{fndesc.mangled_name}")
        library.enable_object_caching()
        context.create_cpython_wrapper(library, fndesc, cres.environment, cres.call_helper, release_gil=False)
        library.finalize()
    address = library.get_pointer_to_function(fndesc.llvm_cpython_wrapper_name)
    if not address:  # pragma: no cover - the JIT could not link the wrapper
        raise RuntimeError(f"lucent could not build the Python entry point of {fndesc.qualname}")
    entry = _dynfunc.make_function(
        fndesc.lookup_module(),
        fndesc.qualname.split(".")[-1],
        f"compiled wrapper for {fndesc.qualname!r}",
        address,
        cres.environment,
        (library, cres.library),  # kept alive with the function
    )
    # compiled callers find a specialisation's code by its entry point (``get_overload``)
    context.insert_user_function(entry, fndesc, [cres.library])
    return cres._replace(entry_point=entry)


class KernelDispatcher(CPUDispatcher):
    """A Numba dispatcher whose specialisations get their Python entry on their first Python call."""

    def add_overload(self, cres):
        if _has_python_entry(cres):
            super().add_overload(cres)
        else:
            # usable by compiled callers now; registered for Python calls by python_entry()
            self.overloads[tuple(cres.signature.args)] = cres

    def has_python_entry(self, args) -> bool:
        """Whether the specialisation for ``args`` (compiled already) can be called from Python now."""
        return _has_python_entry(self.overloads[tuple(args)])

    def python_entry(self, args):
        """The Python-callable entry of the specialisation for ``args`` (compiled already), built if needed."""
        args = tuple(args)
        cres = self.overloads[args]
        if not _has_python_entry(cres):
            with global_compiler_lock:
                cres = self.overloads[args]
                if not _has_python_entry(cres):
                    cres = _build_python_entry(cres)
                    # the new entry point must be registered before the CompileResult that lacks it goes
                    super().add_overload(cres)
        return cres.entry_point

    def compile_for_python(self, args):
        """Compile (or load) the specialisation for ``args`` to be called from Python; its entry.

        A specialisation Python asks for first is compiled with its wrapper,
        the cheapest way to get one, and the disk cache keeps it with it, so
        DebugMode and profiles in later processes load it ready.
        """
        args = tuple(args)
        if args not in self.overloads:
            with global_compiler_lock, self._with_python_entry():
                self.compile(args)
        return self.python_entry(args)

    @contextlib.contextmanager
    def _with_python_entry(self):
        # ``targetoptions`` is the dict the compiler reads its flags from at each compile
        self.targetoptions["no_cpython_wrapper"] = False
        try:
            yield
        finally:
            self.targetoptions["no_cpython_wrapper"] = True

    def _compile_for_args(self, *args, **kws):
        with global_compiler_lock, self._with_python_entry():
            entry = super()._compile_for_args(*args, **kws)
        for signature, cres in list(self.overloads.items()):
            if cres.entry_point is entry:
                return self.python_entry(signature)
        return entry  # pragma: no cover - Numba returned an entry it does not hold


def kernel_dispatcher(py_func, options):
    """A ``KernelDispatcher`` of ``py_func`` with the ``numba.njit`` ``options`` (``cache`` included).

    Compiled by ``KernelCompiler``: a branch on the layout of an argument
    is resolved before typing (``layout_pruning``).
    """
    targetoptions = {k: v for k, v in options.items() if k != "cache"}
    targetoptions["nopython"] = True
    targetoptions["no_cpython_wrapper"] = True
    dispatcher = KernelDispatcher(
        py_func=py_func, locals={}, targetoptions=targetoptions, pipeline_class=KernelCompiler
    )
    if options.get("cache"):
        dispatcher.enable_caching()
    return dispatcher


def compiled_helper(**options):
    """Decorator: a helper function of kernels (``numba.njit`` ``options``), its Python entry built on demand.

    For the shared helpers generated code calls (a loop's ``_as_0d``):
    compiled code calls them, Python seldom does. A helper with loops
    worth optimising is better emitted as IR where it is called
    (``blas_loops``, ``ring``): a linked helper is optimised and emitted
    again inside every caller.
    """
    return lambda fn: kernel_dispatcher(fn, options)


__all__ = ["KernelDispatcher", "compiled_helper", "kernel_dispatcher"]
