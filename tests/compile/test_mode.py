"""Modes: registry, get_mode, reserved names, repr, including/excluding."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode, get_mode, predefined_modes, register_optimizer
from lucent.link.python import PythonLinker


def test_fast_compile_runs_python_linker():
    mode = get_mode("FAST_COMPILE")
    assert isinstance(mode.linker, PythonLinker)
    x = lt.dscalar("x")
    assert lucent.function([x], x * 2, mode="FAST_COMPILE")(3) == 6


def test_fast_run_default_and_numba_alias_use_numba_linker():
    from lucent.link.numba.linker import NumbaLinker

    assert lucent.config.mode == "FAST_RUN"
    assert get_mode(None) is get_mode("FAST_RUN")
    for name in ("FAST_RUN", "NUMBA"):
        mode = get_mode(name)
        assert isinstance(mode.linker, NumbaLinker)
        text = repr(mode)
        assert name in text and "Numba linker" in text
    x = lt.dscalar("x")
    assert lucent.function([x], x * 2, mode="NUMBA")(3) == 6


@pytest.mark.parametrize("name", ["DebugMode", "DEBUG_MODE", "NanGuardMode"])
def test_debug_modes_are_available_by_name(name):
    pytest.importorskip("numba")
    mode = get_mode(name)
    assert get_mode(name) is mode
    x = lt.dscalar("x")
    assert lucent.function([x], x * 2, mode=name)(3) == 6


def test_unknown_mode_lists_valid_ones():
    with pytest.raises(ValueError) as info:
        get_mode("FAST_TYPO")
    assert "FAST_COMPILE" in str(info.value) and "FAST_RUN" in str(info.value)


def test_mode_instance_passthrough_and_default_linker():
    m = Mode()
    assert get_mode(m) is m
    assert isinstance(m.linker, PythonLinker)
    assert isinstance(Mode(linker="py").linker, PythonLinker)
    with pytest.raises(ValueError, match="Unknown linker"):
        Mode(linker="nonsense")


def test_including_excluding_record_tags():
    m = get_mode("FAST_RUN")
    m2 = m.including("fusion").excluding("inplace")
    assert m2.include == ("fusion",) and m2.exclude == ("inplace",)
    assert m.include == () and m2 is not m
    assert "fusion" in repr(m2)


def test_optimizer_applied():
    seen = []

    def rewriter(fgraph):
        seen.append(fgraph)

    register_optimizer("test_recording_rewriter", rewriter)
    x = lt.dscalar("x")
    f = lucent.function([x], x * 2, mode=Mode(optimizer="test_recording_rewriter"))
    assert seen == [f.maker.fgraph]
    g = lucent.function([x], x * 2, mode=Mode(optimizer=rewriter))
    assert seen[-1] is g.maker.fgraph


def test_mode_registry_has_names():
    assert {"FAST_RUN", "FAST_COMPILE", "NUMBA"} <= set(predefined_modes)
    assert lucent.Mode is Mode and lucent.get_mode is get_mode
