"""Rewrites of random variables (registered in the global rewrite database on import)."""

from lucent.tensor.random.rewriting.basic import *  # noqa: F401,F403
import lucent.tensor.random.rewriting.numba  # noqa: F401,E402
