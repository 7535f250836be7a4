"""Linear convolution of 1-d and 2-d arrays, batched over leading dimensions.

One core op per rank (``Convolve1d``, ``Convolve2d``) computes the two modes
that need no padding of the inputs: ``"full"`` (every overlap, length
``n + k - 1``) and ``"valid"`` (complete overlaps only, length
``max(n, k) - min(n, k) + 1``). The mode is a boolean *input* of the op, not
a property: the gradient of a valid convolution is a full or a valid one
depending on which input is longer, which is only known at run time when the
shapes are symbolic. ``"same"`` and the 2-d ``boundary`` options are
expressed by padding ``in1`` and taking a valid convolution, so they need no
kernel of their own. The ops are used through ``Blockwise``, which maps them
over batch dimensions.

The gradient of a convolution is a convolution with the other input
reversed: ``d(in1 * in2)/d in1`` applied to ``g`` is ``g * flip(in2)``,
valid where the output was shorter than ``in1`` and full otherwise.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from lucent.gradient import disconnected_type
from lucent.graph.basic import Apply, Constant
from lucent.graph.op import Op
from lucent.scalar.basic import upcast
from lucent.tensor.basic import as_tensor_variable, join
from lucent.tensor.blockwise import Blockwise
from lucent.tensor.creation import zeros
from lucent.tensor.math import maximum, minimum, switch
from lucent.tensor.subtensor import flip
from lucent.tensor.type import tensor


def _as_mode_flag(full_mode):
    """The ``full_mode`` input as a 0-d boolean tensor (True: "full", False: "valid")."""
    if isinstance(full_mode, (bool, np.bool_)):
        full_mode = np.bool_(full_mode)
    flag = as_tensor_variable(full_mode)
    if flag.type.ndim != 0 or flag.type.dtype != "bool":
        raise ValueError(
            f"Convolution full_mode flag must be a boolean scalar, got {flag.type} "
            "(True for mode='full', False for mode='valid')"
        )
    return flag


class AbstractConvolveNd:
    """What the 1-d and 2-d convolutions share: the node, the shapes and the gradient."""

    __props__ = ()
    ndim: int

    @property
    def gufunc_signature(self):
        data = ",".join(f"n{i}" for i in range(self.ndim))
        kernel = ",".join(f"k{i}" for i in range(self.ndim))
        out = ",".join(f"o{i}" for i in range(self.ndim))
        return f"({data}),({kernel}),()->({out})"

    def make_node(self, in1, in2, full_mode):
        in1 = as_tensor_variable(in1)
        in2 = as_tensor_variable(in2)
        full_mode = _as_mode_flag(full_mode)
        ndim = self.ndim
        if not (in1.type.ndim == ndim and in2.type.ndim == ndim):
            raise ValueError(f"Convolution inputs must have ndim={ndim}, got: in1={in1.type.ndim}, in2={in2.type.ndim}")
        static_mode = None
        if isinstance(full_mode, Constant):
            static_mode = "full" if bool(full_mode.data) else "valid"
        out_shape = []
        for n, k in zip(in1.type.shape, in2.type.shape):
            if static_mode is None or n is None or k is None:
                out_shape.append(None)
            elif static_mode == "full":
                out_shape.append(n + k - 1)
            else:
                out_shape.append(max(n, k) - min(n, k) + 1)
        out = tensor(dtype=upcast(in1.type.dtype, in2.type.dtype), shape=tuple(out_shape))
        return Apply(self, [in1, in2, full_mode], [out])

    def infer_shape(self, fgraph, node, shapes):
        full_mode = node.inputs[2]
        in1_shape, in2_shape, _ = shapes
        return [[switch(full_mode, n + k - 1, maximum(n, k) - minimum(n, k) + 1) for n, k in zip(in1_shape, in2_shape)]]

    def connection_pattern(self, node):
        return [[True], [True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        in1, in2, full_mode = inputs
        (g,) = output_grads
        n, k = in1.shape, in2.shape
        # The gradient of an input is a valid convolution when the output
        # covers it completely (full mode, or valid mode with the other input
        # no longer than it) and a full one otherwise.
        full_in1 = ~full_mode & (k < n).any()
        full_in2 = ~full_mode & (n < k).any()
        return [self(g, flip(in2), full_in1), self(g, flip(in1), full_in2), disconnected_type()]


class Convolve1d(AbstractConvolveNd, Op):
    """``np.convolve(in1, in2, mode)`` for mode "full" (``full_mode`` True) or "valid"."""

    __props__ = ()
    ndim = 1

    def perform(self, node, inputs, output_storage):
        in1, in2, full_mode = inputs
        if in1.size == 0 or in2.size == 0:
            raise ValueError(f"Convolve1d: inputs cannot be empty, got lengths {in1.shape[0]} and {in2.shape[0]}")
        out = np.convolve(in1, in2, mode="full" if full_mode else "valid")
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].type.dtype)


_convolve_1d = Convolve1d()
_blockwise_convolve_1d = Blockwise(_convolve_1d)


def convolve1d(in1, in2, mode: Literal["full", "valid", "same"] = "full"):
    """Discrete linear convolution of ``in1`` (..., N) with ``in2`` (..., M) along the last axis.

    ``mode``: ``"full"`` (length N + M - 1), ``"valid"`` (max(N, M) - min(N, M) + 1:
    complete overlaps only) or ``"same"`` (length N, centred on the full output,
    as ``scipy.signal.convolve``). Leading dimensions are batch dimensions.
    """
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"convolve1d: mode must be 'full', 'valid' or 'same', got {mode!r}")
    in1 = as_tensor_variable(in1)
    in2 = as_tensor_variable(in2)
    if mode == "same":
        # "same" is "valid" on in1 with zeros around it: M // 2 before and (M - 1) // 2 after.
        batch_shape = tuple(in1.shape)[:-1]
        left = zeros((*batch_shape, in2.shape[-1] // 2), dtype=in1.dtype)
        right = zeros((*batch_shape, (in2.shape[-1] - 1) // 2), dtype=in1.dtype)
        in1 = join(-1, left, in1, right)
        mode = "valid"
    flag = np.bool_(mode == "full")
    if in1.type.ndim == 1 and in2.type.ndim == 1:
        # Nothing to batch: the core op itself, which keeps the static output length.
        return _convolve_1d(in1, in2, flag)
    return _blockwise_convolve_1d(in1, in2, flag)


class Convolve2d(AbstractConvolveNd, Op):
    """``scipy.signal.convolve`` of two matrices, mode "full" or "valid".

    ``method`` ("direct", "fft" or "auto") is passed to SciPy on the
    reference path; the Numba kernel always convolves directly.
    """

    __props__ = ("method",)
    ndim = 2

    def __init__(self, method: Literal["direct", "fft", "auto"] = "auto"):
        if method not in ("direct", "fft", "auto"):
            raise ValueError(f"Convolve2d: method must be 'direct', 'fft' or 'auto', got {method!r}")
        self.method = method

    def perform(self, node, inputs, output_storage):
        from scipy import signal as scipy_signal

        in1, in2, full_mode = inputs
        out = scipy_signal.convolve(in1, in2, mode="full" if full_mode else "valid", method=self.method)
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].type.dtype)


def convolve2d(
    in1,
    in2,
    mode: Literal["full", "valid", "same"] = "full",
    boundary: Literal["fill", "wrap", "symm"] = "fill",
    fillvalue: float | int = 0,
    method: Literal["direct", "fft", "auto"] = "auto",
):
    """2-d convolution of ``in1`` (..., N, M) with ``in2`` (..., K, L), as ``scipy.signal.convolve2d``.

    ``mode`` is "full", "valid" or "same"; ``boundary`` says how ``in1`` is
    extended past its edges: "fill" (with ``fillvalue``), "wrap" (periodic) or
    "symm" (mirrored). ``method`` chooses SciPy's algorithm on the reference path.
    """
    from lucent.tensor.pad import pad

    if mode not in ("full", "valid", "same"):
        raise ValueError(f"convolve2d: mode must be 'full', 'valid' or 'same', got {mode!r}")
    if boundary not in ("fill", "wrap", "symm"):
        raise ValueError(f"convolve2d: boundary must be 'fill', 'wrap' or 'symm', got {boundary!r}")
    in1 = as_tensor_variable(in1)
    in2 = as_tensor_variable(in2)
    ndim = max(in1.type.ndim, in2.type.ndim)

    def extend(x, widths):
        if boundary == "fill":
            return pad(x, pad_width=widths, mode="constant", constant_values=fillvalue)
        return pad(x, pad_width=widths, mode="wrap" if boundary == "wrap" else "symmetric")

    def widths(before_rows, after_rows, before_cols, after_cols):
        w = zeros((ndim, 2), dtype="int64")
        w = w[-2, 0].set(before_rows)
        w = w[-2, 1].set(after_rows)
        w = w[-1, 0].set(before_cols)
        return w[-1, 1].set(after_cols)

    k, l = in2.shape[-2], in2.shape[-1]
    if mode == "same":
        in1 = extend(in1, widths(k // 2, (k - 1) // 2, l // 2, (l - 1) // 2))
        mode = "valid"
    if mode == "full" and (boundary != "fill" or fillvalue != 0):
        # A full convolution over an extended in1 is a valid one over in1 extended by the kernel size - 1.
        in1 = extend(in1, widths(k - 1, k - 1, l - 1, l - 1))
        mode = "valid"
    op = Convolve2d(method=method)
    flag = np.bool_(mode == "full")
    if in1.type.ndim == 2 and in2.type.ndim == 2:
        return op(in1, in2, flag)
    return Blockwise(op)(in1, in2, flag)


__all__ = ["AbstractConvolveNd", "Convolve1d", "Convolve2d", "convolve1d", "convolve2d"]
