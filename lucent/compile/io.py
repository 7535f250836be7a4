"""How the inputs and outputs of a compiled function behave.

``function`` accepts plain Variables, but each input and output can carry
options: an input may have a default value, be updated after every call,
be cast or not, be settable by keyword; an output may be returned without a
copy. ``In`` and ``Out`` attach those options. Every element of the inputs
list is upgraded to an ``In`` (``normalize_input`` implements the shortcuts
of the old tuple syntax) and every output to an ``Out``.
"""

from __future__ import annotations

from lucent.graph.basic import Constant, Variable
from lucent.link.basic import Container


class SymbolicInput:
    """An input of a function, with its options (see ``In`` for their meaning)."""

    def __init__(
        self,
        variable,
        name=None,
        update=None,
        mutable=None,
        strict=False,
        allow_downcast=None,
        autoname=True,
        implicit=False,
        borrow=False,
        shared=False,
    ):
        if not isinstance(variable, Variable):
            raise TypeError(f"An input must be a symbolic Variable, got {variable!r}")
        self.variable = variable
        if autoname and name is None:
            self.name = variable.name
        else:
            self.name = name
        if self.name is not None and not isinstance(self.name, str):
            raise TypeError(f"An input's name must be a string, got {self.name!r}")
        self.update = update
        if update is not None:
            try:
                if isinstance(update, Variable) and not variable.type.in_same_class(update.type):
                    raise TypeError(
                        "an update must have the same dtype and the same broadcastable "
                        "(static size 1) dimensions"
                    )
                self.update = variable.type.filter_variable(update, allow_convert=True)
            except (TypeError, ValueError) as e:
                got = getattr(update, "type", type(update).__name__)
                raise TypeError(
                    f"The update of the input {variable} must have its type {variable.type}, "
                    f"got {update} of type {got}: {e}"
                ) from None
        self.mutable = bool(mutable) if mutable is not None else False
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.implicit = implicit
        self.borrow = borrow
        self.shared = shared

    def __str__(self):
        if self.update is not None:
            return f"In({self.variable} -> {self.update})"
        return f"In({self.variable})"

    def __repr__(self):
        return str(self)


class In(SymbolicInput):
    """An input of ``function`` with options.

    Parameters
    ----------
    variable
        The Variable the value is given for (not computed from its owner).
    name
        The keyword by which the value can be passed (defaults to the
        variable's name when ``autoname``).
    value
        Default value (a literal, a ``Container`` or a shared variable,
        whose container is then used). Without ``update`` it
        is a default argument; with ``update`` it is state that "sticks
        around" between calls.
    update
        Expression whose value replaces ``value`` after each call.
    mutable
        Allow the function to modify the default value in place.
    strict
        Require values of exactly the right type (no casting).
    autoname
        Take ``name`` from the variable when ``name`` is None.
    implicit
        True: the value cannot be given at call time (requires ``value``).
        None: True only when ``value`` is a Container.
    borrow
        The function may keep (alias) the value given at call time.
    """

    def __init__(
        self,
        variable,
        name=None,
        value=None,
        update=None,
        mutable=False,
        strict=False,
        allow_downcast=None,
        autoname=True,
        implicit=None,
        borrow=None,
        shared=False,
    ):
        if borrow is None:
            borrow = bool(mutable)
        if mutable and not borrow:
            raise ValueError(
                "In(mutable=True) requires borrow=True: a function allowed to modify "
                "its input must be allowed to keep a reference to it"
            )
        if implicit is None:
            from lucent.compile.sharedvalue import SharedVariable

            implicit = isinstance(value, (Container, SharedVariable))
        if implicit and value is None:
            raise TypeError(f"In({variable}, implicit=True) needs a value (it cannot be passed)")
        super().__init__(
            variable,
            name=name,
            update=update,
            mutable=mutable,
            strict=strict,
            allow_downcast=allow_downcast,
            autoname=autoname,
            implicit=implicit,
            borrow=borrow,
            shared=shared,
        )
        self.value = value

    @property
    def required(self):
        """True if a value must be given at every call."""
        return self.value is None


