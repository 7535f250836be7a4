"""The optimisation ops (``lucent.tensor.optimize``) on the Numba path: their ``perform``, through the fallback.

``MinimizeOp`` and its siblings call SciPy's solvers, which are Python code
calling back into the compiled objective; nopython code cannot host them.
Without this registration the generic inner-graph kernel
(``dispatch/builders.py``) would compile their inner graph as if it were
the op's result. Declaring that they have no Numba implementation sends
them to the object-mode perform fallback (``fallback.py``): the rest of the
graph stays compiled, the linker warns once, and the function is not cached
on disk.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import NoNumbaImplementation, numba_funcify
from lucent.tensor.optimize import ScipyWrapperOp


@numba_funcify.register(ScipyWrapperOp)
def numba_funcify_scipy_wrapper(op, node=None, **kwargs):
    raise NoNumbaImplementation(
        f"{type(op).__name__} runs scipy.optimize (Python code) and has no Numba implementation"
    )
