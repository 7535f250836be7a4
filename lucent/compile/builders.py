"""``OpFromGraph``: a new op defined by a graph instead of by code.

A user who writes the same expression in many places, or wants to give it a
custom gradient, wraps it once::

    x, y = lt.dscalars("x", "y")
    op = OpFromGraph([x, y], [x + y * x])
    z = op(a, b) + op(b, a)

The op carries its *inner graph*, an ordinary ``FunctionGraph`` whose inputs
are ``NominalVariable``s (printed ``i0``, ``i1``, ...), so the inner graph is
the same whichever variables built it. Everything an op must state comes
from that graph:

* ``perform`` runs the inner graph through a function compiled once with the
  Python linker (``fn``), so the reference path stays the reference path;
* ``infer_shape`` walks the inner graph with each inner op's ``infer_shape``,
  so shapes are known without running anything;
* ``L_op`` differentiates the inner graph with ``lucent.grad`` (or uses the
  ``pullback`` override) and wraps the result in another ``OpFromGraph``;
  ``R_op`` does the same with ``pushforward``;
* ``connection_pattern`` follows the inner ops' connection patterns;
* on the Numba path the inner graph is compiled into one kernel
  (``lucent.link.numba.dispatch.builders``).

With ``inline=True`` the op is only a way to build graphs: the
``inline_ofg_expansion`` rewrite (``fast_compile`` and ``fast_run``) replaces
every such node by a copy of its inner graph, so the outer rewrites see
through it.

Two ops built from structurally identical graphs (same ops, same wiring,
same constants, same types) with the same settings are equal and hash
alike, so merging deduplicates them. The inner graph is never changed in
place: whatever rewrites it works on a copy (``clone_with_inner_graph``), so
``clone()`` may return the op itself.
"""

from __future__ import annotations

import warnings
from copy import copy

import numpy as np

from lucent.compile.sharedvalue import SharedVariable
from lucent.graph.basic import Apply, Constant, NominalVariable, Variable
from lucent.graph.destroyhandler import order_destroyers
from lucent.graph.fg import FunctionGraph, MissingInputError
from lucent.graph.op import HasInnerGraph, Op, io_connection_pattern
from lucent.graph.replace import clone_replace
from lucent.graph.rewriting.basic import in2out, node_rewriter
from lucent.graph.rewriting.db import optdb
from lucent.graph.traversal import graph_inputs


# ---------------------------------------------------------------------------
# The inner graph and its structural identity
# ---------------------------------------------------------------------------
def construct_nominal_fgraph(inputs, outputs):
    """The inner ``FunctionGraph`` of ``outputs`` over nominal inputs ``i0, i1, ...``.

    Every variable the outputs need must be one of ``inputs`` or a constant;
    a shared variable used without being listed raises ``MissingInputError``
    (its value would otherwise be frozen into the op silently).
    """
    for var in graph_inputs(outputs, blockers=inputs):
        if var in inputs or isinstance(var, Constant):
            continue
        if isinstance(var, SharedVariable):
            raise MissingInputError(
                f"Inner graph implicitly depends on shared variable {var}. "
                "Provide it explicitly in the 'inputs' list.",
                variable=var,
            )
        raise MissingInputError(
            f"The outputs of the OpFromGraph depend on {var} (type {var.type}), which is "
            "not one of its inputs. Add it to the inputs list.",
            variable=var,
        )
    # Nominal inputs (interned by position and type) make inner graphs built
    # from different variables identical, so equal ops compare equal.
    dummies = [NominalVariable(k, inp.type) for k, inp in enumerate(inputs)]
    # With repeated inputs the last occurrence wins; the others stay unused.
    replaced = clone_replace(list(outputs), replace=dict(zip(inputs, dummies)))
    # a body rewritten in place keeps its readers-before-writer order (order_destroyers)
    return order_destroyers(FunctionGraph(dummies, replaced, clone=True, copy_inputs=False))


