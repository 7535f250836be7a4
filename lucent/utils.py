"""Small helpers that depend only on the standard library and NumPy.

These are the platform facts and sequence utilities that code written for
PyTensor imports from ``pytensor.utils``: the width of a C pointer and of a
Python ``int`` on this machine (which decides the dtype of an integer
literal), a stable hash of source text, and order-preserving list helpers.
Nothing here knows about graphs, so every layer may use it.
"""

from __future__ import annotations

import hashlib
import logging
import struct
from collections.abc import Iterable, Sequence

import numpy as np

#: Bits in a memory pointer on this machine (64 on a 64-bit platform).
LOCAL_BITWIDTH = struct.calcsize("P") * 8

#: Bits in a C ``long``, NumPy's default integer: a Python ``int`` given to
#: ``shared`` or used as a constant gets this width (``int64`` on Linux/macOS).
PYTHON_INT_BITWIDTH = struct.calcsize("l") * 8

#: The value NumPy's C API uses for ``axis=None`` (ravel before reducing).
NPY_RAVEL_AXIS = int(np.iinfo(np.int32).min)


def hash_from_code(msg: str | bytes) -> str:
    """A SHA-256 hex digest of ``msg``, prefixed with ``m``.

    The prefix makes the result usable as a Python identifier or module
    name, which must not start with a digit.
    """
    if isinstance(msg, str):
        msg = msg.encode()
    elif not isinstance(msg, (bytes, bytearray, memoryview)):
        raise TypeError(f"hash_from_code expects str or bytes, got {type(msg).__name__}")
    return "m" + hashlib.sha256(msg).hexdigest()


def uniq(seq: Sequence) -> list:
    """The items of ``seq`` without repeats, each kept at its first position.

    Works for unhashable items too (it compares with ``==``), and the result
    depends only on the pattern of repeats, never on hashing order.
    """
    seq = list(seq)
    return [item for position, item in enumerate(seq) if seq.index(item) == position]


def difference(seq1: Iterable, seq2: Iterable) -> list:
    """The items of ``seq1`` that are not in ``seq2``, in ``seq1``'s order."""
    seq2 = list(seq2)
    try:
        excluded = set(seq2)
    except TypeError:  # unhashable items: compare one by one
        return [item for item in seq1 if item not in seq2]
    return [item for item in seq1 if item not in excluded]


def to_return_values(values):
    """A one-item list as its item; any other list as it is (how outputs are returned)."""
    if len(values) == 1:
        return values[0]
    return values


def from_return_values(values):
    """The inverse of ``to_return_values``: always a list or tuple."""
    if isinstance(values, (list, tuple)):
        return values
    return [values]


def flatten(a) -> list:
    """Nested lists, tuples and sets flattened into one list (other objects are leaves)."""
    if isinstance(a, (list, tuple, set)):
        result = []
        for item in a:
            result.extend(flatten(item))
        return result
    return [a]


def unzip(iterable, n: int, strict: bool = False):
    """``zip(*iterable)`` that gives ``n`` empty tuples for an empty input.

    So ``a, b = unzip(pairs, 2)`` also works when ``pairs`` is empty.
    """
    result = tuple(zip(*iterable, strict=strict))
    if not result:
        return ((),) * n
    return result


def get_unbound_function(unbound):
    """The plain function behind a bound method (or the object itself)."""
    return getattr(unbound, "__func__", unbound)


class NoDuplicateOptWarningFilter(logging.Filter):
    """A logging filter that lets each rewrite warning through only once."""

    prev_msgs: set = set()

    def filter(self, record):
        msg = record.getMessage()
        if not msg.startswith("Optimization Warning: "):
            return True
        if msg in self.prev_msgs:
            return False
        self.prev_msgs.add(msg)
        return True


class Singleton:
    """Base class whose every instantiation returns the one instance of the class.

    Instances of the same class compare equal and hash alike, so a singleton
    Op or Type needs no ``__eq__`` / ``__hash__`` of its own.
    """

    _instances: dict = {}

    def __new__(cls):
        instance = Singleton._instances.get(cls)
        if instance is None:
            instance = super().__new__(cls)
            Singleton._instances[cls] = instance
        return instance

    def __str__(self):
        return type(self).__name__

    def __eq__(self, other):
        return self is other or type(self) is type(other)

    def __hash__(self):
        return hash(type(self))


__all__ = [
    "LOCAL_BITWIDTH",
    "PYTHON_INT_BITWIDTH",
    "NPY_RAVEL_AXIS",
    "hash_from_code",
    "uniq",
    "difference",
    "to_return_values",
    "from_return_values",
    "flatten",
    "unzip",
    "get_unbound_function",
    "NoDuplicateOptWarningFilter",
    "Singleton",
]
