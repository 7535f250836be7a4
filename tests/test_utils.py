"""``lucent.utils``: platform facts and order-preserving sequence helpers."""

import hashlib
import struct

import numpy as np
import pytest

from lucent import utils


def test_bitwidths_describe_this_platform():
    assert utils.LOCAL_BITWIDTH == struct.calcsize("P") * 8
    assert utils.PYTHON_INT_BITWIDTH == struct.calcsize("l") * 8
    # NumPy's default integer has the width of a C long on the platforms lucent runs on.
    assert np.dtype("long").itemsize * 8 == utils.PYTHON_INT_BITWIDTH
    assert utils.NPY_RAVEL_AXIS == np.iinfo(np.int32).min


def test_hash_from_code_is_a_stable_identifier():
    h = utils.hash_from_code("x = 1")
    assert h == "m" + hashlib.sha256(b"x = 1").hexdigest()
    assert h == utils.hash_from_code(b"x = 1") and h.isidentifier()
    assert utils.hash_from_code("x = 2") != h
    with pytest.raises(TypeError, match="str or bytes"):
        utils.hash_from_code(12)


def test_uniq_and_difference_keep_order():
    assert utils.uniq([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert utils.uniq([[1], [2], [1]]) == [[1], [2]]  # unhashable items too
    assert utils.difference([5, 1, 4, 2], [4, 5]) == [1, 2]
    assert utils.difference([[1], [2]], [[2]]) == [[1]]


def test_return_value_helpers_and_flatten():
    assert utils.to_return_values([7]) == 7
    assert utils.to_return_values([1, 2]) == [1, 2]
    assert utils.from_return_values(7) == [7]
    assert utils.from_return_values((1, 2)) == (1, 2)
    assert utils.flatten([1, (2, [3, {4}]), [[5]]]) == [1, 2, 3, 4, 5]
    assert utils.flatten(3) == [3]


def test_unzip_gives_n_empty_tuples_for_no_input():
    assert utils.unzip([(1, "a"), (2, "b")], 2) == ((1, 2), ("a", "b"))
    assert utils.unzip([], 3) == ((), (), ())
    with pytest.raises(ValueError):
        utils.unzip([(1, 2), (3,)], 2, strict=True)


def test_get_unbound_function_and_singleton():
    class A(utils.Singleton):
        def method(self):
            return 1

    assert A() is A() and A() == A() and hash(A()) == hash(A())
    assert str(A()) == "A"
    assert utils.get_unbound_function(A().method) is A.method
    assert utils.get_unbound_function(len) is len

    class B(utils.Singleton):
        pass

    assert B() is not A() and B() != A()


def test_no_duplicate_opt_warning_filter():
    import logging

    f = utils.NoDuplicateOptWarningFilter()
    record = logging.LogRecord("x", logging.WARNING, "", 0, "Optimization Warning: once-%d", (99,), None)
    assert f.filter(record) is True
    assert f.filter(record) is False
    other = logging.LogRecord("x", logging.WARNING, "", 0, "something else", (), None)
    assert f.filter(other) and f.filter(other)
