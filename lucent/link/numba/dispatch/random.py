"""Numba kernels of the random variables: the same numbers as NumPy, from the same state.

Numba accepts a ``numpy.random.Generator`` as an argument and its
``Generator`` methods run NumPy's own algorithms on the *same* bit
generator, so a kernel that draws element by element, in C order, with the
method NumPy's vectorised call would use gives bit-identical draws. That is
what every kernel here does:

* the parameters are checked first (``param_checks`` of the op: the same
  rules and messages as ``perform``), and ``size`` against the parameters'
  batch shapes, so a failing call has not advanced the generator;
* a draw that is not in place works on a copy of the generator (made by
  Python through ``generator_copy``: Numba cannot create generators), an
  in-place one advances the generator it was given (``destroy_map``);
* scalar families draw with one expression per element (``_DRAWS``), which
  reproduces NumPy's method or SciPy's transformation of it (SciPy's
  ``rvs`` applies ``ppf`` to uniforms, or ``x * scale + loc`` to a NumPy
  draw); families needing two passes (``betabinom``) or a core dimension
  (``dirichlet``, ``multinomial``, ``categorical``) have their own loops.

Speed comes from what is *not* done per element: a parameter that is the
same for every element is read (and ``binomial``/``bernoulli``'s constants
computed) once before the loop; floating parameters are made doubles first,
as NumPy does, so Numba inlines one specialisation of each method; a
Bernoulli draw is NumPy's one-trial inversion written without a branch on
its coin-flip outcome; large outputs come from ``empty_output``.

``vonmises`` and ``wald``, which Numba's ``Generator`` lacks, are NumPy's
algorithms written out on the generator's ``random``/``standard_normal``
(``_HELPERS``); ``truncexpon`` is SciPy's inverse-CDF draw with SciPy's own
``log1p``/``expm1`` (linked by symbol); ``permutation`` is
``Generator.permutation``/``shuffle``.

Three families have no kernel, and the linker runs their ``perform`` in
object mode (with its warning): still exact, but slower, and a graph using
them is not cached on disk. ``multivariate_normal`` factorises with LAPACK
and sums with ``einsum``'s vectorised loops, which Numba reaches through
another LAPACK build and another summation order, so the last bits can
differ; ``hypergeometric`` (NumPy's HRUA with its log-factorial table) and
choice without replacement (Floyd's algorithm over NumPy's masked bounded
integers, then a shuffle) draw through generator primitives Numba does not
expose.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from lucent.link.numba.dispatch.basic import NoNumbaImplementation, kernel_from_source, numba_funcify
from lucent.link.numba.dispatch.shape import dtype_text
from lucent.tensor.random import basic as rb
from lucent.tensor.random.op import SIMPLEX_TOLERANCE, RandomVariable, RandomVariableWithCoreShape
from lucent.tensor.shape import NoneTypeT
from lucent.tensor.random.utils import custom_rng_deepcopy

#: Bumped when the generated kernels change.
RANDOM_KERNELS_VERSION = 6


def copy_generator(rng):
    """A copy of ``rng`` in the same state (what ``generator_copy`` calls)."""
    return custom_rng_deepcopy(rng)


@intrinsic
def generator_copy(typingctx, rng):
    """``copy_generator(rng)`` called from compiled code: a new ``Generator`` in the same state.

    Numba cannot create generators, so the copy is made by Python. An
    ``objmode`` block would do it too, but its lifted function is compiled
    again when a cached kernel first runs in a new process (about a second
    per kernel, counted as the draw's run time by the profiler); this
    intrinsic instead emits the C-API call itself (take the GIL, box the
    generator, call ``copy_generator``, unbox the result), so a cached
    kernel is ready as loaded. A Python error in the copy is propagated.
    """
    if not isinstance(rng, types.NumPyRandomGeneratorType):
        return None

    def codegen(context, builder, signature, args):
        (value,) = args
        pyapi = context.get_python_api(builder)
        gil = pyapi.gil_ensure()
        context.nrt.incref(builder, rng, value)  # boxing steals a reference
        boxed = pyapi.from_native_value(rng, value)
        callee = pyapi.unserialize(pyapi.serialize_object(copy_generator))
        copied = pyapi.call_function_objargs(callee, [boxed])
        pyapi.decref(callee)
        pyapi.decref(boxed)
        with builder.if_then(cgutils.is_null(builder, copied), likely=False):
            pyapi.gil_release(gil)
            context.call_conv.return_exc(builder)
        native = pyapi.to_native_value(rng, copied)
        pyapi.decref(copied)  # the unboxed generator holds its own reference
        with builder.if_then(native.is_error, likely=False):
            pyapi.gil_release(gil)
            context.call_conv.return_exc(builder)
        pyapi.gil_release(gil)
        return native.value

    return rng(rng), codegen


#: One draw of a scalar family from the generator ``g`` and the parameters ``x0, x1, ...``.
_DRAWS = {
    rb.UniformRV: "g.uniform(x0, x1)",
    rb.TriangularRV: "g.triangular(x0, x1, x2)",
    rb.BetaRV: "g.beta(x0, x1)",
    rb.NormalRV: "g.normal(x0, x1)",
    rb.LogNormalRV: "g.lognormal(x0, x1)",
    rb.GammaRV: "g.gamma(x0, x1)",
    rb.ExponentialRV: "g.exponential(x0)",
    rb.WeibullRV: "g.weibull(x0)",
    rb.LogisticRV: "g.logistic(x0, x1)",
    rb.LaplaceRV: "g.laplace(x0, x1)",
    rb.PoissonRV: "g.poisson(x0)",
    rb.GeometricRV: "g.geometric(x0)",
    rb.BinomialRV: ("_binomial_prep(np.int64(x0), np.float64(x1))",
                    "_binomial_draw(g, np.int64(x0), np.float64(x1), c)"),
    rb.IntegersRV: "g.integers(x0, x1)",
    rb.InvGammaRV: "1 / g.gamma(x0, {T1}(1) / x1)",
    # SciPy's rvs: a NumPy draw (or ppf of a uniform), then ``* scale + loc``.
    rb.HalfNormalRV: "abs(g.standard_normal()) * x1 + x0",
    rb.ParetoRV: "math.pow(1 - g.uniform(), {T0}(-1.0) / x0) * x1",
    rb.GumbelRV: "-math.log(-math.log(g.uniform())) * x1 + x0",
    rb.CauchyRV: "_cauchy_ppf(g.uniform()) * x1 + x0",
    rb.HalfCauchyRV: "math.tan(math.pi / 2 * g.uniform()) * x1 + x0",
    rb.StudentTRV: "g.standard_t(x0) * x2 + x1",
    rb.BernoulliRV: ("_binomial_prep(1, np.float64(x0))", "_bernoulli_draw(g, c)"),
    rb.NegBinomialRV: "g.negative_binomial(x0, x1)",
    rb.GenGammaRV: "g.standard_gamma(x0 / x1) ** ({T1}(1.0) / x1) * x2",
    # NumPy computes these in double precision whatever the parameters' dtype.
    rb.VonMisesRV: "_vonmises(g, float(x0), float(x1))",
    rb.WaldRV: "_wald(g, float(x0), float(x1))",
}

_CHECKS = {
    "positive": "v <= 0",
    "nonnegative": "v < 0",
    "prob": "v < 0 or v > 1 or v != v",
    "prob_open0": "v <= 0 or v > 1 or v != v",
    "simplex": "v < 0 or v > 1 or v != v",
}


def _typed(draw, node):
    """``draw`` with ``{Tk}`` replaced by the float type NumPy computes in with parameter k.

    A Python number combined with a float32 array stays float32 in NumPy,
    while Numba would compute in float64; the literal is made a NumPy
    scalar of the right type so both round the same way.
    """
    import numpy as np

    for k, var in enumerate(node.inputs[2:]):
        dt = np.result_type(np.ones(1, dtype=var.type.dtype) / 1)
        draw = draw.replace(f"{{T{k}}}", dtype_text(dt))
    return draw


def _double_args(draw, node):
    """``draw`` with every argument of a ``g.<method>(...)`` call made a float64, unless integer.

    NumPy's ``Generator`` converts its floating parameters to double before
    drawing. Numba's methods instead specialise on the argument types: a
    float32 ``loc`` gives a separate float32 specialisation that LLVM does
    not inline into the kernel's loop (a call per draw: +60% time for
    ``normal``) and that can compute part of the algorithm in float32. So
    the kernel converts first, as NumPy does. Integer literals and integer
    parameters stay integers (``binomial``'s ``n``, ``integers``' bounds).
    """
    import ast

    import numpy as np

    int_params = {
        f"x{k}" for k, var in enumerate(node.inputs[2:])
        if np.dtype(var.type.dtype).kind in "iub"
    }

    def is_integer(arg):
        if isinstance(arg, ast.Constant):
            return isinstance(arg.value, int)
        return isinstance(arg, ast.Name) and arg.id in int_params

    class Wrap(ast.NodeTransformer):
        def visit_Call(self, call):
            self.generic_visit(call)
            f = call.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "g":
                call.args = [
                    a if is_integer(a) else ast.Call(
                        ast.Attribute(ast.Name("np", ast.Load()), "float64", ast.Load()), [a], []
                    )
                    for a in call.args
                ]
            return call

    tree = Wrap().visit(ast.parse(draw, mode="eval"))
    return ast.unparse(ast.fix_missing_locations(tree))


def _idx(name, batch_vars, core_vars=()):
    """``name[i0 if name.shape[0] != 1 else 0, ..., c0]`` (batch dims may broadcast)."""
    items = [f"({v} if {name}.shape[{d}] != 1 else 0)" for d, v in enumerate(batch_vars)]
    items += list(core_vars)
    return f"{name}[{', '.join(items)}]" if items else f"{name}[()]"


def _prologue(op, node, lines):
    """Checks, batch lengths ``n0..``, and the generator ``g``; returns the batch ndim."""
    size = node.inputs[1]
    params = node.inputs[2:]
    for k in range(len(params)):
        lines.append(f"a{k} = np.asarray(p{k})")
    for idx, test, text in op.param_checks:
        cond = _CHECKS[test]
        nd = params[idx].type.ndim
        lines.append(f"for v in a{idx}.ravel():" if nd else f"v = a{idx}[()]")
        ind = "    " if nd else ""
        lines.append(f"{ind}if {cond}:")
        lines.append(f"{ind}    raise ValueError({op.name + ': parameter ' + text!r})")
        if test == "simplex":
            lines += [
                f"for r in range(a{idx}.size // a{idx}.shape[-1]):",
                f"    row = a{idx}.reshape((-1, a{idx}.shape[-1]))[r]",
                "    total = 0.0",
                "    for j in range(row.shape[0]):",
                "        total += row[j]",
                f"    if abs(total - 1.0) > {SIMPLEX_TOLERANCE!r}:",
                f"        raise ValueError({op.name + ': parameter ' + text!r})",
            ]
    batch = node.outputs[1].type.ndim - op.ndim_supp
    bad = f"{op.name}: the parameters' batch shapes do not broadcast with each other or with size"
    for d in range(batch):
        if not isinstance(size.type, NoneTypeT):
            lines.append(f"n{d} = size[{d}]")
        else:
            lines.append(f"n{d} = 1")
            for k in range(len(params)):
                lines.append(f"if a{k}.shape[{d}] != 1: n{d} = a{k}.shape[{d}]")
        for k in range(len(params)):
            lines.append(f"if a{k}.shape[{d}] != 1 and a{k}.shape[{d}] != n{d}:")
            lines.append(f"    raise ValueError({bad!r})")
    if op.inplace:
        lines.append("g = rng")
    else:
        lines.append("g = generator_copy(rng)")
    return batch


#: Module-level helpers of the generated kernels (part of their hashed text).
_HELPERS = """
@numba.njit
def _cauchy_ppf(p):
    # SciPy's (Boost's) quantile of the standard Cauchy: reduce to (-0.5, 0.5], then -1/tan.
    if p > 0.5:
        p = p - 1.0
    if p == 0.5:
        return 0.0
    return -1.0 / math.tan(math.pi * p)


