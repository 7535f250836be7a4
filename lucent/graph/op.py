"""``Op``: one kind of computation, stated once.

An op says everything about its computation in one place:

* ``make_node(*inputs)`` checks and converts the inputs and builds the
  ``Apply`` with outputs of the right types (static shape included);
* ``perform(node, inputs, output_storage)`` is the NumPy reference
  implementation, run by the Python path and by DebugMode;
* ``infer_shape(fgraph, node, input_shapes)`` gives output shapes
  symbolically, so shapes can be known without running the graph;
* ``L_op`` / ``grad`` give the reverse-mode gradient;
* ``view_map`` / ``destroy_map`` declare which outputs alias or overwrite
  which inputs, which in-place rewriting and DebugMode check.

The op's fast implementation lives in ``lucent.link.numba.dispatch``,
registered by op class, so the op does not depend on Numba.

Ops are values: equality and hashing come from ``__props__``, which lets
identical computations be merged and compiled code be cached by content.
"""

from __future__ import annotations

from typing import Any

from lucent.graph.basic import Apply, Variable
from lucent.graph.utils import MethodNotDefined


class Op:
    """Base class of all operations (see module docstring)."""

    __props__: tuple = ()

    #: ``{output_index: [input_index]}``: the output is a view of the input.
    view_map: dict = {}
    #: ``{output_index: [input_index]}``: computing the output overwrites the input.
    destroy_map: dict = {}
    #: Index of the output returned by ``op(*inputs)``; ``None`` returns all of
    #: them (or the only one).
    default_output: int | None = None

    # --- identity ---------------------------------------------------------
    def _props(self):
        return tuple(getattr(self, a) for a in self.__props__)

    def _props_dict(self):
        return {a: getattr(self, a) for a in self.__props__}

    def __eq__(self, other):
        # An op that declares ``__props__`` (even an empty tuple) is a value;
        # one that does not is only equal to itself.
        if not _declares_props(type(self)):
            return self is other
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self):
        if not _declares_props(type(self)):
            return id(self)
        return hash((type(self), self._props()))

    def __str__(self):
        name = getattr(self, "name", None) or type(self).__name__
        props = self.__props__
        if props:
            shown = ", ".join(f"{a}={getattr(self, a)!r}" for a in props)
            return f"{name}{{{shown}}}"
        return name

    def __repr__(self):
        return str(self)

    # --- graph building ----------------------------------------------------
    #: Input and output Types of an op with a fixed signature: with both set,
    #: the default ``make_node`` checks the inputs against ``itypes`` and
    #: makes one output of each of ``otypes``.
    itypes = None
    otypes = None

    def make_node(self, *inputs) -> Apply:
        """Build the Apply of this op on ``inputs``.

        Subclasses implement it, unless the op declares ``itypes`` and
        ``otypes``: the inputs must then be variables of those types (or of
        the same class of type).
        """
        if self.itypes is None or self.otypes is None:
            raise NotImplementedError(f"{type(self).__name__}.make_node is not implemented")
        if len(inputs) != len(self.itypes):
            raise ValueError(f"We expected {len(self.itypes)} inputs but got {len(inputs)}.")
        for i, (inp, itype) in enumerate(zip(inputs, self.itypes)):
            if not hasattr(inp, "type") or not itype.in_same_class(inp.type):
                raise TypeError(
                    f"Invalid input types for Op {self}: input {i} is "
                    f"{getattr(inp, 'type', type(inp).__name__)}, expected {itype}"
                )
        return Apply(self, list(inputs), [otype() for otype in self.otypes])

    def __call__(self, *inputs, name=None, return_list=False, **kwargs):
        """Apply the op and return its default output (or the list of outputs)."""
        node = self.make_node(*inputs, **kwargs)
        if name is not None:
            if len(node.outputs) == 1:
                node.outputs[0].name = name
            else:
                for i, out in enumerate(node.outputs):
                    out.name = f"{name}_{i}"
        if return_list:
            return list(node.outputs)
        if self.default_output is not None:
            return node.outputs[self.default_output]
        if len(node.outputs) == 1:
            return node.outputs[0]
        return list(node.outputs)

    # --- execution -----------------------------------------------------------
    def perform(self, node: Apply, inputs: list, output_storage: list) -> None:
        """Compute the outputs from ``inputs`` into ``output_storage[i][0]``.

        ``output_storage[i][0]`` may hold the value of a previous call, which
        an op may reuse when shape and dtype match (storage reuse).
        """
        raise NotImplementedError(f"{type(self).__name__}.perform is not implemented")

    def prepare_node(self, node, storage_map=None, compute_map=None, impl=None):
        """Hook run once per node before it is linked."""

    def inplace_shape_constraints(self, node):
        """Pairs ``((i, d), (j, e))`` of input dimensions that must have equal lengths.

        Declared by ops that overwrite an input (``destroy_map``) and can
        fail on mismatched shapes, so that a linker can check every
        in-place update of shared variables before the first one writes
        (``lucent.link.shared_writes``). None by default.
        """
        return []

    def get_params(self, node):
        params_type = getattr(self, "params_type", None)
        if params_type is None:
            raise MethodNotDefined("get_params")
        return params_type.get_params(self)

    def do_constant_folding(self, fgraph, node) -> bool:
        """False for ops whose result should not be precomputed at compile time."""
        return True

    # --- shapes ----------------------------------------------------------------
    def infer_shape(self, fgraph, node, input_shapes):
        """Symbolic output shapes (lists of scalar variables) from input shapes."""
        raise MethodNotDefined("infer_shape", type(self), type(self).__name__)

    # --- gradients ---------------------------------------------------------------
    def L_op(self, inputs, outputs, output_grads):
        """Reverse-mode gradient: one gradient (or disconnected/NullType) per input.

        The default forwards to ``grad(inputs, output_grads)``.
        """
        return self.grad(inputs, output_grads)

    def grad(self, inputs, output_grads):
        raise NotImplementedError(
            f"{type(self).__name__} does not implement grad/L_op, so it has no gradient"
        )

    def R_op(self, inputs, eval_points):
        raise NotImplementedError(f"{type(self).__name__} does not implement R_op")

    def connection_pattern(self, node):
        """``[[input i connected to output j]]``; default: all connected."""
        return [[True] * len(node.outputs) for _ in node.inputs]

    # --- in-place helpers ----------------------------------------------------------
    def inplace_on_inputs(self, allowed_inplace_inputs):
        """An equivalent op that overwrites some of ``allowed_inplace_inputs`` (or self)."""
        return self


