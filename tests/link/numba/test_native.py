"""Tests of lucent/link/numba/native.py: cached graph functions loaded without importing Numba.

Each scenario runs in new processes sharing one cache directory: the first
compiles through Numba (and writes the bundle), the next ones load it.
"""

import glob
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# The graph of most scenarios: a product, a reduction, element-wise work,
# two outputs (one 0-d) and an array constant.
PROGRAM = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import lucent, lucent.tensor as lt

    x = lt.dmatrix("x")
    y = lt.dvector("y")
    w = np.array([0.5, -1.0, 2.0, 0.25])
    loss = lt.tanh(x @ y + 1.0).sum() + (x * w).mean()
    f = lucent.function([x, y], [loss, lt.exp(x) * 3.0])

    def expected(a, b):
        return np.tanh(a @ b + 1.0).sum() + (a * w).mean(), np.exp(a) * 3.0

    def check(a, b):
        got = f(a, b)
        want = expected(a, b)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
        assert isinstance(got[0], np.ndarray) and got[0].shape == ()

    a = np.arange(12.0).reshape(3, 4) / 10
    b = np.linspace(-1.0, 1.0, 4)
    report = {"native": bool(f.maker.linker.program.native)}
    check(a, b)
    report["numba_after_call"] = "numba" in sys.modules
    """
)


def _run(cache_dir, body="", flags=""):
    env = dict(os.environ)
    env["LUCENT_FLAGS"] = f"base_compiledir={cache_dir}" + (f",{flags}" if flags else "")
    env["NUMBA_CACHE_DIR"] = os.path.join(str(cache_dir), "numba-own")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    source = PROGRAM + textwrap.dedent(body) + "\nprint('REPORT ' + json.dumps(report))\n"
    out = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("REPORT ")][-1]
    return json.loads(line[len("REPORT "):])


def _bundles(cache_dir):
    return glob.glob(os.path.join(str(cache_dir), "numba", "codegen*", "native", "graph-*.bin"))


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A cache directory in which the scenario's graph was compiled once (through Numba)."""
    cache = tmp_path_factory.mktemp("native")
    first = _run(cache)
    assert first["native"] is False and first["numba_after_call"] is True
    assert len(_bundles(cache)) == 1
    return cache


def test_a_new_process_loads_the_graph_without_importing_numba(warm_cache):
    report = _run(warm_cache)
    assert report == {"native": True, "numba_after_call": False}


def test_arguments_the_code_was_not_compiled_for_go_through_numba(warm_cache):
    report = _run(
        warm_cache,
        """
        check(np.asfortranarray(a), b)             # Fortran order
        wide = np.arange(24.0).reshape(3, 8) / 10
        check(wide[:, ::2], b)                     # strided
        ro = a.copy(); ro.setflags(write=False)
        check(ro, b[::-1].copy())                  # read-only
        check(a, b)                                # and the native code again
        report["numba_after_fallbacks"] = "numba" in sys.modules
        """,
    )
    assert report["native"] is True and report["numba_after_fallbacks"] is True


def test_an_error_raised_inside_is_the_one_the_ordinary_path_raises(warm_cache):
    body = """
        try:
            f(a, np.ones(5))
        except Exception as e:
            report["error"] = [type(e).__name__, str(e).splitlines()[0]]
        check(a, b)  # still usable
        """
    native = _run(warm_cache, body)
    ordinary = _run(warm_cache, body, flags="numba__native_cache=False")
    assert native["native"] is True and ordinary["native"] is False
    assert native["error"] == ordinary["error"]
    assert native["error"][0] == "KernelValueError"


def test_numba_compiles_other_graphs_in_a_process_that_loaded_a_bundle(warm_cache):
    report = _run(
        warm_cache,
        """
        z = lt.dvector("z")
        g = lucent.function([z], lt.exp(z) * 7.0 + 2.0 * z + z.sum())
        v = np.linspace(0.0, 1.0, 5)
        np.testing.assert_allclose(g(v), np.exp(v) * 7.0 + 2.0 * v + v.sum())
        fd = lucent.function([x, y], [loss, lt.exp(x) * 3.0], mode="DebugMode")
        got = fd(a, b)
        np.testing.assert_allclose(got[0], expected(a, b)[0])
        check(a, b)
        """,
    )
    assert report["native"] is True