@numba.njit
def _vonmises(g, mu, kappa):
    # NumPy's Generator.vonmises (Best & Fisher rejection; a uniform angle for
    # kappa < 1e-8, a wrapped normal for kappa > 1e6), in double precision.
    if kappa != kappa:
        return math.nan
    if kappa < 1e-8:
        return math.pi * (2 * g.random() - 1)
    if kappa > 1e6:
        result = mu + math.sqrt(1.0 / kappa) * g.standard_normal()
        if result < -math.pi:
            result += 2 * math.pi
        if result > math.pi:
            result -= 2 * math.pi
        return result
    if kappa < 1e-5:
        s = 1.0 / kappa + kappa
    else:
        r = 1 + math.sqrt(1 + 4 * kappa * kappa)
        rho = (r - math.sqrt(2 * r)) / (2 * kappa)
        s = (1 + rho * rho) / (2 * rho)
    while True:
        u = g.random()
        z = math.cos(math.pi * u)
        w = (1 + s * z) / (s + z)
        y = kappa * (s - w)
        v = g.random()
        if y * (2 - y) - v >= 0:
            break
        # log(y / v) as C computes it: +inf for v == 0 < y, nan (reject) for y < 0.
        if v == 0.0:
            if y >= 0:
                break
            continue
        q = y / v
        if q > 0 and math.log(q) + 1 - y >= 0:
            break
    u = g.random()
    result = math.acos(w)
    if u < 0.5:
        result = -result
    result += mu
    neg = result < 0
    mod = np.fmod(abs(result) + math.pi, 2 * math.pi) - math.pi
    if neg:
        mod = -mod
    return mod


