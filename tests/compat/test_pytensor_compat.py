"""A PyTensor script runs after replacing ``pytensor`` by ``lucent`` in its imports."""

import pathlib

import numpy as np

SCRIPT = pathlib.Path(__file__).with_name("pytensor_script.py")


def test_pytensor_script_runs_with_lucent():
    source = SCRIPT.read_text().replace("pytensor", "lucent")
    namespace = {"__name__": "compat_script"}
    exec(compile(source, str(SCRIPT), "exec"), namespace)
    results = namespace["results"]
    assert results["decreases"]
    assert results["W_shape"] == (3, 2)
    assert results["acc"] == 5.0
    assert results["slices"][0] == [1.0, 3.0]
    assert results["slices"][1] == [4, 2]
    assert results["slices"][2] == [5.0, 3.0]
    assert results["slices"][3] == [1, 0]
    assert results["type_repr"] == (2, None)
    np.testing.assert_allclose(results["softmax"], [0.5, 0.5])
    assert results["eval"] == 2.0
    assert results["stack"] == [1.0, 2.0]
    assert results["where"] == [[0.0, 3.0]]
    assert results["fg_nodes"] == 1
    assert results["pretty"]
    assert results["dprint_has_add"]
    assert results["custom_op"] == [[2.0, 2.0]]
