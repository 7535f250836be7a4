"""The dispatch registry, source kernels and the object-mode fallback kernel."""

import warnings

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent.tensor as lt  # noqa: E402
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.dispatch import (  # noqa: E402
    NoNumbaImplementation,
    NumbaFallbackWarning,
    kernel_from_source,
    numba_funcify,
    warn_fallback,
)
from lucent.link.numba.dispatch.basic import NumbaDispatcher  # noqa: E402
from lucent.link.numba.dispatch.fallback import make_fallback_kernel, numba_type_of  # noqa: E402


class Base(Op):
    __props__ = ()


class Child(Base):
    pass


def test_registry_follows_mro_and_records_versions():
    reg = NumbaDispatcher()
    reg.register(Base)(lambda op, node=None: "base")
    assert reg(Child()) == "base" and reg.version(Child()) == 0
    assert not reg.version_is_explicit(Child())
    reg.register(Child, version=3)(lambda op, node=None: "child")
    assert reg(Child()) == "child" and reg.version(Child()) == 3 and reg.version_is_explicit(Child())
    with pytest.raises(NoNumbaImplementation, match="numba_funcify.register"):
        reg(Op())
    with pytest.raises(TypeError):
        reg.register(Child())


def test_kernel_from_source_reuses_dispatcher_and_records_origin(tmp_path):
    import lucent

    src = "def plus(x, y):\n    return x + y\n"
    with lucent.config.change_flags(base_compiledir=str(tmp_path)):
        k1 = kernel_from_source(src, "plus")
        k2 = kernel_from_source(src, "plus")
    assert k1 is k2
    assert k1(1.0, 2.0) == 3.0
    digest, name, _ = k1.__lucent_origin__
    assert name == "plus" and len(digest) == 32
    assert list(tmp_path.rglob(f"lucent_kernel_{digest}.py"))


def test_warn_fallback_once_per_class():
    class NoKernelA(Op):
        __props__ = ()

    with pytest.warns(NumbaFallbackWarning, match="NoKernelA") as record:
        warn_fallback(NoKernelA())
        warn_fallback(NoKernelA())
    assert len(record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_fallback(NoKernelA())


class SplitSum(Op):
    """Two outputs: ``x.sum()`` (0-d) and ``x[::-1]`` (non-contiguous, made contiguous)."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [lt.tensor(dtype=x.dtype, shape=()), x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0].sum()  # a NumPy scalar, not a 0-d array
        out[1][0] = inputs[0][::-2]


def test_fallback_kernel_multi_output_and_conversions():
    import numba

    x = lt.dvector("x")
    node = SplitSum().make_node(x)
    kernel, passed = make_fallback_kernel(node)
    assert passed == [0]

    @numba.njit
    def use(v):
        a, b = kernel(v)
        return a, b

    total, rev = use(np.arange(4.0))
    assert float(total) == 6.0
    np.testing.assert_allclose(rev, [3.0, 1.0])


def test_numba_type_of():
    from numba import types

    assert numba_type_of(lt.dmatrix().type) == types.Array(types.float64, 2, "C")
    assert numba_type_of(lt.fscalar().type) == types.Array(types.float32, 0, "C")


def test_every_registered_implementation_is_an_op_class():
    # HasInnerGraph is the one mixin with a kernel: every op that carries an
    # inner graph (OpFromGraph, ...) is compiled from that graph, and the
    # link layer cannot name the op classes defined above it.
    from lucent.graph.op import HasInnerGraph

    for klass in numba_funcify._registry:
        assert issubclass(klass, Op) or klass is HasInnerGraph


def test_dense_graphs_do_not_import_scipy_sparse_or_linalg(tmp_path):
    """A new process running dense graphs from the cache skips two slow imports; sparse kernels still register later.

    (Compiling with an empty cache imports ``scipy.linalg`` anyway: Numba's
    own lowering registries do.)
    """
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    script = """
import json, sys, warnings
import numpy as np
import lucent, lucent.tensor as lt
x = lt.dmatrix("x")
f = lucent.function([x], lt.exp(x).sum(axis=0) @ lt.ones((3, 2)))
dense_ok = bool(np.allclose(f(np.ones((2, 3))), np.exp(1) * 2 * 3))
before = sorted(m for m in ("scipy.sparse", "scipy.linalg") if m in sys.modules)
import scipy.sparse as sp
from lucent.sparse import basic as sb, math as sm
y = sb.csr_matrix("y", dtype="float64")
with warnings.catch_warnings():
    warnings.simplefilter("error")  # an object-mode fallback would warn
    g = lucent.function([y], sm.sp_sum(y))
value = float(g(sp.csr_matrix(np.arange(6.0).reshape(2, 3))))
print(json.dumps({"dense_ok": dense_ok, "before": before, "sparse": value}))
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
               LUCENT_FLAGS=f"base_compiledir={tmp_path}")
    results = []
    for _ in range(2):  # an empty cache, then a new process with the cache
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                             cwd=root, timeout=600)
        assert out.returncode == 0, out.stderr
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "scipy.sparse" not in results[0]["before"]
    assert results[1] == {"dense_ok": True, "before": [], "sparse": 15.0}
