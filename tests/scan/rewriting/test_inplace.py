"""``ScanInplaceOptimizer``: loops write their recurrent outputs into their input buffers."""

import numpy as np
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.compile.io import In
from lucent.compile.mode import Mode
from lucent.graph.equality import equal_computations
from lucent.graph.fg import FunctionGraph
from lucent.scan import scan
from lucent.scan.op import Scan
from lucent.scan.rewriting import ScanInplaceOptimizer

MODES = [Mode(linker="py", optimizer="fast_run"), "FAST_RUN"]


def _scan_ops(f):
    return [n.op for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]


def test_only_the_destroy_map_changes():
    out = scan(lambda h: h + 1, outputs_info=[lt.zeros(1)], n_steps=3, return_updates=False)
    fg = FunctionGraph(outputs=[out], clone=True, copy_inputs=False, copy_orphans=False)
    ScanInplaceOptimizer().apply(fg)
    assert equal_computations([out], fg.outputs)
    assert fg.outputs[0].owner.inputs[0].owner.op.destroy_map == {0: [1]}
    assert not out.owner.inputs[0].owner.op.destroy_map
    # a loop with no recurrent output has nothing to do in place
    x = lt.vector("x")
    mapped = scan(lambda v: v * 2, sequences=[x], return_updates=False)
    fg = FunctionGraph(outputs=[mapped], clone=True, copy_inputs=False, copy_orphans=False)
    ScanInplaceOptimizer().apply(fg)
    assert not fg.outputs[0].owner.inputs[0].owner.op.destroy_map


def test_inplace_loop_values_on_both_paths():
    x, h0 = lt.vector("x"), lt.vector("h0")
    hs, zs = scan(lambda v, h2, h1: [h1 * 0.5 + h2 * 0.25 + v, h1.sum()],
                  sequences=[x], outputs_info=[dict(initial=h0, taps=[-2, -1]), None],
                  return_updates=False)
    xv, h0v = np.arange(6.0), np.array([1.0, 2.0])
    ref = list(h0v)
    for v in xv:
        ref.append(ref[-1] * 0.5 + ref[-2] * 0.25 + v)
    for mode in MODES:
        f = lucent.function([x, h0], [hs, zs], mode=mode)
        (op,) = _scan_ops(f)
        assert op.destroy_map == {0: [op.layout.o_states]}
        assert "inplace=(0)" in str(op)
        for _ in range(2):  # the buffer is made anew at each call
            got_h, got_z = f(xv, h0v)
            assert_allclose(got_h, ref[2:])
            assert_allclose(got_z, ref[1:-1])  # the state read at each step
        assert_allclose(h0v, [1.0, 2.0])  # the initial state given is not overwritten


def test_function_inputs_are_only_overwritten_when_mutable():
    # the whole buffer is the caller's array: in place only if the input is mutable
    from lucent.scan.op import ScanInfo

    h = lt.vector("h")
    inner_h = lt.scalar("h_tm1")
    info = ScanInfo(n_seqs=0, mit_mot_in_slices=(), mit_mot_out_slices=(),
                    mit_sot_in_slices=(), sit_sot_in_slices=((-1,),), n_nit_sot=0,
                    n_untraced_sit_sot=0, n_non_seqs=0, as_while=False)
    op = Scan([inner_h], [inner_h * 2], info)
    out = op(lt.constant(np.int64(3)), h)
    for mutable in (False, True):
        for mode in MODES:
            f = lucent.function([In(h, mutable=mutable)], out, mode=mode)
            assert bool(_scan_ops(f)[0].destroy_map) is mutable
            buf = np.array([1.0, 0.0, 0.0, 0.0])
            assert_allclose(f(buf), [1, 2, 4, 8])
            assert_allclose(buf, [1, 2, 4, 8] if mutable else [1, 0, 0, 0])
