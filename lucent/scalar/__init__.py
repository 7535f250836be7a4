"""Scalar types and the scalar ops that ``Elemwise`` maps over arrays."""

from lucent.scalar.basic import *  # noqa: F401,F403
from lucent.scalar.dtypes import upcast  # noqa: F401
from lucent.scalar.composite import Composite  # noqa: F401
from lucent.scalar.loop import ScalarLoop  # noqa: F401