@numba.njit(inline="always")
def _binomial_prep(n, p):
    # What NumPy's random_binomial decides from (n, p) alone: (branch, r, 1 - r, (1 - r)**n,
    # bound, first step). Branch 0: no trial can succeed; 1: inversion with r = p; 2: n minus
    # the inversion with r = 1 - p; 3: BTPE (mean of the smaller tail > 30). The inversion's
    # constants are those NumPy keeps in its binomial_t; a kernel whose n and p are the same
    # for every element computes them once, before its loop.
    if n == 0 or p == 0.0:
        return (0, p, 0.0, 0.0, 0.0, 0.0)
    if p <= 0.5:
        if p * n > 30.0:
            return (3, p, 0.0, 0.0, 0.0, 0.0)
        branch = 1
        r = p
    else:
        r = 1.0 - p
        if r * n > 30.0:
            return (3, p, 0.0, 0.0, 0.0, 0.0)
        branch = 2
    s = 1.0 - r
    mean = n * r
    sn = np.exp(n * np.log(s))
    bound = min(n, mean + 10.0 * np.sqrt(mean * s + 1))
    return (branch, r, s, sn, bound, (n * r * sn) / s)


@numba.njit(inline="always")
def _binomial_draw(g, n, p, c):
    # NumPy's random_binomial for the constants c = _binomial_prep(n, p).
    branch = c[0]
    if branch == 0:
        return 0
    if branch == 3:
        return g.binomial(n, p)
    x = _binomial_inversion(g, n, c)
    if branch == 2:
        return n - x
    return x


