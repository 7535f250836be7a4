"""Numerical optimisation and root finding as graph operations, differentiable by implicit differentiation.

``minimize``, ``minimize_scalar``, ``root`` and ``root_scalar`` build one op
whose inner graph is the objective (or the equations) as a function of the
unknown ``x`` and of the problem's parameters. Running the op calls the
matching ``scipy.optimize`` routine, which evaluates the compiled inner graph
(and, when asked, its symbolic gradient / Jacobian / Hessian) at the points
it chooses. The op returns the solution and SciPy's success flag.

Gradients do not go through the solver's iterations. At a solution ``x*`` an
implicit equation ``F(x*, theta) = 0`` holds (the equations themselves for a
root, the gradient of the objective for a minimum), so by the implicit
function theorem ``dx*/dtheta = -(dF/dx)^-1 dF/dtheta``. The pull-back of an
output gradient ``g`` is computed without forming ``dF/dtheta``: solve
``(dF/dx)^T lam = g`` and take ``-`` the vector-Jacobian product of ``F``
with ``lam`` with respect to each parameter, an ordinary reverse-mode
gradient of the inner graph evaluated at ``x*``. Parameters ``F`` does not
depend on (or only through non-differentiable paths, such as a shape) get a
disconnected gradient.

The parameters of a problem are found automatically: the largest
sub-expressions of the objective that do not depend on ``x`` (expressions of
constants only stay inside the inner graph). Scalar-typed (``ScalarType``)
parameters enter the op as 0-d tensors, since SciPy hands arrays around.

On the Numba path the op has no native kernel (SciPy's routines are Python):
the graph runs it through lucent's generic perform fallback
(``lucent.link.numba.dispatch.fallback``), so the rest of the graph stays
compiled.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply, Constant
from lucent.graph.op import HasInnerGraph, Op, io_connection_pattern
from lucent.graph.replace import graph_replace
from lucent.graph.traversal import graph_inputs
from lucent.scalar.basic import ScalarType


# --- finding the parameters of a problem ---------------------------------------------
def _depends_on(roots, x):
    """The set of variables of the graph of ``roots`` that have ``x`` among their ancestors."""
    from lucent.graph.traversal import io_toposort

    dep = {x}
    for node in io_toposort(graph_inputs(roots), roots):
        if any(i in dep for i in node.inputs):
            dep.update(node.outputs)
    return dep


def _only_constants(var):
    if isinstance(var, Constant):
        return True
    if var.owner is None:
        return False
    return all(isinstance(v, Constant) for v in graph_inputs([var]))


def _find_parameters(objective, x):
    """The largest sub-expressions of ``objective`` that do not depend on ``x`` (first seen first)."""
    dep = _depends_on([objective], x)
    found, seen, stack = [], set(), [objective]
    while stack:
        v = stack.pop()
        if v in seen or v is x:
            continue
        seen.add(v)
        if v not in dep:
            if not _only_constants(v):
                found.append(v)
            continue
        stack.extend(reversed(v.owner.inputs))
    return found


def _tensorize_scalar_parameters(objective, args):
    """Give ``ScalarType`` parameters a 0-d tensor stand-in; return (objective, inner args, outer args)."""
    from lucent.tensor.basic import scalar_from_tensor, tensor_from_scalar
    from lucent.tensor.type import tensor

    replace, inner, outer = {}, [], []
    for arg in args:
        if isinstance(arg.type, ScalarType):
            t = tensor(name=arg.name, shape=(), dtype=arg.type.dtype)
            replace[arg] = scalar_from_tensor(t)
            inner.append(t)
            outer.append(tensor_from_scalar(arg))
        else:
            inner.append(arg)
            outer.append(arg)
    if replace:
        [objective] = graph_replace([objective], replace)
    return objective, inner, outer


def _pack_inputs_of_objective(objective, x):
    """One vector standing for the variable(s) ``x`` in ``objective``.

    A single variable of at most one dimension is used as it is. Otherwise
    the variables are flattened and concatenated into a new vector ``packed``
    and ``objective`` is rewritten in terms of it. Returns ``(packed,
    shapes, objective)`` with ``shapes`` the symbolic shapes of the
    variables (``None`` when nothing was packed), to unpack a solution with
    ``unpack_solution``.
    """
    from lucent.tensor.basic import as_tensor_variable, concatenate, scalar_from_tensor
    from lucent.tensor.type import vector

    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    if len(xs) == 1 and getattr(xs[0].type, "ndim", 0) <= 1 and not isinstance(xs[0].type, ScalarType):
        return xs[0], None, objective
    tensors = [as_tensor_variable(v) for v in xs]
    dtype = np.result_type(*[t.type.dtype for t in tensors]).name
    if not np.issubdtype(np.dtype(dtype), np.floating):
        dtype = "float64"
    shapes = [tuple(t.shape[d] for d in range(t.type.ndim)) for t in tensors]
    packed = concatenate([t.flatten().astype(dtype) for t in tensors]) if tensors else None
    packed_in = vector("packed_x", dtype=dtype)
    replace = {}
    for v, piece in zip(xs, unpack_solution(packed_in, shapes)):
        dtype_v = v.type.dtype
        piece = piece.astype(dtype_v)
        replace[v] = scalar_from_tensor(piece) if isinstance(v.type, ScalarType) else piece
    [objective] = graph_replace([objective], replace)
    return (packed_in, packed), shapes, objective


def unpack_solution(packed, shapes):
    """The pieces of the vector ``packed`` with the given (symbolic) shapes, in order."""
    from lucent.tensor.basic import as_tensor_variable
    from lucent.tensor.math import prod

    pieces, start = [], 0
    for shp in shapes:
        size = prod(as_tensor_variable(list(shp), dtype="int64")) if shp else 1
        stop = start + size
        piece = packed[start:stop]
        pieces.append(piece.reshape(shp) if shp else piece.reshape(()))
        start = stop
    return pieces


# --- the ops ---------------------------------------------------------------------------
class _CachedInner:
    """The inner function's results at the last point asked (SciPy asks value, then gradient, at one x)."""

    def __init__(self, fn, x_like):
        self.fn = fn
        self.dtype = x_like.dtype
        self.shape = x_like.shape
        self.key = None
        self.results = None

    def __call__(self, xv, *args):
        xv = np.asarray(xv, dtype=self.dtype).reshape(self.shape)
        key = xv.tobytes()
        if key != self.key:
            self.results = [np.asarray(r) for r in self.fn(xv, *args)]
            self.key = key
        return self.results

    def value(self, xv, *args):
        r = self(xv, *args)[0]
        return r.item() if r.ndim == 0 else r.astype("float64").ravel()


