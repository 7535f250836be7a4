"""``function(..., profile=True)``: per-node time and memory, on both execution paths.

Tests taking ``lucent_mode`` run once on FAST_COMPILE (Python linker) and
once on FAST_RUN (the Numba linker's profiled build); see tests/conftest.py.
Memory numbers are checked against sizes worked out by hand.
"""

import io

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.ops import as_op
from lucent.compile.profiling import COLUMNS, ProfileStats, make_profile, print_profiles


def _row(profile, node):
    (row,) = [r for r in profile.as_rows() if r["node"] is node]
    return row


def _node_named(fn, op_text):
    (node,) = [n for n in fn.profile.order if op_text in str(n.op)]
    return node


# --- the API and the wiring ---------------------------------------------------------
def test_profile_module_path():
    import lucent.compile.profiling as profiling

    assert profiling.ProfileStats is ProfileStats


def test_profile_off_gives_none(lucent_mode):
    x = lt.dvector("x")
    assert lucent.function([x], x * 2).profile is None
    assert lucent.function([x], x * 2, profile=False).profile is None


def test_profile_argument_forms(lucent_mode):
    x = lt.dvector("x")
    named = lucent.function([x], x * 2, profile="step")
    assert isinstance(named.profile, ProfileStats) and named.profile.message == "step"
    by_fn_name = lucent.function([x], x * 2, profile=True, name="double")
    assert by_fn_name.profile.message == "double"
    mine = ProfileStats(message="mine")
    assert lucent.function([x], x * 2, profile=mine).profile is mine
    with lucent.config.change_flags(profile=True):
        assert isinstance(lucent.function([x], x * 2).profile, ProfileStats)
    with pytest.raises(TypeError, match="profile must be"):
        make_profile(3)


def test_one_profile_per_graph(lucent_mode):
    x = lt.dvector("x")
    shared_profile = ProfileStats()
    lucent.function([x], x * 2, profile=shared_profile)
    with pytest.raises(ValueError, match="already profiles another"):
        lucent.function([x], x * 3, profile=shared_profile)


def test_copy_gets_its_own_profile(lucent_mode):
    x = lt.dvector("x")
    fn = lucent.function([x], x * 2, profile="p")
    fn(np.ones(3))
    twin = fn.copy()
    assert twin.profile is not fn.profile and twin.profile.message == "p"
    twin(np.ones(3))
    assert fn.profile.calls == 1 and twin.profile.calls == 1


def test_fast_call_only_without_profile():
    # The specialised call of the Numba path (which records nothing) is kept
    # for unprofiled functions and not used for profiled ones.
    x = lt.dvector("x")
    plain = lucent.function([x], lt.exp(x), mode="FAST_RUN")
    profiled = lucent.function([x], lt.exp(x), mode="FAST_RUN", profile=True)
    assert hasattr(plain, "_fast_call_source")
    assert not hasattr(profiled, "_fast_call_source")
    for k in range(4):
        profiled(np.ones(3))
        assert profiled.profile.calls == k + 1


# --- memory ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_created_bytes_and_peak_by_hand(lucent_mode, dtype):
    x = lt.matrix("x", dtype=dtype)
    y = lt.matrix("y", dtype=dtype)
    z = (x + y) * 2
    w = lt.exp(z).sum()
    fn = lucent.function([x, y], [z, w], profile=True)
    X = np.ones((3, 4), dtype=dtype)
    z_val, w_val = fn(X, X)
    item = np.dtype(dtype).itemsize
    matrix = 12 * item  # one (3, 4) array: 96 B in float64, 48 B in float32
    assert z_val.nbytes == matrix and w_val.nbytes == item

    profile = fn.profile
    memory = profile.memory()
    rows = profile.as_rows()
    assert all(kind == "created" for r in rows for kind in r["output_kinds"])
    # Total created = sum of the nbytes of every node output (all are created).
    assert memory.total_created == sum(b for r in rows for b in r["output_bytes"])
    assert sum(r["bytes"] for r in rows) == memory.total_created
    assert profile.input_bytes == 2 * matrix
    if lucent_mode == "FAST_COMPILE":
        # Schedule and live bytes (z and w are outputs, so never freed):
        #   Add      +96 -> 96
        #   Mul      +96 -> 192, then Add's result is dead -> 96
        #   Exp      +96 -> 192
        #   Sum      +8  -> 200 (peak), then Exp's result is dead -> 104
        assert [type(n.op).__name__ for n in profile.order] == ["Elemwise"] * 3 + ["Sum"]
        assert memory.total_created == 3 * matrix + item
    else:
        # Schedule: Composite (z and exp(z) together, +2*96 -> 192), Sum (+8 -> 200,
        # peak), then exp(z) is dead -> 104.
        assert len(profile.order) == 2
        assert memory.total_created == 2 * matrix + item
    assert memory.peak == 2 * matrix + item
    assert memory.peak_node is profile.order[-1]
    assert memory.held_after == matrix + item
    assert [r["is_peak"] for r in rows] == [n is profile.order[-1] for n in profile.order]


