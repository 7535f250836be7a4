"""ScanArgs: a Scan node's variables by role, the position maps between them, editing and dependents."""

from copy import copy

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.scan.args import io_mappings
from lucent.scan.utils import FieldInfo, ScanArgs

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning")


def _model():
    """A loop with a sequence, a mit_sot (taps -2, -1), a sit_sot, a nit_sot, an untraced state, a non-sequence."""
    srng = lt.random.RandomStream(seed=3)
    seq = lt.dvector("seq")
    w = lt.dscalar("w")
    m0 = lt.dvector("m0")
    s0 = lt.dscalar("s0")

    def step(x_t, m_tm2, m_tm1, s_tm1, w_):
        noise = srng.normal(0.0, 1.0)
        return m_tm1 + m_tm2 * w_, s_tm1 + x_t, x_t * w_ + 0 * noise

    (m, s, y), updates = lucent.scan(
        step,
        sequences=[seq],
        outputs_info=[{"initial": m0, "taps": [-2, -1]}, s0, None],
        non_sequences=[w],
        name="model",
    )
    return locals()


def test_fields_follow_the_layout():
    env = _model()
    node = env["y"].owner
    args = ScanArgs.from_node(node)
    op = node.op
    assert args.info == op.info
    assert args.inner_inputs == op.inner_inputs
    assert args.inner_outputs == op.inner_outputs
    assert args.outer_inputs == node.inputs
    assert args.outer_outputs == node.outputs
    assert len(args.inner_in_mit_sot) == 1 and len(args.inner_in_mit_sot[0]) == 2
    assert args.outer_in_non_seqs == [env["w"]]
    assert args.outer_out_nit_sot == [env["y"]]
    assert len(args.outer_out_shared) == 1
    assert list(env["updates"].values()) == args.outer_out_shared
    assert args.n_steps is node.inputs[0]
    assert args.n_nit_sot == 1 and args.n_mit_mot == 0
    assert repr(args).startswith("ScanArgs(") and str(args).startswith("ScanArgs(")
    with pytest.raises(TypeError, match="Scan"):
        ScanArgs.from_node(lt.ones(2).owner)


def test_find_alt_and_mappings():
    env = _model()
    node = env["y"].owner
    args = ScanArgs.from_node(node)
    tap = args.inner_in_mit_sot[0][1]
    info = args.find_among_fields(tap)
    assert info == FieldInfo("inner_in_mit_sot", "inner_inputs", 0, 1, 2)
    assert args.find_among_fields(lt.dscalar()) is None
    assert args.find_among_fields(args.inner_in_non_seqs) is None  # a list, not a variable
    assert args.get_alt_field(args.outer_out_sit_sot[0], "inner_out") is args.inner_out_sit_sot[0]
    assert args.get_alt_field(args.outer_out_sit_sot[0], "outer_in") is args.outer_in_sit_sot[0]
    with pytest.raises(ValueError, match="alt_prefix"):
        args.get_alt_field(args.outer_out_sit_sot[0], "middle")
    maps = node.op.var_mappings
    assert maps == io_mappings(node.op.info, len(node.op.inner_inputs)) == args.var_mappings
    # outer inputs: n_steps, seq, mit_sot, sit_sot, untraced, nit_sot size, non-seq
    assert maps["inner_inp_from_outer_inp"][2] == [1, 2]
    assert maps["outer_out_from_outer_inp"][5] == 2  # the nit_sot size -> the nit_sot output
    assert maps["outer_inp_from_outer_out"][3] == 4  # the untraced state's output <- its input
    assert maps["outer_out_from_inner_inp"][0] == -1  # a sequence has no output


def test_remove_with_dependents_and_copy():
    env = _model()
    node = env["y"].owner
    args = ScanArgs.from_node(node)
    c = copy(args)
    assert c == args and c is not args
    x_t = args.inner_in_seqs[0]
    removed = dict(c.remove_from_fields(x_t, rm_dependents=True))
    # x_t feeds s (sit_sot) and y (nit_sot): they go, with their outer variables.
    assert x_t in removed and env["y"] in removed and env["seq"] not in c.outer_in_seqs
    assert c.outer_out_nit_sot == [] and c.inner_out_sit_sot == []
    assert c.inner_in_mit_sot == args.inner_in_mit_sot and c.outer_in_non_seqs == [env["w"]]
    assert c != args
    with pytest.raises(ValueError):
        c.remove_from_fields(x_t)
    # merging two copies doubles every field
    merged = args.merge(args)
    assert len(merged.inner_in_seqs) == 2 and len(merged.outer_out_nit_sot) == 2
    empty = ScanArgs.create_empty()
    assert empty.outer_outputs == [] and empty.info.n_seqs == 0


def test_random_draws_in_step_become_updates():
    srng = lt.random.RandomStream(seed=1)
    x = lt.dvector("x")
    ys, updates = lucent.scan(lambda x_t: srng.normal(x_t, 1e-9), sequences=[x], strict=True)
    assert len(updates) == 1
    f = lucent.function([x], ys, updates=updates, mode="FAST_COMPILE")
    np.testing.assert_allclose(f([1.0, 2.0, 3.0]), [1.0, 2.0, 3.0], atol=1e-6)
    (rng,) = updates
    assert rng.default_update is None  # it is an expression of the step's variables


def test_filter_view():
    from lucent.scan.views import filter as scan_filter

    v = lt.dvector("v")
    w = lt.dvector("w")
    single = scan_filter(lambda x: lt.eq(x % 2, 0), v)
    a, b = scan_filter(lambda x1, x2: (lt.eq(x1 % 2, 0), lt.gt(x2, 5)), [v, w])
    back = scan_filter(lambda x: lt.gt(x, 6), v, go_backwards=True)
    f = lucent.function([v, w], [single, a, b, back], mode="FAST_COMPILE")
    r = f(np.arange(10.0), np.arange(10.0))
    np.testing.assert_array_equal(r[0], [0, 2, 4, 6, 8])
    np.testing.assert_array_equal(r[1], [0, 2, 4, 6, 8])
    np.testing.assert_array_equal(r[2], [6, 7, 8, 9])
    np.testing.assert_array_equal(r[3], [7, 8, 9])
    with pytest.raises(TypeError, match="several masks"):
        scan_filter(lambda x: (x > 0, x < 3), v)
