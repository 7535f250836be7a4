"""Parameter derivatives of ``betainc`` and ``hyp2f1``, summed by ``ScalarLoop`` s.

Neither derivative has a closed form in other special functions; both are
sums of series whose terms follow a recurrence. Writing the summation as a
:class:`~lucent.scalar.loop.ScalarLoop` keeps the gradient an ordinary
scalar graph: it is evaluated element-wise on both paths, fused on the
Numba path, and stops per element as soon as the terms stop mattering.

``betainc``: with ``K = x**a (1-x)**b / (a B(a, b))``,

    I_x(a, b) = K * sum_n t_n,   t_0 = 1,   t_{n+1} = t_n * x (a+b+n) / (a+1+n),

so ``d/da I = K (dlogK/da * sum t_n + sum t_n s_n)`` where ``s_n = d log t_n / da``
is accumulated along (``1/(a+b+j) - 1/(a+1+j)`` per step; for ``b`` only the
first part, and ``dlogK`` changes accordingly). For ``x > a/(a+b)`` the
symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)`` is used, which keeps the term
ratio below ``a/(a+1) < 1`` from the first term on.

``hyp2f1``: ``2F1 = sum_n t_n`` with ``t_{n+1} = t_n r_n``,
``r_n = (a+n)(b+n) z / ((c+n)(n+1))``. The derivative of each term follows
from the product rule, ``dt_{n+1} = dt_n r_n + t_n dr_n``, which stays finite
when a term vanishes (a non-positive integer ``a`` or ``b``). The series is
used where it converges (``|z| < 1``, or ``|z| = 1`` with ``c > a + b``, where
it converges only algebraically and may run out of steps); elsewhere the
derivative is NaN.

A loop that reaches its step limit without converging gives NaN.
"""

from __future__ import annotations

import numpy as np

from lucent.scalar.arith import cast, eq, ge, gt, le, lt, maximum, switch
from lucent.scalar.basic import as_scalar, upcast
from lucent.scalar.loop import ScalarLoop
from lucent.scalar.math import abs_, exp, floor, log, log1p
from lucent.scalar.special import gammaln, psi


def _make_scalar_loop(n_steps, init, constant, inner_loop_fn, name, loop_op=ScalarLoop):
    """Build a ``loop_op`` from a Python step function and apply it.

    ``inner_loop_fn(*state, *constant)`` receives fresh variables of the
    types of ``init`` and ``constant`` and returns ``(updates, until)``
    (``until`` None for a plain loop). An ``init`` entry may be None; it is
    dropped together with its (None) update. Each update is cast to its
    init's dtype, so a Python literal that promotes it keeps the loop valid.
    Returns the outputs of ``loop_op(n_steps, *init, *constant)``.
    """
    init = [as_scalar(v) if v is not None else None for v in init]
    constant = [as_scalar(v) for v in constant]
    state = [v.type() if v is not None else None for v in init]
    consts = [v.type() for v in constant]
    updates, until = inner_loop_fn(*state, *consts)
    init = [v for v in init if v is not None]
    state = [v for v in state if v is not None]
    updates = [u for u in updates if u is not None]
    if len(updates) != len(state):
        raise ValueError(
            f"{name}: the step function returned {len(updates)} updates for {len(state)} state variables"
        )
    updates = [u if u.type == s.type else cast(u, s.type.dtype) for s, u in zip(state, updates)]
    op = loop_op(init=state, constant=consts, update=updates, until=until, name=name)
    return op(n_steps, *init, *constant)


def _const(value, dtype):
    return np.array(value, dtype=dtype)


def _eps(dtype):
    return _const(np.finfo(dtype).eps, dtype)


# --- gammainc ---------------------------------------------------------------------
def _tol(dtype):
    """Relative size below which a term no longer changes a sum, and an absolute floor."""
    info = np.finfo(dtype)
    return _const(info.eps / 10, dtype), _const(info.tiny * 1e8, dtype)


