"""The C-interface types and interfaces kept for PyTensor/Theano compatibility.

lucent compiles with Numba; nothing here generates C. See ``type`` for the
enumeration, opaque-pointer and generic Types and ``interface`` for the
``CLinkerType`` / ``CLinkerOp`` interfaces.
"""

from lucent.link.c.interface import CLinkerObject, CLinkerOp, CLinkerType  # noqa: F401
from lucent.link.c.type import (  # noqa: F401
    CDataType,
    CDataValue,
    CEnumType,
    EnumList,
    EnumType,
    Generic,
    generic,
)
