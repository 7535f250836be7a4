"""The Numba loop of ``Scan`` (``lucent/link/numba/dispatch/scan.py``): bodies called, not copied."""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.scan import scan  # noqa: E402


def _sites(dispatcher):
    return getattr(dispatcher, "__lucent_sites__", None) or []


def _ir(dispatcher):
    """The LLVM text of ``dispatcher``'s specialisations (empty when loaded from the disk
    cache, which keeps no text to inspect)."""
    libs = [cres.library for cres in dispatcher.overloads.values()]
    return "".join(lib.get_llvm_str() for lib in libs if not getattr(lib, "_disable_inspection", False))


def test_nested_loops_call_their_bodies_and_kernels_through_slots():
    """Each loop calls its body, and each body its kernels, through a slot: no
    function carries a copy of another's machine code (a nested loop's kernels
    were otherwise emitted once per level of nesting)."""
    x = lt.dvector("x")

    def outer_step(x_t, acc):
        inner = scan(lambda a: a * 0.5 + x_t, outputs_info=[acc], n_steps=3, return_updates=False)
        return inner[-1] + lt.tanh(x_t)

    ys = scan(outer_step, sequences=[x], outputs_info=[lt.constant(0.0, dtype="float64")],
              return_updates=False)
    f = lucent.function([x], ys, mode="FAST_RUN")
    v = np.array([0.3, -1.0, 2.0])
    acc, want = 0.0, []
    for x_t in v:
        a = acc
        for _ in range(3):
            a = a * 0.5 + x_t
        acc = a + np.tanh(x_t)
        want.append(acc)
    np.testing.assert_allclose(f(v), want)
    assert not f.maker.linker.program.fallback_ops

    # walk the slots: graph function -> outer loop -> its body -> inner loop -> its body
    seen, pending, depth = set(), [f.maker.linker.program.fn], 0
    loops = 0
    while pending:
        nxt = []
        for dispatcher in pending:
            ir = _ir(dispatcher)
            for site in _sites(dispatcher):
                for arg_types in site.targets.values():
                    cres = site.kernel.overloads[arg_types]
                    assert cres.fndesc.llvm_func_name not in ir, site.label
                if id(site.kernel) not in seen:
                    seen.add(id(site.kernel))
                    loops += getattr(site.kernel, "__lucent_origin__", ("",))[0] == "scan"
                    nxt.append(site.kernel)
        pending, depth = nxt, depth + 1
    assert loops == 2 and depth >= 5


def _python_finish(buf, total, as_while):
    from lucent.scan.op import _finish_ring

    return _finish_ring(buf.copy(), total, as_while)


@pytest.mark.parametrize("shape", [(5,), (5, 3), (4, 2, 3), (3, 0)])
@pytest.mark.parametrize("total", [2, 5, 7, 10, 13])
@pytest.mark.parametrize("as_while", [False, True])
def test_finish_returns_the_rows_oldest_first_as_perform_does(shape, total, as_while):
    """``_finish`` (the end of every compiled loop) against the Python path's
    ``_finish_ring``: a ring buffer is rotated within itself, a full one is
    returned (or cut, for a while loop), for C-contiguous buffers of any rank."""
    from lucent.link.numba.dispatch.scan import _finish

    buf = np.arange(np.prod(shape), dtype="float64").reshape(shape)
    want = _python_finish(buf, total, as_while)
    got = _finish(buf, total, as_while)
    np.testing.assert_array_equal(got, want)
    if total > shape[0]:
        assert np.shares_memory(got, buf) or buf.size == 0  # rotated in place


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128", "bool"])
def test_finish_rotates_buffers_of_every_dtype(dtype):
    from lucent.link.numba.dispatch.scan import _finish

    buf = (np.arange(12).reshape(4, 3) % 5).astype(dtype)
    np.testing.assert_array_equal(_finish(buf.copy(), 7, False), _python_finish(buf, 7, False))


def test_finish_of_a_strided_buffer_is_a_rotated_copy():
    """A buffer that is not C-contiguous (typed "A") cannot be rotated through a
    flat view: it gives a rotated copy with the same values."""
    from lucent.link.numba.dispatch.scan import _finish

    base = np.arange(30, dtype="float64").reshape(5, 6)
    buf = base[:, ::2]
    want = _python_finish(buf, 8, False)
    got = _finish(buf, 8, False)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(base, np.arange(30, dtype="float64").reshape(5, 6))
    assert got.flags.c_contiguous
