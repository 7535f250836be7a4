"""Tests of GraphView opening inner graphs (lucent/widgets/inner_graphs.py, inner_navigation.py).

A loop (``scan``), a nested loop, an ``OpFromGraph`` and an ``ifelse``: the
box that opens is marked, opening gives the inner nodes with the values of
the last step of the last call (checked against NumPy), closing returns to
the outer graph. With a profile, the opened level shows its nested profile
(``fn.profile.inner_profiles``) and fills by shares within that inner graph.
"""

import html

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode

pytest.importorskip("anywidget")
from lucent.graph import dot as dotmod  # noqa: E402

if not dotmod.layout_programs():
    pytest.skip("GraphView draws with a Graphviz layout program", allow_module_level=True)

from lucent.widgets import GraphView  # noqa: E402
from lucent.widgets.graph_view import ramp_color  # noqa: E402

PY = Mode(linker="py", optimizer="fast_run")


def _openable(view):
    return [i for i, n in view.nodes.items() if n.get("opens")]


def _by_op(view, op_class):
    return [i for i, n in view.nodes.items() if n.get("op_class") == op_class]


def _mean(view, ident, k=0):
    return view.nodes[ident]["outputs"][k]["summary"]["mean"]


def _rnn(mode=None):
    W, X, h0 = lt.dmatrix("W"), lt.dmatrix("X"), lt.dvector("h0")
    hs = lucent.scan(lambda x_t, h: lt.tanh(lt.dot(W, h) + x_t), sequences=[X], outputs_info=[h0],
                     name="rnn", return_updates=False)
    return lucent.function([W, X, h0], hs[-1], mode=mode, name="rnn")


def _rnn_values():
    rng = np.random.default_rng(0)
    return rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(5, 3)), rng.normal(size=3)


def test_a_scan_is_drawn_as_a_box_that_opens():
    view = GraphView(_rnn())
    (sid,) = _openable(view)
    assert view.nodes[sid]["opens"] == 'scan "rnn"'
    svg = html.unescape(view.svg)
    assert "lucent-opens" in svg and "⊞ opens: loop body" in svg
    assert view.inner_path == [] and view.inner_step is None


@pytest.mark.parametrize("mode", [None, PY], ids=["numba", "python"])
def test_opening_a_scan_shows_the_last_step_values_of_its_body(mode):
    fn = _rnn(mode)
    view = GraphView(fn, min_interval=0)
    Wv, Xv, h0v = _rnn_values()
    fn(Wv, Xv, h0v)
    (sid,) = _openable(view)
    assert view.open_inner(sid) == [sid]
    assert view.crumbs == ["outer graph", 'scan "rnn"']
    assert view.id_prefix == f"{sid}/"
    assert all(i.startswith(f"{sid}/") for i in view.nodes)
    assert view.inner_step == (4, 5)
    assert "t = 4" in view.inner_note and "t = 4" in view.status
    # NumPy: the state before the last step, and the last step's tanh.
    h = h0v
    for t in range(4):
        h = np.tanh(Wv @ h + Xv[t])
    last = np.tanh(Wv @ h + Xv[4])
    (tanh_id,) = [i for i, n in view.nodes.items() if n["kind"] == "apply" and "tanh" in n["label"].lower()]
    assert _mean(view, tanh_id) == pytest.approx(last.mean())
    labels = {n["label"]: i for i, n in view.nodes.items() if n["kind"] == "input"}
    assert "X[t]" in labels and "W" in labels
    assert _mean(view, labels["X[t]"]) == pytest.approx(Xv[4].mean())
    assert view.nodes[tanh_id]["created_at"] and view.nodes[tanh_id]["dprint"]
    # A new call updates the opened level.
    fn(Wv, Xv * 0, h0v)
    h = h0v
    for t in range(5):
        h = np.tanh(Wv @ h)
    assert _mean(view, tanh_id) == pytest.approx(h.mean())
    assert view.close_inner() == []
    assert view.crumbs == ["outer graph"] and sid in view.nodes and view.id_prefix == ""


