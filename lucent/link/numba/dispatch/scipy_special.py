"""SciPy's compiled special functions, callable from generated Numba kernels.

``scipy.special.cython_special`` publishes a C function pointer for each
special function in its ``__pyx_capi__`` table (a PyCapsule whose name is
the C signature). Each double-precision routine is registered with LLVM
under a stable symbol name (``llvmlite.binding.add_symbol``) and declared
to Numba as an ``ExternalFunction``: kernels call it like ``math.exp``,
in nopython mode, and, because the call goes through a *symbol* rather
than a pointer baked into the code, kernels stay cacheable on disk (a new
process registers the symbols again when a cached kernel imports this
module). The reference path calls the same SciPy routines, so both paths
give the same bits.

Functions SciPy does not publish (``polygamma``, ``log1mexp``) are written
here with plain arithmetic: ``hurwitz_zeta`` follows the Euler-Maclaurin
summation that SciPy's ``zeta`` uses (Cephes), so results agree to a few ulp.

Every wrapper takes and returns float64; the kernel rounds to the output
dtype once. Importing this module imports SciPy, so the scalar code
generator imports it only into kernels that use one of these functions.
"""

from __future__ import annotations

import math
import re

import numpy as np
from llvmlite import binding as llvm
from numba import njit, types

from lucent.link.numba.dispatch.basic import capsule_entry
from lucent.scalar.special_grad import gammainc_dk

#: Bump when the meaning of a function here changes (part of kernel text).
SCIPY_SPECIAL_VERSION = 1

_C_TYPES = {"double": types.float64, "int": types.intc, "long": types.int64}


def _capsules():
    import scipy.special.cython_special as cs

    return {key: capsule_entry(capsule) for key, capsule in cs.__pyx_capi__.items()}


def _double_routine(table, name):
    """The ``ExternalFunction`` of SciPy's all-double variant of ``name``."""
    for key in [name] + [k for k in table if re.fullmatch(rf"__pyx_fuse_\d+{re.escape(name)}", k)]:
        if key not in table:
            continue
        signature, address = table[key]
        m = re.fullmatch(r"(\w+) \((.*)\)", signature)
        if m is None or m.group(1) != "double":
            continue
        args = [a.strip() for a in m.group(2).split(",")]
        if args[-1] != "int __pyx_skip_dispatch" or any(a != "double" for a in args[:-1]):
            continue
        symbol = f"lucent_scipy_special_{name}"
        llvm.add_symbol(symbol, address)
        return types.ExternalFunction(symbol, types.float64(*([types.float64] * (len(args) - 1)), types.intc))
    raise ImportError(f"scipy.special.cython_special has no double-precision {name}")


_table = _capsules()
_erf = _double_routine(_table, "erf")
_erfc = _double_routine(_table, "erfc")
_erfcx = _double_routine(_table, "erfcx")
_erfinv = _double_routine(_table, "erfinv")
_erfcinv = _double_routine(_table, "erfcinv")
_ndtri_exp = _double_routine(_table, "ndtri_exp")
_owens_t = _double_routine(_table, "owens_t")
_gamma = _double_routine(_table, "gamma")
_gammaln = _double_routine(_table, "gammaln")
_psi = _double_routine(_table, "psi")
_gammainc = _double_routine(_table, "gammainc")
_gammaincc = _double_routine(_table, "gammaincc")
_gammaincinv = _double_routine(_table, "gammaincinv")
_gammainccinv = _double_routine(_table, "gammainccinv")
_j0 = _double_routine(_table, "j0")
_j1 = _double_routine(_table, "j1")
_jv = _double_routine(_table, "jv")
_i0 = _double_routine(_table, "i0")
_i1 = _double_routine(_table, "i1")
_ive = _double_routine(_table, "ive")
_kve = _double_routine(_table, "kve")
_betainc = _double_routine(_table, "betainc")
_betaincinv = _double_routine(_table, "betaincinv")
_hyp2f1 = _double_routine(_table, "hyp2f1")
_xlogy = _double_routine(_table, "xlogy")
_xlog1py = _double_routine(_table, "xlog1py")
del _table

_OPTS = {"inline": "always", "error_model": "numpy"}


@njit(**_OPTS)
def sp_erf(x):
    return _erf(x, 0)


@njit(**_OPTS)
def sp_erfc(x):
    return _erfc(x, 0)


@njit(**_OPTS)
def sp_erfcx(x):
    return _erfcx(x, 0)


@njit(**_OPTS)
def sp_erfinv(x):
    return _erfinv(x, 0)


@njit(**_OPTS)
def sp_erfcinv(x):
    return _erfcinv(x, 0)


