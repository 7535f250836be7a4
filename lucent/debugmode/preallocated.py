"""Running ``perform`` with its output cells already holding arrays.

A ``perform`` may reuse the array it finds in its output cell
(``out[0][0]``) instead of allocating one: the Python linker keeps each
node's previous output there between calls. A perform that reuses it
wrongly (assumes the shape or the memory order, forgets to overwrite every
element, writes through a view) is right on the first call and wrong on
the next ones. ``check_preallocated_output`` (PyTensor's option, same
names) runs the node's ``perform`` again with the output cells pre-filled
in each requested way and compares with the reference outputs:

``"initial"``
    what the cell held when the node was about to run (the previous call's
    value), copied;
``"previous"``
    a copy of this call's reference output, overwritten with garbage;
``"c_contiguous"`` / ``"f_contiguous"``
    arrays of the right shape in C / Fortran order, full of garbage;
``"strided"``
    views of a larger buffer with steps of 1 and 2, positive and negative,
    on the last ``DebugMode__check_preallocated_output_ndim`` dimensions;
``"wrong_size"``
    arrays one element shorter / longer on each dimension in turn;
``"ALL"``
    all of the above.

Outputs the op declares views of, or in-place on, an input are not
pre-filled (the op returns the input's memory there). "Garbage" is NaN for
floats and the largest value of the dtype for integers, so an element the
perform forgot to write shows. Numba kernels always return new arrays, so
this check concerns ``perform`` alone; it is how a node without a kernel
gets checked beyond one run. Ops declaring ``nondeterministic`` or
``has_side_effects`` are not run again.
"""

from __future__ import annotations

from itertools import product

import numpy as np

MODES = ("initial", "previous", "c_contiguous", "f_contiguous", "strided", "wrong_size")


def normalise_modes(modes):
    """The list of modes from a ``":"``-separated string or a list; ``ValueError`` on an unknown one."""
    if modes is None:
        return []
    if isinstance(modes, str):
        modes = [m for m in modes.split(":") if m]
    modes = list(modes)
    bad = [m for m in modes if m not in MODES and m != "ALL"]
    if bad:
        raise ValueError(
            f"check_preallocated_output: unknown mode(s) {bad}; expected any of "
            f"{', '.join(MODES)} or ALL (a list, or a string separated by ':')"
        )
    return list(MODES) if "ALL" in modes else modes


def _garbage(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind in "iu":
        return np.iinfo(dtype).max
    if dtype.kind == "b":
        return True
    return 0


def _filled(shape, dtype, order="C"):
    buf = np.empty(shape, dtype=dtype, order=order)
    buf[...] = _garbage(dtype)
    return buf


def output_layouts(node, reference, initial, modes, ndim_checked=4):
    """Yield ``(name, {output index: array})`` for each way of pre-filling the outputs.

    ``reference`` are this call's reference outputs, ``initial`` what the
    cells held before the node ran (``None`` entries when nothing).
    """
    view_map = getattr(node.op, "view_map", None) or {}
    destroy_map = getattr(node.op, "destroy_map", None) or {}
    considered = [
        j for j, value in enumerate(reference)
        if j not in view_map and j not in destroy_map and isinstance(value, np.ndarray)
    ]
    if not considered:
        return
    if "initial" in modes:
        found = {
            j: initial[j].copy(order="K") for j in considered
            if isinstance(initial[j], np.ndarray) and initial[j].dtype == reference[j].dtype
        }
        if found:
            yield "initial", found
    if "previous" in modes:
        bufs = {}
        for j in considered:
            buf = reference[j].copy(order="K")
            buf[...] = _garbage(buf.dtype)
            bufs[j] = buf
        yield "previous", bufs
    if "c_contiguous" in modes:
        yield "c_contiguous", {j: _filled(reference[j].shape, reference[j].dtype, "C") for j in considered}
    if "f_contiguous" in modes:
        yield "f_contiguous", {j: _filled(reference[j].shape, reference[j].dtype, "F") for j in considered}
    max_ndim = max(reference[j].ndim for j in considered)
    if "strided" in modes and max_ndim > 0:
        n_checked = min(max_ndim, max(int(ndim_checked), 1))
        for signs in product((1, -1), repeat=n_checked):
            for size in (1, 2):
                steps = (1,) * (max_ndim - n_checked) + tuple(s * size for s in signs)
                if all(s == 1 for s in steps):
                    continue  # the contiguous case, done above
                bufs = {}
                for j in considered:
                    ref = reference[j]
                    own = steps[max_ndim - ref.ndim:]
                    big = _filled(tuple(n * abs(s) for n, s in zip(ref.shape, own)), ref.dtype)
                    view = big[tuple(slice(None, None, s) for s in own)]
                    bufs[j] = view[tuple(slice(0, n) for n in ref.shape)]
                yield f"strided{steps}", bufs
    if "wrong_size" in modes and max_ndim > 0:
        for dim in range(max_ndim):
            for delta in (-1, 1):
                bufs = {}
                for j in considered:
                    ref = reference[j]
                    d = dim - (max_ndim - ref.ndim)
                    if d < 0:
                        continue
                    shape = list(ref.shape)
                    shape[d] = max(shape[d] + delta, 0)
                    bufs[j] = _filled(tuple(shape), ref.dtype)
                if bufs:
                    change = [0] * max_ndim
                    change[dim] = delta
                    yield f"wrong_size{tuple(change)}", bufs


__all__ = ["MODES", "normalise_modes", "output_layouts"]
