"""Errors of the tensor layer, at PyTensor's ``tensor.exceptions`` path.

Two of them are lucent's own and say more than one built-in class can:
a value that a type refuses is a ``TypeError`` (the Type contract's error
for "this value does not fit"), and it is also the error NumPy raises for
the same conversion, so code written for either convention catches it.
"""


class NotScalarConstantError(Exception):
    """Raised by ``get_scalar_constant_value`` when a value is not a known constant."""


class EmptyConstantError(NotScalarConstantError):
    """Raised when a constant that should hold one value holds none."""


class AdvancedIndexingError(TypeError):
    """Raised when an index cannot be turned into basic or advanced indexing."""


class ShapeError(Exception):
    """Raised when shapes are found to disagree."""


class ValueOutOfRangeError(TypeError, OverflowError):
    """An integer value outside the range of the type's dtype.

    NumPy 2 raises ``OverflowError`` for ``np.asarray(300, dtype="int8")``;
    lucent's types refuse lossy values with ``TypeError``. This is both.
    """


class NotANumberError(TypeError, ValueError):
    """A string (or bytes) given where numbers are expected.

    Strings are refused even when they spell a number (``"3"``): silently
    parsing them hides a bug in the caller. NumPy raises ``ValueError`` for
    a string that does not parse; this is that too.
    """
