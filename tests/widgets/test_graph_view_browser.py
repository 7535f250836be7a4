"""GraphView on real-sized graphs in JupyterLab (headless Chromium): fitting, collapsing, search, follow.

A notebook with the training step of a 3-layer network (about 80 nodes
before rewriting, 40 after) and a 300-node training graph is run in
JupyterLab; the test then reads the page: each view fits the output area
with legible text, the backward part collapses and expands, the search box
finds a node, a followed node shows a sparkline after five calls, the
rewrite stepper moves through ten rewrites showing a before/after pair, and
an error raised at call time on the fast path names the cell line.
Screenshots go to ``/tmp/nb_shots/`` (``LUCENT_SHOTS`` names another folder).

Slow (a kernel, JupyterLab and a browser, and a few layouts of a 300-node
graph): marked ``slow`` as well as ``browser``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.conftest import TEST_COMPILEDIR

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = Path(os.environ.get("LUCENT_SHOTS", "/tmp/nb_shots"))

CELLS = [
    # 0: a 3-layer network's training step (rewritten as FAST_RUN, run on the Python path)
    '''import numpy as np
import lucent
import lucent.tensor as lt
from lucent.widgets import GraphView

rng = np.random.default_rng(0)
X = lt.dmatrix("X")
Y = lt.dmatrix("Y")
sizes = [(8, 16), (16, 16), (16, 4)]
W = [lucent.shared(rng.normal(size=s) * 0.3, name=f"W{i}") for i, s in enumerate(sizes)]
b = [lucent.shared(np.zeros(s[1]), name=f"b{i}") for i, s in enumerate(sizes)]
h = X
for i in range(3):
    z = lt.dot(h, W[i]) + b[i]
    h = lt.tanh(z) if i < 2 else z
loss = lt.mean((h - Y) ** 2)
loss.name = "loss"
params = W + b
grads = lucent.grad(loss, params)
train = lucent.function([X, Y], loss, updates=[(p, p - 0.1 * g) for p, g in zip(params, grads)],
                        mode=lucent.Mode(linker="py", optimizer="fast_run"))
xs, ys = rng.normal(size=(32, 8)), rng.normal(size=(32, 4))
print(len(train.maker.fgraph.apply_nodes), "nodes after rewriting")''',
    # 1
    '''view = GraphView(train)
view''',
    # 2: a 300-node graph (7 layers, weight decay, no rewriting)
    '''def deep(layers):
    Xd, Yd = lt.dmatrix("Xd"), lt.dmatrix("Yd")
    hd, ps = Xd, []
    for i in range(layers):
        Wi = lucent.shared(rng.normal(size=(6, 6)) * 0.3, name=f"V{i}")
        bi = lucent.shared(np.zeros(6), name=f"c{i}")
        ps += [Wi, bi]
        zi = lt.dot(hd, Wi) + bi
        hd = lt.tanh(zi) * 0.9 + lt.sigmoid(zi) * 0.1
    cost = lt.mean((hd - Yd) ** 2) + 1e-3 * sum((p ** 2).sum() for p in ps)
    gs = lucent.grad(cost, ps)
    return lucent.function([Xd, Yd], cost, updates=[(p, p - 0.1 * g) for p, g in zip(ps, gs)], mode="FAST_COMPILE")

big = deep(7)
print(len(big.maker.fgraph.apply_nodes), "nodes")
big_view = GraphView(big)
big_view''',
    # 3: follow the loss and an inner node
    '''view.follow_outputs()
followed = view.follow(view.find("Dot22")[0])
view.select(followed)''',
    # 4: five calls, no loop of the user's own to collect the loss
    '''for _ in range(5):
    train(xs, ys)''',
    # 5: the rewrite stepper, when the project has one
    '''try:
    from lucent.widgets import RewriteView
except ImportError:
    RewriteView = None
rv = RewriteView(train) if RewriteView is not None else None
rv''',
    # 6: an error at call time, on the fast path
    '''A = lt.dmatrix("A")
B = lt.dmatrix("B")
product = lt.dot(A, B)
bad = lucent.function([A, B], product)
bad(np.ones((256, 3)), np.ones((4, 16)))''',
]

JS_FIT_CHECK = """
() => Array.from(document.querySelectorAll('.jp-Notebook .jp-OutputArea-output .lucent-gv')).map(root => {
  const area = root.closest('.jp-OutputArea-output').getBoundingClientRect();
  const box = root.getBoundingClientRect();
  const texts = Array.from(root.querySelectorAll('svg.lucent-gv-svg g.node text'))
    .map(t => t.getBoundingClientRect().height).filter(h => h > 0);
  texts.sort((a, b) => a - b);
  return {
    area: area.width, width: box.width, scale: parseFloat(root.dataset.scale || '0'),
    text: texts.length ? texts[Math.floor(texts.length / 2)] : 0,
    note: (root.querySelector('.lucent-gv-fitnote') || {}).textContent || '',
    nodes: root.querySelectorAll('svg.lucent-gv-svg g.node').length,
  };
})
"""


def _lab_or_skip():
    from tests.tutorials.jupyterlab_driver import chromium_available

    required = os.environ.get("LUCENT_BROWSER_TESTS") == "required"
    missing = []
    if not chromium_available():
        missing.append("Chromium")
    from lucent.graph.dot import layout_programs

    if not layout_programs():
        missing.append("a Graphviz layout program")
    for module in ("playwright", "jupyterlab", "nbformat"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        (pytest.fail if required else pytest.skip)("browser tests need " + ", ".join(missing))


@contextlib.contextmanager
def notebook_page(cells, name, settle_ms, settling):
    """A JupyterLab page (headless Chromium) of a new notebook of ``cells``, all run.

    ``settle_ms`` gives the views time to send their width and be redrawn
    (``settling`` names that wait in a timeout message). Skips (or fails,
    when required) without a browser.
    """
    _lab_or_skip()
    import nbformat

    from tests.tutorials.jupyterlab_driver import Browser, LabServer

    root = Path(tempfile.mkdtemp(prefix="lucent-graphview-"))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / name)
    server = LabServer(root, env={"LUCENT_FLAGS": f"base_compiledir={TEST_COMPILEDIR}"}).start()
    browser = Browser(timeout=300).start()
    lab_page = None
    try:
        lab_page = browser.open(server, name)
        lab_page.run_all()
        lab_page.page.wait_for_timeout(settle_ms)
        lab_page.wait_idle(settling)
        yield lab_page
    finally:
        if lab_page is not None:
            browser.close_page(lab_page)
        browser.stop()
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def page():
    # the views send their width; Python folds the drawings
    with notebook_page(CELLS, "graphs_at_any_size.ipynb", 3000, "fitting the drawings") as lab_page:
        yield lab_page


def _views(page):
    return page.page.locator(".jp-Notebook .jp-OutputArea-output .lucent-gv")


def test_views_fit_the_output_width_with_legible_text(page):
    problems = [p for p in page.problems(require_run=False) if not p.startswith("cell 6 ")]
    assert not problems, problems
    checks = page.page.evaluate(JS_FIT_CHECK)
    page.screenshot(SHOTS / "graphview_fit.png")
    for k in range(2):
        _views(page).nth(k).screenshot(path=str(SHOTS / f"graphview_fit_view{k}.png"))
    assert len(checks) == 2, checks
    for check in checks:
        assert check["width"] <= check["area"] + 1, check
        assert check["scale"] >= 0.75 and check["text"] >= 8, check
        assert check["nodes"] > 10, check


def test_backward_part_collapses_and_expands(page):
    view = _views(page).first
    if view.locator("g.node[data-id='part_backward']").count():
        view.locator("g.node[data-id='part_backward']").first.click()  # expand what fitting collapsed
        page.wait_idle("expanding")
        page.page.wait_for_timeout(500)
    assert view.locator("g.node.lucent-part-backward").count() > 5
    page.screenshot(SHOTS / "graphview_expanded.png")
    view.screenshot(path=str(SHOTS / "graphview_expanded_view.png"))
    view.locator(".lucent-gv-collapse input").check()
    page.wait_idle("collapsing")
    page.page.wait_for_timeout(500)
    assert view.locator("g.node[data-id='part_backward']").count() == 1
    assert view.locator("g.node.lucent-part-backward").count() == 0
    page.screenshot(SHOTS / "graphview_collapsed.png")
    view.screenshot(path=str(SHOTS / "graphview_collapsed_view.png"))


def test_search_finds_a_node(page):
    view = _views(page).first
    search = view.locator(".lucent-gv-search")
    search.fill("Dot22")
    search.press("Enter")
    page.wait_idle("search")
    page.page.wait_for_timeout(300)
    assert view.locator("g.node.lucent-gv-match").count() >= 1
    assert "Dot22" in view.locator(".lucent-gv-dlabel").first.text_content()
    assert view.locator("g.node.lucent-gv-sel").count() == 1


def test_a_followed_node_shows_a_sparkline_after_five_calls(page):
    view = _views(page).first
    sparks = view.locator(".lucent-gv-follows .lucent-gv-spark")
    assert sparks.count() == 2
    points = [int(sparks.nth(k).get_attribute("data-points")) for k in range(2)]
    assert points == [5, 5], points
    assert view.locator(".lucent-gv-follows path.lucent-gv-spark-line").count() == 2
    view.locator(".lucent-gv-follows").screenshot(path=str(SHOTS / "graphview_follow_strip.png"))
    view.locator(".lucent-gv-details").screenshot(path=str(SHOTS / "graphview_follow_details.png"))


def test_rewrite_stepper_moves_through_ten_rewrites(page):
    try:
        from lucent.widgets import RewriteView  # noqa: F401
    except ImportError:
        pytest.skip("lucent.widgets has no RewriteView")
    nxt = page.page.locator(".jp-Notebook .jp-OutputArea-output .lucent-rw-next").first
    slider = page.page.locator(".jp-Notebook .jp-OutputArea-output .lucent-rw-slider").first
    start = int(slider.input_value())
    for _ in range(10):
        nxt.click()
        page.page.wait_for_timeout(150)
    page.wait_idle("stepping")
    assert int(slider.input_value()) >= start + 10
    for pane in ("lucent-rw-before", "lucent-rw-after"):
        assert page.page.locator(f".jp-Notebook .jp-OutputArea-output .{pane} svg").count() >= 1, pane
    page.page.locator(".jp-Notebook .jp-Cell").nth(5).screenshot(path=str(SHOTS / "rewrite_stepper.png"))


def test_a_call_time_error_names_the_cell_line(page):
    errors = [p for p in page.problems(require_run=False) if p.startswith("cell 6 ")]
    assert errors, "the failing call raised nothing"
    text = errors[0]
    page.page.locator(".jp-Notebook .jp-Cell").nth(6).screenshot(path=str(SHOTS / "call_time_error.png"))
    # The dot was written on line 3 of the cell run as In [7].
    assert re.search(r"In \[7\], line 3", text), text[-1500:]
