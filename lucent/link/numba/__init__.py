"""The Numba execution path (imported only when a Numba mode is used)."""

from lucent.link.numba.linker import NumbaLinker  # noqa: E402,F401

__all__ = ["NumbaLinker"]
