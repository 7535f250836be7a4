"""Structured element-wise functions of sparse matrices (``lucent.sparse.math`` re-exports them).

A *structured* function is applied to the stored entries of a CSR/CSC
matrix only: ``structured_exp(x)`` is ``exp`` of ``x.data`` with ``x``'s
pattern, so the zeros that are not stored stay zero (``exp(0) = 1`` is not
what a sparse user wants). Each one is built from the dense element-wise op
on the ``data`` vector, taken apart with ``csm_properties`` and put back
with ``CSM``; the gradient therefore flows to ``data`` only (structured) and
the dense op's own gradient is reused. Extra operands (the exponent of
``structured_pow``, ...) are scalars.
"""

from __future__ import annotations

import functools

from lucent.sparse import basic as sb


def structured_elemwise(tensor_op):
    """Decorator: the function becomes ``tensor_op`` applied to the stored entries of its first argument."""

    def decorator(f):
        @functools.wraps(f)
        def wrapper(x, *scalars):
            from lucent.scalar.basic import as_scalar

            x = sb._compressed(x, f"the structured function {f.__name__}")
            extra = [as_scalar(s) for s in scalars]
            data, indices, indptr, shape = sb.csm_properties(x)
            return sb.CSM(x.type.format)(tensor_op(data, *extra), indices, indptr, shape)

        return wrapper

    return decorator


def _define(name, dense_name, doc):
    import lucent.tensor.math as tm

    def f(x, *args):  # replaced by the wrapper
        raise AssertionError  # pragma: no cover

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return structured_elemwise(getattr(tm, dense_name))(f)


_TABLE = [
    # (name, dense op of lucent.tensor.math, what it computes)
    ("abs", "abs", "``|x|``"),
    ("structured_sigmoid", "sigmoid", "the logistic sigmoid"),
    ("structured_exp", "exp", "``exp(x)``"),
    ("structured_log", "log", "``log(x)``"),
    ("structured_pow", "pow", "``x ** y`` for a scalar ``y``"),
    ("structured_minimum", "minimum", "``minimum(x, y)`` for a scalar ``y``"),
    ("structured_maximum", "maximum", "``maximum(x, y)`` for a scalar ``y``"),
    ("structured_add", "add", "``x + y`` for a scalar ``y``"),
    ("sin", "sin", "``sin(x)``"),
    ("sinh", "sinh", "``sinh(x)``"),
    ("arcsin", "arcsin", "``arcsin(x)``"),
    ("arcsinh", "arcsinh", "``arcsinh(x)``"),
    ("tan", "tan", "``tan(x)``"),
    ("tanh", "tanh", "``tanh(x)``"),
    ("arctan", "arctan", "``arctan(x)``"),
    ("arctanh", "arctanh", "``arctanh(x)``"),
    ("rint", "round_half_to_even", "rounding to the nearest even integer"),
    ("sign", "sign", "the sign"),
    ("ceil", "ceil", "the ceiling"),
    ("floor", "floor", "the floor"),
    ("log1p", "log1p", "``log(1 + x)``"),
    ("expm1", "expm1", "``exp(x) - 1``"),
    ("deg2rad", "deg2rad", "degrees to radians"),
    ("rad2deg", "rad2deg", "radians to degrees"),
    ("trunc", "trunc", "truncation towards zero"),
    ("sqr", "sqr", "``x ** 2``"),
    ("sqrt", "sqrt", "``sqrt(x)``"),
]

for _name, _dense, _what in _TABLE:
    globals()[_name] = _define(
        _name, _dense, f"{_what[0].upper() + _what[1:]} of the stored entries of the sparse matrix ``x`` (structured)."
    )

__all__ = ["structured_elemwise"] + [name for name, _, _ in _TABLE]