def test_views_cost_nothing_and_keep_their_base_alive(lucent_mode):
    x = lt.dmatrix("x")
    fn = lucent.function([x], lt.exp(x).T[1:].sum(), profile=True)
    fn(np.ones((4, 3)))
    profile = fn.profile
    transpose = _row(profile, _node_named(fn, "Transpose"))
    sub = _row(profile, _node_named(fn, "Subtensor"))
    assert transpose["output_kinds"] == ["view"] and transpose["bytes"] == 0
    assert sub["output_kinds"] == ["view"] and sub["bytes"] == 0
    assert sub["output_bytes"] == [2 * 4 * 8]  # the view's own size is still shown
    memory = profile.memory()
    # exp's (4, 3) float64 result (96 B) is read last by a view node, but the
    # view [1:] keeps it alive until Sum has run: 96 + 8 = 104 at Sum.
    # (Were the views not holding it, the peak would be 96 at Exp.)
    assert memory.total_created == 96 + 8
    assert memory.peak == 104
    assert memory.peak_node is _node_named(fn, "Sum")
    assert memory.held_after == 8


def test_in_place_outputs_cost_nothing():
    # FAST_RUN writes exp(d) + 1 into the buffer of d = dot(x, y).
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    fn = lucent.function([x, y], lt.exp(x.dot(y)) + 1, mode="FAST_RUN", profile=True)
    out = fn(np.ones((2, 3)), np.ones((3, 2)))
    np.testing.assert_allclose(out, np.exp(np.full((2, 2), 3.0)) + 1)
    profile = fn.profile
    (inplace,) = [r for r in profile.as_rows() if r["node"].op.destroy_map]
    assert inplace["output_kinds"] == ["in-place"] and inplace["bytes"] == 0
    (dot,) = [r for r in profile.as_rows() if r["output_kinds"] == ["created"]]
    assert dot["bytes"] == 2 * 2 * 8
    memory = profile.memory()
    # Dot22 +32 -> 32 (peak, first reached here); the in-place node adds nothing.
    assert memory.total_created == 32 and memory.peak == 32
    assert memory.peak_node is dot["node"]
    assert memory.held_after == 32


def test_in_place_shared_update_is_classified():
    W = lucent.shared(np.ones((3, 3)), name="W")
    x = lt.dmatrix("x")
    fn = lucent.function([x], (W * x).sum(), updates=[(W, W - 0.1 * x)], mode="FAST_RUN", profile=True)
    fn(np.ones((3, 3)))
    kinds = {r["op"]: r["kind"] for r in fn.profile.as_rows()}
    assert "in-place" in kinds.values()
    # The update overwrites W (a graph input): nothing new, nothing held.
    assert fn.profile.memory().total_created == 8


# --- time and calls --------------------------------------------------------------------
def test_times_and_calls_accumulate(lucent_mode):
    x = lt.dmatrix("x")
    fn = lucent.function([x], [lt.exp(x) * 3, (x ** 2).sum()], profile=True)
    for _ in range(3):
        fn(np.ones((20, 20)))
    profile = fn.profile
    assert profile.calls == 3 and profile.failed_calls == 0
    rows = profile.as_rows()
    assert rows and all(r["runs"] == 3 for r in rows)
    assert all(r["time"] > 0 and r["time_per_call"] > 0 for r in rows)
    assert profile.call_time > 0
    assert sum(r["time"] for r in rows) == pytest.approx(profile.node_time_total)
    assert profile.node_time_total <= profile.call_time
    assert sum(r["time_percent"] for r in rows) == pytest.approx(100.0)
    assert profile.fct_callcount == 3 and profile.fct_call_time == profile.call_time