class ScipyWrapperOp(Op, HasInnerGraph):
    """Common part of the optimisation ops: the inner graph ``[x, *args] -> [f]`` and its gradients.

    Subclasses set ``is_minimization`` (the implicit equation is the
    gradient of ``f``, else ``f`` itself), ``_extra_props`` (what besides the
    inner graph tells two ops apart) and implement ``_inner_outputs``
    (what SciPy evaluates) and ``perform``.
    """

    is_minimization = True
    _extra_props = ()
    use_vectorized_jac = False

    def _set_graph(self, x, args, f, what):
        from lucent.graph.fg import FunctionGraph
        from lucent.tensor.basic import as_tensor_variable

        f = as_tensor_variable(f)
        if x not in graph_inputs([f], blockers=[x]):
            raise ValueError(f"The variable `x` ({x}) must be an input of the graph of the {what}")
        # A private copy: the user's graph may change later, the op may not.
        self.fgraph = FunctionGraph([x, *args], [f], clone=True)
        self._fn = None

    # identity
    def _props_key(self):
        return tuple(_freeze(getattr(self, p)) for p in self._extra_props)

    def __eq__(self, other):
        """Same class, settings and inner computation (names and identities aside)."""
        from lucent.graph.equality import equal_computations

        if self is other:
            return True
        if type(self) is not type(other) or self._props_key() != other._props_key():
            return False
        a, b = self.fgraph, other.fgraph
        return len(a.inputs) == len(b.inputs) and all(
            u.type == v.type for u, v in zip(a.inputs, b.inputs)
        ) and equal_computations(a.outputs, b.outputs, a.inputs, b.inputs)

    def __hash__(self):
        return hash((type(self), tuple(v.type for v in self.fgraph.inputs), self.fgraph.outputs[0].type))

    def clone(self):
        return self

    def clone_with_inner_graph(self, inner_fgraph):
        import copy

        new = copy.copy(self)
        new.fgraph = inner_fgraph
        new._fn = None
        new._vjps = None
        return new

    def __str__(self):
        return f"{type(self).__name__}(method={self.method})"

    # graph building
    def make_node(self, *inputs):
        from lucent.tensor.type import TensorType

        inner = self.fgraph.inputs
        if len(inputs) != len(inner):
            raise ValueError(f"{self} takes {len(inner)} inputs (x and {len(inner) - 1} parameters), got {len(inputs)}")
        inputs = [it.type.filter_variable(v) for v, it in zip(inputs, inner)]
        success = TensorType("bool", shape=())("success")
        return Apply(self, inputs, [inner[0].type(), success])

    def _implicit_equation(self):
        """``F(x, args)`` in the inner graph's variables (zero at a solution)."""
        from lucent.gradient import grad

        f = self.fgraph.outputs[0]
        if self.is_minimization:
            return grad(f, self.fgraph.inputs[0])
        return f

    def _vector_jacobian_products(self):
        """``(F, lam, [d(F . lam)/d arg for each parameter])`` in the inner graph's variables.

        A parameter that ``F`` does not depend on differentiably gets a
        ``DisconnectedType`` entry. Built once per op.
        """
        if getattr(self, "_vjps", None) is None:
            from lucent.gradient import grad

            F = self._implicit_equation()
            lam = F.type()
            inner_args = self.fgraph.inputs[1:]
            vjps = grad(
                (F * lam).sum(),
                inner_args,
                disconnected_inputs="ignore",
                null_gradients="return",
                return_disconnected="disconnected",
            ) if inner_args else []
            self._vjps = (F, lam, list(vjps))
        return self._vjps

    def connection_pattern(self, node):
        """The solution depends on ``x`` and on the parameters the implicit equation depends on
        differentiably; the success flag on nothing."""
        from lucent.gradient import DisconnectedType

        x_connected = io_connection_pattern(self.fgraph.inputs[:1], [self._implicit_equation()])[0][0]
        _, _, vjps = self._vector_jacobian_products()
        return [[x_connected, False]] + [[not isinstance(v.type, DisconnectedType), False] for v in vjps]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0], ()]

    # execution
    @property
    def fn(self):
        """The compiled inner function ``(x, *args) -> self._inner_outputs()``."""
        if self._fn is None:
            # Compiled through the builder the compile layer registers with the
            # graph layer (as ``Variable.eval`` does): this layer sits below it.
            from lucent.graph import basic as graph_basic

            self._fn = graph_basic._function_builder(
                list(self.fgraph.inputs),
                self._inner_outputs(),
                mode="FAST_COMPILE",
                on_unused_input="ignore",
                accept_inplace=True,
                name=f"{self} inner function",
            )
        return self._fn

    def _wrapped(self, x0):
        return _CachedInner(self.fn, np.asarray(x0))

    # gradients
    def pullback(self, inputs, outputs, output_grads):
        from lucent.gradient import DisconnectedType, disconnected_type, grad, jacobian
        from lucent.tensor.basic import zeros_like
        from lucent.tensor.linalg import solve

        x, *args = inputs
        x_star = outputs[0]
        g = output_grads[0]
        if isinstance(g.type, DisconnectedType):
            return [disconnected_type() for _ in inputs]
        inner_x = self.fgraph.inputs[0]
        F, lam_inner, vjps = self._vector_jacobian_products()
        wanted = [i for i, v in enumerate(vjps) if not isinstance(v.type, DisconnectedType)]
        result = [zeros_like(x)] + [disconnected_type() for _ in args]
        if not wanted:
            return result
        mapping = dict(zip(self.fgraph.inputs, [x_star, *args]))
        if inner_x.type.ndim == 0:
            dF_dx = grad(F, inner_x)
            [dF_dx] = graph_replace([dF_dx], mapping, strict=False)
            lam = g / dF_dx
        else:
            dF_dx = jacobian(F, inner_x, vectorize=self.use_vectorized_jac)
            [dF_dx] = graph_replace([dF_dx], mapping, strict=False)
            lam = solve(dF_dx.T, g)
        mapping[lam_inner] = -lam.astype(lam_inner.type.dtype) if lam.type.dtype != lam_inner.type.dtype else -lam
        outer = graph_replace([vjps[i] for i in wanted], mapping, strict=False)
        for i, v in zip(wanted, outer):
            if isinstance(args[i].type, ScalarType):
                from lucent.tensor.basic import scalar_from_tensor

                v = scalar_from_tensor(v)
            elif v.type.dtype != args[i].type.dtype and not args[i].type.dtype.startswith(("int", "uint", "bool")):
                v = v.astype(args[i].type.dtype)
            result[1 + i] = v
        return result

    def L_op(self, inputs, outputs, output_grads):
        return self.pullback(inputs, outputs, output_grads)


