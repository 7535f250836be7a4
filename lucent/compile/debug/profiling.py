"""The PyTensor module path of the profiler; lucent's implementation is ``lucent.compile.profiling``."""

from lucent.compile.profiling import (  # noqa: F401
    COLUMNS,
    ProfileStats,
    format_bytes,
    make_profile,
    print_profiles,
)

__all__ = ["ProfileStats", "make_profile", "print_profiles", "format_bytes", "COLUMNS"]