def test_selecting_an_inner_id_opens_its_graph_and_an_outer_id_closes_it():
    fn = _rnn(PY)
    view = GraphView(fn, min_interval=0)
    fn(*_rnn_values())
    (sid,) = _openable(view)
    inner = f"{sid}/n0"
    assert view.select(inner) == inner
    assert view.inner_path == [sid] and view.selected_node is not None
    view.select(sid)
    assert view.inner_path == [] and view.selected == sid
    with pytest.raises(ValueError, match="inner graph to open"):
        view.open_inner("v0")


def test_a_pinned_step_shows_that_step():
    fn = _rnn(PY)
    view = GraphView(fn, min_interval=0)
    Wv, Xv, h0v = _rnn_values()
    fn(Wv, Xv, h0v)
    (sid,) = _openable(view)
    view.open_inner(sid, step=1)
    assert view.inner_step == (1, 5)
    labels = {n["label"]: i for i, n in view.nodes.items() if n["kind"] == "input"}
    assert _mean(view, labels["X[t]"]) == pytest.approx(Xv[1].mean())
    # closed from the breadcrumb and opened again by a click (the browser sets inner_path):
    # the pin is gone with the level, the box opens at the last step as it says
    view.inner_path = []
    view.inner_path = [sid]
    assert view.inner_step == (4, 5)
    assert _mean(view, labels["X[t]"]) == pytest.approx(Xv[4].mean())


def test_a_nested_scan_opens_twice():
    A = lt.dmatrix("A")
    x0 = lt.dvector("x0")

    def outer_step(a_row, acc):
        inner = lucent.scan(lambda y: y * 2.0 + a_row, outputs_info=[acc], n_steps=3, name="inner",
                            return_updates=False)
        return inner[-1]

    ys = lucent.scan(outer_step, sequences=[A], outputs_info=[x0], name="outer", return_updates=False)
    fn = lucent.function([A, x0], ys[-1], mode=PY)
    view = GraphView(fn, min_interval=0)
    Av = np.arange(6.0).reshape(3, 2) / 10
    x0v = np.array([1.0, -1.0])
    fn(Av, x0v)
    (outer_id,) = _openable(view)
    view.open_inner(outer_id)
    assert view.inner_step == (2, 3)
    (inner_id,) = _openable(view)
    assert view.nodes[inner_id]["opens"] == 'scan "inner"'
    view.open_inner(inner_id)
    assert view.inner_path == [outer_id, inner_id.split("/")[-1]]
    assert view.crumbs == ["outer graph", 'scan "outer"', 'scan "inner"']
    assert view.inner_step == (2, 3)
    # NumPy: the outer loop's last step starts from acc after two outer steps;
    # the inner loop's last step reads y after two inner steps.
    acc = x0v
    for t in range(2):
        for _ in range(3):
            acc = acc * 2.0 + Av[t]
    y = acc
    for _ in range(2):
        y = y * 2.0 + Av[2]
    inputs = [i for i, n in view.nodes.items() if n["kind"] == "input"]
    means = sorted(_mean(view, i) for i in inputs)
    assert any(m == pytest.approx(y.mean()) for m in means), (means, y)
    (out_id,) = [i for i, n in view.nodes.items() if n["kind"] == "output"][:1]
    assert _mean(view, out_id) == pytest.approx((y * 2.0 + Av[2]).mean())
    view.close_inner()
    assert view.inner_path == [outer_id]
    view.close_inner()
    assert view.inner_path == [] and outer_id in view.nodes