def gammainc_grad(k, x):
    """``d/dk gammainc(k, x)``; NaN outside ``k > 0``, ``x >= 0``.

    ``P(k, x) = sum_n t_n`` with ``t_n = x**(k+n) exp(-x) / gamma(k+n+1)``, and
    ``d t_n / dk = t_n (log x - psi(k+n+1))``. The terms peak near
    ``n0 = x - k``, so two loops sum from the peak (computed in log space,
    where it cannot underflow) upwards until the terms stop mattering and
    downwards to ``n = 0``; ``t_n`` and ``psi(k+n+1)`` follow by recurrence.
    Far in the upper tail (``x > 40``, ``x > 4k``) that sum cancels, and the
    asymptotic expansion ``Q = x**(k-1) exp(-x) / gamma(k) sum_j c_j / x**j``,
    ``c_j = (k-1)...(k-j)``, is differentiated instead (a third loop, stopped
    when its terms start to grow).
    """
    k, x = as_scalar(k), as_scalar(x)
    dtype = upcast(k.type.dtype, x.type.dtype, "float32")
    k, x = (v if v.type.dtype == dtype else cast(v, dtype) for v in (k, x))
    zero, one = _const(0, dtype), _const(1, dtype)
    eps, tiny = _tol(dtype)
    inf = _const(np.inf, dtype)
    bad = ~gt(k, zero) | ~ge(x, zero) | eq(k, inf)
    trivial = eq(x, zero) | eq(x, inf)
    tail = gt(x, _const(40, dtype)) & gt(x, _const(4, dtype) * k)
    logx = log(x)

    # Asymptotic expansion of Q in the far upper tail.
    def tail_step(c, dc, s, ds, xp, prev, j, k, x):
        dc_new = dc * (k - j) + c
        c_new = c * (k - j)
        xp_new = xp / x
        size = abs_(c_new * xp_new) + abs_(dc_new * xp_new)
        grows = gt(size, prev)
        s_new = switch(grows, s, s + c_new * xp_new)
        ds_new = switch(grows, ds, ds + dc_new * xp_new)
        done = grows | lt(size, eps * (abs_(s_new) + abs_(ds_new)))
        return (c_new, dc_new, s_new, ds_new, xp_new, size, j + one), done

    skip_tail = bad | trivial | ~tail
    tail_steps = switch(skip_tail, _const(0, "int64"), _const(200, "int64"))
    _, _, s, ds, *_ = _make_scalar_loop(
        tail_steps, [one, zero, one, zero, one, inf, one], [k, x], tail_step, name="gammainc_grad_tail"
    )
    scale = exp((k - one) * logx - x - gammaln(k))
    tail_value = -scale * ((logx - psi(k)) * s + ds)

    # Power series of P, from the peak term in both directions.
    skip_series = bad | trivial | tail
    n0 = switch(gt(x, k), floor(x - k), zero)
    a = k + n0 + one
    psi0 = psi(a)
    t0 = exp((k + n0) * logx - x - gammaln(a))

    def up_step(t, psi_m, m, total, x, logx):
        t_new = t * x / m
        psi_new = psi_m + one / m
        total_new = total + t_new * (logx - psi_new)
        done = lt(t_new, eps * abs_(total_new) + tiny) & gt(m + one, x)
        return (t_new, psi_new, m + one, total_new), done

    up_steps = switch(skip_series, _const(0, "int64"), _const(100000, "int64"))
    *_, up_total, _ = _make_scalar_loop(
        up_steps, [t0, psi0, a, t0 * (logx - psi0)], [x, logx], up_step, name="gammainc_grad_up"
    )

    def down_step(t, psi_m, m, total, x, logx):
        t_new = t * m / x
        psi_new = psi_m - one / m
        total_new = total + t_new * (logx - psi_new)
        return (t_new, psi_new, m - one, total_new), lt(t_new, eps * abs_(total_new) + tiny)

    down_steps = switch(skip_series, _const(0, "int64"), cast(n0, "int64"))
    *_, total, _ = _make_scalar_loop(
        down_steps, [t0, psi0, a - one, up_total], [x, logx], down_step, name="gammainc_grad_down"
    )
    nan = _const(np.nan, dtype)
    return switch(bad, nan, switch(trivial, zero, switch(tail, tail_value, total)))


def gammaincc_grad(k, x):
    """``d/dk gammaincc(k, x) = -d/dk gammainc(k, x)``."""
    return -gammainc_grad(k, x)


# --- betainc --------------------------------------------------------------------
def _betaln(a, b):
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def _betainc_series_der(a, b, x, wrt_a, skip, dtype):
    """``d/da`` (``wrt_a``) or ``d/db`` of ``I_x(a, b)`` for ``0 < x <= a/(a+b)``."""
    one = _const(1, dtype)
    log_k = a * log(x) + b * log1p(-x) - log(a) - _betaln(a, b)
    if wrt_a:
        dlog_k = log(x) - one / a - psi(a) + psi(a + b)
    else:
        dlog_k = log1p(-x) - psi(b) + psi(a + b)
    eps = _eps(dtype)
    max_steps = switch(skip, _const(0, "int64"), _const(50000, "int64"))

    def step(t, s, total, dtotal, n, a, b, x, dlog_k):
        ratio = x * (a + b + n) / (a + one + n)
        ds = one / (a + b + n) - one / (a + one + n) if wrt_a else one / (a + b + n)
        s_new = s + ds
        t_new = t * ratio
        total_new = total + t_new
        dtotal_new = dtotal + t_new * s_new
        scale = abs_(dlog_k) * total_new + abs_(dtotal_new)
        done = le(t_new * (abs_(dlog_k) + abs_(s_new)), eps * scale)
        return (t_new, s_new, total_new, dtotal_new, n + one), done

    init = [_const(1, dtype), _const(0, dtype), _const(1, dtype), _const(0, dtype), _const(0, dtype)]
    _, _, total, dtotal, _, done = _make_scalar_loop(
        max_steps, init, [a, b, x, dlog_k], step, name="betainc_grad"
    )
    value = exp(log_k) * (dlog_k * total + dtotal)
    zero = _const(0, dtype)
    return switch(eq(x, zero), zero, switch(done, value, _const(np.nan, dtype)))


