"""Reverse mode: ``grad``, ``pullback`` and ``subgraph_grad``.

``grad(cost, wrt)`` walks the graph from ``cost`` back to ``wrt`` in reverse
topological order. Each Apply node is asked, through its op's pull-back
(``pullback``, or ``L_op(inputs, outputs, output_grads)``), for the
gradient of the cost with respect to its inputs given the gradients with
respect to its outputs. Contributions reaching a variable along several
paths are added.
"""

from __future__ import annotations

import warnings

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Variable
from lucent.graph.traversal import io_toposort
from lucent.graph.utils import building_backward
from lucent.gradient.types import (
    DisconnectedInputError,
    NullTypeGradError,
    _connected_ancestors,
    _disconnected_message,
    _is_disconnected,
    _is_null,
    _match_tangent_dtype,
    _op_pullback,
    _zeros_for,
    disconnected_type,
)
from lucent.scalar.dtypes import continuous_dtypes, discrete_dtypes

@building_backward
def grad(
    cost,
    wrt,
    consider_constant=None,
    disconnected_inputs="raise",
    add_names=True,
    known_grads=None,
    return_disconnected="zero",
    null_gradients="raise",
):
    """Symbolic gradient of the 0-d ``cost`` with respect to ``wrt``.

    Parameters
    ----------
    cost
        A 0-d variable, or None when ``known_grads`` gives the starting gradients.
    wrt
        A variable or a list/tuple of variables; the result has the same form.
    consider_constant
        Variables treated as constants: no gradient flows through them.
    disconnected_inputs
        What to do when the cost does not depend on an element of ``wrt``:
        ``'raise'`` (default), ``'warn'`` or ``'ignore'``.
    add_names
        Name each gradient ``(d<cost>/d<var>)`` when the cost and the variable have names.
    known_grads
        ``{variable: gradient}`` to start from, in addition to (or instead of)
        the cost; a gradient given for the cost itself replaces the ones.
    return_disconnected
        What to return for a disconnected ``wrt``: ``'zero'``, ``'none'`` or
        ``'disconnected'`` (a ``DisconnectedType`` variable).
    null_gradients
        ``'raise'`` if an undefined gradient is reached, ``'return'`` to return it.
    """
    from lucent.tensor.basic import constant
    from lucent.tensor.elemwise import Elemwise
    from lucent.scalar import basic as ps

    if cost is None and known_grads is None:
        raise ValueError("cost and known_grads can't both be None: give a cost, or known_grads to start from")
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"disconnected_inputs must be 'raise', 'warn' or 'ignore', got {disconnected_inputs!r}")
    if str(return_disconnected).lower() not in ("zero", "none", "disconnected"):
        raise ValueError(f"return_disconnected must be 'zero', 'none' or 'disconnected', got {return_disconnected!r}")
    return_disconnected = str(return_disconnected).lower()
    if null_gradients not in ("raise", "return"):
        raise ValueError(f"null_gradients must be 'raise' or 'return', got {null_gradients!r}")
    if cost is not None:
        if not isinstance(cost, Variable):
            raise TypeError(f"cost must be a Variable, got {cost!r}")
        if _is_null(cost):
            raise ValueError(f"Can't differentiate a NaN cost. Cost is NaN because {cost.type.why_null}")
        if getattr(cost.type, "ndim", 0) != 0:
            raise TypeError(
                f"Cost must be a scalar: got {cost} of type {cost.type}; "
                "take a sum or mean first, or pass known_grads"
            )

    single = not isinstance(wrt, (list, tuple))
    wrt_list = [wrt] if single else list(wrt)
    for w in wrt_list:
        if not isinstance(w, Variable):
            raise TypeError(f"grad: each wrt must be a Variable, got {w!r} ({type(w).__name__})")
    if consider_constant is not None:
        try:
            consider_constant = list(consider_constant)
        except TypeError:
            raise TypeError(
                f"consider_constant must be an iterable collection of Variables, got {type(consider_constant).__name__}"
            ) from None
        for c in consider_constant:
            if not isinstance(c, Variable):
                raise TypeError(f"Elements of consider_constant must be Variables, got {type(c).__name__}")

    blockers = set(consider_constant or ())
    seeds: dict = {}
    if cost is not None:
        dtype = cost.type.dtype if cost.type.dtype in continuous_dtypes else config.floatX
        # ones_like(cost): the seed keeps the cost's graph (and so its inputs) alive.
        seeds[cost] = Elemwise(ps.second)(cost, constant(np.ones((), dtype=dtype)))
    for var, g in (known_grads or {}).items():
        if not isinstance(var, Variable):
            raise TypeError(f"known_grads keys must be Variables, got {var!r}")
        if not hasattr(g, "type"):
            raise TypeError(
                f"output grads must be lucent variables: known_grads[{var}] is a {type(g).__name__}; "
                "it is ambiguous whether it should be made into a tensor or another type"
            )
        if not (_is_disconnected(g) or _is_null(g)):
            if "float" not in str(getattr(g.type, "dtype", "")):
                raise TypeError(
                    "Gradients must always be NullType, DisconnectedType, or continuous, but grad "
                    f"was given a known_grad of type {g.type} for {var}"
                )
            if var is cost and cost.type.dtype in continuous_dtypes:
                g = _match_tangent_dtype(cost, g)
        seeds[var] = g

    outputs = list(seeds)
    connected = _connected_ancestors(outputs, blockers)
    # Forward pass: which variables depend on some wrt (prunes useless work).
    wrt_set = set(wrt_list)
    order = io_toposort(list(blockers | set(v for v in connected if v.owner is None)), outputs)
    depends = set(wrt_set)
    for node in order:
        # A variable of consider_constant stops the walk *above* it (the
        # toposort does not enter its owner) but still receives its gradient.
        if node.inputs and any(i in depends for i in node.inputs):
            pattern = node.op.connection_pattern(node)
            for j, out in enumerate(node.outputs):
                if any(pattern[i][j] and inp in depends for i, inp in enumerate(node.inputs)):
                    depends.add(out)

    terms: dict = {}
    for var, g in seeds.items():
        terms.setdefault(var, []).append(g)
    cost_name = cost.name if add_names and cost is not None else None
    totals: dict = {}

    def total(var):
        if var in totals:
            return totals[var]
        ts = terms.get(var)
        result = None
        if ts:
            nulls = [t for t in ts if _is_null(t)]
            ts = [t for t in ts if not _is_disconnected(t)]
            if nulls:
                result = nulls[0]
            elif len(ts) == 1:
                result = ts[0]
            elif ts:
                from lucent.tensor.type import DenseTensorType, TensorType

                if any(isinstance(t.type, TensorType) and not isinstance(t.type, DenseTensorType) for t in ts):
                    # Tensors that are not dense arrays (sparse) add with their own ``+``.
                    result = ts[0]
                    for t in ts[1:]:
                        result = result + t
                else:
                    result = Elemwise(ps.add)(*ts)
        if result is not None and cost_name is not None and var.name is not None and var not in seeds:
            result.name = f"(d{cost_name}/d{var.name})"
        totals[var] = result
        return result

    for node in reversed(order):
        if not any(o in depends for o in node.outputs) or not any(i in depends for i in node.inputs):
            continue
        out_grads = []
        for o in node.outputs:
            g = total(o)
            out_grads.append(disconnected_type() if g is None else g)
        if all(_is_disconnected(g) for g in out_grads):
            continue
        pattern = node.op.connection_pattern(node)
        null = next((g for g in out_grads if _is_null(g)), None)
        if null is not None:
            in_grads = [null] * len(node.inputs)
        else:
            out_grads = [
                g if _is_disconnected(g) else _match_tangent_dtype(o, g)
                for o, g in zip(node.outputs, out_grads)
            ]
            in_grads = _op_pullback(node.op, list(node.inputs), list(node.outputs), out_grads)
            if in_grads is None:
                raise TypeError(f"{node.op}.pullback returned None; expected one gradient per input")
            in_grads = list(in_grads)
            if len(in_grads) != len(node.inputs):
                raise ValueError(
                    f"{node.op} returned {len(in_grads)} gradient terms for {len(node.inputs)} inputs"
                )
        for i, (inp, g) in enumerate(zip(node.inputs, in_grads)):
            if inp not in depends or g is None or _is_disconnected(g):
                continue
            if not builtins_any(pattern[i]):
                continue
            if _is_null(g):
                terms.setdefault(inp, []).append(g)
                continue
            g = _as_gradient_term(g, inp, node, i)
            terms.setdefault(inp, []).append(g)

    results = []
    for w in wrt_list:
        g = total(w) if w in connected else None
        if g is None:
            if disconnected_inputs == "raise":
                raise DisconnectedInputError(_disconnected_message(w))
            if disconnected_inputs == "warn":
                warnings.warn(_disconnected_message(w), stacklevel=2)
            if return_disconnected == "zero":
                results.append(_zeros_for(w))
            elif return_disconnected == "none":
                results.append(None)
            else:
                results.append(disconnected_type())
            continue
        if _is_null(g):
            if null_gradients == "raise":
                raise NullTypeGradError(f"`grad` encountered a NaN. {g.type.why_null}")
            results.append(g)
            continue
        if cost_name is not None and w.name and g.name is None:
            g.name = f"(d{cost_name}/d{w.name})"
        results.append(g)
    if single:
        return results[0]
    return tuple(results) if isinstance(wrt, tuple) else results


