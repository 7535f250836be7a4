"""The Numba execution path (imported only when a Numba mode is used)."""
