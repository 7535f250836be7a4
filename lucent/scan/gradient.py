"""The gradient of a ``Scan``: another scan, running backwards through the steps.

Back-propagation through time, written with ``scan`` itself so that the
backward loop gets everything a loop gets (both execution paths, rewrites,
and a gradient of its own, hence Hessians). For the forward step
``outs_t = f(seq slices_t, states at their taps, non_sequences)`` the
backward step at ``t`` (from the last step down to the first):

* receives, as sequences, the forward step's inputs at ``t`` (sequence
  slices, and the stored states at each tap), the incoming gradients of
  the outputs at ``t``, and what each recurrent output was at ``t``, so a
  derivative written with the output's value (``1 - tanh**2``) reads it
  from the forward loop's buffer instead of running the step again;
* carries, for each recurrent output with taps down to ``-L``, a ``(L, ...)``
  array ``P`` whose row ``j`` is the gradient already collected for the
  state ``j`` steps before ``t`` (from the later steps that read it);
* carries one running sum per non-sequence;
* computes the vector-Jacobian product of ``f`` with the total gradient of
  each output (incoming + ``P[0]``), shifts ``P`` by one step and adds what
  this step sends to each tap; the slices' gradients are its outputs.

After the loop, ``P`` holds the gradients of the initial states. With
``truncate_gradient=k`` only the last ``k`` steps are walked back (earlier
steps, and the initial states when ``k`` is shorter than the loop, get zero).
"""

from __future__ import annotations

from lucent.graph.replace import clone_replace


def _is_float(var):
    return str(getattr(var.type, "dtype", "")).startswith(("float", "complex"))


def _disconnected(g):
    from lucent.gradient import DisconnectedType

    return g is None or isinstance(getattr(g, "type", None), DisconnectedType)


