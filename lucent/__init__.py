"""lucent: a symbolic tensor compiler you can see into.

Write tensor programs with a PyTensor-compatible API, run them on a
Numba-compiled fast path or a pure-Python reference path, and inspect what
they do: DebugMode compares both paths node by node, profiles give time and
memory per node, and notebook widgets draw graphs and live values.

Importing lucent does not import numba, ipywidgets or graphviz.
"""

from lucent._version import __version__  # noqa: E402,F401

import logging as _logging  # noqa: E402

#: The package's logger: every ``lucent.*`` module logs below it. It prints
#: warnings to stderr through ``logging_default_handler``, which a program may
#: remove or replace. ``pytensor_logger`` is the same logger under PyTensor's name.
logger = _logging.getLogger("lucent")
logging_default_handler = _logging.StreamHandler()
logging_default_handler.setFormatter(_logging.Formatter("%(levelname)s (%(name)s): %(message)s"))
logger.addHandler(logging_default_handler)
logger.setLevel(_logging.WARNING)
pytensor_logger = logger

from lucent.configdefaults import config  # noqa: E402
from lucent.configparser import change_flags_global as change_flags  # noqa: E402,F401
from lucent import graph  # noqa: E402,F401
from lucent.graph.basic import Apply, Constant, Variable  # noqa: E402,F401
from lucent import scalar, tensor  # noqa: E402,F401
from lucent.printing import debugprint, dprint, pp, pprint  # noqa
from lucent.compile import (  # noqa: E402,F401
    In,
    Mode,
    Out,
    SharedVariable,
    function,
    get_mode,
    shared,
    shared_constructor,
)
from lucent.gradient import grad, jacobian, hessian  # noqa
from lucent.compile.builders import OpFromGraph  # noqa: E402,F401
from lucent.ifelse import ifelse  # noqa: E402,F401  (as in PyTensor, shadows the module name)
from lucent.scan.basic import scan  # noqa: E402,F401  (as in PyTensor, shadows the module name)
from lucent.scan.views import map  # noqa: E402,F401