@numba.njit(inline="always")
def _bernoulli_draw(g, c):
    # _binomial_draw for one trial, which never takes BTPE (that needs a mean over 30):
    # leaving Generator.binomial out saves compiling it (over a second per kernel).
    branch = c[0]
    if branch == 0:
        return np.int64(0)
    x = _binomial_inversion(g, 1, c)
    if branch == 2:
        return 1 - x
    return x


@numba.njit(inline="always")
def _binomial_inversion(g, n, c):
    # NumPy's random_binomial_inversion: walk the CDF from 0 with one uniform, restarting
    # past the bound.
    r = c[1]
    s = c[2]
    sn = c[3]
    bits = g.bit_generator
    if n == 1:
        # The same walk for one trial (a Bernoulli draw): the bound is 1, so it stops at 0
        # (u <= sn), at 1 (u - sn <= the first step) or restarts (only by rounding). The
        # step is positive, so u - sn > step already implies u > sn: the restart test needs
        # no test of the outcome, which is a coin flip the CPU cannot predict (a branch on
        # it costs four times the draw). The outcome itself is computed without a branch.
        step = c[5]
        u = _next_double(bits)
        while u - sn > step:
            u = _next_double(bits)
        return np.int64(u > sn)
    bound = c[4]
    x = 0
    px = sn
    u = _next_double(bits)
    while u > px:
        x = x + 1
        if x > bound:
            x = 0
            px = sn
            u = _next_double(bits)
        else:
            u -= px
            px = ((n - x + 1) * r * px) / (x * s)
    return x


