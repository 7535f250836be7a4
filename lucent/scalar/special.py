"""Special functions of statistics as scalar ops (erf, gamma, Bessel, beta, ...).

Re-exported by ``lucent.scalar.math`` (PyTensor's home for them). On the
reference path each op evaluates ``scipy.special`` (imported lazily, so
``import lucent`` does not load SciPy); the Numba path calls the same
compiled SciPy routines (``lucent.link.numba.dispatch.scipy_special``), so
both paths agree to the last bit wherever SciPy has a double routine.

float16/float32 arguments are evaluated in float64 and rounded once, as the
Numba kernels do: SciPy's single-precision loops are less accurate, and
computing both paths the same way keeps them comparable.

Each op states its derivative with scalar ops, so ``Elemwise`` lifts it to
tensors. The derivatives of ``gammainc``/``gammaincc`` in their shape and of
``betainc`` and ``hyp2f1`` in their parameters are series summed by
``ScalarLoop`` s (``lucent.scalar.series_grad``).
"""

from __future__ import annotations

import numpy as np

from lucent.scalar.basic import (
    BinaryScalarOp,
    ScalarOp,
    UnaryScalarOp,
    _zero_like_float,
    complex_dtypes,
    constant,
    continuous_dtypes,
    discrete_dtypes,
    upgrade_to_float,
    upgrade_to_float_no_complex,
)
from lucent.scalar.arith import isinf, neg, switch
from lucent.scalar.math import abs_, exp, expm1, log, sign


def _scipy(name):
    import scipy.special

    return getattr(scipy.special, name)


def _c(value, like):
    return constant(np.asarray(value, dtype=like.type.dtype))


def _wide(x):
    """``x`` as an array of at least float64 precision (complex stays complex)."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x
    return x.astype("float64", copy=False)


class SpecialOp(ScalarOp):
    """A function evaluated by ``scipy.special.<scipy_name>``.

    Subclasses give ``nin``, ``scipy_name`` and ``L_op``. Integer inputs are
    upgraded to floats by the dtype rule; see the module docstring for the
    float64 evaluation.
    """

    output_types_preference = staticmethod(upgrade_to_float)
    compute_in_output_dtype = True
    scipy_name = None

    def impl(self, *inputs):
        return _scipy(self.scipy_name)(*[_wide(i) for i in inputs])

    def _not_float(self, inputs, outputs):
        if outputs[0].type.dtype in complex_dtypes:
            raise NotImplementedError(f"The gradient of {self} is not implemented for complex inputs")
        return [_zero_like_float(i) for i in inputs] if outputs[0].type.dtype not in continuous_dtypes else None


class _Unary(SpecialOp, UnaryScalarOp):
    nin = 1

    def derivative(self, x, out):
        raise NotImplementedError

    def L_op(self, inputs, outputs, output_grads):
        (x,), (out,), (gz,) = inputs, outputs, output_grads
        if outputs[0].type.dtype in complex_dtypes:
            raise NotImplementedError(f"The gradient of {self} is not implemented for complex inputs")
        if x.type.dtype in discrete_dtypes:
            return [_zero_like_float(x)]
        return [gz * self.derivative(x, out)]


def _undefined(op, i, x):
    from lucent.gradient import grad_undefined

    return grad_undefined(op, i, x)


def _not_implemented(op, i, x, why=""):
    from lucent.gradient import grad_not_implemented

    return grad_not_implemented(op, i, x, why)


# --- error function family ---------------------------------------------------
_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)


class Erf(_Unary):
    name = scipy_name = "erf"

    def derivative(self, x, out):
        return _c(_TWO_OVER_SQRT_PI, x) * exp(neg(x * x))


class Erfc(_Unary):
    name = scipy_name = "erfc"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)

    def derivative(self, x, out):
        return _c(-_TWO_OVER_SQRT_PI, x) * exp(neg(x * x))


class Erfcx(_Unary):
    """``exp(x**2) * erfc(x)``: erfc without the underflow for large x."""

    name = scipy_name = "erfcx"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)

    def derivative(self, x, out):
        return _c(-_TWO_OVER_SQRT_PI, x) + _c(2, x) * x * out


class Erfinv(_Unary):
    name = scipy_name = "erfinv"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)

    def derivative(self, x, out):
        return _c(np.sqrt(np.pi) / 2, x) * exp(out * out)


class Erfcinv(_Unary):
    name = scipy_name = "erfcinv"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)

    def derivative(self, x, out):
        return _c(-np.sqrt(np.pi) / 2, x) * exp(out * out)


class NdtriExp(_Unary):
    """``ndtri(exp(x))``: the normal quantile of a log-probability."""

    name = scipy_name = "ndtri_exp"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)

    def derivative(self, x, out):
        # exp(x) / pdf(out), without forming exp(x) alone.
        return _c(np.sqrt(2 * np.pi), x) * exp(x + out * out * _c(0.5, x))


class Owens_t(SpecialOp, BinaryScalarOp):
    """Owen's T function ``T(h, a)``."""

    nin = 2
    name = scipy_name = "owens_t"

    def L_op(self, inputs, outputs, output_grads):
        (h, a), (gz,) = inputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        gh = gz * _c(-1 / (2 * np.sqrt(2 * np.pi)), h) * exp(neg(h * h) * _c(0.5, h)) * erf(
            a * h * _c(1 / np.sqrt(2), h)
        )
        one_a2 = _c(1, a) + a * a
        ga = gz * exp(neg(h * h) * one_a2 * _c(0.5, h)) / (_c(2 * np.pi, a) * one_a2)
        return [gh, ga]