def test_numba_profile_states_how_and_excludes_compilation():
    x = lt.dvector("x")
    fn = lucent.function([x], lt.sin(x) * 2 + 1, mode="FAST_RUN", profile=True)
    fn(np.ones(5))
    profile = fn.profile
    assert "kernel" in profile.how_measured and "dispatch" in profile.how_measured
    assert profile.compile_time >= 0
    plain = lucent.function([x], lt.exp(x), mode="FAST_COMPILE", profile=True)
    plain(np.ones(2))
    assert "perform" in plain.profile.how_measured


def test_numba_node_without_kernel_runs_perform():
    @as_op(itypes=[lt.dvector], otypes=[lt.dvector])
    def reverse(v):
        return v[::-1].copy()

    x = lt.dvector("x")
    fn = lucent.function([x], reverse(lt.exp(x)) * 2, mode="FAST_RUN", profile=True)
    np.testing.assert_allclose(fn(np.arange(3.0)), np.exp(np.arange(3.0))[::-1] * 2)
    notes = [r["note"] for r in fn.profile.as_rows() if r["note"]]
    assert len(notes) == 1 and "perform" in notes[0]
    out = io.StringIO()
    fn.profile.summary(file=out)
    assert "no Numba kernel" in out.getvalue()


def test_profiled_outputs_have_unprofiled_forms(lucent_mode):
    x = lt.dvector("x")
    outs = [x.sum(), lt.exp(x), x.shape[0]]
    plain = lucent.function([x], outs)
    profiled = lucent.function([x], outs, profile=True)
    value = np.arange(4.0)
    for a, b in zip(plain(value), profiled(value)):
        assert type(a) is type(b)
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.ndim(a) == np.ndim(b)
        np.testing.assert_array_equal(a, b)


# --- shared variables --------------------------------------------------------------------
def _sgd(profile, W0):
    W = lucent.shared(W0.copy(), name="W")
    b = lucent.shared(np.float64(0.5), name="b")
    x = lt.dmatrix("x")
    cost = ((x.dot(W) + b) ** 2).sum()
    gW, gb = lucent.grad(cost, [W, b])
    fn = lucent.function([x], cost, updates=[(W, W - 0.01 * gW), (b, b - 0.01 * gb)], profile=profile)
    return fn, W, b


def test_profiled_updates_match_unprofiled(lucent_mode):
    rng = np.random.default_rng(1)
    W0 = rng.normal(size=(4, 3))
    X = rng.normal(size=(5, 4))
    fast, W1, b1 = _sgd(False, W0)
    prof, W2, b2 = _sgd(True, W0)
    for _ in range(3):
        np.testing.assert_allclose(prof(X), fast(X), rtol=1e-12)
        np.testing.assert_allclose(W2.get_value(), W1.get_value(), rtol=1e-12)
        np.testing.assert_allclose(b2.get_value(), b1.get_value(), rtol=1e-12)
    assert prof.profile.calls == 3


def test_failing_profiled_call_changes_no_shared_variable(lucent_mode):
    rng = np.random.default_rng(2)
    W0 = rng.normal(size=(4, 3))
    fn, W, b = _sgd(True, W0)
    fn(rng.normal(size=(5, 4)))
    W_before, b_before = W.get_value(), b.get_value()
    with pytest.raises(ValueError):
        fn(rng.normal(size=(5, 7)))  # x.dot(W) cannot work: 7 columns for 4 rows
    np.testing.assert_array_equal(W.get_value(), W_before)
    np.testing.assert_array_equal(b.get_value(), b_before)
    assert fn.profile.calls == 1 and fn.profile.failed_calls == 1
    assert all(r["runs"] == 1 for r in fn.profile.as_rows())


# --- reports ---------------------------------------------------------------------------
def _profiled_example():
    x = lt.dmatrix("x")
    fn = lucent.function([x], [lt.exp(x) + 1, (x * 3).sum()], profile="example")
    fn(np.ones((3, 5)))
    fn(np.ones((3, 5)))
    return fn


