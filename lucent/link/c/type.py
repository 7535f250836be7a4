"""Types from the C interface: enumerations, opaque pointers and generic objects.

These Types mostly describe *op parameters* rather than tensors:

* ``EnumType`` / ``EnumList`` / ``CEnumType`` name a closed set of constants
  (an op's "mode" or "algorithm" choice). In Python they are attributes
  (``enum.SUM``); in compiled code they are compile-time constants: lucent's
  Numba kernels receive the numeric value and fold it like a literal, where
  Theano emitted a ``#define``.
* ``CDataType`` is an opaque pointer that kernels pass along without looking
  inside (a handle from an external library). Its values are ``CDataValue``
  objects wrapping the integer address.
* ``Generic`` accepts any Python object; it types things like Python-level
  configuration passed between ops on the reference path.

All of them are ordinary lucent ``Type`` s (``filter``, ``values_eq``, ...)
and also implement the ``CLinkerType`` interface so code written for that
interface still imports and subclasses them.
"""

from __future__ import annotations

import operator
import re
import sys
import weakref

from lucent.graph.type import Type
from lucent.link.c.interface import CLinkerType

_CONSTANT_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Generic(Type, CLinkerType):
    """The type of arbitrary Python objects: ``filter`` accepts anything.

    Use it for values that are not arrays and need no checking, e.g. a
    Python object handed from one op to the next. All ``Generic`` instances
    are the same type; the module-level ``generic`` is the usual one.
    """

    def filter(self, data, strict=False, allow_downcast=None):
        return data

    def is_valid_value(self, data, strict=True):
        return True

    def values_eq(self, a, b):
        try:
            return bool(a == b)
        except Exception:
            # e.g. arrays, whose == is elementwise
            return a is b

    def get_shape_info(self, obj):
        return sys.getsizeof(obj)

    def get_size(self, shape_info):
        return shape_info

    def c_is_simple(self):
        return False

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return type(self).__name__

    def __repr__(self):
        return str(self)


generic = Generic()


class CDataValue:
    """A value of a ``CDataType``: the integer address of the C object.

    ``int(value)`` gives the address. If the type's ``freefunc`` is a Python
    callable it is called with the address once, when the value is freed
    with ``free()`` or garbage collected.
    """

    __slots__ = ("type", "ptr", "_finalizer", "__weakref__")

    def __init__(self, type, ptr):
        self.type = type
        self.ptr = ptr
        freefunc = type.freefunc
        if callable(freefunc) and ptr:
            self._finalizer = weakref.finalize(self, freefunc, ptr)
        else:
            self._finalizer = None

    def free(self):
        """Release the C object now (calls the type's Python ``freefunc`` once)."""
        if self._finalizer is not None:
            self._finalizer()

    def __int__(self):
        return self.ptr

    __index__ = __int__

    def __eq__(self, other):
        return isinstance(other, CDataValue) and other.type == self.type and other.ptr == self.ptr

    def __hash__(self):
        return hash((self.type, self.ptr))

    def __repr__(self):
        return f"<{self.type} at {self.ptr:#x}>"


