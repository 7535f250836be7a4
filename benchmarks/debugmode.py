"""What DebugMode costs on the MLP training step (784-512-512-10, batch 256).

Measures, each in a fresh single-threaded subprocess:

* cold compile: function creation + first call with an empty compile
  cache (a new ``base_compiledir``);
* warm compile: the same in a new process reusing that cache;
* call time: median over ``--calls`` calls of DebugMode, against the
  Python path (the py linker with the same fast_run rewrites, and
  FAST_COMPILE), and their ratio.

Targets: call time at most 10x the Python path's; cold compile at most
30 s, warm at most 3 s.

    .venv/bin/python benchmarks/debugmode.py [--calls 7] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_WORKER = r"""
import json, sys, time
t_import = time.perf_counter()
import numpy as np
import lucent
from lucent.compile.mode import Mode
from lucent.debugmode import DebugMode
from tests.models import mlp_data, mlp_training_step

what, calls, quick = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
sizes = (784, 64, 64, 10) if quick else (784, 512, 512, 10)
X, Y = mlp_data(batch=16 if quick else 256, sizes=sizes)
modes = {
    "debug": lambda: DebugMode(),
    "py_fast_run": lambda: Mode(linker="py", optimizer="fast_run"),
    "fast_compile": lambda: "FAST_COMPILE",
}
inputs, cost, updates, params = mlp_training_step(sizes=sizes)
start = time.perf_counter()
f = lucent.function(inputs, cost, updates=updates, mode=modes[what]())
f(X, Y)
compile_s = time.perf_counter() - start
times = []
for _ in range(calls):
    t = time.perf_counter()
    f(X, Y)
    times.append(time.perf_counter() - t)
report = getattr(f, "debug_report", None)
print(json.dumps({
    "compile": compile_s,
    "median_call": float(np.median(times)),
    "ok": None if report is None else report.ok,
}))
"""


def _run(what, calls, quick, compiledir):
    env = dict(os.environ)
    env.update(
        NUMBA_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        LUCENT_FLAGS=f"base_compiledir={compiledir}",
        PYTHONPATH=REPO + os.pathsep + env.get("PYTHONPATH", ""),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a default Python, as in run.py
    out = subprocess.run(
        [sys.executable, "-c", _WORKER, what, str(calls), "1" if quick else "0"],
        env=env, cwd=REPO, capture_output=True, text=True, check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"worker {what} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="small hidden layers and batch")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="lucent-debugmode-bench-") as cache:
        cold = _run("debug", args.calls, args.quick, cache)
        warm = _run("debug", args.calls, args.quick, cache)
        py = _run("py_fast_run", args.calls, args.quick, cache)
        fc = _run("fast_compile", args.calls, args.quick, cache)

    call = min(cold["median_call"], warm["median_call"])
    rows = [
        ("DebugMode compile, cold cache (s)", cold["compile"], "<= 30"),
        ("DebugMode compile, warm cache (s)", warm["compile"], "<= 3"),
        ("DebugMode median call (ms)", 1e3 * call, ""),
        ("py linker + fast_run rewrites, median call (ms)", 1e3 * py["median_call"], ""),
        ("FAST_COMPILE median call (ms)", 1e3 * fc["median_call"], ""),
        ("ratio DebugMode / py linker + fast_run", call / py["median_call"], "<= 10"),
        ("ratio DebugMode / FAST_COMPILE", call / fc["median_call"], "<= 10"),
    ]
    for label, value, target in rows:
        print(f"{label:<50} {value:10.3f}  {target}")
    print(f"DebugMode found no problem: {cold['ok'] and warm['ok']}")


if __name__ == "__main__":
    main()
