"""Sampling from a given array: ``choice`` (with or without replacement, with ``p``)
and ``permutation``."""

from __future__ import annotations

import numpy as np

from lucent.tensor.basic import as_tensor_variable, get_vector_length
from lucent.tensor.random.discrete import integers
from lucent.tensor.random.multivariate import categorical
from lucent.tensor.random.op import RandomVariable
from lucent.tensor.random.utils import normalize_size_param
from lucent.tensor.shape import specify_shape


class ChoiceWithoutReplacement(RandomVariable):
    """Draws without replacement from ``a`` (optionally with probabilities ``p``)."""

    name = "choice_without_replacement"
    dtype = None
    _print_name = ("choice_without_replacement", "\\operatorname{choice_without_replacement}")

    @property
    def has_p_param(self):
        return len(self.ndims_params) == 3

    def _supp_shape_from_params(self, dist_params, param_shapes=None):
        a, *_, core_shape = dist_params
        a_shape = tuple(a.shape[i] for i in range(a.type.ndim)) if param_shapes is None else tuple(param_shapes[0])
        a_batch_ndim = len(a_shape) - self.ndims_params[0]
        a_core_shape = a_shape[a_batch_ndim:]
        if core_shape.type.ndim > 1:
            core_shape = core_shape[(0,) * (core_shape.type.ndim - 1)]
        n = get_vector_length(core_shape)
        return tuple(core_shape[i] for i in range(n)) + tuple(a_core_shape[1:])

    def rng_fn(self, *params):
        if self.has_p_param:
            rng, a, p, core_shape, size = params
        else:
            rng, a, core_shape, size = params
            p = None
        if core_shape.ndim > 1:
            core_shape = core_shape[(0,) * (core_shape.ndim - 1)]
        core_shape = tuple(int(c) for c in core_shape)
        batch_ndim = a.ndim - self.ndims_params[0]
        if batch_ndim == 0:
            return rng.choice(a, p=p, size=core_shape or None, replace=False)
        if size is None:
            size = a.shape[:batch_ndim] if p is None else np.broadcast_shapes(
                a.shape[:batch_ndim], p.shape[:batch_ndim]
            )
        size = tuple(size)
        a = np.broadcast_to(a, size + a.shape[batch_ndim:])
        if p is not None:
            p = np.broadcast_to(p, size + p.shape[batch_ndim:])
        out = np.empty(size + core_shape + a.shape[len(size) + 1:], dtype=a.dtype)
        for idx in np.ndindex(*size):
            out[idx] = rng.choice(a[idx], p=None if p is None else p[idx], size=core_shape, replace=False)
        return out

def choice(a, size=None, replace=True, p=None, rng=None, return_next_rng=False):
    """Draws from ``a`` (an int ``n`` means ``arange(n)``), with or without replacement."""
    a = as_tensor_variable(a)
    a_size = a if a.type.ndim == 0 else a.shape[0]
    if p is not None:
        p = specify_shape(p, (a_size,))
    if replace or size is None:
        if p is None:
            next_rng, idxs = integers(0, a_size, size=size, rng=rng, return_next_rng=True)
        else:
            next_rng, idxs = categorical(p, size=size, rng=rng, return_next_rng=True)
        out = idxs if a.type.ndim == 0 else a[idxs]
        return (next_rng, out) if return_next_rng else out
    core_shape = normalize_size_param(size)
    n_core = get_vector_length(core_shape)
    a_dims = [f"a{i}" for i in range(a.type.ndim)]
    idx_dims = [f"s{i}" for i in range(n_core)]
    if a.type.ndim == 0:
        p_sig, out_dims = "a", idx_dims
    else:
        p_sig, out_dims = a_dims[0], idx_dims + a_dims[1:]
    a_sig, out_sig = ",".join(a_dims), ",".join(out_dims)
    if p is None:
        signature = f"({a_sig}),({n_core})->({out_sig})"
    else:
        signature = f"({a_sig}),({p_sig}),({n_core})->({out_sig})"
    op = ChoiceWithoutReplacement(signature=signature, dtype=a.type.dtype)
    params = (a, core_shape) if p is None else (a, p, core_shape)
    return op(*params, size=None, rng=rng, return_next_rng=return_next_rng)

class PermutationRV(RandomVariable):
    """A random permutation of ``x`` (or of ``arange(x)`` for an integer)."""

    name = "permutation"
    _print_name = ("permutation", "\\operatorname{permutation}")

    def _supp_shape_from_params(self, dist_params, param_shapes=None):
        [x] = dist_params
        if self.ndims_params[0] == 0:
            return (x.ravel()[0],) if hasattr(x, "ravel") else (x.flatten()[0],)
        shape = tuple(x.shape[i] for i in range(x.type.ndim)) if param_shapes is None else tuple(param_shapes[0])
        return shape[x.type.ndim - self.ndims_params[0]:]

    def rng_fn(self, rng, x, size):
        batch_ndim = x.ndim - self.ndims_params[0]
        if batch_ndim:
            if size is None:
                size = x.shape[:batch_ndim]
            else:
                size = tuple(size)
                x = np.broadcast_to(x, size + x.shape[batch_ndim:])
            scalar = self.ndims_params[0] == 0
            core = (int(x.flat[0]),) if scalar else x.shape[batch_ndim:]
            out = np.empty(tuple(size) + core, dtype=x.dtype)
            for idx in np.ndindex(*size):
                out[idx] = rng.permutation(x[idx].item() if scalar else x[idx])
            return out
        return rng.permutation(x.item() if self.ndims_params[0] == 0 else x)

def permutation(x, size=None, rng=None, return_next_rng=False):
    """A random permutation of ``x``'s first core dimension (or of ``arange(x)``)."""
    x = as_tensor_variable(x)
    if x.type.ndim == 0:
        signature = "()->(x)"
    else:
        sig = ",".join(f"x{i}" for i in range(x.type.ndim))
        signature = f"({sig})->({sig})"
    return PermutationRV(signature=signature, dtype=x.type.dtype)(
        x, size=size, rng=rng, return_next_rng=return_next_rng
    )


__all__ = [
    "ChoiceWithoutReplacement",
    "choice",
    "PermutationRV",
    "permutation",
]
