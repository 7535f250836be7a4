"""Checking that every rewrite preserved values, on the call's own inputs.

The graph's ``rewrite_history`` records each replacement ``old -> new``
with the rewrite's name. Both variables still exist after rewriting: the
old one keeps its owner and inputs, it is just no longer used by the
graph. So the pre-rewrite computation need not be cloned: evaluating the
old variable's own graph with ``perform`` gives the value the user's
graph would have had at that point, and the new variable's the value the
rewritten one has. If they differ (beyond the type's
``values_eq_approx``), that rewrite is wrong: ``BadOptimization`` names it.

Cost: after a call every variable of the final graph has its reference
value already; those seed the memo, so only the nodes that rewriting
removed are run again, each once per call however many records need it.
Variables that do not depend only on the function's inputs and constants
cannot be evaluated and are skipped (counted in the report).

Stabilising rewrites (``log(sigmoid(x))`` -> ``-softplus(-x)``) exist to
turn an overflow into the finite value it stands for, so they tag the new
variable with the comparison to use (``new.tag.values_eq_approx``, e.g.
``values_eq_approx_remove_inf``: an infinity or NaN in the old value
accepts any new value there). The same allowance extends to a record whose
old graph computes through a variable a tagged rewrite replaced: its old
value carries the overflow the rewrite removed. Fused nodes are compared
with the tolerance of their narrowest float intermediate
(``values.comparator``).

Inner graphs (a loop's body, an ``OpFromGraph``'s graph) are rewritten on
their own, each with its own history; the outer history records one
replacement of the node by the node with the rewritten inner graph
(``RewriteRecord.inner_history``). That record is checked like any other:
the old node runs its inner graph as written, the new one the rewritten
graph, so a wrong inner rewrite shows there. Only then are the inner
rewrites checked one by one (``_inner_problems``), to name the one that
changed the values: an ``OpFromGraph``'s inner graph on the node's input
values, a loop's body on each step's inner values (the loop rerun on the
reference path, ``run_reference``), stopping at the first step where an
inner rewrite disagrees. This is recursive (a loop in a loop's body), and
costs nothing while the outer record agrees; rechecking every inner
rewrite at every step of every call would multiply DebugMode's cost by
the loop's length. The problem gets a section naming the inner
rewrite(s) and the step, and the attributes ``inner_label``,
``inner_step`` (``None`` for an ``OpFromGraph``) and ``inner_problems``
(the inner ``BadOptimization`` s).
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant
from lucent.link.python.branches import branches_of

from lucent.debugmode.describe import inputs_text, node_dprint
from lucent.debugmode.errors import BadOptimization
from lucent.debugmode.values import (
    abbreviate,
    comparator,
    copy_value,
    difference,
    format_difference,
)


def _identical(a, b):
    """Cheap exact check first: most rewrites give bit-identical values, and
    ``values_eq_approx`` (``isclose``) costs several passes over the data."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    return False


class _LooseOld:
    """Compares with ``compare`` (accepting overflow in the old value), never raising."""

    def __init__(self, compare):
        self.compare = compare

    def __call__(self, old_value, new_value):
        try:
            return bool(self.compare(old_value, new_value))
        except Exception:
            return False


class _Failed:
    """Marks a value that could not be computed (its node's perform raised)."""

    def __init__(self, error):
        self.error = error


class _NotRun:
    """Marks a value of a branch the call did not take: there is nothing to compare."""

    def __repr__(self):
        return "<not run>"


_NOT_RUN = _NotRun()

#: Steps of a loop whose body's rewrites are checked one by one, at most (see the module docstring).
MAX_INNER_STEPS = 10_000


class _StopLoop(Exception):
    """Stops the rerun of a loop at the first step where an inner rewrite disagrees."""


def _taken_branch(node, memo):
    """``(condition position, positions of the taken branch)``, or ``None`` for a plain node
    or while the condition is not known (or has no value this call)."""
    declared = branches_of(node)
    if declared is None:
        return None
    cond, branches = declared
    value = memo.get(node.inputs[cond], _NOT_RUN)
    if value is _NOT_RUN or isinstance(value, _Failed):
        return None
    return cond, branches[0 if value != 0 else 1]


def _needed_inputs(node, memo):
    """The inputs to evaluate before ``node``: for an ``ifelse``, the condition, then only
    the taken branch (evaluating the other would do the work laziness avoids)."""
    declared = branches_of(node)
    if declared is None:
        return node.inputs
    cond = node.inputs[declared[0]]
    if cond not in memo:
        return [cond]
    taken = _taken_branch(node, memo)
    if taken is None:
        return node.inputs  # the condition failed: _run marks the outputs
    return [cond] + [node.inputs[k] for k in taken[1]]


def _select_branch(node, memo):
    """The outputs of a branching node: the taken branch's values, in order."""
    _, positions = _taken_branch(node, memo)
    for out, k in zip(node.outputs, positions):
        memo[out] = memo[node.inputs[k]]


