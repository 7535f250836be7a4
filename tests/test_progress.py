"""Progress of long compiles: stages shown after a delay, closed at the end, switchable."""

import io

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent import progress


class Recorder(progress.Display):
    def __init__(self, log):
        self.log = log
        log.append("open")

    def update(self, text):
        self.log.append(text)

    def close(self):
        self.log.append("close")


@pytest.fixture
def shown(monkeypatch):
    """Every compile gets a recording display at once (no delay)."""
    log = []
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "REFRESH", 0.01)
    previous = progress.set_display(lambda: Recorder(log))
    yield log
    progress.set_display(previous)


def _slow_rewrite(monkeypatch, seconds=0.2):
    """Make rewriting take long enough for the display thread to show it."""
    import time

    from lucent.compile.mode import Mode

    real = Mode.rewrite

    def slow(self, fgraph):
        time.sleep(seconds)
        return real(self, fgraph)

    monkeypatch.setattr(Mode, "rewrite", slow)


def test_a_long_compile_shows_its_stages_and_closes(shown, monkeypatch):
    _slow_rewrite(monkeypatch)
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x) * 2, mode="FAST_RUN", name="step")
    np.testing.assert_allclose(f(np.zeros(2)), [2.0, 2.0])
    assert shown[0] == "open" and shown[-1] == "close"
    text = "\n".join(shown[1:-1])
    assert "lucent: compiling 'step': rewriting" in text
    assert "linking" in text
    assert all(line.endswith(" s)") for line in shown[1:-1])


def test_a_short_compile_shows_nothing(monkeypatch):
    log = []
    monkeypatch.setattr(progress, "DELAY", 30.0)
    previous = progress.set_display(lambda: Recorder(log))
    try:
        x = lt.dscalar("x")
        lucent.function([x], x + 1, mode="FAST_COMPILE")
    finally:
        progress.set_display(previous)
    assert log == []


def test_the_flag_turns_it_off(shown, monkeypatch):
    _slow_rewrite(monkeypatch)
    x = lt.dscalar("x")
    with lucent.config.change_flags(compile_progress=False):
        lucent.function([x], x + 1, mode="FAST_COMPILE")
    assert shown == []


def test_a_failed_compile_closes_its_display(shown, monkeypatch):
    _slow_rewrite(monkeypatch)
    x, y = lt.dscalar("x"), lt.dscalar("y")
    from lucent.compile.function_module import UnusedInputError

    with pytest.raises(UnusedInputError):
        lucent.function([x, y], x + 1, mode="FAST_COMPILE", on_unused_input="raise")
    # it failed before rewriting, or after: either way no display stays open
    assert shown.count("open") == shown.count("close")


def test_nested_compiles_share_one_display(shown, monkeypatch):
    _slow_rewrite(monkeypatch)
    x = lt.dscalar("x")
    with progress.compiling("outer"):
        lucent.function([x], x + 1, mode="FAST_COMPILE")
        lucent.function([x], x * 3, mode="FAST_COMPILE")
    assert shown.count("open") == 1 and shown[-1] == "close"
    assert any("compiling outer: rewriting" in line for line in shown)


def test_counted_stages_show_k_of_n():
    p = progress.CompileProgress("g")
    p.set_stage("kernels", total=12)
    p.advance(5)
    assert "kernels 5 of 12" in p.text()


def test_the_terminal_line_is_rewritten_and_erased():
    stream = io.StringIO()
    d = progress.TerminalDisplay(stream)
    d.update("lucent: compiling f: rewriting (1.0 s)")
    d.update("lucent: compiling f: linking (1.5 s)")
    d.close()
    out = stream.getvalue()
    assert out.count("\r") == 4 and out.endswith("\r")
    assert "linking" in out


def test_no_terminal_display_when_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert progress._terminal_display() is None


def test_the_notebook_display():
    pytest.importorskip("ipywidgets")
    from lucent.widgets.compile_progress import NotebookProgressDisplay, notebook_display

    assert notebook_display() is None  # not in a notebook kernel
    d = NotebookProgressDisplay()
    d.update("lucent: compiling f: kernels 3 of 12 (1.2 s)")
    assert (d.bar.value, d.bar.max) == (3, 12) and "kernels 3 of 12" in d.label.value
    d.update("lucent: compiling f: linking (1.9 s)")
    assert d.bar.value == d.bar.max == 1
    d.close()
