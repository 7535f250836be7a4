"""The type of random generator states: ``RandomGeneratorType``.

Randomness in lucent is explicit state. A draw takes a
``numpy.random.Generator`` as an input and returns the advanced generator
as an output, so the graph says exactly which draws depend on which state
and both execution paths can start from copies of the same state.

``Generator`` objects cannot be compared with ``==`` (two generators in the
same state are different objects), so this type compares their
bit-generator *states* (``values_eq``). It also accepts the ``dict`` form of
such a state (``Generator.bit_generator.state``) unless ``strict``.
"""

from __future__ import annotations

import sys

import numpy as np
from numpy.random import Generator

from lucent.graph.type import Type

#: For each NumPy bit generator: the keys of its state dict, and of its ``state`` entry.
gen_states_keys = {
    "MT19937": (["state"], ["key", "pos"]),
    "PCG64": (["state", "has_uint32", "uinteger"], ["state", "inc"]),
    "Philox": (["state", "buffer", "buffer_pos", "has_uint32", "uinteger"], ["counter", "key"]),
    "SFC64": (["state", "has_uint32", "uinteger"], ["state"]),
}

#: Bit generators by integer index (a state dict may name its generator this way).
numpy_bit_gens = {0: "MT19937", 1: "PCG64", 2: "Philox", 3: "SFC64"}


class RandomType(Type):
    """Base of the types whose values are random number generators."""

    #: Read by the graph drawings (which cannot import this layer) to mark
    #: the nodes that draw random numbers and their generator edges.
    holds_random_state = True


class AbstractRandomGeneratorType(RandomType):
    """Shared behaviour of the types holding a ``numpy.random.Generator``."""

    @staticmethod
    def may_share_memory(a, b):
        """Two generators share memory when they draw from the same bit generator."""
        if not (isinstance(a, Generator) and isinstance(b, Generator)):
            return False
        return a.bit_generator is b.bit_generator

    def filter(self, data, strict=False, allow_downcast=None):
        """Return ``data`` if it is a ``Generator`` (or, unless ``strict``, a valid state dict)."""
        if isinstance(data, Generator):
            return data
        if not strict and isinstance(data, dict):
            if "bit_generator" not in data:
                raise TypeError(
                    f"{self}: a generator state dict needs a 'bit_generator' entry; got the keys "
                    f"{sorted(data)}"
                )
            key = data["bit_generator"]
            if hasattr(key, "_value"):
                key = numpy_bit_gens[int(key._value)]
            if key not in gen_states_keys:
                raise TypeError(
                    f"{self}: unknown bit generator {key!r}; expected one of {sorted(gen_states_keys)}"
                )
            gen_keys, state_keys = gen_states_keys[key]
            missing = [k for k in gen_keys if k not in data]
            missing += [f"state.{k}" for k in state_keys if k not in data.get("state", {})]
            if missing:
                raise TypeError(
                    f"{self}: the {key} state dict lacks the entries {missing}"
                )
            return data
        raise TypeError(
            f"{self} expects a numpy.random.Generator"
            + ("" if strict else " (or its bit generator's state dict)")
            + f", got {type(data).__name__}"
            + (
                "; numpy.random.RandomState is not supported, use numpy.random.default_rng()"
                if isinstance(data, np.random.RandomState)
                else ""
            )
        )

    @staticmethod
    def values_eq(a, b):
        """True when both generators (or state dicts) are in the same state."""
        sa = a if isinstance(a, dict) else a.bit_generator.state
        sb = b if isinstance(b, dict) else b.bit_generator.state
        return _states_equal(sa, sb)

    def values_eq_approx(self, a, b):
        # A generator state is exact: "approximately equal" is equal.
        return self.values_eq(a, b)

    def get_shape_info(self, obj):
        """The byte size of the generator (object + bit generator + state), for profiling."""
        return self.get_generator_size(obj)

    def get_size(self, shape_info):
        return shape_info

    @staticmethod
    def get_generator_size(obj):
        bit_gen = obj.bit_generator if isinstance(obj, Generator) else None
        size = sys.getsizeof(obj)
        if bit_gen is not None:
            size += sys.getsizeof(bit_gen) + _nbytes(bit_gen.state)
        else:
            size += _nbytes(obj)
        return size


def _nbytes(state):
    if isinstance(state, dict):
        return sum(_nbytes(v) for v in state.values())
    if isinstance(state, np.ndarray):
        return state.nbytes
    if isinstance(state, int):
        return max(8, (state.bit_length() + 7) // 8)
    return 8


def _states_equal(sa, sb):
    if not (isinstance(sa, dict) and isinstance(sb, dict)) or set(sa) != set(sb):
        return False
    for key in sa:
        va, vb = sa[key], sb[key]
        if isinstance(va, dict):
            if not _states_equal(va, vb):
                return False
        elif isinstance(va, np.ndarray) or isinstance(vb, np.ndarray):
            if not np.array_equal(va, vb):
                return False
        elif va != vb:
            return False
    return True


class RandomGeneratorType(AbstractRandomGeneratorType):
    """The type of ``numpy.random.Generator`` values (all such types are equal)."""

    def __repr__(self):
        return "RandomGeneratorType"

    __str__ = __repr__

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))


random_generator_type = RandomGeneratorType()


def as_rng(x):
    """``x`` if it is a symbolic generator; a clear error for anything else."""
    if x is None:
        raise TypeError(
            "rng must not be None. Use lucent.tensor.random.rng() for a symbolic input or "
            "lucent.tensor.random.shared_rng() for a shared generator."
        )
    if isinstance(x, np.random.Generator):
        raise TypeError(
            "as_rng does not accept numpy Generators directly. Use "
            "lucent.tensor.random.shared_rng(x) to make a shared generator variable, or "
            "lucent.tensor.random.rng() for a symbolic input."
        )
    if isinstance(getattr(x, "type", None), RandomGeneratorType):
        return x
    raise TypeError(f"Expected a RandomGeneratorVariable, got {type(x).__name__} ({x})")


__all__ = [
    "RandomType",
    "AbstractRandomGeneratorType",
    "RandomGeneratorType",
    "random_generator_type",
    "as_rng",
    "gen_states_keys",
    "numpy_bit_gens",
]
