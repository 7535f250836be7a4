"""Seldom-taken loops emitted once per module: the strided copy and the product accumulation."""

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from lucent.link.numba.dispatch.cold_paths import blend_into, copy_row_into  # noqa: E402
from lucent.link.numba.dispatch.memory import c_order_copy  # noqa: E402


@numba.njit
def _blend(target, z, out, alpha, beta):
    blend_into(target, z, out, alpha, beta)


def _expected(z, out, alpha, beta):
    with np.errstate(invalid="ignore", over="ignore"):
        if beta == 0:
            return alpha * out.astype(np.result_type(z, out, alpha, beta))
        return beta * z + alpha * out


def _strided(values):
    big = np.zeros(tuple(2 * n for n in values.shape), values.dtype)
    view = big[tuple(slice(None, None, 2) for _ in values.shape)]
    view[...] = values
    return view


def _reversed(values):
    flip = tuple(slice(None, None, -1) for _ in values.shape)
    return values[flip].copy()[flip]


#: new arrays holding the given values, C, Fortran, strided and with negative steps
_LAYOUTS = [np.array, lambda v: np.array(v, order="F"), _strided, _reversed]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("alpha, beta", [(2.0, 0.0), (-0.5, 1.0), (1.5, 0.25), (0.0, 3.0)])
@pytest.mark.parametrize("shape", [(3, 4), (5,), (0, 3), (1, 1)])
def test_blend_into_every_layout(dtype, alpha, beta, shape):
    rng = np.random.default_rng(1)
    z0 = rng.standard_normal(shape).astype(dtype)
    out0 = rng.standard_normal(shape).astype(dtype)
    a, b = np.dtype(dtype).type(alpha), np.dtype(dtype).type(beta)
    want = _expected(z0, out0, a, b).astype(dtype)
    for make_z in _LAYOUTS:
        for make_out in _LAYOUTS:
            for into_z in (True, False):
                z, out = make_z(z0), make_out(out0)
                target = z if into_z else out
                _blend(target, z, out, a, b)
                np.testing.assert_allclose(target, want, rtol=1e-6 if dtype == "float32" else 1e-15)
                np.testing.assert_array_equal(out if into_z else z, out0 if into_z else z0)


def test_beta_zero_does_not_read_the_accumulator():
    z = np.full((2, 3), np.nan)
    out = np.arange(6.0).reshape(2, 3)
    _blend(z, z, out, 2.0, 0.0)
    np.testing.assert_array_equal(z, 2.0 * np.arange(6.0).reshape(2, 3))
    # a NaN beta is not zero: NaN spreads as in perform
    z = np.ones((2, 3))
    _blend(z, z, out, 1.0, np.nan)
    assert np.isnan(z).all()


def test_mixed_precision_computes_in_the_wider_type():
    z = np.array([1.0, 2.0], np.float32)
    out = np.array([1e-9, 3.0], np.float32)
    alpha, beta = 1.0, 1.0  # float64 scalars
    _blend(z, z, out, alpha, beta)
    np.testing.assert_array_equal(z, (np.float64([1.0, 2.0]) + np.float64(np.float32([1e-9, 3.0]))).astype(np.float32))


def test_what_it_does_not_accept_is_a_typing_error():
    with pytest.raises(numba.core.errors.TypingError):
        _blend(np.ones(3, np.int64), np.ones(3, np.int64), np.ones(3, np.int64), 1.0, 1.0)
    with pytest.raises(numba.core.errors.TypingError):
        _blend(np.ones(3), np.ones((3, 1)), np.ones(3), 1.0, 1.0)


def test_each_loop_is_one_small_function_however_many_call_sites():
    @numba.njit
    def two_copies_two_blends(a, b, z):
        x = c_order_copy(a)
        y = c_order_copy(b)
        blend_into(z, z, x, 1.0, 2.0)
        blend_into(z, z, y, 1.0, 2.0)
        return z

    a, b = np.arange(12.0).reshape(3, 4)[:, ::2], np.arange(6.0).reshape(3, 2)
    z = np.ones((3, 2))
    got = two_copies_two_blends(a, b, z.copy())
    np.testing.assert_array_equal(got, 2.0 * (2.0 * z + a) + b)
    (signature,) = two_copies_two_blends.signatures
    llvm = two_copies_two_blends.inspect_llvm(signature)
    for prefix in ("lucent.cold.copy_c.float64.2", "lucent.cold.blend.float64.float64.float64.float64.2"):
        definitions = [
            line for line in llvm.splitlines()
            if line.startswith("define") and (f"@{prefix}(" in line or f'@"{prefix}"(' in line)
        ]
        assert len(definitions) == 1, (prefix, definitions)
        assert "minsize" in llvm


@pytest.mark.parametrize("step", [1, 2, -1])
def test_a_copy_of_an_array_typed_a_is_right_whether_its_memory_is_in_c_order_or_not(step):
    """Typed ``A``, an array in C order at run time is copied in one block, any other through the loop."""

    @numba.njit
    def copy_columns(x, s):
        view = x[:, ::s]  # typed A whatever s is
        return c_order_copy(view)

    for x in (np.arange(12.0).reshape(3, 4), np.arange(12, dtype=np.int16).reshape(3, 4), np.zeros((0, 4)),
              np.arange(4.0).reshape(1, 4), np.array([[True, False, True]])):
        got = copy_columns(x, step)
        want = x[:, ::step]
        np.testing.assert_array_equal(got, want)
        assert got.flags.c_contiguous and got.dtype == x.dtype
        assert not np.shares_memory(got, x)


@numba.njit
def _copy_rows(dest, source):
    rows = []
    for t in range(source.shape[0]):
        copy_row_into(dest, source, t)
        rows.append(dest.copy())
    return rows


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
@pytest.mark.parametrize("layout", range(len(_LAYOUTS)))
@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (4, 0), (1, 1)])
def test_copy_row_into_copies_each_row_of_any_layout(dtype, layout, shape):
    """A loop's non-contiguous sequence row goes into its C scratch row, NaN and all."""
    rng = np.random.default_rng(3)
    values = (rng.standard_normal(shape) * 5).astype(dtype)
    if dtype.startswith("float") and values.size:
        values.flat[0] = np.nan
    source = _LAYOUTS[layout](values)
    dest = np.empty(shape[1:], dtype)
    for t, row in enumerate(_copy_rows(dest, source)):
        np.testing.assert_array_equal(row, values[t])
    transposed = np.ascontiguousarray(values.reshape(shape[0], -1).T).T  # rows of step `shape[0]` items
    dest2 = np.empty(transposed.shape[1:], dtype)
    for t, row in enumerate(_copy_rows(dest2, transposed)):
        np.testing.assert_array_equal(row, transposed[t])


def test_copy_row_into_refuses_a_destination_of_the_wrong_rank_or_layout():
    with pytest.raises(numba.core.errors.TypingError):
        _copy_rows(np.empty((2, 2)), np.zeros((3, 4)))
    with pytest.raises(numba.core.errors.TypingError):
        _copy_rows(np.empty(4).astype("float32"), np.zeros((3, 4)))
