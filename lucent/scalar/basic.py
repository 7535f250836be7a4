"""ScalarType and the scalar ops (filled in by the scalar op library)."""

__all__ = []
