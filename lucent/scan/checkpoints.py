"""``scan_checkpoints``: a scan that stores one state every ``save_every_N`` steps.

The gradient of a scan needs the state of every step. Splitting the loop
into an outer scan over blocks of ``save_every_N`` steps, each running an
inner scan, stores only the states at block boundaries; the gradient of each
block recomputes its inner steps from its stored first state. Memory goes
from ``n_steps`` states to about ``n_steps / save_every_N + save_every_N``.
"""

from __future__ import annotations

import warnings

from lucent.scan.basic import scan


def scan_checkpoints(
    fn,
    sequences=None,
    outputs_info=None,
    non_sequences=None,
    name="checkpointscan_fn",
    n_steps=None,
    save_every_N=10,
    padding=True,
    return_updates=True,
):
    """Like ``scan``, but only the output after each block of ``save_every_N`` steps is returned.

    Restrictions: every sequence has the same length (``n_steps``, if given,
    equals it); outputs use only the tap -1 (or ``None``); only the last step
    of an output is meant to be used. With ``padding`` the sequences are
    zero-padded to a multiple of ``save_every_N`` (the last block runs only
    the remaining steps); without it their length must be such a multiple.
    """
    from lucent.tensor.basic import as_tensor_variable, cast, concatenate
    from lucent.tensor.creation import ones, zeros
    from lucent.tensor.math import ceil, eq, neq, switch
    from lucent.tensor.subtensor import set_subtensor

    sequences = [] if sequences is None else (list(sequences) if isinstance(sequences, (list, tuple)) else [sequences])
    outputs_info = list(outputs_info) if isinstance(outputs_info, (list, tuple)) else [outputs_info]
    non_sequences = [] if non_sequences is None else (
        list(non_sequences) if isinstance(non_sequences, (list, tuple)) else [non_sequences]
    )
    if not isinstance(save_every_N, int) or save_every_N < 1:
        raise ValueError(f"scan_checkpoints: save_every_N must be a positive int, got {save_every_N!r}")
    for element in outputs_info:
        if isinstance(element, dict) and "taps" in element:
            raise RuntimeError("scan_checkpoints doesn't work with taps.")
    sequences = [as_tensor_variable(s) for s in sequences]
    if n_steps is None:
        if not sequences:
            raise ValueError("scan_checkpoints needs n_steps or at least one sequence")
        n_steps = sequences[0].shape[0]
    n_steps = as_tensor_variable(n_steps)

    n_blocks = cast(ceil(n_steps / save_every_N), "int64")
    block_steps = save_every_N * ones((n_blocks,), dtype="int64")
    remainder = n_steps % save_every_N
    block_steps = set_subtensor(block_steps[-1], switch(eq(remainder, 0), save_every_N, remainder))

    if padding:
        padded = []
        for s in sequences:
            over = s.shape[0] % save_every_N
            n_pad = (save_every_N - over) * neq(over, 0)
            pad = zeros((n_pad, *[s.shape[d] for d in range(1, s.type.ndim)]), dtype=s.type.dtype)
            padded.append(concatenate([s, pad], axis=0))
        sequences = padded
    blocked = [
        s.reshape([s.shape[0] // save_every_N, save_every_N] + [s.shape[d] for d in range(1, s.type.ndim)],
                  ndim=s.type.ndim + 1)
        for s in sequences
    ]
    n_seq = len(blocked)
    n_states = sum(1 for o in outputs_info if o is not None)

    def block(*args):
        seqs = list(args[:n_seq])
        steps = args[n_seq]
        prev = list(args[n_seq + 1 : n_seq + 1 + n_states])
        non_seqs = list(args[n_seq + 1 + n_states :])
        prev_iter = iter(prev)
        inner_info = [None if o is None else next(prev_iter) for o in outputs_info]
        with warnings.catch_warnings():  # the inner updates are passed on, not dropped
            warnings.simplefilter("ignore", DeprecationWarning)
            res = scan(
                fn=fn,
                sequences=seqs,
                outputs_info=inner_info,
                non_sequences=non_seqs,
                name=name + "_inner",
                n_steps=steps,
                return_list=True,
                return_updates=True,
            )
        results, updates = res
        return [r[-1] for r in results], updates

    return scan(
        fn=block,
        sequences=blocked + [block_steps],
        outputs_info=outputs_info,
        non_sequences=non_sequences,
        name=name + "_outer",
        n_steps=n_blocks,
        allow_gc=True,
        return_updates=return_updates,
    )


__all__ = ["scan_checkpoints"]
