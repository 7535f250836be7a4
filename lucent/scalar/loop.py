"""``ScalarLoop``: a scalar op that iterates a small scalar graph.

Some derivatives of special functions (the incomplete gamma and beta
functions with respect to their parameters, ``hyp2f1`` with respect to
``a, b, c``) are series summed until the terms stop mattering. Written as a
``ScalarLoop`` such a series stays an ordinary scalar op: ``Elemwise`` maps
it over arrays, fusion and the Numba backend see it like any other element
body, and no per-element Python call is needed on the fast path.

The op holds an inner graph from ``(*init, *constant)`` to ``(*update,
[until])``. Applied to ``(n_steps, *init_values, *constant_values)`` it
computes::

    carry = init_values
    until = False
    for i in range(n_steps):
        carry[, until] = inner(*carry, *constant_values)
        if until: break          # only with an until condition
    return (*carry[, until])

A loop without an until condition refuses a negative ``n_steps`` (it has no
other way to stop); with one, ``n_steps <= 0`` just skips the loop and
reports ``until=False``.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.scalar.basic import ScalarOp, ScalarType, as_scalar
from lucent.scalar.composite import _check_scalar_graph as check_scalar_graph
from lucent.scalar.composite import eval_node


class ScalarLoop(ScalarOp):
    """Run the scalar graph ``init, constant -> update[, until]`` ``n_steps`` times.

    Parameters
    ----------
    init
        Scalar variables without owner holding the loop state; the op's
        inputs after ``n_steps`` start with their initial values.
    update
        One scalar variable per ``init``, of the same type: the next state.
    constant
        Scalar variables without owner read (not changed) by every step.
    until
        A boolean scalar computed from the state; the loop stops after the
        first step where it is true, and it becomes the op's last output.
    """

    __props__ = ()

    def __init__(self, init, update, constant=None, until=None, name="ScalarLoop", **kwargs):
        from lucent.graph.fg import FrozenFunctionGraph

        init = list(init)
        update = list(update)
        constant = list(constant or [])
        if len(init) != len(update):
            raise ValueError("An update must be given for each init variable")
        self.is_while = until is not None
        inputs = [*init, *constant]
        outputs = [*update, until] if self.is_while else update
        _check_scalar_graph(inputs, outputs)
        self.fgraph = FrozenFunctionGraph.from_io(inputs, outputs, dedup_nodes=True)
        self.inputs = list(self.fgraph.inputs)
        self.outputs = list(self.fgraph.outputs)
        self._validate_updates(init, update, until)
        self.inputs_type = tuple(v.type for v in self.inputs)
        self.outputs_type = tuple(v.type for v in self.outputs)
        self.n_update = len(update)
        self.nin = len(self.inputs) + 1  # n_steps comes first
        self.nout = len(self.outputs)
        self.name = name
        self.nodes = list(self.fgraph.toposort())

    @staticmethod
    def _validate_updates(init, update, until):
        if until is not None and until.type.dtype != "bool":
            raise TypeError(f"Until condition must be boolean, got {until}({until.type.dtype})")
        for i, u in zip(init, update):
            if i.type != u.type:
                raise TypeError(f"Init and update types must be the same: {i}({i.type}) != {u}({u.type})")
        if set(init) & set(update):
            raise ValueError(
                "Some inputs and outputs are the same variable. If you want to return an "
                "output as a lagged input, wrap it in an identity Op."
            )

    # --- identity: by inner graph (frozen graphs compare by content) -----------
    def __eq__(self, other):
        return (
            type(self) is type(other)
            and self.is_while == other.is_while
            and self.fgraph == other.fgraph
        )

    def __hash__(self):
        return hash((type(self), self.is_while, self.fgraph))

    def __str__(self):
        return self.name

    def clone(self, name=None, **kwargs):
        return self  # immutable

    @property
    def fn(self):
        raise NotImplementedError("ScalarLoop has no compiled Python function; use perform or a backend")

    # --- graph building -----------------------------------------------------
    def output_types(self, types):
        return list(self.outputs_type)

    def make_node(self, n_steps, *inputs):
        if len(inputs) != self.nin - 1:
            raise TypeError(f"{self} takes n_steps and {self.nin - 1} inputs, got {len(inputs)}")
        n_steps = as_scalar(n_steps)
        if not n_steps.type.dtype.startswith("int"):
            raise TypeError(
                "The first variable of ScalarLoop (n_steps) must be of integer type. "
                f"Got {n_steps.type.dtype}"
            )
        inputs = [as_scalar(i) for i in inputs]
        if tuple(i.type for i in inputs) == self.inputs_type:
            return Apply(self, [n_steps, *inputs], [t() for t in self.outputs_type])
        # Other input dtypes: rebuild the inner graph on inputs of those
        # types (each inner op infers its output type again); the loop is
        # only valid if every update keeps its init's new type.
        fresh = [i.type() for i in inputs]
        new_outputs = _rebuild(self.fgraph, fresh)
        n = self.n_update
        until = new_outputs[n] if self.is_while else None
        op = type(self)(
            init=fresh[:n], update=new_outputs[:n], constant=fresh[n:], until=until, name=self.name
        )
        return op.make_node(n_steps, *inputs)

    # --- evaluation -----------------------------------------------------------
    def _step(self, values):
        """One pass of the inner graph on NumPy values (scalars or arrays)."""
        env = dict(zip(self.inputs, values))
        for node in self.nodes:
            res = eval_node(node, [env[v] if v in env else v.data for v in node.inputs])
            for out, r in zip(node.outputs, res):
                env[out] = np.asarray(r).astype(out.type.numpy_dtype, copy=False)
        return [
            np.asarray(env[o] if o in env else o.data).astype(o.type.numpy_dtype, copy=False)
            for o in self.outputs
        ]

    def impl(self, n_steps, *args):
        """The loop on NumPy values; arrays run element-wise (each its own ``n_steps``).

        On arrays all elements step together; an element whose ``n_steps``
        is reached (or whose until condition held) keeps its state.
        """
        n = self.n_update
        steps = np.asarray(n_steps)
        if not self.is_while and np.any(steps < 0):
            raise ValueError("ScalarLoop does not have a termination condition.")
        shape = np.broadcast_shapes(steps.shape, *(np.shape(a) for a in args))
        carry = [
            np.array(np.broadcast_to(np.asarray(a, dtype=t.numpy_dtype), shape))
            for a, t in zip(args[:n], self.inputs_type)
        ]
        const = [np.asarray(a, dtype=t.numpy_dtype) for a, t in zip(args[n:], self.inputs_type[n:])]
        done = np.zeros(shape, dtype=bool)
        if shape == ():
            for _ in range(int(steps)):
                new = self._step([*carry, *const])
                carry = new[:n]
                if self.is_while and new[n]:
                    done = np.True_
                    break
        else:
            steps = np.broadcast_to(steps, shape)
            total = int(steps.max()) if steps.size else 0
            for i in range(total):
                active = (steps > i) & ~done
                if not active.any():
                    break
                new = self._step([*carry, *const])
                for c, v in zip(carry, new[:n]):
                    np.copyto(c, v, where=active, casting="unsafe")
                if self.is_while:
                    done |= active & np.broadcast_to(new[n], shape)
        results = [c[()] if shape == () else c for c in carry]
        if self.is_while:
            results.append(np.bool_(done) if shape == () else done)
        return results[0] if self.nout == 1 else tuple(results)

    def perform(self, node, inputs, output_storage):
        results = self.impl(*inputs)
        if self.nout == 1:
            results = (results,)
        for storage, out, value in zip(output_storage, node.outputs, results):
            storage[0] = out.type.numpy_dtype.type(value)


def _check_scalar_graph(inputs, outputs):
    for v in [*inputs, *outputs]:
        if not isinstance(getattr(v, "type", None), ScalarType):
            raise TypeError(
                "The fgraph of ScalarLoop must be exclusively composed of scalar operations; "
                f"{v} has type {getattr(v, 'type', None)}"
            )
    for v in inputs:
        if v.owner is not None:
            raise TypeError(f"ScalarLoop init and constant variables must have no owner, got {v}")
    check_scalar_graph(inputs, outputs, "ScalarLoop")


def _rebuild(fgraph, new_inputs):
    """The outputs of frozen ``fgraph`` recomputed from ``new_inputs`` with types re-inferred."""
    memo = dict(zip(fgraph.inputs, new_inputs))
    for node in fgraph.toposort():
        new = node.op.make_node(*[memo.get(v, v) for v in node.inputs])
        memo.update(zip(node.outputs, new.outputs))
    return [memo[o] if o in memo else o for o in fgraph.outputs]


__all__ = ["ScalarLoop"]
