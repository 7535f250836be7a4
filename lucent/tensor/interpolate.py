"""One-dimensional interpolation of tabulated data (``interpolate1d``, and ``interp`` like ``np.interp``).

``interpolate1d(x, y, method)`` sorts the data points by ``x`` once and
returns a function of the query points. Each query finds its interval with
``searchsorted``: ``idx`` is the number of data points ``<`` the query, so
the query lies between ``x[idx - 1]`` and ``x[idx]`` (``idx == 0``: left of
the data, ``idx == n``: right of it). The methods differ only in what they
read around ``idx``; indices are clipped so that queries outside the data
extrapolate from the end intervals, unless ``extrapolate=False``, where they
take the pad values. Every step is elementwise in the queries (the reads
around ``idx`` are gathers), so the query function accepts queries of any
shape without mapping a scalar graph over them.
"""

from __future__ import annotations

from difflib import get_close_matches
from typing import Literal, get_args

from lucent.tensor.basic import as_tensor_variable, switch
from lucent.tensor.extra_ops import searchsorted
from lucent.tensor.math import clip, eq, le
from lucent.tensor.sort import argsort

InterpolationMethod = Literal["linear", "nearest", "first", "last", "mean"]
valid_methods = get_args(InterpolationMethod)


def pad_or_return(x, idx, output, left_pad, right_pad, extrapolate):
    """``output``, or the pad value for queries outside the data when not extrapolating."""
    if extrapolate:
        return output
    n = x.shape[0]
    return switch(eq(idx, 0), left_pad, switch(eq(idx, n), right_pad, output))


def _linear_interp1d(x, y, x_hat, idx, left_pad, right_pad, extrapolate=True):
    i = clip(idx, 1, x.shape[0] - 1)
    slope = (x_hat - x[i - 1]) / (x[i] - x[i - 1])
    return pad_or_return(x, idx, y[i - 1] + slope * (y[i] - y[i - 1]), left_pad, right_pad, extrapolate)


def _nearest_neighbor_interp1d(x, y, x_hat, idx, left_pad, right_pad, extrapolate=True):
    i = clip(idx, 1, x.shape[0] - 1)
    # Ties go to the left neighbour.
    y_hat = switch(le(x_hat - x[i - 1], x[i] - x_hat), y[i - 1], y[i])
    return pad_or_return(x, idx, y_hat, left_pad, right_pad, extrapolate)


def _stepwise_first_interp1d(x, y, x_hat, idx, left_pad, right_pad, extrapolate=True):
    return pad_or_return(x, idx, y[clip(idx - 1, 0, x.shape[0] - 1)], left_pad, right_pad, extrapolate)


def _stepwise_last_interp1d(x, y, x_hat, idx, left_pad, right_pad, extrapolate=True):
    return pad_or_return(x, idx, y[clip(idx, 0, x.shape[0] - 1)], left_pad, right_pad, extrapolate)


def _stepwise_mean_interp1d(x, y, x_hat, idx, left_pad, right_pad, extrapolate=True):
    i = clip(idx, 1, x.shape[0] - 1)
    return pad_or_return(x, idx, (y[i - 1] + y[i]) / 2, left_pad, right_pad, extrapolate)


_METHODS = {
    "linear": _linear_interp1d,
    "nearest": _nearest_neighbor_interp1d,
    "first": _stepwise_first_interp1d,
    "last": _stepwise_last_interp1d,
    "mean": _stepwise_mean_interp1d,
}


def interpolate1d(x, y, method: InterpolationMethod = "linear", left_pad=None, right_pad=None, extrapolate=True):
    """A function of query points ``x_hat`` interpolating the data ``y`` given at ``x`` (1-d, any order).

    ``method``: "linear"; "nearest" (the closer data point, the left one on
    ties); "first" / "last" (the data point left / right of the query); "mean"
    (the mean of both). With ``extrapolate=False``, queries left of the data
    give ``left_pad`` (default ``y[0]``) and right of it ``right_pad``
    (default ``y[-1]``).
    """
    if method not in _METHODS:
        raise NotImplementedError(
            f"Unknown interpolation method: {method}. Did you mean {get_close_matches(str(method), valid_methods)}?"
        )
    x = as_tensor_variable(x)
    y = as_tensor_variable(y)
    if x.type.ndim != 1 or y.type.ndim != 1:
        raise ValueError(f"Inputs must be 1d, got x with {x.type.ndim} and y with {y.type.ndim} dimensions")
    order = argsort(x)
    x, y = x[order], y[order]
    left_pad = y[0] if left_pad is None else as_tensor_variable(left_pad)
    right_pad = y[-1] if right_pad is None else as_tensor_variable(right_pad)
    rule = _METHODS[method]

    def interpolate(x_hat):
        x_hat = as_tensor_variable(x_hat)
        idx = searchsorted(x, x_hat)
        return rule(x, y, x_hat, idx, left_pad, right_pad, extrapolate=extrapolate)

    return interpolate


def interp(x, xp, fp, left=None, right=None, period=None):
    """Linear interpolation of ``fp`` (given at increasing ``xp``) at ``x``, as ``np.interp``.

    Queries left of ``xp`` give ``left`` (default ``fp[0]``), right of it
    ``right`` (default ``fp[-1]``). ``period`` is not supported.
    """
    if period is not None:
        raise NotImplementedError("interp: period is not supported")
    f = interpolate1d(as_tensor_variable(xp), as_tensor_variable(fp), method="linear",
                      left_pad=left, right_pad=right, extrapolate=False)
    return f(as_tensor_variable(x))


__all__ = ["InterpolationMethod", "interp", "interpolate1d", "valid_methods"]
