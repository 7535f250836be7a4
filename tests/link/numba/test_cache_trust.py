"""A cache that can be trusted: what a kernel calls is in the key, entries are checked,
an unusable directory degrades to a per-process cache, an interrupted compile harms nothing."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch import basic as dispatch_basic  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _env(cache_dir, *paths):
    env = dict(os.environ)
    # Numba's disk cache is what is tested: no native bundle may bypass it.
    env["LUCENT_FLAGS"] = f"base_compiledir={cache_dir},numba__native_cache=False"
    env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), ROOT, env.get("PYTHONPATH", "")])
    env["PYTHONWARNINGS"] = "default"
    return env


def _run(script, cache_dir, *paths):
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True,
        env=_env(cache_dir, *paths), cwd=ROOT, timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


# --- a helper module of the user's, changed between two processes ---------------------------
USER_OP = textwrap.dedent(
    """
    import numpy as np
    import lucent.tensor as lt
    from lucent.graph.basic import Apply
    from lucent.graph.op import Op
    from lucent.link.numba.dispatch import numba_funcify, numba_njit
    from userpkg import helpers
    from userpkg.helpers import shift

    class Shift(Op):
        __props__ = ()

        def make_node(self, x):
            x = lt.as_tensor_variable(x)
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            out[0][0] = inputs[0] + 1.0

    @numba_njit
    def shift_kernel(x):
        # one helper imported by name, one reached through its module
        return shift(x) + helpers.scale(x) * 0.0

    @numba_funcify.register(Shift)
    def _funcify_shift(op, node=None, **kwargs):
        return shift_kernel
    """
)
HELPERS = textwrap.dedent(
    """
    from numba import njit

    OFFSET = {offset}

    @njit
    def shift(x):
        return x + OFFSET

    @njit
    def scale(x):
        return x * {scale}
    """
)
USE_SHIFT = textwrap.dedent(
    """
    import json
    import numpy as np
    import lucent, lucent.tensor as lt
    from userpkg.ops import Shift
    x = lt.dvector("x")
    f = lucent.function([x], Shift()(x), mode="FAST_RUN")
    linker = f.maker.linker
    print(json.dumps({"value": f(np.zeros(2)).tolist(), "hit": linker.cache_hit,
                      "reason": linker.uncacheable_reason}))
    """
)


def _write_user_package(root, offset, scale=2.0):
    pkg = root / "userpkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text(USER_OP)
    (pkg / "helpers.py").write_text(HELPERS.format(offset=offset, scale=scale))


def test_a_changed_helper_module_runs_its_new_code(tmp_path):
    cache, code = tmp_path / "cache", tmp_path / "code"
    code.mkdir()
    _write_user_package(code, offset=1.0)
    first, _ = _run(USE_SHIFT, cache, code)
    assert first["value"] == [1.0, 1.0] and first["reason"] is None
    again, _ = _run(USE_SHIFT, cache, code)
    assert again["hit"] is True and again["value"] == [1.0, 1.0]
    # The kernel's own file is unchanged; only the module it calls into changes.
    _write_user_package(code, offset=5.0)
    changed, _ = _run(USE_SHIFT, cache, code)
    assert changed["value"] == [5.0, 5.0]
    assert changed["hit"] is False
    # A helper reached as ``module.function`` counts too (its result is multiplied by 0,
    # so the value cannot show it: the key must).
    _write_user_package(code, offset=5.0, scale=3.0)
    via_module, _ = _run(USE_SHIFT, cache, code)
    assert via_module["hit"] is False and via_module["value"] == [5.0, 5.0]


# --- swapped or altered entries --------------------------------------------------------------
GRAPH = textwrap.dedent(
    """
    import json
    import numpy as np
    import lucent, lucent.tensor as lt
    x = lt.dvector("x")
    f = lucent.function([x], {expr}, mode="FAST_RUN")
    print(json.dumps({{"value": f(np.arange(3.0)).tolist(), "hit": f.maker.linker.cache_hit,
                       "key": f.maker.linker.cache_key}}))
    """
)


def _data_files(cache, key):
    stem = f"lucent_graph_{key[:40]}"
    return sorted(p for p in cache.rglob(f"{stem}*.nbc"))


def test_a_swapped_cache_entry_is_detected_and_compiled_again(tmp_path):
    cache = tmp_path / "cache"
    a_script, b_script = GRAPH.format(expr="lt.exp(x) * 2"), GRAPH.format(expr="lt.sin(x) - 7")
    a, _ = _run(a_script, cache)
    b, _ = _run(b_script, cache)
    a_data, b_data = _data_files(cache, a["key"]), _data_files(cache, b["key"])
    assert a_data and b_data
    # Another graph's machine code (same argument types), with its own checksum.
    a_data[0].write_bytes(b_data[0].read_bytes())
    assert not list(cache.rglob("*.sum"))  # data and checksum are one file
    swapped, stderr = _run(a_script, cache)
    assert swapped["value"] == pytest.approx((np.exp(np.arange(3.0)) * 2).tolist())
    assert swapped["hit"] is False
    assert "swapped or altered" in stderr
    # The entry was saved again, correctly.
    healed, _ = _run(a_script, cache)
    assert healed["hit"] is True and healed["value"] == swapped["value"]
    # Altered bytes are caught the same way.
    data = bytearray(a_data[0].read_bytes())
    data[-1] ^= 0xFF
    a_data[0].write_bytes(bytes(data))
    altered, stderr = _run(a_script, cache)
    assert altered["value"] == swapped["value"] and altered["hit"] is False


# --- an unusable cache directory -------------------------------------------------------------
TWO_FUNCTIONS = textwrap.dedent(
    """
    import json
    import numpy as np
    import lucent, lucent.tensor as lt
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x) * 2, mode="FAST_RUN")
    g = lucent.function([x], lt.cos(x) + 1, mode="FAST_RUN")
    print(json.dumps({"f": f(np.zeros(2)).tolist(), "g": g(np.zeros(2)).tolist(),
                      "fallbacks": [repr(o) for o in f.maker.linker.fallback_ops]}))
    """
)


def test_a_cache_directory_that_is_a_file_warns_once_and_still_compiles(tmp_path):
    not_a_dir = tmp_path / "cache-file"
    not_a_dir.write_text("not a directory")
    result, stderr = _run(TWO_FUNCTIONS, not_a_dir)
    assert result == {"f": [2.0, 2.0], "g": [2.0, 2.0], "fallbacks": []}
    assert stderr.count("CacheDirectoryWarning") == 1
    assert "is not a directory" in stderr
    assert "NumbaFallbackWarning" not in stderr and "object mode" not in stderr


def test_a_read_only_cache_directory_warns_and_uses_a_private_one(tmp_path, monkeypatch):
    read_only = tmp_path / "ro"
    real_access = os.access

    def access(path, mode, *args, **kwargs):
        # (tests may run as root, for whom permission bits do not apply)
        if str(path).startswith(str(read_only)) and mode & os.W_OK:
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    with lucent.config.change_flags(base_compiledir=str(read_only)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = dispatch_basic._kernel_dir()
            second = dispatch_basic._kernel_dir()
        assert first == second and not first.startswith(str(read_only))
        messages = [str(w.message) for w in caught if w.category is dispatch_basic.CacheDirectoryWarning]
        assert len(messages) == 1 and "is read-only" in messages[0]
        x = lt.dvector("x")
        f = lucent.function([x], lt.exp(x) + 1, mode="FAST_RUN")
        np.testing.assert_allclose(f(np.zeros(2)), [2.0, 2.0])
        assert f.maker.linker.fallback_ops == []


# --- an interrupted compile ------------------------------------------------------------------
BIG_GRAPH = textwrap.dedent(
    """
    import sys
    import numpy as np
    import lucent, lucent.tensor as lt
    x = lt.dmatrix("x")
    y = x
    for k in range(12):
        y = lt.tanh(y @ x + k) if k % 3 == 0 else lt.exp(-y * (k + 1)).sum(axis=0) + y
    print("compiling", flush=True)
    f = lucent.function([x], y, mode="FAST_RUN")
    print("done", flush=True)
    """
)


@pytest.mark.slow
def test_an_interrupted_compile_leaves_the_cache_usable(tmp_path):
    cache = tmp_path / "cache"
    proc = subprocess.Popen(
        [sys.executable, "-c", BIG_GRAPH], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=_env(cache), cwd=ROOT,
    )
    assert proc.stdout.readline().strip() == "compiling"
    time.sleep(1.0)  # well inside rewriting or kernel compilation
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=600)
    # Whatever it was doing, the next process compiles and runs, and so does a third
    # from the (now complete) cache.
    script = BIG_GRAPH.replace('print("done", flush=True)', (
        'import json; v = f(np.eye(2) * 0.1); '
        'print(json.dumps({"finite": bool(np.isfinite(v).all()), "hit": f.maker.linker.cache_hit, '
        '"reason": f.maker.linker.uncacheable_reason}))'
    ))
    first, _ = _run(script, cache)
    assert first["finite"] is True
    second, _ = _run(script, cache)
    assert second["finite"] is True and second["hit"] is True, second


def test_an_interrupted_compile_leaves_the_process_usable(monkeypatch):
    import numba.core.dispatcher as dispatcher_module

    real_compile = dispatcher_module.Dispatcher.compile
    calls = {"n": 0}

    def interrupted(self, sig):
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt
        return real_compile(self, sig)

    x = lt.dvector("x")
    out = lt.sqrt(lt.exp(x) + 3.25)
    monkeypatch.setattr(dispatcher_module.Dispatcher, "compile", interrupted)
    with pytest.raises(KeyboardInterrupt):
        lucent.function([x], out, mode="FAST_RUN")
    monkeypatch.setattr(dispatcher_module.Dispatcher, "compile", real_compile)
    f = lucent.function([x], out, mode="FAST_RUN")
    np.testing.assert_allclose(f(np.zeros(2)), np.sqrt(np.exp(np.zeros(2)) + 3.25))
