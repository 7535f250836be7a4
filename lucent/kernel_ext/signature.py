"""What a ``%%graph`` cell compiles into: its outputs, inputs and updates.

A cell states only what to compute (its last expression) and, optionally,
how shared state changes (``updates``). The rest of ``lucent.function``'s
arguments is implied by the graph: the inputs are its free symbolic
variables, taken in the order they were created, which is the order the
user wrote them in. ``--inputs`` overrides that order by naming them.

Everything is checked here, before compiling, so a mistake is reported in
the cell's terms (which line, which name, what it evaluated to) rather
than as an error from deep inside the compiler.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from IPython.core.error import UsageError

from lucent.compile.io import SymbolicOutput
from lucent.compile.sharedvalue import SharedVariable
from lucent.graph.basic import Constant, Variable
from lucent.graph.traversal import ancestors, graph_inputs
from lucent.kernel_ext.cell import NO_VALUE, describe_value

EXPECTED_OUTPUT = (
    "expected a symbolic variable (such as x ** 2 after x = dvector('x')), or a tuple/list "
    "of them, as the cell's last expression: it is what the function computes"
)
UPDATES_SHAPE = (
    "updates must be a dict {shared_var: new_value} or a list of (shared_var, new_value) pairs"
)


class CellGraph:
    """The arguments of ``lucent.function`` that a cell describes.

    ``outputs`` is one output or a list of them (then the function returns
    a list); ``updates`` a list of ``(shared_variable, new_value)`` pairs;
    ``output_line`` the cell line of the last expression, which compile
    errors point at.
    """

    def __init__(self, inputs, outputs, updates, output_line):
        self.inputs = inputs
        self.outputs = outputs
        self.updates = updates
        self.output_line = output_line


def cell_graph(run, input_names=None, require_updates=False):
    """The ``CellGraph`` of a run cell.

    ``input_names`` (from ``--inputs``) names the inputs in order; ``None``
    takes the graph's free variables in creation order. With
    ``require_updates`` (``--updates``) the cell must assign ``updates``.
    Raises ``GraphCellError`` for problems in the cell and ``UsageError``
    for ``--inputs`` names that do not fit the cell.
    """
    outputs, output_line = _outputs(run)
    updates = _updates(run, require_updates)
    out_vars = [o.variable if isinstance(o, SymbolicOutput) else o for o in _as_list(outputs)]
    roots = out_vars + [new for _, new in updates if isinstance(new, Variable)]
    free = free_inputs(roots)
    if input_names is None:
        inputs = free
    else:
        inputs = _named_inputs(run, input_names, free, roots)
    return CellGraph(inputs, outputs, updates, output_line)


def compile_cell_graph(run, graph, name, mode=None, profile=False):
    """``lucent.function`` of ``graph``; its failures become ``GraphCellError``."""
    import lucent

    try:
        return lucent.function(
            graph.inputs,
            graph.outputs,
            mode=mode,
            updates=graph.updates or None,
            name=name,
            profile=True if profile else None,
        )
    except Exception as e:
        raise run.error(
            f"compiling it into {name} failed: {type(e).__name__}: {e}", graph.output_line
        ) from e


# --- outputs ------------------------------------------------------------------------
def _is_output(value):
    return isinstance(value, (Variable, SymbolicOutput))


def _as_list(outputs):
    return outputs if isinstance(outputs, list) else [outputs]


def _outputs(run):
    last = run.last_statement
    if last is None:
        raise run.error(f"the %%graph cell is empty; {EXPECTED_OUTPUT}")
    if run.value is NO_VALUE:
        target = None
        if isinstance(last, ast.Assign) and len(last.targets) == 1:
            target = last.targets[0]
        elif isinstance(last, (ast.AnnAssign, ast.AugAssign)):
            target = last.target
        hint = f" (add a last line `{target.id}` to compile it)" if isinstance(target, ast.Name) else ""
        raise run.error(
            f"the cell ends with a statement, not an expression{hint}; {EXPECTED_OUTPUT}",
            last.lineno,
        )
    value = run.value
    if isinstance(value, (tuple, list)):
        kind = type(value).__name__
        if not value:
            raise run.error(f"the last expression evaluated to an empty {kind}; {EXPECTED_OUTPUT}", last.lineno)
        for k, item in enumerate(value):
            if not _is_output(item):
                raise run.error(
                    f"item {k} of the {kind} the last expression evaluated to is "
                    f"{describe_value(item)}, not a symbolic variable; {EXPECTED_OUTPUT}",
                    last.lineno,
                )
        return list(value), last.lineno
    if not _is_output(value):
        raise run.error(
            f"the last expression evaluated to {describe_value(value)}; {EXPECTED_OUTPUT}",
            last.lineno,
        )
    return value, last.lineno


# --- updates ------------------------------------------------------------------------
def _updates(run, required):
    if "updates" not in run.assigned or "updates" not in run.namespace:
        if required:
            detail = f"--updates was given but the cell does not assign `updates`; {UPDATES_SHAPE}"
            if "updates" in run.namespace:
                detail += " (an `updates` defined outside the cell is not used)"
            raise run.error(detail)
        return []
    value = run.namespace["updates"]
    line = run.assignment_line("updates")
    if value is None:
        if required:
            raise run.error(f"--updates was given but `updates` is None; {UPDATES_SHAPE}", line)
        return []
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, (list, tuple)):
        pairs = []
        for k, item in enumerate(value):
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise run.error(
                    f"item {k} of updates is {_describe(run, item)}, not a (shared_var, "
                    f"new_value) pair; {UPDATES_SHAPE}",
                    line,
                )
            pairs.append(tuple(item))
    else:
        raise run.error(f"updates is {describe_value(value)}; {UPDATES_SHAPE}", line)
    seen = []
    for target, new in pairs:
        if not isinstance(target, SharedVariable):
            raise run.error(
                f"updates: {_describe(run, target)} is not a shared variable, so it cannot be "
                "updated; only variables made with shared(value) keep state between calls",
                line,
            )
        if any(target is s for s in seen):
            raise run.error(
                f"updates gives {_label(run, target)} more than one new value; give it one", line
            )
        seen.append(target)
        _check_update_type(run, target, new, line)
    return pairs


def _check_update_type(run, target, new, line):
    label = _label(run, target)
    if isinstance(new, Variable):
        try:
            target.type.filter_variable(new, allow_convert=True)
        except TypeError:
            raise run.error(
                f"updates: the new value for {label} has type {new.type}, but {label} has type "
                f"{target.type}; an update must keep the shared variable's type (dtype and "
                "number of dimensions)",
                line,
            ) from None
        return
    try:
        target.type.filter_variable(new)
    except (TypeError, ValueError) as e:
        raise run.error(
            f"updates: the new value {describe_value(new)} for {label} cannot be converted to "
            f"its type {target.type}: {e}",
            line,
        ) from e


# --- inputs -------------------------------------------------------------------------
def _creation_number(var):
    """The counter in ``auto_name`` (``auto_<n>``): variables are numbered as they are made."""
    try:
        return int(var.auto_name.rsplit("_", 1)[1])
    except (AttributeError, IndexError, ValueError):
        return -1


def _is_free(var):
    """A graph input the caller must supply: no owner, no storage, not fixed, no default value."""
    return (
        var.owner is None
        and not isinstance(var, (SharedVariable, Constant))
        and getattr(var, "data", None) is None
    )


def free_inputs(roots):
    """The free symbolic variables ``roots`` depend on, in the order they were created."""
    return sorted((v for v in graph_inputs(roots) if _is_free(v)), key=_creation_number)


def _not_an_input(value):
    """Why ``value`` cannot be a function argument (a phrase), or ``None`` if it can."""
    if not isinstance(value, Variable):
        return f"{describe_value(value)}, not a symbolic variable"
    if isinstance(value, SharedVariable):
        return "a shared variable: the function reads its value by itself, so it is not an argument"
    if isinstance(value, Constant):
        return "a constant: its value is fixed in the graph, so it is not an argument"
    if value.owner is not None:
        return f"computed from other variables (by {value.owner.op}), not a root variable"
    return None


def _names_of(run, var):
    """The names the cell's namespace binds to ``var`` (the cell's own first)."""
    names = [n for n, v in run.namespace.items() if v is var and not n.startswith("_")]
    return sorted(names, key=lambda n: n not in run.assigned)


def _label(run, var):
    names = _names_of(run, var)
    return names[0] if names else (var.name or str(var))


def _describe(run, value):
    """``value`` for an error message, a variable by the name the cell gives it."""
    if isinstance(value, Variable):
        return f"{_label(run, value)} ({type(value).__name__})"
    return describe_value(value)


def _defined_variables(run, free):
    """A sentence listing the symbolic root variables the cell defines or uses."""
    found = {}
    for name in run.assigned:
        value = run.namespace.get(name)
        if isinstance(value, Variable) and _not_an_input(value) is None:
            found.setdefault(id(value), (value, name))
    for var in free:
        found.setdefault(id(var), (var, _label(run, var)))
    if not found:
        return "The cell defines no symbolic variables."
    ordered = sorted(found.values(), key=lambda pair: _creation_number(pair[0]))
    return "The symbolic variables the cell defines: " + ", ".join(name for _, name in ordered)


def _named_inputs(run, names, free, roots):
    chosen = []
    for name in names:
        if name not in run.namespace:
            raise UsageError(
                f"%%graph --inputs: unknown name {name!r}: the cell defines no variable of that "
                f"name. {_defined_variables(run, free)}"
            )
        value = run.namespace[name]
        problem = _not_an_input(value)
        if problem is not None:
            raise UsageError(
                f"%%graph --inputs: {name} is {problem}. --inputs names the symbolic root "
                f"variables (such as x = dvector('x')) the function takes as arguments. "
                f"{_defined_variables(run, free)}"
            )
        for other, var in zip(names, chosen):
            if var is value:
                raise UsageError(
                    f"%%graph --inputs: {name} and {other} are the same variable; list it once"
                )
        chosen.append(value)
    missing = [v for v in free if not any(v is c for c in chosen)]
    if missing:
        missing_names = [_label(run, v) for v in missing]
        raise UsageError(
            f"%%graph --inputs {','.join(names)} leaves out {', '.join(missing_names)}, which the "
            f"outputs depend on; list every symbolic input, e.g. --inputs "
            f"{','.join(list(names) + missing_names)}"
        )
    used = set(ancestors(roots))
    unused = [name for name, var in zip(names, chosen) if var not in used]
    if unused:
        raise UsageError(
            f"%%graph --inputs: no output or update depends on {', '.join(unused)}; "
            "remove it from --inputs"
        )
    return chosen