def _freeze(v):
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    return v


def _check_x(x, ndim_max, what):
    from lucent.tensor.variable import TensorVariable

    if not isinstance(x, TensorVariable) or x.type.ndim > ndim_max:
        shape = "a scalar (0-d) tensor" if ndim_max == 0 else "a tensor of at most one dimension"
        raise ValueError(f"{what}: the variable `x` must be {shape}, got {x!r}")


class MinimizeScalarOp(ScipyWrapperOp):
    """``scipy.optimize.minimize_scalar`` of a 0-d objective over a 0-d ``x`` (``x`` only fixes the type)."""

    _extra_props = ("method", "optimizer_kwargs")

    def __init__(self, x, *args, objective, method="brent", optimizer_kwargs=None):
        _check_x(x, 0, "MinimizeScalarOp")
        if getattr(objective.type, "ndim", None) != 0:
            raise ValueError(f"MinimizeScalarOp: the objective must be a scalar, got {objective.type}")
        self.method = method
        self.optimizer_kwargs = dict(optimizer_kwargs or {})
        self._set_graph(x, args, objective, "objective")

    def _inner_outputs(self):
        return [self.fgraph.outputs[0]]

    def perform(self, node, inputs, outputs):
        from scipy import optimize

        x0, *args = inputs
        f = self._wrapped(x0)
        res = optimize.minimize_scalar(f.value, args=tuple(args), method=self.method, **self.optimizer_kwargs)
        outputs[0][0] = np.asarray(res.x, dtype=x0.dtype)
        outputs[1][0] = np.array(bool(getattr(res, "success", True)))


