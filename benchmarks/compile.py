"""What compiling costs: time with an empty and a warm cache, a variant in the same
process, DebugMode, and the memory each compiled function keeps.

For each backend (lucent FAST_RUN and DebugMode, PyTensor C and NUMBA, JAX),
in fresh single-threaded processes:

* **cold**: the MLP training step of workload e (784-512-512-10, batch 256)
  built, compiled and called once with an empty compile cache;
* **warm**: the same in a new process reusing that cache;
* **variant, same process**: after the cold compile, the same step with
  another learning rate (``variant lr``) and with other hidden sizes
  (512 -> 384, ``variant sizes``), each compiled and called once;
* **memory per function**: 300 distinct small functions (one formula, other
  constants) compiled and called once in one process: resident memory
  gained per function; how much of it is returned to the system after they
  are all dropped (``gc.collect()``), and how much of what they held is
  reused by 300 new ones compiled after the drop (1 - their growth / the
  first growth).

    .venv/bin/python benchmarks/compile.py [--quick] [--backends ...] \
        [--pytensor-python /tmp/ptvenv/bin/python] [--jax-python /tmp/jaxvenv/bin/python]

Targets (lucent FAST_RUN): cold <= 2 s, warm <= 0.25 s, variants <= 0.3 s,
DebugMode cold <= 1.5x FAST_RUN cold, memory <= 0.5 MB per function.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

_WORKER = r"""
import gc, json, os, sys, time
sys.path.insert(0, sys.argv[1])
backend_name, task, quick = sys.argv[2], sys.argv[3], sys.argv[4] == "1"
import numpy as np
import workloads

def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

if backend_name == "lucent-DebugMode":
    backend = workloads.Backend("lucent-DebugMode", "symbolic", "lucent", "main", mode="DebugMode")
else:
    backend = workloads.BACKENDS_BY_NAME[backend_name]
lib = workloads.load_jax() if backend.kind == "jax" else workloads.load_symbolic(backend.library)
case = workloads.CASES_BY_KEY["e"]

def mlp_data(hidden):
    data = workloads.data_mlp(quick)
    if hidden is not None:
        r = np.random.default_rng(9)
        sizes = (data["W1"].shape[0], hidden, hidden, data["W3"].shape[1])
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
            data[f"W{i}"] = r.standard_normal((a, b)) / np.sqrt(a)
            data[f"b{i}"] = np.zeros(b)
    return data

def timed_build(data):
    start = time.perf_counter()
    runner = case.build(backend, lib, data)
    runner.call()
    first = time.perf_counter() - start
    t = time.perf_counter()
    runner.call()
    return first - (time.perf_counter() - t)

result = {}
if task == "step":
    result["compile"] = timed_build(mlp_data(None))
    workloads.LR = 0.05
    result["variant_lr"] = timed_build(mlp_data(None))
    workloads.LR = 0.1
    result["variant_sizes"] = timed_build(mlp_data(64 if quick else 384))
elif task == "memory":
    n = 30 if quick else 300
    x0 = np.linspace(0, 1, 16)
    def make(k):
        if backend.kind == "jax":
            jax, m = lib
            f = jax.jit(lambda x: m.exp(x) * (1.0 + k / 7.0) + m.sin(x * (k + 1)))
            return lambda: jax.block_until_ready(f(x0))
        T = lib.tensor
        x = T.dvector("x")
        f = lib.function([x], T.exp(x) * (1.0 + k / 7.0) + T.sin(x * (k + 1)), mode=backend.mode)
        return lambda: f(x0)
    # a first function pays the library's one-time costs
    warm = make(-1); warm()
    gc.collect()
    before = rss_mb()
    fns = []
    for k in range(n):
        fn = make(k)
        fn()
        fns.append(fn)
    gc.collect()
    after = rss_mb()
    del fns, fn
    gc.collect()
    dropped = rss_mb()
    # as many new functions again: what the dropped ones gave back is reused
    fns = [make(n + k) for k in range(n)]
    for fn in fns:
        fn()
    gc.collect()
    again = rss_mb()
    grown = max(after - before, 1e-9)
    result["mb_per_function"] = (after - before) / n
    result["returned_fraction"] = min(max((after - dropped) / grown, 0.0), 1.0)
    result["reused_fraction"] = min(max(1.0 - (again - dropped) / grown, 0.0), 1.0)
