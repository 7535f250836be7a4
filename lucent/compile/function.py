"""``lucent.compile.function`` module path: re-exports ``function`` from ``maker``."""

from lucent.compile.maker import function

__all__ = ["function"]
