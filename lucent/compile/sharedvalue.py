"""Shared variables: graph inputs whose value lives outside any one function.

A ``SharedVariable`` owns a ``Container``. Every function compiled with the
variable in its graph uses *that* container as the storage of the input, so
a new value set with ``set_value`` (or written by a function's update) is
seen by all of them. This is how model parameters persist between calls
without being passed as arguments.

``shared(value)`` picks the kind of shared variable from the value: it asks
the registered *constructors* in reverse order of registration (the most
specific ones are registered last) and the first that does not raise
``TypeError`` wins. Keyword arguments narrow the choice, since a constructor
that does not know a keyword declines with ``TypeError``.
"""

from __future__ import annotations

import copy

from lucent.compile.watch import notify_shared_changed
from lucent.graph.basic import Variable
from lucent.graph.utils import add_tag_trace
from lucent.link.basic import Container

# The list ``collect_new_shareds`` is filling, or None outside one.
_new_shareds = None


class collect_new_shareds:
    """Context manager giving the list of shared variables created inside it.

    ``scan`` uses it to tell the shared variables a step function creates
    (such as the generators of random draws, whose default updates become
    loop states) from those it only reads. Contexts nest: the inner one
    collects alone until it exits.
    """

    def __enter__(self):
        global _new_shareds
        self._outer = _new_shareds
        self._list = []
        _new_shareds = self._list
        return self._list

    def __exit__(self, *exc):
        global _new_shareds
        _new_shareds = self._outer
        return False


class SharedVariable(Variable):
    """A Variable with storage shared between the functions it appears in.

    Parameters
    ----------
    name
        The variable's name (or ``None``).
    type
        Its ``Type``; the value is filtered by it.
    value
        The initial value; a new container is made for it. Not copied here:
        constructors decide (``borrow``).
    strict
        If True, values assigned later must already be exactly of the type
        (no casting).
    allow_downcast
        Passed to ``Type.filter`` on ``set_value``.
    container
        Use this container instead of making one (then ``value`` must be
        ``None``).
    """

    #: When set, functions compiled without ``no_default_updates`` apply this
    #: update expression to the variable after each call.
    default_update = None

    def __init__(self, name, type, value, strict, allow_downcast=None, container=None):
        super().__init__(type=type, owner=None, index=None, name=name)
        if container is not None:
            if value is not None:
                raise TypeError(
                    "SharedVariable got both a value and a container; give only one "
                    "(the container already holds the value)"
                )
            self.container = container
            if strict or allow_downcast:
                raise TypeError(
                    "strict and allow_downcast cannot be set when a container is given: "
                    "they are the container's"
                )
        else:
            self.container = Container(
                self,
                storage=[type.filter(value, strict=strict, allow_downcast=allow_downcast)],
                readonly=False,
                strict=strict,
                allow_downcast=allow_downcast,
            )
        add_tag_trace(self)
        if _new_shareds is not None:
            _new_shareds.append(self)

    # The container decides how values are filtered, so these two follow it.
    @property
    def strict(self):
        return self.container.strict

    @property
    def allow_downcast(self):
        return self.container.allow_downcast

    def get_value(self, borrow=False, return_internal_type=False):
        """The current value; a copy unless ``borrow=True``.

        With ``borrow=True`` the internal object may be returned, so changing
        it changes the variable's value for every function using it.
        """
        if borrow:
            return self.container.value
        return copy.deepcopy(self.container.value)

    def set_value(self, new_value, borrow=False):
        """Set the value seen by every function using this variable.

        The value is filtered by the type (with this variable's ``strict``
        and ``allow_downcast``) and copied unless ``borrow=True``.
        """
        if borrow:
            self.container.value = new_value
        else:
            filtered = self.container.filter(new_value)
            if filtered is new_value:
                filtered = copy.deepcopy(new_value)
            self.container.storage[0] = filtered
        notify_shared_changed(self)

    def get_test_value(self):
        return self.get_value(borrow=True, return_internal_type=True)

    def zero(self, borrow=False):
        """Set the value to zeros of the same shape (for array values)."""
        if borrow:
            self.container.value[...] = 0
        else:
            self.container.value = self._zeros_like(self.container.value)
        notify_shared_changed(self)

    @staticmethod
    def _zeros_like(value):
        """A zero value like ``value`` (kinds of shared variables know better)."""
        return 0 * value

    def clone(self, name=None, **kwargs):
        """A new SharedVariable on the *same* container (so it shares the value)."""
        if name is None:
            name = self.name
        cp = self.__class__(
            name=name, type=self.type, value=None, strict=None, container=self.container
        )
        cp.tag = copy.copy(self.tag)
        return cp


def _copy_unless_borrow(value, borrow):
    return value if borrow else copy.deepcopy(value)


# ---------------------------------------------------------------------------
# The constructor registry.

shared_constructor_list: list = []


def shared_constructor(ctor, remove=False):
    """Register ``ctor`` (appended; tried before those registered earlier).

    ``ctor(value, name=name, strict=strict, allow_downcast=..., **kwargs)``
    must raise ``TypeError`` for values (or keywords) it does not support.
    Usable as a decorator. ``remove=True`` unregisters it.
    """
    if remove:
        shared_constructor_list.remove(ctor)
    else:
        shared_constructor_list.append(ctor)
    return ctor


def shared(value, name=None, strict=False, allow_downcast=None, **kwargs):
    """A SharedVariable initialised with ``value`` (a copy unless ``borrow=True``).

    The registered constructors are tried from the most recently registered
    to the first; the first one that accepts ``value`` (and every keyword in
    ``kwargs``, such as ``borrow``, ``shape`` or ``broadcastable``) is used.
    """
    if isinstance(value, Variable):
        raise TypeError(
            "shared() needs a value, not a symbolic Variable "
            f"(got {value}); give a numpy array or number"
        )
    declined = []
    for ctor in reversed(shared_constructor_list):
        try:
            var = ctor(value, name=name, strict=strict, allow_downcast=allow_downcast, **kwargs)
        except TypeError as e:
            declined.append(f"{getattr(ctor, '__name__', ctor)}: {e}")
            continue
        add_tag_trace(var)
        return var
    details = "".join(f"\n  - {d}" for d in declined)
    raise TypeError(
        f"No shared variable constructor accepts a value of type "
        f"{type(value).__module__}.{type(value).__qualname__}"
        + (f" with keyword arguments {sorted(kwargs)}" if kwargs else "")
        + f". The constructors declined as follows:{details}"
    )


def generic_constructor(value, name=None, strict=False, allow_downcast=None, borrow=False):
    """Fallback for any Python object: a shared variable of the ``Generic`` type.

    The variable holds the object itself, not a copy, whatever ``borrow``
    says: a generic Python object has no copy rule of its own (a deep copy
    may be impossible or wrong), so ``get_value(borrow=True) is value``.
    ``get_value()`` without borrowing still hands out a copy.
    """
    try:
        from lucent.link.c.type import generic
    except ImportError:
        raise TypeError("the Generic type is not available") from None
    return SharedVariable(
        type=generic,
        value=value,
        name=name,
        strict=strict,
        allow_downcast=allow_downcast,
    )


shared_constructor(generic_constructor)

#: The registered constructors, tried in reverse order (``shared.constructors``).
shared.constructors = shared_constructor_list


__all__ = [
    "SharedVariable",
    "collect_new_shareds",
    "shared",
    "shared_constructor",
    "shared_constructor_list",
]
