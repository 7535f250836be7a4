"""The values a gradient can be besides a tensor, the errors of ``grad``, and small helpers.

* ``DisconnectedType``: the output does not depend on that input at all;
* ``NullType``: the gradient exists mathematically but is not defined or not
  implemented; using it is an error unless the caller asks for it back.
"""

from __future__ import annotations

from lucent.configdefaults import config
from lucent.graph.null_type import NullType, null_type  # noqa: F401  (re-exported)
from lucent.graph.op import Op
from lucent.graph.type import Type
from lucent.scalar.dtypes import continuous_dtypes, discrete_dtypes

class DisconnectedType(Type):
    """Type of a gradient that does not exist because there is no dependency."""

    def filter(self, data, strict=False, allow_downcast=None):
        raise AssertionError(
            "A DisconnectedType variable has no value: it only marks that an output does "
            "not depend on an input"
        )

    def filter_variable(self, other, allow_convert=True):
        raise AssertionError(
            f"Cannot convert {other} to DisconnectedType: a disconnected gradient is only a "
            "symbolic placeholder for 'no dependency'"
        )

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "DisconnectedType"


#: ``disconnected_type()`` makes a fresh variable marking a disconnected gradient.
disconnected_type = DisconnectedType()


def grad_undefined(op, x_pos, x, comment=""):
    """The gradient of ``op`` wrt its input ``x_pos`` is mathematically undefined."""
    return NullType(
        f"This variable is Null because the grad method for input {x_pos} ({x}) of the "
        f"{op} op is mathematically undefined. {comment}"
    )()


def grad_not_implemented(op, x_pos, x, comment=""):
    """The gradient of ``op`` wrt its input ``x_pos`` exists but lucent does not compute it."""
    return NullType(
        f"This variable is Null because the grad method for input {x_pos} ({x}) of the "
        f"{op} op is not implemented. {comment}"
    )()


class DisconnectedInputError(ValueError):
    """``grad`` was asked for the gradient wrt a variable the cost does not use."""


class NullTypeGradError(TypeError):
    """A gradient needed by ``grad`` is undefined or not implemented."""



def _is_disconnected(v):
    return isinstance(getattr(v, "type", None), DisconnectedType)


def _is_null(v):
    return isinstance(getattr(v, "type", None), NullType)


def _zeros_for(var):
    from lucent.tensor.elemwise import _zeros_like

    dtype = var.type.dtype if var.type.dtype in continuous_dtypes else config.floatX
    return _zeros_like(var, dtype)


def _match_tangent_dtype(var, tangent):
    """Cast a (co)tangent to the float dtype of ``var``; integer variables keep float tangents."""
    var_dt = getattr(var.type, "dtype", None)
    t_dt = getattr(tangent.type, "dtype", None)
    if not hasattr(var.type, "ndim") or not hasattr(tangent.type, "ndim"):
        return tangent  # only tensors are cast here
    if var_dt is not None and t_dt is not None and var_dt != t_dt and var_dt not in discrete_dtypes:
        from lucent.tensor.math import cast
        from lucent.tensor.type import DenseTensorType, TensorType

        if isinstance(tangent.type, TensorType) and not isinstance(tangent.type, DenseTensorType):
            tangent = tangent.astype(var_dt)  # sparse tangents are cast by their own op
        else:
            tangent = cast(tangent, var_dt)
    return tangent


def _overrides(op, name):
    """Does ``op``'s class define ``name`` itself, rather than inherit the base Op's default?"""
    method = getattr(type(op), name, None)
    return method is not None and method is not getattr(Op, name, None)


def _op_pullback(op, inputs, outputs, cotangents):
    """An op's pull-back: its ``pullback`` method if it has one, else ``L_op`` (then ``grad``)."""
    if _overrides(op, "pullback"):
        return op.pullback(inputs, outputs, cotangents)
    return op.L_op(inputs, outputs, cotangents)


def _connected_ancestors(outputs, blockers):
    """Variables on which ``outputs`` depend, following each op's connection pattern."""
    seen = set()
    stack = list(outputs)
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v.owner is None or v in blockers:
            continue
        node = v.owner
        pattern = node.op.connection_pattern(node)
        j = node.outputs.index(v)
        for i, inp in enumerate(node.inputs):
            if pattern[i][j] and inp not in seen:
                stack.append(inp)
    return seen


def _disconnected_message(var):
    return (
        f"grad method was asked to compute the gradient with respect to a variable "
        f"that is not part of the computational graph of the cost, or is used only by "
        f"a non-differentiable operator: {var}. Pass disconnected_inputs='ignore' to "
        f"get a zero gradient for it (or 'warn' to be warned and get zeros)."
    )


