"""Loop bodies get the outer rewrites: nested loops in a body are merged like outer ones."""

import numpy as np
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.scan import scan
from lucent.scan.op import Scan
from lucent.scan.utils import until


def test_nested_loops_in_a_body_are_rewritten():
    c1, c2 = lt.scalars("c1", "c2")
    x, z = lt.vector("x", shape=(5,)), lt.vector("z", shape=(5,))

    def body(c, x, z):
        up = scan(lambda s1, s2, k: (s1 + 1, until(s2 > k)), sequences=[x, z], non_sequences=[c],
                  return_updates=False)
        down = scan(lambda s1, s2, k: (s1 - 2, until(s2 > k)), sequences=[x, z], non_sequences=[c],
                    return_updates=False)
        return up.sum() + down.sum()

    out = scan(body, sequences=[lt.stack([c1, c2])], non_sequences=[x, z], return_updates=False)
    for mode in (Mode(linker="py", optimizer="fast_run"), "FAST_RUN"):
        f = lucent.function([x, z, c1, c2], out, mode=mode)
        [node] = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]
        assert sum(isinstance(n.op, Scan) for n in node.op.fgraph.apply_nodes) == 1
        # c=1: steps while z <= 1, plus the step where it first holds (3 steps); c=3: 5 steps
        assert_allclose(f(np.zeros(5), np.arange(5.0), 1.0, 3.0), [3 - 6, 5 - 10])


def test_bodies_are_rewritten_when_the_loop_rewrites_are_excluded():
    """Equal bodies after rewriting give equal ops, whatever loop rewrites ran."""
    from lucent.compile.mode import get_default_mode

    x0 = lt.scalar("x0")
    xs = scan(lambda x: x + 0, outputs_info=[x0], n_steps=5, return_updates=False)
    ys = scan(lambda x: x * 1, outputs_info=[x0], n_steps=5, return_updates=False)
    assert xs.owner.inputs[0].owner.op != ys.owner.inputs[0].owner.op
    f = lucent.function([x0], [xs, ys], mode=get_default_mode().excluding("scan"))
    op1, op2 = (n.op for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan))
    assert op1 == op2 and hash(op1) == hash(op2)
    for out in f(2.0):
        assert_allclose(out, np.full(5, 2.0))
