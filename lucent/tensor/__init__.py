"""Symbolic tensors: ``import lucent.tensor as lt``.

Everything a NumPy user reaches for is here under its NumPy name:
constructors (``lt.matrix``, ``lt.dvector``, ``lt.tensor``), elementwise math
(``lt.exp``, ``lt.sigmoid``), reductions, ``lt.dot``, shape manipulation,
indexing, ``lt.concatenate`` / ``lt.stack``.
"""

from lucent.tensor.type import *  # noqa: F401,F403
from lucent.tensor.type import TensorType  # noqa: F401
from lucent.tensor.variable import TensorConstant, TensorValue, TensorVariable  # noqa: F401
from lucent.tensor.basic import *  # noqa: F401,F403
from lucent.tensor.elemwise import *  # noqa: F401,F403
from lucent.tensor.math import *  # noqa: F401,F403
from lucent.tensor.shape import *  # noqa: F401,F403
from lucent.tensor.subtensor import *  # noqa: F401,F403
from lucent.tensor.special import *  # noqa: F401,F403
from lucent.tensor import sharedvar as _sharedvar  # noqa: F401  (registers the shared constructor)
from lucent.tensor import rewriting as _rewriting  # noqa: F401,E402  (registers the rewrites)
