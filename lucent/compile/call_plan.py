"""What a call of a compiled function copies, decided once, when the function is made.

A call hands values across the boundary between the caller and the
function's own memory three ways: the outputs it returns, the new values it
writes into updated inputs (shared variables), and the arguments it reads.
Each crossing may need a copy so that no two owners share a buffer that one
of them will write: an output that *is* an input or a constant, a view of
one, the same buffer as an earlier output, or a view of an intermediate
that a node-by-node linker keeps and reuses on the next call; an update
whose value is another input's buffer, a constant, or an output already
returned. All of that follows from the graph (``view_map``/``destroy_map``
and which variables are inputs, constants or outputs), so it is decided
here once. ``Function.__call__`` and the generated fast call
(``lucent.compile.fast_call``) both read this plan.

What the graph cannot tell is whether the *caller* passed the same array
(or views of one array) for two inputs that the function may keep or
overwrite; those inputs are grouped in ``aliasable_input_groups`` and
compared on each call with their type's ``may_share_memory``.
"""

from __future__ import annotations

from lucent.compile.aliasing import alias_root
from lucent.graph.basic import Constant


def aliasable_input_groups(inputs):
    """Positions of inputs whose arguments might be views of each other, grouped.

    Only inputs the function may keep or overwrite (``borrow``) count; a
    shared variable's memory is lucent's own, so it cannot be aliased by a
    caller. Two inputs are in one group when a value of one type could be a
    value of the other (one type ``is_super`` of the other).
    """
    groups = []
    for k, inp in enumerate(inputs):
        type_ = inp.variable.type
        if not inp.borrow or inp.shared or not hasattr(type_, "may_share_memory"):
            continue
        for group in groups:
            if any(
                type_.is_super(inputs[j].variable.type) or inputs[j].variable.type.is_super(type_)
                for j in group
            ):
                group.append(k)
                break
        else:
            groups.append([k])
    return tuple(tuple(g) for g in groups if len(g) > 1)


class CallPlan:
    """The copies and hand-overs of every call of one function (see module docstring).

    Attributes
    ----------
    copy_output
        Per output: copy the value before returning it.
    release_output
        Per output: the value is handed to the caller, so its cell is
        emptied after the call (the next call must not write into it).
    copy_update
        Per updated input (in ``maker.update_inputs`` order): copy the new
        value before storing it.
    release_update
        Per updated input: the update's cell is emptied after the call.
    aliasable_input_groups
        Inputs whose arguments are compared with ``may_share_memory`` on
        each call (the only decision left to run time).
    """

    def __init__(self, maker, reuses_buffers):
        """``reuses_buffers``: the linker keeps intermediate buffers between calls and may
        write into them again (node-by-node linkers); a program that allocates its
        results on every call does not."""
        fgraph = maker.fgraph
        inputs = maker.inputs
        n_out = len(maker.outputs)
        graph_inputs = {var: k for k, var in enumerate(fgraph.inputs)}
        roots = [alias_root(v) for v in fgraph.outputs]

        def views_kept_buffer(var, root):
            # A view of an intermediate: that intermediate's cell may be reused next call.
            return reuses_buffers and root is not var and root not in graph_inputs

        self.copy_output, self.release_output = [], []
        returned = set()  # roots of outputs returned without a copy
        for j in range(n_out):
            var, root = fgraph.outputs[j], roots[j]
            borrowed = maker.outputs[j].borrow
            external = root in graph_inputs or isinstance(root, Constant)
            owner = inputs[graph_inputs[root]] if root in graph_inputs else None
            # A borrowed output may be internal memory, but never the caller's
            # own argument unless that input was declared ``In(borrow=True)``.
            caller_owned = owner is not None and not (owner.borrow or owner.shared or owner.implicit)
            copy = caller_owned or (
                not borrowed and (external or root in returned or views_kept_buffer(var, root))
            )
            if not copy:
                returned.add(root)
            self.copy_output.append(copy)
            self.release_output.append(not copy and not borrowed and var.owner is not None)

        # An input whose update gives it a buffer of its own lets go of its old
        # buffer, so another update may take that buffer without a copy (two
        # shared variables swapping values copy nothing).
        update_roots = {fgraph.inputs[k]: roots[n_out + u] for u, k in enumerate(maker.update_inputs)}
        self.copy_update, self.release_update = [], []
        written = set()
        for u, k in enumerate(maker.update_inputs):
            var, root = fgraph.outputs[n_out + u], roots[n_out + u]
            own = root is fgraph.inputs[k]  # the input itself, or computed in its own buffer
            moved_away = root in update_roots and update_roots[root] is not root
            copy = not own and (
                (root in graph_inputs and not moved_away)
                or isinstance(root, Constant)
                or root in returned
                or root in written
                or views_kept_buffer(var, root)
            )
            written.add(root)
            self.copy_update.append(copy)
            self.release_update.append(var.owner is not None)
        self.aliasable_input_groups = aliasable_input_groups(inputs)


__all__ = ["CallPlan", "alias_root", "aliasable_input_groups"]
