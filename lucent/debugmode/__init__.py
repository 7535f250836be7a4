"""DebugMode: run every node on both execution paths and name the first one that is wrong.

``DebugMode`` (``mode="DebugMode"``) rewrites a graph as FAST_RUN does,
then for each node runs its ``perform`` (the reference) and its Numba
kernel on copies of the same inputs and checks values, types, aliasing
and in-place writes; after the call it re-evaluates every recorded
rewrite. Problems are ``DebugModeError`` subclasses, raised or collected
in a ``DebugReport`` (``fn.debug_report``).

Importing this package does not import numba; compiling a function does.
"""

from lucent.debugmode.errors import (
    BadDestroyMap,
    BadOptimization,
    BadThunkOutput,
    BadShape,
    BadViewMap,
    DebugModeError,
    InvalidValueError,
    NonFiniteOutput,
    StochasticOrder,
    StrideMismatch,
)
from lucent.debugmode.linker import DebugLinker
from lucent.debugmode.mode import DebugMode
from lucent.debugmode.report import DebugReport
from lucent.debugmode.values import str_diagnostic

__all__ = [
    "DebugMode",
    "DebugLinker",
    "DebugReport",
    "DebugModeError",
    "BadThunkOutput",
    "InvalidValueError",
    "BadViewMap",
    "BadDestroyMap",
    "NonFiniteOutput",
    "BadOptimization",
    "StochasticOrder",
    "BadShape",
    "StrideMismatch",
    "str_diagnostic",
]
