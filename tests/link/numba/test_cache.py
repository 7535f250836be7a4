"""The graph-level disk cache: reuse across processes, uncacheable graphs, corruption, races."""

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
from lucent.compile.mode import Mode  # noqa: E402
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.cache import Uncacheable, describe  # noqa: E402
from lucent.link.numba.codegen import UncacheableGraphError  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify, numba_njit  # noqa: E402
from lucent.link.numba.linker import NumbaLinker  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

SCRIPT = textwrap.dedent(
    """
    import json, time
    import numpy as np
    import lucent, lucent.tensor as lt
    from lucent.compile.mode import Mode
    from lucent.link.numba.linker import NumbaLinker
    from tests.link.numba.user_ops import Add2, Double
    x = lt.dvector("x")
    start = time.perf_counter()
    f = lucent.function([x], Add2()(Double()(x), lt.constant(np.arange(2000.0))),
                        mode=Mode(linker=NumbaLinker(), optimizer=None))
    elapsed = time.perf_counter() - start
    linker = f.maker.linker
    print(json.dumps({"hit": linker.cache_hit, "reason": linker.uncacheable_reason,
                      "time": elapsed, "sum": float(f(np.ones(2000)).sum())}))
    """
)
EXPECTED_SUM = float((2 * np.ones(2000) + np.arange(2000.0)).sum())


def _env(cache_dir):
    env = dict(os.environ)
    # Numba's disk cache is what is tested: no native bundle may bypass it.
    env["LUCENT_FLAGS"] = f"base_compiledir={cache_dir},numba__native_cache=False"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(cache_dir):
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=_env(cache_dir), cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_process_loads_from_cache(tmp_path):
    first = _run(tmp_path)
    assert first["hit"] is False and first["reason"] is None
    assert first["sum"] == EXPECTED_SUM
    second = _run(tmp_path)
    assert second["hit"] is True and second["sum"] == EXPECTED_SUM
    assert second["time"] < first["time"]


ANNOTATION_SCRIPT = textwrap.dedent(
    """
    import json
    import numpy as np
    import lucent, lucent.tensor as lt
    from lucent.compile.mode import Mode
    from lucent.link.numba.linker import NumbaLinker
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x) * 2.0 - x, mode=Mode(linker=NumbaLinker(), optimizer="fast_run"))
    value = float(f(np.arange(3.0)).sum())
    annotations = [str(cres.type_annotation) for cres in f.maker.linker.program.fn.overloads.values()]
    print(json.dumps({"hit": f.maker.linker.cache_hit, "annotations": annotations, "sum": value}))
    """
)


def test_cache_entries_leave_out_the_type_annotation_text(tmp_path):
    """Numba's annotated source is not written into cache entries; the loaded code runs the same."""
    from lucent.link.numba.dispatch.basic import TYPE_ANNOTATION_NOT_CACHED

    def run():
        out = subprocess.run([sys.executable, "-c", ANNOTATION_SCRIPT], capture_output=True, text=True,
                             env=_env(tmp_path), cwd=ROOT)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    expected = float((np.exp(np.arange(3.0)) * 2.0 - np.arange(3.0)).sum())
    first = run()
    assert first["hit"] is False and first["sum"] == pytest.approx(expected, rel=1e-14)
    assert first["annotations"] and TYPE_ANNOTATION_NOT_CACHED not in first["annotations"]  # compiled here
    second = run()
    assert second["hit"] is True and second["sum"] == first["sum"]
    assert second["annotations"] == [TYPE_ANNOTATION_NOT_CACHED]


def test_concurrent_processes_share_the_cache(tmp_path):
    procs = [
        subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=_env(tmp_path), cwd=ROOT)
        for _ in range(2)
    ]
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr
        assert json.loads(stdout.strip().splitlines()[-1])["sum"] == EXPECTED_SUM
    assert _run(tmp_path)["hit"] is True
    leftovers = [n for _, _, files in os.walk(tmp_path) for n in files if ".tmp" in n]
    assert leftovers == []


def test_corrupt_entry_is_recompiled(tmp_path):
    _run(tmp_path)
    graphs = tmp_path / "numba"
    sources = [p for p in graphs.rglob("lucent_graph_*.py")]
    index = list(graphs.rglob("*.nbi"))
    data = list(graphs.rglob("*.nbc"))
    assert sources and index and data
    for p in sources:
        p.write_text(p.read_text()[:20])  # truncated source
    for p in index + data:
        p.write_bytes(b"\x80\x04garbage" + os.urandom(50))
    result = _run(tmp_path)
    assert result["sum"] == EXPECTED_SUM
    assert _run(tmp_path)["hit"] is True  # and the entry is good again


# --- uncacheable graphs ----------------------------------------------------------------------
class Closure(Op):
    __props__ = ("k",)

    def __init__(self, k):
        self.k = k

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] + self.k


@numba_funcify.register(Closure)
def _closure(op, node=None, **kwargs):
    k = op.k

    @numba_njit
    def add_k(x):
        return x + k

    return add_k


class VersionedClosure(Closure):
    pass


numba_funcify.register(VersionedClosure, version=1)(_closure)

NUMBA = Mode(linker=NumbaLinker(), optimizer=None)


def test_user_closure_without_version_is_uncacheable_and_says_why():
    x = lt.dvector("x")
    f = lucent.function([x], Closure(2.0)(x), mode=NUMBA)
    np.testing.assert_allclose(f(np.zeros(2)), [2.0, 2.0])
    reason = f.maker.linker.uncacheable_reason
    assert "closure" in reason and "version=" in reason
    with lucent.config.change_flags(cache_uncacheable="warn"):
        with pytest.warns(UserWarning, match="cannot cache"):
            lucent.function([x], Closure(3.0)(x), mode=NUMBA)
    with lucent.config.change_flags(cache_uncacheable="raise"):
        with pytest.raises(UncacheableGraphError, match="closure"):
            lucent.function([x], Closure(4.0)(x), mode=NUMBA)


def test_user_closure_with_version_is_cacheable(tmp_path):
    x = lt.dvector("x")
    with lucent.config.change_flags(base_compiledir=str(tmp_path)):
        f = lucent.function([x], VersionedClosure(2.0)(x), mode=NUMBA)
        g = lucent.function([x], VersionedClosure(5.0)(x), mode=NUMBA)
    assert f.maker.linker.uncacheable_reason is None
    assert f.maker.linker.cache_key != g.maker.linker.cache_key  # props are in the key
    np.testing.assert_allclose(f(np.zeros(2)), [2.0, 2.0])
    np.testing.assert_allclose(g(np.zeros(2)), [5.0, 5.0])


def test_key_follows_constant_types_not_values(tmp_path):
    """Array constants are arguments: their dtype and shape are in the key, their values are not."""
    from tests.link.numba.user_ops import Add2

    x = lt.dvector("x")

    def key(value):
        return lucent.function([x], Add2()(x, lt.constant(value)), mode=NUMBA).maker.linker.cache_key

    with lucent.config.change_flags(base_compiledir=str(tmp_path)):
        keys = [key(np.ones(2)), key(np.zeros(2)), key(np.zeros(3)), key(np.zeros((1, 2)))]
        f = lt.fvector("f")
        keys.append(lucent.function([f], Add2()(f, f), mode=NUMBA).maker.linker.cache_key)
    assert None not in keys
    assert keys[0] == keys[1]
    assert len(set(keys[1:])) == 4


def test_describe_refuses_address_only_values():
    describe((1, "a", np.arange(3), np.float32(2), slice(1, None)))
    with pytest.raises(Uncacheable):
        describe(object())
