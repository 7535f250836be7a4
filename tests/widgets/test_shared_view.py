"""Tests of lucent/widgets/shared_view.py: the live panel of shared variables.

The widgets are made without a kernel (ipywidgets 8 allows it); what the
browser would receive is the widget's synced traits, so the tests read them.
"""

import json

import numpy as np
import pytest

import lucent
import lucent.tensor as lt

pytest.importorskip("anywidget")

from lucent.widgets import SharedView  # noqa: E402
from lucent.widgets.live import Throttle  # noqa: E402


def _row(view, name):
    (row,) = [r for r in view.rows if r["name"] == name]
    return row


def _pushes(view):
    """A list that grows by one each time the rows are sent."""
    seen = []
    view.observe(lambda change: seen.append(change["new"]), "rows")
    return seen


def _train_step(mode):
    W = lucent.shared(np.ones(4), name="W")
    x = lt.dvector("x")
    f = lucent.function([x], (W * x).sum(), updates={W: W - 0.5 * x}, mode=mode)
    return W, x, f


class FakeEvents:
    """Enough of IPython's EventManager to fire ``post_run_cell`` by hand."""

    def __init__(self):
        self.callbacks = {}

    def register(self, event, callback):
        self.callbacks.setdefault(event, []).append(callback)

    def unregister(self, event, callback):
        self.callbacks[event].remove(callback)

    def trigger(self, event):
        for callback in list(self.callbacks.get(event, [])):
            callback(None)


class FakeShell:
    def __init__(self):
        self.events = FakeEvents()


@pytest.fixture
def shell(monkeypatch):
    IPython = pytest.importorskip("IPython")
    fake = FakeShell()
    monkeypatch.setattr(IPython, "get_ipython", lambda: fake)
    return fake


# --- what a row shows ----------------------------------------------------------------
def test_rows_match_numpy():
    rng = np.random.default_rng(0)
    value = rng.normal(size=(3, 5))
    W = lucent.shared(value, name="W")
    b = lucent.shared(np.float64(-1.5), name="b")
    view = SharedView([W, b])
    w, s = view.rows
    assert (w["name"], w["dtype"], w["shape"], w["size"]) == ("W", "float64", [3, 5], 15)
    assert w["type"] == str(W.type)
    np.testing.assert_allclose(
        [w["min"], w["max"], w["mean"], w["std"], w["norm"]],
        [value.min(), value.max(), value.mean(), value.std(), np.linalg.norm(value)],
    )
    assert (w["nan"], w["inf"]) == (0, 0)
    assert sum(w["histogram"]["counts"]) == 15
    assert w["history_of"] == "norm" and w["history"] == [pytest.approx(np.linalg.norm(value))]
    assert w["latest"] == w["history"][-1]
    assert s["shape"] == [] and s["history_of"] == "value" and s["history"] == [-1.5]
    assert [r["key"] for r in view.rows] == [0, 1]
    assert view.updates == 0 and view.history == 100
    json.dumps(view.rows, allow_nan=False)  # what the browser gets is strict JSON


def test_nan_and_inf_are_counted_and_kept_out_of_json():
    bad = lucent.shared(np.array([1.0, np.nan, np.inf, np.nan, 3.0]), name="bad")
    view = SharedView(bad)
    (row,) = view.rows
    assert (row["nan"], row["inf"]) == (2, 1)
    assert (row["min"], row["max"]) == (1.0, 3.0)  # statistics over the finite entries
    assert row["history"] == [None] and row["latest"] is None  # a gap in the sparkline
    bad.set_value(np.array([np.nan]))
    (row,) = view.rows
    assert row["nan"] == 1 and row["min"] is None
    json.dumps(view.rows, allow_nan=False)


def test_names_unnamed_dict_and_clones():
    unnamed = lucent.shared(np.zeros(2))
    named = lucent.shared(np.zeros(2), name="n")
    view = SharedView((unnamed, named, named.clone(name="n2")))
    assert [r["name"] for r in view.rows] == [unnamed.auto_name, "n"]  # a clone shares the value
    assert unnamed.auto_name.startswith("auto_")
    by_dict = SharedView({"weights": unnamed, "other": named})
    assert [r["name"] for r in by_dict.rows] == ["weights", "other"]
    assert by_dict.variables == [unnamed, named]


def test_generic_shared_variable_is_shown_as_text():
    config = lucent.shared({"lr": 0.1}, name="config")
    view = SharedView(config)
    (row,) = view.rows
    assert row["kind"] == "object" and "lr" in row["text"] and row["history"] == [None]
    config.set_value({"lr": 0.01})
    assert "0.01" in view.rows[0]["text"]


