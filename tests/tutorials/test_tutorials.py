"""Every tutorial runs top to bottom headlessly (nbclient), and says what it promises.

Each test reads the outputs of cells tagged in the notebook (see
``execute.py``); the browser tests (``test_tutorials_browser.py``) then
check the same notebooks render in JupyterLab.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.tutorials.execute import TUTORIALS, data, errors, text, widget_models

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NAMES = [p.stem for p in sorted(TUTORIALS.glob("*.ipynb"))]


def test_there_are_five_tutorials_with_prose():
    import nbformat

    assert len(NAMES) >= 5
    for name in NAMES:
        nb = nbformat.read(TUTORIALS / f"{name}.ipynb", as_version=4)
        prose = sum(len(c.source) for c in nb.cells if c.cell_type == "markdown")
        assert prose > 800, f"{name} has little prose ({prose} characters)"
        # Committed with their outputs, so they read well on a code host: without errors,
        # and without paths of the machine that ran them.
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert sum(1 for c in code if c.get("outputs")) >= len(code) // 2, (
            f"{name} is committed without its outputs; run it and save it"
        )
        outputs = [o for c in code for o in c.get("outputs", [])]
        assert not [o for o in outputs if o.output_type == "error"], f"{name} is saved with an error"
        text = nbformat.writes(nb)
        assert "/tmp/" not in text and str(TUTORIALS.parent) not in text, f"{name} holds a local path"


@pytest.mark.parametrize("name", NAMES)
def test_runs_without_errors(executed, name):
    assert errors(executed(name)) == []


def _numbers(s):
    return [float(v) for v in re.findall(r"-?\d+\.?\d*(?:e[-+]?\d+)?", s)]


def _models_of(nb, tag):
    """The saved widget states of the widgets the tagged cell displayed (and their children)."""
    models = widget_models(nb)
    out = []
    todo = [d["model_id"] for d in data(nb, tag, WIDGET_VIEW)]
    while todo:
        mid = todo.pop()
        state = models.get(mid)
        if state is None:
            continue
        out.append(state)
        for child in state.get("children", []):
            todo.append(child.replace("IPY_MODEL_", ""))
    return out


# --- 1. quickstart -------------------------------------------------------------------
def test_quickstart_seed_examples(executed):
    nb = executed("01_quickstart")
    assert text(nb, "add-scalars") == "array(5.)"
    np.testing.assert_allclose(
        _numbers(text(nb, "logistic")), [0.5, 0.73105858, 0.26894142, 0.11920292], rtol=1e-6
    )
    assert _numbers(text(nb, "three-outputs")) == [1, 0, -1, -2, 1, 0, 1, 2, 1, 0, 1, 4]
    assert _numbers(text(nb, "defaults")) == [68, 70, 33, 34, 33]
    assert text(nb, "missing-input").strip() == "Missing required input: y"
    assert _numbers(text(nb, "accumulator")) == [0, 1, 301, 2]
    assert text(nb, "decrementor") == "array(0)"
    assert _numbers(text(nb, "givens")) == [7, 0]
    assert _numbers(text(nb, "borrow")) == [2, 2, 2, 2, 2, 2]
    assert text(nb, "dprint").splitlines() == [
        "Add [id A] <TensorType(float64, ())>",
        " |x [id B] <TensorType(float64, ())>",
        " |y [id C] <TensorType(float64, ())>",
    ]


def test_quickstart_variables_and_functions_display_as_graphs(executed):
    nb = executed("01_quickstart")
    (variable_html,) = data(nb, "show-variable", "text/html")
    assert "<svg" in variable_html
    (function_html,) = data(nb, "show-function", "text/html")
    assert "<svg" in function_html
    # the terminal still gets text
    assert text(nb, "show-function").startswith("<Function(a, b)")


# --- 2. debugging ----------------------------------------------------------------------
def test_debugging_finds_the_broken_kernel(executed):
    nb = executed("02_debugging_with_debugmode")
    symptom = text(nb, "symptom").split()
    assert symptom[-1] == "inf" and np.isfinite(float(symptom[0]))
    report = text(nb, "report-text")
    assert "BadThunkOutput" in report and "MySoftplus" in report
    assert "numba" in report.lower()
    fixed = text(nb, "fixed").split()
    assert fixed[0] == "True"
    assert float(fixed[1]) == pytest.approx(np.logaddexp(0, 0.5) + np.logaddexp(0, 1) + 800 - 0.5 * 801.5)


def test_debugging_graph_view_shows_the_last_values(executed):
    nb = executed("02_debugging_with_debugmode")
    assert text(nb, "graph-values").strip() == "MySoftplus | NaN: 1 | max: 800.0"
    (state,) = [s for s in _models_of(nb, "graph-view") if "svg" in s]
    assert "MySoftplus" in state["svg"]
    assert state["selected"] and state["nodes"][state["selected"]]["label"] == "MySoftplus"


def test_debugging_report_view_links_the_problem_to_its_node(executed):
    nb = executed("02_debugging_with_debugmode")
    states = _models_of(nb, "report-view")
    blob = json.dumps(states)
    assert "BadThunkOutput" in blob and "MySoftplus" in blob
    assert any("<svg" in s.get("svg", "") for s in states)


# --- 3. profiling -----------------------------------------------------------------------
def test_profiling_tutorial(executed):
    nb = executed("03_memory_profiling")
    losses = _numbers(text(nb, "losses"))
    assert len(losses) == 5 and losses[-1] < losses[0]
    summary = text(nb, "summary")
    peak_small = int(re.search(r"peak (\d+) bytes", summary).group(1))
    peak_big = int(re.search(r"batch of 1024: (\d+) bytes", text(nb, "bigger-batch")).group(1))
    assert peak_big > 2 * peak_small
    assert "MLP training step" in summary
    assert data(nb, "profile-view", WIDGET_VIEW)


# --- 4. %%graph and SharedView -------------------------------------------------------
def test_graph_magic_training_tutorial(executed):
    nb = executed("04_training_with_graph_magic")
    loss = float(re.search(r"loss after 200 steps: ([\d.]+)", text(nb, "train-loop")).group(1))
    assert loss < 0.3
    accuracy = float(re.search(r"training accuracy: ([\d.]+)", text(nb, "accuracy")).group(1))
    assert accuracy > 0.9
    assert data(nb, "graph-cell", WIDGET_VIEW), "%%graph displays the function's GraphView"
    assert data(nb, "predict-cell", WIDGET_VIEW)
    (panel,) = _models_of(nb, "shared-view")
    rows = {row["name"]: row for row in panel["rows"]}
    assert set(rows) == {"W", "b"}
    printed_w = _numbers(text(nb, "train-loop").split("W =")[1])
    assert rows["W"]["norm"] == pytest.approx(np.linalg.norm(printed_w), abs=0.02)
    assert panel["updates"] >= 400  # 200 steps x 2 variables, seen without re-running the cell
    assert len(rows["W"]["history"]) > 50


# --- 5. a NaN inside a loop -------------------------------------------------------------
def test_recurrent_tutorial_finds_the_step_and_the_inner_node(executed):
    nb = executed("05_debugging_a_recurrent_model")
    symptom = text(nb, "symptom")
    losses = _numbers(symptom.split("losses:")[1].split("\n")[0].replace("nan", ""))
    assert len(losses) >= 3 and losses == sorted(losses, reverse=True), losses  # down, then nan
    assert re.search(r"the loss is nan at training step (\d+); W finite: True", symptom)

    guarded = text(nb, "nanguard")
    where = re.search(r'where: scan "rnn", step (\d+): (.*)', guarded)
    assert where, guarded
    step = int(where.group(1))
    assert 0 < step < 60 and "log" in where.group(2).lower() and "In [" in where.group(2)
    assert "unchanged: True" in guarded

    report = text(nb, "report-text")
    assert report.startswith(f'scan "rnn", step {step}: ')
    assert f"loop: rnn | step: {step} | inner node: " in report

    states = _models_of(nb, "report-view")
    loop_views = [s for s in states if s.get("inner_path")]
    assert loop_views, "DebugReportView shows no opened loop"
    assert any(f"step t = {step}" in s.get("inner_note", "") for s in loop_views)
    assert any(s.get("selected", "").startswith(s["inner_path"][-1] + "/") for s in loop_views)

    (view,) = [s for s in _models_of(nb, "graph-view") if "svg" in s]
    assert view["inner_path"] and view["crumbs"][-1] == 'scan "rnn"'
    assert "Tanh" in view["svg"] or "tanh" in view["svg"]
    assert f"step t = {step} (pinned" in text(nb, "inner-values")
    rate = float(re.search(r"rate at that step: (-?[\d.e-]+)", text(nb, "inner-values")).group(1))
    assert rate < 0

    profile = text(nb, "profile")
    assert "rnn" in profile and "steps" in profile
    assert data(nb, "profile-view", WIDGET_VIEW)

    fixed = text(nb, "fixed")
    first, last = _numbers(fixed.split("loss:")[1].split("\n")[0])[:2]
    assert last < first and "all finite: True" in fixed
    assert float(re.search(r"min (-?[\d.]+)", fixed).group(1)) > 0