builtins_any = any


def _as_gradient_term(g, inp, node, i):
    """Check a gradient term returned by an op and give it the dtype of its input."""
    from lucent.tensor.basic import as_tensor_variable

    if not isinstance(g, Variable):
        g = as_tensor_variable(g)
    if not hasattr(g.type, "ndim") or not hasattr(inp.type, "ndim"):
        return g  # scalar (or other non-tensor) graphs: the op's own types are kept
    if g.type.ndim != inp.type.ndim:
        raise ValueError(
            f"{node.op}.L_op returned a gradient with {g.type.ndim} dimensions for input "
            f"{i} ({inp}, type {inp.type}) which has {inp.type.ndim}"
        )
    # A gradient is always real-valued: that of an integer variable says how
    # the cost would change if the variable could change continuously, so it
    # keeps a float dtype; that of a float variable takes its dtype.
    target = inp.type.dtype if inp.type.dtype in continuous_dtypes else None
    if target is None and g.type.dtype in discrete_dtypes:
        target = config.floatX
    if target is not None and g.type.dtype != target:
        from lucent.tensor.math import cast
        from lucent.tensor.type import DenseTensorType, TensorType

        if isinstance(g.type, TensorType) and not isinstance(g.type, DenseTensorType):
            g = g.astype(target)  # sparse gradients are cast by their own op
        else:
            g = cast(g, target)
    return g


