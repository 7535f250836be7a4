"""Graph rewriting: the framework (``basic``), databases (``db``) and helpers (``utils``)."""

from lucent.graph.rewriting.basic import *  # noqa: F401,F403
from lucent.graph.rewriting.db import *  # noqa: F401,F403
from lucent.graph.rewriting.history import RewriteHistory, RewriteRecord  # noqa: F401
from lucent.graph.rewriting.utils import rewrite_graph  # noqa: F401,E402  (pytensor.graph.rewriting.rewrite_graph)
