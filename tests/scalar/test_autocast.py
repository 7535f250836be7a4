"""How Python numbers get their dtype: ``config.cast_policy``, ``autocast_float_as``."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.configdefaults import config
from lucent.scalar import autocast_float, autocast_float_as, autocast_int
from lucent.scalar.autocast import NumpyAutocaster, convert


def test_custom_policy_picks_the_smallest_exact_dtype():
    assert autocast_float.dtypes == ("float16", "float32", "float64")
    assert autocast_float(1.5).dtype == "float32"  # float16 only when floatX is float16
    assert autocast_float(1.1).dtype == "float64"
    assert autocast_float(np.float64(1.5)).dtype == "float64"  # NumPy scalars keep their dtype
    assert autocast_int(3).dtype == "int8" and autocast_int(300).dtype == "int16"
    assert (lt.fvector() + 1.5).dtype == "float32"
    assert (lt.fvector() + 1.1).dtype == "float64"
    assert (lt.bvector() + 300).dtype == "int16"
    with config.change_flags(floatX="float32"):
        assert autocast_float(1.1).dtype == "float32"


def test_autocast_float_as_nests_and_restores():
    with autocast_float_as("float64"):
        assert (lt.fvector() + 1.5).dtype == "float64"
        with autocast_float_as("float32"):
            assert autocast_float(1.1).dtype == "float32"
        assert autocast_float.dtypes == ("float64",)
    assert autocast_float.dtypes == ("float16", "float32", "float64")


def test_numpy_floatx_policy():
    with config.change_flags(cast_policy="numpy+floatX", floatX="float32"):
        assert (lt.fvector() + 1.1).dtype == "float32"
        assert lt.as_tensor_variable(3).dtype == "int64"
        assert convert(np.float64(1.1)).dtype == "float64"
        with pytest.raises(AssertionError, match="cast_policy"):
            autocast_float_as("float64")


def test_convert_and_errors():
    assert convert(2**63).dtype == "uint64"
    assert convert([]).dtype == config.floatX
    assert convert(3, dtype="floatX").dtype == config.floatX
    with pytest.raises(OverflowError):
        autocast_int(2**70)
    with pytest.raises(TypeError, match="Python ints/floats"):
        NumpyAutocaster(("float64",))("1.0")
    with pytest.raises(NotImplementedError, match="MaskedArray"):
        convert(np.ma.masked_array([1.0]))