# --- gamma function family ---------------------------------------------------
class Gamma(_Unary):
    name = scipy_name = "gamma"

    def derivative(self, x, out):
        return out * psi(x)


class GammaLn(_Unary):
    name = scipy_name = "gammaln"

    def derivative(self, x, out):
        return psi(x)


class Psi(_Unary):
    """The digamma function, ``d/dx gammaln(x)``."""

    name = scipy_name = "psi"

    def derivative(self, x, out):
        return tri_gamma(x)


class TriGamma(_Unary):
    """``polygamma(1, x)``."""

    name = "tri_gamma"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)

    def impl(self, x):
        return _scipy("polygamma")(1, _wide(x))

    def derivative(self, x, out):
        return polygamma(constant(np.int64(2)), x)


def _polygamma_out(n_type, x_type):
    if n_type.dtype not in discrete_dtypes:
        raise TypeError(f"polygamma: the order n must be discrete: it must be an integer, got dtype {n_type.dtype}")
    return upgrade_to_float_no_complex(x_type)


class PolyGamma(SpecialOp, BinaryScalarOp):
    """The ``n``-th derivative of the digamma function (``n`` an integer)."""

    nin = 2
    name = "polygamma"
    output_types_preference = staticmethod(_polygamma_out)
    compute_in_output_dtype = False

    def impl(self, n, x):
        return _scipy("polygamma")(np.asarray(n), _wide(x))

    def L_op(self, inputs, outputs, output_grads):
        (n, x), (gz,) = inputs, output_grads
        gx = gz * polygamma(n + constant(np.int8(1)), x) if x.type.dtype in continuous_dtypes else _zero_like_float(x)
        return [_undefined(self, 0, n), gx]


class GammaInc(SpecialOp, BinaryScalarOp):
    """Regularized lower incomplete gamma ``P(k, x)``."""

    nin = 2
    name = scipy_name = "gammainc"

    def L_op(self, inputs, outputs, output_grads):
        from lucent.scalar.series_grad import gammainc_grad

        (k, x), (gz,) = inputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        gk = gz * gammainc_grad(k, x) if k.type.dtype in continuous_dtypes else _zero_like_float(k)
        gx = gz * _gammainc_dx(k, x) if x.type.dtype in continuous_dtypes else _zero_like_float(x)
        return [gk, gx]


