"""Graph rewrites for sparse ops (registered in ``optdb`` on import of ``lucent.sparse``).

Always on:

* ``local_csm_properties_csm``: taking apart a matrix that was just built,
  ``csm_properties(CSM(data, indices, indptr, shape))``, gives back those
  four inputs;
* ``local_dense_from_sparse_sparse_from_dense``: ``dense_from_sparse(
  csr_from_dense(x))`` is ``x``;
* ``local_inplace_remove0``: ``Remove0`` drops explicit zeros in the input
  matrix's own buffers instead of a copy, when the input may be overwritten
  (an intermediate result, or a function input declared ``In(x, mutable=True)``).

Fusing ``dot(sparse, dense)`` patterns, as PyTensor's rewrites do:
``local_usmm`` turns ``z - alpha * dot(x, y)`` into one ``Usmm`` node. It
is registered, and like PyTensor's it only fires when a BLAS library is
configured (``config.blas__ldflags``), which is when the fused kernel is
worth it. The rewrites to the array-level ops of ``lucent.sparse.unpacked``
(``local_usmm_csx``, ``local_mul_s_d``, ``local_mul_s_v``,
``local_structured_add_s_v``, ``local_sampling_dot_csr``,
``local_structured_dot``, ``local_csm_grad_c``) are defined for use with
an explicit rewriter; as in PyTensor they are not part of the default
modes, because the Numba kernels of the sparse ops work on the arrays of
the matrix already and a split graph hides size checks.
"""

from __future__ import annotations

from lucent.configdefaults import config
from lucent.graph.rewriting.basic import node_rewriter
from lucent.sparse import basic as sb
from lucent.sparse import math as spm
from lucent.sparse.basic import Remove0
from lucent.tensor import math as _tm
from lucent.sparse.unpacked import *  # noqa: F401,F403  (PyTensor keeps these ops here)
from lucent.sparse.unpacked import (
    mul_s_d_csc,
    mul_s_d_csr,
    mul_s_v_csr,
    sampling_dot_csr,
    sd_csc,
    sd_csr,
    structured_add_s_v_csr,
    usmm_csc_dense,
    usmm_csc_dense_inplace,
    csm_grad_c,
)
from lucent.tensor.rewriting.registry import (
    register_canonicalize,
    register_inplace,
    register_specialize,
)


@register_specialize
@node_rewriter([sb.CSMProperties])
def local_csm_properties_csm(fgraph, node):
    """``csm_properties(CSM(data, indices, indptr, shape))`` -> ``data, indices, indptr, shape``."""
    csm = node.inputs[0].owner
    if csm is None or not isinstance(csm.op, sb.CSM):
        return False
    data, indices, indptr, shape = csm.inputs
    from lucent.tensor.basic import cast

    out = []
    for new, old in zip((data, indices, indptr, shape), node.outputs):
        if new.type.dtype != old.type.dtype:
            new = cast(new, old.type.dtype)
        out.append(new)
    return out


@register_inplace
@node_rewriter([Remove0], inplace=True)
def local_inplace_remove0(fgraph, node):
    """``Remove0`` -> ``Remove0{inplace}`` when its input may be overwritten."""
    if node.op.inplace:
        return None
    x = node.inputs[0]
    if x.owner is None and x not in getattr(fgraph, "destroyable_inputs", ()):
        return None
    return [Remove0(inplace=True)(x)]


@register_canonicalize("fast_compile")
@register_specialize
@node_rewriter([sb.DenseFromSparse])
def local_dense_from_sparse_sparse_from_dense(fgraph, node):
    """``dense_from_sparse(sparse_from_dense(x))`` -> ``x``."""
    inner = node.inputs[0].owner
    if inner is not None and isinstance(inner.op, sb.SparseFromDense):
        x = inner.inputs[0]
        if x.type.dtype == node.outputs[0].type.dtype:
            return [x]
    return False


def _is_scalar_like(var):
    return all(s == 1 for s in var.type.shape)


def _owner_op(var, op):
    return var.owner if var.owner is not None and var.owner.op == op else None


@register_specialize
@node_rewriter([_tm.sub])
def local_usmm(fgraph, node):
    """``z - alpha * dot(x, y)`` -> ``usmm(-alpha, x, y, z)`` (with a BLAS library configured)."""
    if not config.blas__ldflags:
        return False
    z, prod = node.inputs
    mul_node = _owner_op(prod, _tm.mul)
    if mul_node is None or len(mul_node.inputs) != 2:
        return False
    alpha, dot_out = mul_node.inputs
    dot_node = dot_out.owner
    if dot_node is None or not isinstance(dot_node.op, spm.Dot) or not _is_scalar_like(alpha):
        return False
    if len(fgraph.clients.get(prod, ())) > 1 or len(fgraph.clients.get(dot_out, ())) > 1:
        return False
    x, y = dot_node.inputs
    if x.type.ndim != 2 or y.type.ndim != 2 or z.type.ndim != 2:
        return False
    new = spm.usmm(_tm.neg(alpha), x, y, z)
    if new.type != node.outputs[0].type:
        return False
    return [new]


