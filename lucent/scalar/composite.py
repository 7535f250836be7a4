"""``Composite``: a small scalar graph packaged as one scalar op.

Fusion (``lucent.tensor.rewriting.elemwise``) turns a connected group of
element-wise nodes into a single ``Elemwise(Composite(...))`` node. The
composite holds the *scalar* version of the group: scalar inputs ``i0,
i1, ...``, the scalar ops that combine them, scalar constants inlined, and
one or more outputs. Having the whole expression in one op is what lets a
backend emit one loop without intermediate arrays (the Numba path walks
``Composite.inputs`` / ``outputs`` / ``nodes``); the reference path simply
evaluates the inner ops one after the other on whole arrays.

Three properties matter:

* **same values as unfused**: ``impl`` runs each inner op exactly as
  ``Elemwise.perform`` would (same NumPy function, same input casts for ops
  that compute in their output dtype, result cast to the inner output
  dtype), so a fused graph gives bit-identical results on this path;
* **value semantics**: two composites are equal (and hash equally) when
  their inner graphs have the same structure - same ops, same wiring, same
  input dtypes, same constants - regardless of variable identities. That
  lets the merge rewrite combine equal fused nodes and lets compiled
  kernels be cached by content;
* **flat**: a composite built from a graph that contains composites inlines
  their inner graphs, so fused nodes never nest.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply, Constant
from lucent.graph.traversal import io_toposort
from lucent.scalar.basic import ScalarConstant, ScalarOp, ScalarType, constant

# Ops printed as infix operators in ``str(composite)``.
_INFIX = {
    "add": "+", "sub": "-", "mul": "*", "true_div": "/", "int_div": "//",
    "mod": "%", "pow": "**", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "eq": "==", "neq": "!=", "and_": "&", "or_": "|", "xor": "^",
}


class Composite(ScalarOp):
    """A scalar op defined by a scalar graph from ``inputs`` to ``outputs``.

    Parameters
    ----------
    inputs
        Scalar variables without owner (the composite's inputs, in order).
    outputs
        Scalar variables computed from ``inputs`` and constants only.

    The graph is copied, so later changes to the given variables do not
    affect the op; the copy is exposed as ``inputs``, ``outputs`` and
    ``nodes`` (inner Apply nodes in an executable order).
    """

    __props__ = ()

    def __init__(self, inputs, outputs, name=None):
        inputs = list(inputs)
        outputs = list(outputs)
        for v in inputs:
            if not isinstance(getattr(v, "type", None), ScalarType) or v.owner is not None:
                raise TypeError(
                    f"Composite inputs must be scalar variables without owner, got {v!r}"
                )
        if not outputs:
            raise ValueError("A Composite needs at least one output")
        _check_scalar_graph(inputs, outputs)
        if len(set(inputs)) != len(inputs):
            raise ValueError("A Composite cannot list the same input variable twice")
        self.inputs, self.outputs = _copy_flat(inputs, outputs)
        self.nodes = io_toposort(self.inputs, self.outputs)
        self.nin = len(self.inputs)
        self.nout = len(self.outputs)
        self._key = _structure_key(self.inputs, self.outputs, self.nodes)
        self._hash = hash(self._key)
        self._name = name
        self._fgraph = None
        self.name = name or self._describe()

    # --- identity ----------------------------------------------------------
    def __eq__(self, other):
        return type(self) is type(other) and self._key == other._key

    def __hash__(self):
        return self._hash

    def __str__(self):
        return self.name

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_fgraph"] = None
        return state

    @property
    def fgraph(self):
        """The inner graph as a FunctionGraph (built on first use; not cloned)."""
        if self._fgraph is None:
            from lucent.graph.fg import FunctionGraph

            self._fgraph = FunctionGraph(self.inputs, self.outputs, clone=False)
        return self._fgraph

    def _describe(self):
        """``Composite{exp(-sqr(i0))}``; subexpressions used twice get names ``t0, t1, ...``."""
        return "Composite{" + self.formula() + "}"

    def formula(self, input_names=None):
        """The scalar expression as text, ``exp(-sqr(i0))``, inputs named ``input_names`` (default ``i0, i1, ...``).

        Views name the inputs after the variables they read, so a fused
        loop reads as the formula the user wrote.
        """
        if input_names is not None and len(input_names) != len(self.inputs):
            raise ValueError(
                f"formula needs one name per input: {len(self.inputs)} inputs, got {len(input_names)} names"
            )
        uses = {}
        for node in self.nodes:
            for v in node.inputs:
                uses[v] = uses.get(v, 0) + 1
        for v in self.outputs:
            uses[v] = uses.get(v, 0) + 1
        text = {v: (f"i{k}" if input_names is None else str(input_names[k])) for k, v in enumerate(self.inputs)}
        lets = []
        for node in self.nodes:
            args = [_text_of(v, text) for v in node.inputs]
            expr = _format_call(node.op, args)
            if len(node.outputs) > 1:
                name = f"t{len(lets)}"
                lets.append(f"{name}={expr}")
                for j, o in enumerate(node.outputs):
                    text[o] = f"{name}[{j}]"
                continue
            out = node.outputs[0]
            if uses.get(out, 0) > 1:
                name = f"t{len(lets)}"
                lets.append(f"{name}={expr}")
                text[out] = name
            else:
                text[out] = expr
        body = ", ".join(_strip_parens(_text_of(o, text)) for o in self.outputs)
        return "; ".join(lets + [body])

    # --- types ---------------------------------------------------------------
    def output_types(self, types):
        if len(types) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, got {len(types)}")
        for k, (t, inner) in enumerate(zip(types, self.inputs)):
            if t != inner.type:
                raise TypeError(
                    f"{self}: input i{k} must have dtype {inner.type.dtype}, got {t}; "
                    "a Composite is built for fixed input dtypes"
                )
        return [o.type for o in self.outputs]

    def make_node(self, *inputs):
        from lucent.scalar.basic import as_scalar

        inputs = [as_scalar(i) for i in inputs]
        if len(inputs) == self.nin and any(i.type != v.type for i, v in zip(inputs, self.inputs)):
            # Other input dtypes: the same expression rebuilt on inputs of
            # those types (each inner op infers its output type again).
            fresh = [i.type() for i in inputs]
            return Composite(fresh, _inline(self, fresh), name=self._name).make_node(*inputs)
        outputs = [t() for t in self.output_types([i.type for i in inputs])]
        return Apply(self, inputs, outputs)

    # --- evaluation ------------------------------------------------------------
    def impl(self, *args):
        """Evaluate the inner graph on NumPy values (scalars or whole arrays).

        Each inner op sees exactly what ``Elemwise.perform`` would give it,
        so the values equal those of the unfused graph.
        """
        values = dict(zip(self.inputs, args))
        for node in self.nodes:
            res = eval_node(node, [_value(v, values) for v in node.inputs])
            for out, r in zip(node.outputs, res):
                values[out] = _as_dtype(r, out.type.numpy_dtype)
        results = tuple(_value(o, values) for o in self.outputs)
        return results[0] if self.nout == 1 else results

    def impl_into(self, args, out):
        """Evaluate a one-output composite, its last op writing into ``out``.

        Every other inner op has run (into temporaries) before the last one
        writes, so ``out`` may be the buffer of one of ``args``. Returns
        False, having written nothing, when the last op cannot write into a
        given array; the caller then uses ``impl``.
        """
        last = self.nodes[-1] if self.nodes else None
        if self.nout != 1 or last is None or last.outputs != [self.outputs[0]]:
            return False
        if _ufunc_of(last.op, len(last.inputs)) is None:
            return False
        values = dict(zip(self.inputs, args))
        for node in self.nodes[:-1]:
            res = eval_node(node, [_value(v, values) for v in node.inputs])
            for o, r in zip(node.outputs, res):
                values[o] = _as_dtype(r, o.type.numpy_dtype)
        return call_into(last.op, [_value(v, values) for v in last.inputs], out)

    def perform(self, node, inputs, output_storage):
        with np.errstate(all="ignore"):
            results = self.impl(*inputs)
        if self.nout == 1:
            results = (results,)
        for storage, out, value in zip(output_storage, node.outputs, results):
            storage[0] = out.type.numpy_dtype.type(value)

    # --- gradient ---------------------------------------------------------------
    def L_op(self, inputs, outputs, output_grads):
        """Reverse mode through the inner graph, rebuilt on ``inputs``."""
        memo = dict(zip(self.inputs, inputs))
        for node in self.nodes:
            new = node.op.make_node(*[memo.get(v, v) for v in node.inputs])
            memo.update(zip(node.outputs, new.outputs))
        for inner, outer in zip(self.outputs, outputs):
            if inner.owner is not None:
                memo[inner] = outer
        grads = {}
        for inner, g in zip(self.outputs, output_grads):
            _accumulate(grads, memo.get(inner, inner), g)
        for node in reversed(self.nodes):
            outs = [memo[o] for o in node.outputs]
            if not any(o in grads for o in outs):
                continue
            gouts = [grads.get(o) if o in grads else _zero(o) for o in outs]
            ins = [memo.get(v, v) for v in node.inputs]
            for v, g in zip(ins, node.op.L_op(ins, outs, gouts)):
                if not isinstance(v, Constant):
                    _accumulate(grads, v, g)
        return [grads[x] if x in grads else _zero(x) for x in inputs]


def eval_node(node, ins):
    """The outputs (a tuple) of inner scalar ``node`` on NumPy values, as ``Elemwise.perform`` computes them.

    An op that only defines ``perform`` (no array ``impl``) is run element by element.
    """
    op = node.op
    if op.compute_in_output_dtype:
        dtype = node.outputs[0].type.numpy_dtype
        ins = [_as_dtype(a, dtype) for a in ins]
    if type(op).impl is ScalarOp.impl and type(op).perform is not ScalarOp.perform:
        return _perform_elementwise(node, ins)
    with np.errstate(all="ignore"):
        res = op.impl(*ins)
    return (res,) if op.nout == 1 else tuple(res)


def _perform_elementwise(node, ins):
    def one(*values):
        storage = [[None] for _ in node.outputs]
        node.op.perform(node, list(values), storage)
        return tuple(s[0] for s in storage)

    arrays = [np.asarray(a) for a in ins]
    if all(a.ndim == 0 for a in arrays):
        return one(*[a[()] for a in arrays])
    results = np.vectorize(one, otypes=[o.type.dtype for o in node.outputs])(*arrays)
    return results if len(node.outputs) > 1 else (results,)


def _ufunc_of(op, nargs):
    """The NumPy ufunc that *is* ``op``'s ``impl`` on ``nargs`` inputs, or None."""
    from lucent.scalar import arith, math as smath

    binary = {
        arith.Add: np.add, arith.Mul: np.multiply, arith.Sub: np.subtract,
        arith.TrueDiv: np.true_divide, arith.Pow: np.power,
        arith.Maximum: np.maximum, arith.Minimum: np.minimum,
    }
    if type(op) in binary:
        return binary[type(op)] if nargs == 2 else None
    ufunc = getattr(type(op), "ufunc", None)
    if not isinstance(ufunc, np.ufunc) or ufunc.nin != nargs or ufunc.nout != 1:
        return None
    # Only classes whose impl is exactly "call the ufunc".
    plain = (smath.FloatUnaryOp.impl, arith._NumpyComparison.impl, smath._Piecewise.impl)
    return ufunc if type(op).impl in plain else None


def call_into(op, args, out):
    """Compute scalar op ``op`` on arrays ``args`` directly into ``out``.

    Used by in-place element-wise nodes so the result is written with the
    ufunc's ``out=`` rather than through a temporary. Only for floating
    point and complex results, whose loops cannot fail half-way; returns
    False (nothing written) when ``op`` is not a plain ufunc or a composite
    ending in one.
    """
    if out.dtype.kind not in "fc":
        return False
    if isinstance(op, Composite):
        return op.impl_into(args, out)
    ufunc = _ufunc_of(op, len(args))
    if ufunc is None:
        return False
    if op.compute_in_output_dtype:
        args = [_as_dtype(a, out.dtype) for a in args]
    with np.errstate(all="ignore"):
        ufunc(*args, out=out, casting="unsafe")
    return True


def _check_scalar_graph(inputs, outputs, who="Composite"):
    """Every variable of an inner graph must be a scalar and every op a scalar op."""
    for v in outputs:
        if not isinstance(getattr(v, "type", None), ScalarType):
            raise TypeError(
                f"The fgraph of {who} must be exclusively composed of scalar operations; "
                f"the output {v} has type {getattr(v, 'type', None)}"
            )
    for node in io_toposort(list(inputs), list(outputs)):
        if not isinstance(node.op, ScalarOp) or not all(
            isinstance(o.type, ScalarType) for o in [*node.inputs, *node.outputs]
        ):
            raise TypeError(
                f"The fgraph of {who} must be exclusively composed of scalar operations; found {node.op}"
            )


def _copy_flat(inputs, outputs):
    """Fresh copies of the graph, with nested composites inlined."""
    memo = {v: v.type() for v in inputs}
    for node in io_toposort(inputs, outputs):
        for v in node.inputs:
            if v not in memo:
                if not isinstance(v, Constant):
                    raise ValueError(
                        f"Composite: {v} is needed to compute the outputs but is not one "
                        "of the given inputs"
                    )
                memo[v] = constant(v.data, dtype=v.type.dtype)
        ins = [memo[v] for v in node.inputs]
        if isinstance(node.op, Composite):
            outs = _inline(node.op, ins)
        else:
            outs = node.op.make_node(*ins).outputs
        memo.update(zip(node.outputs, outs))
    new_outputs = []
    for o in outputs:
        if o not in memo:
            if not isinstance(o, Constant):
                raise ValueError(f"Composite: the output {o} does not depend on the inputs")
            memo[o] = constant(o.data, dtype=o.type.dtype)
        new_outputs.append(memo[o])
    return [memo[v] for v in inputs], new_outputs


def _inline(comp, ins):
    memo = dict(zip(comp.inputs, ins))
    for node in comp.nodes:
        new = node.op.make_node(*[memo.get(v, v) for v in node.inputs])
        memo.update(zip(node.outputs, new.outputs))
    return [memo.get(o, o) for o in comp.outputs]


def _const_key(c):
    data = np.asarray(c.data)
    return ("c", data.dtype.str, data.tobytes())


def _structure_key(inputs, outputs, nodes):
    ref = {v: ("i", k) for k, v in enumerate(inputs)}
    items = []
    for n, node in enumerate(nodes):
        args = tuple(ref[v] if v in ref else _const_key(v) for v in node.inputs)
        items.append((node.op, args))
        for j, o in enumerate(node.outputs):
            ref[o] = ("n", n, j)
    outs = tuple(ref[o] if o in ref else _const_key(o) for o in outputs)
    return (tuple(v.type.dtype for v in inputs), tuple(items), outs)


def _value(v, values):
    if v in values:
        return values[v]
    if isinstance(v, Constant):
        return v.data
    raise KeyError(f"Composite: no value for {v}")  # pragma: no cover


def _as_dtype(a, dtype):
    if getattr(a, "dtype", None) == dtype:
        return a
    return np.asarray(a).astype(dtype)


def _accumulate(grads, var, g):
    if g is None:
        return
    if var in grads and isinstance(getattr(g, "type", None), ScalarType):
        from lucent.scalar.basic import add

        grads[var] = add(grads[var], g)
    else:
        grads.setdefault(var, g)


def _zero(v):
    from lucent.configdefaults import config

    dtype = v.type.dtype if v.type.dtype.startswith(("float", "complex")) else config.floatX
    return constant(np.zeros((), dtype=dtype))


def _text_of(v, text):
    if v in text:
        return text[v]
    if isinstance(v, ScalarConstant):
        data = np.asarray(v.data)
        return str(data.item())
    return str(v)


def _format_call(op, args):
    name = getattr(op, "name", None)
    if name == "neg" and len(args) == 1:
        return f"-{args[0]}"
    sym = _INFIX.get(name)
    if sym is not None and len(args) >= 2:
        return "(" + f" {sym} ".join(args) + ")"
    return f"{op}({', '.join(_strip_parens(a) for a in args)})"


def _strip_parens(text):
    """``(a + b)`` -> ``a + b`` when the outer parentheses enclose everything."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for k, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and k < len(text) - 1:
            return text
    return text[1:-1]


__all__ = ["Composite", "call_into"]