def _declares_props(cls):
    for klass in cls.__mro__:
        if klass is Op:
            return False
        if "__props__" in klass.__dict__:
            return True
    return False


class _NoPythonOp(Op):
    """An op without a Python implementation (e.g. only a Numba one)."""

    def perform(self, node, inputs, output_storage):
        raise NotImplementedError(f"{self} has no Python implementation")


class HasInnerGraph:
    """Mixin of ops that carry a graph of their own (OpFromGraph, Scan, ...).

    Such an op is defined by an inner ``FunctionGraph`` (``fgraph``) rather
    than by code alone, so the tools that walk graphs - printing, rewriting,
    DebugMode, the Numba linker - need a uniform way into it: the inner
    inputs and outputs, and the compiled inner function (``fn``) its
    ``perform`` runs. ``clone()`` gives an op whose inner graph can be
    changed without affecting this one.
    """

    fgraph = None

    @property
    def fn(self):
        """The compiled inner function (subclasses provide it)."""
        raise NotImplementedError(f"{type(self).__name__} does not define fn")

    @property
    def inner_inputs(self) -> list:
        """The inputs of the inner graph, in the order of the op's inputs."""
        return list(self.fgraph.inputs)

    @property
    def inner_outputs(self) -> list:
        """The outputs of the inner graph, in the order of the op's outputs."""
        return list(self.fgraph.outputs)

    def clone(self):
        """An op with the same behaviour and an inner graph of its own."""
        raise NotImplementedError(f"{type(self).__name__} does not define clone")


def io_connection_pattern(inputs, outputs):
    """``[[input i connected to output j]]`` of the subgraph from ``inputs`` to ``outputs``.

    Follows each node's own ``connection_pattern``, so an op that declares
    an input as not influencing an output (a shape read, a gradient
    barrier) cuts the connection here too.
    """
    from lucent.graph.traversal import io_toposort

    position = {var: k for k, var in enumerate(inputs)}
    reach = {var: {k} for var, k in position.items()}
    for node in io_toposort(list(inputs), list(outputs)):
        pattern = node.op.connection_pattern(node)
        for j, out in enumerate(node.outputs):
            reached = set()
            for i, inp in enumerate(node.inputs):
                if pattern[i][j]:
                    reached |= reach.get(inp, set())
            reach[out] = reached
    return [[k in reach.get(out, set()) for out in outputs] for k in range(len(inputs))]


def get_test_value(v):
    """Test values are not supported; kept for API compatibility."""
    if hasattr(v, "data"):
        return v.data
    raise AttributeError(f"{v} has no test value")


def call_infer_shape(op, fgraph, node, input_shapes):
    """``op.infer_shape`` called with the arguments it takes.

    lucent's ops take ``(fgraph, node, input_shapes)``; ops written for
    PyTensor 3 take ``(node, input_shapes)``. The method's own signature
    says which it is.
    """
    method = op.infer_shape
    takes = _infer_shape_arity(type(op))
    if takes == 2:
        return method(node, input_shapes)
    return method(fgraph, node, input_shapes)


_ARITY_CACHE: dict = {}


def _infer_shape_arity(cls):
    """How many arguments (after ``self``) ``cls.infer_shape`` takes: 2 or 3."""
    found = _ARITY_CACHE.get(cls)
    if found is None:
        import inspect

        found = 3
        try:
            params = list(inspect.signature(cls.infer_shape).parameters.values())[1:]
        except (TypeError, ValueError):
            params = None
        if params is not None and not any(p.kind == p.VAR_POSITIONAL for p in params):
            positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            if len(positional) == 2:
                found = 2
        _ARITY_CACHE[cls] = found
    return found


__all__ = ["Op", "HasInnerGraph", "call_infer_shape", "get_test_value", "io_connection_pattern"]