@numba.njit
def _wald(g, mean, scale):
    # NumPy's Generator.wald: Michael, Schucany & Haas with the stable root.
    y = g.standard_normal()
    y = mean * y * y
    if y == 0.0:
        x = mean
    else:
        x = mean * (1 - 2 / (1 + math.sqrt(1 + 4 * scale / y)))
    u = g.random()
    if u <= mean / (mean + x):
        return x
    return mean * mean / x
"""


def _compile(op, node, name, lines, extra_imports="", cache=None, leading=()):
    params = [*leading, "rng", "size"] + [f"p{k}" for k in range(len(node.inputs) - 2)]
    src = f"def {name}({', '.join(params)}):\n" + "\n".join("    " + ln for ln in lines) + "\n"
    imports = (
        "import numba\nfrom numba import types as _types\n"
        "from numba.np.random.generator_core import next_double as _next_double\n"
        "from lucent.link.numba.dispatch.random import generator_copy\n"
        f"# random kernels v{RANDOM_KERNELS_VERSION}\n"
        + extra_imports
        + _HELPERS
    )
    return kernel_from_source(src, name, imports=imports, cache=cache, fastmath=False)


def _scalar_kernel(op, node, draw, leading=(), checks=()):
    """One draw per element, in C order, into a fresh output.

    ``draw`` is an expression in the generator ``g`` and the parameters'
    elements ``x0, x1, ...``, or ``(prep, draw)`` where ``prep`` computes,
    from the parameters alone, constants ``c`` the draw uses. A parameter
    that is the same for every element (length 1 along every batch
    dimension of its static type) is read once, before the loop, and a
    ``prep`` of such parameters is computed there too. ``checks``: extra
    source lines run after the parameter checks, before the generator is
    touched.
    """
    prep, draw = draw if isinstance(draw, tuple) else (None, draw)
    lines = []
    batch = _prologue(op, node, lines)
    if checks:
        cut = next(i for i, ln in enumerate(lines) if ln.startswith(("g = rng", "g = generator_copy")))
        lines[cut:cut] = list(checks)
    out_dtype = dtype_text(node.outputs[1].type.dtype)
    shape = "(" + "".join(f"n{d}, " for d in range(batch)) + ")"
    lines.append(f"out = empty_output({shape}, {out_dtype})")
    ivars = [f"i{d}" for d in range(batch)]
    body = []
    for k, var in enumerate(node.inputs[2:]):
        if all(length == 1 for length in var.type.shape[:batch]):
            lines.append(f"x{k} = a{k}[{', '.join(['0'] * batch) or '()'}]")
        else:
            body.append(f"x{k} = {_idx(f'a{k}', ivars)}")
    if prep is not None:
        (body if body else lines).append(f"c = {prep}")
    target = f"out[{', '.join(ivars)}]" if ivars else "out[()]"
    body.append(f"{target} = {_double_args(_typed(draw, node), node)}")
    _loop_lines(lines, ivars, body)
    lines.append("return g, out")
    return _compile(op, node, f"rv_{op.name}", lines, leading=leading)


def _loop_lines(lines, ivars, body):
    ind = ""
    for d, v in enumerate(ivars):
        lines.append(f"{ind}for {v} in range(n{d}):")
        ind += "    "
    lines.extend(ind + b for b in body)


def _betabinom_kernel(op, node, leading=()):
    """SciPy's betabinom: every ``beta(a, b)`` first, then every ``binomial(n, p)``."""
    lines = []
    batch = _prologue(op, node, lines)
    ivars = [f"i{d}" for d in range(batch)]
    shape = "(" + "".join(f"n{d}, " for d in range(batch)) + ")"
    at = f"[{', '.join(ivars)}]" if ivars else "[()]"
    lines += [f"pr = empty_output({shape}, np.float64)", f"out = empty_output({shape}, np.int64)"]
    _loop_lines(lines, ivars, [f"pr{at} = g.beta({_idx('a1', ivars)}, {_idx('a2', ivars)})"])
    _loop_lines(lines, ivars, [f"out{at} = g.binomial({_idx('a0', ivars)}, pr{at})"])
    lines.append("return g, out")
    return _compile(op, node, "rv_betabinom", lines, leading=leading)


