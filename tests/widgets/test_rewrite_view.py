"""Tests of lucent/widgets/rewrite_view.py: stepping through a function's rewrites.

The widget is made without a kernel (ipywidgets 8 allows it); what the
browser receives is the synced traits, so the tests read them, and move
the view the way its buttons and slider do (``next``/``prev`` or setting
``index``).
"""

import pathlib
import types

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.graph.fg import FunctionGraph

pytest.importorskip("anywidget")
from lucent.graph import dot as dotmod  # noqa: E402

if not dotmod.layout_programs():
    pytest.skip("RewriteView draws with a Graphviz layout program ('dot' or 'graphviz-pure')", allow_module_level=True)

from lucent.widgets import RewriteView  # noqa: E402
from lucent.widgets.rewrite_view import ADDED, REMOVED, REWIRED  # noqa: E402

#: FAST_RUN's rewrites on the Python path: the full rewrite history without compiling kernels.
REWRITTEN_PY = Mode(linker="py", optimizer="fast_run")


def _training_step():
    """A 2-layer MLP's training step: loss and SGD updates (about 90 replacements)."""
    X, Y = lt.dmatrix("X"), lt.dmatrix("Y")
    rng = np.random.default_rng(0)
    W1 = lucent.shared(rng.normal(size=(3, 4)), name="W1")
    W2 = lucent.shared(rng.normal(size=(4, 2)), name="W2")
    b1 = lucent.shared(np.zeros(4), name="b1")
    h = lt.tanh(lt.dot(X, W1) + b1)
    loss = ((lt.dot(h, W2) - Y) ** 2).mean()
    params = [W1, W2, b1]
    grads = lucent.grad(loss, params)
    return lucent.function([X, Y], loss, updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)],
                           mode=REWRITTEN_PY, name="train")


@pytest.fixture(scope="module")
def train():
    return _training_step()


def _first(view, predicate):
    return next(s["step"] for s in view.steps if predicate(s))


def test_stepping_with_next_prev_and_the_slider(train):
    view = RewriteView(train)
    history = train.maker.fgraph.rewrite_history
    shown = [r for r in history if not r.reverted]
    assert [s["step"] for s in view.steps] == [r.step for r in shown] and len(shown) >= 10
    assert view.title == "Rewrites of 'train'"
    assert (view.index, view.step, view.record) == (0, 1, history.records[0])
    view.next()
    view.next()
    assert view.record is shown[2] and view.detail["step"] == shown[2].step == view.step
    view.prev()
    assert view.record is shown[1]
    view.prev()
    view.prev()  # stays on the first
    assert view.index == 0
    view.index = 10_000  # the slider past the end stays on the last
    assert view.record is shown[-1]
    view.next()
    assert view.record is shown[-1]
    view.go(5)
    record = history.records[4]
    assert view.record is record and view.step == 5 and view.steps[view.index]["rewrite"] == record.rewrite
    # The counts are those of the whole graph just before and just after the replacement.
    assert view.detail["before_nodes"] == len(history.nodes_at(record.first_event))
    assert view.detail["after_nodes"] == len(history.nodes_at(record.end_event))
    # Going back shows the drawings made before, without laying them out again.
    drawn = (view.before_html, view.after_html)
    view.next()
    view._render_step = None  # would fail if called
    view.prev()
    assert (view.before_html, view.after_html) == drawn and view.step == 5
    with pytest.raises(ValueError, match="step must be a whole number from 1 to"):
        view.go(0)
    with pytest.raises(ValueError, match="step must be"):
        view.go(len(history) + 1)
    view.close()


def test_undone_replacements_are_left_out_unless_asked_for(train):
    history = train.maker.fgraph.rewrite_history
    undone = [r for r in history if r.reverted]
    assert undone, "the training step's in-place rewrites try some changes that are then undone"
    view = RewriteView(train)
    assert f"{len(undone)} undone replacement(s) not shown" in view.note
    with pytest.raises(ValueError, match=f"step {undone[0].step} was undone"):
        view.go(undone[0].step)
    everything = RewriteView(train, undone=True, step=undone[0].step)
    assert len(everything.steps) == len(history) and everything.record is undone[0]
    assert everything.steps[everything.index]["verdict"] == "undone" and "undone" not in everything.note


