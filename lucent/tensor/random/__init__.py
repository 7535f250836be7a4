"""Random variables: ``lucent.tensor.random`` (PyTensor's ``pytensor.tensor.random``).

Draws are ops taking an explicit generator state and returning it advanced
(``type``, ``op``); the distributions live in ``basic``; ``variable`` has
the symbolic and shared generators with their ``rng.normal(...)`` methods;
``utils`` the older ``RandomStream``.
"""

import lucent.tensor.random.rewriting  # noqa: F401  (registers random_make_inplace)
import lucent.tensor.random.utils  # noqa: F401
from lucent.tensor.random.basic import *  # noqa: F401,F403
from lucent.tensor.random.op import default_rng  # noqa: F401
from lucent.tensor.random.utils import RandomStream  # noqa: F401
from lucent.tensor.random.variable import rng, shared_rng  # noqa: F401