def _dirichlet_kernel(op, node, leading=()):
    """NumPy's Dirichlet: stick-breaking with betas when every alpha < 0.1, else normalised gammas."""
    lines = []
    batch = _prologue(op, node, lines)
    ivars = [f"i{d}" for d in range(batch)]
    shape = "(" + "".join(f"n{d}, " for d in range(batch)) + "k)"
    lines += ["k = a0.shape[-1]", f"out = empty_output({shape}, {dtype_text(node.outputs[1].type.dtype)})",
              "suffix = np.empty(k, np.float64)"]
    row = lambda j: _idx("a0", ivars, [j])  # noqa: E731
    o = lambda j: f"out[{', '.join(ivars + [j])}]"  # noqa: E731
    body = [
        "amax = 0.0",
        "for j in range(k):",
        f"    if {row('j')} > amax: amax = {row('j')}",
        "if amax < 0.1:",
        "    csum = 0.0",
        "    for j in range(k - 1, -1, -1):",
        f"        csum += {row('j')}",
        "        suffix[j] = csum",
        "    acc = 1.0",
        "    for j in range(k - 1):",
        f"        {o('j')} = 0.0",
        "    for j in range(k - 1):",
        f"        vj = g.beta({row('j')}, suffix[j + 1])",
        f"        {o('j')} = acc * vj",
        "        acc *= 1.0 - vj",
        "        if suffix[j + 1] == 0:",
        "            break",
        f"    {o('k - 1')} = acc",
        "else:",
        "    acc = 0.0",
        "    for j in range(k):",
        f"        {o('j')} = g.standard_gamma({row('j')})",
        f"        acc += {o('j')}",
        "    invacc = 1.0 / acc",
        "    for j in range(k):",
        f"        {o('j')} = {o('j')} * invacc",
    ]
    _loop_lines(lines, ivars, body)
    lines.append("return g, out")
    return _compile(op, node, "rv_dirichlet", lines, leading=leading)


def _multinomial_kernel(op, node, leading=()):
    """NumPy's multinomial: one binomial per category on what the earlier ones left."""
    lines = []
    batch = _prologue(op, node, lines)
    ivars = [f"i{d}" for d in range(batch)]
    shape = "(" + "".join(f"n{d}, " for d in range(batch)) + "k)"
    lines += ["k = a1.shape[-1]", f"out = empty_output({shape}, np.int64)", "out.fill(0)"]
    pj = lambda j: _idx("a1", ivars, [j])  # noqa: E731
    o = lambda j: f"out[{', '.join(ivars + [j])}]"  # noqa: E731
    body = [
        f"dn = np.int64({_idx('a0', ivars)})",
        "remaining = 1.0",
        "for j in range(k - 1):",
        f"    {o('j')} = g.binomial(dn, {pj('j')} / remaining) if dn > 0 else 0",
        f"    dn -= {o('j')}",
        "    if dn <= 0:",
        "        break",
        f"    remaining -= {pj('j')}",
        "if dn > 0:",
        f"    {o('k - 1')} = dn",
    ]
    _loop_lines(lines, ivars, body)
    lines.append("return g, out")
    return _compile(op, node, "rv_multinomial", lines, leading=leading)