def test_summary_text(lucent_mode):
    fn = _profiled_example()
    out = io.StringIO()
    fn.profile.summary(file=out)
    text = out.getvalue()
    for heading in COLUMNS:
        assert heading in text
    assert "example" in text and "Peak:" in text and "Calls: 2" in text
    assert str(fn.profile.memory().peak_node) in text
    assert "Graph inputs: 120 B" in text and "not counted in the peak" in text
    for sort_by in ("time", "bytes", "order"):
        fn.profile.summary(sort_by=sort_by, n=1, file=io.StringIO())
    with pytest.raises(ValueError, match="sort_by must be one of"):
        fn.profile.summary(sort_by="size", file=io.StringIO())


def test_rows_sort_and_sum(lucent_mode):
    fn = _profiled_example()
    profile = fn.profile
    by_time = profile.as_rows("time")
    by_bytes = profile.as_rows("bytes")
    by_order = profile.as_rows("order")
    assert [r["time"] for r in by_time] == sorted((r["time"] for r in by_time), reverse=True)
    assert [r["bytes"] for r in by_bytes] == sorted((r["bytes"] for r in by_bytes), reverse=True)
    assert [r["node"] for r in by_order] == profile.order
    assert sum(r["bytes"] for r in by_time) == profile.memory().total_created


def test_html_table(lucent_mode):
    fn = _profiled_example()
    page = fn.profile._repr_html_()
    assert "<table" in page and "</table>" in page
    assert page.count('class="peak"') == 1
    assert all(f"<th>{c}</th>" in page for c in ("Op", "Bytes", "Kind"))


def test_print_profiles(lucent_mode):
    first, second = _profiled_example(), _profiled_example()
    out = io.StringIO()
    print_profiles([first.profile, second.profile], file=out)
    assert "2 profiled functions: 4 calls" in out.getvalue()


def test_failing_second_in_place_writer_changes_nothing(lucent_mode):
    # Two updates written in place on FAST_RUN; the second one's input has a bad
    # shape. The shapes of both writers are checked before the first one writes,
    # on the profiled builds as on the unprofiled ones.
    W1 = lucent.shared(np.ones(3), name="W1")
    W2 = lucent.shared(np.ones(3), name="W2")
    x, y = lt.dvector("x"), lt.dvector("y")
    fn = lucent.function([x, y], [], updates=[(W1, W1 - x), (W2, W2 - y)], profile=True)
    fn(np.ones(3), np.ones(3))
    with pytest.raises(ValueError):
        fn(np.ones(3), np.ones(4))
    np.testing.assert_array_equal(W1.get_value(), np.zeros(3))
    np.testing.assert_array_equal(W2.get_value(), np.zeros(3))
    assert fn.profile.calls == 1 and fn.profile.failed_calls == 1


# --- PyTensor's constructor, the Type size contract, extra report sections ------------------
def test_pytensor_constructor_arguments_and_module_path():
    from lucent.compile import profiling
    from lucent.compile.debug.profiling import ProfileStats as DebugPathProfileStats

    assert DebugPathProfileStats is ProfileStats
    before = len(profiling._atexit_print_list)
    quiet = ProfileStats(False, gpu_checks=False)
    assert not quiet.atexit_print and quiet.gpu_checks is False and quiet.flag_time_thunks
    assert len(profiling._atexit_print_list) == before
    loud = ProfileStats(message="at exit")
    assert loud.atexit_print and profiling._atexit_print_list[-1] is loud
    assert ProfileStats(atexit_print=False, message="m", extra_note=3).extra_note == 3
    with pytest.raises(TypeError, match="unexpected keyword"):
        ProfileStats(atexit_print=False, summary=1)


def test_at_exit_printing_follows_config_profile(capsys):
    from lucent.compile import profiling

    x = lt.dvector("x")
    p = ProfileStats(message="printed at exit")
    f = lucent.function([x], x * 2, profile=p, mode="FAST_COMPILE")
    f([1.0])
    try:
        profiling._atexit_print_fn()
        assert "printed at exit" not in capsys.readouterr().err  # config.profile is off
        with lucent.config.change_flags(profile=True):
            profiling._atexit_print_fn()
        assert "Function profile: printed at exit" in capsys.readouterr().err
    finally:
        profiling._atexit_print_list.remove(p)


