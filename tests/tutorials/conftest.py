"""Each tutorial is executed once per test session (it takes seconds), then inspected by many tests."""

from __future__ import annotations

import pytest

from tests.conftest import TEST_COMPILEDIR
from tests.tutorials.execute import execute

_executed = {}


@pytest.fixture(scope="session")
def executed():
    """``executed(name)``: the tutorial run top to bottom by nbclient (cached for the session)."""
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")

    def run(name):
        if name not in _executed:
            _executed[name] = execute(name, compiledir=TEST_COMPILEDIR)
        return _executed[name]

    return run
