"""Run-time checks inside a graph: ``CheckAndRaise`` and its ``Assert`` flavour.

A check is an op that returns its first input unchanged (a view) after
verifying that every condition input is true; if one is false it raises the
exception class it was built with, carrying its message. Because the value
flows *through* the check, anything computed from the output is ordered
after the check, and the check cannot be dropped as dead code while the
value is used.

Checks whose conditions are known to be true when the graph is built are
removed by the ``local_remove_useless_assert`` rewrite (canonicalize);
``local_remove_all_assert`` (tag ``unsafe``, off by default) removes every
``Assert`` for users who trade safety for speed.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.link.c.type import Generic


class ExceptionType(Generic):
    """The type of an exception class held as an op parameter (all instances equal)."""

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))


exception_type = ExceptionType()


def _as_bool_scalar(cond):
    """A condition as a boolean scalar variable (non-boolean values are compared with 0)."""
    from lucent.scalar.basic import ScalarType
    from lucent.tensor import math as lm
    from lucent.tensor.basic import as_tensor_variable, scalar_from_tensor

    if isinstance(cond, Variable) and isinstance(cond.type, ScalarType) and cond.type.dtype == "bool":
        return cond
    t = as_tensor_variable(cond)
    if t.type.ndim != 0:
        raise TypeError(f"CheckAndRaise: each condition must be a scalar, got {t} of type {t.type}")
    if t.type.dtype != "bool":
        t = lm.neq(t, 0)
    return scalar_from_tensor(t)


class CheckAndRaise(Op):
    """Return ``value`` if every condition is true, else raise ``exc_type(msg)``.

    ``value`` may be a tensor or a scalar; each condition is a scalar (0-d
    tensors are converted, non-boolean ones compared with zero). The output
    is a view of ``value``, so the check costs no copy.
    """

    __props__ = ("msg", "exc_type")
    view_map = {0: [0]}

    def __init__(self, exc_type, msg=""):
        if not (isinstance(exc_type, type) and issubclass(exc_type, Exception)):
            raise ValueError(f"CheckAndRaise: `exc_type` must be an Exception subclass, got {exc_type!r}")
        if not isinstance(msg, str):
            raise TypeError(f"CheckAndRaise: `msg` must be a string, got {msg!r}")
        self.exc_type = exc_type
        self.msg = msg

    def _short_msg(self):
        return self.msg[:27] + "..." if len(self.msg) > 30 else self.msg

    def __str__(self):
        return f"{type(self).__name__}{{raises={self.exc_type.__name__}, msg='{self._short_msg()}'}}"

    def make_node(self, value, *conds):
        if not isinstance(value, Variable):
            from lucent.tensor.basic import as_tensor_variable

            value = as_tensor_variable(value)
        conds = [_as_bool_scalar(c) for c in conds]
        return Apply(self, [value, *conds], [value.type()])

    def perform(self, node, inputs, output_storage):
        value, *conds = inputs
        if not all(bool(np.asarray(c)) for c in conds):
            raise self.exc_type(self.msg)
        output_storage[0][0] = value

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import DisconnectedType

        return [output_grads[0], *(DisconnectedType()() for _ in inputs[1:])]

    def do_constant_folding(self, fgraph, node):
        # Folding runs the check: only fold a check known to pass.
        return all(isinstance(c, Constant) and bool(np.asarray(c.data)) for c in node.inputs[1:])


class Assert(CheckAndRaise):
    """A ``CheckAndRaise`` raising ``AssertionError``: a debugging assertion in a graph.

    ``Assert("x is too long")(x, x.size < 2)`` returns ``x`` and fails when
    the condition is false. Assertions proven true when the graph is built
    are removed by the rewrites, so they cost nothing then.
    """

    def __init__(self, msg="Lucent Assert failed!"):
        super().__init__(AssertionError, msg)

    def __str__(self):
        return f"Assert{{msg='{self._short_msg()}'}}"


assert_op = Assert()


def _register_rewrites():
    from lucent.graph.rewriting.basic import node_rewriter
    from lucent.tensor.rewriting.registry import register_canonicalize, register_specialize, register_stabilize

    def _is_true(c):
        if isinstance(c, Constant):
            return bool(np.asarray(c.data))
        owner = c.owner
        if owner is not None and type(owner.op).__name__ == "ScalarFromTensor":
            src = owner.inputs[0]
            if isinstance(src, Constant):
                return bool(np.asarray(src.data))
        return False

    @node_rewriter([CheckAndRaise])
    def local_remove_useless_assert(fgraph, node):
        """Drop the conditions known to be true; drop the check if none is left."""
        value, *conds = node.inputs
        kept = [c for c in conds if not _is_true(c)]
        if len(kept) == len(conds):
            return None
        if not kept:
            return [value]
        return [node.op(value, *kept)]

    @node_rewriter([Assert])
    def local_remove_all_assert(fgraph, node):
        """Remove every ``Assert`` (unsafe: failed assertions go unnoticed)."""
        return [node.inputs[0]]

    for register in (register_canonicalize, register_stabilize, register_specialize):
        register(local_remove_useless_assert)
    from lucent.graph.rewriting.db import canonicalize_db

    canonicalize_db.register("local_remove_all_assert", local_remove_all_assert, "unsafe",
                             use_db_name_as_tag=False)
    return local_remove_useless_assert, local_remove_all_assert


local_remove_useless_assert, local_remove_all_assert = _register_rewrites()


def _register_vectorize():
    from lucent.graph.replace import _vectorize_node

    @_vectorize_node.register(CheckAndRaise)
    def vectorize_check_and_raise(op, node, batch_x, *batch_conds):
        """Batched conditions are reduced with ``all`` (one check for the whole batch), and the
        value is broadcast against them afterwards, so the check stays easy to remove."""
        from lucent.tensor import math as lm
        from lucent.tensor.shape import shape_padright
        from lucent.tensor.spacing import broadcast_arrays

        batched = [c for c in batch_conds if getattr(c.type, "ndim", 0) > 0]
        if not batched:
            return op.make_node(batch_x, *batch_conds)
        conds = [lm.all(c) if getattr(c.type, "ndim", 0) > 0 else c for c in batch_conds]
        out = op(batch_x, *conds)
        x_core_ndim = node.inputs[0].type.ndim
        for c in batched:
            out, _ = broadcast_arrays(out, shape_padright(c, x_core_ndim))
        return [out]


_register_vectorize()


__all__ = ["Assert", "CheckAndRaise", "ExceptionType", "assert_op", "exception_type"]
