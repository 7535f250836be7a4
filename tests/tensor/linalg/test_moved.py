"""The old nlinalg / slinalg paths hand out linalg's names with a DeprecationWarning."""

import pytest

from lucent.tensor import linalg, nlinalg, slinalg


@pytest.mark.parametrize("module,name", [(nlinalg, "inv"), (nlinalg, "det"), (slinalg, "solve"), (slinalg, "cholesky")])
def test_moved_name_is_linalgs_with_a_warning(module, name):
    with pytest.warns(DeprecationWarning, match=f"from lucent.tensor.linalg import {name}"):
        assert getattr(module, name) is getattr(linalg, name)
    assert name in dir(module)


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="nlinalg' has no attribute 'nothing'"):
        nlinalg.nothing


def test_warning_names_the_pytensor_path():
    """A program ported from PyTensor finds its own module path in the warning."""
    with pytest.warns(DeprecationWarning, match="pytensor.tensor.slinalg"):
        slinalg.Solve