class MinimizeOp(ScipyWrapperOp):
    """``scipy.optimize.minimize`` of a 0-d objective over ``x`` (0-d or a vector), from ``x``'s value."""

    _extra_props = ("method", "jac", "hess", "use_vectorized_jac", "optimizer_kwargs")

    def __init__(self, x, *args, objective, method="BFGS", jac=True, hess=False,
                 hessp=False, use_vectorized_jac=False, optimizer_kwargs=None):
        _check_x(x, 1, "MinimizeOp")
        if getattr(objective.type, "ndim", None) != 0:
            raise ValueError(f"MinimizeOp: the objective must be a scalar, got {objective.type}")
        if hessp:
            raise NotImplementedError("MinimizeOp: hessp is not supported; use hess=True")
        self.method = method
        self.jac = bool(jac)
        self.hess = bool(hess)
        self.use_vectorized_jac = bool(use_vectorized_jac)
        self.optimizer_kwargs = dict(optimizer_kwargs or {})
        self._set_graph(x, args, objective, "objective")

    def _inner_outputs(self):
        from lucent.gradient import grad, jacobian

        f = self.fgraph.outputs[0]
        x = self.fgraph.inputs[0]
        outs = [f]
        if self.jac or self.hess:
            g = grad(f, x)
            outs.append(g)
            if self.hess:
                outs.append(grad(g, x) if x.type.ndim == 0 else jacobian(g, x, vectorize=self.use_vectorized_jac))
        return outs

    def perform(self, node, inputs, outputs):
        from scipy import optimize

        x0, *args = inputs
        f = self._wrapped(x0)

        def grad(xv, *a):
            return np.atleast_1d(np.asarray(f(xv, *a)[1], dtype="float64")).ravel()

        def hess(xv, *a):
            return np.asarray(f(xv, *a)[2], dtype="float64").reshape(np.size(xv), np.size(xv))

        res = optimize.minimize(
            f.value,
            np.asarray(x0, dtype="float64").ravel(),
            args=tuple(args),
            method=self.method,
            jac=grad if self.jac else None,
            hess=hess if self.hess else None,
            **self.optimizer_kwargs,
        )
        outputs[0][0] = np.asarray(res.x, dtype=x0.dtype).reshape(x0.shape)
        outputs[1][0] = np.array(bool(res.success))