class SymbolicOutput:
    """An output of a function; ``borrow=True`` returns internal storage uncopied."""

    def __init__(self, variable, borrow=False):
        if not isinstance(variable, Variable):
            raise TypeError(f"An output must be a symbolic Variable, got {variable!r}")
        self.variable = variable
        self.borrow = borrow

    def __str__(self):
        return f"Out({self.variable}{', borrow=True' if self.borrow else ''})"

    def __repr__(self):
        return str(self)


class Out(SymbolicOutput):
    """An output of ``function``; ``Out(x, borrow=True)`` may return internal memory.

    A borrowed value can be overwritten by the next call of the function,
    which saves a copy.
    """


def normalize_input(item):
    """Upgrade one element of ``function``'s input list to an ``In``.

    Shortcuts (the tuple forms are kept from the original documentation):

    * ``r`` -> ``In(r)``
    * ``(name, r)`` -> ``In(r, name=name)``
    * ``(r, val)`` -> ``In(r, value=val)``
    * ``((r, up), val)`` -> ``In(r, value=val, update=up)``
    * ``(name, r, val)`` -> ``In(r, name=name, value=val)``
    * ``(name, (r, up), val)`` -> ``In(r, name=name, value=val, update=up)``
    """
    if isinstance(item, SymbolicInput):
        if not isinstance(item, In):
            return In(
                item.variable,
                name=item.name,
                update=item.update,
                mutable=item.mutable,
                strict=item.strict,
                allow_downcast=item.allow_downcast,
                autoname=False,
                implicit=item.implicit,
                borrow=item.borrow,
            )
        return item
    if isinstance(item, Constant):
        raise TypeError(
            f"The constant {item} cannot be an input of a function: its value is fixed "
            "when the graph is built. Use a symbolic variable (or lucent.tensor.value(...) "
            "for an input with a default value) instead."
        )
    if isinstance(item, Variable):
        return In(item)
    if isinstance(item, (list, tuple)):
        if len(item) == 2:
            first, second = item
            if isinstance(first, str):
                _check_variable(second, item)
                return In(second, name=first)
            if isinstance(first, (list, tuple)):
                var, up = _variable_and_update(first, item)
                return In(var, value=second, update=up, autoname=True)
            _check_variable(first, item)
            return In(first, value=second, autoname=True)
        if len(item) == 3:
            name, middle, val = item
            if not isinstance(name, str):
                raise TypeError(
                    f"In the input shortcut {item!r} the first element must be a name (str)"
                )
            if isinstance(middle, (list, tuple)):
                var, up = _variable_and_update(middle, item)
                return In(var, name=name, value=val, update=up, autoname=True)
            _check_variable(middle, item)
            return In(middle, name=name, value=val)
    raise TypeError(
        f"Unknown input {item!r}: an input must be a Variable, an In instance, or one of "
        "the tuple shortcuts (name, r), (r, value), ((r, update), value), "
        "(name, r, value), (name, (r, update), value)"
    )


def _check_variable(var, item):
    if isinstance(var, Constant):
        normalize_input(var)  # raises the constant-input error
    if not isinstance(var, Variable):
        raise TypeError(f"In the input shortcut {item!r}, {var!r} is not a Variable")


def _variable_and_update(pair, item):
    if len(pair) != 2:
        raise TypeError(f"In the input shortcut {item!r}, expected (variable, update), got {pair!r}")
    var, up = pair
    _check_variable(var, item)
    return var, up


def normalize_output(item):
    """Upgrade one output to an ``Out``."""
    if isinstance(item, SymbolicOutput):
        return item
    if isinstance(item, Variable):
        return Out(item)
    raise TypeError(
        f"An output must be a Variable or an Out instance, got {item!r} "
        f"(of type {type(item).__name__})"
    )


__all__ = ["In", "Out", "SymbolicInput", "SymbolicOutput", "normalize_input", "normalize_output"]