class CDataType(Type, CLinkerType):
    """An opaque pointer to C data, passed between ops without being inspected.

    Parameters
    ----------
    ctype
        The C type of the pointer, star included (``'void *'``,
        ``'cudnnHandle_t'``).
    freefunc
        How to free the pointer: the name of a C function (kept for
        compatibility; lucent does not call C) or a Python callable taking
        the integer address.
    headers, header_dirs, libraries, lib_dirs, compile_args, extra_support_code
        Build settings of the C code that uses the pointer (reported by the
        ``CLinkerObject`` hooks).
    version
        Cache version; ``None`` means unversioned.
    """

    __props__ = (
        "ctype", "freefunc", "headers", "header_dirs", "libraries",
        "lib_dirs", "compile_args", "extra_support_code", "version",
    )

    def __init__(self, ctype, freefunc=None, headers=(), header_dirs=(), libraries=(),
                 lib_dirs=(), compile_args=(), extra_support_code="", version=None):
        if not isinstance(ctype, str) or not ctype.strip():
            raise TypeError(f"CDataType: ctype must be a non-empty string such as 'void *', got {ctype!r}")
        if freefunc is not None and not (isinstance(freefunc, str) or callable(freefunc)):
            raise TypeError(
                "CDataType: freefunc must be None, the name of a C function or a Python "
                f"callable taking the address, got {freefunc!r}"
            )
        self.ctype = ctype
        self.freefunc = freefunc
        self.headers = tuple(headers)
        self.header_dirs = tuple(header_dirs)
        self.libraries = tuple(libraries)
        self.lib_dirs = tuple(lib_dirs)
        self.compile_args = tuple(compile_args)
        self.extra_support_code = extra_support_code
        self.version = version

    def _props(self):
        return tuple(getattr(self, a) for a in self.__props__)

    def __eq__(self, other):
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self):
        return hash((type(self), self._props()))

    def make_value(self, ptr):
        """A value of this type for the C pointer whose address is the integer ``ptr``."""
        try:
            address = operator.index(ptr)
        except TypeError:
            raise TypeError(
                f"{self}.make_value expects the integer address of a pointer, got {ptr!r}"
            ) from None
        if address < 0:
            raise ValueError(f"{self}.make_value: a pointer address cannot be negative ({address})")
        return CDataValue(self, address)

    def filter(self, data, strict=False, allow_downcast=None):
        """Accept ``None`` (a NULL pointer) or a ``CDataValue`` made by this type."""
        if data is None:
            return data
        if isinstance(data, CDataValue) and data.type == self:
            return data
        raise TypeError(
            f"{self} expected a value made with {self}.make_value(address) (or None), got {data!r}"
        )

    def values_eq(self, a, b):
        return a == b

    def may_share_memory(self, a, b):
        return a is not None and a == b

    def get_shape_info(self, obj):
        return sys.getsizeof(obj)

    def get_size(self, shape_info):
        return shape_info

    # CLinkerObject hooks report the build settings given to the constructor.
    def c_headers(self, **kwargs):
        return list(self.headers)

    def c_header_dirs(self, **kwargs):
        return list(self.header_dirs)

    def c_libraries(self, **kwargs):
        return list(self.libraries)

    def c_lib_dirs(self, **kwargs):
        return list(self.lib_dirs)

    def c_compile_args(self, **kwargs):
        return list(self.compile_args)

    def c_support_code(self, **kwargs):
        return self.extra_support_code

    def c_code_cache_version(self):
        return () if self.version is None else (self.version,)

    def __str__(self):
        return f"{type(self).__name__}{{{self.ctype}}}"

    def __repr__(self):
        return str(self)


def _normalise_enum_value(name, value):
    # bool first: it is a subclass of int but the seed converts it explicitly.
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value
    if hasattr(value, "dtype") and getattr(value, "ndim", None) == 0:  # numpy scalar
        kind = value.dtype.kind
        if kind in "iu":
            return int(value)
        if kind == "f":
            return float(value)
    raise TypeError(
        f"EnumType: constant {name!r} must have an int, float or bool value, "
        f"got {type(value).__name__} {value!r}"
    )


class InvalidConstantName(AttributeError, ValueError):
    """An ``EnumType`` constant name that breaks the naming rule.

    An ``AttributeError`` as in PyTensor (constants are attributes, and this
    name cannot be one) and a ``ValueError`` (the value given is wrong).
    """


def _check_constant_name(cls_name, name):
    if not isinstance(name, str) or not _CONSTANT_NAME.match(name):
        raise InvalidConstantName(
            f"{cls_name}: invalid constant name {name!r}. A constant name must start with "
            "a capital letter and contain only capital letters, digits and underscores "
            "(for example 'MODE_SUM')."
        )


