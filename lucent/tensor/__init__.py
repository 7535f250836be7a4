"""Symbolic tensors: ``import lucent.tensor as lt``.

Everything a NumPy user reaches for is here under its NumPy name:
constructors (``lt.matrix``, ``lt.dvector``, ``lt.tensor``), elementwise math
(``lt.exp``, ``lt.sigmoid``), reductions, ``lt.dot``, shape manipulation,
indexing, ``lt.concatenate`` / ``lt.stack``.
"""

from collections.abc import Sequence as _Sequence
from typing import Union as _Union

from numpy import e, euler_gamma, inf, nan, newaxis, pi  # noqa: F401

from lucent.graph.basic import Variable as _Variable

#: What functions taking "a tensor" accept: a variable, a sequence of
#: variables (stacked), or anything NumPy can make an array of.
TensorLike = _Union[_Variable, _Sequence[_Variable], "ArrayLike"]

from lucent.tensor.type import *  # noqa: F401,F403
from lucent.tensor.type import TensorType  # noqa: F401
from lucent.tensor.variable import TensorConstant, TensorValue, TensorVariable  # noqa: F401
from lucent.tensor.basic import *  # noqa: F401,F403
from lucent.tensor.elemwise import *  # noqa: F401,F403
from lucent.tensor.math import *  # noqa: F401,F403
from lucent.tensor.shape import *  # noqa: F401,F403
from lucent.tensor.subtensor import *  # noqa: F401,F403
from lucent.tensor.special import *  # noqa: F401,F403
from lucent.tensor.extra_ops import *  # noqa: F401,F403,E402
from lucent.tensor.sort import argsort, sort  # noqa: F401,E402
from lucent.tensor.selection import where  # noqa: F401,E402  (one-argument form: nonzero)
from lucent.tensor import sharedvar as _sharedvar  # noqa: F401  (registers the shared constructor)
from lucent.tensor import linalg  # noqa: F401,E402
from lucent.tensor import rewriting as _rewriting  # noqa: F401,E402  (registers the rewrites)
from lucent.tensor import vectorize as _vectorize  # noqa: F401,E402  (registers vectorize_graph rules)
from lucent.tensor import blockwise  # noqa: F401,E402  (pytensor.tensor.blockwise)
from lucent.tensor.contraction import tensordot  # noqa: F401,E402
from lucent.tensor.einsum import einsum  # noqa: F401,E402  (its node is an OpFromGraph: compile layer)
from lucent.tensor.functional import vectorize  # noqa: F401,E402  (pt.vectorize; the rules module stays importable)
from lucent.tensor import random  # noqa: F401,E402  (pytensor.tensor.random)
from lucent.tensor import optimize  # noqa: F401,E402  (pytensor.tensor.optimize)
from lucent.tensor import signal  # noqa: F401,E402  (pytensor.tensor.signal)
from lucent.tensor.reshape import join_dims, pack, split_dims, unpack  # noqa: F401,E402
from lucent.tensor.interpolate import interp, interpolate1d  # noqa: F401,E402
# Importing the ``lucent.tensor.reshape`` module bound its name here; ``reshape`` is the function.
from lucent.tensor.shape import reshape  # noqa: F401,E402
from lucent.gradient import grad, hessian, jacobian  # noqa: F401,E402