def test_an_op_from_graph_opens_with_the_values_of_its_call():
    from lucent.compile.builders import OpFromGraph

    a, b = lt.dvector("a"), lt.dvector("b")
    op = OpFromGraph([a, b], [lt.exp(a) * b + 1.0], inline=False, name="expmul")
    x, y = lt.dvector("x"), lt.dvector("y")
    fn = lucent.function([x, y], op(x, y).sum(), mode=PY)
    view = GraphView(fn, min_interval=0)
    xv, yv = np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    fn(xv, yv)
    (oid,) = _openable(view)
    assert "expmul" in view.nodes[oid]["opens"]
    view.open_inner(oid)
    assert view.inner_step is None
    labels = {n["label"]: i for i, n in view.nodes.items() if n["kind"] == "input"}
    assert set(labels) == {"x", "y"}
    (out_id,) = [i for i, n in view.nodes.items() if n["kind"] == "output"]
    assert _mean(view, out_id) == pytest.approx((np.exp(xv) * yv + 1.0).mean())
    assert "last replayed call" in view.inner_note


def test_an_ifelse_marks_the_branch_that_ran_and_greys_the_other():
    from lucent.ifelse import ifelse

    c, x = lt.dscalar("c"), lt.dvector("x")
    out = ifelse(c > 0, lt.exp(x).sum(), lt.log1p(x * x).sum())
    fn = lucent.function([c, x], out, mode=Mode(linker="py", optimizer=None))
    view = GraphView(fn, min_interval=0)
    assert _openable(view) == []
    fn(1.0, np.array([0.5, 1.0]))
    (if_id,) = _by_op(view, "IfElse")
    branch = view.nodes[if_id]["branch"]
    assert branch["taken"] == "then" and branch["not_run"]
    assert "ran: then branch" in html.unescape(view.svg)
    skipped = [i for i, n in view.nodes.items() if n.get("not_run")]
    assert skipped and all(view.nodes[i]["outputs"][0]["summary"] is None for i in skipped)
    assert any("Log1p" in view.nodes[i]["op"] or "log1p" in view.nodes[i]["label"] for i in skipped)
    fn(-1.0, np.array([0.5, 1.0]))
    assert view.nodes[if_id]["branch"]["taken"] == "else"


def _ramp_fills(view):
    """The ``color_by`` fills in the drawing shown: the ramp colours of the shown nodes' time shares."""
    svg = html.unescape(view.svg).lower()
    entries = [n["profile"] for n in view.nodes.values() if n.get("profile")]
    top = max((p["time_median"] for p in entries), default=0)
    colours = [ramp_color(p["time_median"] / top) for p in entries] if top > 0 else []
    return [c for c in colours if c in svg]


def _rnn_calls(fn, calls=3, steps=6):
    rng = np.random.default_rng(1)
    for _ in range(calls):
        fn(rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(steps, 3)), rng.normal(size=3))


def _inner_tanh(view):
    (tanh_id,) = [i for i, n in view.nodes.items() if n["kind"] == "apply" and "tanh" in n["label"].lower()]
    return tanh_id


def test_an_opened_loop_of_a_profiled_function_shows_its_nested_profile():
    W, X, h0 = lt.dmatrix("W"), lt.dmatrix("X"), lt.dvector("h0")
    hs = lucent.scan(lambda x_t, h: lt.tanh(lt.dot(W, h) + x_t), sequences=[X], outputs_info=[h0],
                     name="rnn", return_updates=False)
    fn = lucent.function([W, X, h0], hs[-1], mode="FAST_RUN", name="rnn", profile=True)
    _rnn_calls(fn, calls=3, steps=6)
    view = GraphView(fn, min_interval=0)
    (sid,) = _openable(view)
    assert view.nodes[sid]["profile"]["runs"] == 3
    scan_node = view.drawing.objects[sid]
    child = fn.profile.inner_profiles[scan_node]
    assert child.calls == 3 and child.steps == 18
    view.open_inner(sid)
    tanh_id = _inner_tanh(view)
    entry = view.nodes[tanh_id]["profile"]
    assert entry is not None and entry["time"] > 0
    # the child's own numbers, for the profiled copy of the drawn Tanh node
    (profiled,) = [n for n in child.node_runs if "tanh" in str(n.op).lower()]
    assert entry["runs"] == child.node_runs[profiled] == 18
    assert entry["time"] == pytest.approx(child.node_time[profiled])
    assert entry["calls"] == 3 and entry["scope"] == 'scan "rnn"'
    assert "18 over 3 calls" in entry["runs_text"] and "6 steps" in entry["runs_text"]
    # shares within the inner graph: the inner nodes' percentages add up to 100
    shares = [n["profile"]["time_percent"] for n in view.nodes.values() if n.get("profile")]
    assert sum(shares) == pytest.approx(100.0)
    assert _ramp_fills(view) == []  # no fill until asked
    view.color_by = "time"
    assert _ramp_fills(view) and ramp_color(1.0) in html.unescape(view.svg).lower()  # the slowest inner node
    assert 'fill: share of time within scan "rnn"' in view.status
    view.color_by = "bytes"
    assert "share of bytes" in view.status
    view.close_inner()
    assert view.nodes[sid]["profile"]["runs"] == 3 and "scope" not in view.nodes[sid]["profile"]