@node_rewriter([spm.Usmm])
def local_usmm_csx(fgraph, node):
    """``usmm(alpha, csc x, dense y, z)`` -> ``usmm_csc_dense`` on ``x``'s arrays."""
    alpha, x, y, z = node.inputs
    if not sb._is_sparse_variable(x) or sb._is_sparse_variable(y) or x.type.format != "csc":
        return False
    dtype = node.outputs[0].type.dtype
    if dtype not in ("float32", "float64") or y.type.dtype != dtype:
        return False
    x_val, x_ind, x_ptr, x_shape = sb.csm_properties(x)
    return [usmm_csc_dense(alpha, x_val, x_ind, x_ptr, x_shape[0], y, z)]


@node_rewriter([usmm_csc_dense])
def local_usmm_csc_dense_inplace(fgraph, node):
    """``usmm_csc_dense`` -> its in-place form."""
    return [usmm_csc_dense_inplace(*node.inputs)]


@node_rewriter([spm.StructuredDot])
def local_structured_dot(fgraph, node):
    """``structured_dot(csc/csr a, dense b)`` -> ``sd_csc`` / ``sd_csr`` on ``a``'s arrays."""
    a, b = node.inputs
    if sb._is_sparse_variable(b):
        return False
    a_val, a_ind, a_ptr, a_shape = sb.csm_properties(a)
    if a.type.format == "csc":
        return [sd_csc(a_val, a_ind, a_ptr, a_shape[0], b)]
    if a.type.format == "csr":
        return [sd_csr(a_val, a_ind, a_ptr, b)]
    return False


@node_rewriter([sb.CSMGrad])
def local_csm_grad_c(fgraph, node):
    """``CSMGrad`` -> ``CSMGradC``."""
    return [csm_grad_c(*node.inputs)]


@node_rewriter([spm.MultiplySparseDense])
def local_mul_s_d(fgraph, node):
    """``mul_s_d(sparse, dense matrix)`` -> ``CSx(mul_s_d_csx(arrays, dense), ...)``."""
    x, y = node.inputs
    svar, dvar = (x, y) if sb._is_sparse_variable(x) else (y, x)
    if dvar.type.ndim != 2 or x.type.dtype != y.type.dtype:
        return False
    build, op = (sb.CSC, mul_s_d_csc) if svar.type.format == "csc" else (sb.CSR, mul_s_d_csr)
    data, ind, ptr, shape = sb.csm_properties(svar)
    return [build(op(data, ind, ptr, dvar), ind, ptr, shape)]


def _csr_vector_rewrite(array_op):
    def rewrite(fgraph, node):
        x, y = node.inputs
        svar, dvar = (x, y) if sb._is_sparse_variable(x) else (y, x)
        if dvar.type.ndim != 1 or svar.type.format != "csr":
            return False
        data, ind, ptr, shape = sb.csm_properties(svar)
        return [sb.CSR(array_op(data, ind, ptr, dvar), ind, ptr, shape)]

    return rewrite


local_mul_s_v = node_rewriter([spm.SparseDenseVectorMultiply])(_csr_vector_rewrite(mul_s_v_csr))
local_mul_s_v.__doc__ = "``mul_s_v(csr x, vector)`` -> ``CSR(mul_s_v_csr(x's arrays, vector), ...)``."
local_structured_add_s_v = node_rewriter([spm.StructuredAddSV])(_csr_vector_rewrite(structured_add_s_v_csr))


@node_rewriter([spm.SamplingDot])
def local_sampling_dot_csr(fgraph, node):
    """``sampling_dot(x, y, csr p)`` -> ``CSR(sampling_dot_csr(x, y, p's arrays))`` (with BLAS)."""
    if not config.blas__ldflags:
        return False
    from lucent.tensor.shape import shape, specify_shape

    x, y, p = node.inputs
    if p.type.format != "csr":
        return False
    p_data, p_ind, p_ptr, p_shape = sb.csm_properties(p)
    z_data, z_ind, z_ptr = sampling_dot_csr(x, y, p_data, p_ind, p_ptr, p_shape[1])
    return [specify_shape(sb.CSR(z_data, z_ind, z_ptr, p_shape), shape(node.outputs[0]))]


__all__ = [
    "local_csm_properties_csm",
    "local_inplace_remove0",
    "local_dense_from_sparse_sparse_from_dense",
    "local_usmm",
    "local_usmm_csx",
    "local_usmm_csc_dense_inplace",
    "local_structured_dot",
    "local_csm_grad_c",
    "local_mul_s_d",
    "local_mul_s_v",
    "local_structured_add_s_v",
    "local_sampling_dot_csr",
]
