"""Differential fuzzing: random graphs on FAST_COMPILE, FAST_RUN and DebugMode against NumPy.

A Hypothesis strategy builds a random program: a few inputs (float64,
float32, int64, bool; 0-d to 2-d, including empty and length-1 axes,
non-contiguous views, NaN and infinities), then a sequence of operations
(element-wise with broadcasting, special functions, reductions, ``dot``,
reshape/transpose, basic and advanced indexing, ``concatenate``,
cumulative sums and products, ``diff``, ``sort``/``argsort``, and
``det``/``inv``/``solve`` on well-conditioned matrices), each applied both
symbolically and to concrete NumPy values. Every intermediate is an output
of one function, compiled once per mode, so each mode compiles once per
program. Results are compared with NumPy's (cast to lucent's output dtype:
lucent follows PyTensor's upcasting, not NumPy's) and DebugMode must find
no problem. Random draws are left out: the two paths use different
generators, so their values agree only in distribution.

The default run is bounded (a handful of programs, derandomised, so the
compiled kernels come from the disk cache after the first run); the long
run is marked ``slow`` (``make test-all``). Programs the fuzzer got wrong
or lucent disagreed on are kept as explicit regression tests at the end.
"""

import warnings

import numpy as np
import pytest

pytest.importorskip("numba")
hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.debugmode import DebugMode  # noqa: E402
from lucent.tensor.linalg import det, inv, solve  # noqa: E402

special = pytest.importorskip("scipy.special")

DTYPES = ("float64", "float32", "int64", "bool")
SPECIAL = (np.nan, np.inf, -np.inf)


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------
@st.composite
def input_values(draw, index):
    """``(variable, value)``: a random input and a value of it (maybe a non-contiguous view)."""
    dtype = draw(st.sampled_from(DTYPES))
    ndim = draw(st.integers(0, 2))
    shape = tuple(draw(st.sampled_from((0, 1, 2, 3))) for _ in range(ndim))
    layout = draw(st.sampled_from(("c", "strided", "transposed"))) if ndim else "c"
    big = tuple(2 * s for s in shape) if layout == "strided" else shape
    if layout == "transposed":
        big = big[::-1]
    n = int(np.prod(big, dtype=int))
    if dtype == "bool":
        flat = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif dtype == "int64":
        flat = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))
    else:
        finite = st.floats(-4, 4, allow_nan=False, width=32)
        flat = draw(st.lists(st.one_of(finite, finite, finite, st.sampled_from(SPECIAL)),
                             min_size=n, max_size=n))
    value = np.array(flat, dtype=dtype).reshape(big)
    if layout == "strided":
        value = value[tuple(slice(None, None, 2) for _ in range(ndim))]
    elif layout == "transposed":
        value = value.T
    assert value.shape == shape
    var = lt.tensor(dtype=dtype, shape=(None,) * ndim, name=f"in{index}")
    return var, value


# ---------------------------------------------------------------------------
# Operations: (name, symbolic, numpy, applicable)
# ---------------------------------------------------------------------------
def _is_float(v):
    return v.dtype.kind == "f"


def _numeric(v):
    return v.dtype.kind in "fi"


def _both(pred):
    return lambda a, b: pred(a) and pred(b)


def _bcast(a, b):
    try:
        np.broadcast_shapes(a.shape, b.shape)
        return True
    except ValueError:
        return False


def _broadcast_like_pytensor(pairs):
    """Whether element-wise inputs broadcast under PyTensor's rule, not NumPy's.

    A length-1 axis stretches only where the type says so (static shape 1,
    or an axis added on the left for a lower ndim): runtime broadcasting
    of an axis the type leaves unknown is an error, as in PyTensor.
    """
    ndim = max(value.ndim for _, value in pairs)
    for d in range(ndim):
        lengths = set()
        for var, value in pairs:
            k = d - (ndim - value.ndim)
            if k < 0:
                continue
            n = value.shape[k]
            if not (n == 1 and var.type.shape[k] == 1):
                lengths.add(n)
        if len(lengths) > 1:
            return False
    return True


def _square(v):
    return v.ndim == 2 and v.shape[0] == v.shape[1] > 0 and _is_float(v) and np.isfinite(v).all()


def _conditioned(x):
    return lt.tanh(x) + 4 * lt.eye(x.shape[0], dtype=x.dtype)


def _conditioned_np(v):
    return np.tanh(v) + 4 * np.eye(v.shape[0], dtype=v.dtype)


