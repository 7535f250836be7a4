"""The Numba loop of ``Scan`` (``lucent/link/numba/dispatch/scan.py``): bodies called, not copied."""

import functools

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.scan import scan  # noqa: E402


@pytest.fixture(autouse=True)
def _numba_dispatchers():
    """These tests look into Numba's dispatchers, which a native bundle (``native.py``) stands in for."""
    with lucent.config.change_flags(numba__native_cache=False):
        yield


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


@functools.lru_cache(maxsize=None)
def _compiled_finish():
    """``ring.finish_ring`` (an intrinsic, emitted where a loop ends) in a function Python can call."""
    import numba

    from lucent.link.numba.dispatch.ring import finish_ring

    return numba.njit(lambda buf, total, as_while: finish_ring(buf, total, as_while))


def _finish(buf, total, as_while):
    return _compiled_finish()(buf, total, as_while)


@pytest.mark.parametrize("shape", [(5,), (5, 3), (4, 2, 3), (3, 0)])
@pytest.mark.parametrize("total", [2, 5, 7, 10, 13])
@pytest.mark.parametrize("as_while", [False, True])
def test_finish_returns_the_rows_oldest_first_as_perform_does(shape, total, as_while):
    """``finish_ring`` (the end of every compiled loop) against the Python path's
    ``_finish_ring``: a ring buffer is rotated within itself, a full one is
    returned (or cut, for a while loop), for C-contiguous buffers of any rank."""
    buf = np.arange(np.prod(shape), dtype="float64").reshape(shape)
    want = _python_finish(buf, total, as_while)
    got = _finish(buf, total, as_while)
    np.testing.assert_array_equal(got, want)
    if total > shape[0]:
        assert np.shares_memory(got, buf) or buf.size == 0  # rotated in place


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128", "bool"])
def test_finish_rotates_buffers_of_every_dtype(dtype):
    buf = (np.arange(12).reshape(4, 3) % 5).astype(dtype)
    np.testing.assert_array_equal(_finish(buf.copy(), 7, False), _python_finish(buf, 7, False))


def test_finish_of_a_strided_buffer_is_a_rotated_copy():
    """A buffer that is not C-contiguous (typed "A") cannot be rotated through a
    flat view: it gives a rotated copy with the same values."""
    base = np.arange(30, dtype="float64").reshape(5, 6)
    buf = base[:, ::2]
    want = _python_finish(buf, 8, False)
    got = _finish(buf, 8, False)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(base, np.arange(30, dtype="float64").reshape(5, 6))
    assert got.flags.c_contiguous


# --- what a step is given -------------------------------------------------------
def _recurrence(W, xs, h0):
    hs, h = [], h0
    for x_t in xs:
        h = np.tanh(W @ h + x_t)
        hs.append(h)
    return np.array(hs)


@pytest.mark.parametrize("layout", ["reversed", "strided", "transposed", "c"])
@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_sequences_of_every_layout_reach_the_step_as_their_rows(layout, mode):
    """Rows that are contiguous (also in a reversed sequence) are passed as views typed C;
    the others are copied into a scratch row first: the values are the same."""
    rng = np.random.default_rng(3)
    W = rng.standard_normal((4, 4)) / 2
    base = rng.standard_normal((6, 8))
    xs = {"reversed": base[::-1, :4], "strided": base[:, ::2], "transposed": base[:4, :6].T,
          "c": np.ascontiguousarray(base[:, :4])}[layout]
    Wv, X, h0 = lt.dmatrix("W"), lt.dmatrix("X"), lt.dvector("h0")
    hs = scan(lambda x_t, h, W_: lt.tanh(lt.dot(W_, h) + x_t), sequences=X, outputs_info=h0,
              non_sequences=Wv, return_updates=False)
    f = lucent.function([Wv, X, h0], hs, mode=mode)
    before = xs.copy()
    np.testing.assert_allclose(f(W, xs, np.zeros(4)), _recurrence(W, xs, np.zeros(4)), rtol=1e-12)
    np.testing.assert_array_equal(xs, before)


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE", "DebugMode"])
def test_an_accumulator_carried_untraced_is_updated_in_place_and_its_start_kept(mode):
    """Only the last value of the sum is used, so the loop carries it untraced; the body
    adds to it in place (Ger{destructive}) and the caller's starting value is untouched."""
    from lucent.tensor.blas import Ger

    X, acc0 = lt.dmatrix("X"), lt.dmatrix("acc0")
    sums = scan(lambda x_t, acc: acc + lt.outer(x_t, x_t), sequences=X, outputs_info=acc0,
                return_updates=False)
    f = lucent.function([X, acc0], sums[-1], mode=mode)
    xs = np.arange(12.0).reshape(4, 3) / 7
    start = np.eye(3)
    np.testing.assert_allclose(f(xs, start), np.eye(3) + xs.T @ xs, rtol=1e-12)
    np.testing.assert_array_equal(start, np.eye(3))
    np.testing.assert_allclose(f(xs, start), np.eye(3) + xs.T @ xs, rtol=1e-12)  # again, same start
    if mode == "FAST_RUN":
        loops = [n.op for n in f.maker.fgraph.apply_nodes if type(n.op).__name__ == "Scan"]
        body = [n.op for op in loops for n in op.fgraph.apply_nodes]
        assert any(isinstance(op, Ger) and op.destructive for op in body), body