def _data_signature(data):
    if isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
        if arr.dtype.hasobject:
            return ("object", repr(arr))
        return ("nd", arr.dtype.str, arr.shape, np.ascontiguousarray(arr).tobytes())
    return ("py", type(data).__name__, repr(data))


def graph_key(inputs, outputs):
    """A hashable description of the graph from ``inputs`` to ``outputs``.

    Two graphs have the same key exactly when they compute the same thing
    the same way: equal ops wired alike, constants of equal type and value,
    inputs of equal types. Variable names and identities do not matter.
    """
    from lucent.graph.traversal import io_toposort

    refs = {var: ("i", k) for k, var in enumerate(inputs)}

    def ref(var):
        found = refs.get(var)
        if found is not None:
            return found
        if isinstance(var, Constant):
            return ("c", var.type, _data_signature(var.data))
        return ("free", var.type)

    nodes = []
    for n, node in enumerate(io_toposort(list(inputs), list(outputs))):
        nodes.append((node.op, tuple(ref(v) for v in node.inputs)))
        for j, out in enumerate(node.outputs):
            refs[out] = ("n", n, j)
    return (
        tuple(var.type for var in inputs),
        tuple(nodes),
        tuple(ref(var) for var in outputs),
    )


def infer_shape(outs, inputs, input_shapes, fgraph=None):
    """Symbolic shapes of ``outs`` given the shapes of ``inputs`` (``None`` for non-tensors).

    Walks the graph from ``inputs`` to ``outs`` asking each op's
    ``infer_shape``; where an op cannot say, the length is read from the
    variable itself (``Shape_i``). Lengths known statically are constants.
    The result may still refer to ``inputs`` (for lengths only their values
    decide).
    """
    from lucent.graph.traversal import io_toposort
    from lucent.tensor.basic import constant
    from lucent.tensor.shape import Shape_i

    shapes = {}
    for var, shp in zip(inputs, input_shapes):
        if shp is not None and len(shp) != getattr(var.type, "ndim", len(shp)):
            raise ValueError(
                f"infer_shape: the shape given for {var} has {len(shp)} entries, but it has "
                f"{var.type.ndim} dimensions"
            )
        shapes[var] = None if shp is None else tuple(shp)

    def shape_of(var):
        if var in shapes:
            return shapes[var]
        if getattr(var.type, "ndim", None) is None:
            return None
        if isinstance(var, Constant):
            return tuple(constant(s, dtype="int64") for s in np.shape(var.data))
        return tuple(
            constant(s, dtype="int64") if s is not None else Shape_i(d)(var)
            for d, s in enumerate(var.type.shape)
        )

    for node in io_toposort(list(inputs), list(outs)):
        try:
            out_shapes = node.op.infer_shape(fgraph, node, [shape_of(v) for v in node.inputs])
        except Exception:  # ops without infer_shape, or shapes they cannot express
            out_shapes = None
        for j, out in enumerate(node.outputs):
            got = out_shapes[j] if out_shapes is not None else None
            shapes[out] = tuple(got) if got is not None else shape_of(out)
    return [shape_of(out) for out in outs]


def _is_disconnected(var):
    from lucent.gradient import DisconnectedType

    return isinstance(getattr(var, "type", None), DisconnectedType)


def _is_null_or_disconnected(var):
    from lucent.gradient import DisconnectedType, NullType

    return isinstance(getattr(var, "type", None), (DisconnectedType, NullType))


