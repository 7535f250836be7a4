"""A low-overhead ``Function.__call__`` for graphs compiled into one function.

``Function.__call__`` is general: it binds keyword arguments, stores each
value in its container, runs the linked graph that reads the containers,
and copies what the call plan says. When the linker produced a single
compiled callable (the Numba linker's ``GraphProgram``), almost all of
that can be decided once, when the function is made:

* which arguments go to the compiled function, in which order, and which
  values come from shared variables' cells;
* which outputs and update values are copied: the function's ``CallPlan``
  (``lucent.compile.call_plan``), the same plan the general call follows;
* how to check an argument: a value that is already an ndarray of the
  exact dtype and rank (and matching static shape) is used as is, anything
  else goes through ``Type.filter`` (with the usual error messages).

``make_fast_function_class`` generates the source of a ``__call__``
specialised to one Function and returns a ``Function`` subclass using it.
Calls it does not cover (keyword arguments, omitted arguments with
defaults, ``output_subset``) go through the general ``Function.__call__``,
which runs the ``Linked`` graph and keeps every semantic. The generated call
keeps the same promises: updates are written only after every output and
update value was computed, so a call that raises changes nothing.
"""

from __future__ import annotations

import numpy as np


def _filter_condition(name, type_):
    """A Python expression true when ``name`` can skip ``Type.filter``, or ``None``."""
    from lucent.tensor.type import TensorType

    if type(type_) is not TensorType or getattr(type_, "filter_checks_isfinite", False):
        return None
    parts = [f"{name}.__class__ is _nd", f"{name}.dtype is _dt_{type_.dtype}", f"{name}.ndim == {type_.ndim}"]
    for d, s in enumerate(type_.shape):
        if s is not None:
            parts.append(f"{name}.shape[{d}] == {s}")
    return " and ".join(parts)


def make_fast_function_class(base, maker, program, input_storage, plan):
    """A subclass of ``base`` whose ``__call__`` runs ``program`` directly, or ``None``.

    ``None`` when the function's inputs need the general call on every call
    (a positional input with an update or a user-shared container: its
    value must persist in the container) or when profiling.
    """
    inputs = maker.inputs
    fgraph = maker.fgraph
    if maker.profile or program is None:
        return None
    positional = [k for k, i in enumerate(inputs) if not i.implicit]
    for k in positional:
        inp = inputs[k]
        if inp.update is not None or inp.shared or inp.variable.owner is not None:
            return None
        from lucent.link.basic import Container

        if isinstance(inp.value, Container) or hasattr(inp.value, "container"):
            return None

    if plan.aliasable_input_groups:
        return None  # arguments must be checked for aliasing on every call
    n_out = len(maker.outputs)
    from lucent.link.numba.linker import annotate_graph_error

    ns = {
        "_nd": np.ndarray,
        "_graph": program.fn,
        "_general": base.__call__,
        "_copy": _copy,
        "_annotate": annotate_graph_error,
    }
    lines = ["def __call__(self, *args, output_subset=None, **kwargs):"]
    # A function told to keep its values (``fn.vm.allow_gc = False``)
    # takes the general call, which leaves them in its storage.
    lines.append(
        f"    if kwargs or output_subset is not None or len(args) != {len(positional)}"
        " or not self.fn.allow_gc:"
    )
    lines.append("        return _general(self, *args, output_subset=output_subset, **kwargs)")
    value_of = {}
    if positional:
        names = [f"v{k}" for k in positional]
        lines.append(f"    {', '.join(names)}, = args")
        lines.append("    if not self.trust_input:")
        for k, name in zip(positional, names):
            type_ = inputs[k].variable.type
            cond = _filter_condition(name, type_)
            if cond is not None:
                ns[f"_dt_{type_.dtype}"] = np.dtype(type_.dtype)
                lines.append(f"        if not ({cond}):")
                lines.append(f"            {name} = self._filter({k}, {name})")
            else:
                lines.append(f"        {name} = self._filter({k}, {name})")
        lines.append("        pass")
        value_of.update(zip(positional, names))
    for k, inp in enumerate(inputs):
        if k not in value_of:
            ns[f"_cell{k}"] = input_storage[k].storage
            value_of[k] = f"_cell{k}[0]"

    call_args = [value_of[k] for k in program.arg_inputs]
    for j, value in enumerate(program.extra_args):
        ns[f"_x{j}"] = value
        call_args.append(f"_x{j}")
    if program.fn is not None:
        lines.append("    try:")
        lines.append(f"        r = _graph({', '.join(call_args)})")
        lines.append("    except Exception as e:")
        # The values of every graph input, so the error can name the failing node.
        ns["_fgraph"] = fgraph
        lines.append(f"        _annotate(e, _fgraph, [{', '.join(value_of[k] for k in range(len(inputs)))}])")
        lines.append("        raise")
        for j, conv in enumerate(program.result_converters):
            if conv is not None:
                ns[f"_conv{j}"] = conv
        for j, conv in enumerate(program.result_converters):
            value = "r" if program.n_results == 1 else f"r[{j}]"
            if conv is None:
                lines.append(f"    r{j} = {value}")
            elif getattr(conv, "zero_d", False):
                # usually already an ndarray: skip the call
                lines.append(f"    r{j} = {value}")
                lines.append(f"    if r{j}.__class__ is not _nd:")
                lines.append(f"        r{j} = _conv{j}(r{j})")
            else:
                lines.append(f"    r{j} = _conv{j}({value})")

    def source_of(p):
        kind, what = program.output_plan[p]
        if kind == "r":
            return f"r{what}"
        if kind == "i":
            return value_of[what]
        ns[f"_const{p}"] = what
        return f"_const{p}"

    out_names = []
    for j in range(n_out):
        expr = source_of(j)
        if plan.copy_output[j]:
            expr = f"_copy({expr})"
        lines.append(f"    o{j} = {expr}")
        out_names.append(f"o{j}")

    update_lines = []
    for u, k in enumerate(maker.update_inputs):
        expr = source_of(n_out + u)
        if plan.copy_update[u]:
            expr = f"_copy({expr})"
        ns[f"_cell{k}"] = input_storage[k].storage
        lines.append(f"    u{u} = {expr}")
        update_lines.append(f"    _cell{k}[0] = u{u}")
    lines.extend(update_lines)
    if maker.return_none:
        lines.append("    return None")
    elif maker.unpack_single:
        lines.append("    return o0")
    else:
        lines.append(f"    return [{', '.join(out_names)}]")
    source = "\n".join(lines) + "\n"
    exec(compile(source, "<lucent fast call>", "exec"), ns)
    call = ns["__call__"]
    call.source = source
    return type(base.__name__, (base,), {"__call__": call, "_fast_call_source": source, "__module__": base.__module__})


def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    import copy

    return copy.deepcopy(value)


__all__ = ["make_fast_function_class"]
