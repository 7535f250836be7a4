"""``scan``: build a loop from a Python function describing one step.

The step function is called once, on symbolic stand-ins for one step's
values (sequence slices, previous outputs at their taps, non-sequences); the
graph it returns becomes the inner graph of a ``Scan`` node (``op.py``).
What it returns is read as outputs, then updates of shared variables, then an
``until`` condition (each part optional, in that order).

Shared variables the step uses are found by walking its graph, so they need
not be listed. Those it *updates* become loop-carried states of the
``Scan`` and their new values come back in the updates dictionary.
"""

from __future__ import annotations

import warnings
from functools import reduce as _reduce

import numpy as np

from lucent.compile.sharedvalue import SharedVariable, collect_new_shareds
from lucent.graph.basic import Constant, Variable
from lucent.graph.fg import MissingInputError
from lucent.graph.replace import clone_replace
from lucent.graph.traversal import graph_inputs
from lucent.scan.op import Scan, ScanInfo
from lucent.scan.utils import expand_empty, safe_new, until


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _is_outputs(x):
    return isinstance(x, Variable) or (
        isinstance(x, (list, tuple)) and all(isinstance(v, Variable) for v in x)
    )


def _is_updates(x):
    if isinstance(x, dict):
        return True
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(
        isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], Variable) for p in x
    )


def _only_allowed(x):
    if isinstance(x, (list, tuple)):
        return all(_only_allowed(v) for v in x)
    if isinstance(x, dict):
        return all(_only_allowed(k) and _only_allowed(v) for k, v in x.items())
    return isinstance(x, (Variable, until))


def get_updates_and_outputs(ls):
    """Split what a step function returned into ``(condition, outputs, updates)``."""
    if not _only_allowed(ls):
        raise ValueError(
            "The step function of scan may only return Variables, lists/tuples of them, a dict "
            "of updates and an `until` condition; got "
            f"{ls!r}. Wrap constants with lucent.tensor.constant."
        )
    if isinstance(ls, until):
        return ls.condition, [], {}
    if _is_outputs(ls):
        return None, _as_list(ls), {}
    if _is_updates(ls):
        return None, [], dict(ls)
    bad = ValueError(
        "scan cannot read what the step function returned: "
        f"{ls!r}. Return outputs, then (optionally) an updates dict, then (optionally) until(cond)."
    )
    if not isinstance(ls, (list, tuple)) or len(ls) not in (2, 3):
        raise bad
    ls = list(ls)
    if len(ls) == 2:
        first, second = ls
        if _is_outputs(first) and _is_updates(second):
            return None, _as_list(first), dict(second)
        if _is_outputs(first) and isinstance(second, until):
            return second.condition, _as_list(first), {}
        if _is_updates(first) and isinstance(second, until):
            return second.condition, [], dict(first)
        if _is_updates(first) and _is_outputs(second):
            raise ValueError(
                "The step function of scan returned updates before outputs: return the outputs "
                "first, then the updates, then the until condition."
            )
        raise bad
    # between outputs and condition, an empty list/tuple is "no updates"
    no_updates = isinstance(ls[1], (list, tuple)) and len(ls[1]) == 0
    if _is_outputs(ls[0]) and (_is_updates(ls[1]) or no_updates) and isinstance(ls[2], until):
        return ls[2].condition, _as_list(ls[0]), dict(ls[1])
    raise bad


def _is_random_type(t):
    """Random generators are the usual non-tensor states; they are carried without a warning."""
    try:
        from lucent.tensor.random.type import RandomType
    except ImportError:
        return False
    return isinstance(t, RandomType)


