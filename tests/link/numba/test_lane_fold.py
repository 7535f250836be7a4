"""fold_lanes: a row folded with four interleaved accumulators, emitted as IR, against a Python fold."""

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from lucent.link.numba.dispatch.lane_fold import KINDS, fold_lanes, supported  # noqa: E402


def _identity(kind, acc):
    acc = np.dtype(acc)
    if kind in ("add", "or", "xor"):
        return acc.type(0)
    if kind in ("mul", "and"):
        return acc.type(1)
    if acc.kind == "b":
        return np.bool_(kind == "min")
    if acc.kind == "f":
        return acc.type(-np.inf if kind == "max" else np.inf)
    info = np.iinfo(acc)
    return acc.type(info.min if kind == "max" else info.max)


def _combine(kind, a, b, acc):
    acc = np.dtype(acc)
    if acc.kind == "b":
        if kind in ("add", "or", "max"):
            return np.bool_(a or b)
        if kind in ("mul", "and", "min"):
            return np.bool_(a and b)
        return np.bool_(a != b)
    if kind in ("max", "min"):
        if acc.kind == "f":
            keep = (a >= b if kind == "max" else a <= b) or a != a
        else:
            keep = a >= b if kind == "max" else a <= b
        return a if keep else b
    with np.errstate(over="ignore"):
        if kind == "add":
            return acc.type(a + b)
        if kind == "mul":
            return acc.type(a * b)
        return acc.type({"and": a & b, "or": a | b, "xor": a ^ b}[kind])


def _reference(row, start, stop, kind, acc):
    """The documented order: lane q takes start+q, start+q+4, ...; the rest goes to lane 0."""
    cast = np.dtype(acc).type
    lanes = [_identity(kind, acc)] * 4
    stop = max(stop, start)
    whole = start + (stop - start) // 4 * 4
    for i in range(start, whole, 4):
        for q in range(4):
            lanes[q] = _combine(kind, lanes[q], cast(row[i + q]), acc)
    for i in range(whole, stop):
        lanes[0] = _combine(kind, lanes[0], cast(row[i]), acc)
    return _combine(kind, _combine(kind, lanes[0], lanes[1], acc), _combine(kind, lanes[2], lanes[3], acc), acc)


_compiled = {}


def _fold(row, start, stop, kind, acc):
    key = (kind, acc)
    if key not in _compiled:
        source = f"def f(r, a, b):\n    return fold_lanes(r, a, b, {kind!r}, {acc!r})\n"
        namespace = {"fold_lanes": fold_lanes}
        exec(source, namespace)
        _compiled[key] = numba.njit(namespace["f"])
    return _compiled[key](row, start, stop)


def _same(got, want):
    if isinstance(want, (float, np.floating)) and np.isnan(want):
        return np.isnan(got)
    return got == want and type(got)(want) == got


_ROW = np.array([3.5, -1.25, 7.0, 0.1, 2.0, -8.0, 5.5, 0.3, 1e-3, 9.0, -2.5], dtype=np.float64)


@pytest.mark.parametrize("kind", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("acc", ["float64", "float32"])
def test_float_rows_of_every_length_match_the_documented_order_exactly(kind, acc):
    row = _ROW.astype(acc)
    for stop in range(len(row) + 1):
        got = _fold(row, 0, stop, kind, acc)
        want = _reference(row, 0, stop, kind, acc)
        assert _same(got, want), (stop, got, want)


@pytest.mark.parametrize("kind", ["add", "max", "min"])
def test_strided_reversed_and_offset_rows(kind):
    base = np.arange(40.0) * 0.37 - 3.0
    for row in (base[::3], base[::-1], base[5:30:2], np.asfortranarray(base.reshape(8, 5))[:, 2]):
        for start, stop in ((0, len(row)), (1, len(row) - 1), (2, 3), (3, 3), (4, 1)):
            got = _fold(row, start, stop, kind, "float64")
            assert got == _reference(row, start, stop, kind, "float64")


def test_an_empty_range_gives_the_identity():
    empty = np.zeros(0)
    assert _fold(empty, 0, 0, "add", "float64") == 0.0
    assert _fold(empty, 0, 0, "mul", "float64") == 1.0
    assert _fold(empty, 0, 0, "max", "float64") == -np.inf
    assert _fold(empty, 0, 0, "min", "float64") == np.inf
    assert _fold(np.zeros(0, np.int16), 0, 0, "max", "int16") == np.iinfo(np.int16).min
    assert _fold(np.zeros(0, np.uint8), 0, 0, "min", "uint8") == 255


def test_nan_wins_a_maximum_and_a_minimum_wherever_it_is():
    for at in range(9):
        row = np.arange(9.0)
        row[at] = np.nan
        assert np.isnan(_fold(row, 0, 9, "max", "float64"))
        assert np.isnan(_fold(row, 0, 9, "min", "float64"))
        assert np.isnan(_fold(row, 0, 9, "add", "float64"))
    row = np.array([1.0, np.inf, -np.inf, 2.0, 3.0])
    assert _fold(row, 0, 5, "max", "float64") == np.inf
    assert np.isnan(_fold(row, 0, 5, "add", "float64"))  # inf + -inf


@pytest.mark.parametrize("acc", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
@pytest.mark.parametrize("kind", KINDS)
def test_integers_wrap_around_at_the_accumulator_width(acc, kind):
    info = np.iinfo(acc)
    rng = np.random.default_rng(3)
    row = rng.integers(info.min, info.max, size=23, dtype=acc, endpoint=True)
    for start, stop in ((0, 23), (2, 19), (5, 6)):
        got = _fold(row, start, stop, kind, acc)
        want = _reference(row, start, stop, kind, acc)
        assert got == want and np.dtype(acc).type(got) == want, (got, want)


def test_unsigned_extremes_compare_unsigned():
    row = np.array([1, 2**63 + 5, 3, 0], dtype=np.uint64)
    assert _fold(row, 0, 4, "max", "uint64") == 2**63 + 5
    assert _fold(row, 0, 4, "min", "uint64") == 0


@pytest.mark.parametrize("kind", KINDS)
def test_booleans(kind):
    for bits in ([False] * 6, [True] * 6, [False, True, False, False, True, False, True]):
        row = np.array(bits)
        assert _fold(row, 0, len(row), kind, "bool") == _reference(row, 0, len(row), kind, "bool")


def test_elements_are_cast_to_the_accumulator():
    small = np.array([0.1, 0.2, 0.3, 0.4, 0.5], dtype=np.float32)
    assert _fold(small, 0, 5, "add", "float64") == _reference(small, 0, 5, "add", "float64")
    assert _fold(np.array([True, True, False, True]), 0, 4, "add", "int64") == 3
    assert _fold(np.array([200, 100], dtype=np.uint8), 0, 2, "add", "int64") == 300
    assert _fold(np.array([3, -7, 2], dtype=np.int32), 0, 3, "max", "float64") == 3.0


def test_what_it_does_not_accept_is_a_typing_error():
    assert not supported("complex128")
    with pytest.raises(numba.core.errors.TypingError):
        _fold(np.ones(3, np.complex128), 0, 3, "add", "complex128")
    with pytest.raises(numba.core.errors.TypingError):
        _fold(np.ones((2, 2)), 0, 2, "add", "float64")
    with pytest.raises(numba.core.errors.TypingError):
        _fold(np.ones(3), 0, 3, "sub", "float64")
    with pytest.raises(numba.core.errors.TypingError):
        _fold(np.ones(3), 0, 3, "add", "bool")  # floats are not folded as booleans
