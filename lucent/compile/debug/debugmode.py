"""The PyTensor module path of DebugMode; lucent's implementation lives in ``lucent.debugmode``."""

from lucent.debugmode import (  # noqa: F401
    BadDestroyMap,
    BadOptimization,
    BadThunkOutput,
    BadViewMap,
    DebugLinker,
    DebugMode,
    DebugModeError,
    DebugReport,
    InvalidValueError,
    NonFiniteOutput,
    StochasticOrder,
    str_diagnostic,
)

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
    "str_diagnostic",
]
