"""Helpers of random variables (size and parameter broadcasting) and ``RandomStream``.

``normalize_size_param`` turns a user's ``size`` into the symbolic input a
``RandomVariable`` node takes (``NoneConst`` or an int64 vector of static
length); ``broadcast_params`` / ``params_broadcast_shapes`` broadcast the
*batch* dimensions of parameters while leaving each parameter's core
(support) dimensions alone. ``RandomStream`` is the older interface that
hands out draws from shared generators it seeds and updates itself.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from copy import deepcopy
from functools import wraps
from itertools import zip_longest
from types import ModuleType

import numpy as np
from numpy.random import Generator

from lucent.graph.basic import Variable
from lucent.tensor.basic import as_tensor_variable, cast, get_vector_length
from lucent.tensor.shape import NoneConst, NoneTypeT, shape_padleft, specify_shape


def params_broadcast_shapes(param_shapes, ndims_params, use_pytensor=True):
    """The shapes of parameters after broadcasting their batch dimensions together.

    ``ndims_params[i]`` core dimensions of parameter ``i`` are kept as they are.
    With ``use_pytensor`` the lengths may be symbolic (combined with ``maximum``).
    """
    if use_pytensor:
        from lucent.tensor.math import maximum as max_fn
    else:
        max_fn = max

    def max_bcast(x, y):
        if getattr(x, "value", x) == 1 if not isinstance(x, Variable) else _is_one(x):
            return y
        if getattr(y, "value", y) == 1 if not isinstance(y, Variable) else _is_one(y):
            return x
        return max_fn(x, y)

    rev_extra = []
    for ndim_param, shape in zip(ndims_params, param_shapes):
        shape = tuple(shape)
        extras = shape[: len(shape) - ndim_param]
        rev_extra = [max_bcast(a, b) for a, b in zip_longest(reversed(extras), rev_extra, fillvalue=1)]
    extra = tuple(reversed(rev_extra))
    return [
        (extra + tuple(shape)[-nd:]) if nd > 0 else extra
        for nd, shape in zip(ndims_params, param_shapes)
    ]


def _is_one(v):
    from lucent.tensor.basic import _static_int

    return _static_int(v) == 1


def broadcast_params(params, ndims_params):
    """Broadcast the batch dimensions of ``params`` (arrays or variables), keeping core dims."""
    use_symbolic = any(isinstance(p, Variable) for p in params)
    shapes = []
    for p in params:
        if isinstance(p, Variable):
            shapes.append(
                tuple(1 if b else p.shape[d] for d, b in enumerate(p.type.broadcastable))
            )
        else:
            shapes.append(tuple(np.shape(p)))
    shapes = params_broadcast_shapes(shapes, ndims_params, use_pytensor=use_symbolic)
    if use_symbolic:
        from lucent.tensor.creation import alloc

        return [alloc(as_tensor_variable(p), *shape) for shape, p in zip(shapes, params)]
    return [np.broadcast_to(np.asarray(p), shape) for shape, p in zip(shapes, params)]


def explicit_expand_dims(params, ndim_params, size_length=None):
    """Pad parameters on the left so all have the same number of batch dimensions (or ``size``'s)."""
    batch_dims = [p.type.ndim - nd for p, nd in zip(params, ndim_params, strict=True)]
    if size_length is not None:
        max_batch = size_length
    else:
        max_batch = max(batch_dims, default=0)
    out = []
    for p, bd in zip(params, batch_dims, strict=True):
        missing = max_batch - bd
        if missing:
            p = shape_padleft(p, missing)
        out.append(p)
    return out


def normalize_size_param(shape):
    """The ``size`` input of a random variable node: ``NoneConst`` or an int64 vector of known length."""
    if shape is None:
        return NoneConst
    if isinstance(shape, Variable) and isinstance(shape.type, NoneTypeT):
        return shape
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return as_tensor_variable(np.array([int(shape)], dtype="int64"))
    if not isinstance(shape, (Sequence, Variable, np.ndarray)) or isinstance(shape, str):
        raise TypeError(
            f"Parameter size must be None, an integer, or a sequence with integers; got {shape!r}"
        )
    var = as_tensor_variable(shape, ndim=1) if not isinstance(shape, Variable) or shape.type.ndim != 1 else shape
    if isinstance(shape, (Sequence, np.ndarray)) and len(shape) == 0:
        var = as_tensor_variable(np.zeros((0,), dtype="int64"))
    if var.type.dtype[:3] not in ("int", "uin"):
        raise TypeError(f"Parameter size must hold integers, got dtype {var.type.dtype} ({shape!r})")
    if var.type.dtype != "int64":
        var = cast(var, "int64")
    if var.type.shape == (None,):
        var = specify_shape(var, (get_vector_length(var),))
    return var


def custom_rng_deepcopy(rng):
    """A copy of ``rng`` in the same state (faster than ``copy.deepcopy``)."""
    old = rng.bit_generator
    new = type(old)(deepcopy(old._seed_seq))
    new.state = old.state
    return Generator(new)


def supp_shape_from_ref_param_shape(*, ndim_supp, dist_params, param_shapes=None, ref_param_idx):
    """The support shape of a multivariate RV: the last ``ndim_supp`` lengths of a reference parameter."""
    if ndim_supp <= 0:
        raise ValueError("ndim_supp must be greater than 0")
    if param_shapes is not None:
        ref = param_shapes[ref_param_idx]
        return tuple(ref[i] for i in range(-ndim_supp, 0))
    ref = dist_params[ref_param_idx]
    if ref.ndim < ndim_supp:
        raise ValueError(
            "Reference parameter does not match the expected dimensions; "
            f"{ref} has less than {ndim_supp} dim(s)."
        )
    return ref.shape[-ndim_supp:]


class RandomStream:
    """Draws from shared generators that it seeds, and updates after every call.

    Every ``stream.normal(...)`` (any distribution of
    ``lucent.tensor.random.basic``) makes a new shared generator, seeded
    from this stream's ``SeedSequence``, whose ``default_update`` is the
    advanced generator: each call of a function using the draw gives new
    numbers, and two functions using it advance the same generator.
    ``seed(s)`` re-seeds every generator made so far.

    Deprecated in favour of ``shared_rng()`` and its methods.
    """

    def __init__(self, seed=None, namespace: ModuleType | None = None,
                 rng_ctor: Callable = np.random.default_rng):
        warnings.warn(
            "RandomStream is deprecated. Use pt.random.shared_rng() and the rng.method() API "
            "instead.",
            FutureWarning,
            stacklevel=2,
        )
        if namespace is None:
            from lucent.tensor.random import basic

            self.namespaces = [(basic, set(basic.__all__))]
        else:
            self.namespaces = [(namespace, set(namespace.__all__))]
        self.default_instance_seed = seed
        self.state_updates = []
        self.gen_seedgen = np.random.SeedSequence(seed)
        self.rng_ctor = rng_ctor

    def __getattr__(self, obj):
        if obj.startswith("__") or obj in ("namespaces",):
            raise AttributeError(obj)
        found = next(
            (getattr(ns, obj) for ns, names in self.namespaces if obj in names and hasattr(ns, obj)),
            None,
        )
        if found is None:
            raise AttributeError(f"No attribute {obj}.")

        @wraps(found)
        def meta_obj(*args, **kwargs):
            return self.gen(found, *args, **kwargs)

        setattr(self, obj, meta_obj)
        return meta_obj

    def updates(self):
        """The ``(shared generator, next generator)`` pairs made so far."""
        return list(self.state_updates)

    def seed(self, seed=None):
        """Re-seed every generator of the stream from ``seed`` (default: the stream's seed)."""
        if seed is None:
            seed = self.default_instance_seed
        self.gen_seedgen = np.random.SeedSequence(seed)
        seeds = self.gen_seedgen.spawn(len(self.state_updates))
        for (old_r, _), s in zip(self.state_updates, seeds, strict=True):
            old_r.set_value(self.rng_ctor(s), borrow=True)

    def gen(self, op, *args, **kwargs):
        """Draw from ``op`` with a new shared generator whose default update advances it."""
        from lucent.tensor.random.variable import shared_rng

        if "rng" in kwargs:
            raise ValueError("The `rng` option cannot be used with a variate in a `RandomStream`")
        (seed,) = self.gen_seedgen.spawn(1)
        rng = shared_rng(self.rng_ctor(seed), borrow=True)
        kwargs["return_next_rng"] = True
        new_rng, out = op(*args, **kwargs, rng=rng)
        self.state_updates.append((rng, new_rng))
        rng.default_update = new_rng
        return out


__all__ = [
    "params_broadcast_shapes",
    "broadcast_params",
    "explicit_expand_dims",
    "normalize_size_param",
    "custom_rng_deepcopy",
    "supp_shape_from_ref_param_shape",
    "RandomStream",
]