def _check_update_inputs(roots, update_items, blockers, non_seqs, n_user):
    """Refuse an update expression that reads a variable the step was not given.

    A free variable of the step's *outputs* is taken in as a non-sequence; one
    that only an update of a shared variable reads is an error, as in
    PyTensor: pass it in ``non_sequences``.
    """
    update_ids = {id(u) for _, u in update_items}
    outs = [r for r in roots if id(r) not in update_ids]
    known = set(blockers) | set(non_seqs)
    known |= set(graph_inputs(outs, blockers=list(blockers))) if outs else set()
    for var, upd in update_items[:n_user]:
        if not isinstance(upd, Variable):
            continue
        for v in graph_inputs([upd], blockers=list(blockers)):
            if v in known or isinstance(v, (Constant, SharedVariable)):
                continue
            raise MissingInputError(
                f"scan: the update of {var} uses {v}, which is not an input of the step function. "
                "Please pass this variable to the scan's inner function. Do not forget to also "
                "pass it to the `non_sequences` attribute of scan.",
                variable=v,
            )


def _manage_output_api_change(outputs, updates, return_updates):
    if return_updates:
        warnings.warn(
            "Scan return signature will change. Updates dict will not be returned, only the "
            "first argument. Pass `return_updates=False` to conform to the new API and avoid "
            "this warning",
            DeprecationWarning,
            stacklevel=3,
        )
        return outputs, updates
    if updates:
        raise ValueError(
            f"return_updates=False but Scan produced updates {updates}. Make sure to use "
            "outputs_info to handle all recurrent states, and not rely on shared variable updates."
        )
    return outputs


def _normalise_outputs_info(outs_info):
    result = []
    for i, info in enumerate(outs_info):
        if info is None:
            result.append({})
            continue
        if not isinstance(info, dict):
            result.append({"initial": info, "taps": [-1]})
            continue
        unexpected = set(info) - {"initial", "taps", "inplace"}
        if unexpected:
            raise ValueError(f"These keys were unexpected in Scan outputs_info[{i}]: {unexpected}")
        info = dict(info)
        initial, taps = info.get("initial"), info.get("taps")
        if initial is None and taps is not None:
            raise ValueError(
                f"If you are using slices of an output you need to provide a initial state for it: {info}"
            )
        if initial is not None and taps is None:
            if "taps" in info:
                warnings.warn(
                    f"Output {getattr(initial, 'name', None)} (index {i}) has a initial state but "
                    "taps is explicitly set to None "
                )
            info["taps"] = [-1]
        elif taps is not None:
            taps = [int(t) for t in _as_list(taps)]
            if len(taps) != len(set(taps)):
                raise ValueError(f"All the taps must be different in `outputs_info`: {info}")
            if any(t >= 0 for t in taps):
                raise ValueError(f"All the tap values must be smaller than 0: {info}")
            info["taps"] = taps
        if info.get("initial") is None:
            info.pop("initial", None)
            info.pop("taps", None)
        result.append(info)
    return result