print("COMPILE_RESULT " + json.dumps(result))
"""

BACKENDS = ("lucent-FAST_RUN", "lucent-DebugMode", "pytensor-C", "pytensor-NUMBA", "jax")


def _run(python, backend, task, quick, cache):
    env = dict(os.environ)
    env.update(
        NUMBA_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
        XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
        LUCENT_FLAGS=f"base_compiledir={cache}/lucent",
        PYTENSOR_FLAGS=f"base_compiledir={cache}/pytensor",
        NUMBA_CACHE_DIR=f"{cache}/numba",
        JAX_COMPILATION_CACHE_DIR=f"{cache}/jax",
        PYTHONPATH=REPO + os.pathsep + env.get("PYTHONPATH", ""),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run(
        [python, "-c", _WORKER, HERE, backend, task, "1" if quick else "0"],
        env=env, cwd=REPO, capture_output=True, text=True, check=False,
    )
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("COMPILE_RESULT ")]
    if out.returncode != 0 or not lines:
        tail = "\n".join(out.stderr.strip().splitlines()[-5:])
        return {"error": tail or f"exit {out.returncode}"}
    return json.loads(lines[-1][len("COMPILE_RESULT "):])


def measure(backend, python, quick):
    with tempfile.TemporaryDirectory(prefix="lucent-compile-bench-") as cache:
        cold = _run(python, backend, "step", quick, cache)
        warm = _run(python, backend, "step", quick, cache)
    with tempfile.TemporaryDirectory(prefix="lucent-compile-bench-") as cache:
        memory = _run(python, backend, "memory", quick, cache)
    return {"cold": cold, "warm": warm, "memory": memory}


def _fmt(value, unit="s"):
    if value is None:
        return "-"
    if unit == "s":
        return f"{value * 1e3:.0f} ms" if value < 1 else f"{value:.2f} s"
    if unit == "MB":
        return f"{value:.2f} MB"
    return f"{100 * value:.0f}%"


def table(results):
    rows = [
        "| backend | cold | warm (new process) | variant lr | variant sizes | memory / function | returned after drop | reused after drop |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for backend, r in results.items():
        cold, warm, mem = r["cold"], r["warm"], r["memory"]
        if "error" in cold:
            rows.append(f"| {backend} | error: {cold['error'].splitlines()[-1][:80]} | | | | | | |")
            continue
        rows.append(
            f"| {backend} | {_fmt(cold.get('compile'))} | {_fmt(warm.get('compile'))} "
            f"| {_fmt(cold.get('variant_lr'))} | {_fmt(cold.get('variant_sizes'))} "
            f"| {_fmt(mem.get('mb_per_function'), 'MB')} | {_fmt(mem.get('returned_fraction'), '%')} "
            f"| {_fmt(mem.get('reused_fraction'), '%')} |"
        )
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small layers, 30 functions")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--pytensor-python", default=None)
    parser.add_argument("--jax-python", default=None)
    parser.add_argument("--json", default=None, help="write the raw results here")
    args = parser.parse_args(argv)
    interpreters = {"lucent": sys.executable, "pytensor": args.pytensor_python, "jax": args.jax_python}
    results = {}
    for backend in args.backends.split(","):
        library = "jax" if backend == "jax" else backend.split("-")[0]
        python = interpreters.get(library)
        if python is None:
            print(f"skipping {backend}: no interpreter given for {library}", file=sys.stderr)
            continue
        print(f"measuring {backend} ...", file=sys.stderr, flush=True)
        results[backend] = measure(backend, python, args.quick)
    print(table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