UNARY = [
    ("neg", lt.neg, np.negative, _numeric),
    ("abs", lt.abs, np.abs, _numeric),
    ("exp", lt.exp, np.exp, _is_float),
    ("log", lt.log, np.log, _is_float),
    ("sqrt", lt.sqrt, np.sqrt, _is_float),
    ("tanh", lt.tanh, np.tanh, _is_float),
    ("sigmoid", lt.sigmoid, lambda v: 1 / (1 + np.exp(-v)), _is_float),
    ("sum", lambda x: lt.sum(x), lambda v: np.sum(v), lambda v: True),
    ("sum0", lambda x: lt.sum(x, axis=0), lambda v: np.sum(v, axis=0), lambda v: v.ndim >= 1),
    ("max0", lambda x: lt.max(x, axis=0), lambda v: np.max(v, axis=0),
     lambda v: v.ndim >= 1 and v.shape[0] > 0 and v.dtype.kind != "b"),
    ("mean", lambda x: lt.mean(x), lambda v: np.mean(v), lambda v: v.size > 0 and _numeric(v)),
    ("transpose", lambda x: x.T, lambda v: v.T, lambda v: True),
    ("flatten", lambda x: x.flatten(), lambda v: v.reshape(-1), lambda v: True),
    ("tail", lambda x: x[1:], lambda v: v[1:], lambda v: v.ndim >= 1),
    ("reverse", lambda x: x[::-1], lambda v: v[::-1], lambda v: v.ndim >= 1),
    ("first", lambda x: x[0], lambda v: v[0], lambda v: v.ndim >= 1 and v.shape[0] > 0),
    ("take00", lambda x: x[[0, 0]], lambda v: v[[0, 0]], lambda v: v.ndim >= 1 and v.shape[0] > 0),
    # special functions (lucent.tensor.math / special)
    ("erf", lt.erf, special.erf, _numeric),
    ("gammaln", lt.gammaln, special.gammaln, _numeric),
    ("digamma", lt.digamma, special.digamma, _is_float),
    ("log1p", lt.log1p, np.log1p, _numeric),
    ("expm1", lt.expm1, np.expm1, _numeric),
    ("softplus", lt.softplus, lambda v: np.logaddexp(0, v), _is_float),
    # extra_ops
    ("cumsum", lambda x: lt.cumsum(x), lambda v: np.cumsum(v), _numeric),
    ("cumsum0", lambda x: lt.cumsum(x, axis=0), lambda v: np.cumsum(v, axis=0),
     lambda v: v.ndim >= 1 and _numeric(v)),
    ("cumprod0", lambda x: lt.cumprod(x, axis=0), lambda v: np.cumprod(v, axis=0),
     lambda v: v.ndim >= 1 and _numeric(v)),
    ("diff", lambda x: lt.diff(x), lambda v: np.diff(v), lambda v: v.ndim >= 1 and _numeric(v)),
    ("diff0", lambda x: lt.diff(x, n=2, axis=0), lambda v: np.diff(v, n=2, axis=0),
     lambda v: v.ndim >= 1 and _numeric(v)),
    ("sort", lambda x: lt.sort(x), lambda v: np.sort(v), lambda v: v.ndim >= 1 and _numeric(v)),
    # ties (small ints, repeated values) need a stable order to have one right answer
    ("argsort", lambda x: lt.argsort(x, kind="stable"), lambda v: np.argsort(v, kind="stable"),
     lambda v: v.ndim >= 1 and _numeric(v) and not np.isnan(v).any()),
    # linalg on a well-conditioned matrix built from the value: tanh(v) + 4 I is
    # strictly diagonally dominant for the fuzzer's sizes (at most 3 x 3)
    ("det", lambda x: det(_conditioned(x)), lambda v: np.linalg.det(_conditioned_np(v)), _square),
    ("inv", lambda x: inv(_conditioned(x)), lambda v: np.linalg.inv(_conditioned_np(v)), _square),
]

