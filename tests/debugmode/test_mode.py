"""DebugMode as a mode: names, import paths, and a real model passing cleanly."""

import subprocess
import sys

import numpy as np
import pytest

import lucent
import lucent.tensor as lt


def test_importing_lucent_and_naming_the_modes_does_not_import_numba():
    code = (
        "import sys, lucent\n"
        "lucent.get_mode('DebugMode'); lucent.get_mode('NanGuardMode')\n"
        "import lucent.compile.debug.debugmode\n"
        "assert 'numba' not in sys.modules, 'numba imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_pytensor_import_path():
    from lucent.compile.debug.debugmode import DebugMode as FromCompat
    from lucent.debugmode import DebugMode

    assert FromCompat is DebugMode


@pytest.mark.parametrize("name", ["DebugMode", "DEBUG_MODE"])
def test_mode_by_name(name):
    pytest.importorskip("numba")
    from lucent.debugmode import DebugMode

    assert isinstance(lucent.get_mode(name), DebugMode)
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x) * 2, mode=name)
    np.testing.assert_allclose(f(np.arange(3.0)), np.exp(np.arange(3.0)) * 2)
    assert f.debug_report.ok and f.debug_report.finished
    assert "DebugMode" in repr(lucent.get_mode(name))


def test_bad_on_error_is_refused():
    from lucent.debugmode import DebugMode

    with pytest.raises(ValueError, match="on_error"):
        DebugMode(on_error="ignore")


def test_mlp_step_passes_and_matches_fast_compile():
    pytest.importorskip("numba")
    from lucent.debugmode import DebugMode
    from tests.models import mlp_data, mlp_training_step

    sizes = (20, 16, 16, 5)
    X, Y = mlp_data(batch=8, sizes=sizes)
    results = {}
    for mode in ("FAST_COMPILE", DebugMode()):
        inputs, cost, updates, params = mlp_training_step(sizes=sizes)
        f = lucent.function(inputs, cost, updates=updates, mode=mode)
        costs = [float(f(X, Y)) for _ in range(3)]
        results[str(mode)] = (costs, [p.get_value() for p in params])
        if isinstance(mode, DebugMode):
            report = f.debug_report
            assert report.ok, str(report)
            assert report.nodes_run == report.n_nodes and report.rewrites_checked > 10
    (c1, p1), (c2, p2) = results.values()
    np.testing.assert_allclose(c1, c2, rtol=1e-10)
    for a, b in zip(p1, p2):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
