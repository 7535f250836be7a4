"""How DebugMode names a node in a problem report.

A problem is only useful if the user can find the node: the report gives
its ``dprint`` (with ids, so it can be matched against ``dprint(fn)``),
the op with its properties, the input shapes and dtypes of this call, and
where in the user's code it was created.

That last point needs care: rewriting replaces the nodes the user wrote
with new ones (fused elementwise loops, BLAS calls), and a node made by a
rewrite was "created" inside ``lucent.function``. ``Origins`` follows the
graph's rewrite history back from such a node to the variable the user
built, so the report can point at the user's line and say which rewrites
produced the node.
"""

from __future__ import annotations

from lucent.graph.utils import format_trace

from lucent.debugmode.values import describe_value


def op_text(op):
    """The op with its properties: ``Elemwise(scalar_op=exp, inplace_pattern={})``."""
    props = getattr(op, "__props__", ())
    if not props:
        return f"{op} ({type(op).__name__}, no properties)"
    parts = []
    for name in props:
        try:
            parts.append(f"{name}={getattr(op, name)!r}")
        except Exception:
            parts.append(f"{name}=?")
    return f"{op} ({type(op).__name__}: {', '.join(parts)})"


def node_dprint(node, depth=3):
    """``dprint`` of ``node`` with ids and types, a few levels deep."""
    from lucent.printing import debugprint

    try:
        return debugprint(node, depth=depth, print_type=True, file="str").rstrip()
    except Exception as e:  # printing must never hide the problem itself
        return f"{node} (dprint failed: {e})"


def inputs_text(node, values):
    """One line per input: its position, name and this call's dtype and shape."""
    lines = []
    for k, (var, value) in enumerate(zip(node.inputs, values)):
        lines.append(f"{k}: {var} <{var.type}> = {describe_value(value)}")
    return "\n".join(lines) or "(no inputs)"


class Origins:
    """Maps a variable made by a rewrite back to the one it replaced (from ``rewrite_history``)."""

    def __init__(self, fgraph):
        self.replaced = {}
        history = getattr(fgraph, "rewrite_history", None)
        for record in history or ():
            # The first replacement producing a variable is the one that made it.
            self.replaced.setdefault(record.new, (record.old, record.rewrite))

    def chain(self, var, limit=50):
        """``[(older variable, rewrite that replaced it), ...]`` from ``var`` back to the user's."""
        steps = []
        seen = {var}
        while var in self.replaced and len(steps) < limit:
            var, rewrite = self.replaced[var]
            if var in seen:
                break
            seen.add(var)
            steps.append((var, rewrite))
        return steps

    def creation_text(self, node):
        """Where the user created ``node`` (or what it was rewritten from)."""
        own = format_trace(getattr(node.tag, "trace", None))
        for out in node.outputs:
            steps = self.chain(out)
            if not steps:
                continue
            original, _ = steps[-1]
            rewrites = " <- ".join(dict.fromkeys(r for _, r in steps))
            if original.owner is not None:
                where = format_trace(getattr(original.owner.tag, "trace", None))
                return (
                    f"{where}\n(as {original.owner.op}; this node was made from it by the "
                    f"rewrites {rewrites}; the node itself was created at {own})"
                )
        return own


def node_context(node, values, origins=None):
    """The ``(label, text)`` sections naming ``node`` in a problem report."""
    created = origins.creation_text(node) if origins is not None else format_trace(
        getattr(node.tag, "trace", None)
    )
    return [
        ("node", node_dprint(node)),
        ("op", op_text(node.op)),
        ("created at", created),
        ("inputs", inputs_text(node, values)),
    ]


__all__ = ["op_text", "node_dprint", "inputs_text", "Origins", "node_context"]