class EnumType(Type, CLinkerType):
    """An enumeration of named numeric constants, used as an op parameter.

    ``EnumType(CONSTANT_1=1, CONSTANT_2=2.5, CONSTANT_3=False)`` defines three
    constants, available as attributes (``enum.CONSTANT_2 == 2.5``; booleans
    become ``0``/``1``). A constant may have an *alias*, a free-form string
    accepted wherever a user picks a constant: ``EnumType(A=('alpha', 1))``
    then ``enum.fromalias('alpha') == 1`` and ``enum.filter('alpha') == 1``.

    ``ctype`` is the C type of the values (default ``double``) and ``cname``
    a C identifier naming the enumeration (default: ``ctype`` with spaces
    replaced by underscores). In lucent's Numba kernels the values are
    compile-time constants.

    Two enums are the same type when they have the same class, constants,
    aliases, ``ctype`` and ``cname``.
    """

    _default_ctype = "double"

    def __init__(self, ctype=None, cname=None, **kwargs):
        self._init_type(ctype, cname)
        self._init_constants(kwargs.items())

    # --- construction helpers (shared with EnumList) ---------------------------------
    def _init_type(self, ctype, cname):
        if ctype is None:
            ctype = self._default_ctype
        if not isinstance(ctype, str) or not ctype.strip():
            raise TypeError(f"{type(self).__name__}: ctype must be a C type name, got {ctype!r}")
        ctype = " ".join(ctype.split())
        if cname is None:
            cname = ctype.replace(" ", "_")
        if not isinstance(cname, str) or not _C_IDENTIFIER.match(cname):
            raise TypeError(
                f"{type(self).__name__}: cname must be a valid C identifier, got {cname!r}"
            )
        self.ctype = ctype
        self.cname = cname

    def _init_constants(self, items):
        cls_name = type(self).__name__
        constants = {}
        aliases = {}
        for name, spec in items:
            _check_constant_name(cls_name, name)
            if name in constants:
                raise TypeError(f"{cls_name}: constant {name!r} is defined twice")
            alias = None
            if isinstance(spec, tuple):
                if len(spec) != 2 or not isinstance(spec[0], str):
                    raise TypeError(
                        f"{cls_name}: constant {name!r} must be a value or an "
                        f"(alias, value) pair with a string alias, got {spec!r}"
                    )
                alias, spec = spec
            constants[name] = _normalise_enum_value(name, spec)
            if alias is not None:
                if alias == name:
                    raise TypeError(
                        f"{cls_name}: the alias of constant {name!r} is its own name; give a "
                        "different alias or none (a constant is always found by its name)"
                    )
                if alias in aliases:
                    raise TypeError(f"{cls_name}: alias {alias!r} is used by two constants")
                aliases[alias] = name
        for alias, name in aliases.items():
            if alias in constants and alias != name:
                raise TypeError(
                    f"{cls_name}: alias {alias!r} of {name!r} is also the name of another constant"
                )
        self._constants = constants
        self._aliases = aliases

    # --- Python access -------------------------------------------------------------------
    def __getattr__(self, name):
        # Only called when normal lookup fails: the constants are attributes.
        try:
            constants = object.__getattribute__(self, "_constants")
        except AttributeError:
            raise AttributeError(name) from None
        if name in constants:
            return constants[name]
        raise AttributeError(
            f"{type(self).__name__} has no constant {name!r}; its constants are "
            + ", ".join(constants)
        )

    def __setattr__(self, name, value):
        if "_constants" in self.__dict__ and name in self._constants:
            raise AttributeError(f"{type(self).__name__} constants are read-only ({name})")
        object.__setattr__(self, name, value)

    def __getitem__(self, name):
        return self._constants[name]

    def __len__(self):
        return len(self._constants)

    def __iter__(self):
        """Iterate over the constant names, in definition order."""
        return iter(self._constants)

    def keys(self):
        return self._constants.keys()

    def values(self):
        return self._constants.values()

    def items(self):
        return self._constants.items()

    def __contains__(self, name):
        """True for a constant name or an alias of this enumeration."""
        return name in self._constants or name in self._aliases

    def fromalias(self, alias):
        """The value of the constant with this alias, or else with this constant name."""
        if alias in self._aliases:
            return self._constants[self._aliases[alias]]
        if alias in self._constants:
            return self._constants[alias]
        raise KeyError(
            f"{type(self).__name__}: {alias!r} is neither an alias nor a constant name. "
            f"Aliases: {', '.join(self.get_aliases()) or '(none)'}; "
            f"constants: {', '.join(self._constants)}"
        )

    def get_aliases(self):
        """The sorted tuple of all aliases."""
        return tuple(sorted(self._aliases))

    def has_alias(self, alias):
        """True iff ``alias`` is an alias (not merely a constant name) here."""
        return alias in self._aliases

    def name_of(self, value):
        """The name of the (first) constant with this value."""
        for name, v in self._constants.items():
            if v == value and type(v) is type(value):
                return name
        for name, v in self._constants.items():
            if v == value:
                return name
        raise ValueError(f"{value!r} is not a value of {self}")

    # --- Type contract ----------------------------------------------------------------------
    def filter(self, data, strict=False, allow_downcast=None):
        """Return ``data`` if it is one of the constants' values.

        Not strict: booleans become ints, strings are looked up as aliases
        (or constant names), NumPy scalars become Python numbers.
        """
        if not strict:
            if isinstance(data, str):
                data = self.fromalias(data)
            elif not isinstance(data, (int, float)) or isinstance(data, bool) or hasattr(data, "dtype"):
                try:
                    data = _normalise_enum_value("value", data)
                except TypeError:
                    pass
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            if any(data == v for v in self._constants.values()):
                return data
        raise TypeError(
            f"{data!r} is not a value of {self}; expected one of "
            + ", ".join(f"{n}={v!r}" for n, v in self._constants.items())
            + (" (or one of the aliases " + ", ".join(map(repr, self.get_aliases())) + ")"
               if self._aliases and not strict else "")
        )

    def values_eq(self, a, b):
        return a == b

    def get_shape_info(self, obj):
        return sys.getsizeof(obj)

    def get_size(self, shape_info):
        return shape_info

    def c_is_simple(self):
        return True

    def c_literal(self, data):
        return repr(self.filter(data, strict=False))

    def c_to_string(self):
        """C source of a function naming a value of this enumeration.

        The prototype is the one Theano documented::

            int theano_enum_to_string_<cname>(<ctype> value, char* output_string);

        It writes the constant's name into ``output_string`` (which must hold
        the longest name) and returns 0; for an unknown value it sets a Python
        ``ValueError`` and returns -1. PyTensor named the function
        ``pytensor_enum_to_string_<cname>``: that name is defined as an alias.
        The code is compiled only in debug builds (``#ifdef DEBUG``, set by
        ``config.cmodule__debug`` in a C backend); lucent itself compiles no C
        and only returns the text.
        """
        name = f"theano_enum_to_string_{self.cname}"
        cases = "\n".join(
            f'        case {constant}: strcpy(output_string, "{constant}"); return 0;'
            for constant in self._constants
        )
        return (
            "#ifdef DEBUG\n"
            f"int {name}({self.ctype} value, char* output_string) {{\n"
            "    switch (value) {\n"
            f"{cases}\n"
            "        default:\n"
            f'            PyErr_SetString(PyExc_ValueError, "{type(self).__name__} {self.cname}: '
            'unknown enumeration value");\n'
            "            return -1;\n"
            "    }\n"
            "}\n"
            f"#define pytensor_enum_to_string_{self.cname} {name}\n"
            "#endif\n"
        )

    def _key(self):
        return (
            type(self),
            self.ctype,
            self.cname,
            tuple(self._constants.items()),
            tuple(sorted(self._aliases.items())),
        )

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        reverse = {name: alias for alias, name in self._aliases.items()}
        parts = []
        for name, value in self._constants.items():
            alias = f"({reverse[name]})" if name in reverse else ""
            parts.append(f"{name}{alias}:{value}")
        return f"{type(self).__name__}<{self.ctype}>({', '.join(parts)})"

    __str__ = __repr__

    def __getstate__(self):
        return dict(self.__dict__)

    def __setstate__(self, state):
        self.__dict__.update(state)


