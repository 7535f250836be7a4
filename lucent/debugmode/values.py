"""Small operations on run-time values that DebugMode's checks and messages need.

Copying decides what DebugMode costs: every array a node may touch is
copied once per path, so these helpers copy only what can change (NumPy
and Python scalars are immutable and are passed as they are) and keep an
array's memory order, so a kernel sees the same layout it would see inside
a compiled graph and Numba does not compile a second signature for it.

The text helpers make problem reports readable: arrays are abbreviated,
and two values that should agree are summarised by where they differ most.
"""

from __future__ import annotations

import copy

import numpy as np

_IMMUTABLE = (np.generic, int, float, complex, bool, str, bytes, type(None), slice)


def is_immutable(value):
    """True when nothing can write into ``value`` (so it needs no copy)."""
    return isinstance(value, _IMMUTABLE)


def copy_value(value):
    """A private copy of ``value`` that the caller may hand to code that writes into it."""
    if isinstance(value, np.ndarray):
        return value.copy(order="K")
    if is_immutable(value):
        return value
    try:
        return copy.deepcopy(value)
    except Exception:  # an opaque object: nothing better to do than share it
        return value


def describe_value(value):
    """``float64 (256, 784)`` style summary of a value's kind and shape."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype} {value.shape}"
    if isinstance(value, np.generic):
        return f"{value.dtype} scalar"
    if value is None:
        return "None"
    return type(value).__name__


def abbreviate(value, edgeitems=2, threshold=24):
    """The value as short text: its kind and shape, then at most a few elements per axis."""
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        with np.printoptions(edgeitems=edgeitems, threshold=threshold, precision=6, linewidth=100):
            body = np.array2string(arr, separator=", ")
        return f"{describe_value(value)}: {body}"
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def difference(a, b):
    """Where two numeric values that should agree differ most, or ``None``.

    Returns a dict with ``max_abs`` / ``abs_index`` (largest absolute
    difference and its index), ``max_rel`` / ``rel_index`` (largest
    difference relative to the larger magnitude), ``n_different`` and
    ``size``; or ``{"shapes": (sa, sb)}`` when the shapes differ. A NaN on
    one side only counts as an infinite difference.
    """
    try:
        a = np.asarray(a)
        b = np.asarray(b)
    except Exception:
        return None
    if a.shape != b.shape:
        return {"shapes": (a.shape, b.shape)}
    if a.dtype.kind not in "biufc" or b.dtype.kind not in "biufc":
        return None
    if a.size == 0:
        return None
    with np.errstate(all="ignore"):
        work = np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64
        fa = a.astype(work, copy=False)
        fb = b.astype(work, copy=False)
        diff = np.abs(fa - fb)
        nan_a, nan_b = np.isnan(fa), np.isnan(fb)
        diff = np.where(nan_a & nan_b, 0.0, diff)
        diff = np.where(nan_a ^ nan_b, np.inf, diff)
        # Equal infinities give inf - inf = nan: they agree.
        diff = np.where(np.isnan(diff), 0.0, diff)
        scale = np.maximum(np.abs(fa), np.abs(fb))
        rel = np.where(diff == 0, 0.0, diff / np.where(scale == 0, 1.0, scale))
        rel = np.where(np.isnan(rel), np.inf, rel)
    abs_flat = int(np.argmax(diff))
    rel_flat = int(np.argmax(rel))
    return {
        "max_abs": float(diff.flat[abs_flat]),
        "abs_index": _index(abs_flat, a.shape),
        "max_rel": float(rel.flat[rel_flat]),
        "rel_index": _index(rel_flat, a.shape),
        "n_different": int(np.count_nonzero(diff)),
        "size": int(a.size),
    }


def _index(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def format_difference(diff):
    """Text of a ``difference`` result (empty when there is nothing to say)."""
    if not diff:
        return ""
    if "shapes" in diff:
        sa, sb = diff["shapes"]
        return f"shapes differ: {sa} vs {sb}"
    return (
        f"largest absolute difference {diff['max_abs']:.6g} at index {diff['abs_index']}, "
        f"largest relative difference {diff['max_rel']:.6g} at index {diff['rel_index']} "
        f"({diff['n_different']} of {diff['size']} elements differ)"
    )


def nonfinite_kind(value, nan=True, inf=True, big=None):
    """``"NaN"``, ``"Inf"``, ``"big"`` or ``None``: the first non-finite kind found in ``value``.

    ``big`` is a magnitude threshold (``None``: not checked). Non-float
    values are never non-finite.
    """
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, (np.generic, float, complex)):
        arr = np.asarray(value)
    else:
        return None
    if arr.dtype.kind not in "fc" or arr.size == 0:
        return None
    finite = np.isfinite(arr).all()
    if not finite:
        has_nan = bool(np.isnan(arr).any())
        if nan and has_nan:
            return "NaN"
        if inf and bool(np.isinf(arr).any()):
            return "Inf"
    if big is not None:
        with np.errstate(invalid="ignore"):
            magnitude = np.abs(arr[np.isfinite(arr)]) if not finite else np.abs(arr)
            if magnitude.size and magnitude.max() > big:
                return "big"
    return None


def has_nonfinite(value):
    """True when ``value`` holds a NaN or an infinity."""
    return nonfinite_kind(value) is not None


def _summary_line(label, value):
    """``label: shape dtype strides min max n_inf n_nan`` or ``None`` for non-arrays."""
    try:
        arr = value if isinstance(value, np.ndarray) else None
        if arr is None:
            return None
        with np.errstate(invalid="ignore"):
            lo = arr.min() if arr.size else "-"
            hi = arr.max() if arr.size else "-"
            n_inf = int(np.isinf(arr).sum()) if arr.dtype.kind in "fc" else 0
            n_nan = int(np.isnan(arr).sum()) if arr.dtype.kind in "fc" else 0
        return f"  {label}: {arr.shape} {arr.dtype} {arr.strides} {lo} {hi} {n_inf} {n_nan}"
    except Exception:  # a summary must never hide the report it belongs to
        return None


def str_diagnostic(expected, value, rtol, atol):
    """A multi-line text explaining how ``value`` differs from ``expected``.

    Used in failure messages of value comparisons: a one-line summary of each
    array (shape, dtype, strides, min, max, number of infinities and NaNs),
    both values, statistics of the absolute and relative differences, and the
    tolerances the comparison used (``rtol`` / ``atol``, or the defaults for
    the dtypes when ``None``).
    """
    from lucent.tensor.type import _get_atol_rtol

    lines = []
    head = [_summary_line("Expected", expected), _summary_line("Value   ", value)]
    if any(head):
        lines.append("            shape, dtype, strides, min, max, n_inf, n_nan:")
        lines.extend(h for h in head if h)
    lines.append(f"  expected : {expected}")
    lines.append(f"  value    : {value}")
    try:
        ov = np.asarray(expected)
        nv = np.asarray(value)
        with np.errstate(divide="ignore", invalid="ignore"):
            absdiff = np.absolute(nv - ov)
            reldiff = absdiff / np.absolute(ov)
        for name, d in (("Abs", absdiff), ("Rel", reldiff)):
            lines.append(
                f"  {name} diff: max {np.max(d)}, mean {np.mean(d)}, median {np.median(d)}, "
                f"std {np.std(d)}"
            )
    except Exception:  # values that cannot be subtracted: nothing more to say
        pass
    try:
        atol_, rtol_ = _get_atol_rtol(np.asarray(expected), np.asarray(value))
    except Exception:
        atol_, rtol_ = None, None
    if rtol is not None:
        rtol_ = rtol
    if atol is not None:
        atol_ = atol
    lines.append(f"  rtol, atol: {rtol_} {atol_}")
    return "\n".join(lines) + "\n"




# ---------------------------------------------------------------------------
# How two values of one variable are compared
# ---------------------------------------------------------------------------
def narrowest_float(var):
    """The narrowest float dtype computed inside ``var``'s fused scalar graph, or ``None``.

    A fused element-wise node (``Elemwise`` of a ``Composite``) whose output
    is float64 may round its intermediates to float32; its two paths (and
    the unfused graph it replaced) may then differ by a float32 rounding,
    which float64's tolerance would call an error.
    """
    owner = getattr(var, "owner", None)
    scalar_op = getattr(getattr(owner, "op", None), "scalar_op", None)
    found = set()
    stack = [scalar_op]
    while stack:
        op = stack.pop()
        for node in getattr(op, "nodes", None) or ():
            for out in node.outputs:
                dtype = getattr(out.type, "dtype", None)
                if dtype is not None and np.dtype(dtype).kind == "f":
                    found.add(np.dtype(dtype))
            stack.append(node.op)
    return min(found, key=lambda d: d.itemsize).name if found else None


def tolerance_note(*variables):
    """``(atol, rtol, why)`` when a fused node's narrower intermediates loosen the comparison, else ``None``."""
    from lucent.tensor.type import _TOLERANCES

    best = None
    for var in variables:
        narrow = narrowest_float(var)
        dtype = getattr(var.type, "dtype", None)
        if narrow is None or dtype is None or narrow not in _TOLERANCES or dtype not in _TOLERANCES:
            continue
        if np.dtype(narrow).itemsize >= np.dtype(dtype).itemsize:
            continue
        if best is None or np.dtype(narrow).itemsize < np.dtype(best[0]).itemsize:
            best = (narrow, var)
    if best is None:
        return None
    atol, rtol = _TOLERANCES[best[0]]
    return atol, rtol, f"{best[0]} tolerance: the fused node {best[1].owner.op} computes {best[0]} intermediates"