# ---------------------------------------------------------------------------
# OpFromGraph
# ---------------------------------------------------------------------------
class OpFromGraph(Op, HasInnerGraph):
    """An op whose computation is the graph from ``inputs`` to ``outputs``.

    Parameters
    ----------
    inputs, outputs
        Lists of variables. Every variable the outputs depend on must be an
        input or a constant (shared variables too must be listed).
    inline
        If True, compilation replaces the op by its inner graph (the outer
        rewrites then see through it); if False the op runs as one node.
    pullback
        Override of the gradient (vector-Jacobian product): ``None`` (use the
        inner graph's gradient), an ``OpFromGraph`` or callable taking
        ``(inputs, outputs, output_grads)`` and returning one gradient per
        input, or a list with one entry per input (``None``: default, a
        callable returning that input's gradient, or a
        ``DisconnectedType``/``NullType`` variable).
    pushforward
        Override of the Jacobian-vector product: ``None``, an
        ``OpFromGraph`` / callable taking ``(inputs, eval_points)`` and
        returning one tangent per output, or a list with one entry per output.
    lop_overrides, rop_overrides
        Deprecated names of ``pullback`` / ``pushforward`` (FutureWarning).
    connection_pattern
        ``[[input i connected to output j]]`` to use instead of the one read
        from the inner graph.
    strict
        Accepted for compatibility; inputs must always be explicit.
    name
        Shown when the op is printed.
    destroy_map
        Declares outputs computed in place of inputs.
    **kwargs
        ``on_unused_input="ignore"`` lets an input be repeated. Other keyword
        arguments (compile options in older versions) are ignored with a
        FutureWarning; ``updates`` and ``givens`` are not supported.
    """

    def __init__(
        self,
        inputs,
        outputs,
        *,
        inline=False,
        pullback=None,
        pushforward=None,
        lop_overrides=None,
        rop_overrides=None,
        connection_pattern=None,
        strict=False,
        name=None,
        destroy_map=None,
        **kwargs,
    ):
        if not (isinstance(inputs, list) and isinstance(outputs, list)):
            raise TypeError(
                "OpFromGraph: inputs and outputs must be lists, got "
                f"{type(inputs).__name__} and {type(outputs).__name__}"
            )
        for what, items in (("inputs", inputs), ("outputs", outputs)):
            for item in items:
                if not isinstance(item, Variable):
                    raise TypeError(
                        f"OpFromGraph: {what} must be Variable instances; got {item!r} "
                        f"({type(item).__name__})"
                    )
        if kwargs.get("on_unused_input") != "ignore" and len(inputs) != len(set(inputs)):
            repeated = [v for v in dict.fromkeys(inputs) if inputs.count(v) > 1]
            raise ValueError(
                "The following variables were provided more than once as inputs to the "
                f"OpFromGraph, resulting in an invalid graph: {repeated}. Use dummy variables "
                "or var.copy() to distinguish them, or pass on_unused_input='ignore'."
            )
        if "updates" in kwargs or "givens" in kwargs:
            raise NotImplementedError("OpFromGraph does not support updates or givens")
        ignored = sorted(k for k in kwargs if k != "on_unused_input")
        if ignored:
            warnings.warn(
                f"OpFromGraph ignores the compile options {ignored}: the inner graph is "
                "compiled with the outer function's linker.",
                FutureWarning,
                stacklevel=2,
            )
        if name is not None and not isinstance(name, str):
            raise TypeError(f"OpFromGraph: name must be None or a str, got {name!r}")
        if lop_overrides is not None:
            if pullback is not None:
                raise ValueError("lop_overrides and pullback are mutually exclusive")
            warnings.warn("lop_overrides is deprecated in favor of pullback.", FutureWarning, stacklevel=2)
            pullback = lop_overrides
        if rop_overrides is not None:
            if pushforward is not None:
                raise ValueError("rop_overrides and pushforward are mutually exclusive")
            warnings.warn("rop_overrides is deprecated in favor of pushforward.", FutureWarning, stacklevel=2)
            pushforward = rop_overrides

        self._fgraph = construct_nominal_fgraph(inputs, outputs)
        self.is_inline = bool(inline)
        self.kwargs = dict(kwargs)
        self.input_types = [v.type for v in inputs]
        self.output_types = [v.type for v in outputs]
        self.destroy_map = dict(destroy_map) if destroy_map else {}
        self.name = name
        self._pullback = pullback
        self._pushforward = pushforward
        self._connection_pattern = connection_pattern
        self._init_caches()

    def _init_caches(self):
        # ``_key`` is the inner graph's structural identity (also what the
        # Numba disk cache describes the op by).
        self._key = graph_key(self._fgraph.inputs, self._fgraph.outputs)
        self._fn = None
        self._lop_cache = {}
        self._rop_cache = None
        self._override_keys = None

    # --- the inner graph ---------------------------------------------------
    @property
    def fgraph(self):
        """The inner ``FunctionGraph`` (treat it as read-only)."""
        return self._fgraph

    @property
    def pullback_overrides(self):
        return self._pullback

    @property
    def pushforward_overrides(self):
        return self._pushforward

    @property
    def fn(self):
        """The inner graph compiled once for ``perform`` (Python linker, light rewrites)."""
        if self._fn is None:
            from lucent.compile.io import In
            from lucent.compile.maker import function
            from lucent.compile.mode import Mode

            self._fn = function(
                [In(v) for v in self._fgraph.inputs],
                list(self._fgraph.outputs),
                mode=Mode(linker="py", optimizer="fast_compile"),
                on_unused_input="ignore",
                accept_inplace=True,
                trust_input=True,
                name=f"{self} inner function",
            )
        return self._fn

    def clone(self):
        """The op itself: its inner graph is never changed in place."""
        return self

    def clone_with_inner_graph(self, inner_fgraph):
        """A copy of this op computing ``inner_fgraph`` (same inputs and output types)."""
        if len(inner_fgraph.inputs) != len(self.input_types) or len(inner_fgraph.outputs) != len(
            self.output_types
        ):
            raise ValueError(
                f"clone_with_inner_graph: {self} has {len(self.input_types)} inputs and "
                f"{len(self.output_types)} outputs; the new inner graph has "
                f"{len(inner_fgraph.inputs)} and {len(inner_fgraph.outputs)}"
            )
        new = copy(self)
        new._fgraph = inner_fgraph
        new.input_types = [v.type for v in inner_fgraph.inputs]
        new.output_types = [v.type for v in inner_fgraph.outputs]
        new._init_caches()
        return new

    # --- identity ------------------------------------------------------------
    def _overrides_key(self):
        if self._override_keys is None:
            self._override_keys = (
                self._freeze_override(self._pullback, "pullback"),
                self._freeze_override(self._pushforward, "pushforward"),
            )
        return self._override_keys

    def _freeze_override(self, override, kind):
        """A structural key of an override (its graph on placeholder arguments)."""
        if override is None:
            return None
        if isinstance(override, OpFromGraph):
            return ("ofg", override._key)
        ins = [t() for t in self.input_types]
        if kind == "pullback":
            extra = [[t() for t in self.output_types], [t() for t in self.output_types]]
        else:
            extra = [[t() for t in self.input_types]]
        placeholders = ins + [v for group in extra for v in group]
        args = (ins, *extra)
        if isinstance(override, list):
            results = []
            for entry in override:
                if entry is None:
                    results.append(None)
                elif isinstance(entry, Variable):
                    results.append(entry)
                elif callable(entry):
                    results.append(entry(*args))
                else:
                    results.append(entry)
        else:
            results = override(*args)
        if not isinstance(results, (list, tuple)):
            results = [results]
        pattern = tuple(
            "default" if r is None else ("absent" if _is_null_or_disconnected(r) else "graph")
            for r in results
        )
        connected = [r for r in results if isinstance(r, Variable) and not _is_null_or_disconnected(r)]
        return (kind, type(override) is list, pattern, graph_key(placeholders, connected))

    def __eq__(self, other):
        if self is other:
            return True
        if type(self) is not type(other):
            return False
        if (
            self._key != other._key
            or self.is_inline != other.is_inline
            or self.destroy_map != other.destroy_map
            or self.output_types != other.output_types
        ):
            return False
        if self._pullback is other._pullback and self._pushforward is other._pushforward:
            return True
        return self._overrides_key() == other._overrides_key()

    def __hash__(self):
        return hash((type(self), self._key, self.is_inline))

    def __str__(self):
        name = type(self).__name__ if self.name is None else self.name
        return f"{name}{{inline={self.is_inline}}}"

    # --- graph building ---------------------------------------------------------
    def make_node(self, *inputs):
        if len(inputs) != len(self.input_types):
            raise ValueError(
                f"Expected {len(self.input_types)} input(s) for {self}, got {len(inputs)}"
            )
        inputs = [t.filter_variable(v) for v, t in zip(inputs, self.input_types)]
        return Apply(self, inputs, [t() for t in self.output_types])

    def connection_pattern(self, node):
        if self._connection_pattern is None:
            self._connection_pattern = io_connection_pattern(
                self._fgraph.inputs, self._fgraph.outputs
            )
        return [list(row) for row in self._connection_pattern]

    # --- execution ----------------------------------------------------------------
    def perform(self, node, inputs, output_storage):
        results = self.fn(*inputs)
        for cell, value in zip(output_storage, results):
            cell[0] = value

    def infer_shape(self, fgraph, node, input_shapes):
        """Output shapes from the inner ops' ``infer_shape``, in terms of the outer inputs."""
        inner = self._fgraph
        # The inner variables are not in the outer fgraph: its shape bookkeeping
        # does not apply to them.
        results = infer_shape(inner.outputs, inner.inputs, input_shapes)
        flat = [s for shp in results if shp is not None for s in shp if isinstance(s, Variable)]
        outer = clone_replace(flat, replace=dict(zip(inner.inputs, node.inputs))) if flat else []
        mapping = dict(zip(flat, outer))
        return [
            None if shp is None else tuple(mapping.get(s, s) if isinstance(s, Variable) else s for s in shp)
            for shp in results
        ]

    # --- gradients ------------------------------------------------------------------
    def _lop_builder(self, disconnected):
        """A function ``(*inputs, *outputs, *output_grads) -> input grads`` for one pattern."""
        cached = self._lop_cache.get(disconnected)
        if cached is not None:
            return cached
        from lucent.gradient import disconnected_type, grad

        override = self._pullback
        if isinstance(override, OpFromGraph):
            self._lop_cache[disconnected] = override
            return override
        inner_inputs = list(self._fgraph.inputs)
        inner_outputs = list(self._fgraph.outputs)
        n_in, n_out = len(inner_inputs), len(inner_outputs)
        out_placeholders = [t() for t in self.output_types]
        grad_placeholders = [
            disconnected_type() if d else t() for t, d in zip(self.output_types, disconnected)
        ]
        known = {
            out: g
            for out, g, d in zip(inner_outputs, grad_placeholders, disconnected)
            if not d
        }

        def default_grads(wrt):
            if not wrt:
                return []
            if not known:
                return [disconnected_type() for _ in wrt]
            return list(
                grad(
                    None,
                    wrt,
                    known_grads=known,
                    disconnected_inputs="ignore",
                    return_disconnected="disconnected",
                    null_gradients="return",
                )
            )

        args = (inner_inputs, out_placeholders, grad_placeholders)
        if override is None:
            input_grads = default_grads(inner_inputs)
        elif isinstance(override, list):
            if len(override) != n_in:
                raise ValueError(f"Need to override {n_in} gradients, got {len(override)}")
            defaults = iter(default_grads([v for v, o in zip(inner_inputs, override) if o is None]))
            input_grads = [self._override_entry(o, defaults, args) for o in override]
        else:
            input_grads = self._call_override(override, args, n_in, "pullback")

        connected = [g for g in input_grads if not _is_null_or_disconnected(g)]
        lop_op = OpFromGraph(
            inner_inputs + out_placeholders + [g for g in grad_placeholders if not _is_disconnected(g)],
            connected,
            inline=self.is_inline,
            name=None if self.name is None else f"{self.name}_LOp",
            on_unused_input="ignore",
        ) if connected else None

        def lop(*values):
            ins = values[:n_in]
            outs = values[n_in : n_in + n_out]
            grads = [g for g in values[n_in + n_out :] if not _is_disconnected(g)]
            results = iter(lop_op(*ins, *outs, *grads, return_list=True)) if lop_op is not None else iter(())
            return [g if _is_null_or_disconnected(g) else next(results) for g in input_grads]

        self._lop_cache[disconnected] = lop
        return lop

    @staticmethod
    def _override_entry(entry, defaults, args):
        if entry is None:
            return next(defaults)
        if isinstance(entry, Variable):
            if not _is_null_or_disconnected(entry):
                raise ValueError(
                    "An override list may only hold None, callables and NullType or "
                    f"DisconnectedType variables; got {entry} of type {entry.type}"
                )
            return entry
        if callable(entry):
            return entry(*args)
        raise ValueError(
            f"An override list should contain None, a Variable or a callable, got {type(entry).__name__}"
        )

    def _call_override(self, override, args, expected, kind):
        if not callable(override):
            raise TypeError(
                f"The {kind} override of {self} should be None, a list, an OpFromGraph or a "
                f"callable, got {type(override).__name__}"
            )
        results = override(*args)
        if not isinstance(results, list):
            raise TypeError(
                f"The {kind} override of {self} should return a list, got {type(results).__name__}"
            )
        if len(results) != expected:
            raise ValueError(
                f"The {kind} override of {self} should return a list of {expected} "
                f"variables, got {len(results)}"
            )
        return results

    def pullback(self, inputs, outputs, output_grads):
        """Gradients of the inputs given those of the outputs (vector-Jacobian product)."""
        disconnected = tuple(_is_disconnected(g) for g in output_grads)
        lop = self._lop_builder(disconnected)
        if isinstance(lop, OpFromGraph):
            return lop(*inputs, *outputs, *output_grads, return_list=True)
        return lop(*inputs, *outputs, *output_grads)

    def L_op(self, inputs, outputs, output_grads):
        return self.pullback(inputs, outputs, output_grads)

    def _rop_builder(self):
        if self._rop_cache is not None:
            return self._rop_cache
        from lucent.gradient import disconnected_type

        override = self._pushforward
        if isinstance(override, OpFromGraph):
            self._rop_cache = override
            return override
        inner_inputs = list(self._fgraph.inputs)
        inner_outputs = list(self._fgraph.outputs)
        n_out = len(inner_outputs)
        eval_points = [t() for t in self.input_types]
        args = (inner_inputs, eval_points)

        def default_tangents(outs):
            if not outs:
                return []
            from lucent.gradient import pushforward

            return list(
                pushforward(
                    list(outs),
                    inner_inputs,
                    eval_points,
                    disconnected_outputs="ignore",
                    return_disconnected="disconnected",
                    use_op_pushforward=True,
                )
            )

        if override is None:
            tangents = default_tangents(inner_outputs)
        elif isinstance(override, list):
            if len(override) != n_out:
                raise ValueError(f"Need to override {n_out} pushforward, got {len(override)}")
            defaults = iter(default_tangents([v for v, o in zip(inner_outputs, override) if o is None]))
            tangents = [self._override_entry(o, defaults, args) for o in override]
        else:
            tangents = self._call_override(override, args, n_out, "pushforward")
        connected = [t for t in tangents if not _is_null_or_disconnected(t)]
        rop_op = OpFromGraph(
            inner_inputs + eval_points,
            connected,
            inline=self.is_inline,
            name=None if self.name is None else f"{self.name}_rop",
            on_unused_input="ignore",
        ) if connected else None

        def rop(*values):
            results = iter(rop_op(*values, return_list=True)) if rop_op is not None else iter(())
            return [
                disconnected_type() if _is_disconnected(t) else (t if _is_null_or_disconnected(t) else next(results))
                for t in tangents
            ]

        self._rop_cache = rop
        return rop

    def pushforward(self, inputs, outputs, tangents):
        """Tangents of the outputs given those of the inputs (Jacobian-vector product)."""
        from lucent.gradient import disconnected_type

        rop = self._rop_builder()
        # A disconnected input tangent is a zero tangent for the inner graph.
        from lucent.tensor.basic import zeros_like

        tangents = [
            zeros_like(inp) if _is_disconnected(t) or t is None else t
            for inp, t in zip(inputs, tangents)
        ]
        if isinstance(rop, OpFromGraph):
            return rop(*inputs, *tangents, return_list=True)
        out = rop(*inputs, *tangents)
        return [disconnected_type() if r is None else r for r in out]

    def R_op(self, inputs, eval_points):
        outputs = self.make_node(*inputs).outputs
        result = self.pushforward(inputs, outputs, list(eval_points))
        return [None if _is_disconnected(r) else r for r in result]


