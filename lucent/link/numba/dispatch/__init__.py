"""Numba implementations of lucent's ops, registered by op class.

Importing this package imports numba and registers every built-in
implementation; ``numba_funcify`` is the public registry.
"""

from lucent.link.numba.dispatch.basic import (  # noqa: F401
    NoNumbaImplementation,
    kernel_from_source,
    numba_funcify,
    numba_njit,
)
