"""Special functions of whole axes: softmax, log-softmax and logsumexp.

``Softmax`` and ``LogSoftmax`` are single ops rather than compositions of
``exp`` and ``sum`` because the numerically stable evaluation (subtracting
the maximum first) and the compact gradients are easiest to guarantee in
one place. ``logsumexp`` is built from existing ops: its stability comes
from the same max-subtraction trick.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar.basic import upgrade_to_float, get_scalar_type
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.elemwise import _fit_grad
from lucent.tensor.type import TensorType


def _norm_axis(axis, ndim, who):
    """``axis`` as a sorted tuple of non-negative axes; ``None`` means every axis."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{who}: axis must be an int, a tuple of ints or None, got {axis!r}")
        if not -ndim <= a < max(ndim, 1) or ndim == 0:
            raise np.exceptions.AxisError(f"{who}: axis {a} is out of bounds for a tensor with {ndim} dimensions")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{who}: repeated axis in {axis!r}")
    return tuple(sorted(out))


class _AxisOp(Op):
    """Base of the ops normalised over a set of axes (PyTensor's ``axis``: a tuple of ints)."""

    __props__ = ("axis",)

    def __init__(self, axis=None):
        if isinstance(axis, list):
            axis = tuple(axis)
        elif isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
            axis = (int(axis),)
        if axis is not None and (
            not isinstance(axis, tuple) or any(isinstance(a, bool) or not isinstance(a, (int, np.integer)) for a in axis)
        ):
            raise TypeError(f"{type(self).__name__}: axis must be an int, a tuple of ints or None, got {axis!r}")
        self.axis = None if axis is None else tuple(int(a) for a in axis)

    def __str__(self):
        return f"{type(self).__name__}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        axis = _norm_axis(self.axis, x.type.ndim, type(self).__name__)
        if axis != self.axis:
            return type(self)(axis).make_node(x)
        (otype,) = upgrade_to_float(get_scalar_type(x.type.dtype))
        return Apply(self, [x], [TensorType(otype.dtype, x.type.shape)()])

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def _shifted(self, x, dtype):
        x = np.asarray(x, dtype=dtype)
        if x.size == 0:
            return x, self.axis
        m = np.max(x, axis=self.axis, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        return x - m, self.axis


class Softmax(_AxisOp):
    """``exp(x) / sum(exp(x), axis)``, computed after subtracting the max."""

    def perform(self, node, inputs, output_storage):
        z, axis = self._shifted(inputs[0], node.outputs[0].type.dtype)
        with np.errstate(all="ignore"):
            e = np.exp(z)
            output_storage[0][0] = np.asarray(e / np.sum(e, axis=axis, keepdims=True), dtype=z.dtype)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor import math as tm

        (x,), (sm,), (gz,) = inputs, outputs, output_grads
        gx = tm.mul(tm.sub(gz, tm.sum(tm.mul(gz, sm), axis=self.axis, keepdims=True)), sm)
        return [_fit_grad(gx, x)]


class LogSoftmax(_AxisOp):
    """``x - logsumexp(x, axis)``, computed after subtracting the max."""

    def perform(self, node, inputs, output_storage):
        z, axis = self._shifted(inputs[0], node.outputs[0].type.dtype)
        with np.errstate(all="ignore"):
            out = z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))
        output_storage[0][0] = np.asarray(out, dtype=z.dtype)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor import math as tm

        (x,), (out,), (gz,) = inputs, outputs, output_grads
        gx = tm.sub(gz, tm.mul(tm.exp(out), tm.sum(gz, axis=self.axis, keepdims=True)))
        return [_fit_grad(gx, x)]


def softmax(c, axis=None):
    """Softmax over ``axis``: an int, a tuple of ints, or ``None`` (default) for all axes, as in PyTensor."""
    return Softmax(axis)(c)


def log_softmax(c, axis=None):
    """Logarithm of the softmax over ``axis`` (default all axes), without under- or overflow."""
    return LogSoftmax(axis)(c)


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x), axis))`` computed as ``m + log(sum(exp(x - m)))``.

    ``m`` (the max) is treated as a constant for differentiation: the result
    does not depend on it mathematically, and cutting it keeps the gradient
    finite when ``x`` holds infinities.
    """
    from lucent.gradient import zero_grad
    from lucent.tensor import math as tm

    x = as_tensor_variable(x)
    m = tm.max(x, axis=axis, keepdims=True)
    m = zero_grad(tm.switch(tm.eq(tm.abs(m), np.inf), 0, m))
    out = tm.add(tm.log(tm.sum(tm.exp(tm.sub(x, m)), axis=axis, keepdims=True)), m)
    if not keepdims:
        from lucent.tensor.reduction import _normalize_axes
        from lucent.tensor.elemwise import DimShuffle

        axes = _normalize_axes(axis, x.type.ndim, "logsumexp")
        axes = range(x.type.ndim) if axes is None else axes
        out = DimShuffle(x.type.ndim, tuple(d for d in range(x.type.ndim) if d not in axes))(out)
    return out


def logaddexp(*xs):
    """``log(exp(x0) + exp(x1) + ...)`` of broadcastable inputs, stable for large arguments.

    The largest input is factored out (and treated as 0 when it is infinite,
    so ``-inf`` inputs give ``-inf`` rather than NaN).
    """
    from lucent.tensor import math as tm

    if not xs:
        raise ValueError("logaddexp needs at least one input")
    xs = [as_tensor_variable(x) for x in xs]
    m = xs[0]
    for x in xs[1:]:
        m = tm.maximum(m, x)
    m = tm.switch(tm.isinf(m), 0.0, m)
    total = tm.exp(tm.sub(xs[0], m))
    for x in xs[1:]:
        total = tm.add(total, tm.exp(tm.sub(x, m)))
    return tm.add(tm.log(total), m)


def poch(z, m):
    """Pochhammer symbol (rising factorial) ``gamma(z + m) / gamma(z)``."""
    from lucent.tensor import math as tm

    return tm.true_div(tm.gamma(tm.add(z, m)), tm.gamma(z))


def factorial(n):
    """``n!`` as ``gamma(n + 1)`` (defined for real ``n``)."""
    from lucent.tensor import math as tm

    return tm.gamma(tm.add(n, 1))


def logit(x):
    """Inverse of the sigmoid: ``log(x / (1 - x))``."""
    from lucent.tensor import math as tm

    return tm.log(tm.true_div(x, tm.sub(1, x)))


def beta(a, b):
    """Beta function ``gamma(a) gamma(b) / gamma(a + b)``."""
    from lucent.tensor import math as tm

    return tm.true_div(tm.mul(tm.gamma(a), tm.gamma(b)), tm.gamma(tm.add(a, b)))


def betaln(a, b):
    """Logarithm of the beta function, from ``gammaln`` (no overflow)."""
    from lucent.tensor import math as tm

    return tm.sub(tm.add(tm.gammaln(a), tm.gammaln(b)), tm.gammaln(tm.add(a, b)))


def xlogy(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (as ``scipy.special.xlogy``)."""
    from lucent.tensor import math as tm

    return tm._xlogy(x, y)


def xlog1py(x, y):
    """``x * log1p(y)``, 0 where ``x == 0`` (as ``scipy.special.xlog1py``)."""
    from lucent.tensor import math as tm

    return tm._xlog1py(x, y)


__all__ = [
    "Softmax", "LogSoftmax", "softmax", "log_softmax", "logsumexp", "logaddexp", "poch",
    "factorial", "logit", "beta", "betaln", "xlogy", "xlog1py",
]
