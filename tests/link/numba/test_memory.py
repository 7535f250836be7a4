"""Tests of lucent/link/numba/dispatch/memory.py: large kernel outputs on huge pages."""

import os

import numpy as np
import pytest

pytest.importorskip("numba")

from numba import njit  # noqa: E402

from lucent.link.numba.dispatch.memory import HUGE_PAGE_THRESHOLD, empty_output  # noqa: E402


@njit
def _filled(shape, value):
    out = empty_output(shape, np.float32)
    out[...] = value
    return out


@pytest.mark.parametrize("shape", [3, (0,), (2, 3), (HUGE_PAGE_THRESHOLD // 4 + 3,)])
def test_empty_output_is_a_writable_array_of_the_shape_and_dtype(shape):
    out = _filled(shape, 1.5)
    assert out.dtype == np.float32 and out.shape == ((shape,) if isinstance(shape, int) else shape)
    assert out.flags.c_contiguous and out.flags.writeable
    assert np.all(out == 1.5)


@pytest.mark.skipif(
    not os.path.isdir("/sys/kernel/mm/transparent_hugepage"),
    reason="needs Linux with transparent huge pages",
)
def test_large_outputs_are_advised_to_use_huge_pages():
    """The advice shows in /proc/self/smaps as the 'hg' flag of the array's mapping."""
    import re

    n = 8 * HUGE_PAGE_THRESHOLD // 8  # 32 MiB of float64: its own mmap'd region
    out = njit(lambda n: empty_output(n, np.float64))(n)
    address = out.ctypes.data + 4096  # past the first, partial page (not advised)
    with open("/proc/self/smaps") as f:
        smaps = f.read()
    for block in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", smaps):
        start, end = (int(v, 16) for v in block.split(" ", 1)[0].split("-"))
        if start <= address < end:
            flags = re.search(r"VmFlags:(.*)", block)
            assert flags is not None and " hg" in flags.group(1), flags
            return
    pytest.fail("the array's mapping was not found in /proc/self/smaps")


def _glibc():
    import ctypes

    try:
        ctypes.CDLL(None).gnu_get_libc_version
    except (OSError, AttributeError):
        return False
    return True


@pytest.mark.skipif(not _glibc(), reason="tunes glibc's malloc only")
def test_freed_intermediates_are_reused_without_page_faults():
    """A call allocating and freeing megabytes of intermediates faults them in once, not every call."""
    import resource

    from lucent.link.numba.dispatch.memory import keep_freed_heap

    assert keep_freed_heap()  # what importing the module did

    @njit
    def step(n):
        total = 0.0
        for k in range(8):  # 8 MiB of 1 MiB blocks, freed as the next one is made
            block = empty_output((n,), np.float64)
            block[:] = k
            total += block[-1]
        return total

    n = (1 << 20) // 8
    step(n)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        step(n)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 256  # vs 2,000 a call


def test_a_tuned_malloc_is_left_alone(monkeypatch):
    from lucent.link.numba.dispatch.memory import keep_freed_heap

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")
    assert keep_freed_heap() is False
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_")
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=131072")
    assert keep_freed_heap() is False


@pytest.mark.parametrize(
    "shape, value, dtype",
    [((2, 3), 1.5, np.float32), ((), 7, np.int64), ((4,), True, np.bool_), ((0, 2), 0.0, np.float64),
     ((3,), complex(-np.inf, -np.inf), np.complex128), (5, -2, np.int8)],
)
def test_full_output_is_np_full(shape, value, dtype):
    from lucent.link.numba.dispatch.memory import full_output

    got = njit(lambda: full_output(shape, value, dtype))()
    want = np.full(shape, value, dtype)
    assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)


def test_empty_output_refuses_a_negative_length():
    with pytest.raises(ValueError, match="negative dimensions"):
        njit(lambda n: empty_output((n, 2), np.float64))(-1)



def _copy_cases():
    base = np.arange(60.0).reshape(3, 4, 5)
    unaligned = np.frombuffer(np.zeros(8 * 6 + 1, np.uint8).tobytes()[1:], dtype=np.float64).reshape(2, 3)
    return {
        "strided": base[:, ::2, 1:],
        "fortran": np.asfortranarray(base),
        "reversed": base[::-1, :, ::-1],
        "transposed": base.T,
        "0-d": np.array(2.5),
        "empty": base[:, :0],
        "int": np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::3],
        "complex": (np.arange(6) + 1j).reshape(2, 3).T,
        "bool": (np.arange(6) % 2 == 0).reshape(3, 2)[::2],
        "nan": np.array([[np.nan, 1.0], [np.inf, -0.0]])[:, ::-1],
        "unaligned": unaligned,
        "read-only": np.broadcast_to(np.arange(3.0), (2, 3)),
    }


@pytest.mark.parametrize("name", list(_copy_cases()))
def test_c_order_copy_is_a_new_c_array_with_the_values(name):
    from lucent.link.numba.dispatch.memory import c_order_copy

    @njit
    def copy(x):
        return c_order_copy(x)

    x = _copy_cases()[name]
    out = copy(x)
    assert out.flags.c_contiguous and out.flags.writeable and out.dtype == x.dtype and out.shape == x.shape
    assert x.size == 0 or not np.shares_memory(out, x)
    np.testing.assert_array_equal(out, x)
