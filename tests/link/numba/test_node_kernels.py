"""NodeKernel: one node's Numba kernel called from Python (used by DebugMode and the profiler)."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent.tensor as lt  # noqa: E402
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.node_kernels import NodeKernel, _memo  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_elementwise_node_matches_numpy_and_is_memoised():
    x, y = lt.dmatrix("x"), lt.dvector("y")
    node = (lt.exp(x) * y).owner
    kernel = NodeKernel(node)
    assert kernel.available and kernel.reason is None
    a, b = np.random.default_rng(0).normal(size=(3, 4)), np.arange(4.0)
    ex = np.exp(a)
    np.testing.assert_allclose(kernel([ex, b[None, :]])[0], ex * b)  # y enters broadcast to (1, 4)
    # A second node with the same op and types reuses the compiled kernel.
    other = (lt.exp(lt.dmatrix("p")) * lt.dvector("q")).owner
    before = len(_memo)
    assert NodeKernel(other)._kernel is kernel._kernel
    assert len(_memo) == before


def test_zero_d_and_reduction_outputs_have_python_path_forms():
    x = lt.dvector("x")
    node = x.sum().owner
    out = NodeKernel(node)([np.array([1.0, 2.0, 3.5])])[0]
    assert isinstance(out, np.ndarray) and out.shape == () and out == 6.5


def test_constant_inputs_are_passed():
    x = lt.dvector("x")
    node = (x + np.arange(3.0)).owner
    out = NodeKernel(node)([np.ones(3), node.inputs[1].data])[0]
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])


def test_op_without_implementation_is_unavailable_with_a_reason():
    class NoKernel(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            out[0][0] = inputs[0]

    node = NoKernel()(lt.dvector()).owner
    kernel = NodeKernel(node)
    assert not kernel.available
    assert "no Numba implementation for NoKernel" in kernel.reason
    with pytest.raises(RuntimeError, match="no Numba kernel"):
        kernel([np.zeros(1)])



_ONE_SPECIALISATION = textwrap.dedent(
    """
    import json, numpy as np, lucent, lucent.tensor as lt
    from numba.core import event
    x = lt.dmatrix("x"); y = lt.dmatrix("y")
    outputs = [x.dot(y), x.T.dot(y)]
    a, b = np.arange(9.0).reshape(3, 3) / 10, np.arange(9.0).reshape(3, 3) / 7 + 1
    with event.install_recorder("numba:compile") as rec:
        checked = lucent.function([x, y], outputs, mode="DebugMode")(a, b)
    debug_compiled = [e.data["dispatcher"].py_func.__name__ for _, e in rec.buffer if e.is_start]
    with event.install_recorder("numba:compile") as rec:
        fast = lucent.function([x, y], outputs)(a, b)
    fast_compiled = [e.data["dispatcher"].py_func.__name__ for _, e in rec.buffer if e.is_start]
    print(json.dumps({"checked": [o.tolist() for o in checked], "fast": [o.tolist() for o in fast],
                      "debug_compiled": debug_compiled, "fast_compiled": fast_compiled}))
    """
)


def test_a_node_run_alone_compiles_the_specialisation_graph_functions_use(tmp_path):
    """DebugMode runs the products of a matrix and of its transpose (a C and an F array) with
    one compiled specialisation, the one typed ``A`` that a graph function asks for, and a
    FAST_RUN function of the same graph afterwards compiles no product kernel again."""
    env = dict(os.environ)
    env["LUCENT_FLAGS"] = f"base_compiledir={tmp_path},numba__native_cache=False"
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", _ONE_SPECIALISATION], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    a, b = np.arange(9.0).reshape(3, 3) / 10, np.arange(9.0).reshape(3, 3) / 7 + 1
    for got in (result["checked"], result["fast"]):
        np.testing.assert_allclose(got[0], a @ b)
        np.testing.assert_allclose(got[1], a.T @ b)
    products = [name for name in result["debug_compiled"] if name.startswith("dot22")]
    assert len(products) == 1, result["debug_compiled"]
    assert not [name for name in result["fast_compiled"] if name.startswith("dot22")], result["fast_compiled"]
