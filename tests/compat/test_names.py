"""PyTensor's public names exist at the same module paths in lucent.

``names/*.txt`` lists, one per line, ``module.path name`` pairs written at
PyTensor's path (``pytensor.tensor pi``). Each one must be importable from the
matching lucent module (``from lucent.tensor import pi``). The lists are
maintained by hand, area by area, as capabilities land; what lucent
deliberately does differently is listed in the README ("Coming from
PyTensor"), not here.
"""

import importlib
import pathlib

import pytest

NAMES_DIR = pathlib.Path(__file__).parent / "names"


def _pairs():
    pairs = []
    for listing in sorted(NAMES_DIR.glob("*.txt")):
        for number, line in enumerate(listing.read_text().splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            module, _, name = line.partition(" ")
            assert module.startswith("pytensor") and name.strip(), (
                f"{listing.name}:{number}: expected 'pytensor.module name', got {line!r}"
            )
            pairs.append((module.replace("pytensor", "lucent", 1), name.strip()))
    return pairs


PAIRS = _pairs()


@pytest.mark.parametrize("module,name", PAIRS, ids=[f"{m}.{n}" for m, n in PAIRS])
def test_name_exists_at_pytensor_path(module, name):
    mod = importlib.import_module(module)
    if name == "*":
        return
    assert hasattr(mod, name), f"{module} has no {name}"


def test_the_lists_are_not_empty():
    assert len(PAIRS) > 100
