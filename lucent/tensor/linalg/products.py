"""Products of several matrices."""

from __future__ import annotations


def matrix_dot(*args):
    """``args[0] @ args[1] @ ... @ args[-1]``, as a chain of ``dot`` from the left."""
    from lucent.tensor.math import dot

    if not args:
        raise TypeError("matrix_dot expects at least one matrix, got none")
    result = args[0]
    for a in args[1:]:
        result = dot(result, a)
    return result


__all__ = ["matrix_dot"]
