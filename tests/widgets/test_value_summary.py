"""Tests of lucent/widgets/value_summary.py."""

import json

import numpy as np
import pytest

from lucent.widgets.value_summary import summarize, summary_text


def test_statistics_match_numpy_and_are_json():
    a = np.arange(12, dtype="float32").reshape(3, 4)[:, ::2]  # non-contiguous float32
    s = summarize(a)
    json.dumps(s, allow_nan=False)
    assert s["shape"] == [3, 2] and s["dtype"] == "float32" and s["size"] == 6
    assert s["min"] == a.min() and s["max"] == a.max()
    assert s["mean"] == pytest.approx(a.mean()) and s["std"] == pytest.approx(a.std())
    assert s["norm"] == pytest.approx(np.linalg.norm(a))
    assert sum(s["histogram"]["counts"]) == 6 and len(s["histogram"]["edges"]) == 17


def test_nan_and_inf_are_counted_and_left_out_of_the_statistics():
    s = summarize(np.array([1.0, np.nan, np.inf, -np.inf, 3.0]))
    assert (s["nan"], s["inf"]) == (1, 2)
    assert (s["min"], s["max"], s["mean"]) == (1.0, 3.0, 2.0)
    assert sum(s["histogram"]["counts"]) == 2
    assert "NaN 1" in summary_text(s) and "Inf 2" in summary_text(s)
    none_finite = summarize(np.array([np.nan, np.nan]))
    assert none_finite["min"] is None and none_finite["nan"] == 2 and none_finite["histogram"] is None


@pytest.mark.parametrize("value, dtype, shape", [
    (np.float64(2.5), "float64", []),
    (np.array(3, dtype="int32"), "int32", []),
    (np.array([True, False]), "bool", [2]),
    (7, "int64", []),
])
def test_scalars_integers_and_booleans(value, dtype, shape):
    s = summarize(value)
    assert s["kind"] == "array" and s["dtype"] == dtype and s["shape"] == shape
    assert s["min"] is not None
    json.dumps(s, allow_nan=False)


def test_constant_array_gets_a_one_bin_wide_histogram():
    s = summarize(np.full(4, 2.0))
    assert s["std"] == 0 and sum(s["histogram"]["counts"]) == 4


def test_empty_none_and_objects():
    empty = summarize(np.zeros((0, 3)))
    assert empty["size"] == 0 and empty["min"] is None and "empty" in summary_text(empty)
    assert summarize(None) == {"kind": "none", "text": "None"}
    obj = summarize({"a": 1})
    assert obj["kind"] == "object" and obj["text"] == "{'a': 1}"
    assert len(summarize("x" * 1000)["text"]) == 200


def test_complex_values_are_summarised_by_magnitude():
    s = summarize(np.array([3 + 4j, 0j]))
    assert s["max"] == 5.0 and s["dtype"] == "complex128"
