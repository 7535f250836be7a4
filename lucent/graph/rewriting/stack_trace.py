"""Creation traces through rewrites: ``copy_stack_trace`` and ``check_stack_trace``.

Every ``Apply`` records where the user's code created it (``node.tag.trace``,
see ``lucent.graph.utils.add_tag_trace``); DebugMode and the widgets show it
to say which line of the user's program a node comes from. A rewrite that
replaces a node by new ones should hand that location on, so a problem in
the rewritten graph still points at the user's line: ``copy_stack_trace``
does that, and ``check_stack_trace`` lets a test verify it. (PyTensor keeps
the trace on output variables; lucent keeps it on the node, which every
output shares.)
"""

from __future__ import annotations

import inspect
import warnings

from lucent.graph.basic import Variable
from lucent.graph.fg import FunctionGraph
from lucent.graph.op import Op
from lucent.graph.utils import hand_on_backward


def _node_trace(var):
    node = var.owner if isinstance(var, Variable) else None
    return list(getattr(node.tag, "trace", None) or []) if node is not None else []


def copy_stack_trace(from_var, to_var):
    """Give ``to_var``'s node(s) the creation trace(s) of ``from_var``'s node(s).

    Either argument may be a variable or a list of variables; the traces of
    all sources are combined (without repeats) after the trace the target
    already has. Graph inputs, which have no node, are skipped.
    """
    sources = from_var if isinstance(from_var, (list, tuple)) else [from_var]
    targets = to_var if isinstance(to_var, (list, tuple)) else [to_var]
    trace = []
    for src in sources:
        for entry in _node_trace(src):
            if entry not in trace:
                trace.append(entry)
    for target in targets:
        node = target.owner if isinstance(target, Variable) else None
        if node is None:
            continue
        own = list(getattr(node.tag, "trace", None) or [])
        node.tag.trace = own + [entry for entry in trace if entry not in own]
        for src in sources:
            if isinstance(src, Variable) and src.owner is not None:
                hand_on_backward(src.owner, node)
    return to_var


def check_stack_trace(f_or_fgraph, ops_to_check="last", bug_print="raise"):
    """True when every checked node of a compiled graph has a creation trace.

    ``f_or_fgraph`` is a ``FunctionGraph`` or a compiled function (its
    ``maker.fgraph``). ``ops_to_check`` picks the nodes: ``"last"`` (the
    nodes computing the outputs), ``"all"``, an ``Op`` class or instance, a
    list/tuple of those, or a predicate on the op. ``bug_print`` says what
    to do when no node matches: ``"raise"``, ``"warn"`` or ``"ignore"``
    (then the result is True).
    """
    if isinstance(f_or_fgraph, FunctionGraph):
        fgraph = f_or_fgraph
    elif isinstance(getattr(getattr(f_or_fgraph, "maker", None), "fgraph", None), FunctionGraph):
        fgraph = f_or_fgraph.maker.fgraph
    else:
        raise ValueError(
            f"check_stack_trace takes a FunctionGraph or a compiled function, got "
            f"{type(f_or_fgraph).__name__}"
        )
    if isinstance(ops_to_check, Op) or (inspect.isclass(ops_to_check) and issubclass(ops_to_check, Op)):
        ops_to_check = (ops_to_check,)
    if isinstance(ops_to_check, str):
        if ops_to_check == "last":
            nodes = [out.owner for out in fgraph.outputs if out.owner is not None]
        elif ops_to_check == "all":
            nodes = list(fgraph.apply_nodes)
        else:
            raise ValueError(f"ops_to_check must be 'last' or 'all' as a string, got {ops_to_check!r}")
    elif isinstance(ops_to_check, (list, tuple)):
        instances = [o for o in ops_to_check if isinstance(o, Op)]
        classes = tuple(o for o in ops_to_check if not isinstance(o, Op))
        nodes = [
            n for n in fgraph.apply_nodes
            if n.op in instances or (classes and isinstance(n.op, classes))
        ]
    elif callable(ops_to_check):
        nodes = [n for n in fgraph.apply_nodes if ops_to_check(n.op)]
    else:
        raise ValueError(f"ops_to_check of type {type(ops_to_check).__name__} is not supported")
    if not nodes:
        message = "check_stack_trace: no node of the graph matches ops_to_check"
        if bug_print == "raise":
            raise ValueError(message)
        if bug_print == "warn":
            warnings.warn(message, stacklevel=2)
        elif bug_print != "ignore":
            raise ValueError(f"bug_print must be 'raise', 'warn' or 'ignore', got {bug_print!r}")
        return True
    return all(getattr(node.tag, "trace", None) for node in nodes)


__all__ = ["copy_stack_trace", "check_stack_trace"]
