"""``ifelse``: choose between two sub-graphs, computing only the chosen one.

``switch(c, a, b)`` is element-wise: it computes ``a`` and ``b`` whole and
then picks entries. ``ifelse(c, then, else)`` takes a *scalar* condition and
returns either every value of the ``then`` branch or every value of the
``else`` branch, and the linkers run only the nodes the chosen branch
needs. That is what makes it worth having: an expensive (or failing)
computation behind an untaken branch costs nothing.

The op states the branches in its inputs: ``[condition, *then, *else]``
with ``n_outs`` values per branch. It does not evaluate anything lazily
itself; it declares its branches through ``lazy_branches``, and the linkers
plan the graph from that (``lucent.link.python.branches``): the Python
linker skips the untaken branch's nodes and the Numba linker writes a
native ``if``/``else`` around them. ``perform`` only selects, which is also
what it does when a linker hands it every input.

Outputs copy the chosen values, unless ``as_view``: then an output is a view
of its ``then`` input (the ``cond_make_inplace`` rewrite, in FAST_RUN). An
``else`` value is always copied, because one output cannot declare itself a
view of two different inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import deepcopy
from typing import Any

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op
from lucent.graph.replace import clone_replace
from lucent.graph.rewriting.basic import GraphRewriter, in2out, node_rewriter
from lucent.graph.rewriting.db import optdb
from lucent.tensor.basic import Alloc, as_tensor_variable, zeros_like
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.math import Argmax, Dot, Max
from lucent.tensor.shape import Reshape, Shape, SpecifyShape
from lucent.tensor.subtensor import IncSubtensor, Subtensor


def _has_shape(type_):
    return hasattr(type_, "ndim") and hasattr(type_, "shape")


class IfElse(Op):
    """Return the ``then`` values if the condition is non-zero, else the ``else`` values.

    Parameters
    ----------
    n_outs
        How many values each branch has (the op has ``1 + 2 * n_outs`` inputs).
    as_view
        Outputs taken from the ``then`` branch are views of their inputs,
        not copies.
    name
        Shown in printed graphs (``if{name}``); not part of the op's identity.
    """

    __props__ = ("as_view", "n_outs")

    def __init__(self, n_outs, as_view=False, name=None):
        if as_view:
            self.view_map = {idx: [idx + 1] for idx in range(n_outs)}
        self.as_view = as_view
        self.n_outs = n_outs
        self.name = name

    def __str__(self):
        args = []
        if self.name is not None:
            args.append(self.name)
        if self.as_view:
            args.append("inplace")
        return f"if{{{','.join(args)}}}"

    # --- the branches, as the linkers read them ---------------------------------
    def lazy_branches(self, node):
        """``(condition position, (then positions, else positions))`` among ``node.inputs``.

        A linker evaluates the condition first and then only the inputs of
        the chosen branch (and what they need).
        """
        n = self.n_outs
        return 0, (tuple(range(1, 1 + n)), tuple(range(1 + n, 1 + 2 * n)))

    # --- graph building ----------------------------------------------------------
    def make_node(self, condition, *true_false_branches: Any):
        if len(true_false_branches) != 2 * self.n_outs:
            raise ValueError(
                f"Wrong number of arguments: expected {int(2 * self.n_outs)}, got "
                f"{len(true_false_branches)} (an IfElse with n_outs={self.n_outs} takes the "
                "condition, then n_outs `then` values and n_outs `else` values)"
            )
        condition = as_tensor_variable(condition)
        if condition.type.ndim > 0:
            raise TypeError(
                "The condition argument must be a truthy scalar value; got a "
                f"{condition.type.ndim}-dimensional {condition.type}"
            )
        thens = true_false_branches[: self.n_outs]
        elses = true_false_branches[self.n_outs :]
        new_thens, new_elses, outputs = [], [], []
        for k, (t, f) in enumerate(zip(thens, elses)):
            if not isinstance(t, Variable):
                t = as_tensor_variable(t)
            if not isinstance(f, Variable):
                f = as_tensor_variable(f)
            if type(f.type) is not type(t.type):
                raise TypeError(
                    f"Input types {type(t.type)} and {type(f.type)} do not match "
                    f"(value {k} of the then and else branches)."
                )
            t_dtype, f_dtype = getattr(t.type, "dtype", None), getattr(f.type, "dtype", None)
            if t_dtype != f_dtype:
                raise TypeError(
                    "IfElse requires compatible dtypes for both branches: got "
                    f"true_branch={t_dtype}, false_branch={f_dtype}"
                )
            if _has_shape(t.type) and _has_shape(f.type):
                if t.type.ndim != f.type.ndim:
                    raise TypeError(
                        "IfElse requires compatible ndim values for both branches: got "
                        f"true_branch={t.type.ndim}, false_branch={f.type.ndim}"
                    )
                # Only the static lengths both branches agree on hold for the output.
                shape = tuple(a if a == b else None for a, b in zip(t.type.shape, f.type.shape))
                out_type = t.type.clone(shape=shape)
            else:
                out_type = t.type
            new_thens.append(out_type.filter_variable(t))
            new_elses.append(out_type.filter_variable(f))
            outputs.append(out_type())
        return Apply(self, [condition, *new_thens, *new_elses], outputs)

    # --- execution -----------------------------------------------------------------
    def perform(self, node, inputs, output_storage):
        """Copy (or, ``as_view``, pass on) the chosen branch's values.

        A lazy linker leaves the untaken branch's inputs unevaluated; they
        are not read.
        """
        n = self.n_outs
        if inputs[0] != 0:
            chosen, view = inputs[1 : 1 + n], self.as_view
        else:
            chosen, view = inputs[1 + n :], False
        for cell, value in zip(output_storage, chosen):
            if view:
                cell[0] = value
            elif isinstance(value, np.ndarray):
                cell[0] = value.copy()
            else:
                cell[0] = deepcopy(value)

    def infer_shape(self, fgraph, node, input_shapes):
        """Each output's shape is an ``ifelse`` of its two branches' shapes."""
        n = self.n_outs
        then_shapes = input_shapes[1 : 1 + n]
        else_shapes = input_shapes[1 + n :]
        flat_then, flat_else = [], []
        for shape in then_shapes:
            if not isinstance(shape, (list, tuple)):
                return [None] * n  # a value without a shape (a generic object)
            flat_then.extend(shape)
        for shape in else_shapes:
            if not isinstance(shape, (list, tuple)):
                return [None] * n
            flat_else.extend(shape)
        if flat_then:
            name = "shape" if self.name is None else f"shape_{self.name}"
            shape_op = IfElse(n_outs=len(flat_then), as_view=False, name=name)
            lengths = shape_op(node.inputs[0], *flat_then, *flat_else, return_list=True)
        else:
            lengths = []
        out_shapes = []
        for out in node.outputs:
            out_shapes.append(tuple(lengths[: out.type.ndim]))
            lengths = lengths[out.type.ndim :]
        return out_shapes

    # --- gradients -------------------------------------------------------------------
    def pullback(self, inputs, outputs, cotangents):
        """The chosen branch gets the output cotangents, the other branch zeros.

        The condition's cotangent is zero: a small change of the condition
        is taken not to change which branch runs.
        """
        condition = inputs[0]
        n = self.n_outs
        thens, elses = inputs[1 : 1 + n], inputs[1 + n :]
        cotangents = [
            zeros_like(out) if _is_disconnected(g) else g for g, out in zip(cotangents, outputs)
        ]
        name_t = None if self.name is None else self.name + "_grad_t"
        name_f = None if self.name is None else self.name + "_grad_f"
        on_true = IfElse(n_outs=n, as_view=self.as_view, name=name_t)
        on_false = IfElse(n_outs=n, as_view=self.as_view, name=name_f)
        # Both values of a branch pair must share a dtype: zeros take the cotangent's.
        true_grads = on_true(
            condition,
            *cotangents,
            *[zeros_like(t, dtype=g.dtype) for t, g in zip(thens, cotangents)],
            return_list=True,
        )
        false_grads = on_false(
            condition,
            *[zeros_like(f, dtype=g.dtype) for f, g in zip(elses, cotangents)],
            *cotangents,
            return_list=True,
        )
        condition_grad = condition.zeros_like(dtype=config.floatX)
        return [condition_grad, *true_grads, *false_grads]

    def L_op(self, inputs, outputs, output_grads):
        return self.pullback(inputs, outputs, output_grads)

    def pushforward(self, inputs, outputs, tangents):
        """The tangent of the chosen branch."""
        values = [
            zeros_like(var) if _is_disconnected(t) else t for var, t in zip(inputs[1:], tangents[1:])
        ]
        return self(inputs[0], *values, return_list=True)


def _is_disconnected(var):
    from lucent.gradient.types import DisconnectedType

    return var is None or isinstance(getattr(var, "type", None), DisconnectedType)


def ifelse(
    condition,
    then_branch: Any | Sequence[Any],
    else_branch: Any | Sequence[Any],
    name: str | None = None,
) -> Variable | Sequence[Variable]:
    """The values of ``then_branch`` if ``condition`` is non-zero, else those of ``else_branch``.

    Only the chosen branch is computed. A branch is one value or a list/tuple
    of values; both must have as many values, with matching types (same
    dtype and number of dimensions). The result is a single variable for
    single values, else a list (or tuple, as ``then_branch`` was given).
    """
    rval_type = None
    if isinstance(then_branch, (list, tuple)):
        rval_type = type(then_branch)
    else:
        then_branch = [then_branch]
    if not isinstance(else_branch, (list, tuple)):
        else_branch = [else_branch]
    if len(then_branch) != len(else_branch):
        raise ValueError(
            "The number of values on the `then` branch must match the `else` branch: got "
            f"{len(then_branch)} for `then`, and {len(else_branch)} for `else`."
        )
    op = IfElse(n_outs=len(then_branch), as_view=False, name=name)
    rval = op(condition, *then_branch, *else_branch, return_list=True)
    if rval_type is None:
        return rval[0]
    if rval_type is list:
        return list(rval)
    return tuple(rval)


# ---------------------------------------------------------------------------
# Rewrites
# ---------------------------------------------------------------------------
@node_rewriter([IfElse])
def cond_make_inplace(fgraph, node):
    """Make an ``IfElse`` return views of its ``then`` values instead of copies."""
    op = node.op
    if op.as_view:
        return False
    # In a big graph, scalar outputs are not worth the extra in-place checks.
    if len(fgraph.apply_nodes) >= 500 and all(
        getattr(o.type, "ndim", -1) == 0 for o in node.outputs
    ):
        return False
    return IfElse(n_outs=op.n_outs, as_view=True, name=op.name)(*node.inputs, return_list=True)


optdb.register(
    "cond_make_inplace",
    in2out(cond_make_inplace, ignore_newtrees=True, name="cond_make_inplace"),
    "fast_run",
    "inplace",
    position=95,
)


def _acceptable_ops():
    ops = [Shape, SpecifyShape, Reshape, Dot, Max, Argmax, Subtensor, IncSubtensor, Alloc,
           Elemwise, DimShuffle]
    try:
        from lucent.tensor.blockwise import Blockwise
    except ImportError:  # the op family is optional
        pass
    else:
        ops.append(Blockwise)
    return tuple(ops)


#: Ops that ``ifelse_lift_single_if_through_acceptable_ops`` moves into both branches.
acceptable_ops = _acceptable_ops()


@node_rewriter(list(acceptable_ops))
def ifelse_lift_single_if_through_acceptable_ops(fgraph, main_node):
    """``op(ifelse(c, x, y))`` -> ``ifelse(c, op(x), op(y))`` for the ops of ``acceptable_ops``.

    Only when exactly one ``IfElse`` feeds ``main_node``.
    """
    if not isinstance(main_node.op, acceptable_ops):
        return False
    owners = {inp.owner for inp in main_node.inputs}
    if_nodes = [n for n in owners if n is not None and isinstance(n.op, IfElse)]
    if len(if_nodes) != 1:
        return False
    node = if_nodes[0]
    n = node.op.n_outs
    thens, elses = node.inputs[1 : 1 + n], node.inputs[1 + n :]
    true_ins, false_ins = [], []
    for x in main_node.inputs:
        if x in node.outputs:
            idx = node.outputs.index(x)
            true_ins.append(thens[idx])
            false_ins.append(elses[idx])
        else:
            true_ins.append(x)
            false_ins.append(x)
    true_eval = main_node.op(*true_ins, return_list=True)
    false_eval = main_node.op(*false_ins, return_list=True)
    return ifelse(node.inputs[0], true_eval, false_eval)


def _merge_same_condition(node, branch):
    """Inputs of ``node`` (one branch) taken from an ``IfElse`` on the same condition.

    Inside the ``then`` branch of ``c``, an ``ifelse(c, a, b)`` is ``a``
    (and ``b`` inside the ``else`` branch).
    """
    op = node.op
    n = op.n_outs
    start = 1 if branch == 0 else 1 + n
    new_inputs = list(node.inputs)
    changed = False
    for pos in range(start, start + n):
        val = node.inputs[pos]
        owner = val.owner
        if owner is not None and isinstance(owner.op, IfElse) and owner.inputs[0] == node.inputs[0]:
            inner_n = owner.op.n_outs
            inner_start = 1 if branch == 0 else 1 + inner_n
            new_inputs[pos] = owner.inputs[inner_start + owner.outputs.index(val)]
            changed = True
    if not changed:
        return False
    return op(*new_inputs, return_list=True)


@node_rewriter([IfElse])
def cond_merge_ifs_true(fgraph, node):
    """``ifelse(c, ifelse(c, a, b), y)`` -> ``ifelse(c, a, y)``."""
    return _merge_same_condition(node, 0)


@node_rewriter([IfElse])
def cond_merge_ifs_false(fgraph, node):
    """``ifelse(c, x, ifelse(c, a, b))`` -> ``ifelse(c, x, b)``."""
    return _merge_same_condition(node, 1)


def apply_depends_on(apply, depends_on):
    """Whether ``apply`` depends on the Apply ``depends_on`` (or on one of a list)."""
    targets = set(depends_on) if isinstance(depends_on, (list, tuple, set)) else {depends_on}
    seen = set()
    stack = [apply]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        for inp in current.inputs:
            owner = inp.owner
            if owner is None:
                continue
            if owner in targets:
                return True
            stack.append(owner)
    return False


def _merged_ifelse(first, second):
    """One ``IfElse`` computing both ``first``'s and ``second``'s outputs (same condition)."""
    n1, n2 = first.op.n_outs, second.op.n_outs
    ts1, fs1 = first.inputs[1 : 1 + n1], first.inputs[1 + n1 :]
    ts2, fs2 = second.inputs[1 : 1 + n2], second.inputs[1 + n2 :]
    name = f"{first.op.name or '?'}&{second.op.name or '?'}"
    merged = IfElse(n_outs=n1 + n2, as_view=False, name=name)
    new_outs = merged(first.inputs[0], *ts1, *ts2, *fs1, *fs2, return_list=True)
    return list(zip(list(first.outputs) + list(second.outputs), new_outs))


class CondMerge(GraphRewriter):
    """Merge ``IfElse`` nodes on the same condition into one (when neither depends on the other)."""

    def add_requirements(self, fgraph):
        from lucent.graph.features import ReplaceValidate

        fgraph.attach_feature(ReplaceValidate())

    def apply(self, fgraph):
        cond_nodes = [n for n in fgraph.toposort() if isinstance(n.op, IfElse)]
        if len(cond_nodes) < 2:
            return False
        merging = cond_nodes[0]
        for proposal in cond_nodes[1:]:
            if proposal.inputs[0] == merging.inputs[0] and not apply_depends_on(proposal, merging):
                pairs = _merged_ifelse(merging, proposal)
                fgraph.replace_all_validate(pairs, reason="cond_merge")
                return True
        return False


@node_rewriter(None)
def cond_merge_random_op(fgraph, main_node):
    """Two ``IfElse`` inputs of one node on the same condition become one ``IfElse``."""
    if isinstance(main_node.op, IfElse):
        return False
    owners = []
    for inp in main_node.inputs:
        if inp.owner is not None and isinstance(inp.owner.op, IfElse) and inp.owner not in owners:
            owners.append(inp.owner)
    if len(owners) < 2:
        return False
    merging = owners[0]
    for proposal in owners[1:]:
        if (
            proposal.inputs[0] == merging.inputs[0]
            and not apply_depends_on(proposal, merging)
            and not apply_depends_on(merging, proposal)
        ):
            pairs = _merged_ifelse(merging, proposal)
            return clone_replace(list(main_node.outputs), replace=pairs)
    return False


@node_rewriter([IfElse])
def cond_remove_identical(fgraph, node):
    """Outputs of one ``IfElse`` with the same ``then`` and ``else`` values become one."""
    op = node.op
    n = op.n_outs
    thens, elses = node.inputs[1 : 1 + n], node.inputs[1 + n :]
    same_as = {}
    for i in range(n):
        if i in same_as:
            continue
        for j in range(i + 1, n):
            if j not in same_as and thens[i] == thens[j] and elses[i] == elses[j]:
                same_as[j] = i
    if not same_as:
        return False
    kept = [i for i in range(n) if i not in same_as]
    new_op = IfElse(n_outs=len(kept), as_view=op.as_view, name=op.name)
    new_outs = new_op(
        node.inputs[0], *[thens[i] for i in kept], *[elses[i] for i in kept], return_list=True
    )
    position = {i: k for k, i in enumerate(kept)}
    return [new_outs[position[same_as.get(i, i)]] for i in range(n)]


__all__ = [
    "IfElse",
    "ifelse",
    "cond_make_inplace",
    "cond_merge_ifs_true",
    "cond_merge_ifs_false",
    "cond_merge_random_op",
    "cond_remove_identical",
    "CondMerge",
    "ifelse_lift_single_if_through_acceptable_ops",
    "acceptable_ops",
]
