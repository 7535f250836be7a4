"""Real-input FFTs with gradients (``pytensor.tensor.fft``).

A complex result is stored as a real tensor with a trailing axis of length
2 (real part, imaginary part), so the transforms compose with every real op
and have ordinary real gradients. The first axis is a batch axis; the
transform runs over the others.

``RFFTOp`` is ``np.fft.rfftn`` over the last ``len(s)`` axes and ``IRFFTOp``
the *unnormalised* ``np.fft.irfftn`` (NumPy's result times ``prod(s)``); the
helpers ``rfft`` / ``irfft`` apply the normalisation ``norm`` asks for.

The gradient of the real FFT is the unnormalised inverse real FFT of the
output gradient and vice versa, except that the inverse counts every
frequency strictly between 0 and the Nyquist frequency twice (it stands for
itself and its mirror image), so those entries are halved / doubled.
"""

from __future__ import annotations

import numpy as np

from lucent.gradient import disconnected_type
from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar.dtypes import integer_dtypes
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.math import sqrt
from lucent.tensor.subtensor import set_subtensor
from lucent.tensor.type import TensorType


def _check_lengths(op, s):
    s = as_tensor_variable(s)
    if s.type.dtype not in integer_dtypes or s.type.ndim != 1:
        raise TypeError(f"{type(op).__name__}: length of the transformed axis must be of type integer "
                        f"(a vector of ints), got {s.type}")
    return s


