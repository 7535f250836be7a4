"""Forward mode: ``pushforward`` (Jacobian-vector products) and the deprecated ``Rop`` / ``Lop``.

The push-forward is obtained by default from two pull-backs: the pull-back
is linear in its cotangents, so pulling it back once more, with respect to
those cotangents, transposes it (J. Towns, "A new trick for calculating
Jacobian vector products", 2017). Ops therefore only need a pull-back; an op
that defines ``pushforward`` (or a legacy ``R_op``) is used directly when
asked (``use_op_pushforward=True``).
"""

from __future__ import annotations

import warnings

from lucent.configdefaults import config
from lucent.graph.traversal import graph_inputs, io_toposort
from lucent.gradient.reverse import _as_list_or_tuple, _as_variables, grad, pullback
from lucent.gradient.types import (
    DisconnectedInputError,
    NullTypeGradError,
    _is_disconnected,
    _is_null,
    _match_tangent_dtype,
    _op_pullback,
    _overrides,
    disconnected_type,
)

# ---------------------------------------------------------------------------
# Pull-back and push-forward
# ---------------------------------------------------------------------------
def pushforward(
    f,
    wrt,
    tangents,
    disconnected_outputs="raise",
    return_disconnected="zero",
    use_op_pushforward=False,
):
    """Jacobian-vector product: ``sum_j d f[i] / d wrt[j] * tangents[j]`` for each ``f[i]``.

    ``wrt`` and ``tangents`` pair up. By default it is computed as the
    transpose of the pull-back (two pull-backs, see the module docstring), so
    every differentiable op supports it. ``use_op_pushforward=True`` walks the
    graph forwards instead and uses each op's own ``pushforward`` (or legacy
    ``R_op``); an op without one is pushed forward through its own pull-back,
    node by node. The result has the form of ``f``.
    """
    wrt_list = _as_variables(wrt)
    tan_list = _as_variables(tangents)
    f_list = _as_variables(f)
    if len(wrt_list) != len(tan_list):
        raise ValueError(f"`wrt` must be the same length as `tangents`: got {len(wrt_list)} and {len(tan_list)}")
    for i, (w, t) in enumerate(zip(wrt_list, tan_list)):
        wn, tn = getattr(w.type, "ndim", None), getattr(t.type, "ndim", None)
        if wn is not None and tn is not None and wn != tn:
            raise ValueError(
                f"Elements {i} of `wrt` and `tangents` have mismatched dimensionalities: {wn} and {tn}"
            )
    if use_op_pushforward:
        result = _pushforward_direct(f_list, wrt_list, tan_list, disconnected_outputs, return_disconnected)
    else:
        result = _pushforward_through_pullback(f_list, wrt_list, tan_list, disconnected_outputs, return_disconnected)
    return _as_list_or_tuple(isinstance(f, list), isinstance(f, tuple), result)


def _pushforward_through_pullback(outputs, inputs, tangents, disconnected_outputs, return_disconnected):
    """The push-forward as the pull-back of the pull-back, with respect to its cotangents.

    The cotangents are built with ``zeros_like`` of the outputs rather than
    as new root variables: they vanish from the final graph (the second
    pull-back does not depend on their value), and a graph without extra
    roots compiles without asking for them.
    """
    from lucent.tensor.creation import zeros_like

    cotangents = [zeros_like(out, dtype=config.floatX) for out in outputs]
    input_cotangents = pullback(
        outputs, inputs, cotangents, disconnected_inputs=disconnected_outputs, return_disconnected="zero"
    )
    return pullback(
        input_cotangents, cotangents, tangents, disconnected_inputs="ignore", return_disconnected=return_disconnected
    )