@njit(**_OPTS)
def sp_ndtri_exp(x):
    return _ndtri_exp(x, 0)


@njit(**_OPTS)
def sp_owens_t(h, a):
    return _owens_t(h, a, 0)


@njit(**_OPTS)
def sp_gamma(x):
    return _gamma(x, 0)


@njit(**_OPTS)
def sp_gammaln(x):
    return _gammaln(x, 0)


@njit(**_OPTS)
def sp_psi(x):
    return _psi(x, 0)


@njit(**_OPTS)
def sp_gammainc(k, x):
    return _gammainc(k, x, 0)


@njit(**_OPTS)
def sp_gammaincc(k, x):
    return _gammaincc(k, x, 0)


@njit(**_OPTS)
def sp_gammaincinv(k, y):
    return _gammaincinv(k, y, 0)


@njit(**_OPTS)
def sp_gammainccinv(k, y):
    return _gammainccinv(k, y, 0)


@njit(**_OPTS)
def sp_j0(x):
    return _j0(x, 0)


@njit(**_OPTS)
def sp_j1(x):
    return _j1(x, 0)


@njit(**_OPTS)
def sp_jv(v, x):
    return _jv(v, x, 0)


@njit(**_OPTS)
def sp_i0(x):
    return _i0(x, 0)


@njit(**_OPTS)
def sp_i1(x):
    return _i1(x, 0)


@njit(**_OPTS)
def sp_ive(v, x):
    return _ive(v, x, 0)


@njit(**_OPTS)
def sp_kve(v, x):
    return _kve(v, x, 0)


@njit(**_OPTS)
def sp_betainc(a, b, x):
    return _betainc(a, b, x, 0)


@njit(**_OPTS)
def sp_betaincinv(a, b, y):
    return _betaincinv(a, b, y, 0)


@njit(**_OPTS)
def sp_hyp2f1(a, b, c, z):
    return _hyp2f1(a, b, c, z, 0)


@njit(**_OPTS)
def sp_xlogy(x, y):
    return _xlogy(x, y, 0)


@njit(**_OPTS)
def sp_xlog1py(x, y):
    return _xlog1py(x, y, 0)


@njit(**_OPTS)
def sp_log1mexp(x):
    """``log(1 - exp(x))``: two formulas either side of ``log(1/2)`` (Mächler 2012)."""
    if x < -0.6931471805599453:
        return math.log1p(-math.exp(x))
    return math.log(-math.expm1(x))


# Euler-Maclaurin coefficients (2k)! / B_2k, k = 1..12, as in Cephes ``zeta``.
_ZETA_A = np.array(
    [
        12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
        -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
        1.8152105401943546773e17, -7.1661652561756670113e18,
    ]
)


@njit(error_model="numpy")
def hurwitz_zeta(s, q):
    """``sum_k (k + q) ** -s`` for ``s > 1`` (SciPy's ``zeta(s, q)``)."""
    if s == 1.0:
        return math.inf
    if s < 1.0 or math.isnan(s) or math.isnan(q):
        return math.nan
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if s != math.floor(s):
            return math.nan
    if q > 1e8:
        return (1.0 / (s - 1.0) + 1.0 / (2.0 * q)) * q ** (1.0 - s)
    total = q ** -s
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -s
        total += b
        if abs(b / total) < 1.1102230246251565e-16:
            return total
    w = a
    total += b * w / (s - 1.0)
    total -= 0.5 * b
    fac = 1.0
    k = 0.0
    for j in range(12):
        fac *= s + k
        b /= w
        t = fac * b / _ZETA_A[j]
        total += t
        if abs(t / total) < 1.1102230246251565e-16:
            break
        k += 1.0
        fac *= s + k
        b /= w
        k += 1.0
    return total


@njit(error_model="numpy")
def sp_polygamma(n, x):
    """``polygamma(n, x)``: ``psi`` for n = 0, else ``(-1)**(n+1) n! zeta(n+1, x)``."""
    if n != math.floor(n) or n < 0.0:
        return math.nan
    if n == 0.0:
        return _psi(x, 0)
    sign = 1.0 if int(n) % 2 == 1 else -1.0
    return sign * math.exp(math.lgamma(n + 1.0)) * hurwitz_zeta(n + 1.0, x)


@njit(**_OPTS)
def sp_tri_gamma(x):
    return sp_polygamma(1.0, x)


sp_gammainc_dk = njit(error_model="numpy")(gammainc_dk)


__all__ = [name for name in list(globals()) if name.startswith("sp_")] + ["hurwitz_zeta", "SCIPY_SPECIAL_VERSION"]