class RootScalarOp(ScipyWrapperOp):
    """``scipy.optimize.root_scalar`` of a 0-d equation in a 0-d ``x``, from ``x``'s value."""

    is_minimization = False
    _extra_props = ("method", "jac", "hess", "optimizer_kwargs")

    def __init__(self, variables, *args, equation, method="secant", jac=False, hess=False,
                 optimizer_kwargs=None):
        _check_x(variables, 0, "RootScalarOp")
        if getattr(equation.type, "ndim", None) != 0:
            raise ValueError(f"RootScalarOp: the equation must be a scalar, got {equation.type}")
        if hess and not jac:
            raise ValueError("RootScalarOp: hess=True needs jac=True")
        self.method = method
        self.jac = bool(jac)
        self.hess = bool(hess)
        self.optimizer_kwargs = dict(optimizer_kwargs or {})
        self._set_graph(variables, args, equation, "equation")

    def _inner_outputs(self):
        from lucent.gradient import grad

        f = self.fgraph.outputs[0]
        x = self.fgraph.inputs[0]
        outs = [f]
        if self.jac:
            outs.append(grad(f, x))
            if self.hess:
                outs.append(grad(outs[1], x))
        return outs

    def perform(self, node, inputs, outputs):
        from scipy import optimize

        x0, *args = inputs
        f = self._wrapped(x0)
        res = optimize.root_scalar(
            f.value,
            args=tuple(args),
            x0=float(x0),
            fprime=(lambda xv, *a: float(f(xv, *a)[1])) if self.jac else None,
            fprime2=(lambda xv, *a: float(f(xv, *a)[2])) if self.hess else None,
            method=self.method,
            **self.optimizer_kwargs,
        )
        outputs[0][0] = np.asarray(res.root, dtype=x0.dtype)
        outputs[1][0] = np.array(bool(res.converged))


class RootOp(ScipyWrapperOp):
    """``scipy.optimize.root`` of a system of equations in ``x`` (0-d or a vector), from ``x``'s value."""

    is_minimization = False
    _extra_props = ("method", "jac", "use_vectorized_jac", "optimizer_kwargs")

    def __init__(self, variables, *args, equations, method="hybr", jac=True,
                 use_vectorized_jac=False, optimizer_kwargs=None):
        _check_x(variables, 1, "RootOp")
        if getattr(equations.type, "ndim", 2) > 1:
            raise ValueError(f"RootOp: the equations must be a scalar or a vector, got {equations.type}")
        self.method = method
        self.jac = bool(jac)
        self.use_vectorized_jac = bool(use_vectorized_jac)
        self.optimizer_kwargs = dict(optimizer_kwargs or {})
        self._set_graph(variables, args, equations, "equations")

    def _inner_outputs(self):
        from lucent.gradient import grad, jacobian

        f = self.fgraph.outputs[0]
        x = self.fgraph.inputs[0]
        outs = [f]
        if self.jac:
            if f.type.ndim == 0 and x.type.ndim == 0:
                outs.append(grad(f, x))
            else:
                outs.append(jacobian(f, x, vectorize=self.use_vectorized_jac))
        return outs

    def perform(self, node, inputs, outputs):
        from scipy import optimize

        x0, *args = inputs
        f = self._wrapped(x0)
        n = max(np.size(x0), 1)

        def fun(xv, *a):
            return np.atleast_1d(np.asarray(f(xv, *a)[0], dtype="float64")).ravel()

        def jac(xv, *a):
            return np.asarray(f(xv, *a)[1], dtype="float64").reshape(-1, n)

        res = optimize.root(
            fun,
            np.asarray(x0, dtype="float64").ravel(),
            args=tuple(args),
            method=self.method,
            jac=jac if self.jac else None,
            **self.optimizer_kwargs,
        )
        outputs[0][0] = np.asarray(res.x, dtype=x0.dtype).reshape(x0.shape)
        outputs[1][0] = np.array(bool(res.success))