def _gammainc_dx(k, x):
    """``d/dx P(k, x) = x**(k-1) exp(-x) / gamma(k)``, in log space."""
    return exp((k - _c(1, k)) * log(x) - x - gammaln(k))


class GammaIncC(SpecialOp, BinaryScalarOp):
    """Regularized upper incomplete gamma ``Q(k, x) = 1 - P(k, x)``."""

    nin = 2
    name = scipy_name = "gammaincc"

    def L_op(self, inputs, outputs, output_grads):
        from lucent.scalar.series_grad import gammaincc_grad

        (k, x), (gz,) = inputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        gk = gz * gammaincc_grad(k, x) if k.type.dtype in continuous_dtypes else _zero_like_float(k)
        gx = neg(gz * _gammainc_dx(k, x)) if x.type.dtype in continuous_dtypes else _zero_like_float(x)
        return [gk, gx]


class GammaIncInv(SpecialOp, BinaryScalarOp):
    """Inverse of ``gammainc`` in its second argument."""

    nin = 2
    name = scipy_name = "gammaincinv"

    def L_op(self, inputs, outputs, output_grads):
        (k, y), (out,), (gz,) = inputs, outputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        gy = gz * exp(gammaln(k) + out - (k - _c(1, k)) * log(out))
        return [_not_implemented(self, 0, k, "the derivative of gammaincinv wrt k"), gy]


class GammaIncCInv(SpecialOp, BinaryScalarOp):
    """Inverse of ``gammaincc`` in its second argument."""

    nin = 2
    name = scipy_name = "gammainccinv"

    def L_op(self, inputs, outputs, output_grads):
        (k, y), (out,), (gz,) = inputs, outputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        gy = neg(gz * exp(gammaln(k) + out - (k - _c(1, k)) * log(out)))
        return [_not_implemented(self, 0, k, "the derivative of gammainccinv wrt k"), gy]


# --- Bessel functions ----------------------------------------------------------
class J0(_Unary):
    name = scipy_name = "j0"

    def derivative(self, x, out):
        return neg(j1(x))


class J1(_Unary):
    name = scipy_name = "j1"

    def derivative(self, x, out):
        return (j0(x) - jv(_c(2, x), x)) * _c(0.5, x)


class I0(_Unary):
    name = scipy_name = "i0"

    def derivative(self, x, out):
        return i1(x)


class I1(_Unary):
    name = scipy_name = "i1"

    def derivative(self, x, out):
        return (i0(x) + ive(_c(2, x), x) * exp(abs_(x))) * _c(0.5, x)


class _BesselOrder(SpecialOp, BinaryScalarOp):
    """A Bessel function ``f(v, x)`` of real order ``v``: no derivative in ``v``."""

    nin = 2

    def L_op(self, inputs, outputs, output_grads):
        (v, x), (out,), (gz,) = inputs, outputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        gx = gz * self.dx(v, x, out) if x.type.dtype in continuous_dtypes else _zero_like_float(x)
        return [_not_implemented(self, 0, v, f"the derivative of {self} wrt its order"), gx]


class Jv(_BesselOrder):
    name = scipy_name = "jv"

    def dx(self, v, x, out):
        one = _c(1, v)
        return (jv(v - one, x) - jv(v + one, x)) * _c(0.5, x)


class Ive(_BesselOrder):
    """Exponentially scaled modified Bessel function ``iv(v, x) * exp(-|x|)``."""

    name = scipy_name = "ive"

    def dx(self, v, x, out):
        one = _c(1, v)
        return (ive(v - one, x) + ive(v + one, x)) * _c(0.5, x) - sign(x) * out


