"""Facts about the structure of tensors, and how they are inferred through a graph.

A rewrite that turns ``inv(D)`` into ``1 / D`` is only valid when ``D`` is
diagonal. Such structural facts ("diagonal", "symmetric", "positive
definite", ...) are named by an :class:`AssumptionKey`; the user states
them with ``assume(x, diagonal=True)`` (see ``specify``), and the rules
registered per op class say how they travel from inputs to outputs (the
transpose of a symmetric matrix is symmetric, a Cholesky factor is lower
triangular, ...).

Knowledge is three-valued (:class:`FactState`): TRUE, FALSE, or UNKNOWN;
evidence for both TRUE and FALSE is a CONFLICT, reported as
:class:`ConflictingAssumptionsError` rather than silently picking one.
Some facts imply others (``IMPLIES``: diagonal implies symmetric and both
triangular shapes); the implication is used both forward (a stronger TRUE
fact makes the weaker one TRUE) and backward (a weaker FALSE fact makes
the stronger one FALSE).

:class:`AssumptionFeature` is a ``FunctionGraph`` feature that computes
facts on demand and caches them; when a rewrite replaces a variable, the
facts known about the old one carry over to its replacement, and cached
"unknown" answers below the change are forgotten so they are asked again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntFlag

from lucent.graph.features import AlreadyThere, Feature
from lucent.tensor.variable import TensorConstant


class FactState(IntFlag):
    """What is known about one fact of one variable.

    The states are bit flags so that combining two pieces of evidence is a
    bitwise or: UNKNOWN (no bits) | TRUE = TRUE, TRUE | FALSE = CONFLICT.
    A FactState has no truth value on purpose: ``if state:`` would read
    FALSE and UNKNOWN alike, so comparisons must be explicit.
    """

    UNKNOWN = 0
    TRUE = 1
    FALSE = 2
    CONFLICT = 3

    def __bool__(self):
        raise TypeError(
            "FactState has no boolean value; compare it with FactState.TRUE, FactState.FALSE or "
            "FactState.UNKNOWN explicitly, or use AssumptionFeature.check()"
        )

    @classmethod
    def join(cls, left, right):
        """Combine two pieces of evidence about the same fact of the same variable."""
        return cls(int(left) | int(right))


@dataclass(frozen=True)
class AssumptionKey:
    """The name of one structural property; ``short_name`` is its label in ``debugprint``."""

    name: str
    short_name: str = ""

    def __repr__(self):
        return self.name


class ConflictingAssumptionsError(ValueError):
    """The evidence about a fact of a variable is both TRUE and FALSE."""


#: ``(key, op class) -> [rule, ...]``. A rule is called as
#: ``rule(key, op, feature, fgraph, node, input_states)`` and returns one
#: FactState per output of ``node``; the first rule giving any non-UNKNOWN
#: state decides.
ASSUMPTION_INFER_REGISTRY: dict = {}

#: ``stronger key -> [weaker keys]``: a TRUE stronger fact makes each weaker one TRUE.
IMPLIES: dict = {}

#: ``key -> fn(constant) -> FactState``: reads a fact off the data of a constant.
CONSTANT_INFER_REGISTRY: dict = {}

InferFactFn = Callable


def register_implies(stronger, *weaker):
    """Declare that ``stronger`` being TRUE makes each of ``weaker`` TRUE."""
    IMPLIES.setdefault(stronger, []).extend(weaker)


def register_constant_inference(key, fn):
    """Use ``fn(constant)`` to decide ``key`` for constants (variables without owner)."""
    CONSTANT_INFER_REGISTRY[key] = fn


def register_assumption(key, *op_types):
    """Decorator registering an inference rule for ``key`` on outputs of ``op_types``."""
    if not isinstance(key, AssumptionKey):
        raise TypeError(f"register_assumption expects an AssumptionKey, got {key!r}")

    def decorator(fn):
        for op_type in op_types:
            ASSUMPTION_INFER_REGISTRY.setdefault((key, op_type), []).append(fn)
        return fn

    return decorator


DIAGONAL = AssumptionKey("diagonal", "diag")
LOWER_TRIANGULAR = AssumptionKey("lower_triangular", "tril")
UPPER_TRIANGULAR = AssumptionKey("upper_triangular", "triu")
SYMMETRIC = AssumptionKey("symmetric", "sym")
POSITIVE_DEFINITE = AssumptionKey("positive_definite", "pd")
ORTHOGONAL = AssumptionKey("orthogonal", "orth")
SELECTION = AssumptionKey("selection", "sel")
PERMUTATION = AssumptionKey("permutation", "perm")
UNIQUE_INDICES = AssumptionKey("unique_indices", "uniq")

#: The properties of matrices, in the order they are printed.
MATRIX_KEYS = (
    DIAGONAL,
    LOWER_TRIANGULAR,
    UPPER_TRIANGULAR,
    SYMMETRIC,
    POSITIVE_DEFINITE,
    ORTHOGONAL,
    SELECTION,
    PERMUTATION,
)
ALL_KEYS = (*MATRIX_KEYS, UNIQUE_INDICES)

register_implies(DIAGONAL, LOWER_TRIANGULAR, UPPER_TRIANGULAR, SYMMETRIC)
register_implies(POSITIVE_DEFINITE, SYMMETRIC)
register_implies(PERMUTATION, SELECTION, ORTHOGONAL)


def infer_assumption_for_node(key, op, feature, fgraph, node, input_states):
    """The states of ``key`` for every output of ``node``, from the rules of the op's class.

    The most specific class in the op's MRO that has rules for ``key`` is
    used; its rules are tried in registration order.
    """
    rules = ()
    for klass in type(op).__mro__:
        found = ASSUMPTION_INFER_REGISTRY.get((key, klass))
        if found is not None:
            rules = found
            break
    n_out = len(node.outputs)
    for rule in rules:
        states = rule(key, op, feature, fgraph, node, input_states)
        if len(states) != n_out:
            raise ValueError(
                f"an assumption rule for {key!r} returned {len(states)} states for the "
                f"{n_out} outputs of node {node!r}"
            )
        if any(s is not FactState.UNKNOWN for s in states):
            return list(states)
    return [FactState.UNKNOWN] * n_out


class AssumptionFeature(Feature):
    """Computes and caches ``(variable, key) -> FactState`` for the graph it is attached to.

    Facts are derived inputs-first (so a deep graph needs no recursion) and
    cached. On ``on_change_input`` (a rewrite replaced ``old`` by ``new``),
    what was known about ``old`` is joined into ``new``; the UNKNOWN answers
    cached downstream are dropped lazily, at the next query, since the new
    input may now allow a definite answer.
    """

    def on_attach(self, fgraph):
        if getattr(fgraph, "assumption_feature", None) is not None:
            raise AlreadyThere("an AssumptionFeature is already attached to this graph")
        self.fgraph = fgraph
        self.cache = {}
        self._var_to_keys = {}
        self._stale_vars = set()
        fgraph.assumption_feature = self

    def on_detach(self, fgraph):
        self.cache = {}
        self._var_to_keys = {}
        self._stale_vars = set()
        self.fgraph = None
        if getattr(fgraph, "assumption_feature", None) is self:
            del fgraph.assumption_feature

    def on_change_input(self, fgraph, node, i, old_var, new_var, reason=None):
        # A conflict is cached, not raised: the replacement has already been
        # made, and the next query reports it where the caller can react.
        for key in self._var_to_keys.get(old_var, ()):
            old_state = self.cache.get((old_var, key))
            if old_state is None or old_state is FactState.UNKNOWN:
                continue
            new_state = self.cache.get((new_var, key))
            if new_state is None or new_state is FactState.UNKNOWN:
                self.cache[(new_var, key)] = old_state
            else:
                self.cache[(new_var, key)] = FactState.join(old_state, new_state)
            self._var_to_keys.setdefault(new_var, set()).add(key)
            self._stale_vars.add(new_var)
        if node != "output" and hasattr(node, "outputs"):
            self._stale_vars.update(node.outputs)

    def on_prune(self, fgraph, node, reason=None):
        self._stale_vars.difference_update(node.outputs)

    def clone(self):
        # The cache is keyed by variable identity: a cloned graph starts afresh
        # (the ``assume`` nodes themselves are cloned with it).
        return AssumptionFeature()

    def get(self, var, key):
        """The FactState of ``key`` for ``var``; raise ConflictingAssumptionsError on a conflict."""
        state = self.cache.get((var, key))
        if state is None or state is FactState.UNKNOWN:
            if self._stale_vars:
                self._forget_unknown_below(self._stale_vars)
                self._stale_vars = set()
                state = self.cache.get((var, key))
            if state is None:
                state = self._compute(var, key)
        if state is FactState.CONFLICT:
            raise ConflictingAssumptionsError(f"Conflicting evidence for key {key!r} on {var!r}.")
        return state

    def check(self, var, key):
        """True iff ``key`` is known TRUE for ``var``."""
        return self.get(var, key) is FactState.TRUE

    def _compute(self, var, key):
        order = self._ancestors_first(var, key)
        for v in order:
            if (v, key) in self.cache:
                continue
            # A placeholder first: the implication checks below query other
            # keys of ``v``, which may come back to this one.
            self.cache[(v, key)] = FactState.UNKNOWN
            self._var_to_keys.setdefault(v, set()).add(key)
            owner = v.owner
            if owner is not None:
                input_states = [self.get(inp, key) for inp in owner.inputs]
                states = infer_assumption_for_node(key, owner.op, self, self.fgraph, owner, input_states)
                state = states[owner.outputs.index(v)]
            elif isinstance(v, TensorConstant) and key in CONSTANT_INFER_REGISTRY:
                state = CONSTANT_INFER_REGISTRY[key](v)
            else:
                state = FactState.UNKNOWN
            if state is FactState.UNKNOWN:
                for stronger, weaker in IMPLIES.items():
                    if key in weaker and self.get(v, stronger) is FactState.TRUE:
                        state = FactState.TRUE
                        break
            if state is FactState.UNKNOWN:
                for weaker in IMPLIES.get(key, ()):
                    if self.get(v, weaker) is FactState.FALSE:
                        state = FactState.FALSE
                        break
            if state is FactState.CONFLICT:
                raise ConflictingAssumptionsError(
                    f"Conflicting evidence for {key!r} on {v!r} from the rules of its op."
                )
            self.cache[(v, key)] = state
        return self.cache[(var, key)]

    def _ancestors_first(self, var, key):
        """Uncached ancestors of ``var`` (itself included), every input before its users."""
        order, seen = [], set()
        stack = [(var, False)]
        while stack:
            v, expanded = stack.pop()
            if expanded:
                order.append(v)
                continue
            if v in seen:
                continue
            seen.add(v)
            stack.append((v, True))
            if (v, key) in self.cache or v.owner is None:
                continue
            for inp in reversed(v.owner.inputs):
                if inp not in seen:
                    stack.append((inp, False))
        return order

    def _forget_unknown_below(self, start_vars):
        """Drop the cached UNKNOWN states of ``start_vars`` and everything computed from them."""
        clients = self.fgraph.clients
        queue = deque(start_vars)
        seen = set(start_vars)
        while queue:
            var = queue.popleft()
            keys = self._var_to_keys.get(var)
            if keys:
                for key in [k for k in keys if self.cache.get((var, k)) is FactState.UNKNOWN]:
                    del self.cache[(var, key)]
                    keys.discard(key)
                if not keys:
                    del self._var_to_keys[var]
            for client, _ in clients.get(var, ()):
                for out in getattr(client, "outputs", ()):
                    if out not in seen:
                        seen.add(out)
                        queue.append(out)


def true_if(cond, else_false=False):
    """``[TRUE]`` when ``cond``, else ``[FALSE]`` (``else_false``) or ``[UNKNOWN]``."""
    if cond:
        return [FactState.TRUE]
    return [FactState.FALSE if else_false else FactState.UNKNOWN]


def propagate_first(key, op, feature, fgraph, node, input_states):
    """Rule: the output has the fact when the first input has it."""
    return true_if(input_states[0] is FactState.TRUE)


def all_inputs_have_key(key, op, feature, fgraph, node, input_states):
    """Rule: the output has the fact when every input has it."""
    return true_if(all(s is FactState.TRUE for s in input_states))


def check_assumption(fgraph, var, key):
    """True iff ``key`` is known TRUE for ``var`` in ``fgraph`` (attaching the feature if needed)."""
    if fgraph is None:
        return False
    feature = getattr(fgraph, "assumption_feature", None)
    if feature is None:
        feature = AssumptionFeature()
        fgraph.attach_feature(feature)
    return feature.check(var, key)
