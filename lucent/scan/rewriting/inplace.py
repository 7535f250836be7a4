"""Letting a loop write its recurrent outputs into the buffers it was given.

A traced state's outer input is a buffer (initial rows followed by room for
the steps, see ``lucent.scan.op``); without this rewrite the loop copies it
before writing the steps. ``ScanInplaceOptimizer`` gives the ``Scan`` a
``destroy_map`` naming those buffers (and the starting values of untraced
generator states), so the loop writes into them directly. Whether the buffer may be
overwritten (nobody else reads it afterwards, it is not an input of the
function the user did not declare mutable) is decided by the graph's
``DestroyHandler``: each candidate change is validated and undone if it
is refused. All candidates of a node are tried together first, then one at
a time.

A buffer made by an allocation (``Alloc``, ``AllocEmpty``) that other nodes
also read is first given an allocation of its own, so that sharing a
``zeros`` between two loops does not keep either from working in place.
"""

from __future__ import annotations

import copy

from lucent.graph.destroyhandler import DestroyHandler
from lucent.graph.features import ReplacementDidNotRemoveError, ReplaceValidate
from lucent.graph.fg import InconsistencyError
from lucent.graph.rewriting.basic import GraphRewriter
from lucent.scan.op import Scan


def _alloc_ops():
    from lucent.tensor.creation import Alloc
    from lucent.tensor.joining import AllocEmpty

    return (Alloc, AllocEmpty)


class ScanInplaceOptimizer(GraphRewriter):
    """Make ``Scan`` nodes compute their recurrent outputs in their input buffers."""

    name = "scan_make_inplace"

    @property
    def alloc_ops(self):
        """Ops whose outputs may be duplicated so that a loop can own its buffer."""
        return _alloc_ops()

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        fgraph.attach_feature(ReplaceValidate())
        fgraph.attach_feature(DestroyHandler())

    @staticmethod
    def _buffer_positions(op):
        """``{outer output: outer input}`` of the values a loop may overwrite."""
        info, lay = op.info, op.layout
        pos = {k: lay.o_states + k for k in range(lay.n_states)}
        from lucent.tensor.type import TensorType

        for j in range(info.n_untraced_sit_sot):
            # An untraced generator's starting value is the loop's to use up, as
            # PyTensor declares it: it is then advanced without a first copy. An
            # untraced tensor is one value replaced at every step and copied out at
            # the end, never written into: declaring it destroyed would only keep
            # other nodes from reading it (and DebugMode would rightly say the
            # loop did not reuse it).
            if not isinstance(op.fgraph.inputs[lay.i_untraced + j].type, TensorType):
                pos[lay.out_untraced + j] = lay.o_untraced + j
        return pos

    def attempt_scan_inplace(self, fgraph, node, output_indices):
        """Replace ``node`` by a ``Scan`` computing ``output_indices`` in place; the new
        node, or ``None`` if the graph refuses it (the graph is then unchanged)."""
        from lucent.compile.ops import deep_copy_op

        op = node.op
        positions = self._buffer_positions(op)
        inputs = list(node.inputs)
        alloc_ops = self.alloc_ops
        taken = set()
        for out_idx in output_indices:
            i = positions[out_idx]
            inp = inputs[i]
            if (
                inp.owner is not None
                and isinstance(inp.owner.op, alloc_ops)
                and len(fgraph.clients.get(inp, ())) > 1
            ):
                inp = inp.owner.op.make_node(*inp.owner.inputs).outputs[0]
            if any(inp is inputs[j] for j in taken):
                inp = deep_copy_op(inp)
            inputs[i] = inp
            taken.add(i)
        new_op = copy.copy(op)
        new_op._fn = None
        destroy_map = {k: list(v) for k, v in op.destroy_map.items()}
        for out_idx in output_indices:
            destroy_map[out_idx] = [positions[out_idx]]
        new_op.destroy_map = destroy_map
        new_node = new_op.make_node(*inputs)
        try:
            fgraph.replace_all_validate_remove(
                list(zip(node.outputs, new_node.outputs)), remove=[node], reason=self.name,
                warn=False,
            )
        except (InconsistencyError, ReplacementDidNotRemoveError):  # refused: graph unchanged
            return None
        return new_node

    def apply(self, fgraph):
        changed = False
        for node in reversed(fgraph.toposort()):
            if not isinstance(node.op, Scan) or node not in fgraph.apply_nodes:
                continue
            op = node.op
            candidates = []
            for out_idx, in_idx in self._buffer_positions(op).items():
                if out_idx in op.destroy_map:
                    continue
                inp = node.inputs[in_idx]
                if inp.owner is not None and isinstance(inp.owner.op, self.alloc_ops):
                    candidates.append(out_idx)
                    continue
                destroyed_elsewhere = any(
                    client != "output"
                    and any(
                        client.inputs[i] is inp
                        for ins in (getattr(client.op, "destroy_map", None) or {}).values()
                        for i in ins
                    )
                    for client, _ in fgraph.clients.get(inp, ())
                )
                if not destroyed_elsewhere:
                    candidates.append(out_idx)
            if not candidates:
                continue
            new_node = self.attempt_scan_inplace(fgraph, node, candidates)
            if new_node is None:
                for out_idx in candidates:
                    new_node = self.attempt_scan_inplace(fgraph, node, [out_idx])
                    if new_node is not None:
                        node = new_node
                        changed = True
            else:
                changed = True
        return changed


__all__ = ["ScanInplaceOptimizer"]
