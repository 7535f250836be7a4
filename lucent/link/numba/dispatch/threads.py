"""How many threads the Numba kernels use, and the BLAS thread count that goes with it.

``config.numba__num_threads`` (1 by default) is read when a kernel is
generated. Above 1, the elementwise and reduction generators add a
*parallel* version of their contiguous loop: the work is cut into one
chunk per thread and the chunks run in a ``numba.prange`` loop of a
separate function compiled with ``parallel=True``. The kernel calls it only
when the loop has at least :data:`PARALLEL_MIN` elements; smaller ones run
the single-threaded loop, so small graphs never wait for threads to wake
up. With one thread the generated text is exactly the single-threaded one:
nothing changes, not even the cache entries.

The thread count is part of the generated text, so kernels for different
counts are different cached files. It never exceeds what Numba has
(``numba.get_num_threads()``, at most ``NUMBA_NUM_THREADS``): asking for
more threads than Numba started would only run chunks one after another.

BLAS (the OpenBLAS bundled with NumPy, which lucent's products call) gets
the same count when a kernel is generated with more than one thread, so
the products of a multi-threaded function are too. With the default of one
thread lucent leaves BLAS as it was configured (``OPENBLAS_NUM_THREADS``),
as NumPy does.
"""

from __future__ import annotations

import ctypes
import glob
import os

from lucent.configdefaults import config

#: Contiguous loops and reductions over at least this many elements run in
#: parallel. Waking the threads costs some microseconds (much more when the
#: machine's cores are busy with other processes); a loop of the cheapest
#: operation over this many elements takes about a hundred.
PARALLEL_MIN = 1 << 18

#: Exported names of OpenBLAS's thread-count setter, in the order tried.
_BLAS_SETTERS = ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_", "openblas_set_num_threads")

_blas_applied = {"count": None}


def kernel_threads():
    """The number of parallel chunks kernels generated now use (1: single-threaded)."""
    wanted = config.numba__num_threads
    if wanted == 1:
        # The default: Numba's thread pool is never asked for (asking starts it).
        return 1
    import numba

    try:
        available = numba.get_num_threads()
    except RuntimeError:
        # Numba's pool was started with another NUMBA_NUM_THREADS than its
        # configuration now says (the variable changed in this process):
        # stay single-threaded rather than fail to compile.
        return 1
    if wanted == 0:
        wanted = available
    count = max(1, min(int(wanted), available))
    if count > 1:
        sync_blas_threads(count)
    return count


def _blas_setter():
    import numpy

    root = os.path.dirname(os.path.dirname(os.path.abspath(numpy.__file__)))
    for path in sorted(glob.glob(os.path.join(root, "numpy.libs", "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _BLAS_SETTERS:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.argtypes = (ctypes.c_int,)
                fn.restype = None
                return fn
    return None


def sync_blas_threads(count):
    """Give NumPy's OpenBLAS ``count`` threads; ``False`` when no such library is found."""
    if _blas_applied["count"] == count:
        return True
    setter = _blas_setter()
    if setter is None:
        return False
    setter(int(count))
    _blas_applied["count"] = count
    return True


def parallel_decorator(**options):
    """Source text of the decorator of a kernel's parallel part, with the kernels' options."""
    def text(value):
        if isinstance(value, (set, frozenset)):
            return "{" + ", ".join(repr(v) for v in sorted(value)) + "}"
        return repr(value)

    items = [f"{k}={text(v)}" for k, v in sorted(options.items())]
    items += ["parallel=True", f"cache={bool(config.numba__cache)!r}", "no_cfunc_wrapper=True"]
    return f"@numba.njit({', '.join(items)})"


def chunk_bounds(chunk, count, total, lo="lo", hi="hi"):
    """Lines setting ``lo`` / ``hi``: the ``chunk``-th of ``count`` near-equal parts of ``range(total)``."""
    return [f"{lo} = ({chunk} * {total}) // {count}", f"{hi} = (({chunk} + 1) * {total}) // {count}"]


__all__ = ["PARALLEL_MIN", "kernel_threads", "sync_blas_threads", "parallel_decorator", "chunk_bounds"]