class SymbolicOp(OpFromGraph):
    """An ``OpFromGraph`` whose graph a subclass builds from the input types.

    A subclass defines ``build_inner_graph(*inputs) -> list of outputs`` (and
    may declare ``__props__``, set as keyword arguments, and override
    ``filter_inputs`` to convert raw arguments). Calling the op builds, for
    the types of the given inputs, the op that computes that graph; an op
    built for other types is made anew. ``inline`` (class attribute) says
    whether compilation expands it. It prints like an ordinary op (its props,
    no inner graph unless asked with ``print_inner_graphs=True``).
    """

    inline = False
    #: ``debugprint(..., print_inner_graphs="auto")`` leaves the body out.
    print_inner_graph_by_default = False

    @staticmethod
    def filter_inputs(*inputs):
        return inputs

    def build_inner_graph(self, *inputs):
        raise NotImplementedError(
            f"{type(self).__name__} must define build_inner_graph(*inputs) returning its outputs"
        )

    def __init__(self, input_types=None, **kwargs):
        for prop in getattr(type(self), "__props__", ()):
            if prop in kwargs:
                setattr(self, prop, kwargs.pop(prop))
        self._init_kwargs = kwargs
        if input_types is not None:
            kwargs.setdefault("inline", type(self).inline)
            kwargs.setdefault("strict", True)
            dummies = [t() for t in input_types]
            outputs = self.build_inner_graph(*dummies)
            super().__init__(dummies, list(outputs), **kwargs)

    def __call__(self, *inputs, **kwargs):
        inputs = self.filter_inputs(*inputs)
        types = tuple(v.type for v in inputs)
        if "_fgraph" in self.__dict__ and types == tuple(self.input_types):
            return super().__call__(*inputs, **kwargs)
        init_kwargs = dict(self._init_kwargs)
        for prop in getattr(type(self), "__props__", ()):
            init_kwargs[prop] = getattr(self, prop)
        op = type(self)(input_types=list(types), **init_kwargs)
        return OpFromGraph.__call__(op, *inputs, **kwargs)

    def __str__(self):
        return Op.__str__(self)

    def __eq__(self, other):
        return OpFromGraph.__eq__(self, other) and self._props() == other._props()

    def __hash__(self):
        return hash((OpFromGraph.__hash__(self), self._props()))


# ---------------------------------------------------------------------------
# inline=True: expand the inner graph into the outer one
# ---------------------------------------------------------------------------
@node_rewriter([OpFromGraph])
def inline_ofg_expansion(fgraph, node):
    """Replace an ``OpFromGraph(inline=True)`` node by a copy of its inner graph."""
    op = node.op
    if not op.is_inline:
        return False
    return clone_replace(op.inner_outputs, replace=dict(zip(op.inner_inputs, node.inputs)))


optdb.register(
    "inline_ofg_expansion",
    in2out(inline_ofg_expansion, name="inline_ofg_expansion"),
    "fast_compile",
    "fast_run",
    position=0.5,
)


# Registers ``ofg_inner_graph`` (it needs ``OpFromGraph`` defined above).
from lucent.compile import builders_rewriting  # noqa: E402,F401

__all__ = [
    "OpFromGraph",
    "SymbolicOp",
    "construct_nominal_fgraph",
    "graph_key",
    "infer_shape",
    "inline_ofg_expansion",
]
