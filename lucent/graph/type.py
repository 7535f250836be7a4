"""The ``Type`` contract: static knowledge about the values a Variable can take.

A ``Type`` *instance* is a set of constraints on run-time values (for
example "float64 arrays with shape (2, ?)"). It is responsible for

* making variables of itself (``make_variable`` / ``__call__``);
* *filtering* run-time values: checking a value given to a compiled function
  and converting it if allowed (``filter``), following the casting rules
  below;
* comparing types (``in_same_class`` / ``is_super``) and converting symbolic
  variables between compatible types (``filter_variable`` /
  ``convert_variable``), which graph rewriting relies on;
* comparing values (``values_eq`` / ``values_eq_approx``), detecting
  aliasing (``may_share_memory``) and measuring size
  (``get_shape_info`` / ``get_size``), which DebugMode and the memory
  profiler rely on.

Casting rules of ``filter(data, strict=False, allow_downcast=None)``:

* ``strict=True``: the data must already be exactly of the right kind; it is
  returned as is or a ``TypeError`` is raised.
* ``strict=False, allow_downcast=True``: the data may be cast, even with loss
  of precision.
* ``strict=False, allow_downcast=False``: the data may only be *upcast*
  (no loss of precision).
* ``strict=False, allow_downcast=None`` (the default): like ``False``, except
  that Python floats may be downcast, and only to ``floatX`` scalars.

Only ``filter`` has no default; every other method of the contract has a
sensible one here.

The contract is split as the Type specification describes: ``PureType``
holds the Python side above, ``CLinkerType`` the C-code hooks (which lucent
never calls: it compiles with Numba), and ``Type`` combines both, so a
user's Type written against either interface works. ``SingletonType`` is
for types with exactly one member (all its instances are equal).

Devices: ``register_transfer(fn)`` adds a way to move a variable to a
*target* (``var.transfer("cpu")``); see :func:`transfer`.
"""

from __future__ import annotations

from typing import Any

from lucent.graph.basic import Constant, Variable
from lucent.graph.c_interface import CLinkerType
from lucent.graph.utils import MethodNotDefined


class PureType:
    """The Python part of the Type contract (see module docstring).

    A PureType makes variables of itself, filters run-time values, compares
    types and values, and measures values; everything a Python or Numba
    linker needs, and nothing about C code.
    """

    #: The Variable subclass made by ``make_variable``.
    variable_type = Variable
    #: The Constant subclass used for constants of this type.
    constant_type = Constant

    # --- run-time values -------------------------------------------------
    def filter(self, data, strict=False, allow_downcast=None):
        """Return ``data`` (possibly converted) if it is a valid value of this type.

        Must raise ``TypeError`` when the data is not acceptable under the
        casting rules described in the module docstring.
        """
        raise MethodNotDefined("filter", type(self), self.__class__.__name__)

    def filter_inplace(self, value, storage, strict=False, allow_downcast=None):
        """Like ``filter`` but may write the result into ``storage`` (the old value).

        Returns the filtered value; types that cannot reuse memory raise
        ``NotImplementedError`` so callers fall back to ``filter``.
        """
        raise NotImplementedError()

    def is_valid_value(self, data, strict=True):
        """True iff ``filter(data, strict=strict)`` does not raise."""
        try:
            self.filter(data, strict=strict)
            return True
        except (TypeError, ValueError):
            return False

    def value_validity_msg(self, data):
        """A message explaining why ``data`` is (not) a valid value."""
        try:
            self.filter(data, strict=True)
        except (TypeError, ValueError) as e:
            return str(e)
        return "value is valid"

    def values_eq(self, a, b):
        """True iff ``a`` and ``b`` are exactly equal values of this type."""
        return a == b

    def values_eq_approx(self, a, b):
        """True iff ``a`` and ``b`` are approximately equal (default: exactly)."""
        return self.values_eq(a, b)

    def may_share_memory(self, a, b):
        """True if the run-time values ``a`` and ``b`` could share memory."""
        return a is b

    def get_shape_info(self, obj):
        """What ``get_size`` needs to compute the memory taken by ``obj``."""
        return obj

    def get_size(self, shape_info):
        """Number of bytes taken by a value described by ``shape_info``."""
        raise MethodNotDefined("get_size", type(self), self.__class__.__name__)

    # --- symbolic variables ----------------------------------------------
    def in_same_class(self, otype: "Type") -> bool | None:
        """True if ``otype`` belongs to the same class of types as ``self``.

        The default treats every class as having one element: equality.
        """
        if self == otype:
            return True
        return False

    def is_super(self, otype: "Type") -> bool | None:
        """True if ``self`` is a supertype of ``otype`` (``self >= otype``)."""
        if self.in_same_class(otype):
            return True
        return None

    def filter_variable(self, other, allow_convert=True):
        """Return a variable of this type equivalent to ``other``, or raise ``TypeError``.

        Non-variables are made into constants. A variable of a compatible
        but different type is converted with ``convert_variable``.
        """
        if not isinstance(other, Variable):
            other = self.constant_type(type=self, data=other)
        if other.type == self:
            return other
        if allow_convert:
            other2 = self.convert_variable(other)
            if other2 is not None:
                return other2
        raise TypeError(
            f"Cannot convert Type {other.type} (of Variable {other}) into Type {self}. "
            f"You can try to manually convert {other} into a {self}."
        )

    def convert_variable(self, var):
        """Return a variable compatible with both ``self`` and ``var.type``, or ``None``.

        When ``var.type`` is at least as specific as ``self`` (``self.is_super(
        var.type)``), ``var`` itself is returned. When it is *less* specific,
        a conversion that narrows it is needed; the default cannot know how,
        so it raises ``NotImplementedError`` (types such as ``TensorType``
        narrow with a ``SpecifyShape``). Unrelated types give ``None``.
        """
        if self.is_super(var.type):
            return var
        if var.type.is_super(self):
            raise NotImplementedError(
                f"{type(self).__name__} cannot narrow a variable of the more general type "
                f"{var.type} to {self}; override convert_variable to do it"
            )
        return None

    def make_variable(self, name=None):
        """A new Variable of this type, named ``name``."""
        return self.variable_type(self, None, name=name)

    def make_constant(self, value, name=None):
        return self.constant_type(type=self, data=value, name=name)

    def __call__(self, name=None):
        """Shortcut for ``make_variable``: ``TensorType('float64', (2,))('x')``."""
        return self.make_variable(name)

    def clone(self, *args, **kwargs):
        """A copy of this type with some of its parameters changed."""
        return type(self)(*args, **kwargs)

    def __ne__(self, other):
        return not self == other