def _node_pushforward(node, tangents):
    """Output tangents of ``node`` given its input tangents (DisconnectedType = none)."""
    op = node.op
    if all(_is_disconnected(t) for t in tangents):
        return [disconnected_type() for _ in node.outputs]
    if _overrides(op, "pushforward"):
        return list(op.pushforward(list(node.inputs), list(node.outputs), tangents))
    if _overrides(op, "R_op"):
        points = [None if _is_disconnected(t) else t for t in tangents]
        result = op.R_op(list(node.inputs), points)
        return [disconnected_type() if r is None else r for r in result]
    # No forward rule: transpose this node's own pull-back.
    from lucent.tensor.creation import zeros_like

    outs = [o for o in node.outputs if hasattr(o.type, "dtype")]
    cots = [zeros_like(o, dtype=config.floatX) for o in outs]
    in_cots = _op_pullback(op, list(node.inputs), list(node.outputs), [
        cots[outs.index(o)] if o in outs else disconnected_type() for o in node.outputs
    ])
    known = {}
    for ic, t in zip(in_cots, tangents):
        if _is_disconnected(ic) or _is_disconnected(t):
            continue
        if _is_null(ic):
            raise NullTypeGradError(f"pushforward through {op} is undefined: {ic.type.why_null}")
        t = _match_tangent_dtype(ic, t)
        # A pull-back may give several inputs the very same cotangent (``x + y``
        # passes its cotangent on unchanged): their tangents add up.
        known[ic] = known[ic] + t if ic in known else t
    if not known:
        return [disconnected_type() for _ in node.outputs]
    results = grad(None, cots, known_grads=known, disconnected_inputs="ignore", return_disconnected="disconnected")
    return [results[outs.index(o)] if o in outs else disconnected_type() for o in node.outputs]


def _pushforward_direct(f, wrt, tangents, disconnected_outputs, return_disconnected):
    """Push tangents forwards node by node, with each op's own forward rule."""
    known = {w: t for w, t in zip(wrt, tangents)}
    roots = list(graph_inputs(f, blockers=wrt))
    for node in io_toposort(list(wrt) + roots, f):
        local = []
        for inp in node.inputs:
            t = known.get(inp)
            if t is None:
                t = disconnected_type()
            elif not _is_disconnected(t):
                t = _match_tangent_dtype(inp, t)
            local.append(t)
        for out, t in zip(node.outputs, _node_pushforward(node, local)):
            known.setdefault(out, t)
    results = []
    for out in f:
        t = known.get(out)
        if t is None or _is_disconnected(t):
            message = (
                "pushforward was asked to compute the Jacobian-vector product of a variable that "
                f"does not depend on any of wrt, or only through non-differentiable operators: {out}"
            )
            if disconnected_outputs == "raise":
                raise DisconnectedInputError(message)
            if disconnected_outputs == "warn":
                warnings.warn(message, stacklevel=3)
            elif disconnected_outputs != "ignore":
                raise ValueError(f"disconnected_outputs must be 'ignore', 'warn' or 'raise', got {disconnected_outputs!r}")
            mode = str(return_disconnected).lower()
            if mode == "zero":
                from lucent.tensor.creation import zeros_like

                results.append(zeros_like(out))
            elif mode == "none":
                results.append(None)
            elif mode == "disconnected":
                results.append(disconnected_type())
            else:
                raise ValueError(f"return_disconnected must be 'zero', 'none' or 'disconnected', got {return_disconnected!r}")
        else:
            results.append(t)
    return results


def Rop(f, wrt, eval_points, disconnected_outputs="raise", return_disconnected="zero",
        use_op_rop_implementation=False):
    """Deprecated name of :func:`pushforward` (``eval_points`` are the tangents)."""
    warnings.warn("Rop is deprecated, use pushforward instead.", FutureWarning, stacklevel=2)
    return pushforward(
        f, wrt, tangents=eval_points, disconnected_outputs=disconnected_outputs,
        return_disconnected=return_disconnected, use_op_pushforward=use_op_rop_implementation,
    )


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs="raise", return_disconnected="zero"):
    """Deprecated name of :func:`pullback` (``eval_points`` are the cotangents)."""
    warnings.warn("Lop is deprecated, use pullback instead.", FutureWarning, stacklevel=2)
    return pullback(
        f, wrt, cotangents=eval_points, consider_constant=consider_constant,
        disconnected_inputs=disconnected_inputs, return_disconnected=return_disconnected,
    )


