"""Tests of lucent/link/numba/dispatch/runtime_cache.py: Numba's runtime library is compiled once per machine."""

import glob
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")

from lucent.link.numba.dispatch import runtime_cache  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# A new process: compiles a function that allocates (so it needs the runtime),
# checks its result and says what the runtime initialisation did.
_CHILD = textwrap.dedent(
    """
    import numpy as np
    import lucent, lucent.tensor as lt
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x) * 2.0 + x, mode="FAST_RUN")
    v = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(f(v), np.exp(v) * 2.0 + v)
    from lucent.link.numba.dispatch import runtime_cache
    print("OUTCOME", runtime_cache.last_outcome)
    """
)


def _run_child(cache_dir):
    env = dict(os.environ)
    # Numba's disk cache is what is tested: no native bundle may bypass it.
    env["LUCENT_FLAGS"] = f"base_compiledir={cache_dir},numba__native_cache=False"
    env["NUMBA_CACHE_DIR"] = os.path.join(str(cache_dir), "numba-own")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    outcome = [line.split()[1] for line in out.stdout.splitlines() if line.startswith("OUTCOME ")]
    return outcome[-1]


def _entries(cache_dir):
    return glob.glob(os.path.join(str(cache_dir), "numba", "codegen*", "nrt-*.bin"))


def test_the_runtime_is_compiled_by_the_first_process_and_loaded_by_the_next(tmp_path):
    assert _run_child(tmp_path) == "compiled"
    assert len(_entries(tmp_path)) == 1
    assert _run_child(tmp_path) == "loaded"


def test_a_damaged_or_swapped_entry_is_compiled_again_and_replaced(tmp_path):
    assert _run_child(tmp_path) == "compiled"
    (entry,) = _entries(tmp_path)
    good = open(entry, "rb").read()
    # one flipped byte in the machine code
    damaged = bytearray(good)
    damaged[-5] ^= 0xFF
    open(entry, "wb").write(bytes(damaged))
    assert _run_child(tmp_path) == "compiled"
    assert open(entry, "rb").read() == good
    # a truncated file, then another key's (well-formed) entry under this name
    open(entry, "wb").write(good[:40])
    assert _run_child(tmp_path) == "compiled"
    other = runtime_cache._seal("another key", b"\x7fELF", b"BC")
    open(entry, "wb").write(other)
    assert _run_child(tmp_path) == "compiled"
    assert _run_child(tmp_path) == "loaded"


def test_an_entry_opens_only_with_its_own_key():
    sealed = runtime_cache._seal("k1", b"object bytes", b"bitcode")
    assert runtime_cache._unseal("k1", sealed) == (b"object bytes", b"bitcode")
    assert runtime_cache._unseal("k2", sealed) is None
    assert runtime_cache._unseal("k1", sealed[:-1]) is None
    assert runtime_cache._unseal("k1", b"") is None
    tampered = bytearray(sealed)
    tampered[-1] ^= 1
    assert runtime_cache._unseal("k1", bytes(tampered)) is None
