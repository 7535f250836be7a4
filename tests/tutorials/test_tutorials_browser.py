"""The tutorials in JupyterLab, in headless Chromium: run every cell and look at the page.

For each tutorial: no cell errors, no widget fails to render, the graph
drawings are there with the expected node labels, (tutorial 4) the
SharedView panel changes after a training step run from the kernel, and
(tutorial 5) a loop opens and closes with clicks. A
notebook saved with its widget state (by nbclient) shows its last graph when
reopened without running anything. Screenshots go to ``screenshots/``.

Chromium comes from Debian's ``chromium`` package. Without it the tests are
skipped, except when ``LUCENT_BROWSER_TESTS=required`` (as ``.ci/run``
sets): then a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.conftest import TEST_COMPILEDIR
from tests.tutorials.execute import TUTORIALS
from tests.tutorials.jupyterlab_driver import CHROMIUM, Browser, LabServer, chromium_available

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "screenshots"
GRAPH_SVG = ".lucent-gv svg.lucent-gv-svg"


def _require_browser():
    required = os.environ.get("LUCENT_BROWSER_TESTS") == "required"
    missing = []
    if not chromium_available():
        missing.append(f"Chromium (Debian package 'chromium'; looked for {CHROMIUM})")
    from lucent.graph.dot import layout_programs

    if not layout_programs():
        missing.append("a Graphviz layout program (pip install graphviz-pure, or Debian package 'graphviz')")
    for module in ("playwright", "jupyterlab", "nbformat"):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"the Python package {module}")
    if missing:
        message = "browser tests need " + ", ".join(missing)
        if required:
            pytest.fail(message + " (LUCENT_BROWSER_TESTS=required)")
        pytest.skip(message)


@pytest.fixture(scope="module")
def lab():
    _require_browser()
    root = Path(tempfile.mkdtemp(prefix="lucent-tutorials-"))
    for nb in TUTORIALS.glob("*.ipynb"):
        shutil.copy2(nb, root / nb.name)
    server = LabServer(root, env={"LUCENT_FLAGS": f"base_compiledir={TEST_COMPILEDIR}"}).start()
    browser = Browser(timeout=300).start()
    try:
        yield server, browser
    finally:
        browser.stop()
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def _run(lab, name):
    server, browser = lab
    page = browser.open(server, f"{name}.ipynb")
    page.run_all()
    return page


def _check(page, name, selectors=(), texts=()):
    problems = page.problems()
    for selector in selectors:
        if not page.wait_for(selector):
            problems.append(f"nothing matches {selector!r} in the outputs")
    for wanted in texts:
        if not any(wanted in t for t in page.output_texts("")):
            problems.append(f"no output shows {wanted!r}")
    page.screenshot(SCREENSHOTS / f"{name}.png")
    assert not problems, f"{name} in JupyterLab:\n- " + "\n- ".join(problems)


def _svg_labels(page):
    return " ".join(page.output_texts(GRAPH_SVG))


def test_quickstart(lab):
    page = _run(lab, "01_quickstart")
    try:
        _check(page, "01_quickstart", selectors=["svg"], texts=["Missing required input: y", "array(5.)"])
    finally:
        lab[1].close_page(page)


def test_debugging(lab):
    page = _run(lab, "02_debugging_with_debugmode")
    try:
        _check(page, "02_debugging_with_debugmode", selectors=[GRAPH_SVG], texts=["BadThunkOutput"])
        assert "MySoftplus" in _svg_labels(page)
    finally:
        lab[1].close_page(page)


def test_memory_profiling(lab):
    page = _run(lab, "03_memory_profiling")
    try:
        _check(page, "03_memory_profiling", selectors=[".lucent-pv"], texts=["peak"])
    finally:
        lab[1].close_page(page)


def test_training_with_graph_magic_updates_the_shared_view(lab):
    page = _run(lab, "04_training_with_graph_magic")
    try:
        _check(page, "04_training_with_graph_magic", selectors=[GRAPH_SVG, ".lucent-sv"])
        labels = _svg_labels(page)
        for label in ("x", "y", "W", "b"):
            assert label in labels, f"GraphView of train lacks the label {label!r}: {labels[:500]}"
        before = page.output_texts(".lucent-sv")
        page.execute("for _ in range(3):\n    train(X[::-1], 1 - Y)")
        after = page.wait_for_change(".lucent-sv", before)
        assert before and after and before != after, "the SharedView did not change after a training step"

        # Clicking a node shows its details, with the summary of its last value.
        page.click(f"{GRAPH_SVG} g.node[data-id^='n']")
        details = " ".join(page.output_texts(".lucent-gv-details"))
        assert "DPRINT" in details.upper() and "mean" in details, details[:500]
        page.screenshot(SCREENSHOTS / "04_training_with_graph_magic-after-step.png")

        # After the kernel reconnects, the widgets still follow the program.
        page.reconnect_kernel()
        page.execute("for _ in range(3):\n    train(X, Y)")
        reconnected = page.wait_for_change(".lucent-sv", after)
        assert reconnected != after, "the SharedView stopped updating after the kernel reconnected"
        page.click(f"{GRAPH_SVG} g.node[data-id^='v']")
        assert page.output_texts(".lucent-gv-details") != [], "node details no longer open after reconnect"
        assert not page.problems(), page.problems()
    finally:
        lab[1].close_page(page)


def test_recurrent_model_opens_the_loop(lab):
    """Tutorial 5: the DebugMode report opens the loop at the step and inner node it names; the
    GraphView's loop opens and closes with clicks; the profile's loop row expands."""
    page = _run(lab, "05_debugging_a_recurrent_model")
    try:
        _check(page, "05_debugging_a_recurrent_model",
               selectors=[GRAPH_SVG, ".lucent-pv", ".lucent-dr-loop svg.lucent-gv-svg"],
               texts=["NanGuardError", 'where: scan "rnn", step'])
        lab_page = page.page
        # the report's second graph: the loop opened, the inner node of the problem selected and red
        loop = lab_page.locator(".lucent-dr-loop").first
        assert loop.locator(".lucent-gv-crumb-current").text_content() == 'scan "rnn"'
        assert "pinned" in loop.locator(".lucent-gv-inner-note").text_content()
        chosen = loop.locator("svg.lucent-gv-svg g.node.lucent-gv-sel")
        assert chosen.count() == 1 and "/" in chosen.get_attribute("data-id")
        assert "log" in chosen.text_content().lower()
        assert "lucent-gv-bad" in (chosen.get_attribute("class") or "")

        # the tutorial's GraphView: opened at the pinned step; back out, then open by clicking
        cell = lab_page.locator(".jp-CodeCell", has=lab_page.locator(".jp-InputArea", has_text="view = GraphView(train)"))
        view = cell.locator(".lucent-gv").first
        assert view.locator(".lucent-gv-crumb").count() == 2
        view.locator(".lucent-gv-crumb").first.click()
        page.wait_idle("closing the loop")
        lab_page.wait_for_timeout(500)
        boxes = view.locator("svg.lucent-gv-svg g.node.lucent-opens")
        assert boxes.count() >= 1  # the gradient loop too, unless the backward part is folded
        forward = [k for k in range(boxes.count()) if "grad" not in boxes.nth(k).text_content()]
        assert len(forward) == 1, [boxes.nth(k).text_content() for k in range(boxes.count())]
        boxes.nth(forward[0]).locator("text", has_text="⊞").first.click()
        page.wait_idle("opening the loop")
        lab_page.wait_for_timeout(800)
        assert view.locator(".lucent-gv-crumb-current").text_content() == 'scan "rnn"'
        assert "t = 59" in view.locator(".lucent-gv-inner-note").text_content()
        inner = view.locator("svg.lucent-gv-svg g.node")
        assert all("/" in inner.nth(k).get_attribute("data-id") for k in range(inner.count()))
        page.screenshot(SCREENSHOTS / "05_debugging_a_recurrent_model-loop-open.png")

        # the profile: the loop rows expand to their inner nodes
        profile = lab_page.locator(".lucent-pv").first
        assert profile.locator("tr.lucent-pv-inner").count() == 0
        profile.locator("tr.lucent-pv-has-inner .lucent-pv-toggle").first.click()
        page.wait_idle("expanding the loop's row")
        lab_page.wait_for_timeout(300)
        assert profile.locator("tr.lucent-pv-inner").count() > 3
        assert "steps" in profile.locator(".lucent-pv-steps").first.text_content()
        assert not page.problems(), page.problems()
    finally:
        lab[1].close_page(page)


def test_saved_widget_state_shows_the_last_graph(lab, executed):
    """A notebook executed and saved with its widget state renders its graphs when reopened."""
    import nbformat

    server, browser = lab
    nb = executed("04_training_with_graph_magic")
    path = server.root / "saved_04_training_with_graph_magic.ipynb"
    nbformat.write(nb, path)
    server.trust(path)
    page = browser.open(server, path.name)
    try:
        assert page.wait_for(GRAPH_SVG, timeout=60), "the saved GraphView did not render"
        assert "W" in _svg_labels(page)
        problems = page.problems(require_run=False)
        page.screenshot(SCREENSHOTS / "saved_04_training_with_graph_magic.png")
        assert not problems, "\n".join(problems)
    finally:
        browser.close_page(page)