def test_before_and_after_are_drawn_with_the_changed_nodes_marked(train):
    view = RewriteView(train)
    fused = _first(view, lambda s: s["rewrite"] == "elemwise_fusion")
    view.go(fused)
    d = view.detail
    assert d["removed"] >= 1 and d["added"] >= 1
    assert view.before_html.startswith("<svg") and view.after_html.startswith("<svg")
    assert REMOVED.fill in view.before_html and REMOVED.fill not in view.after_html
    assert ADDED.fill in view.after_html and "Composite" in view.after_html
    assert "removed" in view.before_html and "new" in view.after_html
    # A replacement that rewires consumers outlines them on both sides.
    if d["rewired"]:
        assert REWIRED.outline in view.before_html and REWIRED.outline in view.after_html
    # The neighbourhood is drawn, not the whole graph; output boxes only where a graph output changed.
    assert view.before_html.count("lucent&#45;apply") < d["before_nodes"]
    history = train.maker.fgraph.rewrite_history

    def changes_an_output(record):
        return any(node == "output" for node, *_ in history.events[record.first_event:record.end_event])

    inner = next(r for r in history if not changes_an_output(r))
    outer = next(r for r in history if changes_an_output(r))
    view.go(inner.step)
    assert "lucent&#45;output" not in view.before_html + view.after_html
    view.go(outer.step)
    assert "lucent&#45;output" in view.before_html and "lucent&#45;output" in view.after_html


def test_whole_graph_before_and_after_in_one_click(train):
    view = RewriteView(train, step=3)
    assert view.step == 3
    view.show_whole()
    history = train.maker.fgraph.rewrite_history
    d = view.detail
    assert d["whole"] and d["before_nodes"] == len(history.nodes_at(0))
    assert d["after_nodes"] == len(train.maker.fgraph.apply_nodes) < d["before_nodes"]
    assert d["removed"] > 0 and REMOVED.fill in view.before_html and ADDED.fill in view.after_html
    assert view.before_html.count("lucent&#45;apply") == d["before_nodes"]
    assert "update W1" in view.after_html  # the compiled graph keeps its update labels
    view.next()  # stepping leaves the whole-graph view, from where it was
    assert not view.whole and view.index == 3
    view.whole = True  # the toggle button sets the trait
    view.show_whole(False)
    assert not view.detail["whole"]


def test_rows_that_print_alike_say_what_changed(train):
    view = RewriteView(train)
    alike = [s for s in view.steps if s["replaced"] == s["by"]]
    assert alike and all(s["changes"] for s in alike)
    kinds = " ".join(line for s in alike for line in s["changes"])
    assert "merged a duplicate" in kinds and "made in place" in kinds
    assert all(s["verdict"] == "" for s in view.steps)  # not DebugMode: no verdicts
    assert "what changed" in view._repr_html_()


def test_without_a_layout_program_the_steps_are_text(monkeypatch, train):
    monkeypatch.setattr(dotmod, "_find_program", lambda name: None)
    view = RewriteView(train, step=2)
    assert "<svg" not in view.before_html and "<pre>" in view.before_html
    assert "No Graphviz layout program is installed" in view.after_html


def test_bad_input_and_graphs_that_were_not_rewritten():
    with pytest.raises(TypeError, match="RewriteView needs a compiled Function or a FunctionGraph; got str"):
        RewriteView("train")
    x = lt.dvector("x")
    view = RewriteView(FunctionGraph([x], [lt.exp(x)]))
    assert view.steps == [] and view.step == 0 and "not rewritten" in view.note
    view.next()  # harmless
    fn = lucent.function([x], lt.exp(x), mode=Mode(linker="py", optimizer="fast_run"))
    empty = RewriteView(fn)
    assert empty.steps == [] and empty.note == "No rewrite changed the graph."


def test_controls_have_stable_class_names():
    js = (pathlib.Path(lucent.__file__).parent / "widgets" / "js" / "rewrite_view.js").read_text()
    for name in ("lucent-rw-prev", "lucent-rw-next", "lucent-rw-slider", "lucent-rw-whole",
                 "lucent-rw-before", "lucent-rw-after", "lucent-rw-graph", "lucent-rw-inner"):
        assert f'"{name}' in js or f"`{name}" in js or f" {name}" in js, name


# --- inner graphs -----------------------------------------------------------------------