class Kve(_BesselOrder):
    """Exponentially scaled modified Bessel function of the second kind ``kv(v, x) * exp(x)``."""

    name = scipy_name = "kve"

    def dx(self, v, x, out):
        one = _c(1, v)
        return out - (kve(v - one, x) + kve(v + one, x)) * _c(0.5, x)


# --- log-space helpers ----------------------------------------------------------
_LOG_HALF = float(np.log(0.5))


class Log1mexp(_Unary):
    """``log(1 - exp(x))`` for ``x <= 0``, accurate on both sides of ``log(1/2)``.

    Mächler (2012): ``log1p(-exp(x))`` when ``exp(x)`` is small, ``log(-expm1(x))``
    when ``x`` is close to 0.
    """

    name = "log1mexp"

    def impl(self, x):
        x = _wide(x)
        with np.errstate(all="ignore"):
            return np.where(x < _LOG_HALF, np.log1p(-np.exp(x)), np.log(-np.expm1(x)))

    def derivative(self, x, out):
        d = _c(-1, x) / expm1(neg(x))
        # At x = 0 the slope is -inf (not NaN).
        return switch(isinf(d), _c(-np.inf, x), d)


# --- beta and hypergeometric functions -----------------------------------------
class BetaInc(SpecialOp):
    """Regularized incomplete beta ``I_x(a, b)``."""

    nin = 3
    name = scipy_name = "betainc"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)

    def L_op(self, inputs, outputs, output_grads):
        (a, b, x), (gz,) = inputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        from lucent.scalar.series_grad import betainc_grad

        one = _c(1, x)
        gx = gz * exp(
            (a - _c(1, a)) * log(x) + (b - _c(1, b)) * log(one - x) - (gammaln(a) + gammaln(b) - gammaln(a + b))
        )
        return [
            gz * betainc_grad(a, b, x, True) if a.type.dtype in continuous_dtypes else _zero_like_float(a),
            gz * betainc_grad(a, b, x, False) if b.type.dtype in continuous_dtypes else _zero_like_float(b),
            gx if x.type.dtype in continuous_dtypes else _zero_like_float(x),
        ]


class BetaIncInv(SpecialOp):
    """Inverse of ``betainc`` in ``x``."""

    nin = 3
    name = scipy_name = "betaincinv"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)

    def L_op(self, inputs, outputs, output_grads):
        (a, b, y), (out,), (gz,) = inputs, outputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        one = _c(1, out)
        gy = gz * exp(
            (gammaln(a) + gammaln(b) - gammaln(a + b))
            - (a - _c(1, a)) * log(out)
            - (b - _c(1, b)) * log(one - out)
        )
        return [
            _not_implemented(self, 0, a, "the derivative of betaincinv wrt a"),
            _not_implemented(self, 1, b, "the derivative of betaincinv wrt b"),
            gy,
        ]


class Hyp2F1(SpecialOp):
    """Gauss hypergeometric function ``2F1(a, b; c; z)``."""

    nin = 4
    name = scipy_name = "hyp2f1"

    def L_op(self, inputs, outputs, output_grads):
        (a, b, c, z), (gz,) = inputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        from lucent.scalar.series_grad import hyp2f1_grad

        wrt = [k for k, v in enumerate((a, b, c)) if v.type.dtype in continuous_dtypes]
        series = dict(zip(wrt, hyp2f1_grad(a, b, c, z, wrt))) if wrt else {}
        grads = [gz * series[k] if k in series else _zero_like_float(v) for k, v in enumerate((a, b, c))]
        one = _c(1, z)
        gzz = gz * a * b / c * hyp2f1(a + one, b + one, c + one, z)
        grads.append(gzz if z.type.dtype in continuous_dtypes else _zero_like_float(z))
        return grads


