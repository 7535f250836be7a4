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
    from lucent.link.numba.linker import NumbaLinker

    m = Mode()
    assert get_mode(m) is m
    # As in PyTensor, a Mode without a linker takes config.linker ("auto": Numba).
    assert isinstance(m.linker, NumbaLinker)
    with lucent.config.change_flags(linker="py"):
        assert isinstance(Mode().linker, PythonLinker)
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


@pytest.mark.parametrize("name", ["CVM", "C", "cvm", "c", "VM"])
def test_c_backend_modes_run_on_numba_and_say_so(name):
    from lucent.link.numba.linker import NumbaLinker

    mode = get_mode(name)
    assert isinstance(mode.linker, NumbaLinker)
    text = repr(mode)
    assert "no C backend" in text and "Numba linker" in text
    x = lt.dvector("x")
    np.testing.assert_allclose(lucent.function([x], x * 2, mode=name)(np.ones(2)), [2, 2])


@pytest.mark.parametrize("linker", ["c|py", "cvm_nogc", "cvm", "c", "c|py_nogc", "vm"])
def test_c_linker_names_run_on_numba(linker):
    from lucent.link.numba.linker import NumbaLinker

    mode = Mode(linker=linker, optimizer="fast_run")
    assert isinstance(mode.linker, NumbaLinker)
    assert f"linker {linker!r} runs on the Numba linker" in repr(mode)
    assert mode.linker.allow_gc is (False if linker.endswith("_nogc") else None)
    x = lt.dvector("x")
    np.testing.assert_allclose(lucent.function([x], x + 1, mode=mode)(np.ones(2)), [2, 2])


@pytest.mark.parametrize("name", ["py", "PY"])
def test_py_names_run_the_reference_path(name):
    mode = get_mode(name)
    assert isinstance(mode.linker, PythonLinker)
    assert isinstance(Mode(linker=name).linker, PythonLinker)
    x = lt.dvector("x")
    assert lucent.function([x], x.sum(), mode=name)(np.ones(3)) == 3


@pytest.mark.parametrize("name,backend", [("JAX", "JAX"), ("PYTORCH", "PyTorch"), ("MLX", "MLX")])
def test_missing_backends_are_named(name, backend):
    from lucent.compile.mode import MissingBackendError

    with pytest.raises(MissingBackendError, match=f"{backend} backend, which lucent does not have"):
        get_mode(name)
    with pytest.raises(ValueError, match=backend):
        Mode(linker=name.lower())


def test_config_mode_accepts_a_mode_object_and_checks_names():
    mode = Mode(linker="py", optimizer="fast_compile")
    with lucent.config.change_flags(mode=mode):
        assert get_mode(None) is mode
        x = lt.dscalar("x")
        f = lucent.function([x], x * 2)
        assert f.maker.mode is mode and f(2.0) == 4.0
    with lucent.config.change_flags(mode="cvm"):
        assert get_mode(None) is get_mode("CVM")
    with pytest.raises(lucent.configparser.ConfigError, match="expected a Mode"):
        lucent.config.mode = "NOT_A_MODE"


def test_optimizer_flags_refine_modes_looked_up_by_name():
    base = get_mode("FAST_RUN")
    with lucent.config.change_flags(optimizer_excluding="fusion:inplace", optimizer_including="merge"):
        mode = get_mode("FAST_RUN")
        assert mode is not base and mode.exclude == ("fusion", "inplace")
        assert mode.include == ("merge",)
        assert get_mode("FAST_RUN") is mode  # made once per setting
        x = lt.dvector("x")
        f = lucent.function([x], lt.exp(x) * 2 + 1)
        assert not any("Composite" in str(n.op) for n in f.maker.fgraph.toposort())
    assert get_mode("FAST_RUN") is base


def test_optimizer_names_and_default():
    from lucent.compile.mode import predefined_optimizers

    for name in ("o1", "o2", "o3", "o4", "unsafe", "stabilize", "fast_run_stable", "None"):
        assert name == "None" or name in predefined_optimizers
        Mode(linker="py", optimizer=name)
    with pytest.raises(ValueError, match="Unknown optimizer"):
        Mode(linker="py", optimizer="fast_rnu")
    x = lt.dvector("x")
    with lucent.config.change_flags(optimizer="None"):
        f = lucent.function([x], x * 1, mode=Mode(linker="py"))
        assert len(f.maker.fgraph.toposort()) == 2  # x * 1 kept as built: nothing rewrote it
    with lucent.config.change_flags(optimizer="o4"):
        f = lucent.function([x], x * 1, mode=Mode(linker="py"))
        assert f.maker.fgraph.toposort() == []  # fast_run removed the multiplication


def test_register_linker_and_predefined_linkers():
    from lucent.compile.mode import predefined_linkers, register_linker

    assert {"py", "c|py", "cvm", "numba"} <= set(predefined_linkers)
    assert isinstance(predefined_linkers["py"], PythonLinker)
    mine = PythonLinker()
    register_linker("test_my_linker", mine)
    assert "test_my_linker" in predefined_linkers
    assert Mode(linker="test_my_linker").linker is mine
    with pytest.raises(ValueError, match="already taken"):
        register_linker("cvm", PythonLinker())
    with pytest.raises(TypeError, match="Linker instance"):
        register_linker("test_not_a_linker", object())
