"""Shortened buffers for outputs of which only the last step is read."""

import numpy as np
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
