"""``RandomVariable``: the op of every draw from a distribution.

A node ``rv(rng, size, *params)`` has two outputs: the advanced generator
(output 0) and the draw (output 1, the default output). Keeping the
generator an explicit input and output is what makes randomness safe to
rewrite: two draws from the same state are the same computation (and merge),
draws are never constant-folded, and which generator a function must
update is visible in the graph.

The draw's shape follows NumPy: the ``signature`` (``"(),()->()"`` for a
scalar distribution, ``"(n),(n,n)->(n)"`` for a multivariate normal) says
how many trailing *core* dimensions each parameter and the draw have; the
*batch* dimensions of the parameters broadcast with each other, and a given
``size`` is the batch shape itself (parameters must broadcast to it).

``perform`` draws from a copy of the generator unless the op is
``inplace`` (then ``destroy_map = {0: [0]}`` and the given generator is
advanced); FAST_RUN makes draws in place where the graph allows it
(``random_make_inplace``).
"""

from __future__ import annotations

import abc
import re
import warnings

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.tensor.basic import _static_int, as_tensor_variable, get_vector_length
from lucent.tensor.random.type import RandomGeneratorType, RandomType
from lucent.tensor.random.utils import custom_rng_deepcopy, explicit_expand_dims, normalize_size_param
from lucent.tensor.shape import NoneConst, NoneTypeT
from lucent.tensor.type import TensorType

#: How far from 1 the probabilities of a categorical parameter may sum (float32 rounding).
SIMPLEX_TOLERANCE = 1e-5

_DIM = r"\w+"
_CORE = rf"(?:{_DIM}(?:,{_DIM})*)?"
_ARGS = rf"\({_CORE}\)(?:,\({_CORE}\))*"
_SIGNATURE = re.compile(rf"^(?:{_ARGS})?->{_ARGS}$")


def parse_signature(signature):
    """``"(n),(n,n)->(n)"`` -> ``([("n",), ("n", "n")], [("n",)])``; ``ValueError`` if malformed."""
    sig = signature.replace(" ", "")
    if not _SIGNATURE.match(sig):
        raise ValueError(
            f"not a valid gufunc signature: {signature!r} (expected e.g. '(),()->()' or "
            "'(n),(n,n)->(n)')"
        )

    def parse(part):
        return [tuple(d for d in arg.split(",") if d) for arg in re.findall(r"\(([^)]*)\)", part)]

    ins, outs = sig.split("->")
    return parse(ins), parse(outs)


def safe_signature(core_inputs_ndim, core_outputs_ndim):
    """A signature with distinct dimension names for the given core ranks."""
    k = iter(range(10000))

    def arg(nd):
        return "(" + ",".join(f"i{next(k)}" for _ in range(nd)) + ")"

    ins = ",".join(arg(nd) for nd in core_inputs_ndim)
    outs = ",".join(arg(nd) for nd in core_outputs_ndim)
    return f"{ins}->{outs}"


class RNGConsumerOp(Op):
    """Base of the ops that consume a generator and produce its advanced state."""

    @abc.abstractmethod
    def update(self, node):
        """``{generator input: advanced generator output}`` for the node."""