# --- states computed straight into the loop's buffer -----------------------------
def _inner_kernels(f):
    from lucent.link.numba.dispatch.builders import numba_funcify_inner_graph

    loops = [n.op for n in f.maker.fgraph.apply_nodes if type(n.op).__name__ == "Scan"]
    states = [[k for k in range(op.layout.n_states) if op.fgraph.outputs[k].type.ndim > 0] for op in loops]
    return [numba_funcify_inner_graph(op, destinations=s) for op, s in zip(loops, states)]


@pytest.mark.parametrize("keep", ["all", "last"])
def test_a_step_computes_its_state_into_the_stored_row(keep):
    """tanh(W @ h + x_t): the product is written into the row the loop stores, tanh works
    there in place (a loop whose last state alone is used carries it untraced instead)."""
    rng = np.random.default_rng(5)
    Wv, xs = rng.standard_normal((6, 6)) / 3, rng.standard_normal((9, 6))
    W, X, h0 = lt.dmatrix("W"), lt.dmatrix("X"), lt.dvector("h0")
    hs = scan(lambda x_t, h, W_: lt.tanh(lt.dot(W_, h) + x_t), sequences=X, outputs_info=h0,
              non_sequences=W, return_updates=False)
    out = hs if keep == "all" else hs[-1]
    f = lucent.function([W, X, h0], out, mode="FAST_RUN")
    (kernel,) = _inner_kernels(f)
    assert kernel.__lucent_destinations__ == ([0] if keep == "all" else [])
    want = _recurrence(Wv, xs, np.zeros(6))
    got = f(Wv, xs, np.zeros(6))
    np.testing.assert_allclose(got, want if keep == "all" else want[-1], rtol=1e-12)
    np.testing.assert_allclose(f(Wv, xs, np.zeros(6)), got)  # again: the buffers are per call


@pytest.mark.parametrize("keep", ["all", "last"])
def test_two_taps_with_destinations(keep):
    """A state read at t-2 and t-1: the stored row is used only when it is neither."""
    x0 = lt.dmatrix("x0")
    fib = scan(lambda a, b: lt.tanh(a + b) * 1.5, outputs_info=[{"initial": x0, "taps": [-2, -1]}],
               n_steps=7, return_updates=False)
    out = fib if keep == "all" else fib[-1]
    f = lucent.function([x0], out, mode="FAST_RUN")
    (kernel,) = _inner_kernels(f)
    assert kernel.__lucent_destinations__ == [0]
    if keep == "last":  # the ring keeps the two rows the step reads: it is given a scratch row
        (loop,) = [n for n in f.maker.fgraph.toposort() if type(n.op).__name__ == "Scan"]
        assert loop.inputs[1].type.shape[0] in (None, 2)
    start = np.array([[0.1, -0.2, 0.3], [0.5, 0.4, -0.1]])
    rows = [start[0], start[1]]
    for _ in range(7):
        rows.append(np.tanh(rows[-2] + rows[-1]) * 1.5)
    want = np.array(rows[2:])
    np.testing.assert_allclose(f(start), want if keep == "all" else want[-1], rtol=1e-12)
    np.testing.assert_allclose(lucent.function([x0], out, mode="FAST_COMPILE")(start),
                               want if keep == "all" else want[-1], rtol=1e-12)


def test_a_state_returned_as_it_came_has_no_destination():
    x0 = lt.dvector("x0")
    ys = scan(lambda a: a, outputs_info=[x0], n_steps=3, return_updates=False)
    f = lucent.function([x0], ys, mode="FAST_RUN")
    (kernel,) = _inner_kernels(f)
    assert kernel.__lucent_destinations__ == []
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [[1.0, 2.0]] * 3)


_ONE_PRODUCT_KERNEL = """
import json, sys
import numpy as np
from numba.core import event
import lucent, lucent.tensor as lt
from lucent.scan import scan

compiled = []
class Listener(event.Listener):
    def on_start(self, e):
        pass
    def on_end(self, e):
        compiled.append(e.data["dispatcher"].py_func.__name__)
event.register("numba:compile", Listener())

rng = np.random.default_rng(2)
Wv, xs, h0v = rng.standard_normal((5, 5)) / 3, rng.standard_normal((8, 5)), rng.standard_normal(5)
W = lucent.shared(Wv.copy(), name="W")
X, h0 = lt.dmatrix("X"), lt.dvector("h0")
hs = scan(lambda x_t, h, W_: lt.tanh(lt.dot(W_, h) + x_t), sequences=X, outputs_info=h0,
          non_sequences=W, return_updates=False)
loss = lt.sum(hs[-1] ** 2)
f = lucent.function([X, h0], [loss, lucent.grad(loss, W)], mode="FAST_RUN")
value, grad = f(xs, h0v)

def loss_of(M):
    h = h0v
    for x in xs:
        h = np.tanh(M @ h + x)
    return np.sum(h ** 2)

eps, numeric = 1e-6, np.zeros_like(Wv)
for i in range(5):
    for j in range(5):
        d = np.zeros_like(Wv); d[i, j] = eps
        numeric[i, j] = (loss_of(Wv + d) - loss_of(Wv - d)) / (2 * eps)
np.testing.assert_allclose(value, loss_of(Wv), rtol=1e-12)
np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
print("REPORT " + json.dumps({"gemv": compiled.count("gemv")}))
"""


def test_a_recurrence_and_its_gradient_loop_compile_one_product_kernel(tmp_path):
    """The forward step's W @ h is written into the stored row (a destination kernel); the
    gradient step's W.T @ g, a product into new zeros, runs on that same kernel."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, LUCENT_FLAGS=f"base_compiledir={tmp_path}")
    out = subprocess.run([sys.executable, "-c", _ONE_PRODUCT_KERNEL], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.split("REPORT ")[-1])
    assert report["gemv"] == 1
