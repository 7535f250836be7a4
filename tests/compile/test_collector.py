"""The cyclic garbage collector is off while a function compiles and back on after."""

import gc
import weakref

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile import collector
from lucent.compile.collector import collector_paused


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


class _Cycle:
    def __init__(self):
        self.me = self


def test_paused_inside_and_resumed_after(collector_on):
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # a nested compile joins the outer pause
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    assert collector._depth == 0


def test_cyclic_garbage_of_the_compile_is_freed_when_it_ends(collector_on):
    with collector_paused():
        cycle = _Cycle()
        alive = weakref.ref(cycle)
        del cycle
        assert alive() is not None  # nothing collects it while paused
    assert alive() is None


def test_resumed_after_an_error(collector_on):
    with pytest.raises(ValueError, match="stop"):
        with collector_paused():
            raise ValueError("stop")
    assert gc.isenabled()
    assert collector._depth == 0


def test_resumed_after_an_interrupt(collector_on):
    with pytest.raises(KeyboardInterrupt):
        with collector_paused():
            raise KeyboardInterrupt
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off():
    was = gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_function_compiles_with_the_collector_paused(collector_on, monkeypatch):
    seen = []
    real = collector.collector_paused

    def spy():
        seen.append(gc.isenabled())
        return real()

    monkeypatch.setattr(collector, "collector_paused", spy)
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x) * 2.0)
    assert seen == [True]
    assert gc.isenabled()
    np.testing.assert_allclose(f(np.arange(3.0)), np.exp(np.arange(3.0)) * 2.0)


def test_a_failed_compile_resumes_the_collector(collector_on):
    x = lt.dvector("x")
    with pytest.raises(Exception):
        lucent.function([x], lt.exp(x), mode="NO_SUCH_MODE")
    assert gc.isenabled()
    assert collector._depth == 0
