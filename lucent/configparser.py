"""The configuration machinery behind ``lucent.config``.

Flags are declared once with a parameter kind that validates values, read
from the ``LUCENT_FLAGS`` environment variable (``name=value`` pairs
separated by commas, the same syntax as ``PYTENSOR_FLAGS``), and can be
changed temporarily with ``config.change_flags(...)`` as a context manager
or decorator. Unknown names and invalid values are errors that say what was
expected, because a silently ignored typo in a flag is a bug hunt later.
"""

from __future__ import annotations

import contextlib
import functools
import os
from typing import Any, Callable, Sequence


class ConfigError(ValueError):
    """An unknown configuration flag or an invalid value for one."""


class UnknownFlagError(ConfigError, KeyError):
    """A flag name that lucent does not declare (a ``KeyError`` too, as in PyTensor)."""

    def __str__(self):
        return ValueError.__str__(self)


class ConfigParam:
    """One flag: its default, how to validate a value, and its documentation."""

    def __init__(self, default, validate: Callable[[Any], Any] | None = None, doc="", mutable=True):
        self.default = default
        self._validate = validate
        self.doc = doc
        self.mutable = mutable
        self.name = None

    def convert(self, value):
        if self._validate is None:
            return value
        return self._validate(value)

    def describe(self):
        return ""


class EnumStr(ConfigParam):
    def __init__(self, default, options: Sequence[str], doc="", mutable=True):
        self.options = (default, *[o for o in options if o != default])
        super().__init__(default, None, doc, mutable)

    def convert(self, value):
        if value not in self.options:
            raise ConfigError(
                f"Invalid value {value!r} for flag {self.name}: expected one of "
                + ", ".join(repr(o) for o in self.options)
            )
        return value

    def describe(self):
        return "one of " + ", ".join(self.options)


class BoolParam(ConfigParam):
    _true = {"1", "true", "True", "yes", "on"}
    _false = {"0", "false", "False", "no", "off", ""}

    def convert(self, value):
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str):
            if value in self._true:
                return True
            if value in self._false:
                return False
        raise ConfigError(
            f"Invalid value {value!r} for flag {self.name}: expected a boolean "
            "(True/False, 1/0, true/false)"
        )

    def describe(self):
        return "a boolean"


class StrParam(ConfigParam):
    def convert(self, value):
        if not isinstance(value, str):
            raise ConfigError(f"Invalid value {value!r} for flag {self.name}: expected a string")
        return super().convert(value)


class IntParam(ConfigParam):
    def convert(self, value):
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(
                f"Invalid value {value!r} for flag {self.name}: expected an integer"
            ) from None


class FloatParam(ConfigParam):
    def convert(self, value):
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ConfigError(
                f"Invalid value {value!r} for flag {self.name}: expected a number"
            ) from None


class ModeParam(ConfigParam):
    """The default compilation mode: a mode name or a ``Mode`` object.

    Names are checked (case-insensitively) against the known modes;
    ``register_mode`` adds a name to them. Any object with a ``linker``
    attribute is taken as a mode as it is.
    """

    def __init__(self, default, names, doc="", mutable=True):
        self.names = set(names)
        super().__init__(default, None, doc, mutable)

    def convert(self, value):
        if isinstance(value, str):
            if value in self.names or value.upper() in {n.upper() for n in self.names}:
                return value
            raise ConfigError(
                f"Invalid value {value!r} for flag {self.name}: expected a Mode or one of "
                + ", ".join(sorted(self.names))
            )
        if hasattr(value, "linker"):
            return value
        raise ConfigError(
            f"Invalid value {value!r} for flag {self.name}: expected a mode name or a Mode object"
        )

    def describe(self):
        return "a Mode or one of " + ", ".join(sorted(self.names))


def parse_flags_string(text: str, source="LUCENT_FLAGS") -> dict:
    """Parse ``name=value,name2=value2`` into a dict (error names the bad item)."""
    result = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise ConfigError(
                f"Malformed item {item!r} in {source}: expected name=value "
                "(for example LUCENT_FLAGS=floatX=float32,mode=FAST_COMPILE)"
            )
        name, value = item.split("=", 1)
        result[name.strip()] = value.strip()
    return result


class LucentConfigParser:
    """Holds the flags; attribute access reads and (validated) writes them."""

    def __init__(self, flags_string: str = ""):
        object.__setattr__(self, "_params", {})
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_pending", parse_flags_string(flags_string))

    def add(self, name: str, doc: str, param: ConfigParam):
        param.name = name
        param.doc = doc
        self._params[name] = param
        if name in self._pending:
            value = self._pending.pop(name)
        else:
            value = param.default() if callable(param.default) else param.default
        self._values[name] = param.convert(value)

    def check_pending(self):
        """Raise on flags given in the environment that no one declared."""
        if self._pending:
            names = ", ".join(sorted(self._pending))
            self._pending.clear()
            raise UnknownFlagError(
                f"Unknown lucent flag(s) in LUCENT_FLAGS: {names}. "
                f"Known flags: {', '.join(sorted(self._params))}"
            )

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(
            f"lucent.config has no flag {name!r}. Known flags: {', '.join(sorted(values))}"
        )

    def __setattr__(self, name, value):
        if name not in self._params:
            raise UnknownFlagError(
                f"Unknown lucent flag {name!r}. Known flags: {', '.join(sorted(self._params))}"
            )
        param = self._params[name]
        if not param.mutable:
            raise ConfigError(f"The flag {name} cannot be changed after lucent is imported")
        self._values[name] = param.convert(value)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._values))

    def flags(self):
        return dict(self._values)

    def __str__(self):
        lines = []
        for name, param in sorted(self._params.items()):
            lines.append(f"{name} ({param.describe() or type(param).__name__})")
            lines.append(f"    {param.doc}")
            lines.append(f"    Value: {self._values[name]!r}")
        return "\n".join(lines)

    def change_flags(self, *args, **kwargs):
        """Temporarily set flags: ``with config.change_flags(floatX='float32'):``.

        Also usable as a decorator. An unknown flag is refused at once; every
        value is validated before any flag changes (when the block is entered
        or the decorated function called, as in PyTensor), so a bad value
        leaves the configuration as it was.
        """
        values = {}
        for arg in args:
            values.update(arg)
        values.update(kwargs)
        return _ChangeFlags(self, values)


class _ChangeFlags(contextlib.ContextDecorator):
    def __init__(self, config, values):
        self.config = config
        converted = {}
        self._error = None
        for name, value in values.items():
            if name not in config._params:
                raise UnknownFlagError(
                    f"Unknown lucent flag {name!r}. Known flags: {', '.join(sorted(config._params))}"
                )
            param = config._params[name]
            try:
                converted[name] = param.convert(value)
            except Exception as e:
                # A bad value fails when the flags are set (entering the block or
                # calling the decorated function), not when the decorator is made.
                self._error = self._error or e
        self.values = converted
        # A stack, not one slot: the same object is re-entered when it
        # decorates a recursive function or is nested with itself.
        self._saved = []

    def __enter__(self):
        if self._error is not None:
            raise self._error
        self._saved.append({name: self.config._values[name] for name in self.values})
        self.config._values.update(self.values)
        return self

    def __exit__(self, *exc):
        self.config._values.update(self._saved.pop())
        return False


def change_flags_global(*args, **kwargs):
    """``lucent.change_flags(...)``: ``lucent.config.change_flags`` as a function."""
    from lucent.configdefaults import config

    return config.change_flags(*args, **kwargs)
