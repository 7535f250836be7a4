"""Matrix equations of linear control: Sylvester, Lyapunov (continuous and discrete), discrete Riccati.

* ``solve_sylvester(A, B, Q)``: ``A X + X B = Q`` (``SolveSylvester``);
* ``solve_continuous_lyapunov(A, Q)``: ``A X + X A^H = Q``, the Sylvester
  equation with ``B = A^H``;
* ``solve_discrete_lyapunov(A, Q, method)``: ``A X A^H - X + Q = 0``;
  'direct' solves the ``n^2`` linear system ``(I - A (x) conj(A)) vec(X) =
  vec(Q)`` as a graph, 'bilinear' maps it to a continuous equation first
  (fewer operations for large ``n``);
* ``solve_discrete_are(A, B, Q, R)``: ``X = A^T X A - A^T X B (R + B^T X B)^-1
  B^T X A + Q`` (``SolveDiscreteARE``).

The gradients come from differentiating each equation implicitly: the
cotangent of ``Q`` solves the adjoint equation, and those of the
coefficients follow from it (see each op's ``L_op``).
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import check_core_ndim, linalg_output_dtype
from lucent.tensor.type import TensorType


def _square(x, who, what):
    check_core_ndim(x, 2, who, what)
    r, c = x.type.shape
    if r is not None and c is not None and r != c:
        raise ValueError(f"{who}: {what} must be square, got static shape {x.type.shape}")


class SolveSylvester(BatchedCoreOp):
    """``scipy.linalg.solve_sylvester``: ``X`` with ``A X + X B = Q``.

    Gradient: ``Q_bar`` solves ``A^H Q_bar + Q_bar B^H = X_bar``; then
    ``A_bar = -Q_bar X^H`` and ``B_bar = -X^H Q_bar``.
    """

    __props__ = ()
    gufunc_signature = "(m,m),(n,n),(m,n)->(m,n)"

    def make_node(self, A, B, Q):
        A, B, Q = (as_tensor_variable(v) for v in (A, B, Q))
        _square(A, "solve_sylvester", "A")
        _square(B, "solve_sylvester", "B")
        check_core_ndim(Q, 2, "solve_sylvester", "the matrix Q")
        dtype = linalg_output_dtype(A.type.dtype, B.type.dtype, Q.type.dtype)
        return Apply(self, [A, B, Q], [TensorType(dtype, Q.type.shape)()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        dtype = node.outputs[0].type.dtype
        A, B, Q = (np.asarray(v, dtype=dtype) for v in inputs)
        if A.shape[0] != Q.shape[0] or B.shape[0] != Q.shape[1]:
            raise ValueError(f"solve_sylvester: shapes A {A.shape}, B {B.shape} and Q {Q.shape} do not match")
        output_storage[0][0] = np.asarray(scipy.linalg.solve_sylvester(A, B, Q), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[2])]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.math import conj, dot

        A, B, _ = inputs
        (X,), (g,) = outputs, output_grads
        q_bar = self(conj(A).T, conj(B).T, g)
        xh = conj(X).T
        return [-dot(q_bar, xh), -dot(xh, q_bar), q_bar]


def solve_sylvester(A, B, Q):
    """Solve the Sylvester equation ``A X + X B = Q`` for ``X``."""
    return SolveSylvester()(A, B, Q)


def solve_continuous_lyapunov(A, Q):
    """Solve the continuous Lyapunov equation ``A X + X A^H = Q`` for ``X``."""
    from lucent.tensor.math import conj

    A = as_tensor_variable(A)
    return solve_sylvester(A, conj(A).mT, Q)


def solve_discrete_lyapunov(A, Q, method="bilinear"):
    """Solve the discrete Lyapunov equation ``A X A^H - X + Q = 0`` for ``X``.

    ``method='direct'`` solves the vectorised ``n^2 x n^2`` system;
    ``'bilinear'`` (default) transforms to a continuous Lyapunov equation.
    Leading dimensions of ``A`` and ``Q`` are batch dimensions (broadcast
    against each other): every step below works on stacks of matrices.
    """
    from lucent.tensor.basic import concatenate
    from lucent.tensor.creation import eye
    from lucent.tensor.spacing import broadcast_arrays
    from lucent.tensor.linalg.solvers.general import solve
    from lucent.tensor.math import conj
    from lucent.tensor.shape import reshape

    if method not in ("direct", "bilinear"):
        raise ValueError(f"solve_discrete_lyapunov: method must be 'direct' or 'bilinear', got {method!r}")
    A, Q = as_tensor_variable(A), as_tensor_variable(Q)
    for v, what in ((A, "A"), (Q, "Q")):
        if v.type.ndim < 2:
            raise ValueError(f"solve_discrete_lyapunov expects {what} with at least 2 dimensions, got {v.type}")
        r, c = v.type.shape[-2:]
        if r is not None and c is not None and r != c:
            raise ValueError(f"solve_discrete_lyapunov: {what} must be square, got static shape {v.type.shape}")
    dtype = linalg_output_dtype(A.type.dtype, Q.type.dtype)
    A, Q = A.astype(dtype), Q.astype(dtype)
    if A.type.ndim != Q.type.ndim or A.type.ndim > 2:
        A, Q = broadcast_arrays(A, Q)
    nb = A.type.ndim - 2
    n = A.shape[-1]
    if method == "direct":
        # kron(A, conj(A)) of every matrix of the stack, then one n^2 x n^2 solve each.
        left = A.dimshuffle(*range(nb), nb, "x", nb + 1, "x")
        right = conj(A).dimshuffle(*range(nb), "x", nb, "x", nb + 1)
        batch = A.shape[:nb]
        axa = reshape(left * right, concatenate([batch, [n * n, n * n]]), ndim=nb + 2)
        vec_q = reshape(Q, concatenate([batch, [n * n]]), ndim=nb + 1)
        vec_x = solve(eye(n * n, dtype=dtype) - axa, vec_q, b_ndim=1)
        return reshape(vec_x, A.shape, ndim=nb + 2)
    ident = eye(n, dtype=dtype)
    ah = conj(A).mT
    b1, b2 = ah + ident, ah - ident
    # B = (A^H - I)(A^H + I)^-1 and C = 2 (A + I)^-1 Q (A^H + I)^-1, through solves.
    b = solve(b1.mT, b2.mT).mT
    c = 2 * solve(b1.mT, solve(A + ident, Q).mT).mT
    return solve_continuous_lyapunov(conj(b).mT, -c)


class SolveDiscreteARE(BatchedCoreOp):
    """``scipy.linalg.solve_discrete_are``: the stabilising solution ``X`` of the discrete Riccati equation.

    Gradient (real inputs): with ``K = (R + B^T X B)^-1 B^T X A`` and
    ``A_c = A - B K``, ``S`` solves ``S = A_c S A_c^T + X_bar``; then
    ``Q_bar = S``, ``A_bar = X A_c S^T + X^T A_c S``,
    ``B_bar = -(X^T A_c S + X A_c S^T) K^T`` and ``R_bar = K S K^T``.
    """

    __props__ = ()
    gufunc_signature = "(m,m),(m,n),(m,m),(n,n)->(m,m)"

    def make_node(self, A, B, Q, R):
        A, B, Q, R = (as_tensor_variable(v) for v in (A, B, Q, R))
        _square(A, "solve_discrete_are", "A")
        check_core_ndim(B, 2, "solve_discrete_are", "the matrix B")
        _square(Q, "solve_discrete_are", "Q")
        _square(R, "solve_discrete_are", "R")
        dtype = linalg_output_dtype(A.type.dtype, B.type.dtype, Q.type.dtype, R.type.dtype)
        return Apply(self, [A, B, Q, R], [TensorType(dtype, A.type.shape)()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        dtype = node.outputs[0].type.dtype
        A, B, Q, R = (np.asarray(v, dtype=dtype) for v in inputs)
        output_storage[0][0] = np.asarray(scipy.linalg.solve_discrete_are(A, B, Q, R), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.linalg.solvers.general import solve
        from lucent.tensor.math import dot

        A, B, Q, R = inputs
        (X,), (g,) = outputs, output_grads
        if X.type.dtype.startswith("complex"):
            raise NotImplementedError("solve_discrete_are: the gradient for complex input is not implemented")
        K = solve(R + dot(B.T, dot(X, B)), dot(B.T, dot(X, A)))
        Ac = A - dot(B, K)
        S = solve_discrete_lyapunov(Ac, g, method="direct")
        xacs = dot(X, dot(Ac, S.T))
        xtacs = dot(X.T, dot(Ac, S))
        return [xacs + xtacs, -dot(xtacs + xacs, K.T), S, dot(K, dot(S, K.T))]


def solve_discrete_are(A, B, Q, R):
    """Solve the discrete algebraic Riccati equation for its stabilising solution ``X``."""
    return SolveDiscreteARE()(A, B, Q, R)


__all__ = [
    "SolveDiscreteARE",
    "SolveSylvester",
    "solve_continuous_lyapunov",
    "solve_discrete_are",
    "solve_discrete_lyapunov",
    "solve_sylvester",
]
