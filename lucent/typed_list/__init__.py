"""Typed lists: graph variables whose values are Python lists of arrays (``TypedListType``).

``make_list([x, y])`` builds one; ``append``, ``extend``, ``insert``,
``remove``, ``reverse``, ``index_``, ``count``, ``length`` and ``getitem``
(also as methods of the list variable) work on them. See ``basic`` for the
ops and ``rewriting`` for their in-place variants.
"""

from lucent.typed_list import rewriting  # noqa: F401  (registers the in-place rewrite)
from lucent.typed_list.basic import *  # noqa: F401,F403
from lucent.typed_list.type import TypedListType  # noqa: F401