# --- the user's functions -----------------------------------------------------------
def _build(op_cls, target, x, kwargs, what):
    """Pack ``x``, find the parameters, build the op; return (solution(s), success)."""
    from lucent.tensor.basic import as_tensor_variable

    target = as_tensor_variable(target)
    packed, shapes, target = _pack_inputs_of_objective(target, x)
    if shapes is None:
        x_inner = x_outer = packed
    else:
        x_inner, x_outer = packed
    args = _find_parameters(target, x_inner)
    target, inner_args, outer_args = _tensorize_scalar_parameters(target, args)
    op = op_cls(x_inner, *inner_args, **{what: target}, **kwargs)
    solution, success = op(x_outer, *outer_args)
    if shapes is not None:
        from lucent.tensor.basic import scalar_from_tensor

        xs = list(x)
        pieces = unpack_solution(solution, shapes)
        solution = [
            scalar_from_tensor(p.astype(v.type.dtype)) if isinstance(v.type, ScalarType) else p.astype(v.type.dtype)
            for v, p in zip(xs, pieces)
        ]
    return solution, success


def minimize_scalar(objective, x, method="brent", optimizer_kwargs=None):
    """The ``x`` (a 0-d tensor in the graph of ``objective``) minimising the 0-d ``objective``.

    Runs ``scipy.optimize.minimize_scalar`` (``method``, ``optimizer_kwargs``);
    the value of ``x`` is not used as a starting point. Returns
    ``(solution, success)``; ``solution`` is differentiable with respect to
    the other inputs of ``objective``.
    """
    _check_x(x, 0, "minimize_scalar")
    return _build(MinimizeScalarOp, objective, x,
                  {"method": method, "optimizer_kwargs": optimizer_kwargs}, "objective")


def minimize(objective, x, method="BFGS", jac=True, hess=False, use_vectorized_jac=False,
             optimizer_kwargs=None):
    """The ``x`` minimising the 0-d ``objective``, starting from ``x``'s value.

    ``x`` is a variable of the graph of ``objective`` or a list of them
    (returned as a list). ``jac``/``hess`` pass the symbolic gradient / Hessian
    to ``scipy.optimize.minimize``; ``use_vectorized_jac`` builds Jacobians as
    one vectorized graph instead of a loop. Returns ``(solution, success)``.
    """
    return _build(MinimizeOp, objective, x, {
        "method": method, "jac": jac, "hess": hess, "use_vectorized_jac": use_vectorized_jac,
        "optimizer_kwargs": optimizer_kwargs,
    }, "objective")


def root_scalar(equation, variable, method="secant", jac=False, hess=False, optimizer_kwargs=None):
    """The 0-d ``variable`` where the 0-d ``equation`` is zero, from ``variable``'s value.

    Runs ``scipy.optimize.root_scalar``; ``jac``/``hess`` pass the symbolic
    first / second derivatives (``fprime``/``fprime2``). Returns
    ``(solution, success)``.
    """
    _check_x(variable, 0, "root_scalar")
    return _build(RootScalarOp, equation, variable, {
        "method": method, "jac": jac, "hess": hess, "optimizer_kwargs": optimizer_kwargs,
    }, "equation")


def root(equations, variables, method="hybr", jac=True, use_vectorized_jac=False, optimizer_kwargs=None):
    """The ``variables`` where every one of ``equations`` is zero, from their values.

    ``variables`` is one variable or a list (returned as a list); the
    equations are a 0-d or 1-d tensor. Runs ``scipy.optimize.root``; ``jac``
    passes the symbolic Jacobian. Returns ``(solution, success)``.
    """
    return _build(RootOp, equations, variables, {
        "method": method, "jac": jac, "use_vectorized_jac": use_vectorized_jac,
        "optimizer_kwargs": optimizer_kwargs,
    }, "equations")


__all__ = [
    "MinimizeOp",
    "MinimizeScalarOp",
    "RootOp",
    "RootScalarOp",
    "minimize",
    "minimize_scalar",
    "root",
    "root_scalar",
]
