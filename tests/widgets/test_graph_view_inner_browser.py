"""GraphView opening a loop in JupyterLab (headless Chromium): click the scan's box, see its body.

A notebook draws the graph of an RNN step loop (``scan``) and calls it; the
test clicks the ``⊞ opens`` line of the scan's box, and reads the page: a
breadcrumb ``outer graph ▸ scan "rnn"`` with the step shown, the body's
nodes drawn, a click on the inner ``Tanh`` shows its last-step value;
the breadcrumb's first crumb goes back. Screenshots go to ``/tmp/nb_shots/``
(``LUCENT_SHOTS`` names another folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.widgets.test_graph_view_browser import notebook_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = Path(os.environ.get("LUCENT_SHOTS", "/tmp/nb_shots"))

CELLS = [
    '''import numpy as np
import lucent
import lucent.tensor as lt
from lucent.widgets import GraphView

W, X, h0 = lt.dmatrix("W"), lt.dmatrix("X"), lt.dvector("h0")
hs = lucent.scan(lambda x_t, h: lt.tanh(lt.dot(W, h) + x_t), sequences=[X], outputs_info=[h0],
                 name="rnn", return_updates=False)
rnn = lucent.function([W, X, h0], hs[-1], mode=lucent.Mode(linker="py", optimizer="fast_run"))
view = GraphView(rnn, min_interval=0)
view''',
    '''rng = np.random.default_rng(0)
rnn(rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(5, 3)), rng.normal(size=3))''',
]


@pytest.fixture(scope="module")
def page():
    with notebook_page(CELLS, "open_a_loop.ipynb", 1500, "drawing") as lab_page:
        yield lab_page


def test_clicking_the_scan_box_opens_its_body(page):
    assert not page.problems(require_run=False)
    view = page.page.locator(".jp-Notebook .jp-OutputArea-output .lucent-gv").first
    box = view.locator("svg.lucent-gv-svg g.node.lucent-opens")
    assert box.count() == 1
    outer_nodes = view.locator("svg.lucent-gv-svg g.node").count()
    box.locator("text", has_text="⊞").first.click()
    page.wait_idle("opening the loop")
    page.page.wait_for_timeout(800)
    crumbs = view.locator(".lucent-gv-crumbs .lucent-gv-crumb")
    assert crumbs.count() == 2
    assert view.locator(".lucent-gv-crumb-current").text_content() == 'scan "rnn"'
    assert "t = 4" in view.locator(".lucent-gv-inner-note").text_content()
    inner_nodes = view.locator("svg.lucent-gv-svg g.node")
    assert 0 < inner_nodes.count() != outer_nodes
    ids = [inner_nodes.nth(k).get_attribute("data-id") for k in range(inner_nodes.count())]
    assert all("/" in i for i in ids), ids
    view.locator("svg.lucent-gv-svg g.node", has_text="Tanh").first.click()
    page.wait_idle("selecting")
    page.page.wait_for_timeout(300)
    assert "Tanh" in view.locator(".lucent-gv-dlabel").text_content()
    assert view.locator(".lucent-gv-details .lucent-gv-stats").count() >= 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    view.screenshot(path=str(SHOTS / "graphview_open_loop.png"))
    crumbs.first.click()
    page.wait_idle("closing the loop")
    page.page.wait_for_timeout(500)
    assert view.locator(".lucent-gv-crumbs .lucent-gv-crumb").count() == 0 or not view.locator(
        ".lucent-gv-crumbs").is_visible()
    assert view.locator("svg.lucent-gv-svg g.node.lucent-opens").count() == 1
