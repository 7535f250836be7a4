"""Merging loops that run over the same steps into one loop.

Two ``Scan`` nodes that take the same number of steps (and stop on the same
condition and keep the same gradient truncation) can run as one loop that computes both bodies at each step. That saves the
per-loop overhead and lets the rewrites of the merged body share work
common to both (a value both bodies compute from the same sequence is then
computed once).

Loops are merged only when neither depends on the other, directly or
through other nodes: merging a loop with one that reads its output would
make the merged loop read itself. Within a group of compatible loops a
greedy independent subset is merged, and the search starts again on the
new graph until nothing merges.
"""

from __future__ import annotations


from lucent.graph.basic import Constant
from lucent.graph.features import ReplaceValidate
from lucent.graph.rewriting.basic import GraphRewriter
from lucent.graph.replace import clone_replace
from lucent.graph.traversal import apply_ancestors, graph_inputs
from lucent.scan.op import Scan, ScanInfo


def _steps_value(var):
    """``n_steps`` as an int when it is constant, else the variable itself."""
    from lucent.tensor.basic import get_scalar_constant_value
    from lucent.tensor.exceptions import NotScalarConstantError

    try:
        return int(get_scalar_constant_value(var))
    except (NotScalarConstantError, TypeError, ValueError):
        return var


def _groups(op, ins, outs):
    """The inner inputs and outputs of ``op`` (or their clones ``ins``/``outs``) by role."""
    info, lay = op.info, op.layout
    n_mit_taps = sum(len(t) for t in info.mit_sot_in_slices)
    in_groups = [
        ins[: info.n_seqs],
        ins[lay.i_states : lay.i_states + n_mit_taps],
        ins[lay.i_states + n_mit_taps : lay.i_untraced],
        ins[lay.i_untraced : lay.i_non_seqs],
        ins[lay.i_non_seqs :],
    ]
    out_groups = [
        outs[: info.n_mit_sot],
        outs[info.n_mit_sot : lay.n_states],
        outs[lay.out_nit : lay.out_untraced],
        outs[lay.out_untraced : lay.n_outputs],
    ]
    return in_groups, out_groups


def _outer_groups(node):
    op = node.op
    info, lay = op.info, op.layout
    ins, outs = node.inputs, node.outputs
    in_groups = [
        ins[lay.o_seqs : lay.o_states],
        ins[lay.o_states : lay.o_states + info.n_mit_sot],
        ins[lay.o_states + info.n_mit_sot : lay.o_untraced],
        ins[lay.o_untraced : lay.o_nit],
        ins[lay.o_nit : lay.o_non_seqs],
        ins[lay.o_non_seqs :],
    ]
    out_groups = [
        outs[: info.n_mit_sot],
        outs[info.n_mit_sot : lay.n_states],
        outs[lay.out_nit : lay.out_untraced],
        outs[lay.out_untraced : lay.n_outputs],
    ]
    return in_groups, out_groups