def _categorical_kernel(op, node, leading=()):
    """A uniform per draw, located in the cumulative sum of ``p`` (``searchsorted``, left)."""
    lines = []
    batch = _prologue(op, node, lines)
    ivars = [f"i{d}" for d in range(batch)]
    shape = "(" + "".join(f"n{d}, " for d in range(batch)) + ")"
    at = f"[{', '.join(ivars)}]" if ivars else "[()]"
    lines += ["k = a0.shape[-1]", f"u = empty_output({shape}, np.float64)", f"out = empty_output({shape}, np.int64)",
              "cdf = np.empty(k, np.float64)"]
    _loop_lines(lines, ivars, [f"u{at} = g.uniform()"])
    body = [
        "acc = 0.0",
        "for j in range(k):",
        f"    acc += {_idx('a0', ivars, ['j'])}",
        "    cdf[j] = acc",
        "lo = 0",
        "hi = k",
        "while lo < hi:",
        "    mid = (lo + hi) // 2",
        f"    if cdf[mid] < u{at}:",
        "        lo = mid + 1",
        "    else:",
        "        hi = mid",
        f"out{at} = lo",
    ]
    _loop_lines(lines, ivars, body)
    lines.append("return g, out")
    return _compile(op, node, "rv_categorical", lines, leading=leading)


#: SciPy's own log1p / expm1 (its special-function library, not the C library's,
#: which can differ in the last bit), called through their C entry points.
_SCIPY_SPECIAL_IMPORTS = """
import llvmlite.binding as _llvm
from numba.extending import get_cython_function_address as _cython_address
for _name in ("log1p", "expm1"):
    _llvm.add_symbol("lucent_scipy_" + _name, _cython_address("scipy.special.cython_special", "__pyx_fuse_1" + _name))
_sc_log1p = _types.ExternalFunction("lucent_scipy_log1p", _types.float64(_types.float64))
_sc_expm1 = _types.ExternalFunction("lucent_scipy_expm1", _types.float64(_types.float64))
"""


def _truncexpon_kernel(op, node, leading=()):
    """SciPy's truncexpon: ``-log1p(u * expm1(-b)) * scale + loc`` for a uniform ``u`` per draw.

    SciPy evaluates ``expm1(-b)`` in the precision of ``b`` (a float32 ``b``
    rounds it to float32), which the kernel reproduces. SciPy's functions are
    linked by symbol name (registered when the kernel module is loaded), so
    the kernel is cached on disk like the others.
    """
    b_dtype = node.inputs[2].type.dtype
    if b_dtype not in ("float64", "float32", "int64", "int32", "uint32", "uint64"):
        raise NoNumbaImplementation(_OBJMODE_REASON.format(name=op.name))
    em1 = "np.float32(_sc_expm1(-float(x0)))" if b_dtype == "float32" else "_sc_expm1(-float(x0))"
    lines = []
    batch = _prologue(op, node, lines)
    out_dtype = dtype_text(node.outputs[1].type.dtype)
    shape = "(" + "".join(f"n{d}, " for d in range(batch)) + ")"
    lines.append(f"out = empty_output({shape}, {out_dtype})")
    ivars = [f"i{d}" for d in range(batch)]
    body = [f"x{k} = {_idx(f'a{k}', ivars)}" for k in range(3)]
    target = f"out[{', '.join(ivars)}]" if ivars else "out[()]"
    body.append(f"{target} = -_sc_log1p(g.uniform() * {em1}) * x2 + x1")
    _loop_lines(lines, ivars, body)
    lines.append("return g, out")
    return _compile(op, node, "rv_truncexpon", lines, extra_imports=_SCIPY_SPECIAL_IMPORTS, leading=leading)


