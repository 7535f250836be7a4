"""``map``, ``reduce``, ``foldl`` and ``foldr``: common loops written with ``scan``.

Each is one ``scan`` call with a fixed choice of arguments; ``reduce`` (and
the folds) keep only the last step of every output, which the memory-saving
rewrite turns into a loop that stores nothing else.
"""

from __future__ import annotations


from lucent.scan.basic import scan


def map(
    fn,
    sequences,
    non_sequences=None,
    truncate_gradient=-1,
    go_backwards=False,
    mode=None,
    name=None,
    return_updates=True,
):
    """``fn`` applied to each step of ``sequences`` (no output is fed back)."""
    return scan(
        fn=fn,
        sequences=sequences,
        outputs_info=[],
        non_sequences=non_sequences,
        truncate_gradient=truncate_gradient,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
        return_updates=return_updates,
    )


def reduce(
    fn,
    sequences,
    outputs_info,
    non_sequences=None,
    go_backwards=False,
    mode=None,
    name=None,
    return_updates=True,
):
    """The last step of ``scan(fn, sequences, outputs_info, non_sequences)``."""
    result = scan(
        fn=fn,
        sequences=sequences,
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        go_backwards=go_backwards,
        truncate_gradient=-1,
        mode=mode,
        name=name,
        return_updates=return_updates,
    )
    outputs, updates = result if return_updates else (result, None)
    if isinstance(outputs, (list, tuple)):
        last = [x[-1] for x in outputs]
    else:
        last = outputs[-1]
    return (last, updates) if return_updates else last


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None, return_updates=True):
    """``reduce`` from the first step to the last."""
    return reduce(
        fn=fn,
        sequences=sequences,
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        go_backwards=False,
        mode=mode,
        name=name,
        return_updates=return_updates,
    )


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None, return_updates=True):
    """``reduce`` from the last step to the first."""
    return reduce(
        fn=fn,
        sequences=sequences,
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        go_backwards=True,
        mode=mode,
        name=name,
        return_updates=return_updates,
    )


def filter(fn, sequences, non_sequences=None, go_backwards=False, mode=None, name=None):
    """The entries of ``sequences`` for which the predicate ``fn`` holds.

    ``fn`` gets one step of each sequence (and the ``non_sequences``) and
    returns a boolean: one mask for all sequences, or one mask per sequence
    (then ``sequences`` must be a list of as many). The masks are computed
    by a ``map``; each sequence is then indexed by its mask, so the results
    have a length known only at run time. ``go_backwards`` only changes the
    order in which ``fn`` is evaluated, not which entries are kept.
    """
    masks = scan(
        fn=fn,
        sequences=sequences,
        outputs_info=None,
        non_sequences=non_sequences,
        go_backwards=go_backwards,
        mode=mode,
        name=name,
        return_updates=False,
    )
    several_seqs = isinstance(sequences, (list, tuple))
    if isinstance(masks, (list, tuple)):
        if not several_seqs:
            raise TypeError(
                "filter: fn returned several masks, so sequences must be a list or tuple of as "
                f"many sequences; got the single sequence {sequences}"
            )
        if len(masks) != len(sequences):
            raise ValueError(
                f"filter: fn returned {len(masks)} masks for {len(sequences)} sequences; return "
                "one mask, or one per sequence"
            )
    else:
        masks = [masks] * (len(sequences) if several_seqs else 1)
    if go_backwards:
        masks = [m[::-1] for m in masks]
    seqs = list(sequences) if several_seqs else [sequences]
    from lucent.tensor.basic import as_tensor_variable

    out = [as_tensor_variable(s)[m] for s, m in zip(seqs, masks)]
    return out if several_seqs else out[0]


__all__ = ["filter", "foldl", "foldr", "map", "reduce"]
