"""Numba implementations of lucent's ops, registered by op class.

Importing this package imports numba and registers every built-in
implementation; ``numba_funcify`` is the public registry. Ops without an
implementation still run on the Numba path through the object-mode
fallback (``fallback.py``), with a warning.
"""

import importlib as _importlib

from lucent.link.numba.dispatch.basic import (  # noqa: F401
    NoNumbaImplementation,
    NumbaFallbackWarning,
    kernel_from_source,
    numba_funcify,
    numba_njit,
    warn_fallback,
)

#: Modules registering the built-in implementations, imported in this order.
KERNEL_MODULES = (
    "scalar",
    "elemwise",
    "reduction",
    "special",
    "shape",
    "subtensor",
    "tensor_basic",
    "blas",
    "linalg",
    "linalg_decomposition",
    "linalg_solve",
    "linalg_schur",
    "linalg_tridiagonal",
    "linalg_triangle_product",
    "linalg_triangle_solve",
    "blockwise",
    "assumptions",
    "builders",
    "scan",
    "optimize",
    "ifelse",
    "gradient",
    "c_op",
    "printing",
    "random",
    "raise_op",
    "extra_ops",
    "sort",
    "sparse",
    "signal",
    "fft",
    "reshape",
)


#: Kernel modules that need a library only graphs of their ops use, with
#: that library: imported with the others when the library is already
#: loaded, and otherwise the first time an op has no implementation yet
#: (``numba_funcify`` asks), so that a process compiling only dense graphs
#: does not import ``scipy.sparse`` (about 0.1 s of every new process).
DEFERRED_MODULES = {"sparse": "scipy.sparse"}


def _import_kernel_modules(names=KERNEL_MODULES, defer=True):
    import os
    import sys

    here = os.path.dirname(__file__)
    for name in names:
        if not os.path.exists(os.path.join(here, name + ".py")):
            continue
        if defer and name in DEFERRED_MODULES and DEFERRED_MODULES[name] not in sys.modules:
            numba_funcify.defer(lambda name=name: _import_kernel_modules((name,), defer=False))
            continue
        try:
            _importlib.import_module(f"{__name__}.{name}")
        except Exception as e:  # a broken module must not take the others down
            import warnings

            warnings.warn(
                f"lucent could not load the Numba implementations in dispatch/{name}.py "
                f"({type(e).__name__}: {e}); their ops run through the object-mode fallback",
                NumbaFallbackWarning,
            )


_import_kernel_modules()