# --- the argument ----------------------------------------------------------------------
def test_function_argument_shows_updated_variables_first():
    scale = lucent.shared(2.0, name="scale")
    W = lucent.shared(np.ones(3), name="W")
    x = lt.dvector("x")
    f = lucent.function(
        [x], (scale * x).sum() + W.sum(), updates={W: W + x}, name="step", mode="FAST_COMPILE"
    )
    assert [v.name for v in f.get_shared()] == ["scale", "W"]
    view = SharedView(f)
    assert [r["name"] for r in view.rows] == ["W", "scale"]
    assert [r["updated"] for r in view.rows] == [True, False]
    assert "step" in view.title
    assert SharedView(lucent.function([x], x * 2, mode="FAST_COMPILE")).rows == []


@pytest.mark.parametrize(
    "argument, message",
    [
        (3, r"SharedView needs a SharedVariable, a list/tuple or dict of SharedVariables, "
            r"or a compiled lucent Function; got int: 3"),
        (np.ones(2), r"got ndarray"),
        ("W", r"got str: 'W'"),
    ],
)
def test_bad_argument(argument, message):
    with pytest.raises(TypeError, match=message):
        SharedView(argument)


def test_bad_items_name_their_position():
    W = lucent.shared(np.ones(2), name="W")
    with pytest.raises(TypeError, match=r"item 1 is TensorVariable"):
        SharedView([W, lt.dvector("x")])
    with pytest.raises(TypeError, match=r"'x' is ndarray"):
        SharedView({"W": W, "x": np.ones(2)})
    with pytest.raises(TypeError, match=r"str names as keys; got the key int"):
        SharedView({0: W})
    with pytest.raises(ValueError, match=r"history must be a number of points >= 1, got 0"):
        SharedView(W, history=0)
    with pytest.raises(ValueError, match=r"min_interval must be a number of seconds >= 0, got -1"):
        SharedView(W, min_interval=-1)


# --- following changes -------------------------------------------------------------------
def test_set_value_and_zero_update_the_rows():
    W = lucent.shared(np.ones(3), name="W")
    view = SharedView(W, min_interval=0)
    W.set_value(np.array([1.0, 2.0, 2.0]))
    (row,) = view.rows
    assert row["max"] == 2.0 and row["changes"] == 1 and view.updates == 1
    assert row["history"] == [pytest.approx(np.sqrt(3)), pytest.approx(3.0)]
    W.zero()
    assert view.rows[0]["max"] == 0.0 and view.updates == 2


def test_first_change_after_a_quiet_period_is_shown_at_once():
    W = lucent.shared(np.ones(3), name="W")
    view = SharedView(W, min_interval=3600)
    W.set_value(np.full(3, 5.0))
    assert view.rows[0]["max"] == 5.0 and view.updates == 1


@pytest.mark.parametrize("lucent_mode", ["FAST_COMPILE", "FAST_RUN"], indirect=True)
def test_function_updates_compiled_before_the_view(lucent_mode):
    W, x, f = _train_step(lucent_mode)  # compiled before the view exists
    buffer = W.get_value(borrow=True)
    view = SharedView(W, min_interval=0)
    expected = [np.linalg.norm(np.ones(4))]
    for step in range(3):
        f(np.full(4, float(step)))
        expected.append(np.linalg.norm(W.get_value()))
    if lucent_mode == "FAST_RUN":
        # The Numba path writes the update into the same buffer: the view must still see it.
        assert W.get_value(borrow=True) is buffer
    (row,) = view.rows
    np.testing.assert_allclose(row["history"], expected)
    np.testing.assert_allclose([row["min"], row["max"]], [W.get_value().min(), W.get_value().max()])
    assert row["changes"] == 3 and view.updates == 3


def test_function_compiled_after_the_view():
    W = lucent.shared(np.zeros(2), name="W")
    view = SharedView(W, min_interval=0)
    x = lt.dvector("x")
    g = lucent.function([x], x.sum(), updates={W: W + x}, mode="FAST_COMPILE")
    g(np.array([3.0, 4.0]))
    assert view.rows[0]["history"] == [0.0, 5.0]


def test_function_argument_follows_its_calls():
    W, x, f = _train_step("FAST_COMPILE")
    view = SharedView(f, min_interval=0)
    f(np.ones(4))
    assert view.rows[0]["mean"] == 0.5 and view.updates == 1


