"""Inputs that are ndarray subclasses, and where profile summaries are printed.

``np.matrix`` redefines ``*`` as a matrix product, so a ``perform`` given
one would compute something else than the Numba kernel; inputs are plain
arrays by the time any op sees them.
"""

import contextlib
import io

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from tests.helpers import run  # noqa: F401  (runs each test on both paths)

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")


def test_matrix_input_is_a_plain_array_on_both_paths(lucent_mode):
    x = lt.dmatrix("x")
    f = lucent.function([x], [x * x, x], mode=lucent_mode)
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    square, same = f(m)
    assert type(square) is np.ndarray and type(same) is np.ndarray
    np.testing.assert_array_equal(square, [[1.0, 4.0], [9.0, 16.0]])  # elementwise, not m @ m


def test_subclass_filter_keeps_memory_and_refuses_masked_values():
    t = lt.dmatrix().type
    m = np.matrix([[1.0, 2.0]])
    plain = t.filter(m)
    assert type(plain) is np.ndarray and np.shares_memory(plain, m)
    assert type(t.filter(np.ma.array([[1.0, 2.0]]))) is np.ndarray  # nothing masked
    with pytest.raises(TypeError, match="masked"):
        t.filter(np.ma.array([[1.0, 2.0]], mask=[[0, 1]]))
    assert type(lucent.shared(np.matrix([[1.0]])).get_value()) is np.ndarray


def test_subclasses_that_keep_numpys_operators_are_taken_as_they_are(tmp_path):
    t = lt.dvector().type

    class Tagged(np.ndarray):
        pass

    tagged = np.arange(3.0).view(Tagged)
    assert t.filter(tagged) is tagged
    mapped = np.memmap(tmp_path / "data.bin", dtype="float64", mode="w+", shape=(3,))
    assert t.filter(mapped) is mapped


def test_profile_summaries_print_to_the_current_stdout():
    from lucent.compile.profiling import print_profiles

    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x), mode="FAST_COMPILE", profile=True)
    f(np.ones(3))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_profiles([f.profile])
    assert "profiled functions" in out.getvalue()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        f.profile.summary()
    assert "Exp" in err.getvalue()