class XLogY(SpecialOp, BinaryScalarOp):
    """``x * log(y)``, 0 where ``x == 0`` (``scipy.special.xlogy``).

    One op rather than a ``switch`` so that its gradient is the plain
    ``(log(y), x / y)`` at ``x == 0`` too (``-inf`` at ``y == 0``, not a
    masked 0), and so that no algebraic rewrite distributes ``x`` over the
    logarithm (``(a - 1) * log(0)`` must stay ``-inf``).
    """

    nin = 2
    name = scipy_name = "xlogy"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)

    def L_op(self, inputs, outputs, output_grads):
        (x, y), (gz,) = inputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        # xlogy(x, x) = x log(x): the y-part x / y is then exactly 1 (the limit at 0 too, so the
        # gradient there is log(0) + 1 = -inf, not NaN from 0 / 0).
        gy = gz if x is y else gz * x / y
        return [gz * log(y) if x.type.dtype in continuous_dtypes else _zero_like_float(x),
                gy if y.type.dtype in continuous_dtypes else _zero_like_float(y)]


class XLog1PY(SpecialOp, BinaryScalarOp):
    """``x * log1p(y)``, 0 where ``x == 0`` (``scipy.special.xlog1py``); see ``XLogY``."""

    nin = 2
    name = scipy_name = "xlog1py"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.scalar.math import log1p

        (x, y), (gz,) = inputs, output_grads
        zeros = self._not_float(inputs, outputs)
        if zeros is not None:
            return zeros
        return [gz * log1p(y) if x.type.dtype in continuous_dtypes else _zero_like_float(x),
                gz * x / (y + _c(1, y)) if y.type.dtype in continuous_dtypes else _zero_like_float(y)]


erf = Erf(name="erf")
erfc = Erfc(name="erfc")
erfcx = Erfcx(name="erfcx")
erfinv = Erfinv(name="erfinv")
erfcinv = Erfcinv(name="erfcinv")
ndtri_exp = NdtriExp(name="ndtri_exp")
owens_t = Owens_t(name="owens_t")
gamma = Gamma(name="gamma")
gammaln = GammaLn(name="gammaln")
psi = Psi(name="psi")
tri_gamma = TriGamma(name="tri_gamma")
polygamma = PolyGamma(name="polygamma")
gammainc = GammaInc(name="gammainc")
gammaincc = GammaIncC(name="gammaincc")
gammaincinv = GammaIncInv(name="gammaincinv")
gammainccinv = GammaIncCInv(name="gammainccinv")
j0 = J0(name="j0")
j1 = J1(name="j1")
i0 = I0(name="i0")
i1 = I1(name="i1")
jv = Jv(name="jv")
ive = Ive(name="ive")
kve = Kve(name="kve")
log1mexp = Log1mexp(name="log1mexp")
betainc = BetaInc(name="betainc")
betaincinv = BetaIncInv(name="betaincinv")
hyp2f1 = Hyp2F1(name="hyp2f1")
xlogy = XLogY(name="xlogy")
xlog1py = XLog1PY(name="xlog1py")


def betaln(a, b):
    """``log(B(a, b)) = gammaln(a) + gammaln(b) - gammaln(a + b)``."""
    return gammaln(a) + gammaln(b) - gammaln(a + b)


__all__ = [
    "SpecialOp", "Erf", "Erfc", "Erfcx", "Erfinv", "Erfcinv", "NdtriExp", "Owens_t", "Gamma",
    "GammaLn", "Psi", "TriGamma", "PolyGamma", "GammaInc", "GammaIncC", "GammaIncInv",
    "GammaIncCInv", "J0", "J1", "I0", "I1", "Jv", "Ive", "Kve", "Log1mexp", "BetaInc",
    "BetaIncInv", "Hyp2F1", "XLogY", "XLog1PY", "xlogy", "xlog1py",
    "erf", "erfc", "erfcx", "erfinv", "erfcinv", "ndtri_exp", "owens_t", "gamma", "gammaln", "psi",
    "tri_gamma", "polygamma", "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "j0", "j1",
    "i0", "i1", "jv", "ive", "kve", "log1mexp", "betainc", "betaincinv", "hyp2f1", "betaln",
]
