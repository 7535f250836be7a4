"""Graph functions call their node kernels through slots: one copy of each kernel's machine code
per process, shared by every function, with the same results, errors and caching as before."""

import glob
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.link.numba import kernel_calls  # noqa: E402


@pytest.fixture(autouse=True)
def _numba_dispatchers():
    """These tests look into Numba's dispatchers, which a native bundle (``native.py``) stands in for."""
    with lucent.config.change_flags(numba__native_cache=False):
        yield

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _graph_dispatcher(fn):
    return fn.maker.linker.program.fn


def _slot_sites(fn):
    return getattr(_graph_dispatcher(fn), "__lucent_sites__", None) or []


def test_kernels_are_called_through_slots_and_not_linked_into_the_graph_function():
    x = lt.dmatrix("x")
    y = lt.dmatrix("y")
    f = lucent.function([x, y], lt.exp(x) * 3.0 + y.sum(axis=0))
    a, b = np.random.default_rng(0).random((2, 3, 4))
    np.testing.assert_allclose(f(a, b), np.exp(a) * 3.0 + b.sum(axis=0))
    sites = _slot_sites(f)
    assert sites, "no kernel is called through a slot"
    graph_ir = "".join(cres.library.get_llvm_str() for cres in _graph_dispatcher(f).overloads.values())
    for site in sites:
        for arg_types in site.targets.values():
            cres = site.kernel.overloads[arg_types]
            # neither defined nor declared in the graph function: it is reached through the slot
            assert cres.fndesc.llvm_func_name not in graph_ir


def test_two_functions_share_one_kernel_specialisation():
    x = lt.dvector("x")
    f1 = lucent.function([x], lt.tanh(x) * 1.5 - x)
    f2 = lucent.function([x], [lt.tanh(x) * 1.5 - x, lt.sum(x)])
    v = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(f1(v), np.tanh(v) * 1.5 - v)
    np.testing.assert_allclose(f2(v)[0], np.tanh(v) * 1.5 - v)
    kernels1 = {id(s.kernel) for s in _slot_sites(f1)}
    kernels2 = {id(s.kernel) for s in _slot_sites(f2)}
    assert kernels1 & kernels2, "the shared element-wise kernel was not reused"


def test_zero_d_values_a_kernel_only_reads_share_one_specialisation():
    """A shape computed in the graph (writable) and a constant one (read-only) are passed
    typed read-only, so the kernel is compiled once for both."""
    x = lt.dmatrix("x")
    v = lt.dscalar("v")
    computed = lt.alloc(v, x.shape[0], 3)
    constant = lt.alloc(v, lt.as_tensor_variable(np.int64(5)), 3)  # int64, as a computed shape
    f = lucent.function([x, v], [computed, constant])
    a, b = f(np.ones((4, 2)), 2.0)
    np.testing.assert_array_equal(a, np.full((4, 3), 2.0))
    np.testing.assert_array_equal(b, np.full((5, 3), 2.0))
    alloc_sites = [s for s in _slot_sites(f) if "Alloc" in s.label]
    assert alloc_sites
    targets = {t for s in alloc_sites for t in s.targets.values()}
    assert len(targets) == 1, targets
    (target,) = targets
    assert all(not t.mutable for t in target if getattr(t, "ndim", None) == 0)


def test_a_matrix_vector_product_of_a_matrix_and_of_its_transpose_share_one_specialisation():
    """The matrix goes to BLAS by pointer and strides, so a C matrix and a transposed
    (strided) one are passed typed ``A``; the vectors keep their ``C`` type."""
    w = lt.dmatrix("w")
    v = lt.dvector("v")
    u = lt.dvector("u")
    f = lucent.function([w, v, u], [lt.dot(w, v) + u, lt.dot(w.T, u) + v])
    rng = np.random.default_rng(0)
    wv, vv, uv = rng.standard_normal((5, 5)), rng.standard_normal(5), rng.standard_normal(5)
    a, b = f(wv, vv, uv)
    np.testing.assert_allclose(a, wv @ vv + uv)
    np.testing.assert_allclose(b, wv.T @ uv + vv)
    # both products call one Gemv kernel (one call site per kernel)
    gemv_sites = [s for s in _slot_sites(f) if "Gemv" in s.label]
    assert gemv_sites, [s.label for s in _slot_sites(f)]
    targets = {t for s in gemv_sites for t in s.targets.values()}
    assert len(targets) == 1, targets
    (target,) = targets
    assert target[2].layout == "A"
    assert all(t.layout == "C" for i, t in enumerate(target) if i != 2 and getattr(t, "ndim", 0) == 1)


