"""Scalar templates and vector math of the Numba kernels, checked against ``perform``.

Each scalar op is tested through an Elemwise kernel, comparing with the
op's own ``perform`` (NumPy): many ops of one dtype are packed into one
multi-output Composite so that a dtype costs one compilation, not one
per op. The vectorisable elementary functions are checked against NumPy
in ulps over wide ranges and on special values.
"""

import math

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify  # noqa: E402
from lucent.link.numba.dispatch import vecmath as vm  # noqa: E402
from lucent.scalar import basic as ps  # noqa: E402
from lucent.scalar.composite import Composite  # noqa: E402
from lucent.tensor.elemwise import Elemwise  # noqa: E402

RNG = np.random.default_rng(42)
SPECIAL = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, 1.0, -1.0, 0.5, -0.5, 709.78,
     709.79, -745.1, -745.2, 1e300, -1e300, 2.2250738585072014e-308, 20.0, -20.0, 1e-8, 3.0]
)


# ---------------------------------------------------------------------------
# vecmath accuracy
# ---------------------------------------------------------------------------
def _looped(fn):
    @numba.njit(error_model="numpy")
    def run(x, out):
        for i in range(x.size):
            out[i] = fn(x[i])

    return run


def _ulps(actual, expected):
    spacing = np.spacing(np.abs(expected))
    spacing = np.where(spacing == 0, 5e-324, spacing)
    same = (actual == expected) | (np.isnan(actual) & np.isnan(expected))
    with np.errstate(invalid="ignore"):
        return np.where(same, 0.0, np.abs(actual - expected) / spacing)


def _ref_sigmoid(x):
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))


VEC_CASES = {
    "vexp": (np.exp, [(-750, 750), (-1, 1), (-1e-9, 1e-9)], 2),
    "vexpm1": (np.expm1, [(-50, 710), (-2, 2), (-1e-6, 1e-6)], 3),
    "vtanh": (np.tanh, [(-25, 25), (-1, 1), (-1e-5, 1e-5)], 4),
    "vlog": (np.log, [("exp", -745, 709), (0.5, 2)], 2),
    "vlog1p": (np.log1p, [("exp", -745, 709), (-1, 1), ("-exp", -745, 0)], 2),
    "vsin": (np.sin, [(-vm.SINCOS_LIMIT, vm.SINCOS_LIMIT), (-10, 10), (-1e-6, 1e-6)], 3),
    "vcos": (np.cos, [(-vm.SINCOS_LIMIT, vm.SINCOS_LIMIT), (-10, 10)], 3),
    "vsigmoid": (_ref_sigmoid, [(-800, 800), (-5, 5)], 3),
    "vsoftplus": (lambda x: np.logaddexp(0, x), [(-800, 800), (-5, 5)], 4),
}


def _sample(spec, n=200_000):
    if spec[0] == "exp":
        return np.exp(RNG.uniform(spec[1], spec[2], n))
    if spec[0] == "-exp":
        return -np.exp(RNG.uniform(spec[1], spec[2], n))
    return RNG.uniform(spec[0], spec[1], n)


@pytest.mark.parametrize("name", sorted(VEC_CASES))
def test_vecmath_accuracy(name):
    """Within a few ulp of NumPy over wide ranges; special values handled exactly."""
    ref, ranges, max_ulp = VEC_CASES[name]
    run = _looped(getattr(vm, name))
    for spec in ranges:
        x = _sample(spec)
        out = np.empty_like(x)
        run(x, out)
        with np.errstate(all="ignore"):
            expected = ref(x)
        assert _ulps(out, expected).max() <= max_ulp, (name, spec)
    x = SPECIAL
    if name in ("vsin", "vcos"):
        x = x[np.abs(x) < vm.SINCOS_LIMIT]
    out = np.empty_like(x)
    run(x, out)
    with np.errstate(all="ignore"):
        expected = ref(x)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    assert _ulps(out, expected).max() <= max_ulp, (name, x[np.argmax(_ulps(out, expected))])


def test_sincos_range_predicate():
    ok = _looped(vm.sincos_ok)
    x = np.array([0.0, 1e5 - 1, 1e5, np.inf, np.nan, -3.0])
    out = np.empty_like(x)
    ok(x, out)
    np.testing.assert_array_equal(out, [1, 1, 0, 0, 0, 1])


def test_float_floor_divide_and_mod_follow_numpy():
    a = np.array([7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 1.0, np.inf, 3.0, np.nan])
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 2.0, np.inf, 1.0])

    @numba.njit(error_model="numpy")
    def both(a, b, q, r):
        for i in range(a.size):
            q[i] = vm.floordiv_f(a[i], b[i])
            r[i] = vm.mod_f(a[i], b[i])

    q, r = np.empty_like(a), np.empty_like(a)
    both(a, b, q, r)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(q, np.floor_divide(a, b))
        np.testing.assert_array_equal(r, np.mod(a, b))
        np.testing.assert_array_equal(np.signbit(r), np.signbit(np.mod(a, b)))


# ---------------------------------------------------------------------------
# Scalar templates, many ops per compiled kernel
# ---------------------------------------------------------------------------
def _values(dtype, n=64):
    if dtype == "bool":
        return RNG.integers(0, 2, n).astype(bool)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        v = RNG.integers(max(info.min, -100), min(info.max, 100), n).astype(dtype)
        v[:4] = np.array([0, 1, info.max, info.min], dtype=dtype)
        return v
    v = (RNG.standard_normal(n) * 3).astype(dtype)
    v[: len(SPECIAL[:12])] = SPECIAL[:12].astype(dtype)
    return v