def _mirrored(g, s):
    """The entries of the last frequency axis (second to last of ``g``) that have a mirror image."""
    return (slice(None),) * (g.type.ndim - 2) + (slice(1, (s[-1] // 2) + (s[-1] % 2)), slice(None))


class RFFTOp(Op):
    """``np.fft.rfftn(a, s)`` with the real and imaginary parts on a new last axis of length 2."""

    __props__ = ()

    def output_type(self, inp, n_axes=None):
        """The spectrum's type: batch axes (those before the ``n_axes`` transformed ones) keep their static lengths."""
        batch = inp.type.shape[: inp.type.ndim - n_axes] if n_axes is not None else ()
        return TensorType(inp.type.dtype, shape=batch + (None,) * (inp.type.ndim - len(batch)) + (2,))

    def make_node(self, a, s=None):
        a = as_tensor_variable(a)
        if a.type.ndim < 2:
            raise TypeError(f"{type(self).__name__}: input must have dimension >= 2, with first dimension batches")
        s = as_tensor_variable(a.shape[1:]) if s is None else _check_lengths(self, s)
        return Apply(self, [a, s], [self.output_type(a, s.type.shape[0])()])

    def perform(self, node, inputs, output_storage):
        a, s = inputs
        s = tuple(int(v) for v in s)
        spectrum = np.fft.rfftn(a, s=s, axes=tuple(range(a.ndim - len(s), a.ndim)))
        out = np.empty((*spectrum.shape, 2), dtype=node.outputs[0].type.dtype)
        out[..., 0], out[..., 1] = spectrum.real, spectrum.imag
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, shapes):
        a_shape, _ = shapes
        s = node.inputs[1]
        nd = len(a_shape)
        # The last len(s) axes take the lengths s; len(s) is the usual nd - 1.
        n_s = node.inputs[1].type.shape[0]
        if n_s is None:
            raise NotImplementedError("RFFTOp.infer_shape needs the number of transformed axes")
        first = nd - n_s
        return [(*a_shape[:first], *[s[i] for i in range(n_s - 1)], s[n_s - 1] // 2 + 1, 2)]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        s = inputs[1]
        idx = _mirrored(g, s)
        g = set_subtensor(g[idx], g[idx] * 0.5)
        return [irfft_op(g, s), disconnected_type()]

    def connection_pattern(self, node):
        return [[True], [False]]


rfft_op = RFFTOp()


class IRFFTOp(Op):
    """Unnormalised ``np.fft.irfftn`` of a spectrum stored as (..., 2) real/imaginary pairs."""

    __props__ = ()

    def output_type(self, inp, n_axes=None):
        """The signal's type: batch axes (before the ``n_axes`` transformed ones) keep their static lengths."""
        nd = inp.type.ndim - 1
        batch = inp.type.shape[: nd - n_axes] if n_axes is not None else ()
        return TensorType(inp.type.dtype, shape=batch + (None,) * (nd - len(batch)))

    def make_node(self, a, s=None):
        a = as_tensor_variable(a)
        if a.type.ndim < 3:
            raise TypeError(f"{type(self).__name__}: input must have dimension >= 3,  with "
                            "first dimension batches and last real/imag parts")
        if s is None:
            s = a.shape[1:-1]
            s = as_tensor_variable(set_subtensor(s[-1], (s[-1] - 1) * 2))
        else:
            s = _check_lengths(self, s)
        return Apply(self, [a, s], [self.output_type(a, s.type.shape[0])()])

    def perform(self, node, inputs, output_storage):
        a, s = inputs
        s = tuple(int(v) for v in s)
        spectrum = a[..., 0] + 1j * a[..., 1]
        out = np.fft.irfftn(spectrum, s=s, axes=tuple(range(spectrum.ndim - len(s), spectrum.ndim)))
        output_storage[0][0] = (out * np.prod(s)).astype(node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, shapes):
        a_shape, _ = shapes
        s = node.inputs[1]
        n_s = s.type.shape[0]
        if n_s is None:
            raise NotImplementedError("IRFFTOp.infer_shape needs the number of transformed axes")
        first = len(a_shape) - 1 - n_s
        return [(*a_shape[:first], *[s[i] for i in range(n_s)])]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        s = inputs[1]
        gf = rfft_op(g, s)
        idx = _mirrored(gf, s)
        gf = set_subtensor(gf[idx], gf[idx] * 2)
        return [gf, disconnected_type()]

    def connection_pattern(self, node):
        return [[True], [False]]


irfft_op = IRFFTOp()


def _unitary(norm):
    if norm not in (None, "ortho", "no_norm"):
        raise ValueError(f"Invalid value {norm} for norm, must be None, 'ortho' or 'no_norm'")
    return norm


def rfft(inp, norm=None):
    """FFT of the real batch ``inp`` (m, ..., n) over all axes but the first.

    Returns (m, ..., n // 2 + 1, 2): the non-redundant half of each spectrum,
    real and imaginary parts on the last axis. ``norm``: None (no scaling, as
    NumPy's forward transform), ``"ortho"`` (divide by sqrt of the transform
    size) or ``"no_norm"`` (no scaling).
    """
    inp = as_tensor_variable(inp)
    s = inp.shape[1:]
    scaling = 1
    if _unitary(norm) == "ortho":
        scaling = sqrt(s.prod().astype(inp.dtype))
    return rfft_op(inp, s) / scaling


def irfft(inp, norm=None, is_odd=False):
    """Inverse of ``rfft``: (m, ..., n // 2 + 1, 2) half-spectra to real (m, ..., n).

    ``is_odd`` says whether the original last length ``n`` was odd (the half
    spectrum does not tell). ``norm``: None (divide by the transform size, as
    NumPy), ``"ortho"`` (by its square root) or ``"no_norm"``.
    """
    if is_odd not in (True, False):
        raise ValueError(f"Invalid value {is_odd} for is_odd, must be True or False")
    inp = as_tensor_variable(inp)
    s = inp.shape[1:-1]
    s = set_subtensor(s[-1], (s[-1] - 1) * 2 + (1 if is_odd else 0))
    cond = _unitary(norm)
    scaling = 1
    if cond is None:
        scaling = s.prod().astype(inp.dtype)
    elif cond == "ortho":
        scaling = sqrt(s.prod().astype(inp.dtype))
    return irfft_op(inp, s) / scaling


__all__ = ["IRFFTOp", "RFFTOp", "irfft", "irfft_op", "rfft", "rfft_op"]