# --- throttling --------------------------------------------------------------------------
def test_many_quick_updates_keep_every_point_but_push_rarely():
    W, x, f = _train_step("FAST_COMPILE")
    view = SharedView(f, history=500, min_interval=3600)
    pushes = _pushes(view)
    for _ in range(200):
        f(np.full(4, 0.01))
    assert len(pushes) == 1  # the first change only; the rest waits
    assert view.updates == 1
    view.refresh()
    (row,) = view.rows
    assert view.updates == 200 and row["changes"] == 200
    assert len(row["history"]) == 201  # every change, plus the value at the start
    np.testing.assert_allclose(row["history"][-1], np.linalg.norm(W.get_value()))
    np.testing.assert_allclose(row["mean"], W.get_value().mean())
    assert len(pushes) == 2


def test_history_keeps_the_last_points():
    W = lucent.shared(0.0, name="W")
    view = SharedView(W, history=10, min_interval=3600)
    for k in range(1, 51):
        W.set_value(float(k))
    view.refresh()
    assert view.rows[0]["history"] == [float(k) for k in range(41, 51)]


def test_waiting_changes_are_pushed_when_the_cell_ends(shell):
    W, x, f = _train_step("FAST_COMPILE")
    view = SharedView(W, min_interval=3600)
    assert len(shell.events.callbacks["post_run_cell"]) == 1
    for _ in range(5):
        f(np.ones(4))
    assert view.updates == 1
    pushes = _pushes(view)
    shell.events.trigger("post_run_cell")
    assert view.updates == 5 and view.rows[0]["mean"] == pytest.approx(1 - 2.5)
    shell.events.trigger("post_run_cell")  # nothing waits: nothing is sent
    assert len(pushes) == 1
    view.close()
    assert shell.events.callbacks["post_run_cell"] == []


def test_throttle_pushes_at_most_every_interval():
    now = [100.0]
    pushed = []
    throttle = Throttle(lambda: pushed.append(now[0]), 0.5, clock=lambda: now[0])
    for _ in range(10):  # a change every 0.125 s
        throttle.changed()
        now[0] += 0.125
    assert pushed == [100.0, 100.5, 101.0] and throttle.pending
    throttle.flush_pending()
    assert len(pushed) == 4 and not throttle.pending
    throttle.flush_pending()
    assert len(pushed) == 4


# --- closing -------------------------------------------------------------------------
def test_close_stops_following():
    W, x, f = _train_step("FAST_COMPILE")
    view = SharedView(f, min_interval=0)
    f(np.ones(4))
    rows = view.rows
    view.close()
    f(np.ones(4))
    W.set_value(np.zeros(4))
    assert view.rows == rows and view.updates == 1
    assert view._changes == 1 and not view._watch.active


def test_generator_row_shows_its_state_and_what_it_drew():
    rng = lucent.shared(np.random.default_rng(5), name="rng")
    view = SharedView(rng)
    row = view.rows[0]
    assert row["kind"] == "generator" and row["bit_generator"] == "PCG64"
    assert row["drawn"] == 0 and row["history"] == [None]
    first_digest = row["digest"]
    g = rng.get_value()
    g.standard_normal(1000)
    g.integers(0, 10, size=7)  # one 64-bit word per bounded integer here
    rng.set_value(g)
    view.refresh()
    row = view.rows[0]
    replay = np.random.default_rng(5)
    words = 0
    before = replay.bit_generator.state["state"]["state"]
    replay.standard_normal(1000)
    replay.integers(0, 10, size=7)
    # Count the words by stepping a copy of the generator one word at a time.
    probe = np.random.default_rng(5)
    while probe.bit_generator.state["state"]["state"] != replay.bit_generator.state["state"]["state"]:
        probe.bit_generator.random_raw()
        words += 1
    assert before != replay.bit_generator.state["state"]["state"]
    assert row["drawn"] == words and row["digest"] != first_digest
    assert f"{words:,} 64-bit words drawn" in row["text"]
    json.dumps(view.rows)


def test_generator_of_another_kind_shows_no_count():
    rng = lucent.shared(np.random.Generator(np.random.MT19937(3)), name="mt")
    view = SharedView(rng)
    g = rng.get_value()
    g.random(3)
    rng.set_value(g)
    view.refresh()
    row = view.rows[0]
    assert row["bit_generator"] == "MT19937" and row["drawn"] is None and "drawn" not in row["text"]
