"""``NullType``: the type of a value that cannot exist.

``grad`` returns a ``NullType`` variable where a gradient is undefined
mathematically or not implemented (``lucent.gradient.grad_undefined`` /
``grad_not_implemented``); ``why_null`` carries the explanation to the error
that is raised when such a gradient is used. It lives in the graph layer
because it is only a Type: ops of any layer may return it.
"""

from __future__ import annotations

from lucent.graph.type import Type


class NullType(Type):
    """A type with no values; ``why_null`` says why (undefined, or not implemented)."""

    def __init__(self, why_null="(no explanation given)"):
        self.why_null = why_null

    def filter(self, data, strict=False, allow_downcast=None):
        raise ValueError(f"No values may be assigned to a NullType: {self.why_null}")

    def filter_variable(self, other, allow_convert=True):
        raise ValueError(f"No values may be assigned to a NullType: {self.why_null}")

    def values_eq(self, a, b, force_same_dtype=True):
        raise ValueError("NullType has no values to compare")

    # All NullTypes are one type: the explanation is a message, not a property.
    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "NullType"


#: ``null_type()`` makes a fresh undefined variable with no explanation.
null_type = NullType()

__all__ = ["NullType", "null_type"]
