"""The cyclic garbage collector waits while a function compiles.

A compile allocates hundreds of thousands of Python objects (graph nodes,
Numba's IR, types and LLVM IR builders), most of which live until the
compile ends. CPython's collector counts them as they are allocated and
scans the young ones every 700 allocations, moving the survivors to older
generations that are scanned again and again: about a tenth of the cold
compile of a training step went to scans that found next to nothing.

``collector_paused`` turns the collector off for the outermost compile and,
when it ends (normally, by an error or by Ctrl-C), turns it back on and
collects the youngest generation once: what the compile left as cyclic
garbage is freed there, by one scan instead of many, so a compile's lasting
memory is what it was before. A collector the user turned off stays off.
Nested compiles (an ``OpFromGraph``'s inner function, DebugMode's node
kernels) join the outer pause.
"""

from __future__ import annotations

import contextlib
import gc
import threading

_lock = threading.Lock()
_depth = 0
_resume = False


@contextlib.contextmanager
def collector_paused():
    """Run the body with the cyclic garbage collector off (see the module docstring)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            resume = _depth == 0 and _resume
            if resume:
                gc.enable()
        if resume:
            gc.collect(0)


__all__ = ["collector_paused"]