def test_an_unprofiled_function_opens_its_loop_without_profile_entries():
    fn = _rnn()
    _rnn_calls(fn)
    view = GraphView(fn, min_interval=0)
    (sid,) = _openable(view)
    view.open_inner(sid)
    assert all(n["profile"] is None for n in view.nodes.values())
    assert view.nodes[_inner_tanh(view)]["profile"] is None
    assert not view.has_profile and ramp_color(1.0) not in html.unescape(view.svg).lower()
    assert "fill" not in view.status


def test_a_nested_loop_shows_the_grandchild_profile():
    A, x0 = lt.dmatrix("A"), lt.dvector("x0")

    def outer_step(a_row, acc):
        inner = lucent.scan(lambda y: lt.tanh(y * 2.0 + a_row), outputs_info=[acc], n_steps=3, name="inner",
                            return_updates=False)
        return inner[-1]

    ys = lucent.scan(outer_step, sequences=[A], outputs_info=[x0], name="outer", return_updates=False)
    fn = lucent.function([A, x0], ys[-1], mode=PY, profile=True)
    Av, x0v = np.arange(8.0).reshape(4, 2) / 10, np.array([1.0, -1.0])
    fn(Av, x0v)
    fn(Av, x0v)
    view = GraphView(fn, min_interval=0, color_by="time")
    (outer_id,) = _openable(view)
    view.open_inner(outer_id)
    (inner_id,) = _openable(view)
    assert view.nodes[inner_id]["profile"]["runs"] == 4 * 2  # the inner loop runs once per outer step
    view.open_inner(inner_id)
    child = fn.profile.inner_profiles[view.drawing.objects[outer_id]]
    (grandchild,) = child.inner_profiles.values()
    entries = [n["profile"] for n in view.nodes.values() if n["kind"] == "apply"]
    assert entries and all(p is not None and p["scope"] == 'scan "inner"' for p in entries)
    assert {p["runs"] for p in entries} == {3 * 4 * 2} == set(grandchild.node_runs.values())
    assert _ramp_fills(view) and 'within scan "inner"' in view.status


def test_an_op_from_graph_of_a_profiled_function_shows_its_inner_profile():
    from lucent.compile.builders import OpFromGraph

    a, b = lt.dvector("a"), lt.dvector("b")
    op = OpFromGraph([a, b], [lt.exp(a) * b + 1.0], inline=False, name="expmul")
    x, y = lt.dvector("x"), lt.dvector("y")
    fn = lucent.function([x, y], op(x, y).sum(), mode=PY, profile=True)
    fn(np.ones(3), np.ones(3))
    fn(np.ones(3), np.ones(3))
    view = GraphView(fn, min_interval=0)
    (oid,) = _openable(view)
    view.open_inner(oid)
    entries = [n["profile"] for n in view.nodes.values() if n["kind"] == "apply"]
    assert entries and all(p is not None and p["runs"] == 2 for p in entries)
    assert "2 over 2 calls" in entries[0]["runs_text"] and "1 run in the last" in entries[0]["runs_text"]
