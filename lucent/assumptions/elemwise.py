"""How element-wise arithmetic keeps facts defined by a pattern of zeros.

Diagonal and triangular matrices are defined by where they are zero.
``A * B`` keeps the zeros of either factor; ``A + B`` and ``A - B`` keep
the zeros both share (a broadcast scalar must then be 0); ``A / c`` and
``A ** p`` (``p > 0``) keep the zeros of ``A``; a unary function with
``f(0) == 0`` (negation, abs, sqrt, sin, tanh, ...) keeps them too.
"""

from __future__ import annotations

import numpy as np

from lucent.assumptions.core import FactState, true_if
from lucent.scalar import arith, math as smath
from lucent.tensor.basic import NotScalarConstantError, get_underlying_scalar_constant_value
from lucent.tensor.elemwise import DimShuffle
from lucent.tensor.variable import TensorConstant

#: Scalar ops with ``f(0) == 0``, by class name (those lucent defines).
_ZERO_PRESERVING_NAMES = (
    "Neg", "Abs", "Sqr", "Sqrt", "Sin", "Tan", "Tanh", "Sinh", "Arcsin", "Arctan", "Arcsinh",
    "Arctanh", "Expm1", "Log1p", "Sign", "Floor", "Ceil", "Trunc", "RoundHalfToEven",
    "RoundHalfAwayFromZero", "Deg2Rad", "Rad2Deg", "Erf", "Conj", "Real", "Identity",
)
ZERO_PRESERVING_UNARY = tuple(
    cls for cls in (getattr(smath, n, None) or getattr(arith, n, None) for n in _ZERO_PRESERVING_NAMES)
    if isinstance(cls, type)
)


def _unbroadcast(var):
    """``var`` with the DimShuffles that only add broadcast axes (``2.0`` in ``x * 2.0``) peeled off."""
    while var.owner is not None and isinstance(var.owner.op, DimShuffle) and not var.owner.op.drop:
        var = var.owner.inputs[0]
    return var


def is_provably_positive(var):
    """True when ``var`` is a constant whose every element is > 0."""
    var = _unbroadcast(var)
    if isinstance(var, TensorConstant):
        return bool(np.all(np.asarray(var.data) > 0))
    try:
        return bool(get_underlying_scalar_constant_value(var) > 0)
    except NotScalarConstantError:
        return False


def constant_value(var):
    """The value of ``var`` if it is a constant holding one value (any rank), else ``None``."""
    var = _unbroadcast(var)
    if isinstance(var, TensorConstant):
        data = np.asarray(var.data)
        return data.item() if data.size == 1 else None
    try:
        return get_underlying_scalar_constant_value(var)
    except NotScalarConstantError:
        return None


def _full_matrix(var):
    return var.type.ndim >= 2 and not all(var.type.broadcastable[-2:])


def elemwise_preserves_zero_pattern(key, op, feature, node, input_states):
    """The state of ``key`` (a zero-pattern fact) for the outputs of an Elemwise ``node``."""
    scalar_op = op.scalar_op
    if isinstance(scalar_op, arith.Mul):
        return true_if(any(_full_matrix(i) and feature.check(i, key) for i in node.inputs))
    if isinstance(scalar_op, (arith.Add, arith.Sub)):
        matrices = [i for i in node.inputs if _full_matrix(i)]
        if not matrices:
            return [FactState.UNKNOWN]
        for other in node.inputs:
            if _full_matrix(other):
                continue
            value = constant_value(other)
            if value is None or value != 0:
                return [FactState.UNKNOWN]
        return true_if(all(feature.check(i, key) for i in matrices))
    if isinstance(scalar_op, arith.TrueDiv):
        num = node.inputs[0]
        return true_if(_full_matrix(num) and feature.check(num, key))
    if isinstance(scalar_op, arith.Pow):
        base = node.inputs[0]
        if not (_full_matrix(base) and feature.check(base, key)):
            return [FactState.UNKNOWN]
        return true_if(is_provably_positive(node.inputs[1]))
    if isinstance(scalar_op, ZERO_PRESERVING_UNARY) and len(node.inputs) == 1:
        return true_if(input_states[0] is FactState.TRUE)
    return [FactState.UNKNOWN] * len(node.outputs)