def test_inputs_a_node_destroys_or_views_are_not_typed_read_only():

    class _Op:
        destroy_map = {0: [1]}
        view_map = {1: [3]}

    class _Node:
        op = _Op()

    # kernel arguments 0..3 hold inputs 0, 1, 2, 3
    assert kernel_calls.only_read(_Node(), [0, 1, 2, 3]) == [0, 2]
    # a kernel given inputs 1 and 2 only: its argument 1 holds input 2
    assert kernel_calls.only_read(_Node(), [1, 2]) == [1]


def test_kernel_errors_propagate_through_the_slot_with_their_message():
    x = lt.dmatrix("x")
    y = lt.dmatrix("y")
    f = lucent.function([x, y], x + y)
    assert _slot_sites(f)
    with pytest.raises(ValueError, match="shapes are not compatible"):
        f(np.ones((2, 3)), np.ones((2, 4)))
    # and the function still works afterwards
    np.testing.assert_allclose(f(np.ones((2, 3)), np.ones((2, 3))), 2 * np.ones((2, 3)))


def test_a_specialisation_compiled_at_call_time_fills_its_slots():
    x = lt.dmatrix("x")
    f = lucent.function([x], lt.exp(x) * 2.5)
    a = np.random.default_rng(1).random((4, 6))
    for value in (a, np.asfortranarray(a), a[:, ::2], a[::2]):
        np.testing.assert_allclose(f(value), np.exp(value) * 2.5)
    assert len(_graph_dispatcher(f).overloads) >= 3


def test_the_link_mode_still_works():
    x = lt.dvector("x")
    with lucent.config.change_flags(numba__kernel_calls="link"):
        f = lucent.function([x], lt.exp(x) * 4.5)
    np.testing.assert_allclose(f(np.arange(3.0)), np.exp(np.arange(3.0)) * 4.5)
    assert not _slot_sites(f)


_PROGRAM = textwrap.dedent(
    """
    import json, numpy as np, lucent, lucent.tensor as lt
    from numba.core import event
    x = lt.dmatrix("x"); w = lt.dvector("w")
    with event.install_recorder("numba:compile") as rec:
        f = lucent.function([x, w], lt.tanh(x.dot(w)) * 0.75 + lt.exp(w).sum())
        out = f(np.arange(6.0).reshape(2, 3) / 10, np.ones(3) / 3)
    compiled = sorted({e.data["dispatcher"].py_func.__name__ for _, e in rec.buffer if e.is_start})
    print(json.dumps({"out": out.tolist(), "compiled": compiled}))
    """
)


def _run(cache_dir):
    env = dict(os.environ)
    # Numba's disk cache is what is tested: no native bundle may bypass it.
    env["LUCENT_FLAGS"] = f"base_compiledir={cache_dir},numba__native_cache=False"
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", _PROGRAM], capture_output=True, text=True, env=env, cwd=ROOT,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_new_process_loads_the_graph_and_its_kernels_from_the_cache(tmp_path):
    expected = np.tanh(np.arange(6.0).reshape(2, 3) / 10 @ (np.ones(3) / 3)) * 0.75 + np.exp(np.ones(3) / 3).sum()
    cold = _run(tmp_path)
    np.testing.assert_allclose(cold["out"], expected)
    assert "graph_fn" in cold["compiled"]
    records = glob.glob(str(tmp_path / "**" / "*.kernels"), recursive=True)
    assert records, "no record of the call sites was written"
    warm = _run(tmp_path)
    np.testing.assert_allclose(warm["out"], expected)
    assert warm["compiled"] == [], f"a warm process compiled {warm['compiled']}"
    # Without its record, the cached graph function is compiled again (never run with empty slots).
    for path in records:
        os.unlink(path)
    again = _run(tmp_path)
    np.testing.assert_allclose(again["out"], expected)
    assert "graph_fn" in again["compiled"]
    # A record that does not belong to its graph (swapped) is not used either.
    records = glob.glob(str(tmp_path / "**" / "*.kernels"), recursive=True)
    with open(records[0], "r+b") as f:
        data = bytearray(f.read())
        data[-3] ^= 0xFF
        f.seek(0)
        f.write(data)
    swapped = _run(tmp_path)
    np.testing.assert_allclose(swapped["out"], expected)
    assert "graph_fn" in swapped["compiled"]


class _Site:
    index = 0

    def __init__(self, targets):
        self.targets = targets

    def slot_name(self, arg_types):
        return "slot_" + "_".join(arg_types)