class Type(PureType, CLinkerType):
    """Interface specification for the types of variables: ``PureType`` + ``CLinkerType``.

    Subclass this to define a type; only ``filter`` must be written. The C
    hooks inherited from ``CLinkerType`` raise ``MethodNotDefined`` unless
    overridden, and lucent never calls them.
    """


class SingletonType(Type):
    """A Type with a single member: every instance of a subclass is equal.

    Subclasses get ``__eq__``, ``__hash__`` and ``__str__`` (the class name)
    for free, so ``MyType() == MyType()`` holds without writing them, which
    graph merging and DebugMode's type comparisons rely on.
    """

    def __eq__(self, other):
        return self is other or type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return type(self).__name__

    def __repr__(self):
        return type(self).__name__


_transfer_functions: list = []


def register_transfer(fn):
    """Add ``fn(variable, target)`` to the ways of moving a variable to a device.

    ``fn`` returns the transferred variable (possibly ``variable`` itself
    when nothing needs to move) or ``None`` when it does not handle
    ``target``. Functions registered later are asked first, so a plugin can
    override a built-in target. Returns ``fn`` (usable as a decorator).
    """
    if not callable(fn):
        raise TypeError(f"register_transfer expects a function (variable, target), got {fn!r}")
    _transfer_functions.append(fn)
    return fn


def transfer(var, target):
    """``var`` moved to the device ``target`` by the first registered function that can.

    lucent's tensor layer registers ``"cpu"`` (lucent runs on the CPU, so a
    tensor is returned as it is). Raises ``ValueError`` naming the target
    when no registered function handles it.
    """
    for fn in reversed(_transfer_functions):
        res = fn(var, target)
        if res is not None:
            return res
    raise ValueError(
        f"Can't transfer {var} (type {var.type}) to target {target!r}: no function registered "
        "with register_transfer handles it"
    )


class Props:
    """Mixin giving ``__eq__``, ``__hash__`` and ``__str__`` from ``__props__``.

    Types and ops are values: two instances with the same class and
    ``__props__`` are interchangeable, which is what merging and caching need.
    """

    __props__: tuple = ()

    def _props(self):
        return tuple(getattr(self, a) for a in self.__props__)

    def _props_dict(self):
        return {a: getattr(self, a) for a in self.__props__}

    def __eq__(self, other):
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self):
        return hash((type(self), self._props()))


class DataType(Props, Type):
    """Base of simple value types whose identity is the class and its props."""


__all__ = [
    "PureType", "Type", "SingletonType", "Props", "DataType", "register_transfer", "transfer",
]