class RandomVariable(RNGConsumerOp):
    """A draw from a distribution (see the module docstring)."""

    _output_type_depends_on_input_value = True

    __props__ = ("name", "signature", "dtype", "inplace")
    default_output = 1

    #: ``[(parameter index, test, text)]``: the parameter values the
    #: distribution rejects; ``test`` is "positive", "nonnegative", "prob"
    #: (in [0, 1]), "prob_open0" (in (0, 1]) or "simplex" (entries in [0, 1]
    #: summing to 1 within ``SIMPLEX_TOLERANCE``; NumPy itself only checks
    #: that the sum without the last entry is at most 1, and silently gives
    #: the last category what is left).
    param_checks: tuple = ()

    def __init__(self, name=None, ndim_supp=None, ndims_params=None, dtype=None, inplace=None,
                 signature=None):
        super().__init__()
        self.name = name or getattr(self, "name")
        ndim_supp = ndim_supp if ndim_supp is not None else getattr(self, "ndim_supp", None)
        if ndim_supp is not None:
            warnings.warn("ndim_supp is deprecated. Provide signature instead.", FutureWarning)
            self.ndim_supp = ndim_supp
        ndims_params = ndims_params if ndims_params is not None else getattr(self, "ndims_params", None)
        if ndims_params is not None:
            warnings.warn("ndims_params is deprecated. Provide signature instead.", FutureWarning)
            if not isinstance(ndims_params, (list, tuple)):
                raise TypeError("Parameter ndims_params must be sequence type.")
            self.ndims_params = tuple(ndims_params)

        self.signature = signature or getattr(self, "signature", None)
        if self.signature is not None:
            inputs_sig, outputs_sig = parse_signature(self.signature)
            if len(outputs_sig) != 1:
                raise ValueError(
                    f"{self.name}: a RandomVariable signature has exactly one output, got "
                    f"{self.signature!r}"
                )
            self.inputs_sig, self.output_sig = inputs_sig, outputs_sig[0]
            self.ndims_params = [len(s) for s in self.inputs_sig]
            self.ndim_supp = len(self.output_sig)
        else:
            if getattr(self, "ndim_supp", None) is None or getattr(self, "ndims_params", None) is None:
                raise ValueError("signature must be provided")
            self.signature = safe_signature(self.ndims_params, [self.ndim_supp])
            self.inputs_sig, (self.output_sig,) = parse_signature(self.signature)

        if isinstance(dtype, np.dtype):
            dtype = dtype.name
        self.dtype = dtype or getattr(self, "dtype", None)
        self.inplace = inplace if inplace is not None else getattr(self, "inplace", False)
        if self.inplace:
            self.destroy_map = {0: [0]}

    # ------------------------------------------------------------------ structure
    def update(self, node):
        return {node.inputs[0]: node.outputs[0]}

    def rng_param(self, node):
        """The node's generator input."""
        return node.inputs[0]

    def size_param(self, node):
        """The node's ``size`` input (``NoneConst`` when not given)."""
        return node.inputs[1]

    def dist_params(self, node):
        """The node's distribution parameters."""
        return node.inputs[2:]

    def batch_ndim(self, node):
        return node.default_output().type.ndim - self.ndim_supp

    def __str__(self):
        extra = [str(getattr(self, p)) for p in self.__props__ if p not in RandomVariable.__props__]
        props = ", ".join([f'"{self.signature}"'] + extra)
        return f"{self.name}_rv{{{props}}}"

    def __repr__(self):
        props = ",".join(f"{p}={getattr(self, p)}" for p in self.__props__)
        return f"{type(self).__name__}({props})"

    def do_constant_folding(self, fgraph, node):
        # A draw is not a constant: folding would freeze one sample forever.
        return False

    # ------------------------------------------------------------------ numerics
    def rng_fn(self, rng, *args, **kwargs):
        """Draw with NumPy: ``rng.<name>(*params, size)``."""
        return getattr(rng, self.name)(*args, **kwargs)

    def check_params(self, params, size):
        """Raise ``ValueError`` naming the distribution and parameter for bad values or ``size``."""
        for idx, test, text in self.param_checks:
            value = np.asarray(params[idx])
            if test == "positive":
                bad = np.any(value <= 0)
            elif test == "nonnegative":
                bad = np.any(value < 0)
            elif test == "prob":
                bad = np.any((value < 0) | (value > 1) | np.isnan(value))
            elif test == "prob_open0":
                bad = np.any((value <= 0) | (value > 1) | np.isnan(value))
            elif test == "simplex":
                bad = bool(
                    np.any((value < 0) | (value > 1) | np.isnan(value))
                    or np.any(np.abs(value.sum(axis=-1) - 1) > SIMPLEX_TOLERANCE)
                )
            else:
                raise ValueError(f"unknown parameter check {test!r}")
            if bad:
                raise ValueError(f"{self.name}: parameter {text}; got {value!r}")
        if size is not None:
            batch = [np.shape(p)[: np.ndim(p) - nd] for p, nd in zip(params, self.ndims_params)]
            try:
                full = np.broadcast_shapes(tuple(size), *batch)
            except ValueError:
                full = None
            if full != tuple(size):
                raise ValueError(
                    f"{self.name}: size={tuple(size)} is incompatible with the batch shapes of "
                    f"the parameters {batch}; they must broadcast to size"
                )

    def perform(self, node, inputs, outputs):
        rng, size, *args = inputs
        self.check_params(args, size)
        if not self.inplace:
            rng = custom_rng_deepcopy(rng)
        draw = self.rng_fn(rng, *args, None if size is None else tuple(int(s) for s in size))
        outputs[0][0] = rng
        outputs[1][0] = np.asarray(draw, dtype=node.outputs[1].type.dtype)

    # ------------------------------------------------------------------ shapes
    def _supp_shape_from_params(self, dist_params, param_shapes=None):
        """The core (support) shape of the draw, from the signature and the parameters' shapes."""
        core = {d: int(d) if d.isnumeric() else None for d in self.output_sig}
        for k, (param, sig, nd) in enumerate(zip(dist_params, self.inputs_sig, self.ndims_params)):
            if nd == 0:
                continue
            shape = param_shapes[k] if param_shapes is not None else tuple(
                param.shape[i] for i in range(param.type.ndim)
            )
            for length, dim in zip(tuple(shape)[-nd:], sig):
                if dim in core and core[dim] is None:
                    core[dim] = length
        if all(v is not None for v in core.values()):
            return [core[d] for d in self.output_sig]
        raise NotImplementedError(
            "`_supp_shape_from_params` must be implemented for multivariate RVs when "
            "signature is not sufficient to infer the support shape"
        )

    def _infer_shape(self, size, dist_params, param_shapes=None):
        """Symbolic (or static int) lengths of the draw."""
        supp = () if self.ndim_supp == 0 else tuple(
            self._supp_shape_from_params(dist_params, param_shapes=param_shapes)
        )
        if not isinstance(size.type, NoneTypeT):
            n = get_vector_length(size)
            for i, (param, nd) in enumerate(zip(dist_params, self.ndims_params)):
                batched = getattr(param, "ndim", 0) - nd
                if batched > n:
                    raise ValueError(
                        f"Size length is incompatible with batched dimensions of parameter {i} "
                        f"{param}:\nlen(size) = {n}, len(batched dims {param}) = {batched}. Size "
                        f"must be None or have length >= {batched}"
                    )
            return tuple(size[i] for i in range(n)) + supp
        batch = _broadcast_batch(dist_params, self.ndims_params, param_shapes)
        return tuple(batch) + supp

    def infer_shape(self, fgraph, node, input_shapes):
        _, size, *params = node.inputs
        _, _, *param_shapes = input_shapes
        return [None, list(self._infer_shape(size, params, param_shapes=param_shapes))]

    # ------------------------------------------------------------------ building
    def __call__(self, *args, size=None, name=None, rng=None, dtype=None, return_next_rng=False,
                 **kwargs):
        if dtype is None:
            dtype = self.dtype
        if dtype == "floatX":
            dtype = config.floatX
        if dtype != self.dtype:
            if self.dtype is not None:
                if str(dtype).startswith("float") != self.dtype.startswith("float"):
                    raise ValueError(
                        f"Cannot change the dtype of a {self.name} RV from {self.dtype} to {dtype}"
                    )
            props = self._props_dict()
            props["dtype"] = dtype
            return type(self)(**props).__call__(
                *args, size=size, name=name, rng=rng, dtype=dtype,
                return_next_rng=return_next_rng, **kwargs,
            )
        if not return_next_rng:
            warnings.warn(
                "RandomVariable Ops will stop hiding the rng output in a future version. "
                "Set return_next_rng=True to suppress this warning.",
                DeprecationWarning,
                stacklevel=2,
            )
        node = self.make_node(rng, size, *args)
        out = node.default_output()
        if name is not None:
            out.name = name
        if return_next_rng:
            return self.update(node)[self.rng_param(node)], out
        return out

    def make_node(self, rng, size, *dist_params):
        """``Apply(self, [rng, size, *params], [next rng, draw])``."""
        size = normalize_size_param(size)
        dist_params = tuple(
            as_tensor_variable(p) if not isinstance(p, Variable) else p for p in dist_params
        )
        for k, (p, nd) in enumerate(zip(dist_params, self.ndims_params)):
            if not isinstance(p.type, TensorType):
                raise TypeError(f"{self.name}: parameter {k} must be a tensor, got {p} of type {p.type}")
            if p.type.ndim < nd:
                raise ValueError(
                    f"{self.name}: parameter {k} ({p}) needs at least {nd} dimension(s) "
                    f"(signature {self.signature!r}), got {p.type.ndim}"
                )
        if rng is None:
            from lucent.tensor.random.variable import shared_rng

            warnings.warn(
                "Calling a RandomVariable without an explicit rng is deprecated. Use pt.random.rng "
                "or pt.random.shared_rng.",
                DeprecationWarning,
                stacklevel=2,
            )
            rng = shared_rng(seed=None)
        elif not isinstance(getattr(rng, "type", None), RandomType):
            raise TypeError(
                "The type of rng should be an instance of RandomGeneratorType, got "
                f"{type(rng).__name__}"
                + (" (wrap a numpy Generator with shared_rng())" if isinstance(rng, np.random.Generator) else "")
            )
        rng.tag.used = True

        static = tuple(_static_length(s) for s in self._infer_shape(size, dist_params))
        if len(dist_params) != len(self.ndims_params):
            raise TypeError(
                f"{self.name} takes {len(self.ndims_params)} distribution parameter(s) "
                f"(signature {self.signature!r}), got {len(dist_params)}"
            )
        dist_params = explicit_expand_dims(
            dist_params, self.ndims_params,
            size_length=None if isinstance(size.type, NoneTypeT) else get_vector_length(size),
        )
        op = self
        if self.dtype in ("floatX", None):
            # No dtype given: draws are floats of config.floatX.
            props = self._props_dict()
            props["dtype"] = config.floatX
            op = type(self)(**props)
        out_type = TensorType(dtype=op.dtype, shape=static)
        return Apply(op, [rng, size, *dist_params], [rng.type(), out_type()])

    # ------------------------------------------------------------------ gradients
    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import grad_undefined

        return [
            grad_undefined(self, k, inp, f"No gradient defined for random variables ({self.name})")
            for k, inp in enumerate(inputs)
        ]

    def grad(self, inputs, output_grads):
        return self.L_op(inputs, None, output_grads)

    def R_op(self, inputs, eval_points):
        from lucent.gradient import DisconnectedType

        return [DisconnectedType()() for _ in eval_points]