def test_the_record_is_checked_against_its_key(tmp_path):
    path = str(tmp_path / "lucent_graph_x.py")
    kernel_calls.write_record(path, "key-a", [_Site({"slot_int64": ("int64",)})], ["(int64,)"])
    assert kernel_calls.read_record(path, "key-a") == {
        "targets": {0: {"slot_int64": ("int64",)}}, "signatures": ["(int64,)"]
    }
    assert kernel_calls.read_record(path, "key-b") is None


def test_the_record_keeps_what_other_processes_compiled(tmp_path):
    """Two processes compiling other specialisations of one cached graph both leave their targets."""
    path = str(tmp_path / "lucent_graph_x.py")
    kernel_calls.write_record(path, "key-a", [_Site({"slot_int64": ("int64",)})], ["(int64,)"])
    kernel_calls.write_record(path, "key-a", [_Site({"slot_float64": ("float64",)})], ["(float64,)"])
    assert kernel_calls.read_record(path, "key-a") == {
        "targets": {0: {"slot_int64": ("int64",), "slot_float64": ("float64",)}},
        "signatures": ["(float64,)", "(int64,)"],
    }
    # A record of another key (a damaged or foreign one) is not carried over.
    kernel_calls.write_record(path, "key-b", [_Site({"slot_int8": ("int8",)})], ["(int8,)"])
    assert kernel_calls.read_record(path, "key-b") == {
        "targets": {0: {"slot_int8": ("int8",)}}, "signatures": ["(int8,)"]
    }


def test_a_cache_entry_the_record_does_not_list_is_not_loaded(tmp_path):
    """Another process saves the machine code just before it records it: such an entry is compiled."""
    from numba import types

    path = str(tmp_path / "lucent_graph_x.py")
    loaded = []

    class NumbaCache:
        def load_overload(self, sig, targetctx):
            loaded.append(sig)
            return "machine code"

    class Site(_Site):
        def address(self, arg_types):
            return 0

    site = Site({})
    cache = kernel_calls.RecordCheckedCache(NumbaCache(), path, "key-a", [site])
    sig = (types.float64,)
    assert cache.load_overload(sig, None) is None  # no record yet
    kernel_calls.write_record(path, "key-a", [Site({"slot_int64": ("int64",)})], ["(int64,)"])
    assert cache.load_overload(sig, None) is None  # recorded, but not this specialisation
    assert loaded == []
    kernel_calls.write_record(
        path, "key-a", [Site({"slot_float64": ("float64",)})], [kernel_calls.signature_key(sig)]
    )
    assert cache.load_overload(sig, None) == "machine code"
    assert loaded == [sig]
    # the recorded targets are known before the machine code runs
    assert site.targets == {"slot_int64": ("int64",), "slot_float64": ("float64",)}


_BATCHED_LOOP = textwrap.dedent(
    """
    import json, numpy as np, lucent, lucent.tensor as lt
    from lucent.scan import scan
    from lucent.graph.replace import vectorize_graph
    from lucent.tensor.blockwise import Blockwise
    s = lt.dscalar("s")
    ys = scan(lambda h: lt.tanh(h) * 2.0 + 0.5, outputs_info=[s], n_steps=4, return_updates=False)
    batch = lt.dvector("batch")
    f = lucent.function([batch], vectorize_graph(ys, {s: batch}))
    assert any(isinstance(n.op, Blockwise) for n in f.maker.fgraph.toposort())
    print(json.dumps(f(np.array([0.1, -0.3, 2.0])).tolist()))
    """
)


def test_a_loop_mapped_by_blockwise_runs_in_a_new_process(tmp_path):
    """A Blockwise calls its core kernel through a slot: a loop inside it, whose body
    is called through a slot of its own, works when everything is loaded from the cache
    (a linked copy of the loop kept an empty slot there)."""
    h = np.array([0.1, -0.3, 2.0])
    want = []
    for _ in range(4):
        h = np.tanh(h) * 2.0 + 0.5
        want.append(h)
    want = np.array(want).T
    env = dict(os.environ)
    # Numba's disk cache is what is tested: no native bundle may bypass it.
    env["LUCENT_FLAGS"] = f"base_compiledir={tmp_path},numba__native_cache=False"
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    for _ in ("cold", "warm"):
        out = subprocess.run([sys.executable, "-c", _BATCHED_LOOP], capture_output=True, text=True,
                             env=env, cwd=ROOT, timeout=600)
        assert out.returncode == 0, out.stderr
        np.testing.assert_allclose(json.loads(out.stdout.strip().splitlines()[-1]), want)
