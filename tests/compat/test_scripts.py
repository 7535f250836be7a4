"""PyTensor-style programs run on lucent with only their imports changed.

Each file in ``scripts/`` is a small program written against PyTensor's public
API (it imports only from ``pytensor``) that checks its own results with plain
``assert`` statements. The same file runs unchanged on PyTensor; here every
``pytensor`` is replaced by ``lucent`` and the program is executed. A failing
assertion or a missing name is a broken promise of compatibility.
"""

import pathlib
import warnings

import pytest

SCRIPTS = sorted((pathlib.Path(__file__).parent / "scripts").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_script_runs_on_lucent(script):
    source = script.read_text().replace("pytensor", "lucent")
    namespace = {"__name__": f"compat_{script.stem}"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, str(script), "exec"), namespace)


def test_every_area_has_a_script():
    assert len(SCRIPTS) >= 5, "scripts/ lost its programs"