BINARY = [
    ("add", lt.add, np.add, lambda a, b: _bcast(a, b)),
    ("sub", lt.sub, np.subtract, lambda a, b: _bcast(a, b) and _numeric(a) and _numeric(b)),
    ("mul", lt.mul, np.multiply, lambda a, b: _bcast(a, b)),
    ("true_div", lt.true_div, np.true_divide,
     lambda a, b: _bcast(a, b) and _is_float(a) and _is_float(b)),
    ("maximum", lt.maximum, np.maximum, lambda a, b: _bcast(a, b) and _numeric(a) and _numeric(b)),
    ("lt", lt.lt, np.less, lambda a, b: _bcast(a, b) and _numeric(a) and _numeric(b)),
    ("switch", lambda a, b: lt.switch(lt.gt(a, b), a, b),
     lambda a, b: np.where(a > b, a, b), lambda a, b: _bcast(a, b) and _numeric(a) and _numeric(b)),
    ("dot", lt.dot, np.dot,
     lambda a, b: _is_float(a) and _is_float(b) and a.ndim in (1, 2) and b.ndim in (1, 2)
     and a.shape[-1] == b.shape[0]),
    ("concatenate", lambda a, b: lt.concatenate([a, b], axis=0),
     lambda a, b: np.concatenate([a, b], axis=0),
     lambda a, b: a.ndim >= 1 and a.ndim == b.ndim and a.shape[1:] == b.shape[1:]
     and a.dtype == b.dtype),
    ("solve", lambda a, b: solve(_conditioned(a), b),
     lambda a, b: np.linalg.solve(_conditioned_np(a), b),
     lambda a, b: _square(a) and b.ndim in (1, 2) and b.shape[:1] == a.shape[:1] and _is_float(b)
     and np.isfinite(b).all()),
]


@st.composite
def programs(draw):
    """``(inputs, values, outputs, expected)`` of a random program (see module docstring)."""
    n_inputs = draw(st.integers(1, 3))
    drawn = [draw(input_values(i)) for i in range(n_inputs)]
    pool = [(var, value) for var, value in drawn]
    outputs, expected, names = [], [], []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            name, sym, ref, ok = draw(st.sampled_from(UNARY))
            args = [draw(st.sampled_from(pool))]
        else:
            name, sym, ref, ok = draw(st.sampled_from(BINARY))
            args = [draw(st.sampled_from(pool)), draw(st.sampled_from(pool))]
        values = [a[1] for a in args]
        if not ok(*values):
            continue
        if name not in ("dot", "concatenate", "solve") and not _broadcast_like_pytensor(args):
            continue
        try:
            out = sym(*[a[0] for a in args])
        except (TypeError, ValueError, NotImplementedError):
            continue  # lucent refuses these types at graph-building time, as PyTensor does
        with np.errstate(all="ignore"):
            want = np.asarray(ref(*values)).astype(out.type.dtype)
        pool.append((out, want))
        outputs.append(out)
        expected.append(want)
        names.append(name)
    if not outputs:
        var, value = pool[0]
        outputs, expected, names = [var * 1], [np.asarray(value * 1)], ["identity"]
    return [v for v, _ in drawn], [v for _, v in drawn], outputs, expected, names


def _check(inputs, values, outputs, expected, names):
    before = [np.array(v, copy=True) for v in values]
    for mode in ("FAST_COMPILE", "FAST_RUN", DebugMode(on_error="report", stability_patience=1)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = lucent.function(inputs, outputs, mode=mode, on_unused_input="ignore")
            got = f(*values)
        for name, g, want in zip(names, got, expected):
            g = np.asarray(g)
            assert g.shape == want.shape, (str(mode), name, g.shape, want.shape)
            if want.dtype.kind == "f":
                rtol = 1e-3 if want.dtype == np.float32 else 1e-7
                np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol, equal_nan=True,
                                           err_msg=f"{mode} {name}")
            else:
                np.testing.assert_array_equal(g, want, err_msg=f"{mode} {name}")
        if isinstance(mode, DebugMode):
            assert f.debug_report.ok, str(f.debug_report)
        for v, b in zip(values, before):  # the caller's arrays are left as they were
            np.testing.assert_array_equal(v, b)


_COMMON = dict(
    deadline=None, derandomize=True, database=None,
    suppress_health_check=list(HealthCheck), print_blob=True,
)


@settings(max_examples=8, **_COMMON)
@given(programs())
def test_random_programs_agree_with_numpy(program):
    _check(*program)


@pytest.mark.slow
@settings(max_examples=150, **_COMMON)
@given(programs())
def test_random_programs_agree_with_numpy_long(program):
    _check(*program)


def test_runtime_broadcast_of_an_unknown_length_is_refused_on_every_path():
    """Found by the fuzzer: NumPy stretches a length-1 axis the type leaves unknown;
    PyTensor (and lucent) refuse it on every path instead of computing something."""
    a = lt.dvector("a")
    m = lt.dmatrix("m")
    out = m + a[None, :]  # a's length is unknown: only the new axis 0 may broadcast
    for mode in ("FAST_COMPILE", "FAST_RUN", DebugMode(stability_patience=1)):
        f = lucent.function([a, m], out, mode=mode)
        with pytest.raises(ValueError):
            f(np.zeros(1), np.zeros((2, 0)))