def as_list_or_tuple(use_list, use_tuple, outputs):
    """``outputs`` as a list, a tuple, or (neither flag) as the single object it holds.

    The gradient functions use it to answer in the form they were asked in:
    a list for a list, a tuple for a tuple, one variable for one variable.
    """
    if use_list and use_tuple:
        raise ValueError("as_list_or_tuple: use_list and use_tuple cannot both be True")
    is_seq = isinstance(outputs, (list, tuple))
    if use_list:
        return list(outputs) if is_seq else [outputs]
    if use_tuple:
        return tuple(outputs) if is_seq else (outputs,)
    if not is_seq:
        return outputs
    if len(outputs) != 1:
        raise ValueError(f"Wrong arguments; expected a one element list, got {len(outputs)} elements")
    return outputs[0]


_as_list_or_tuple = as_list_or_tuple


def _as_variables(xs):
    from lucent.tensor.basic import as_tensor_variable

    seq = xs if isinstance(xs, (list, tuple)) else [xs]
    return [x if isinstance(x, Variable) else as_tensor_variable(x) for x in seq]


def pullback(
    f,
    wrt,
    cotangents,
    consider_constant=None,
    disconnected_inputs="raise",
    return_disconnected="zero",
):
    """Vector-Jacobian product: ``sum_i cotangents[i] * d f[i] / d wrt[j]`` for each ``wrt[j]``.

    ``f`` and ``cotangents`` pair up (one cotangent, of the output's shape,
    per output). The result has the form of ``wrt``: one variable, a list
    or a tuple.
    """
    f_list = _as_variables(f)
    cot_list = _as_variables(cotangents)
    if len(f_list) != len(cot_list):
        raise ValueError(f"pullback needs one cotangent per output: got {len(f_list)} outputs and {len(cot_list)} cotangents")
    wrt_list = _as_variables(wrt)
    result = grad(
        cost=None,
        wrt=wrt_list,
        known_grads=dict(zip(f_list, cot_list)),
        consider_constant=consider_constant,
        disconnected_inputs=disconnected_inputs,
        return_disconnected=return_disconnected,
    )
    return _as_list_or_tuple(isinstance(wrt, list), isinstance(wrt, tuple), result)


def subgraph_grad(wrt, end, start=None, cost=None, details=False):
    """Gradients wrt ``wrt`` and the ``end`` variables, back-propagating no further than ``end``.

    Used to differentiate a graph piece by piece (layer by layer): ``start``
    maps variables to gradients already known (from the piece above), and
    ``cost`` adds a cost of this piece. The ``end`` variables are treated as
    constants; their gradients are returned too, to seed the next piece.
    Returns ``(wrt_grads, end_grads)``, plus ``(start_grads, cost_grads)``
    when ``details`` is true. Disconnected inputs get zeros.
    """
    if cost is None and start is None:
        raise ValueError("`cost` or `start` must be specified.")
    if not isinstance(end, list):
        raise TypeError(f"`end` must be a list, got {type(end).__name__}")
    if not isinstance(wrt, list):
        raise TypeError(f"`wrt` must be a list, got {type(wrt).__name__}")
    if start is not None and not isinstance(start, dict):
        raise TypeError(f"`start` must be a dictionary, got {type(start).__name__}")
    params = list(dict.fromkeys(wrt + end))
    start_grads = cost_grads = None
    if start is not None:
        start_grads = list(grad(None, params, known_grads=start, consider_constant=end, disconnected_inputs="ignore"))
    if cost is not None:
        cost_grads = list(grad(cost, params, consider_constant=end, disconnected_inputs="ignore"))
    if start_grads is None:
        grads = cost_grads
    else:
        grads = list(start_grads)
        if cost_grads is not None:
            grads = [a + b for a, b in zip(grads, cost_grads)]
    by_param = dict(zip(params, grads))
    wrt_grads = [by_param[k] for k in wrt]
    end_grads = [by_param[k] for k in end]
    if details:
        return wrt_grads, end_grads, start_grads, cost_grads
    return wrt_grads, end_grads
