"""Small ops that the compiler itself needs, and ``as_op`` for user functions.

* ``DeepCopyOp`` returns a copy of its input. It is what guarantees that a
  function's output does not alias one of its inputs or another output.
* ``ViewOp`` returns its input unchanged (as a view); it marks a place in
  the graph (for example to stop a rewrite) without computing anything.
* ``as_op(itypes, otypes)`` turns a plain Python function into an op, for
  computations lucent has no op for. It has no gradient and no Numba
  implementation; it always runs in Python.
"""

from __future__ import annotations

import copy
from functools import wraps

from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op


class ViewOp(Op):
    """Return the input itself: ``view_map`` says output 0 aliases input 0."""

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph, node, input_shapes):
        return input_shapes

    def grad(self, inputs, output_grads):
        return list(output_grads)


view_op = ViewOp()


class OutputGuard(ViewOp):
    """A ``ViewOp`` that rewrites must not remove (kept for compatibility)."""

    destroy_map = {}


_output_guard = OutputGuard()


class DeepCopyOp(Op):
    """Return a deep copy of the input, so the output never aliases it."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        if hasattr(x, "copy"):
            output_storage[0][0] = x.copy()
        else:
            output_storage[0][0] = copy.deepcopy(x)

    def infer_shape(self, fgraph, node, input_shapes):
        return input_shapes

    def grad(self, inputs, output_grads):
        return list(output_grads)


deep_copy_op = DeepCopyOp()


class FromFunctionOp(Op):
    """An op whose ``perform`` calls a Python function (made by ``as_op``).

    Equality is identity of the wrapped function and the types, so two
    ``as_op`` ops on the same function merge.
    """

    __props__ = ("fn", "itypes", "otypes", "infer_shape_fn")

    def __init__(self, fn, itypes, otypes, infer_shape):
        self.fn = fn
        self.itypes = tuple(itypes)
        self.otypes = tuple(otypes)
        self.infer_shape_fn = infer_shape
        self.__name__ = getattr(fn, "__name__", "FromFunctionOp")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __str__(self):
        return f"FromFunctionOp{{{self.__name__}}}"

    def make_node(self, *inputs):
        if len(inputs) != len(self.itypes):
            raise TypeError(
                f"{self} takes {len(self.itypes)} inputs ({list(self.itypes)}), got {len(inputs)}"
            )
        converted = []
        for i, (inp, itype) in enumerate(zip(inputs, self.itypes)):
            if not isinstance(inp, Variable):
                inp = itype.filter_variable(inp)
            elif inp.type != itype:
                try:
                    inp = itype.filter_variable(inp)
                except TypeError:
                    raise TypeError(
                        f"Input {i} of {self} must have type {itype}, got {inp} of type {inp.type}"
                    ) from None
            converted.append(inp)
        return Apply(self, converted, [t() for t in self.otypes])

    def perform(self, node, inputs, output_storage):
        outs = self.fn(*inputs)
        if not isinstance(outs, (list, tuple)):
            outs = (outs,)
        if len(outs) != len(self.otypes):
            raise ValueError(
                f"{self.__name__} returned {len(outs)} values, but the op declares "
                f"{len(self.otypes)} outputs"
            )
        for cell, value, otype in zip(output_storage, outs, self.otypes):
            cell[0] = otype.filter(value, allow_downcast=True)

    def infer_shape(self, fgraph, node, input_shapes):
        if self.infer_shape_fn is None:
            from lucent.graph.utils import MethodNotDefined

            raise MethodNotDefined("infer_shape", type(self), self.__name__)
        return self.infer_shape_fn(fgraph, node, input_shapes)

    def __reduce__(self):
        # Pickle by reference to the decorated function's module-level name.
        mod = getattr(self.fn, "__module__", None)
        name = getattr(self.fn, "__qualname__", None)
        if mod is None or name is None or "<" in name:
            raise TypeError(f"{self} wraps {self.fn!r}, which cannot be pickled by name")
        return _load_as_op, (mod, name)


def _load_as_op(module, qualname):
    import importlib

    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def as_op(itypes, otypes, infer_shape=None):
    """Decorator: make an op from a Python function on run-time values.

    >>> import numpy as np, lucent.tensor as lt
    >>> @as_op(itypes=[lt.dmatrix], otypes=[lt.dvector])
    ... def diag(m):
    ...     return np.diag(m).copy()

    ``itypes`` / ``otypes`` are lists of Types (a single Type is accepted).
    ``infer_shape(fgraph, node, input_shapes)`` may be given to let shapes
    be computed without running the function.
    """
    if not isinstance(itypes, (list, tuple)):
        itypes = [itypes]
    if not isinstance(otypes, (list, tuple)):
        otypes = [otypes]
    itypes = [_as_type(t) for t in itypes]
    otypes = [_as_type(t) for t in otypes]
    if infer_shape is not None and not callable(infer_shape):
        raise TypeError("infer_shape must be a callable")

    def make_op(fn):
        op = FromFunctionOp(fn, itypes, otypes, infer_shape)
        wraps(fn)(op)
        return op

    return make_op


def _as_type(t):
    from lucent.graph.type import Type

    if isinstance(t, Type):
        return t
    # ``lt.dmatrix`` is a constructor function; calling it gives a variable.
    if callable(t):
        try:
            var = t()
        except TypeError:
            var = None
        if isinstance(var, Variable):
            return var.type
    raise TypeError(f"as_op needs Types for itypes/otypes, got {t!r}")


__all__ = ["DeepCopyOp", "deep_copy_op", "ViewOp", "view_op", "FromFunctionOp", "as_op"]