def _permutation_kernel(op, node, leading=()):
    """NumPy's permutation: Fisher-Yates (``Generator.shuffle``) of ``arange(x)`` or of
    a copy of ``x`` along its first core axis, once per batch entry in C order."""
    lines = []
    batch = _prologue(op, node, lines)
    ivars = [f"i{d}" for d in range(batch)]
    out_dtype = dtype_text(node.outputs[1].type.dtype)
    nb = "".join(f"n{d}, " for d in range(batch))
    if op.ndims_params[0] == 0:
        lines.append(f"k = a0.ravel()[0] if a0.size else 0")
        lines.append(f"out = empty_output(({nb}k,), {out_dtype})")
        item = _idx("a0", ivars)
        body = [f"out[{''.join(v + ', ' for v in ivars)}:] = g.permutation({item})"]
    else:
        core = op.ndims_params[0]
        core_shape = "".join(f"a0.shape[{batch + c}], " for c in range(core))
        lines.append(f"out = empty_output(({nb}{core_shape}), {out_dtype})")
        item = _idx("a0", ivars, [":"] * core)
        at = "".join(v + ", " for v in ivars) + ", ".join([":"] * core)
        body = [f"tmp = {item}.copy()", "g.shuffle(tmp)", f"out[{at}] = tmp"]
    _loop_lines(lines, ivars, body)
    lines.append("return g, out")
    return _compile(op, node, "rv_permutation", lines, leading=leading)


_SPECIAL = {
    rb.TruncExponentialRV: _truncexpon_kernel,
    rb.PermutationRV: _permutation_kernel,
    rb.BetaBinomialRV: _betabinom_kernel,
    rb.DirichletRV: _dirichlet_kernel,
    rb.MultinomialRV: _multinomial_kernel,
    rb.CategoricalRV: _categorical_kernel,
}


@numba_funcify.register(RandomVariable, version=RANDOM_KERNELS_VERSION)
def numba_funcify_RandomVariable(op, node, leading=(), **kwargs):
    """The kernel of a draw: native where Numba reproduces NumPy exactly, else ``perform`` in object mode.

    ``leading`` names extra leading arguments the kernel accepts and ignores
    (the core shape of ``RandomVariableWithCoreShape``).
    """
    klass = type(op)
    if klass in _SPECIAL:
        return _SPECIAL[klass](op, node, leading=leading)
    draw = _DRAWS.get(klass)
    if draw is not None and op.ndim_supp == 0 and type(op).check_params is RandomVariable.check_params:
        return _scalar_kernel(op, node, draw, leading=leading)
    if draw is not None and op.ndim_supp == 0:
        return _scalar_kernel_with_python_checks(op, node, draw, leading=leading)
    raise NoNumbaImplementation(_OBJMODE_REASON.format(name=op.name))


@numba_funcify.register(RandomVariableWithCoreShape, version=RANDOM_KERNELS_VERSION)
def numba_funcify_RandomVariableWithCoreShape(op, node, **kwargs):
    """The wrapped draw's kernel, taking (and ignoring) the core shape first: lucent's
    kernels size their outputs from the parameters."""
    core_node = op.core_node(node)
    return numba_funcify_RandomVariable(op.core_op, core_node, leading=("core_shape",))


_OBJMODE_REASON = (
    "lucent has no exact Numba kernel for the {name} distribution (Numba lacks NumPy's algorithm); "
    "it runs perform in object mode"
)


def _scalar_kernel_with_python_checks(op, node, draw, leading=()):
    """Families with checks beyond ``param_checks`` (relations between parameters)."""
    lines_extra = {
        rb.TriangularRV: [
            "for v in (a0 - a1).ravel():",
            "    if v > 0: raise ValueError('triangular: parameter left must be <= mode')",
            "for v in (a1 - a2).ravel():",
            "    if v > 0: raise ValueError('triangular: parameter mode must be <= right')",
            "for v in (a0 - a2).ravel():",
            "    if v == 0: raise ValueError('triangular: parameter left must be < right')",
        ],
        rb.IntegersRV: [
            "for v in (a1 - a0).ravel():",
            "    if v <= 0: raise ValueError('integers: parameter low must be < high')",
        ],
    }.get(type(op))
    if lines_extra is None:
        raise NoNumbaImplementation(_OBJMODE_REASON.format(name=op.name))
    return _scalar_kernel(op, node, draw, leading=leading, checks=lines_extra)


__all__ = [
    "numba_funcify_RandomVariable",
    "numba_funcify_RandomVariableWithCoreShape",
    "copy_generator",
    "generator_copy",
    "RANDOM_KERNELS_VERSION",
]
