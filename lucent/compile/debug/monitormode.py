"""The PyTensor module path of MonitorMode; lucent's implementation lives in ``lucent.compile.monitormode``."""

from lucent.compile.monitormode import MonitorMode, detect_nan

__all__ = ["MonitorMode", "detect_nan"]