class EnumList(EnumType):
    """An ``EnumType`` whose constants are numbered ``0, 1, 2, ...`` in order.

    ``EnumList('A', ('B', 'beta'), 'C')`` gives ``A=0``, ``B=1`` (alias
    ``'beta'``), ``C=2``. The default ``ctype`` is ``int``.
    """

    _default_ctype = "int"

    def __init__(self, *args, ctype=None, cname=None, **kwargs):
        if kwargs:
            raise TypeError(
                f"{type(self).__name__} only accepts the keyword arguments ctype and cname, "
                f"got {', '.join(sorted(kwargs))}; give constants as positional names"
            )
        self._init_type(ctype, cname)
        items = []
        for i, arg in enumerate(args):
            if isinstance(arg, tuple):
                if len(arg) != 2 or not all(isinstance(a, str) for a in arg):
                    raise TypeError(
                        f"{type(self).__name__}: expected a constant name or a "
                        f"(name, alias) pair of strings, got {arg!r}"
                    )
                name, alias = arg
                items.append((name, (alias, i)))
            elif isinstance(arg, str):
                items.append((arg, i))
            else:
                raise TypeError(
                    f"{type(self).__name__}: expected a constant name or a (name, alias) pair, got {arg!r}"
                )
        self._init_constants(items)


class CEnumType(EnumList):
    """An enumeration of constants whose real values are defined in C.

    In Theano the names were C macros or enum members from a header and the
    Python values (``0, 1, 2, ...``) were arbitrary placeholders, only good for
    telling choices apart. lucent has no C step: the placeholder values are
    what its Numba kernels see, as compile-time constants. Use the constants
    for choices, never for their numeric values.
    """

    #: The Python values are placeholders, not the C values.
    c_defined = True


__all__ = ["CDataType", "CDataValue", "CEnumType", "EnumList", "EnumType", "Generic", "generic"]
