"""Symbolic and shared generators, and the functional draw API.

``rng()`` makes a symbolic generator input; ``shared_rng(value or seed)``
a shared one (``lucent.shared(np.random.default_rng(0))`` gives the same).
A generator variable has one method per distribution returning
``(next_rng, draw)``::

    rng = shared_rng(seed=1)
    next_rng, x = rng.normal(0, 1, size=3)
    f = lucent.function([], x, updates={rng: next_rng})

Drawing twice from the same generator variable gives the same numbers,
which is almost always a mistake, so it warns: use the returned ``next_rng``.
"""

from __future__ import annotations

import copy
import inspect
import warnings
from functools import wraps

import numpy as np

import lucent.tensor.random.basic as _basic
from lucent.compile.sharedvalue import SharedVariable, shared_constructor
from lucent.graph.basic import Variable
from lucent.tensor.random.type import RandomGeneratorType, random_generator_type


def warn_reuse(func):
    """Warn when a generator variable that already fed a draw is drawn from again."""

    @wraps(func)
    def wrapper(self, *args, **kwargs):
        if getattr(self.tag, "used", False):
            warnings.warn(
                f"RandomGeneratorVariable {self} has already been used. You probably want to use "
                "the new RandomGeneratorVariable that was returned when you used it.",
                UserWarning,
                stacklevel=2,
            )
        self.tag.used = True
        return func(self, *args, **kwargs)

    return wrapper


def _make_rng_method(fn):
    @warn_reuse
    def method(self, *args, **kwargs):
        return fn(*args, rng=self, return_next_rng=True, **kwargs)

    name = getattr(fn, "__name__", None) or getattr(fn, "name", str(fn))
    method.__name__ = name
    method.__qualname__ = f"RandomGeneratorVariable.{name}"
    method.__doc__ = f"Draw from ``{name}`` with this generator: returns ``(next_rng, draw)``."
    try:
        target = fn.__call__ if not inspect.isfunction(fn) else fn
        sig = inspect.signature(target)
        params = [p for n, p in sig.parameters.items() if n not in ("rng", "return_next_rng", "kwargs")]
        this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        method.__signature__ = sig.replace(parameters=[this, *params])
    except (TypeError, ValueError):
        pass
    return method


class _random_generator_py_operators:
    """One method per distribution of ``lucent.tensor.random.basic``."""


for _name in _basic.__all__:
    _fn = getattr(_basic, _name)
    if callable(_fn):
        setattr(_random_generator_py_operators, _name, _make_rng_method(_fn))


class RandomGeneratorVariable(_random_generator_py_operators, Variable):
    """A symbolic random generator state."""


RandomGeneratorType.variable_type = RandomGeneratorVariable


def rng(name=None):
    """A symbolic generator input (pass ``lucent.In(rng, mutable=True)`` to allow in-place draws)."""
    return random_generator_type(name=name)


UNSET = object()


class RandomGeneratorSharedVariable(SharedVariable, RandomGeneratorVariable):
    """A shared generator: its state persists between calls and is advanced by updates."""

    def __str__(self):
        return self.name or f"RNG({self.container!r})"

    @staticmethod
    def _resolve_rng_value(new_value, *, seed=UNSET, borrow=False):
        if new_value is None:
            if seed is UNSET:
                raise ValueError("Must set one of value or seed")
            return np.random.default_rng(copy.deepcopy(seed)), True
        if seed is not UNSET:
            raise ValueError("Cannot specify both new_value and seed")
        return new_value, borrow

    def set_value(self, new_value=None, *, seed=UNSET, borrow=False):
        """Set the generator (a copy unless ``borrow``), or a new ``default_rng(seed)``."""
        new_value, borrow = self._resolve_rng_value(new_value, seed=seed, borrow=borrow)
        super().set_value(new_value, borrow=borrow)


def shared_rng(value=None, *, seed=UNSET, name=None, borrow=False):
    """A shared generator holding ``value`` (copied unless ``borrow``) or ``default_rng(seed)``."""
    if value is None:
        if seed is UNSET:
            raise ValueError("Must set one of value or seed")
        if not borrow:
            seed = copy.deepcopy(seed)
        value = np.random.default_rng(seed)
    else:
        if seed is not UNSET:
            raise ValueError("Cannot specify both value and seed")
        if not isinstance(value, np.random.Generator):
            raise TypeError(f"Expected numpy.random.Generator, got {type(value)}")
        if not borrow:
            value = copy.deepcopy(value)
    return RandomGeneratorSharedVariable(
        type=random_generator_type, value=value, strict=False, allow_downcast=None, name=name
    )


@shared_constructor
def randomgen_constructor(value, name=None, strict=False, allow_downcast=None, borrow=False):
    """Shared-variable constructor for ``numpy.random.Generator`` values (declines anything else)."""
    if isinstance(value, np.random.RandomState):
        raise TypeError(
            "`np.RandomState` is no longer supported in lucent. Use `np.random.Generator` instead."
        )
    if not isinstance(value, np.random.Generator):
        raise TypeError(f"randomgen_constructor only takes numpy Generators, got {type(value).__name__}")
    return shared_rng(value, name=name, borrow=borrow)


__all__ = [
    "RandomGeneratorVariable",
    "RandomGeneratorSharedVariable",
    "rng",
    "shared_rng",
    "randomgen_constructor",
    "warn_reuse",
]