def _static_length(s):
    if isinstance(s, (int, np.integer)):
        return int(s)
    v = _static_int(s)
    return None if v is None or v < 0 else v


def _broadcast_batch(params, ndims_params, param_shapes=None):
    """Broadcast the batch lengths of the parameters (static 1 broadcasts, else the largest)."""
    from lucent.tensor.math import maximum

    batches = []
    for k, (p, nd) in enumerate(zip(params, ndims_params)):
        ndim = p.type.ndim - nd
        if param_shapes is not None:
            shape = tuple(param_shapes[k])[:ndim]
        else:
            shape = tuple(p.shape[i] for i in range(ndim))
        static = p.type.shape[:ndim]
        batches.append(list(zip(shape, static)))
    n = max((len(b) for b in batches), default=0)
    result = []
    for d in range(n):
        lengths = []
        for b in batches:
            j = len(b) - n + d
            if j >= 0:
                lengths.append(b[j])
        known = [s for _, s in lengths if s is not None and s != 1]
        if known:
            result.append(known[0])
            continue
        dyn = [sym for sym, s in lengths if s != 1]
        if not dyn:
            result.append(1)
        elif len(dyn) == 1:
            result.append(dyn[0])
        else:
            out = dyn[0]
            for other in dyn[1:]:
                out = maximum(out, other)
            result.append(out)
    return result


