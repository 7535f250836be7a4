"""PyTensor's module path of ``NanGuardMode``, which lives with the other diagnostic modes.

The implementation is ``lucent.debugmode.nanguard``: like DebugMode, it
replays a call node by node on the reference path to name the node at
fault, so it sits in the debugging layer above the compiler.
"""

from lucent.debugmode.nanguard import (  # noqa: F401
    NanGuardError,
    NanGuardLinker,
    NanGuardMode,
    contains_inf,
    contains_nan,
    flatten,
)

__all__ = ["NanGuardMode", "NanGuardLinker", "NanGuardError", "contains_nan", "contains_inf", "flatten"]
