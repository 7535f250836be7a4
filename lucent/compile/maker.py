"""``function``: the user's entry point for compiling a graph.

``function`` turns what the user wrote (variables, ``In``/``Out``, tuple
shortcuts, ``updates``, ``givens``) into what ``FunctionMaker`` needs: a
list of ``In`` in which every shared variable the graph uses is an implicit
input backed by its own container (with its update, explicit or default),
and outputs whose graphs have the ``givens`` substituted.
"""

from __future__ import annotations

from collections.abc import Mapping

from lucent.compile.function_module import FunctionMaker
from lucent.compile.io import In, SymbolicOutput, normalize_input, normalize_output
from lucent.compile.sharedvalue import SharedVariable
from lucent.graph.basic import Constant, Variable
from lucent.graph.traversal import graph_inputs


def _pairs(obj, what):
    if obj is None:
        return []
    if isinstance(obj, Mapping):
        return list(obj.items())
    if isinstance(obj, (list, tuple)):
        pairs = []
        for item in obj:
            if not isinstance(item, (list, tuple)) or len(item) != 2:
                raise TypeError(f"{what} must be a dict or a list of (variable, value) pairs; got {item!r}")
            pairs.append(tuple(item))
        return pairs
    raise TypeError(f"{what} must be a dict or a list of pairs, got {type(obj).__name__}")


def _check_update(shared_var, update):
    """The update expression converted to the shared variable's type, or a TypeError."""
    if not isinstance(shared_var, SharedVariable):
        raise TypeError(
            f"updates: the target {shared_var!r} is not a shared variable; only shared "
            "variables (made with lucent.shared) can be updated"
        )
    if not isinstance(update, Variable):
        try:
            return shared_var.type.filter_variable(update)
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"The update value {update!r} for the shared variable {shared_var} cannot be "
                f"converted to its type {shared_var.type}: {e}"
            ) from None
    try:
        if not shared_var.type.in_same_class(update.type):
            raise TypeError("not in the same class")
        return shared_var.type.filter_variable(update, allow_convert=True)
    except TypeError:
        raise TypeError(
            "An update must have the same type as the original shared variable "
            f"(shared_var={shared_var}, shared_var.type={shared_var.type}, "
            f"update_val={update}, update_val.type={update.type}). Cast the update "
            "expression to the shared variable's dtype and number of dimensions, with "
            "the same broadcastable (static size 1) dimensions."
        ) from None


def _check_givens(givens, explicit_inputs=(), strict=True):
    """``givens`` as checked ``(old, new)`` pairs.

    An explicit input cannot be replaced: its value comes from the caller,
    so a replacement would silently ignore the argument. With
    ``strict=False`` (``rebuild_strict=False``) the replacement may have
    another type; the graph is rebuilt and each node infers its new type.
    """
    checked = []
    for old, new in _pairs(givens, "givens"):
        if not isinstance(old, Variable):
            raise TypeError(f"givens keys must be Variables, got {old!r}")
        if isinstance(old, Constant):
            raise TypeError(f"givens cannot replace the constant {old}")
        if old in explicit_inputs:
            raise RuntimeError(
                f"givens tries to replace {old}, which is an input of the function: its value "
                "is given at each call. Remove it from the inputs, or from givens."
            )
        if not strict and isinstance(new, Variable):
            checked.append((old, new))
            continue
        try:
            new = old.type.filter_variable(new)
        except TypeError:
            raise TypeError(
                f"givens: the replacement {new} (type {getattr(new, 'type', type(new).__name__)}) "
                f"for {old} does not have its type {old.type}"
            ) from None
        checked.append((old, new))
    return checked


