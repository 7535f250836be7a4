"""lucent's translation of straight-line Python functions to LLVM IR (``dispatch/straight_line.py``).

The translated code must compute exactly what Numba's own compilation of
the same source computes: every test compares the two bit for bit, with
the kernels' fast-math option (``contract``) on both sides.
"""

import math

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from lucent.link.numba.dispatch import vecmath  # noqa: E402
from lucent.link.numba.dispatch.straight_line import NotStraightLine, straight_line  # noqa: E402
from tests.helpers import numba_compiles  # noqa: E402

RNG = np.random.default_rng(7)
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, 1.0, -1.0, 0.5, 709.79,
                    -745.2, 1e300, -1e300, 20.0, -20.0, 1e-8, 3.0, 1e5, -1e5])
INPUTS = np.concatenate([RNG.uniform(-800, 800, 20000), RNG.uniform(-3, 3, 20000),
                         np.exp(RNG.uniform(-745, 709, 20000)), SPECIAL])

OPTIONS = {"error_model": "numpy", "fastmath": {"contract"}}


def _loop(fn, nargs):
    if nargs == 1:
        @numba.njit(**OPTIONS)
        def run(x, y, out):
            for i in range(x.size):
                out[i] = fn(x[i])
    else:
        @numba.njit(**OPTIONS)
        def run(x, y, out):
            for i in range(x.size):
                out[i] = fn(x[i], y[i])
    return run


def _bits_equal(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return bool(np.all((a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))))


def _arguments(fn):
    """Inputs for each parameter of ``fn``: floats over wide ranges, ints in the helpers' ranges."""
    floats = INPUTS
    if fn.__name__ in ("vsin", "vcos", "_sincos"):
        floats = floats[np.abs(floats) < vecmath.SINCOS_LIMIT]
    n = floats.size
    args = []
    for kind in fn.param_kinds:
        if kind == "float":
            args.append(floats)
        elif fn.__name__ == "_sincos":
            args.append(RNG.integers(0, 4, n))
        else:
            args.append(RNG.integers(-(2**50), 2**50, n))
    return args


STRAIGHT = [
    name for name in dir(vecmath)
    if hasattr(getattr(vecmath, name), "__lucent_straight_line__")
]


def test_the_math_functions_are_translated():
    assert {"vexp", "vexpm1", "vtanh", "vlog", "vlog1p", "vsin", "vcos", "vsigmoid", "vsoftplus"} <= set(STRAIGHT)


@pytest.mark.parametrize("name", STRAIGHT)
def test_each_vecmath_function_computes_what_numba_computes_from_its_source(name):
    """The function's own statements, translated, give the bits Numba's lowering of them gives."""
    translated = getattr(vecmath, name)
    fn = translated.__lucent_straight_line__
    args = _arguments(fn)
    x, y = args[0], (args[1] if len(args) > 1 else args[0])
    ours, theirs = np.empty(x.size), np.empty(x.size)
    _loop(translated, len(args))(x, y, ours)
    _loop(numba.njit(**OPTIONS)(fn.py_func), len(args))(x, y, theirs)
    assert _bits_equal(ours, theirs)


# Every construct of the subset, in one place.
SCALE = 3.5
MASK = 0x7FF


@straight_line
def _constructs(x: float, k: int) -> float:
    """Uses every construct the translator handles."""
    n = (k << 3) >> 1
    m = (n & MASK) | 5
    m = m ^ 3
    m = -m if m > 100 else m
    b = (x > 0.0) | (x != x)
    c = not (x <= 1.0) and k >= 2 or x == -0.5
    d = abs(x) * SCALE - abs(m)
    e = d / 7.0 + m
    f = -e if b else e
    g = vecmath.bits_f64(vecmath.f64_bits(f) & 0x7FFFFFFFFFFFFFFF) if c else f
    return (g + 1) * 2.0 - x if k < 3 else g + vecmath.vexp(x * 0.001) + True


def test_every_construct_matches_numba():
    fn = _constructs.__lucent_straight_line__
    reference = numba.njit(**OPTIONS)(fn.py_func)

    @numba.njit(**OPTIONS)
    def ours(x, ks, out):
        for i in range(x.size):
            out[i] = _constructs(x[i], ks[i])

    @numba.njit(**OPTIONS)
    def theirs(x, ks, out):
        for i in range(x.size):
            out[i] = reference(x[i], ks[i])

    x = np.concatenate([INPUTS[:2000], SPECIAL, [-0.5, 1.0, 2.0]])
    ks = RNG.integers(-300, 300, x.size)
    a, b = np.empty_like(x), np.empty_like(x)
    ours(x, ks, a)
    theirs(x, ks, b)
    assert _bits_equal(a, b)


def test_arguments_of_other_numeric_types_are_converted():
    @numba.njit
    def call(i, f):
        return vecmath.vexp(i), vecmath.vexp(f)

    a, b = call(2, np.float32(0.5))
    assert a == math.exp(2) or abs(a - math.exp(2)) <= 4 * np.spacing(math.exp(2))
    assert abs(b - math.exp(0.5)) <= 4 * np.spacing(math.exp(0.5))


def test_a_kernel_calling_them_compiles_no_numba_function_for_them():
    """The point of the translation: no Numba compile per math function (each was 60-180 ms cold)."""

    def body(x, out):
        for i in range(x.size):
            out[i] = vecmath.vtanh(x[i]) + vecmath.vlog1p(x[i] * x[i]) + vecmath.vsoftplus(x[i])

    kernel = numba.njit(body)
    x = np.linspace(-2, 2, 33)
    out = np.empty_like(x)
    with numba_compiles() as compiled:
        kernel(x, out)
    assert compiled == ["body"]
    np.testing.assert_allclose(out, np.tanh(x) + np.log1p(x * x) + np.logaddexp(0, x), rtol=1e-14)


@pytest.mark.parametrize(
    "source, message",
    [
        ("def f(x: float) -> float:\n    for i in range(3):\n        x = x + 1.0\n    return x\n", "For"),
        ("def f(x: float) -> float:\n    if x > 0.0:\n        x = 1.0\n    return x\n", "If"),
        ("def f(x: float) -> float:\n    return math.sqrt(x)\n", "calling math.sqrt"),
        ("def f(x: float) -> float:\n    return x % 2.0\n", "Mod"),
        ("def f(x: float) -> float:\n    y = 1.0\n", "does not end with return"),
        ("def f(x: float) -> float:\n    return 1 < x < 2\n", "chained comparison"),
        ("def f(x: float) -> float:\n    return undefined_name\n", "unknown name undefined_name"),
    ],
)
def test_constructs_outside_the_subset_are_named_when_first_used(source, message):
    import linecache

    filename = f"<straight-line test {abs(hash(source))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"math": math, "__name__": "straight_line_test"}
    exec(compile(source, filename, "exec"), namespace)
    translated = straight_line(namespace["f"])  # annotations are all it reads at first
    with pytest.raises(NotStraightLine, match=message):
        translated.__lucent_straight_line__.node


def test_a_missing_annotation_is_refused_at_once():
    def f(x) -> float:
        return x

    with pytest.raises(NotStraightLine, match="x needs an annotation float, int or bool"):
        straight_line(f)
