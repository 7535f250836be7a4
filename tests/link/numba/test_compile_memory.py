"""What compiling costs in lasting memory: a function's share, and what dropping it gives back."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

SCRIPT = """
import gc, json, os, sys
import numpy as np
import lucent, lucent.tensor as lt
from numba.core import event

compiled = []
class Count(event.Listener):
    def on_start(self, e):
        compiled.append(e.data["dispatcher"].py_func.__name__)
    def on_end(self, e):
        pass
event.register("numba:compile", Count())

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

x0 = np.linspace(0.0, 1.0, 16)
def make(k):
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x) * (1.0 + (k + 0.1) / 7.0) + lt.sin(x * (k + 3)))
    f(x0)
    return f

def batch(start, n):
    return [make(k) for k in range(start, start + n)]

for f in batch(100, 3):  # the library's one-time costs (same constant dtypes as below)
    pass
gc.collect()
n = int(sys.argv[1])
compiled.clear()
before = rss_mb()
fns = batch(0, n)
gc.collect()
after = rss_mb()
graph_compiles = compiled.count("graph_fn")
del fns
gc.collect()
fns = batch(n, n)  # as many new functions, after dropping the first ones
gc.collect()
again = rss_mb()
print(json.dumps({"per_function": (after - before) / n, "again_per_function": (again - after) / n,
                  "graph_compiles": graph_compiles}))
"""


def test_compiled_functions_share_machine_code_and_dropped_ones_are_reused(tmp_path):
    """A function of the same formula with other numbers compiles nothing and keeps little memory.

    Array constants are arguments of the compiled graph function, so the
    60 functions share one machine code; what each keeps is its graph and
    call plan (well under half a megabyte), and after the first 60 are
    dropped, 60 more fit in the memory they gave back.
    """
    env = dict(os.environ, LUCENT_FLAGS=f"base_compiledir={tmp_path}",
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", SCRIPT, "60"], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=900)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["graph_compiles"] == 0, result
    assert result["per_function"] < 0.5, result
    assert result["again_per_function"] < 0.5 * max(result["per_function"], 0.1), result