def test_flag_time_thunks_false_records_no_node_time(lucent_mode):
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x) * 2, profile=ProfileStats(False, flag_time_thunks=False))
    f(np.ones(3))
    assert f.profile.calls == 1 and f.profile.node_time_total == 0.0


class _CountingType(lt.TensorType):
    """A tensor type that records when the profiler asks it for sizes."""

    log = []

    def get_shape_info(self, obj):
        _CountingType.log.append("shape_info")
        return obj.shape

    def get_size(self, shape_info):
        _CountingType.log.append("size")
        return 1000 * int(np.prod(shape_info))


class _Twice(lucent.graph.op.Op):
    __props__ = ()

    def make_node(self, x):
        return lucent.graph.basic.Apply(self, [x], [_CountingType(x.type.dtype, x.type.shape)()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2


def test_shape_info_during_the_call_and_size_when_reporting():
    import lucent.graph.op  # noqa: F401

    x = lt.dvector("x")
    f = lucent.function([x], _Twice()(x) + 1, profile=ProfileStats(False), mode="FAST_COMPILE")
    _CountingType.log.clear()
    f(np.ones(3))
    assert "shape_info" in _CountingType.log and "size" not in _CountingType.log
    _CountingType.log.clear()
    out = io.StringIO()
    f.profile.summary(out)  # PyTensor's positional file argument
    assert _CountingType.log and set(_CountingType.log) == {"size"}
    (row,) = [r for r in f.profile.as_rows() if "Twice" in r["op"]]
    assert row["bytes"] == 3000  # the custom get_size decided


def test_min_peak_memory_section():
    x, y, z = lt.dvectors("x", "y", "z")
    outs = [lt.outer(x, y).sum(axis=1), lt.outer(y, z).sum(axis=1)]
    with lucent.config.change_flags(profiling__min_peak_memory=True):
        f = lucent.function([x, y, z], outs, profile=ProfileStats(False), mode="FAST_COMPILE")
        f(np.ones(100), np.ones(100), np.ones(100))
        out = io.StringIO()
        f.profile.summary(file=out)
    text = out.getvalue()
    assert "Smallest peak over all valid node orders:" in text
    from lucent.compile.profile_memory import min_peak_memory

    best, order = min_peak_memory(f.profile.fgraph, f.profile.order, f.profile.output_sizes)
    assert best <= f.profile.memory().peak and len(order) == len(f.profile.order)
    # both 100x100 outer products are never alive at once in the best order
    assert best < 2 * 100 * 100 * 8


def test_rewriter_profile_and_op_table(lucent_mode):
    x = lt.dvector("x")
    with lucent.config.change_flags(profile_optimizer=True):
        f = lucent.function([x], lt.log(1 + x), profile=True)
    f(np.ones(2))
    out = io.StringIO()
    f.profile.summary(file=out, n_ops_to_print=1)
    text = out.getvalue()
    assert "Rewriter Profile" in text
    assert "Ops (sorted by time" in text
    if lucent_mode == "FAST_RUN":
        assert "local_log1p" in text
    g = lucent.function([x], x + 1, profile=True)
    g(np.ones(2))
    other = io.StringIO()
    g.profile.summary(file=other)
    assert "Rewriter Profile" not in other.getvalue()


@pytest.mark.parametrize("mode", ["profile", "DebugMode"])
def test_profiling_or_checking_a_compiled_step_compiles_no_kernel_again(mode):
    """The node kernels FAST_RUN compiled serve the profiler and DebugMode, views and constants included."""
    pytest.importorskip("numba")
    from tests.helpers import numba_compiles

    x = lt.dmatrix("x")
    w = lucent.shared(np.linspace(-1.0, 1.0, 12).reshape(3, 4), "w")
    cost = lt.tanh(x @ w).sum(axis=1).mean()
    updates = [(w, w - 0.1 * lucent.grad(cost, w))]
    data = np.arange(15.0).reshape(5, 3) / 10
    lucent.function([x], cost, updates=updates)(data)

    with numba_compiles() as compiled:
        if mode == "profile":
            f = lucent.function([x], cost, updates=updates, profile=True)
        else:
            f = lucent.function([x], cost, updates=updates, mode="DebugMode")
        f(data)
    assert compiled == []