def betainc_grad(p, q, x, wrtp):
    """``d/dp betainc(p, q, x)`` if ``wrtp`` else ``d/dq``; NaN outside ``p, q > 0``, ``0 <= x <= 1``."""
    p, q, x = as_scalar(p), as_scalar(q), as_scalar(x)
    dtype = upcast(p.type.dtype, q.type.dtype, x.type.dtype, "float32")
    p, q, x = (v if v.type.dtype == dtype else cast(v, dtype) for v in (p, q, x))
    one = _const(1, dtype)
    zero = _const(0, dtype)
    bad = lt(x, zero) | gt(x, one) | le(p, zero) | le(q, zero)
    flip = gt(x, p / (p + q))
    direct = _betainc_series_der(p, q, x, wrtp, bad | flip, dtype)
    flipped = -_betainc_series_der(q, p, one - x, not wrtp, bad | ~flip, dtype)
    return switch(bad, _const(np.nan, dtype), switch(flip, flipped, direct))


# --- hyp2f1 ---------------------------------------------------------------------
def _hyp2f1_converges(a, b, c, z):
    # On |z| = 1 the series converges for c > a + b, algebraically: fast
    # enough when c - a - b is large, else the loop runs out of steps (NaN).
    az, one = abs_(z), _const(1, z.type.dtype)
    return lt(az, one) | (eq(az, one) & gt(c, a + b))


def hyp2f1_grad(a, b, c, z, wrt):
    """The derivatives of ``hyp2f1(a, b, c, z)`` with respect to the parameters in ``wrt`` (0, 1, 2)."""
    a, b, c, z = (as_scalar(v) for v in (a, b, c, z))
    dtype = upcast(a.type.dtype, b.type.dtype, c.type.dtype, z.type.dtype, "float32")
    a, b, c, z = (v if v.type.dtype == dtype else cast(v, dtype) for v in (a, b, c, z))
    wrt = list(wrt)
    if not wrt or any(w not in (0, 1, 2) for w in wrt):
        raise ValueError(f"hyp2f1_grad: wrt must list parameters among 0, 1, 2 (a, b, c), got {wrt}")
    zero = _const(0, dtype)
    one = _const(1, dtype)
    eps = _eps(dtype)
    is_zero = eq(z, zero)
    converges = _hyp2f1_converges(a, b, c, z)
    # c a non-positive integer: the series is undefined.
    c_pole = eq(floor(c), c) & le(c, zero)
    ok = converges & ~c_pole
    max_steps = switch(is_zero | ~ok, _const(0, "int64"), _const(100000, "int64"))
    min_steps = _const(10, dtype)
    k = len(wrt)

    def step(t, *rest):
        dts, gs, (n, a, b, c, z) = rest[:k], rest[k:2 * k], rest[2 * k:]
        q = z / ((c + n) * (n + one))
        r = (a + n) * (b + n) * q
        partial = {0: (b + n) * q, 1: (a + n) * q, 2: -r / (c + n)}
        new_dts = [dt * r + t * partial[w] for dt, w in zip(dts, wrt)]
        new_gs = [g + dt for g, dt in zip(gs, new_dts)]
        inc = abs_(new_dts[0])
        size = abs_(new_gs[0])
        for dt, g in zip(new_dts[1:], new_gs[1:]):
            inc = maximum(inc, abs_(dt))
            size = maximum(size, abs_(g))
        done = gt(n, min_steps) & le(inc, eps * size)
        return (t * r, *new_dts, *new_gs, n + one), done

    init = [one] + [zero] * (2 * k) + [zero]
    outs = _make_scalar_loop(max_steps, init, [a, b, c, z], step, name="hyp2f1_grad")
    grads, done = outs[1 + k:1 + 2 * k], outs[-1]
    nan = _const(np.nan, dtype)
    return [switch(is_zero, zero, switch(ok & done, g, nan)) for g in grads]


__all__ = ["_make_scalar_loop", "gammainc_grad", "gammaincc_grad", "betainc_grad", "hyp2f1_grad"]
