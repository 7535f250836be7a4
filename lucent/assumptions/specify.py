"""``assume(x, diagonal=True, ...)``: state structural facts about a tensor in the graph.

The facts travel as an op, ``SpecifyAssumptions``, whose output is ``x``
itself (a view, no computation) and whose props are the facts. Keeping
them in the graph rather than on the variable means they survive cloning,
pickling and compilation like any other node, and two identical
declarations merge. Before the rewrites run, they are read into the
graph's ``AssumptionFeature`` and the node is removed (see
``lucent.tensor.rewriting.assumptions``), so it never blocks a pattern.
"""

from __future__ import annotations

from lucent.assumptions.core import ALL_KEYS, FactState, register_assumption
from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable

_KEY_NAMES = tuple(key.name for key in ALL_KEYS)


class SpecifyAssumptions(Op):
    """Identity op declaring facts: ``assumptions`` is a sorted tuple of ``(name, FactState)``."""

    __props__ = ("assumptions",)
    view_map = {0: [0]}

    def __init__(self, assumptions):
        if not isinstance(assumptions, dict):
            raise TypeError(
                f"SpecifyAssumptions expects a dict {{name: FactState}}, got {type(assumptions).__name__}"
            )
        facts = []
        for name, state in sorted(assumptions.items()):
            if name not in _KEY_NAMES:
                raise ValueError(f"SpecifyAssumptions: unknown assumption {name!r}; known: {list(_KEY_NAMES)}")
            state = FactState(state)
            if state not in (FactState.TRUE, FactState.FALSE):
                raise ValueError(f"SpecifyAssumptions: {name} must be TRUE or FALSE, got {state!r}")
            facts.append((name, state))
        self.assumptions = tuple(facts)

    def __str__(self):
        facts = ", ".join(name if state is FactState.TRUE else f"!{name}" for name, state in self.assumptions)
        return f"{type(self).__name__}{{{facts}}}"

    def make_node(self, x):
        if not isinstance(x, Variable):
            x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):
        return list(output_grads)

    def R_op(self, inputs, eval_points):
        return list(eval_points)


def specify_assumption_rule(key, op, feature, fgraph, node, input_states):
    """The declared state joined with what the input already is (a contradiction is a CONFLICT)."""
    for name, state in op.assumptions:
        if name == key.name:
            return [FactState.join(state, input_states[0])]
    return [input_states[0]]


for _key in ALL_KEYS:
    register_assumption(_key, SpecifyAssumptions)(specify_assumption_rule)


def assume(
    x,
    diagonal=None,
    lower_triangular=None,
    upper_triangular=None,
    symmetric=None,
    positive_definite=None,
    orthogonal=None,
    selection=None,
    permutation=None,
    unique_indices=None,
):
    """``x`` with structural facts attached: each keyword True (holds), False (does not) or None.

    The facts are the caller's promise: nothing checks them at run time,
    and rewrites use them to pick cheaper computations (``inv`` of a
    diagonal matrix becomes an element-wise reciprocal). Implied facts
    follow (diagonal implies symmetric and triangular; positive definite
    implies symmetric; a permutation matrix is an orthogonal selection).
    ``unique_indices`` says that an index vector holds no repeated
    position. With no fact given, ``x`` is returned unchanged.
    """
    given = {
        "diagonal": diagonal,
        "lower_triangular": lower_triangular,
        "upper_triangular": upper_triangular,
        "symmetric": symmetric,
        "positive_definite": positive_definite,
        "orthogonal": orthogonal,
        "selection": selection,
        "permutation": permutation,
        "unique_indices": unique_indices,
    }
    if not isinstance(x, Variable):
        x = as_tensor_variable(x)
    facts = {name: FactState.TRUE if value else FactState.FALSE for name, value in given.items() if value is not None}
    if not facts:
        return x
    return SpecifyAssumptions(facts)(x)


__all__ = ["SpecifyAssumptions", "assume", "specify_assumption_rule"]
