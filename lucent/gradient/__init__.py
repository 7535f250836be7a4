"""Automatic differentiation of lucent graphs (``lucent.gradient``, PyTensor's ``pytensor.gradient``).

The result of every function here is again a symbolic graph, so gradients
can be compiled, optimised and differentiated again.

* reverse mode (``reverse``): ``grad`` of a scalar cost, ``pullback``
  (vector-Jacobian products from any cotangents), ``subgraph_grad``;
* forward mode (``forward``): ``pushforward`` (Jacobian-vector products),
  by default the transpose of the pull-back, so ops need only a pull-back;
* ``jacobian`` (row by row, or one vectorized graph), ``hessian``,
  ``hessian_vector_product`` (``jacobian``);
* what a gradient can be besides a tensor (``types``): ``DisconnectedType``
  (no dependency) and ``NullType`` (undefined or not implemented);
* ops that only change the gradient (``ops``): ``zero_grad``,
  ``disconnected_grad``, ``undefined_grad``, ``grad_clip``, ``grad_scale``;
* ``verify_grad`` and ``numeric_grad`` check a symbolic gradient against
  finite differences (``verify``).
"""

from lucent.gradient.types import (
    DisconnectedInputError,
    DisconnectedType,
    NullType,
    NullTypeGradError,
    disconnected_type,
    grad_not_implemented,
    grad_undefined,
    null_type,
)
from lucent.gradient.ops import (
    DisconnectedGrad,
    GradClip,
    GradScale,
    UndefinedGrad,
    ZeroGrad,
    _GradientBarrier,
    disconnected_grad,
    disconnected_grad_,
    grad_clip,
    grad_scale,
    undefined_grad,
    undefined_grad_,
    zero_grad,
    zero_grad_,
)
from lucent.gradient.reverse import as_list_or_tuple, grad, pullback, subgraph_grad
from lucent.gradient.forward import Lop, Rop, pushforward
from lucent.gradient.jacobian import hessian, hessian_vector_product, jacobian
from lucent.gradient.verify import GradientError, numeric_grad, verify_grad

__all__ = [
    "grad", "pullback", "pushforward", "as_list_or_tuple", "Lop", "Rop", "subgraph_grad",
    "jacobian", "hessian", "hessian_vector_product", "verify_grad", "numeric_grad",
    "zero_grad", "zero_grad_", "disconnected_grad", "disconnected_grad_", "undefined_grad", "undefined_grad_",
    "grad_clip", "grad_scale", "ZeroGrad", "DisconnectedGrad", "UndefinedGrad", "GradClip", "GradScale",
    "DisconnectedType", "disconnected_type", "NullType", "null_type", "grad_undefined", "grad_not_implemented",
    "DisconnectedInputError", "NullTypeGradError", "GradientError",
]
