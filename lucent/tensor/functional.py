"""``vectorize``: a Python function of core-shaped tensors turned into one of batched tensors.

Like ``numpy.vectorize`` with a ``signature``: the function is called once,
on fresh variables with the core shape of each input (its trailing
dimensions as the signature names them, none without a signature), and
the resulting graph is mapped over the inputs' extra leading dimensions
with ``vectorize_graph`` (so ops without a rule of their own become
``Blockwise``).
"""

from __future__ import annotations


def vectorize(func, signature=None):
    """A version of ``func`` that accepts inputs with extra leading (batch) dimensions."""
    from lucent.graph.replace import vectorize_graph
    from lucent.tensor.blockwise import _parse_gufunc_signature
    from lucent.tensor.type import TensorType

    def vectorized(*inputs):
        if signature is None:
            inputs_sig, outputs_sig = [()] * len(inputs), None
        else:
            inputs_sig, outputs_sig = _parse_gufunc_signature(signature)
            if len(inputs) != len(inputs_sig):
                raise ValueError(f"Number of inputs does not match signature: {signature} ({len(inputs)} given)")
        core_inputs = []
        for inp, sig in zip(inputs, inputs_sig):
            # Any tensor, constants included (they are TensorVariables in PyTensor).
            if not isinstance(getattr(inp, "type", None), TensorType):
                raise TypeError(f"Inputs to vectorize function must be TensorVariable, got {type(inp)}")
            if inp.type.ndim < len(sig):
                raise ValueError(f"Input {inp} has less dimensions than signature {sig}")
            core_shape = inp.type.shape[inp.type.ndim - len(sig):]
            core_inputs.append(inp.type.clone(shape=core_shape)(name=inp.name))
        core_outputs = func(*core_inputs)
        if core_outputs is None:
            raise ValueError("vectorize function returned no outputs")
        single = not isinstance(core_outputs, (list, tuple))
        outs = [core_outputs] if single else list(core_outputs)
        if outputs_sig is not None and len(outs) != len(outputs_sig):
            raise ValueError(f"Number of outputs does not match signature: {signature}")
        batched = vectorize_graph(outs, replace=dict(zip(core_inputs, inputs)))
        return batched[0] if single else batched

    return vectorized


__all__ = ["vectorize"]