class AbstractRNGConstructor(Op):
    """An op making a new generator from a seed (``default_rng(seed)``)."""

    def make_node(self, seed=None):
        if seed is None:
            seed = NoneConst
        elif isinstance(seed, Variable) and isinstance(seed.type, NoneTypeT):
            pass
        else:
            seed = as_tensor_variable(seed)
        return Apply(self, [seed], [self.random_type()])

    def perform(self, node, inputs, output_storage):
        (seed,) = inputs
        if seed is not None and np.size(seed) == 1:
            seed = int(np.asarray(seed).reshape(()))
        output_storage[0][0] = getattr(np.random, self.random_constructor)(seed=seed)

    def do_constant_folding(self, fgraph, node):
        return False


class DefaultGeneratorMakerOp(AbstractRNGConstructor):
    random_type = RandomGeneratorType()
    random_constructor = "default_rng"
    __props__ = ()


default_rng = DefaultGeneratorMakerOp()


__all__ = [
    "RNGConsumerOp",
    "RandomVariable",
    "AbstractRNGConstructor",
    "DefaultGeneratorMakerOp",
    "default_rng",
    "parse_signature",
    "safe_signature",
]


def _vectorize_random_variable(op, node, rng, size, *dist_params):
    """A draw over new leading batch dimensions of its parameters.

    A ``size`` given to the original draw fixes its batch shape, so the new
    batch lengths (broadcast from the new parameters) are put in front of it.
    """
    from lucent.graph.equality import equal_computations
    from lucent.tensor.basic import concatenate, stack

    old_params = op.dist_params(node)
    old_size = op.size_param(node)
    if not isinstance(old_size.type, NoneTypeT) and equal_computations([old_size], [size]):
        new_ndim = dist_params[0].type.ndim - old_params[0].type.ndim
        if new_ndim > 0:
            expanded = explicit_expand_dims(dist_params, op.ndims_params)
            batch = _broadcast_batch(expanded, op.ndims_params)[:new_ndim]
            statics = [b if isinstance(b, int) else _static_int(b) for b in batch]
            if isinstance(size, Constant) and all(v is not None for v in statics):
                # Keep the new size a constant so the draw's static shape stays known.
                size = as_tensor_variable(np.concatenate([np.array(statics, "int64"), size.data]))
            else:
                lengths = [as_tensor_variable(b).astype("int64") if not isinstance(b, int)
                           else as_tensor_variable(np.int64(b)) for b in batch]
                size = concatenate([stack(lengths), size])
    return op.make_node(rng, size, *dist_params)


def _register_vectorize():
    from lucent.graph.replace import _vectorize_node

    _vectorize_node.register(RandomVariable)(_vectorize_random_variable)


_register_vectorize()


# Defined in its own module (it wraps RandomVariable); importable from here as in PyTensor.
from lucent.tensor.random.core_shape import RandomVariableWithCoreShape  # noqa: E402
