"""Measure one workload on one backend, in a process of its own.

``benchmarks/run.py`` starts this script once per measurement, with any
interpreter (lucent's, or another one holding PyTensor or JAX), so that every
compile time is measured in a fresh process and every library runs under the
same single-threaded environment. It imports lucent only when the backend is
lucent: the PyTensor and JAX interpreters need NumPy and their own library.

Usage::

    python worker.py info
    python worker.py run CASE BACKEND --phase cold|warm [--quick]

The result is one line ``BENCH_RESULT <json>`` on stdout (libraries may print
their own lines around it).
"""

import os

# Single-threaded before NumPy (or any BLAS) is imported; run.py sets these
# too, this only covers running the worker by hand. A multi-core measurement
# (BENCH_THREADS set by run.py) keeps the thread settings it was given.
if "BENCH_THREADS" not in os.environ:
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    os.environ.setdefault(
        "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    )

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

MARKER = "BENCH_RESULT "
OPTIONAL_LIBRARIES = ("lucent", "pytensor", "jax", "numba")


# --------------------------------------------------------------------------
# info: what this interpreter has
# --------------------------------------------------------------------------


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def interpreter_info():
    """Versions of Python and the libraries, found without importing them."""
    libs = {}
    for name in ("numpy",) + OPTIONAL_LIBRARIES:
        found = importlib.util.find_spec(name) is not None
        libs[name] = (_version(name) or "unknown") if found else None
    return {
        "python": platform.python_version(),
        "executable": sys.executable,
        "libraries": libs,
    }


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def median_call_time(call, budget_s, min_repeats):
    """Median seconds per call over batches that each last at least ~2 ms.

    Fast calls (the overhead workload) are batched so the timer's own cost
    does not count; slow calls are batches of one. The garbage collector is
    off while timing, as in ``timeit``.
    """
    call()  # warm-up
    first, _ = _timed(call)
    number = max(1, int(2e-3 / max(first, 1e-9)))
    repeats = int(budget_s / max(first * number, 1e-9))
    repeats = min(max(repeats, min_repeats), 5000)
    samples = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(number):
                call()
            samples.append((time.perf_counter() - start) / number)
    finally:
        if gc_was_enabled:
            gc.enable()
    return statistics.median(samples), repeats * number


# --------------------------------------------------------------------------
# Agreement with NumPy
# --------------------------------------------------------------------------


def compare(outputs, reference, rtol, atol):
    """Per-output agreement with NumPy: ``(all_agree, details)``."""
    import numpy as np

    details = {}
    ok = set(outputs) == set(reference)
    for name, ref in reference.items():
        got = outputs.get(name)
        if got is None or np.shape(got) != np.shape(ref):
            details[name] = f"shape {np.shape(got)} != {np.shape(ref)}"
            ok = False
            continue
        close = bool(np.allclose(got, ref, rtol=rtol, atol=atol, equal_nan=True))
        err = float(np.max(np.abs(got - ref))) if np.size(ref) else 0.0
        details[name] = {"allclose": close, "max_abs_err": err}
        ok = ok and close
    return ok, details


# --------------------------------------------------------------------------
# run: one measurement
# --------------------------------------------------------------------------


def _load_library(backend):
    """Import the backend's library (the import is timed apart from compiling)."""
    import workloads

    if backend.kind == "numpy":
        return None
    if backend.kind == "symbolic":
        return workloads.load_symbolic(backend.library)
    jax, m = workloads.load_jax()
    cache = os.environ.get("BENCH_CACHE_DIR")
    if cache:
        jax.config.update("jax_compilation_cache_dir", os.path.join(cache, "jax"))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return jax, m


def measure(case_key, backend_name, phase, quick):
    """Compile (build + first call) and, in the warm phase, time and check."""
    import workloads

    case = workloads.CASES_BY_KEY[case_key]
    backend = workloads.BACKENDS_BY_NAME[backend_name]
    result = {"case": case_key, "backend": backend_name, "phase": phase}
    result["import_s"], lib = _timed(lambda: _load_library(backend))
    data = case.make_data(quick)
    result["build_s"], runner = _timed(lambda: case.build(backend, lib, data))
    result["first_call_s"], first = _timed(runner.call)
    outputs = runner.outputs(first)
    budget, min_repeats = (0.3, 3) if quick else (3.0, 7)
    if phase == "cold":
        budget, min_repeats = 0.0, 2
    result["median_s"], result["calls"] = median_call_time(runner.call, budget, min_repeats)
    steady = min(result["median_s"], result["first_call_s"])
    result["compile_s"] = result["build_s"] + result["first_call_s"] - steady
    if phase == "warm" and backend.kind != "numpy":
        del runner, first
        reference_backend = workloads.BACKENDS_BY_NAME["numpy"]
        ref_runner = case.build(reference_backend, None, data)
        reference = ref_runner.outputs(ref_runner.call())
        result["agree"], result["agree_details"] = compare(
            outputs, reference, case.rtol, case.atol
        )
    result["mode_repr"] = _mode_repr(backend)
    return result


def _mode_repr(backend):
    """How the library describes the mode (lucent says which linker it uses)."""
    if backend.kind != "symbolic":
        return None
    try:
        module = __import__(backend.library)
        if backend.library == "lucent":
            return repr(module.get_mode(backend.mode))
        from pytensor.compile.mode import get_mode

        return f"{backend.mode}: {type(get_mode(backend.mode).linker).__name__}"
    except Exception as exc:  # a description is optional
        return f"unknown ({exc})"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info")
    run = sub.add_parser("run")
    run.add_argument("case")
    run.add_argument("backend")
    run.add_argument("--phase", choices=("cold", "warm"), required=True)
    run.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if args.command == "info":
        result = interpreter_info()
    else:
        try:
            result = measure(args.case, args.backend, args.phase, args.quick)
        except Exception as exc:
            result = {
                "case": args.case,
                "backend": args.backend,
                "phase": args.phase,
                "error": f"{type(exc).__name__}: {exc}".splitlines()[0][:300],
                "traceback": traceback.format_exc(),
            }
    sys.stdout.write("\n" + MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
