"""A small, JSON-ready description of a value, for views that cannot show the value itself.

A graph node's output or a weight matrix can have millions of entries; a
view shows what a user checks first: shape and dtype, the range and mean,
how many NaNs and infinities, the L2 norm (what a training loop moves), and
a histogram of the finite entries. Everything returned is a plain Python
number, string or list, so it can live in a widget's model and be saved in
the notebook.
"""

from __future__ import annotations

import numpy as np

HISTOGRAM_BINS = 16


#: NumPy's PCG64 advances its 128-bit state as ``state * multiplier + inc`` per 64-bit word.
PCG64_MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645
_MASK_128 = (1 << 128) - 1


def generator_digest(generator):
    """A short digest of a generator's state: it changes whenever the generator advances."""
    import hashlib

    return hashlib.sha1(repr(generator.bit_generator.state).encode()).hexdigest()[:10]


def words_drawn(before, after):
    """64-bit words a PCG64 drew between two of its ``bit_generator.state`` dicts, else None.

    The state is a linear congruential generator, so the number of steps
    between two states is found bit by bit (128 steps at most) without
    replaying them. None for another bit generator or another stream.
    """
    if before.get("bit_generator") != "PCG64" or after.get("bit_generator") != "PCG64":
        return None
    cur, new = before["state"]["state"], after["state"]["state"]
    plus, mult = before["state"]["inc"], PCG64_MULTIPLIER
    if plus != after["state"]["inc"]:
        return None
    bit, distance = 1, 0
    while cur != new and bit <= _MASK_128:
        if (cur & bit) != (new & bit):
            cur = (cur * mult + plus) & _MASK_128
            distance |= bit
        bit <<= 1
        plus = ((mult + 1) * plus) & _MASK_128
        mult = (mult * mult) & _MASK_128
    return distance if cur == new else None


def summarize_generator(generator):
    """``{"kind": "generator", "bit_generator", "digest", "text"}`` of a ``numpy.random.Generator``."""
    name = type(generator.bit_generator).__name__
    digest = generator_digest(generator)
    return {"kind": "generator", "bit_generator": name, "digest": digest, "text": f"{name} · state {digest}"}


def summarize(value, bins=HISTOGRAM_BINS):
    """``{"kind", "shape", "dtype", "size", "min", "max", "mean", "std", "norm", "nan", "inf", "histogram"}``.

    ``kind`` is ``"array"`` for numbers and arrays (statistics are over the
    finite entries; ``None`` when there are none), ``"none"`` for ``None``
    and ``"object"`` for anything else (then only ``text`` is given).
    ``histogram`` is ``{"counts": [...], "edges": [...]}`` or ``None``.
    """
    if value is None:
        return {"kind": "none", "text": "None"}
    if isinstance(value, np.random.Generator):
        return summarize_generator(value)
    if isinstance(value, (np.ndarray, np.generic, int, float, bool, complex)):
        array = np.asarray(value)
    else:
        text = repr(value)
        return {"kind": "object", "text": text if len(text) <= 200 else text[:197] + "..."}
    out = {
        "kind": "array",
        "shape": [int(d) for d in array.shape],
        "dtype": str(array.dtype),
        "size": int(array.size),
        "min": None, "max": None, "mean": None, "std": None, "norm": None,
        "nan": 0, "inf": 0,
        "histogram": None,
    }
    if array.size == 0 or array.dtype.kind not in "biufc":
        return out
    if array.dtype.kind == "c":
        array = np.abs(array)
    data = array.astype(np.float64, copy=False).ravel()
    finite_mask = np.isfinite(data)
    out["nan"] = int(np.isnan(data).sum())
    out["inf"] = int(data.size - finite_mask.sum() - out["nan"])
    finite = data[finite_mask] if out["nan"] or out["inf"] else data
    if finite.size == 0:
        return out
    with np.errstate(over="ignore", invalid="ignore"):
        out.update(
            min=float(finite.min()),
            max=float(finite.max()),
            mean=_finite_or_none(finite.mean()),
            std=_finite_or_none(finite.std()),
            norm=_finite_or_none(np.sqrt(np.dot(finite, finite))),
        )
        out["histogram"] = _histogram(finite, out["min"], out["max"], bins)
    return out


def _finite_or_none(x):
    """``float(x)``, or ``None`` when it overflowed: JSON (the widget messages) has no Infinity."""
    x = float(x)
    return x if np.isfinite(x) else None


def _histogram(finite, lo, hi, bins):
    """``{"counts", "edges"}`` of ``finite`` over [lo, hi], or ``None`` when no bins can be made.

    A range too narrow for float64 to split into ``bins`` distinct edges
    (values differing in the last digits) is widened around its centre; a
    range too wide to measure (overflowing ``hi - lo``) has no histogram.
    """
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    narrowest = 4 * bins * np.finfo(np.float64).eps * max(abs(lo), abs(hi))
    if hi - lo < narrowest:
        centre = lo / 2 + hi / 2
        lo, hi = centre - narrowest / 2, centre + narrowest / 2
    if not np.isfinite(hi - lo):
        return None
    try:
        counts, edges = np.histogram(finite, bins=bins, range=(lo, hi))
    except ValueError:
        return None
    return {"counts": [int(c) for c in counts], "edges": [float(e) for e in edges]}


def summary_text(summary):
    """One line for a summary: ``float64 (3, 4) min -1 max 2 mean 0.5 NaN 1``."""
    if summary.get("kind") != "array":
        return summary.get("text", "")
    shape = "(" + ", ".join(map(str, summary["shape"])) + ("," if len(summary["shape"]) == 1 else "") + ")"
    parts = [summary["dtype"], shape]
    if summary["min"] is not None:
        parts += [f"min {summary['min']:.4g}", f"max {summary['max']:.4g}", f"mean {summary['mean']:.4g}"]
    elif summary["size"] == 0:
        parts.append("empty")
    if summary["nan"]:
        parts.append(f"NaN {summary['nan']}")
    if summary["inf"]:
        parts.append(f"Inf {summary['inf']}")
    return " ".join(parts)


__all__ = ["summarize", "safe_summarize", "summary_text", "HISTOGRAM_BINS"]


def safe_summarize(value):
    """``summarize(value)``, or a note saying why it failed: one odd value must not stop a view's update."""
    try:
        return summarize(value)
    except Exception as e:
        return {"kind": "object", "text": f"(no summary: {type(e).__name__}: {e})"}
