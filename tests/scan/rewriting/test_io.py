"""Loop input/output cleanup: unused states and outputs, constant and duplicated inputs."""

import numpy as np
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.graph.fg import FunctionGraph
from lucent.graph.rewriting.basic import in2out
from lucent.scan import scan
from lucent.scan.op import Scan
from lucent.scan.rewriting import (
    scan_inline_invariant_constants,
    scan_merge_duplicate_inputs,
    scan_remove_unused,
)

PY = lucent.compile.mode.Mode(linker="py", optimizer=None)


def _rewrite(rewriter, inputs, outputs):
    fg = FunctionGraph(inputs, outputs, clone=True)
    in2out(rewriter).rewrite(fg)
    [node] = [n for n in fg.toposort() if isinstance(n.op, Scan)]
    return fg, node


def _values(fg, *args):
    return lucent.function(fg.inputs, fg.outputs, mode=PY, on_unused_input="ignore")(*args)


def test_unread_state_is_removed_unless_a_kept_state_reads_it():
    x0, y0, z0 = lt.vectors("x0", "y0", "z0")
    xs, ys, zs = scan(lambda x, y, z: [x + 1.0, y * 0.5, z + x], outputs_info=[x0, y0, z0],
                      n_steps=4, return_updates=False)
    fg, node = _rewrite(scan_remove_unused, [x0, y0, z0], [zs])
    assert node.op.info.n_sit_sot == 2  # y is dropped; x stays since z's step reads it
    args = [np.zeros(2), np.ones(2), np.full(2, 3.0)]
    assert_allclose(_values(fg, *args)[0], [[3, 3], [4, 4], [6, 6], [9, 9]])


def test_constant_and_duplicated_inputs_enter_the_body_once():
    s = lt.vector("s")
    out = scan(lambda a, b, c, d: a * b + c * d, sequences=[s, s],
               non_sequences=[lt.constant(2.0), lt.constant(3.0)], return_updates=False)
    fg, node = _rewrite(scan_inline_invariant_constants, [s], [out])
    assert node.op.info.n_non_seqs == 0
    fg2, node2 = _rewrite(scan_merge_duplicate_inputs, fg.inputs, fg.outputs)
    assert node2.op.info.n_seqs == 1
    sv = np.arange(3.0)
    assert_allclose(_values(fg2, sv)[0], sv * sv + 6)