class RewriteCheck:
    """Re-evaluates each recorded replacement's old and new variables (see module docstring).

    Attributes
    ----------
    records
        The history records that are checked on every call.
    skipped
        Records whose variables cannot be evaluated from the inputs.
    """

    def __init__(self, fgraph, origins=None):
        self.origins = origins
        self._inputs = set(fgraph.inputs)
        self._evaluable = {}
        self._prepared = set()
        self.records = []
        self.skipped = []
        history = getattr(fgraph, "rewrite_history", None)
        seen = set()
        for record in history or ():
            old, new = record.old, record.new
            if old is new or (old, new) in seen:
                continue
            seen.add((old, new))
            if self._can_evaluate(old) and self._can_evaluate(new):
                self.records.append(record)
            else:
                self.skipped.append(record)
        #: Variables replaced by a rewrite that tagged its result with a comparison.
        self._stabilised = {
            r.old for r in self.records
            if getattr(r.new.tag, "values_eq_approx", None) is not None
        }
        self._downstream = {}
        self._comparators = {}

    def _after_stabilised(self, var):
        """True when ``var``'s graph reads a variable that a stabilising rewrite replaced."""
        if not self._stabilised:
            return False
        memo = self._downstream
        stack = [var]
        while stack:
            v = stack[-1]
            if v in memo:
                stack.pop()
                continue
            if v.owner is None:
                memo[v] = v in self._stabilised
                stack.pop()
                continue
            pending = [i for i in v.owner.inputs if i not in memo]
            if pending:
                stack.extend(pending)
                continue
            hit = v in self._stabilised or any(memo[i] for i in v.owner.inputs)
            memo[v] = hit
            stack.pop()
        return memo[var]

    def _agree(self, record, old_value, new_value):
        agree = self._comparators.get(id(record))
        if agree is None:
            old, new = record.old, record.new
            agree = comparator(new, old)
            if getattr(new.tag, "values_eq_approx", None) is None and self._after_stabilised(old):
                from lucent.tensor.type import TensorType, values_eq_approx_remove_inf_nan

                if isinstance(old.type, TensorType):
                    agree = _LooseOld(values_eq_approx_remove_inf_nan)
            self._comparators[id(record)] = agree
        return agree(old_value, new_value)

    def _can_evaluate(self, var):
        """True when ``var`` depends only on the graph's inputs and constants."""
        memo = self._evaluable
        stack = [var]
        while stack:
            v = stack[-1]
            if v in memo:
                stack.pop()
                continue
            if v.owner is None:
                memo[v] = v in self._inputs or isinstance(v, Constant)
                stack.pop()
                continue
            pending = [i for i in v.owner.inputs if i not in memo]
            if pending:
                stack.extend(pending)
                continue
            ok = all(memo[i] for i in v.owner.inputs)
            for out in v.owner.outputs:
                memo[out] = ok
            stack.pop()
        return memo[var]

    # ------------------------------------------------------------------
    def check(self, known, not_run=()):
        """``(problems, n_unevaluated, n_not_run)`` for this call.

        ``known`` maps variables to their values; it must hold the graph
        inputs' values and may hold any other variable's reference value;
        it is not modified. ``not_run``: variables of the graph the call did
        not compute (nodes of an ``ifelse`` branch not taken). A record that
        reads one of them belongs to that branch and is not evaluated, and
        an old ``ifelse`` is evaluated lazily too: running the branch not
        taken would do the work (and raise the errors) laziness avoids.
        """
        memo = dict(known)
        for var in not_run:
            memo[var] = _NOT_RUN
        problems = []
        unevaluated = 0
        not_evaluated = 0
        for record in self.records:
            new_value = self._evaluate(record.new, memo)
            old_value = _NOT_RUN if new_value is _NOT_RUN else self._evaluate(record.old, memo)
            if new_value is _NOT_RUN or old_value is _NOT_RUN:
                not_evaluated += 1
                continue
            if isinstance(old_value, _Failed) or isinstance(new_value, _Failed):
                unevaluated += 1
                continue
            same = _identical(old_value, new_value) or self._agree(record, old_value, new_value)
            if not same:
                problems.append(self._problem(record, old_value, new_value, memo))
        return problems, unevaluated, not_evaluated

    def _evaluate(self, var, memo):
        stack = [var]
        while stack:
            v = stack[-1]
            if v in memo:
                stack.pop()
                continue
            if v.owner is None:
                memo[v] = v.data if isinstance(v, Constant) else _Failed(
                    KeyError(f"no value for the input {v}")
                )
                stack.pop()
                continue
            node = v.owner
            needed = _needed_inputs(node, memo)
            pending = [i for i in needed if i not in memo]
            if pending:
                stack.extend(pending)
                continue
            if len(needed) < len(node.inputs):
                _select_branch(node, memo)
            else:
                self._run(node, memo)
            stack.pop()
        return memo[var]

    def _run(self, node, memo):
        values = [memo[i] for i in node.inputs]
        if any(x is _NOT_RUN for x in values):
            for out in node.outputs:
                memo[out] = _NOT_RUN
            return
        failed = next((x for x in values if isinstance(x, _Failed)), None)
        if failed is None:
            destroyed = {i for ins in (getattr(node.op, "destroy_map", None) or {}).values() for i in ins}
            args = [copy_value(x) if k in destroyed else x for k, x in enumerate(values)]
            cells = [[None] for _ in node.outputs]
            try:
                if node not in self._prepared:
                    node.op.prepare_node(node, None, None, "py")
                    self._prepared.add(node)
                node.op.perform(node, args, cells)
            except Exception as e:
                failed = _Failed(e)
        for j, out in enumerate(node.outputs):
            memo[out] = failed if failed is not None else cells[j][0]

    def _problem(self, record, old_value, new_value, memo):
        old, new = record.old, record.new
        diff = difference(old_value, new_value)
        sections = [
            ("rewrite", f"{record.rewrite} (step {record.step} of the graph's rewrite history)"),
            ("replaced", node_dprint(old) if old.owner is not None else str(old)),
            ("by", node_dprint(new) if new.owner is not None else str(new)),
        ]
        if old.owner is not None:
            created = (
                self.origins.creation_text(old.owner) if self.origins is not None else None
            )
            if created is None:
                from lucent.graph.utils import format_trace

                created = format_trace(getattr(old.owner.tag, "trace", None))
            sections.append(("replaced node created at", created))
            sections.append((
                "inputs of the replaced node",
                inputs_text(old.owner, [memo.get(i) for i in old.owner.inputs]),
            ))
        sections += [
            ("value before the rewrite", abbreviate(old_value)),
            ("value after the rewrite", abbreviate(new_value)),
            ("difference", format_difference(diff) or "(not numeric)"),
        ]
        inner = {}
        if record.inner_history is not None:
            located = self._inner_problems(record, memo)
            if located is not None:
                step, found = located
                inner = {"inner_label": record.inner_label, "inner_step": step, "inner_problems": found}
                where = f"inside the {record.inner_label}"
                if step is not None:
                    where += f", at step {step} of the loop"
                sections.append((where, "\n".join(_inner_line(p) for p in found)))
        return BadOptimization(
            f"The rewrite {record.rewrite} replaced {record.old_text} by {record.new_text}, "
            "which computes a different value on this call's inputs: a rewrite must preserve "
            "values (within the type's tolerance)",
            sections,
            node=old.owner,
            rewrite=record.rewrite,
            step=record.step,
            old=old,
            new=new,
            old_value=old_value,
            new_value=new_value,
            difference=diff,
            **inner,
        )

    def _inner_problems(self, record, memo):
        """``(loop step or None, [BadOptimization])`` of the inner rewrites of ``record``
        that changed the values, or ``None`` when none is found (see the module docstring)."""
        history = record.inner_history
        node = record.old.owner
        if history is None or history.fgraph is None or node is None:
            return None
        values = [memo.get(i, _NOT_RUN) for i in node.inputs]
        if any(v is _NOT_RUN or isinstance(v, _Failed) for v in values):
            return None
        fgraph = history.fgraph
        check = RewriteCheck(fgraph)
        if not check.records or len(fgraph.inputs) != len(getattr(node.op, "fgraph", fgraph).inputs):
            return None
        run_loop = getattr(node.op, "run_reference", None)
        if run_loop is None:
            if len(values) != len(fgraph.inputs):
                return None
            problems, _, _ = check.check(dict(zip(fgraph.inputs, values)))
            return (None, problems) if problems else None
        from lucent.debugmode.inner import step_values

        found = []

        def on_step(t, args):
            if t >= MAX_INNER_STEPS:
                raise _StopLoop()
            problems, _, _ = check.check(dict(zip(fgraph.inputs, step_values(fgraph, args))))
            if problems:
                found.append((t, problems))
                raise _StopLoop()

        copies = [copy_value(v) for v in values]
        try:
            run_loop(node, copies, None, on_step)
        except _StopLoop:
            pass
        except Exception:
            return None  # the rerun failed: the outer problem stands on its own
        return found[0] if found else None


def _inner_line(problem):
    """One line (with the lines of deeper loops, indented) naming an inner rewrite that changed the values."""
    text = (
        f"{problem.rewrite} (step {problem.step} of its rewrite history) replaced "
        f"{problem.old.owner.op if problem.old.owner is not None else problem.old} "
        f"and changed the values: {format_difference(problem.difference) or '(not numeric)'}"
    )
    deeper = getattr(problem, "inner_problems", None)
    if deeper:
        step = getattr(problem, "inner_step", None)
        where = f"  inside the {problem.inner_label}" + (f", at step {step}" if step is not None else "") + ":"
        text += "\n" + where + "".join("\n    " + _inner_line(p).replace("\n", "\n    ") for p in deeper)
    return text


__all__ = ["RewriteCheck"]