def function(
    inputs,
    outputs=None,
    mode=None,
    updates=None,
    givens=None,
    no_default_updates=False,
    accept_inplace=False,
    name=None,
    rebuild_strict=True,
    allow_input_downcast=None,
    profile=None,
    on_unused_input=None,
    trust_input=False,
):
    """Compile ``outputs`` as a function of ``inputs``.

    Parameters
    ----------
    inputs
        List of Variables, ``In`` instances or tuple shortcuts (see
        ``lucent.compile.io.normalize_input``).
    outputs
        ``None``, a Variable / ``Out`` (the function returns one value) or a
        list of them (it returns a list).
    mode
        A ``Mode`` or mode name; default ``config.mode``.
    updates
        Dict or list of ``(shared_variable, expression)``: after each call
        the shared variable takes the expression's value.
    givens
        Dict or list of ``(variable, replacement)`` substituted in the graph
        before compiling.
    no_default_updates
        True, or a list of shared variables whose ``default_update`` is not
        applied.
    allow_input_downcast
        Let arguments be cast with loss of precision (default: only Python
        floats to floatX).
    on_unused_input
        ``"raise"`` (default from config), ``"warn"`` or ``"ignore"`` for
        inputs no output depends on.
    trust_input
        Skip argument checks and conversion at call time (faster; the
        caller guarantees the values are right).
    """
    if not isinstance(no_default_updates, (bool, list, tuple, set, frozenset)) or (
        not isinstance(no_default_updates, bool)
        and not all(isinstance(v, SharedVariable) for v in no_default_updates)
    ):
        raise TypeError(
            "no_default_updates must be True, False, or a list of shared variables whose "
            f"default_update is not applied; got {no_default_updates!r}"
        )
    if not isinstance(inputs, (list, tuple)):
        raise TypeError(
            "The inputs of function must be given in a list or tuple, "
            f"got {type(inputs).__name__}"
        )
    if isinstance(outputs, dict):
        raise TypeError("outputs must be None, a Variable, an Out, or a list of them, not a dict")
    ins = [normalize_input(i) for i in inputs]
    for k, inp in enumerate(ins):
        if isinstance(inp.variable, SharedVariable) and inp.value is None:
            raise TypeError(
                f"Cannot use a shared variable ({inp.variable}) as explicit input "
                f"(input {k}). Consider substituting a non-shared variable via the "
                "`givens` parameter"
            )
        if inp.allow_downcast is None:
            inp.allow_downcast = allow_input_downcast

    single = outputs is not None and not isinstance(outputs, (list, tuple))
    outs = [] if outputs is None else [normalize_output(o) for o in (outputs if not single else [outputs])]

    update_pairs = []
    seen_targets = set()
    for target, expr in _pairs(updates, "updates"):
        expr = _check_update(target, expr)
        if target in seen_targets:
            raise ValueError(f"The shared variable {target} is given more than one update")
        seen_targets.add(target)
        update_pairs.append((target, expr))
    given_pairs = _check_givens(givens, {i.variable for i in ins}, rebuild_strict)

    # Substitute givens in every expression that will be compiled.
    if given_pairs:
        ins, outs, update_pairs = _apply_givens(ins, outs, update_pairs, given_pairs, rebuild_strict)

    explicit = {i.variable for i in ins}
    implicit = _implicit_inputs(ins, outs, update_pairs, explicit, no_default_updates, given_pairs, rebuild_strict)

    if single:
        out_spec = outs[0]
    elif outputs is None:
        out_spec = None
    else:
        out_spec = outs
    from lucent.compile.collector import collector_paused
    from lucent.progress import compiling

    with compiling(repr(name) if name else "a function"), collector_paused():
        maker = FunctionMaker(
            ins + implicit,
            out_spec,
            mode=mode,
            accept_inplace=accept_inplace,
            profile=profile,
            on_unused_input=on_unused_input,
            name=name,
            trust_input=trust_input,
        )
        return maker.create()


def _apply_givens(ins, outs, update_pairs, given_pairs, strict):
    from lucent.graph.replace import clone_replace

    exprs = [o.variable for o in outs]
    exprs += [i.update for i in ins if i.update is not None]
    exprs += [e for _, e in update_pairs]
    if not exprs:
        return ins, outs, update_pairs
    rebuilt = iter(clone_replace(exprs, dict(given_pairs), strict=strict))
    new_outs = [SymbolicOutput(next(rebuilt), borrow=o.borrow) for o in outs]
    for inp in ins:
        if inp.update is not None:
            inp.update = next(rebuilt)
    new_updates = [(t, next(rebuilt)) for t, _ in update_pairs]
    return ins, new_outs, new_updates


def _implicit_inputs(ins, outs, update_pairs, explicit, no_default_updates, given_pairs, strict):
    """In instances for the shared variables (and valued inputs) the graph needs."""
    updates = dict(update_pairs)
    roots = [o.variable for o in outs] + [i.update for i in ins if i.update is not None]
    roots += [e for _, e in update_pairs]
    order = []  # shared variables in the order found
    found = set()
    # Update targets are inputs even if nothing reads them.
    pending = [t for t, _ in update_pairs]
    while True:
        for var in graph_inputs(roots, blockers=explicit) + pending:
            if var in explicit or var in found or isinstance(var, Constant):
                continue
            if isinstance(var, SharedVariable) or getattr(var, "data", None) is not None:
                found.add(var)
                order.append(var)
        pending = []
        added = []
        for var in order:
            if not isinstance(var, SharedVariable) or var in updates:
                continue
            default = getattr(var, "default_update", None)
            if default is None or _no_default(var, no_default_updates):
                continue
            default = _check_update(var, default)
            if given_pairs:
                from lucent.graph.replace import clone_replace

                default = clone_replace(default, dict(given_pairs), strict=strict)
            updates[var] = default
            added.append(default)
        if not added:
            break
        roots = added
    result = []
    for var in order:
        if isinstance(var, SharedVariable):
            result.append(
                In(var, value=var.container, update=updates.get(var), implicit=True,
                   mutable=False, shared=True)
            )
        else:
            # A graph input with a value of its own (lucent.tensor.value) that
            # the user did not list: its value is used.
            result.append(In(var, value=var.data, implicit=True))
    return result


def _no_default(var, no_default_updates):
    if no_default_updates is True:
        return True
    if not no_default_updates:
        return False
    return var in list(no_default_updates)


__all__ = ["function"]


# PyTensor's ``pytensor.compile.maker`` also holds the compiler and its errors.
from lucent.compile.function_module import FunctionMaker, UnusedInputError  # noqa: E402

__all__ += ["FunctionMaker", "UnusedInputError"]
