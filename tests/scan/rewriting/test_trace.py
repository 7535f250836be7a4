"""The memory rewrites of loops: only the steps and the last rows read are kept, states read last carried untraced."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.scan import scan
from lucent.scan.op import Scan


def test_taps_buffer_of_unknown_length_is_shortened_once():
    y0 = lt.vector("y0")  # three initial rows for the taps -1 and -3, length unknown statically
    ys = scan(lambda y1, y3: y1 + y3, outputs_info=[dict(initial=y0, taps=[-1, -3])], n_steps=6,
              return_updates=False)
    ref = [1.0, 2.0, 3.0]
    for _ in range(6):
        ref.append(ref[-1] + ref[-3])
    for mode in (Mode(linker="py", optimizer="fast_run"), "FAST_RUN"):
        f = lucent.function([y0], ys[-1], mode=mode)
        [node] = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]
        buf = node.inputs[node.op.layout.o_states]
        assert type(buf.owner.op).__name__ == "Subtensor"  # the initial rows, y0[:3], only
        assert_allclose(f(np.array(ref[:3])), ref[-1])


_MODES = (Mode(linker="py", optimizer="fast_run"), "FAST_RUN")


def _scan_node(f):
    [node] = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]
    return node


def _no_fallback(f):
    program = getattr(f.maker.linker, "program", None)
    assert program is None or not program.fallback_ops


def test_only_the_steps_read_are_run():
    x0 = lt.scalar("x0")
    xs = scan(lambda x: x + 1, outputs_info=[x0], n_steps=10, return_updates=False)
    ys, zs = scan(lambda a, b: (a + 1, b - 1), outputs_info=[x0, x0], n_steps=10,
                  return_updates=False)
    for mode in _MODES:
        f = lucent.function([x0], [xs[-3], xs[2:4]], mode=mode)
        node = _scan_node(f)
        assert node.inputs[0].data == 8  # step 8 is the last one read
        got = f(0.0)
        assert_allclose(got[0], 8.0)
        assert_allclose(got[1], [3.0, 4.0])
        # zs[-1] needs every step
        g = lucent.function([x0], [ys[:5], zs[-1]], mode=mode)
        assert _scan_node(g).inputs[0].data == 10
        got = g(0.0)
        assert_allclose(got[0], np.arange(1.0, 6.0))
        assert_allclose(got[1], -10.0)


def test_only_the_last_rows_read_are_kept():
    u = lt.vector("u")
    x10, x20 = lt.vector("x10"), lt.scalar("x20")

    def step(u_t, x1_tm1, x1_tm2, x2_tm1):
        return x2_tm1 + 1.0, x2_tm1 + 2.0, x2_tm1 + 3.0, x1_tm2 + x1_tm1 * u_t, x2_tm1 + u_t

    n1, n2, n3, x1, x2 = scan(
        step, sequences=[u], outputs_info=[None, None, None, dict(initial=x10, taps=[-1, -2]), x20],
        n_steps=20, return_updates=False,
    )
    vu = np.linspace(-1.0, 1.0, 20)
    pre = np.concatenate([[0.0], np.cumsum(vu)])[:-1]  # x2 as each step reads it
    ref_x1 = [0.5, -0.25]
    for t in range(20):
        ref_x1.append(ref_x1[-2] + ref_x1[-1] * vu[t])
    for mode in _MODES:
        f = lucent.function([u, x10, x20], [n1[-7], n2[-3:-1], n3[-6:], x1[-2], x2[-1]], mode=mode)
        node = _scan_node(f)
        lay = node.op.layout
        sizes = [int(v.data) for v in node.inputs[lay.o_nit : lay.o_non_seqs]]
        assert sizes == [7, 3, 6]
        # the taps -1 and -2 need two rows, which also hold x1[-2]; x2 is carried untraced
        assert node.op.info.n_untraced_sit_sot == 1
        assert type(node.inputs[lay.o_states].owner.op).__name__ == "Subtensor"  # x10[:2] only
        got = f(vu, np.array([0.5, -0.25]), 0.0)
        assert_allclose(got[0], pre[-7] + 1.0)
        assert_allclose(got[1], pre[-3:-1] + 2.0)
        assert_allclose(got[2], pre[-6:] + 3.0)
        assert_allclose(got[3], ref_x1[-2])
        assert_allclose(got[4], vu.sum(), atol=1e-12)
        if mode == "FAST_RUN":
            _no_fallback(f)


def test_shortening_a_raw_output_twice_changes_nothing():
    from lucent.graph.fg import FunctionGraph
    from lucent.graph.rewriting.basic import dfs_rewriter
    from lucent.scan.rewriting.trace import scan_reduce_trace_prealloc

    x0 = lt.scalar("x0")
    acc = scan(lambda prev: prev + 1, outputs_info=[x0], n_steps=10, return_updates=False)
    fgraph = FunctionGraph([x0], [acc.owner.inputs[0][-3:]])
    rewrite = dfs_rewriter(scan_reduce_trace_prealloc, ignore_newtrees=True)
    rewrite.apply(fgraph)
    assert _scan_node_of(fgraph).inputs[1].type.shape == (3,)
    rewrite.apply(fgraph)
    assert _scan_node_of(fgraph).inputs[1].type.shape == (3,)
    f = lucent.function(fgraph.inputs, fgraph.outputs[0], accept_inplace=True,
                        mode=Mode(linker="py", optimizer=None))
    assert_allclose(f(0.0), [8.0, 9.0, 10.0])


def _scan_node_of(fgraph):
    [node] = [n for n in fgraph.apply_nodes if isinstance(n.op, Scan)]
    return node


def test_while_loops_keep_the_last_rows_and_are_not_pushed_out():
    from lucent.scan.utils import until

    xs = lt.vector("xs")
    ys = scan(lambda x: (x + 1, {}, until(x + 1 >= 10)), sequences=[xs], return_updates=False)
    for mode in _MODES:
        f = lucent.function([xs], ys[-1], mode=mode)
        node = _scan_node(f)
        assert node.op.info.n_seqs == 1  # the body's work stays in the loop
        size = node.inputs[node.op.layout.o_nit]
        assert size.owner is not None and "Minimum" in str(size.owner.op)
        assert_allclose(f(np.arange(100.0)), 10.0)
        assert_allclose(f(np.zeros(1)), 1.0)
        with pytest.raises(IndexError):
            f(np.zeros(0))


def test_states_read_only_last_are_carried_untraced():
    x0, y0, r0 = lt.vector("x0"), lt.vector("y0"), lt.vector("r0")

    def step(x_tm1, y_tm1, r_tm1):
        r = 1.0 - x_tm1
        return x_tm1 + 0.5 * r + 0.3 * r_tm1, y_tm1 + 1, x_tm1 * 2, r

    xs, ys, ws, _ = scan(step, outputs_info=[x0, y0, None, r0], n_steps=10, return_updates=False)
    ref_x, ref_r, hist = np.zeros(3), np.zeros(3), []
    for _ in range(10):
        w = ref_x * 2
        r = 1.0 - ref_x
        ref_x, ref_r = ref_x + 0.5 * r + 0.3 * ref_r, r
        hist.append(ref_x)
    for mode in _MODES:
        f = lucent.function([x0, y0, r0], [xs, ys[-1], ws[-1]], mode=mode)
        info = _scan_node(f).op.info
        # xs is read whole; ys only last; rs is never read but the step needs it
        assert (info.n_sit_sot, info.n_nit_sot, info.n_untraced_sit_sot) == (1, 1, 2)
        got = f(np.zeros(3), np.zeros(3), np.zeros(3))
        assert_allclose(got[0], np.array(hist))
        assert_allclose(got[1], np.full(3, 10.0))
        assert_allclose(got[2], w)
        if mode == "FAST_RUN":
            _no_fallback(f)


def test_an_untraced_state_of_an_empty_loop_is_a_copy_of_its_start():
    from lucent.scan.views import foldl

    seq, start = lt.vector("seq"), lt.vector("start")
    total = foldl(lambda v, acc: acc + v, seq, start, return_updates=False)
    for mode in _MODES:
        f = lucent.function([seq, start], total, mode=mode)
        node = _scan_node(f)
        assert node.op.info.n_untraced_sit_sot == 1
        # a tensor state is replaced at every step, never written into: the loop does
        # not declare its start destroyed (a generator's it does), and the caller's
        # array is never written
        assert node.op.destroy_map == {}
        s = np.array([1.0, 2.0])
        assert_allclose(f(np.array([3.0, 4.0]), s), [8.0, 9.0])
        out = f(np.zeros(0), s)
        assert_allclose(out, s)
        out[0] = 100.0
        assert s[0] == 1.0


def test_steps_read_at_indices_known_at_run_time_are_the_only_ones_run():
    from lucent.compile.debug.debugmode import DebugMode

    u, i, j = lt.vector("u"), lt.iscalar("i"), lt.iscalar("j")
    x1, x2, x3 = scan(lambda u_t: (u_t + 1.0, u_t + 2.0, u_t + 3.0), sequences=[u], return_updates=False)
    outs = [x1[:2], x2[i], x3[-j]]
    v = np.arange(20.0)
    mode = lucent.compile.mode.get_mode("FAST_RUN").excluding("scan_push_out_seq")
    f = lucent.function([u, i, j], outs, mode=mode)
    steps = lucent.function([u, i, j], _scan_node(f).inputs[0], accept_inplace=True,
                            on_unused_input="ignore")
    assert steps(v, 3, 15) == 6 and steps(v, 16, 15) == 17 and steps(v, -5, 3) == 18
    for g in (f, lucent.function([u, i, j], outs, mode="FAST_COMPILE"),
              lucent.function([u, i, j], outs, mode=DebugMode())):
        got = g(v, -5, 15)
        assert_allclose(got[0], v[:2] + 1)
        assert_allclose(got[1], v[-5] + 2)
        assert_allclose(got[2], v[-15] + 3)
        with pytest.raises(IndexError):
            g(v, 20, 1)
        with pytest.raises(IndexError):
            g(v, -21, 1)
    # a slice bound only known at run time keeps every step
    f = lucent.function([u, i], x1[:i], mode=mode)
    steps = lucent.function([u, i], _scan_node(f).inputs[0], accept_inplace=True,
                            on_unused_input="ignore")
    assert steps(v, 3) == 20