class ScanMerge(GraphRewriter):
    """Merge ``Scan`` nodes over the same steps that do not depend on one another."""

    name = "scan_merge"

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        fgraph.attach_feature(ReplaceValidate())

    def merge(self, nodes):
        """``(old outer output, new outer output)`` pairs of one ``Scan`` computing all ``nodes``."""
        n_in_groups, n_out_groups = 5, 4
        inner_in = [[] for _ in range(n_in_groups)]
        inner_out = [[] for _ in range(n_out_groups)]
        outer_in = [[] for _ in range(6)]
        outer_out = [[] for _ in range(n_out_groups)]
        condition = None
        for nd in nodes:
            op = nd.op
            # fresh inner inputs: the ops' own are nominal variables, the same objects
            # in every loop's inner graph
            ins = [v.type() for v in op.fgraph.inputs]
            mapping = dict(zip(op.fgraph.inputs, ins))
            old_outs = list(op.fgraph.outputs)
            outs = [mapping.get(o, r) for o, r in zip(old_outs, clone_replace(old_outs, replace=mapping))]
            in_groups, out_groups = _groups(op, ins, outs)
            for acc, grp in zip(inner_in, in_groups):
                acc.extend(grp)
            for acc, grp in zip(inner_out, out_groups):
                acc.extend(grp)
            o_in, o_out = _outer_groups(nd)
            for acc, grp in zip(outer_in, o_in):
                acc.extend(grp)
            for acc, grp in zip(outer_out, o_out):
                acc.extend(grp)
            if op.info.as_while and condition is None:
                condition = outs[-1]
        infos = [nd.op.info for nd in nodes]
        info = ScanInfo(
            n_seqs=sum(i.n_seqs for i in infos),
            mit_mot_in_slices=(),
            mit_mot_out_slices=(),
            mit_sot_in_slices=tuple(t for i in infos for t in i.mit_sot_in_slices),
            sit_sot_in_slices=tuple(t for i in infos for t in i.sit_sot_in_slices),
            n_nit_sot=sum(i.n_nit_sot for i in infos),
            n_untraced_sit_sot=sum(i.n_untraced_sit_sot for i in infos),
            n_non_seqs=sum(i.n_non_seqs for i in infos),
            as_while=condition is not None,
        )
        first = nodes[0].op
        new_op = Scan(
            [v for grp in inner_in for v in grp],
            [v for grp in inner_out for v in grp] + ([condition] if condition is not None else []),
            info,
            mode=first.mode if len({str(nd.op.mode) for nd in nodes}) == 1 else None,
            truncate_gradient=first.truncate_gradient,
            name="&".join(nd.op.name or "scan_fn" for nd in nodes),
            profile=first.profile,
            allow_gc=first.allow_gc,
            strict=first.strict,
        )
        new_outs = new_op(nodes[0].inputs[0], *[v for grp in outer_in for v in grp], return_list=True)
        old_outs = [v for grp in outer_out for v in grp]
        return list(zip(old_outs, new_outs))

    def belongs_to_set(self, node, set_nodes):
        """Whether ``node``'s loop is compatible with those of ``set_nodes``: same number of
        steps, same stopping condition and gradient truncation. (Whether the loops
        depend on one another is a property of the graph, checked by the caller.)"""
        from lucent.graph.equality import equal_computations

        op, rep = node.op, set_nodes[0]
        rop = rep.op
        # The step ``mode`` is not compared: it is deprecated (the inner graph follows the
        # outer compilation) and a merged loop whose parts disagree on it uses the default.
        if op.info.as_while != rop.info.as_while or op.truncate_gradient != rop.truncate_gradient:
            return False
        a, b = _steps_value(node.inputs[0]), _steps_value(rep.inputs[0])
        if isinstance(a, int) or isinstance(b, int):
            if a != b:
                return False
        elif not (a is b or equal_computations([a], [b])):
            return False
        if not op.info.as_while:
            return True
        cond, rcond = op.fgraph.outputs[-1], rop.fgraph.outputs[-1]
        if not equal_computations([cond], [rcond], list(op.fgraph.inputs), list(rop.fgraph.inputs)):
            return False
        # a condition on inner inputs is the same only if they come from the same outer values
        src = op.layout.outer_input_of_inner()
        rsrc = rop.layout.outer_input_of_inner()
        used = [v for v in graph_inputs([cond]) if not isinstance(v, Constant)]
        rused = [v for v in graph_inputs([rcond]) if not isinstance(v, Constant)]
        if len(used) != len(rused):
            return False
        for v, rv in zip(used, rused):
            if v not in op.fgraph.inputs or rv not in rop.fgraph.inputs:
                return False
            i, ri = op.fgraph.inputs.index(v), rop.fgraph.inputs.index(rv)
            if (i < op.layout.i_states) != (ri < rop.layout.i_states):
                return False  # a sequence slice on one side only
            outer, router = node.inputs[src[i]], rep.inputs[rsrc[ri]]
            if not (outer is router or equal_computations([outer], [router])):
                return False
        return True

    def apply(self, fgraph):
        changed = False
        while self._merge_once(fgraph):
            changed = True
        return changed

    def _merge_once(self, fgraph):
        scans = [nd for nd in fgraph.toposort() if isinstance(nd.op, Scan)]
        if len(scans) < 2:
            return False
        classes = []
        for nd in scans:
            for cls in classes:
                if self.belongs_to_set(nd, cls):
                    cls.append(nd)
                    break
            else:
                classes.append([nd])
        before = {}
        for cls in classes:
            if len(cls) < 2:
                continue
            for nd in cls:
                before.setdefault(nd, set(apply_ancestors(nd.inputs)))
            chosen = []
            for nd in cls:
                if all(nd not in before[m] and m not in before[nd] for m in chosen):
                    chosen.append(nd)
            if len(chosen) > 1:
                fgraph.replace_all_validate_remove(
                    self.merge(chosen), remove=chosen, reason=self.name, warn=False
                )
                return True
        return False


__all__ = ["ScanMerge"]
