"""The PyTensor module path of NanGuardMode; lucent's implementation is ``lucent.debugmode.nanguard``."""

from lucent.debugmode.nanguard import (  # noqa: F401
    NanGuardError,
    NanGuardLinker,
    NanGuardMode,
    contains_inf,
    contains_nan,
    flatten,
)

__all__ = ["NanGuardMode", "NanGuardLinker", "NanGuardError", "contains_nan", "contains_inf", "flatten"]
