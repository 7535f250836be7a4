"""Direct LAPACK calls from generated kernels, for the routines Numba's ``np.linalg`` lacks.

The routines are the ones SciPy exports in ``scipy.linalg.cython_lapack``
(SciPy's bundled LAPACK, already loaded by any program using SciPy).
The first import of a ``lapack_<name>`` from this module registers the
address of each routine in ``ROUTINES`` with LLVM under a fixed name
(``lucent_lapack_dgees``), as ``cblas.py`` does for ``gemm``: cached
machine code then refers to the name, never to an address, and stays valid
in a new process. Generated kernels import their ``lapack_<name>`` from
here, so the registration always precedes the loading of a cached kernel;
a process that runs no LAPACK kernel never imports ``scipy.linalg``
(about 0.2 s).

``lapack_<name>(args)`` takes one tuple of arrays and passes each array's
data pointer, in order: the Fortran calling convention passes every
argument by reference, so a scalar argument is written as a one-element
array (``np.array([n], np.int32)``; a character as its ``np.uint8`` code).
Matrices must be in column-major order (a C array holding the transpose).
Fortran's hidden string-length arguments are not passed, as in SciPy's own
Cython bindings.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import capsule_entry

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

#: The LAPACK routines callable from kernels, for each of LAPACK's four types.
ROUTINES = tuple(
    p + r
    for r in ("gees", "trsen", "gges", "tgsen", "gttrf", "gttrs", "geqrf", "gesv", "potrf", "potrs", "trtrs")
    for p in "sdcz"
)

#: The routine prefix of each LAPACK dtype.
PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


_registered = False


def _register():
    global _registered
    if _registered:
        return
    import llvmlite.binding as llvm
    from scipy.linalg import cython_lapack

    for name in ROUTINES:
        llvm.add_symbol(f"lucent_lapack_{name}", capsule_entry(cython_lapack.__pyx_capi__[name])[1])
    _registered = True


def _make_call(name):
    llvm_name = f"lucent_lapack_{name}"

    def typer(typingctx, args):
        if not isinstance(args, types.BaseTuple) or not all(isinstance(t, types.Array) for t in args):
            return None
        sig = types.void(args)

        def codegen(context, builder, signature, llargs):
            (tup,) = llargs
            items = cgutils.unpack_tuple(builder, tup, len(args))
            byte_ptr = ir.IntType(8).as_pointer()
            ptrs = [
                builder.bitcast(context.make_array(t)(context, builder, v).data, byte_ptr)
                for t, v in zip(args, items)
            ]
            fnty = ir.FunctionType(ir.VoidType(), [byte_ptr] * len(ptrs))
            fn = cgutils.get_or_insert_function(builder.module, fnty, llvm_name)
            builder.call(fn, ptrs)
            return context.get_dummy_value()

        return sig, codegen

    typer.__name__ = f"lapack_{name}"
    return intrinsic(typer)


def __getattr__(name):
    """``lapack_<routine>``, made (and the routines registered) on first use."""
    routine = name[len("lapack_"):] if name.startswith("lapack_") else None
    if routine not in ROUTINES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _register()
    call = globals()[name] = _make_call(routine)
    return call


def import_line(*names):
    """The import line a kernel needs for the routines ``names`` (e.g. ``'dgees'``)."""
    return "from lucent.link.numba.dispatch.linalg_lapack import " + ", ".join(f"lapack_{n}" for n in names)


__all__ = ["PREFIX", "ROUTINES", "import_line"] + [f"lapack_{n}" for n in ROUTINES]