def scan_pullback(op, inputs, outputs, output_grads):
    from lucent.gradient import disconnected_type, grad
    from lucent.scan.basic import scan
    from lucent.tensor.basic import as_tensor_variable, stack
    from lucent.tensor.math import switch
    from lucent.tensor.creation import zeros, zeros_like
    from lucent.tensor.math import eq, minimum
    from lucent.tensor.subtensor import set_subtensor

    info, lay = op.info, op.layout
    inner_in, inner_out = op.fgraph.inputs, op.fgraph.outputs
    n_steps = inputs[0]

    diff_states = [k for k in range(lay.n_states) if _is_float(outputs[k])]
    diff_nit = [k for k in range(info.n_nit_sot) if _is_float(outputs[lay.out_nit + k])]
    wanted_out = [k for k in diff_states if not _disconnected(output_grads[k])]
    wanted_nit = [k for k in diff_nit if not _disconnected(output_grads[lay.out_nit + k])]
    results = [disconnected_type() for _ in inputs]
    if not wanted_out and not wanted_nit:
        return _zero_for_discrete(op, inputs, outputs, output_grads, results)
    # Gradients coming into a state through its outputs flow on through the recurrence
    # even when only a later output is asked for: every float state takes part.
    act_states = diff_states

    if info.as_while:
        # the steps that ran: read from an output's length
        if lay.n_states:
            T = outputs[0].shape[0] - lay.init_lens[0]
        elif info.n_nit_sot:
            T = outputs[lay.out_nit].shape[0]
        else:
            raise NotImplementedError(f"The gradient of {op} needs an output to count the steps")
    else:
        T = n_steps
    n_back = T if op.truncate_gradient == -1 else minimum(T, op.truncate_gradient)

    seq_pos = list(range(info.n_seqs))
    diff_seqs = [i for i in seq_pos if _is_float(inner_in[i])]
    non_seq_pos = list(range(info.n_non_seqs))
    diff_non_seqs = [i for i in non_seq_pos if _is_float(inner_in[lay.i_non_seqs + i])]

    def rev(x):
        return x[:T][::-1][:n_back]

    # --- sequences of the backward loop ------------------------------------------
    b_seqs = [rev(inputs[lay.o_seqs + i]) for i in seq_pos]
    for k in range(lay.n_states):
        buf, L = outputs[k], lay.init_lens[k]
        for tap in lay.state_taps[k]:
            b_seqs.append(rev(buf[L + tap :]))
    g_state = {}
    for k in act_states:
        g = output_grads[k]
        if _disconnected(g):
            continue
        g_state[k] = g
        b_seqs.append(rev(g[lay.init_lens[k] :]))
    for k in wanted_nit:
        b_seqs.append(rev(output_grads[lay.out_nit + k]))
    # What each recurrent output was at each step, read from the forward buffer (which
    # the taps above keep whole anyway): a gradient that uses the output's value
    # (tanh's 1 - out**2, exp's out) reads it instead of computing the step again.
    stored_states = list(range(lay.n_states))
    for k in stored_states:
        b_seqs.append(rev(outputs[k][lay.init_lens[k] :]))
    n_fwd_seq_args = info.n_seqs + sum(len(t) for t in lay.state_taps)
    grad_state_keys = list(g_state)

    # --- carried values: pending state gradients, non-sequence sums -----------------
    pending0 = []
    for k in act_states:
        buf = inputs[lay.o_states + k]
        pending0.append(zeros((lay.init_lens[k], *[buf.shape[d] for d in range(1, buf.type.ndim)]), dtype=buf.type.dtype))
    acc0 = [zeros_like(inputs[lay.o_non_seqs + i]) for i in diff_non_seqs]
    outer_non_seqs = list(inputs[lay.o_non_seqs :])
    # An untraced state (a random generator) is not differentiated and keeps no
    # history: the backward step sees its starting value, as PyTensor's does. A
    # gradient that does not read the draws (the usual case: additive noise) is
    # exact; one that does reads draws from the starting generator.
    outer_untraced = list(inputs[lay.o_untraced : lay.o_nit])

    def step(*args):
        args = list(args)
        fwd_args = args[:n_fwd_seq_args]
        pos = n_fwd_seq_args
        g_in = dict(zip(grad_state_keys, args[pos : pos + len(grad_state_keys)]))
        pos += len(grad_state_keys)
        g_nit = args[pos : pos + len(wanted_nit)]
        pos += len(wanted_nit)
        stored = args[pos : pos + len(stored_states)]
        pos += len(stored_states)
        pendings = args[pos : pos + len(act_states)]
        pos += len(act_states)
        accs = args[pos : pos + len(diff_non_seqs)]
        pos += len(diff_non_seqs)
        non_seqs = args[pos : pos + len(outer_non_seqs)]
        untraced_vals = args[pos + len(outer_non_seqs) :]
        fwd_inputs = fwd_args + untraced_vals + non_seqs
        outs = clone_replace(list(inner_out), replace=dict(zip(inner_in, fwd_inputs)))
        known = {}

        def add(var, g):
            known[var] = known[var] + g if var in known else g

        for k, P in zip(act_states, pendings):
            total = P[0] + g_in[k] if k in g_in else P[0]
            add(outs[k], total)
        for k, g in zip(wanted_nit, g_nit):
            add(outs[lay.out_nit + k], g)
        wrt = [fwd_args[i] for i in diff_seqs]
        state_wrt = {}
        for k in act_states:
            for j in lay.state_inner_inputs(k):
                state_wrt[j] = len(wrt)
                wrt.append(fwd_args[j])
        wrt += [non_seqs[i] for i in diff_non_seqs]
        grads = grad(
            None, wrt, known_grads=known, disconnected_inputs="ignore", return_disconnected="zero"
        ) if wrt else []
        if grads:
            reuse = {outs[k]: v for k, v in zip(stored_states, stored) if outs[k] not in fwd_inputs}
            grads = clone_replace(list(grads), replace=reuse) if reuse else grads
        new_pending = []
        for k, P in zip(act_states, pendings):
            L = lay.init_lens[k]
            rows = []
            for j in range(L):
                row = P[j + 1] if j + 1 < L else zeros_like(P[0])
                for tap, ii in zip(lay.state_taps[k], lay.state_inner_inputs(k)):
                    if tap == -(j + 1):
                        row = row + grads[state_wrt[ii]]
                rows.append(row)
            new_pending.append(stack(rows))
        n_sg = len(diff_seqs)
        new_accs = [a + g for a, g in zip(accs, grads[len(wrt) - len(diff_non_seqs) :])]
        return new_pending + new_accs + list(grads[:n_sg])

    b_outs = scan(
        step,
        sequences=b_seqs,
        outputs_info=pending0 + acc0 + [None] * len(diff_seqs),
        non_sequences=outer_non_seqs + outer_untraced,
        n_steps=n_back,
        name=None if op.name is None else f"grad_of_{op.name}",
        return_list=True,
        return_updates=False,
    )
    # the full buffers (initial row included), so a loop of 0 steps still has a last row
    carried = [o.owner.inputs[0] for o in b_outs[: len(act_states) + len(diff_non_seqs)]]
    seq_grads = b_outs[len(act_states) + len(diff_non_seqs) :]

    full = eq(n_back, T)
    for n, k in enumerate(act_states):
        buf_in = inputs[lay.o_states + k]
        L = lay.init_lens[k]
        P_final = carried[n][-1]
        init_grad = switch(full, P_final[::-1], zeros_like(P_final))
        if k in g_state:
            init_grad = init_grad + g_state[k][:L]
        results[lay.o_states + k] = set_subtensor(zeros_like(buf_in)[:L], init_grad)
    for n, i in enumerate(diff_non_seqs):
        results[lay.o_non_seqs + i] = carried[len(act_states) + n][-1]
    for n, i in enumerate(diff_seqs):
        seq = inputs[lay.o_seqs + i]
        g = seq_grads[n][::-1]
        results[lay.o_seqs + i] = set_subtensor(zeros_like(seq)[T - n_back : T], g)
    results = [as_tensor_variable(r) if not _disconnected(r) else r for r in results]
    return _zero_for_discrete(op, inputs, outputs, output_grads, results)


def _zero_for_discrete(op, inputs, outputs, output_grads, results):
    """Zero gradients for the integer inputs that the asked-for outputs depend on.

    An integer sequence or non-sequence cannot be differentiated, but it is
    connected: like any op, the loop says its gradient is zero rather than
    disconnected (``grad`` with respect to it returns zeros, not an error).
    """
    from lucent.configdefaults import config
    from lucent.tensor.creation import zeros_like
    from lucent.tensor.type import TensorType

    conn = op.connection_pattern(None)
    asked = [j for j, g in enumerate(output_grads) if not _disconnected(g)]
    for i, inp in enumerate(inputs):
        if i == 0 or not _disconnected(results[i]) or _is_float(inp):
            continue
        if isinstance(inp.type, TensorType) and any(conn[i][j] for j in asked):
            results[i] = zeros_like(inp, dtype=config.floatX)
    return results


__all__ = ["scan_pullback"]
