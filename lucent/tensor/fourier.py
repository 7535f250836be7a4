"""``Fourier``: the complex FFT of an array along one axis (``pytensor.tensor.fourier``).

The result is complex128, as ``np.fft.fft``. For transforms with gradients
use ``lucent.tensor.fft`` (real-input FFTs stored as real/imaginary pairs):
lucent's elementwise ops do not differentiate complex graphs, so this op
declares its gradient not implemented.
"""

from __future__ import annotations

import numpy as np

from lucent.gradient import grad_not_implemented
from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar.dtypes import integer_dtypes
from lucent.tensor.basic import as_tensor_variable, concatenate, stack
from lucent.tensor.type import TensorType
from lucent.tensor.variable import TensorConstant


class Fourier(Op):
    """``np.fft.fft(a, n, axis)``: the length-``n`` discrete Fourier transform along ``axis``.

    ``a`` is cropped or zero-padded to ``n`` along ``axis`` (default: its
    length there); ``axis`` defaults to the last axis.
    """

    __props__ = ()

    def make_node(self, a, n, axis):
        a = as_tensor_variable(a)
        if a.type.ndim < 1:
            raise TypeError("Input must be an array, not a scalar")
        if axis is None:
            axis = as_tensor_variable(a.type.ndim - 1)
        else:
            axis = as_tensor_variable(axis)
            if axis.type.dtype not in integer_dtypes:
                raise TypeError("Index of the transformed axis must be of type integer")
            if axis.type.ndim != 0 or (isinstance(axis, TensorConstant) and not 0 <= axis.data < a.type.ndim):
                raise TypeError(
                    "Index of the transformed axis must be a scalar not smaller than 0 and smaller than "
                    f"dimension of array (got {axis} for an array of dimension {a.type.ndim})"
                )
        if n is None:
            n = as_tensor_variable(a.shape[axis])
        else:
            n = as_tensor_variable(n)
            if n.type.dtype not in integer_dtypes:
                raise TypeError("Length of the transformed axis must be of type integer")
            if n.type.ndim != 0 or (isinstance(n, TensorConstant) and n.data < 1):
                raise TypeError("Length of the transformed axis must be a strictly positive scalar")
        n_static = int(n.data) if isinstance(n, TensorConstant) else None
        if isinstance(axis, TensorConstant):
            ax = int(axis.data)
            out_shape = tuple(n_static if i == ax else s for i, s in enumerate(a.type.shape))
        else:
            out_shape = (None,) * a.type.ndim
        return Apply(self, [a, n, axis], [TensorType("complex128", shape=out_shape)()])

    def infer_shape(self, fgraph, node, in_shapes):
        shape_a = in_shapes[0]
        _, n, axis = node.inputs
        if len(shape_a) == 1:
            return [(n,)]
        if isinstance(axis, TensorConstant):
            ax = int(axis.data)
            return [(*shape_a[:ax], n, *shape_a[ax + 1:])]
        # A symbolic axis: splice n into the shape vector and read its entries back.
        vec = stack([as_tensor_variable(s) for s in shape_a])
        out = concatenate([vec[:axis], n.astype(vec.dtype)[None], vec[axis + 1:]])
        return [tuple(out[i] for i in range(len(shape_a)))]

    def perform(self, node, inputs, output_storage):
        a, n, axis = inputs
        output_storage[0][0] = np.fft.fft(a, n=int(n), axis=int(axis))

    def L_op(self, inputs, outputs, output_grads):
        return [
            grad_not_implemented(self, 0, inputs[0], "Gradients of complex graphs are not supported; "
                                 "use lucent.tensor.fft.rfft for a differentiable FFT."),
            grad_not_implemented(self, 1, inputs[1]),
            grad_not_implemented(self, 2, inputs[2]),
        ]


fft = Fourier()

__all__ = ["Fourier", "fft"]
