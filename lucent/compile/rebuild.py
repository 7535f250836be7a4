"""``rebuild_collect_shared``: copy a graph with substitutions, collecting its shared state.

Inner-graph builders (``scan``, ``OpFromGraph``) and programs that re-use a
compiled function's graph need what ``function`` computes before compiling:
the graph rebuilt with some variables replaced, every shared variable it
reads, and the update expression of each (explicit or default). This module
does only that, without compiling anything, and returns the pieces in the
layout PyTensor programs expect::

    inputs, outputs, (clone_d, update_d, update_expr, shared_inputs)

The walk over the graph is iterative, so graphs deeper than Python's
recursion limit rebuild too.
"""

from __future__ import annotations

from lucent.compile.io import Out
from lucent.compile.sharedvalue import SharedVariable, shared
from lucent.graph.basic import Variable
from lucent.graph.traversal import clone_node_and_cache


class _Collector:
    """The clone map and the shared variables / updates met while copying."""

    def __init__(self, rebuild_strict, copy_inputs_over, no_default_updates):
        self.strict = rebuild_strict
        self.copy_inputs_over = copy_inputs_over
        self.no_default_updates = no_default_updates
        self.clone_d = {}
        self.update_d = {}
        self.update_expr = []
        self.shared_inputs = []

    def _wants_default(self, var):
        ndu = self.no_default_updates
        if ndu is True:
            return False
        if ndu is False or ndu is None:
            return True
        return var not in list(ndu)

    def _leaf(self, var):
        if isinstance(var, SharedVariable):
            if var not in self.shared_inputs:
                self.shared_inputs.append(var)
            default = getattr(var, "default_update", None)
            if default is not None and var not in self.update_d and self._wants_default(var):
                upd = var.type.filter_variable(default, allow_convert=False)
                if not var.type.is_super(upd.type):
                    raise TypeError(
                        f"The default update of the shared variable {var} has type {upd.type}, "
                        f"which is not compatible with the variable's type {var.type}"
                    )
                self.update_d[var] = upd
                self.update_expr.append((var, upd))
        self.clone_d.setdefault(var, var if self.copy_inputs_over else var.clone())

    def copy(self, root):
        """The copy of ``root`` (its ancestors are copied first, without recursion)."""
        clone_d = self.clone_d
        stack = [root]
        while stack:
            var = stack.pop()
            if var in clone_d:
                continue
            node = var.owner
            if node is None:
                self._leaf(var)
                continue
            if node not in clone_d:
                pending = [i for i in node.inputs if i not in clone_d]
                if pending:
                    stack.append(var)
                    stack.extend(reversed(pending))
                    continue
                clone_node_and_cache(node, clone_d, strict=self.strict)
            clone_d.setdefault(var, var)
        return clone_d[root]


def _pairs(mapping, what):
    if mapping is None:
        return []
    if hasattr(mapping, "items"):
        return list(mapping.items())
    try:
        return [tuple(p) for p in mapping]
    except TypeError:
        raise TypeError(f"{what} must be a dict or a list of (variable, value) pairs, got {mapping!r}")


def rebuild_collect_shared(
    outputs,
    inputs=None,
    replace=None,
    updates=None,
    rebuild_strict=True,
    copy_inputs_over=True,
    no_default_updates=False,
    clone_inner_graphs=None,
):
    """Rebuild ``outputs`` with ``replace`` substituted; collect shared variables and updates.

    Parameters
    ----------
    outputs
        A variable, an ``Out``, a list/tuple of them, or ``None``.
    inputs
        Explicit inputs (copied over as they are, or cloned when
        ``copy_inputs_over=False``). A shared variable cannot be one.
    replace
        ``{old: new}`` (or pairs): ``old`` becomes ``new`` in the copy; a
        ``new`` that is not a variable becomes a shared variable holding it.
    updates
        ``{shared_variable: expression}`` (or pairs), added to the default
        updates found in the graph.
    rebuild_strict
        Keep every rebuilt node's input types (``True``) or let nodes infer
        new output types from replaced inputs (``False``).
    copy_inputs_over
        Keep the graph's root variables (``True``) or clone them.
    no_default_updates
        ``True``: ignore every ``default_update``; a list: ignore those of
        the listed shared variables.

    Returns
    -------
    ``(input_variables, cloned_outputs, (clone_d, update_d, update_expr, shared_inputs))``
    """
    if clone_inner_graphs is not None:
        import warnings

        warnings.warn(
            "The 'clone_inner_graphs' argument is deprecated and has no effect: inner graphs "
            "are immutable and shared by copies",
            FutureWarning,
            stacklevel=2,
        )
    col = _Collector(rebuild_strict, copy_inputs_over, no_default_updates)
    clone_d = col.clone_d

    for old, new in _pairs(replace, "replace/givens"):
        if not isinstance(old, Variable):
            raise TypeError(f"The keys of `givens`/`replace` must be Variables, got {old!r}")
        if not isinstance(new, Variable):
            new = shared(new)
        if old in clone_d:
            raise AssertionError(
                f"{old} is to be replaced by {new}, but it was already used to build another "
                "replacement; with several (old, new) pairs, no `new` may depend on an `old` "
                "(e.g. givens={a: b, b: a + 1} is not allowed)"
            )
        clone_d[old] = col.copy(new)

    input_variables = []
    for inp in inputs or []:
        if not isinstance(inp, Variable):
            raise TypeError(f"inputs must be Variables, got {inp!r}")
        input_variables.append(clone_d.setdefault(inp, inp if copy_inputs_over else inp.clone()))
    for v in input_variables:
        if isinstance(v, SharedVariable):
            raise TypeError(
                f"The shared variable {v} cannot be an explicit input: its value is its own. "
                "Substitute a non-shared variable for it with `givens` instead"
            )

    for target, value in _pairs(updates, "updates"):
        if not isinstance(target, SharedVariable):
            raise TypeError(f"The target of an update must be a SharedVariable, got {target!r}")
        if target in col.update_d:
            raise ValueError(
                f"The shared variable {target} already has the update {col.update_d[target]}"
            )
        try:
            value = target.type.filter_variable(value, allow_convert=True)
        except TypeError:
            raise TypeError(
                "An update must have the same type as the original shared variable "
                f"(shared_var={target}, shared_var.type={target.type}, update_val={value}, "
                f"update_val.type={getattr(value, 'type', None)})"
            ) from None
        col.update_d[target] = value
        col.update_expr.append((target, value))

    def rebuild_one(o):
        if isinstance(o, Out):
            return Out(col.copy(o.variable), borrow=o.borrow)
        if isinstance(o, Variable):
            return col.copy(o)
        raise TypeError(f"Outputs must be Variables or Out instances, got {o!r} of type {type(o)}")

    if isinstance(outputs, (list, tuple)):
        cloned_outputs = [rebuild_one(o) for o in outputs]
    elif outputs is None:
        cloned_outputs = []
    else:
        cloned_outputs = rebuild_one(outputs)

    # Rebuilding an update may reveal more shared variables (and their
    # default updates): ``update_expr`` grows while it is walked.
    i = 0
    while i < len(col.update_expr):
        target, value = col.update_expr[i]
        col.update_d[target] = col.copy(value)
        if target not in col.shared_inputs:
            col.shared_inputs.append(target)
        i += 1

    return input_variables, cloned_outputs, (clone_d, col.update_d, col.update_expr, col.shared_inputs)


__all__ = ["rebuild_collect_shared"]
