"""Tests of lucent/link/numba/dispatch/python_entry.py: kernels get their Python entry on a first Python call."""

import os
import subprocess
import sys
import textwrap
import uuid

import numpy as np
import pytest

pytest.importorskip("numba")

import numba  # noqa: E402
from numba import typeof  # noqa: E402

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch.basic import kernel_from_source  # noqa: E402
from lucent.link.numba.dispatch.python_entry import KernelDispatcher  # noqa: E402
from lucent.link.numba.node_kernels import NodeKernel  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _fresh_kernel(cache=False):
    """A kernel of its own (a unique constant in its text): nothing compiled it before."""
    tag = uuid.uuid4().int % 10**9
    source = textwrap.dedent(
        f"""
        def scale_kernel(x, factor):
            if factor < 0:
                raise ValueError('scale_kernel: the factor must not be negative')
            out = np.empty_like(x)
            for i in range(x.shape[0]):
                out[i] = x[i] * factor + {tag}
            return out
        """
    )
    return kernel_from_source(source, "scale_kernel", cache=cache), tag


def test_a_kernel_compiled_for_compiled_callers_has_no_python_entry_until_python_calls_it():
    kernel, tag = _fresh_kernel()
    assert isinstance(kernel, KernelDispatcher)
    x = np.arange(4.0)
    sig = (typeof(x), typeof(2.0))
    kernel.compile(sig)
    assert not kernel.has_python_entry(sig)
    np.testing.assert_array_equal(kernel(x, 2.0), x * 2.0 + tag)
    assert kernel.has_python_entry(sig)
    assert len(kernel.overloads) == 1  # the entry was added, nothing compiled again
    np.testing.assert_array_equal(kernel.get_overload(sig)(x, 3.0), x * 3.0 + tag)


def test_a_specialisation_python_asks_for_first_is_compiled_with_its_entry():
    kernel, tag = _fresh_kernel()
    x = np.arange(4.0)
    sig = (typeof(x), typeof(2.0))
    entry = kernel.compile_for_python(sig)
    assert kernel.has_python_entry(sig) and len(kernel.overloads) == 1
    np.testing.assert_array_equal(entry(x, 2.0), x * 2.0 + tag)
    # the flag is back: the next specialisation compiled for compiled callers has none
    y = np.arange(4, dtype=np.float32)
    kernel.compile((typeof(y), typeof(2.0)))
    assert not kernel.has_python_entry((typeof(y), typeof(2.0)))


def test_a_python_call_compiles_and_runs_a_new_specialisation():
    kernel, tag = _fresh_kernel()
    x32 = np.arange(3, dtype=np.float32)
    # the kernel computes in float64 (a float32 times a float64 factor) and stores float32:
    # rounded once, where NumPy's float32 arithmetic would round twice (the tag is up to 1e9)
    np.testing.assert_array_equal(kernel(x32, 0.5), (x32.astype(np.float64) * 0.5 + tag).astype(np.float32))
    np.testing.assert_array_equal(kernel(np.arange(3), 2), np.arange(3) * 2 + tag)
    strided = np.arange(10.0)[::3]
    np.testing.assert_array_equal(kernel(strided, 1.0), strided + tag)


def test_errors_raised_by_the_kernel_reach_python():
    kernel, _ = _fresh_kernel()
    with pytest.raises(ValueError, match="must not be negative"):
        kernel(np.arange(2.0), -1.0)


def test_compiled_callers_use_the_kernel_without_a_python_entry():
    kernel, tag = _fresh_kernel()

    @numba.njit
    def caller(x):
        return kernel(x, 4.0).sum()

    x = np.arange(5.0)
    assert caller(x) == pytest.approx((x * 4.0 + tag).sum())
    sig = (typeof(x), typeof(4.0))
    assert not kernel.has_python_entry(sig)


def test_node_kernel_compile_for_builds_the_entry_before_the_first_timed_run():
    x, y = lt.dvector("x"), lt.dvector("y")
    node = (lt.exp(x) * lt.log1p(y) - x).owner.inputs[0].owner  # exp(x) * log1p(y): its own kernel
    kernel = NodeKernel(node)
    values = [np.exp(np.linspace(0.0, 1.0, 7)), np.log1p(np.linspace(1.0, 2.0, 7))]
    kernel.compile_for(values)
    sig = kernel._signature_of([values[k] for k in kernel._passed])
    assert kernel._kernel.has_python_entry(sig)
    assert kernel.compile_for(values) == 0.0
    np.testing.assert_allclose(kernel(values)[0], values[0] * values[1])


def test_profiling_a_compiled_graph_compiles_no_kernel_again():
    x = lt.dvector("x")
    y = lt.tanh(x * 1.75) + lt.exp(-x)
    fast = lucent.function([x], y, mode="FAST_RUN")
    value = np.linspace(-1.0, 1.0, 9)
    np.testing.assert_allclose(fast(value), np.tanh(value * 1.75) + np.exp(-value))
    compiled = {}
    for node in fast.maker.fgraph.toposort():
        k = NodeKernel(node)._kernel
        if isinstance(k, KernelDispatcher):
            compiled[id(k)] = (k, len(k.overloads))
    profiled = lucent.function([x], y, mode="FAST_RUN", profile=True)
    np.testing.assert_allclose(profiled(value), fast(value))
    assert compiled
    for k, count in compiled.values():
        assert len(k.overloads) == count


SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from numba import typeof
    from lucent.link.numba.dispatch.basic import kernel_from_source
    source = "def cached_kernel(x):\\n    return x * 2.0 + 0.5\\n"
    kernel = kernel_from_source(source, "cached_kernel", cache=True)
    x = np.arange(3.0)
    sig = (typeof(x),)
    if sys.argv[1] == "compile":
        kernel.compile(sig)
        print(json.dumps({"hits": 0}))
    elif sys.argv[1] == "compile_for_python":
        kernel.compile_for_python(sig)
        print(json.dumps({"hits": 0}))
    else:
        kernel.compile(sig)
        ready = kernel.has_python_entry(sig)
        out = kernel(x)
        print(json.dumps({"hits": sum(kernel.stats.cache_hits.values()), "ready": ready, "out": out.tolist()}))
    """
)


@pytest.mark.parametrize("first", ["compile", "compile_for_python"])
def test_a_kernel_loaded_from_the_disk_cache_gets_its_entry_in_a_new_process(tmp_path, first):
    env = dict(os.environ)
    env["LUCENT_FLAGS"] = f"base_compiledir={tmp_path}"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    for stage in (first, "call"):
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT, stage], capture_output=True, text=True, env=env, cwd=ROOT
        )
        assert out.returncode == 0, out.stderr
    import json

    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["hits"] == 1  # loaded, not compiled again
    # compiled for Python, it was cached with its entry; compiled for compiled code, it gets one now
    assert result["ready"] is (first == "compile_for_python")
    assert result["out"] == [0.5, 2.5, 4.5]