def _exactly_equal(a, b):
    """Cheap exact check first: most values agree bit for bit, and
    ``values_eq_approx`` costs several passes over the data."""
    if a is b:
        return True
    if (
        isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
        and a.shape == b.shape and a.dtype == b.dtype
    ):
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except TypeError:
            return False
    return False


def comparator(var, *others):
    """``agree(expected, value)``: how values of ``var`` are compared, decided once.

    In order: a comparison the rewrite that made ``var`` attached to it
    (``var.tag.values_eq_approx``, e.g. ignoring an infinity of the old
    value that a stabilising rewrite turned into a finite number); the
    tolerance of the narrowest float type computed inside a fused node
    (``var`` or ``others``); else ``var.type.values_eq_approx``. Values
    equal bit for bit always agree; a comparison that raises is a
    disagreement.
    """
    compare = getattr(getattr(var, "tag", None), "values_eq_approx", None)
    if compare is None:
        loose = tolerance_note(var, *others)
        if loose is not None:
            atol, rtol, _ = loose
            type_compare = var.type.values_eq_approx

            def compare(a, b):
                try:
                    return type_compare(a, b, rtol=rtol, atol=atol)
                except TypeError:  # a type whose comparison takes no tolerances
                    return type_compare(a, b)
        else:
            compare = var.type.values_eq_approx

    def agree(expected, value):
        if _exactly_equal(expected, value):
            return True
        try:
            return bool(compare(expected, value))
        except Exception:
            return False

    return agree


def values_agree(var, expected, value, *others):
    """Whether ``value`` is an acceptable value of ``var`` when ``expected`` is the reference.

    ``comparator(var, *others)(expected, value)``; build the comparator once
    when comparing many values of one variable.
    """
    return comparator(var, *others)(expected, value)


__all__ = [
    "str_diagnostic",
    "copy_value",
    "is_immutable",
    "describe_value",
    "abbreviate",
    "difference",
    "format_difference",
    "nonfinite_kind",
    "has_nonfinite",
    "narrowest_float",
    "tolerance_note",
    "comparator",
    "values_agree",
]