def _nested_loops():
    """A loop whose body holds a loop: three graphs to step through."""
    from lucent.scan import scan

    x0 = lt.dscalar("x0")

    def outer_step(acc):
        inner = scan(lambda a: lt.exp(a * 0.25) * 2.0 * 5.0, outputs_info=[acc], n_steps=3,
                     name="inner", return_updates=False)
        return inner[-1] + 0.31

    out = scan(outer_step, outputs_info=[x0], n_steps=2, name="outer", return_updates=False)
    return lucent.function([x0], out[-1], mode=REWRITTEN_PY, name="loops")


def test_the_graph_selector_steps_through_an_inner_graph():
    f = _nested_loops()
    view = RewriteView(f)
    history = f.maker.fgraph.rewrite_history
    labels = ["outer graph", 'scan "outer" body', 'scan "outer" body > scan "inner" body']
    assert view.graph_labels == labels and view.graph == "outer graph" and view.graph_index == 0
    sizes = [len(history)] + [len(h) for _, h in history.inner_histories()]
    assert [g["label"] for g in view.graphs] == labels and [g["rewrites"] for g in view.graphs] == sizes
    # the step that brought in the outer loop's rewritten body points at it
    [into] = [s for s in view.steps if s["inner"] >= 0]
    assert into["rewrite"] == "scan_inner_graph" and into["inner"] == 1
    outer_before = view.before_html

    view.graph = 'scan "outer" body'  # as the selector does (it sets graph_index)
    _, body = history.inner_histories()[0]
    assert view.graph_index == 1 and view.history is body and view.index == 0
    assert len(view.steps) == len(body) and view.steps[0]["rewrite"] == body.records[0].rewrite
    assert "scan \"outer\" body" in view.note and "of the scan \"outer\" body" in repr(view)
    assert view.before_html and view.before_html != outer_before and view.detail["step"] == 1
    view.next()
    assert view.step == 2 and view.detail["step"] == 2 and view.before_html and view.after_html
    view.show_whole()
    assert view.detail["whole"] and view.detail["after_nodes"] == len(body.fgraph.apply_nodes)
    [nested] = [s for s in view.steps if s["inner"] >= 0]
    assert nested["inner"] == 2  # the body's own step into the nested loop's body

    view.show_inner(1)  # the nested loop's body
    _, inner_body = history.inner_histories()[1]
    assert view.graph == labels[2] and not view.whole and view.record is inner_body.records[0]
    assert "elemwise_fusion" in [s["rewrite"] for s in view.steps]
    view.graph_index = 0  # back to the function's graph, as the selector does
    assert view.history is history and view.before_html == outer_before
    with pytest.raises(ValueError, match="no graph"):
        view.graph = "scan nothing"
    with pytest.raises(ValueError, match="from 0 to 1"):
        view.show_inner(2)
    assert RewriteView(f, graph=2, step=1).record is inner_body.records[0]


def test_without_inner_graphs_there_is_only_the_outer_graph(train):
    view = RewriteView(train)
    assert view.graph_labels == ["outer graph"] and all(s["inner"] == -1 for s in view.steps)
    with pytest.raises(ValueError, match="no rewritten inner graph"):
        view.show_inner(0)


# --- DebugMode --------------------------------------------------------------------------

@pytest.fixture
def shell(monkeypatch):
    """An IPython event manager standing in for a running kernel's shell."""
    IPython = pytest.importorskip("IPython")
    from IPython.core.events import EventManager, available_events

    fake = types.SimpleNamespace()
    fake.events = EventManager(fake, available_events)
    monkeypatch.setattr(IPython, "get_ipython", lambda: fake)
    return fake


def test_debugmode_says_which_replacement_kept_the_values(shell):
    pytest.importorskip("numba")
    from tests.debugmode.test_rewrite_check import _bad_mode

    x = lt.dvector("x")
    fn = lucent.function([x], (lt.exp(x) * 3).sum(), mode=_bad_mode("report"))
    view = RewriteView(fn)
    assert {s["verdict"] for s in view.steps} == {"not yet"}
    assert "call the function" in view.note
    fn(np.array([0.5, 2.0]))
    shell.events.trigger("post_run_cell", None)  # the cell that called it finished
    verdicts = {s["rewrite"]: s["verdict"] for s in view.steps}
    assert verdicts.pop("exp_becomes_square") == "changed"
    assert set(verdicts.values()) == {"kept"}
    bad = _first(view, lambda s: s["rewrite"] == "exp_becomes_square")
    assert f"changed the values on the last call: step {bad}" in view.note
    view.close()
    assert view._cell_hook is None or not view._cell_hook.active