def _check_many(ops_and_args, in_dtypes, values, rtol):
    """One Composite with an output per op; each compared with its Elemwise.perform."""
    s_in = [ps.get_scalar_type(d)() for d in in_dtypes]
    outs, kept = [], []
    for op, arg_idx in ops_and_args:
        try:
            outs.append(op(*[s_in[i] for i in arg_idx]))
        except TypeError:
            continue  # the op refuses these dtypes (e.g. neg of bool)
        kept.append((op, arg_idx))
    comp = Composite(s_in, outs)
    t_in = [lt.vector(dtype=d) for d in in_dtypes]
    node = Elemwise(comp).make_node(*t_in)
    results = numba_funcify(node.op, node)(*values)
    results = results if isinstance(results, tuple) else (results,)
    for (op, arg_idx), got in zip(kept, results):
        ref_node = Elemwise(op).make_node(*[t_in[i] for i in arg_idx])
        storage = [[None]]
        ref_node.op.perform(ref_node, [values[i] for i in arg_idx], storage)
        expected = storage[0][0]
        assert got.dtype == expected.dtype, (op, got.dtype, expected.dtype)
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=0, equal_nan=True, err_msg=str(op))
        else:
            np.testing.assert_array_equal(got, expected, err_msg=str(op))


UNARY = [ps.neg, ps.sqr, ps.abs_, ps.sign, ps.floor, ps.ceil, ps.round_half_to_even, ps.exp, ps.exp2,
         ps.expm1, ps.log, ps.log2, ps.log10, ps.log1p, ps.sqrt, ps.reciprocal, ps.sin, ps.cos, ps.tan,
         ps.tanh, ps.arctan, ps.sigmoid, ps.softplus, ps.invert, ps.identity]
BINARY = [ps.add, ps.sub, ps.mul, ps.true_div, ps.int_div, ps.mod, ps.maximum, ps.minimum, ps.lt, ps.le,
          ps.gt, ps.ge, ps.eq, ps.neq, ps.and_, ps.or_, ps.xor, ps.second]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "int64", "uint8", "bool"])
def test_unary_templates(dtype):
    x = _values(dtype)
    rtol = 1e-13 if dtype == "float64" else 1e-6
    _check_many([(op, (0,)) for op in UNARY], [dtype], [x], rtol)


@pytest.mark.parametrize(
    "dtypes", [("float64", "float64"), ("float32", "float32"), ("int8", "int8"), ("int64", "int64"),
               ("uint8", "int8"), ("bool", "bool"), ("int32", "float32"), ("uint64", "uint64")]
)
def test_binary_templates(dtypes):
    x, y = _values(dtypes[0]), _values(dtypes[1])
    rtol = 1e-13 if "float32" not in dtypes else 1e-6
    _check_many([(op, (0, 1)) for op in BINARY] + [(ps.add, (0, 1, 0)), (ps.mul, (1, 0, 1))], list(dtypes), [x, y], rtol)


def test_ternary_templates_switch_clip_and_pow():
    x = _values("float64")
    lo, hi = np.full(64, -1.0), np.full(64, 2.0)
    _check_many([(ps.switch, (0, 1, 2)), (ps.clip, (1, 0, 2)), (ps.pow, (0, 2)), (ps.pow, (2, 0))],
                ["float64", "float64", "float64"], [x, lo, hi], 1e-13)
    cond = _values("int8")
    _check_many([(ps.switch, (0, 1, 2))], ["int8", "int64", "int8"], [cond, _values("int64"), cond], 0)


def test_integer_power_wraps_and_refuses_negative_exponents():
    base = np.array([2, 3, -5, 7], dtype="int8")
    exp = np.array([3, 5, 3, 0], dtype="int8")
    _check_many([(ps.pow, (0, 1))], ["int8", "int8"], [base, exp], 0)
    node = Elemwise(ps.pow).make_node(lt.vector(dtype="int64"), lt.vector(dtype="int64"))
    with pytest.raises(ValueError, match="negative integer powers"):
        numba_funcify(node.op, node)(np.array([2]), np.array([-1]))


@pytest.mark.parametrize("src", ["float64", "int16", "uint8", "bool"])
def test_casts(src):
    x = _values(src)
    if src == "float64":
        x = np.where(np.isfinite(x), np.clip(x, -100, 100), 1.0)  # out-of-range float->int is undefined
    targets = ["float64", "float32", "int8", "int64", "uint16", "bool"]
    _check_many([(ps.Cast(ps.get_scalar_type(d)), (0,)) for d in targets if d != src], [src], [x], 0)


def test_scalar_op_kernel_on_numpy_scalars():
    """A graph over ScalarType variables compiles too (0-d values in and out)."""
    a, b = ps.float64(), ps.int8()
    node = ps.add.make_node(a, b)
    k = numba_funcify(node.op, node)
    assert k(np.float64(1.5), np.int8(2)) == 3.5
    comp = Composite([a, b], [ps.exp(a) * b + 1])
    node = comp.make_node(a, b)
    got = numba_funcify(node.op, node)(np.float64(0.5), np.int8(3))
    assert math.isclose(got, np.exp(0.5) * 3 + 1, rel_tol=1e-15)