VARIANT = """
    w2 = np.array([-3.0, 1.5, 0.0, 7.0])
    f2 = lucent.function([x, y], [lt.tanh(x @ y + 1.0).sum() + (x * w2).mean(), lt.exp(x) * 3.0])
    got = f2(a, b)
    np.testing.assert_allclose(got[0], np.tanh(a @ b + 1.0).sum() + (a * w2).mean(), rtol=1e-12)
    check(a, b)  # the first function keeps its own constant
    p1, p2 = f.maker.linker.program, f2.maker.linker.program
    report["variant_shares_code"] = p2.fn is p1.fn or getattr(p2.fn, "native_entry", None) is getattr(p1.fn, "native_entry", 0)
    report["variant_native"] = bool(p2.native)
    """


def test_a_variant_with_other_constant_values_reuses_the_code_in_the_process(tmp_path):
    cold = _run(tmp_path, VARIANT)
    warm = _run(tmp_path, VARIANT)
    assert cold["native"] is False and cold["variant_shares_code"] is True
    assert warm["native"] is True and warm["variant_native"] is True and warm["variant_shares_code"] is True


def test_a_damaged_bundle_is_not_used_and_is_written_again(tmp_path):
    assert _run(tmp_path)["native"] is False
    (bundle,) = _bundles(tmp_path)
    data = bytearray(open(bundle, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(bundle, "wb").write(bytes(data))
    assert _run(tmp_path)["native"] is False  # ignored, results still right
    assert _run(tmp_path)["native"] is True  # the ordinary path wrote it again


def test_another_graphs_bundle_under_this_name_is_not_used(tmp_path):
    other = """
        q = lt.dvector("q")
        k = lucent.function([q], [lt.sin(q) - 7.0])
        """
    assert _run(tmp_path)["native"] is False
    (mine,) = _bundles(tmp_path)
    _run(tmp_path, other)
    (theirs,) = [p for p in _bundles(tmp_path) if p != mine]
    open(mine, "wb").write(open(theirs, "rb").read())
    assert _run(tmp_path)["native"] is False  # the checks of the results passed


def test_turned_off_it_writes_and_loads_nothing(tmp_path):
    assert _run(tmp_path, flags="numba__native_cache=False")["native"] is False
    assert _bundles(tmp_path) == []
    assert _run(tmp_path, flags="numba__native_cache=False")["native"] is False


def test_graphs_that_differ_only_in_constant_values_each_get_their_own_results(tmp_path):
    body = """
        s = lt.dvector("s")
        shape = np.array(SHAPE)
        h = lucent.function([s], [(s.reshape(shape) * np.array(SCALE)).sum(axis=0)])
        v = np.arange(6.0)
        np.testing.assert_allclose(h(v)[0], (v.reshape(SHAPE) * np.array(SCALE)).sum(axis=0))
        report["h_native"] = bool(h.maker.linker.program.native)
        """
    first = _run(tmp_path, body.replace("SHAPE", "(2, 3)").replace("SCALE", "[1.0, 2.0, 3.0]"))
    again = _run(tmp_path, body.replace("SHAPE", "(2, 3)").replace("SCALE", "[1.0, 2.0, 3.0]"))
    other = _run(tmp_path, body.replace("SHAPE", "(3, 2)").replace("SCALE", "[4.0, 5.0]"))
    scaled = _run(tmp_path, body.replace("SHAPE", "(2, 3)").replace("SCALE", "[-1.0, 0.5, 9.0]"))
    assert first["h_native"] is False and again["h_native"] is True
    assert other["native"] is True and scaled["native"] is True  # the checks above passed


def test_one_constant_used_twice_and_two_equal_constants_are_different_graphs(tmp_path):
    """``Z + X @ Y`` is ``Gemm(Z, 1.0, X, Y, 1.0)`` with one constant 1.0 used twice (one
    argument); ``Z - X @ Y`` has two constants (-1.0 and 1.0). A graph function made for
    the first must not serve the second, in the process or from its bundle."""
    body = """
        X, Y, Z = lt.dmatrices("X", "Y", "Z")
        rng = np.random.default_rng(0)
        xv, yv, zv = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(3, 2))
        plus = lucent.function([X, Y, Z], Z + lt.dot(X, Y))
        minus = lucent.function([X, Y, Z], Z - lt.dot(X, Y))
        np.testing.assert_allclose(plus(xv, yv, zv), zv + xv @ yv, rtol=1e-12)
        np.testing.assert_allclose(minus(xv, yv, zv), zv - xv @ yv, rtol=1e-12)
        report["minus_native"] = bool(minus.maker.linker.program.native)
        """
    cold = _run(tmp_path, body)
    warm = _run(tmp_path, body)
    assert cold["minus_native"] is False and warm["minus_native"] is True  # the checks passed


def test_a_kernel_registered_from_outside_lucent_turns_bundles_off(warm_cache):
    report = _run(
        warm_cache,
        """
        from lucent.link.numba.dispatch import numba_funcify

        class Marker(lucent.graph.op.Op):
            __props__ = ()

        @numba_funcify.register(Marker)
        def _marker(op, node=None, **kwargs):  # a user's kernel
            raise NotImplementedError

        f2 = lucent.function([x, y], [loss, lt.exp(x) * 3.0])
        report["after_registration"] = bool(f2.maker.linker.program.native)
        """,
    )
    assert report["native"] is True and report["after_registration"] is False


def test_loops_are_bundled_too(tmp_path):
    body = """
        from lucent.scan import scan
        W = np.array([[0.5, -0.2], [0.1, 0.3]])
        xs = lt.dmatrix("xs")
        h0 = lt.dvector("h0")
        hs, _ = scan(lambda x_t, h: lt.tanh(lt.dot(W, h) + x_t), sequences=xs, outputs_info=h0)
        r = lucent.function([xs, h0], hs)
        seq = np.linspace(-1.0, 1.0, 10).reshape(5, 2)
        h = np.zeros(2); want = []
        for t in range(5):
            h = np.tanh(W @ h + seq[t]); want.append(h)
        np.testing.assert_allclose(r(seq, np.zeros(2)), np.array(want), rtol=1e-12)
        report["loop_native"] = bool(r.maker.linker.program.native)
        """
    assert _run(tmp_path, body)["loop_native"] is False
    assert _run(tmp_path, body)["loop_native"] is True


def test_the_symbol_table_of_an_object_is_read():
    from numba.core import registry
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.runtime import nrtdynmod

    from lucent.link.numba import native

    assert native.elf_symbols(b"not an object") is None
    ctx = registry.cpu_target.target_context
    ctx.refresh()
    with global_compiler_lock:
        ir_mod, _ = nrtdynmod.create_nrt_module(ctx)
        library = ctx.codegen().create_library("elf_symbols_test")
        library.enable_object_caching()
        library.add_ir_module(ir_mod)
        library.finalize()
        _, _, (obj, _) = library.serialize_using_object_code()
    strong, weak, undefined = native.elf_symbols(obj)
    assert "NRT_decref" in strong | weak
    assert "NRT_MemInfo_call_dtor" in undefined
    assert not (strong & undefined)


def test_layouts_are_what_numba_types():
    import numba

    from lucent.link.numba import native

    for a in (np.zeros((3, 4)), np.zeros((3, 4), order="F"), np.zeros((4, 6))[:, ::2], np.zeros(()), np.zeros(5)):
        ty = numba.typeof(a)
        layout, writeable, aligned, dtype, ndim = native._layout(a)
        assert (layout, writeable, aligned, ndim) == (ty.layout, ty.mutable, ty.aligned, ty.ndim)
        b = a.copy()
        b.setflags(write=False)
        assert native._layout(b)[1] is False and numba.typeof(b).mutable is False