def scan(
    fn,
    sequences=None,
    outputs_info=None,
    non_sequences=None,
    n_steps=None,
    truncate_gradient=-1,
    go_backwards=False,
    mode=None,
    name=None,
    profile=False,
    allow_gc=None,
    strict=False,
    return_list=False,
    return_updates=True,
):
    """Apply ``fn`` repeatedly, step by step, and stack its results.

    Parameters
    ----------
    fn
        Called once with, in order: the slices of every sequence at each of its
        taps, the previous values of every recurrent output at each of its
        taps, and the non-sequences. Returns the outputs of one step
        (one per entry of ``outputs_info``), optionally followed by a dict of
        shared-variable updates and an ``until(condition)``.
    sequences
        Variables (or ``dict(input=var, taps=[...])``) iterated along axis 0;
        tap ``k`` gives ``seq[t + k]``. Default tap ``[0]``.
    outputs_info
        One entry per output: ``None`` (not fed back), an initial state (tap
        -1), or ``dict(initial=init, taps=[negative ints])`` where ``init``
        holds ``-min(taps)`` rows, oldest first.
    non_sequences
        Values passed unchanged to every step.
    n_steps
        Number of steps (int or integer scalar). Default: the length of the
        shortest sequence.
    truncate_gradient
        ``-1`` or the number of last steps the gradient goes back through.
    go_backwards
        Iterate over the sequences from their end.
    mode
        Mode of the inner graph on the reference path (deprecated, as in PyTensor).
    name
        Shown in printouts and profiles.
    profile, allow_gc
        Accepted for compatibility (the inner graph is profiled with the outer function).
    strict
        If True, every shared variable ``fn`` uses must be in ``non_sequences``.
    return_list
        Always return a list of outputs, even a single one.
    return_updates
        Return ``(outputs, updates)`` (default, deprecated) or only the outputs.
    """
    from lucent.tensor.basic import as_tensor_variable, cast, get_scalar_constant_value
    from lucent.tensor.exceptions import NotScalarConstantError
    from lucent.tensor.math import minimum
    from lucent.tensor.shape import shape_padleft
    from lucent.tensor.type import TensorType

    if mode is not None:
        warnings.warn(
            "The `mode` argument of `scan` is deprecated: the inner graph inherits the outer "
            "compilation. It is still honored on the reference path for now.",
            FutureWarning,
            stacklevel=2,
        )
    if not callable(fn):
        raise TypeError(f"scan: fn must be callable, got {fn!r}")

    seqs = _as_list(sequences)
    outs_info = _normalise_outputs_info(_as_list(outputs_info))
    non_seqs = [v if isinstance(v, Variable) else as_tensor_variable(v) for v in _as_list(non_sequences)]

    single_step = False
    if isinstance(n_steps, (int, float, np.integer)):
        single_step = n_steps == 1
    elif n_steps is not None:
        try:
            single_step = get_scalar_constant_value(n_steps) == 1
        except NotScalarConstantError:
            pass
    if hasattr(n_steps, "dtype") and not str(n_steps.dtype).startswith(("int", "uint")):
        raise ValueError(f" n_steps must be an int. dtype provided is {n_steps.dtype}")

    # --- sequences: one outer slice and one inner variable per tap -----------------
    scan_seqs, inner_seqs, inner_slices = [], [], []
    for i, seq in enumerate(seqs):
        if not isinstance(seq, dict):
            seq = {"input": seq, "taps": [0]}
        elif seq.get("taps") is None:
            seq = {**seq, "taps": [0]}
        if "input" not in seq:
            raise ValueError(f"scan: the dict of sequence {i} has no 'input' key: {seq}")
        taps = [int(t) for t in _as_list(seq["taps"])]
        source = as_tensor_variable(seq["input"])
        if source.type.ndim == 0:
            raise ValueError(f"scan: sequence {i} ({source}) is a scalar; a sequence needs an axis to iterate over")
        lo, hi = min(min(taps), 0), max(max(taps), 0)
        for k in taps:
            start = k - lo
            outer = source[start:] if k == hi else source[start : -(hi - k)]
            if go_backwards:
                outer = outer[::-1]
            inner = source[start].type()
            if source.name is not None:
                inner.name = source.name + ("[t]" if k == 0 else f"[t{k:+d}]")
                outer.name = source.name + (f"[{start}:]" if k == hi else f"[{start}:{-(hi - k)}]")
            scan_seqs.append(outer)
            inner_seqs.append(inner)
            inner_slices.append(source[start])

    if n_steps is None:
        if not scan_seqs:
            raise ValueError(
                "No information about the number of steps provided. Either provide a value for "
                "n_steps argument of scan or provide an input sequence."
            )
        actual_n_steps = _reduce(minimum, [s.shape[0] for s in scan_seqs])
    else:
        actual_n_steps = as_tensor_variable(n_steps)
        if actual_n_steps.type.ndim != 0:
            raise ValueError(f"scan: n_steps must be a scalar, got {actual_n_steps.type}")
        if actual_n_steps.type.dtype != "int64":
            actual_n_steps = cast(actual_n_steps, "int64")
    scan_seqs = [s[:actual_n_steps] for s in scan_seqs]

    # --- recurrent outputs ------------------------------------------------------
    state_args = []  # per output, the inner variables fn receives
    mit_sot, sit_sot, untraced = [], [], []  # (output index, outer input, inner vars, taps)
    for i, info in enumerate(outs_info):
        if "taps" not in info:
            state_args.append([])
            continue
        initial = info["initial"]
        if not isinstance(initial, Variable):
            initial = as_tensor_variable(initial)
        taps = info["taps"]
        if taps == [-1]:
            inner = initial.type() if isinstance(initial, Constant) else safe_new(initial)
            if getattr(info["initial"], "name", None) is not None:
                inner.name = info["initial"].name + "[t-1]"
            if isinstance(initial.type, TensorType):
                initial = as_tensor_variable(initial)
                sit_sot.append((i, expand_empty(shape_padleft(initial), actual_n_steps), [inner], (-1,), initial))
            else:
                if not _is_random_type(initial.type):
                    warnings.warn(
                        f"Output {initial} (index {i}) is not a tensor: only its last value is "
                        "kept (an untraced state)",
                        UserWarning,
                        stacklevel=2,
                    )
                untraced.append((i, initial, [inner], (-1,), initial))
            state_args.append([inner])
        else:
            initial = as_tensor_variable(initial)
            init_len = -min(taps)
            if initial.type.ndim == 0:
                raise ValueError(
                    f"scan: the initial state of output {i} with taps {taps} must hold {init_len} "
                    f"rows (oldest first), got the scalar {initial}"
                )
            inner_vars = []
            for k in taps:
                inner = initial[init_len + k].type()
                if initial.name is not None:
                    inner.name = initial.name + f"[t{k:+d}]"
                inner_vars.append(inner)
            mit_sot.append((i, expand_empty(initial[:init_len], actual_n_steps), inner_vars, tuple(taps), initial))
            state_args.append(inner_vars)

    if single_step:
        return _single_step(
            fn, inner_slices, outs_info, mit_sot, sit_sot, untraced, non_seqs,
            return_list, return_updates,
        )

    args = inner_seqs + [v for group in state_args for v in group] + non_seqs
    with collect_new_shareds() as new_shareds:
        condition, outputs, updates = get_updates_and_outputs(fn(*args))

    n_outs = len(outs_info)
    if outs_info and len(outputs) != n_outs:
        raise ValueError(
            f"Please provide None as outputs_info for any output that does not feed back into scan "
            f"(i.e. it behaves like a map): the step function returned {len(outputs)} outputs "
            f"for {n_outs} entries of outputs_info"
        )
    if not outs_info:
        outs_info = [{} for _ in outputs]
        state_args = [[] for _ in outputs]

    def fit(out, like, what):
        out = as_tensor_variable(out) if isinstance(like.type, TensorType) else out
        if out.type == like.type:
            return out
        if getattr(out.type, "dtype", None) != getattr(like.type, "dtype", None) or getattr(
            out.type, "ndim", None
        ) != getattr(like.type, "ndim", None):
            raise TypeError(
                f"The initial state (outputs_info in scan nomenclature) of {what} is of type "
                f"{like.type}, while the step function (fn) returns {out} of type {out.type}. "
                "Make the initial state's dtype and number of dimensions match the step's result "
                "(an upcast or downcast in fn causes this)."
            )
        try:
            return like.type.filter_variable(out)
        except TypeError:
            from lucent.tensor.shape import specify_shape

            return specify_shape(out, like.type.shape)

    mit_sot_outs = [fit(outputs[i], inner[0], f"output {i}") for i, _, inner, _, _ in mit_sot]
    sit_sot_outs = [fit(outputs[i], inner[0], f"output {i}") for i, _, inner, _, _ in sit_sot]
    untraced_outs = [fit(outputs[i], inner[0], f"output {i}") for i, _, inner, _, _ in untraced]
    nit_sot_idx = [i for i, info in enumerate(outs_info) if "taps" not in info]
    nit_sot_outs = [as_tensor_variable(outputs[i]) for i in nit_sot_idx]

    # --- shared variables and other free inputs of the step --------------------------
    update_items = []
    for var, upd in updates.items():
        if not isinstance(var, SharedVariable):
            raise TypeError(f"scan: updates may only be given for shared variables, got {var}")
        update_items.append((var, upd))
    roots = [*mit_sot_outs, *sit_sot_outs, *nit_sot_outs, *untraced_outs]
    roots += [u for _, u in update_items if isinstance(u, Variable)]
    if condition is not None:
        roots.append(condition)
    blockers = set(args)
    # Shared variables the step created with a default update (the generators
    # of random draws) are updated by the loop: each step's new value feeds the
    # next, and the last one is returned as the variable's update. Their
    # default update is cleared, since it is an expression of the step's
    # variables that cannot be evaluated outside the loop.
    local = set(new_shareds)
    pending = list(roots)
    while pending:
        found = []
        for v in graph_inputs(pending, blockers=list(blockers)):
            if (
                v in local
                and v.default_update is not None
                and v not in updates
                and v not in [u for u, _ in update_items]
            ):
                update_items.append((v, v.default_update))
                v.default_update = None
                found.append(update_items[-1][1])
        pending = [u for u in found if isinstance(u, Variable)]
        roots += pending
    update_vars = [var for var, _ in update_items]
    _check_update_inputs(roots, update_items, blockers, non_seqs, len(updates))
    free = [
        v
        for v in graph_inputs(roots, blockers=list(blockers))
        if v not in blockers and not isinstance(v, Constant)
    ]
    if strict:
        listed = set(non_seqs)
        missing = [v for v in free if isinstance(v, SharedVariable) and v not in listed and v not in update_vars]
        if missing:
            raise MissingInputError(
                f"scan(strict=True): the step function uses the shared variable(s) {missing} "
                "without them being in non_sequences. Pass them in non_sequences.",
                variable=missing[0],
            )
    replacements = {}
    shared_sit_sot, shared_untraced = [], []
    for var, upd in update_items:
        new = safe_new(var, "_copy")
        replacements[var] = new
        if isinstance(var.type, TensorType):
            upd = var.type.filter_variable(as_tensor_variable(upd))
            shared_sit_sot.append((var, new, upd))
        else:
            shared_untraced.append((var, new, upd))
    extra = [v for v in free if v not in replacements and v not in non_seqs]
    outer_non_seqs = [v for v in non_seqs + extra if not isinstance(v, Constant)]
    outer_non_seqs = list(dict.fromkeys(v for v in outer_non_seqs if v not in replacements))
    for v in outer_non_seqs:
        replacements[v] = safe_new(v, "_copy")

    inner_inputs = (
        inner_seqs
        + [v for _, _, inner, _, _ in mit_sot for v in inner]
        + [inner[0] for _, _, inner, _, _ in sit_sot]
        + [new for _, new, _ in shared_sit_sot]
        + [inner[0] for _, _, inner, _, _ in untraced]
        + [new for _, new, _ in shared_untraced]
        + [replacements[v] for v in outer_non_seqs]
    )
    inner_outs = (
        mit_sot_outs
        + sit_sot_outs
        + [u for _, _, u in shared_sit_sot]
        + nit_sot_outs
        + untraced_outs
        + [u for _, _, u in shared_untraced]
    )
    if condition is not None:
        inner_outs.append(condition)
    inner_outs = clone_replace(inner_outs, replace=replacements) if replacements else inner_outs
    # an inner output that is an outer variable itself (a non-sequence returned as is)
    inner_outs = [replacements.get(o, o) for o in inner_outs]

    info = ScanInfo(
        n_seqs=len(scan_seqs),
        mit_mot_in_slices=(),
        mit_mot_out_slices=(),
        mit_sot_in_slices=tuple(taps for _, _, _, taps, _ in mit_sot),
        sit_sot_in_slices=tuple((-1,) for _ in range(len(sit_sot) + len(shared_sit_sot))),
        n_nit_sot=len(nit_sot_outs),
        n_untraced_sit_sot=len(untraced) + len(shared_untraced),
        n_non_seqs=len(outer_non_seqs),
        as_while=condition is not None,
    )
    try:
        op = Scan(
            inner_inputs,
            inner_outs,
            info,
            mode=mode,
            truncate_gradient=truncate_gradient,
            name=name,
            profile=profile,
            allow_gc=True if allow_gc is None else allow_gc,
            strict=strict,
        )
    except MissingInputError as err:
        raise MissingInputError(
            f"{err.args[0]}\nPlease pass this variable to the scan's inner function. Do not forget "
            "to also pass it to the `non_sequences` attribute of scan."
        ) from err

    outer_inputs = (
        [actual_n_steps]
        + scan_seqs
        + [buf for _, buf, _, _, _ in mit_sot]
        + [buf for _, buf, _, _, _ in sit_sot]
        + [expand_empty(shape_padleft(var), actual_n_steps) for var, _, _ in shared_sit_sot]
        + [init for _, init, _, _, _ in untraced]
        + [var for var, _, _ in shared_untraced]
        + [actual_n_steps] * len(nit_sot_outs)
        + outer_non_seqs
    )
    outs = op(*outer_inputs, return_list=True)

    results = [None] * len(outs_info)
    pos = 0
    for i, _, _, taps, _ in mit_sot:
        results[i] = outs[pos][-min(taps):]
        pos += 1
    for i, _, _, _, _ in sit_sot:
        results[i] = outs[pos][1:]
        pos += 1
    update_map = {}
    for var, _, _ in shared_sit_sot:
        # the last of the steps' values, read as from the returned output (as PyTensor
        # does): the same expression as ``outputs[-1]`` of an explicit state
        update_map[var] = outs[pos][1:][-1]
        pos += 1
    for i in nit_sot_idx:
        results[i] = outs[pos]
        pos += 1
    for i, _, _, _, _ in untraced:
        results[i] = outs[pos]
        pos += 1
    for var, _, _ in shared_untraced:
        update_map[var] = outs[pos]
        pos += 1
    # updates in the order the step function gave them
    update_map = {var: update_map[var] for var in update_vars}
    results = [r for r in results if r is not None]
    if not return_list and len(results) == 1:
        results = results[0]
    elif not results:
        results = None
    return _manage_output_api_change(results, update_map, return_updates)


def _single_step(fn, inner_slices, outs_info, mit_sot, sit_sot, untraced, non_seqs,
                 return_list, return_updates):
    """``n_steps == 1``: no loop, ``fn`` applied to the first slices (outputs get a length-1 axis)."""
    from lucent.tensor.shape import shape_padleft
    from lucent.tensor.type import TensorType

    state_values = {}
    for i, _, inner, taps, initial in mit_sot:
        init_len = -min(taps)
        state_values[i] = [initial[init_len + k] for k in taps]
    for i, _, inner, _, initial in sit_sot + untraced:
        state_values[i] = [initial]
    args = list(inner_slices)
    for i in range(len(outs_info)):
        args += state_values.get(i, [])
    args += non_seqs
    condition, outputs, updates = get_updates_and_outputs(fn(*args))
    outputs = [shape_padleft(o) if isinstance(o.type, TensorType) else o for o in outputs]
    if not return_list and len(outputs) == 1:
        outputs = outputs[0]
    return _manage_output_api_change(outputs, updates, return_updates)


__all__ = ["scan"]
