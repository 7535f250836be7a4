"""Run the benchmark workloads on every available backend.

    python benchmarks/run.py [--quick] [--only a,b] [--backends numpy,lucent-FAST_RUN]
                             [--pytensor-python PATH] [--jax-python PATH]
                             [--markdown out.md] [--json out.json]

Every measurement runs in a fresh subprocess (``benchmarks/worker.py``) with
BLAS, OpenMP and Numba limited to one thread, so the ratios compare
compilers rather than thread counts, and so compile times include nothing a
previous measurement left in memory. The multi-core backends (``-2t``, and
JAX with its default threading) are the exception: their processes get
their thread counts (``threads_env``) and are compared with the same
library on one thread. Each (workload, backend) pair gets its
own empty cache directory: a first process compiles into it ("cold"), a
second one starts from it ("warm") and also times the calls and checks the
results against NumPy.

lucent runs in this interpreter. PyTensor (Python >= 3.12) and JAX may live
in other interpreters, given by ``--pytensor-python`` / ``--jax-python``;
a backend whose library is not importable is skipped with a note.

Exit status: 0 when everything ran and agreed with NumPy, 1 otherwise.
"""

import os

# Fair, single-threaded runs: set before anything can import NumPy. The
# workers inherit this environment.
THREAD_ENV = {
    "NUMBA_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
os.environ.update(THREAD_ENV)

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import report  # noqa: E402
import workloads  # noqa: E402  (imports NumPy, after THREAD_ENV is set)

WORKER = os.path.join(HERE, "worker.py")
MARKER = "BENCH_RESULT "


# --------------------------------------------------------------------------
# Subprocesses
# --------------------------------------------------------------------------


def _with_flag(flags, name, value):
    """``flags`` (a FLAGS string) with ``name`` set to ``value``, replacing any old one."""
    kept = [f for f in (flags or "").split(",") if f and not f.startswith(name + "=")]
    return ",".join(kept + [f"{name}={value}"])


def threads_env(threads):
    """Thread settings of a backend: ``THREAD_ENV`` for 1, N threads for N > 1, none for 0 (library default)."""
    if threads == 1:
        return dict(THREAD_ENV), []
    if threads == 0:
        return {"BENCH_THREADS": "default"}, list(THREAD_ENV)
    env = {name: str(threads) for name in THREAD_ENV if name != "XLA_FLAGS"}
    env["XLA_FLAGS"] = f"--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={threads}"
    env["BENCH_THREADS"] = str(threads)
    return env, []


def worker_env(cache_dir, threads=1):
    """The environment of a measurement: ``threads`` threads (see ``threads_env``), caches under ``cache_dir``."""
    env = dict(os.environ)
    settings, unset = threads_env(threads)
    env.update(settings)
    for name in unset:
        env.pop(name, None)
    # Measure a default Python: it caches bytecode (a warm start of any
    # library reads .pyc files). Some sandboxes switch that off globally.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["LUCENT_FLAGS"] = _with_flag(
        env.get("LUCENT_FLAGS"), "base_compiledir", os.path.join(cache_dir, "lucent")
    )
    env["LUCENT_FLAGS"] = _with_flag(env["LUCENT_FLAGS"], "numba__num_threads", threads)
    env["PYTENSOR_FLAGS"] = _with_flag(
        env.get("PYTENSOR_FLAGS"), "base_compiledir", os.path.join(cache_dir, "pytensor")
    )
    env["NUMBA_CACHE_DIR"] = os.path.join(cache_dir, "numba")
    env["BENCH_CACHE_DIR"] = cache_dir
    return env


def call_worker(python, args, env, timeout):
    """Run the worker and return its JSON result (an ``error`` entry on failure)."""
    try:
        proc = subprocess.run(
            [python, WORKER, *args], env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    except OSError as exc:
        return {"error": f"cannot start {python}: {exc}"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"worker exited with {proc.returncode}: {tail}"}


def measure(python, case, backend, quick, timeout, scratch):
    """Cold then warm measurement of one pair, each in a fresh process."""
    cache_dir = tempfile.mkdtemp(prefix=f"{case.key}-{backend.name}-", dir=scratch)
    env = worker_env(cache_dir, backend.threads)
    phases = {}
    for phase in ("cold", "warm"):
        args = ["run", case.key, backend.name, "--phase", phase] + (["--quick"] if quick else [])
        phases[phase] = call_worker(python, args, env, timeout)
        if phases[phase].get("error"):
            break
    shutil.rmtree(cache_dir, ignore_errors=True)
    return phases


# --------------------------------------------------------------------------
# Interpreters and backends
# --------------------------------------------------------------------------


def probe_interpreters(args):
    """``{role: (python, info)}`` for the lucent, PyTensor and JAX interpreters."""
    roles = {
        "main": sys.executable,
        "pytensor": args.pytensor_python or sys.executable,
        "jax": args.jax_python or sys.executable,
    }
    infos = {}
    for role, python in roles.items():
        info = call_worker(python, ["info"], dict(os.environ), 120)
        infos[role] = (python, info)
    return infos


def available_backends(names, interpreters):
    """The backends to run and ``{name: reason}`` for those that cannot run."""
    chosen, skipped = [], {}
    for name in names:
        backend = workloads.BACKENDS_BY_NAME[name]
        python, info = interpreters[backend.interpreter]
        if info.get("error"):
            skipped[name] = f"{python}: {info['error']}"
        elif not info["libraries"].get(backend.library):
            hint = {"pytensor": " (needs Python >= 3.12; pass --pytensor-python)",
                    "jax": " (pass --jax-python)"}.get(backend.library, "")
            skipped[name] = f"{backend.library} not importable by {python}{hint}"
        else:
            chosen.append(backend)
    return chosen, skipped


def backend_names(text):
    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    if not names:
        return [b.name for b in workloads.BACKENDS]
    unknown = [n for n in names if n not in workloads.BACKENDS_BY_NAME]
    if unknown:
        raise SystemExit(f"unknown backend(s) {unknown}; choose from {list(workloads.BACKENDS_BY_NAME)}")
    if "numpy" not in names:
        names.insert(0, "numpy")  # every ratio and check needs it
    return names


# --------------------------------------------------------------------------
# Header: what ran where
# --------------------------------------------------------------------------


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _describe(info, libs):
    found = info.get("libraries", {})
    parts = [f"Python {info.get('python', '?')}"]
    parts += [f"{lib} {found[lib]}" for lib in libs if found.get(lib)]
    return ", ".join(parts)


def header_info(args, interpreters, chosen, results, skipped):
    """Command, date, machine, versions and mode descriptions for the report."""
    roles_used = {b.interpreter for b in chosen}
    machine = [f"Machine: {cpu_model()}, {os.cpu_count()} logical cores, {platform.system()} "
               f"{platform.release()}"]
    labels = {"main": ("lucent", ("numpy", "numba", "lucent")),
              "pytensor": ("PyTensor", ("numpy", "numba", "pytensor")),
              "jax": ("JAX", ("numpy", "jax"))}
    for role in ("main", "pytensor", "jax"):
        if role in roles_used:
            label, libs = labels[role]
            machine.append(f"{label} interpreter: {_describe(interpreters[role][1], libs)}")
    notes = ["Single thread: " + ", ".join(f"{k}={v}" for k, v in THREAD_ENV.items()
                                           if k != "XLA_FLAGS") + "; XLA single-threaded"]
    multi = [b.name for b in chosen if b.threads != 1]
    if multi:
        notes.append("Multi-core backends (compared with one thread in *vs 1 thread*): " + ", ".join(
            f"{b.name} ({b.threads} threads)" if b.threads else f"{b.name} (library default threading)"
            for b in chosen if b.threads != 1))
    if args.quick:
        notes.append("--quick: every size shrunk about 100x; targets are not judged")
    for name, descriptions in _mode_reprs(results).items():
        notes.append(f"{name} mode: " + " / then ".join(f"`{d}`" for d in descriptions))
    notes += [f"{name} skipped: {why}" for name, why in skipped.items()]
    command = shlex.join(["python", os.path.relpath(sys.argv[0])] + sys.argv[1:])
    date = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    return {"command": command, "date": date, "machine": machine, "notes": notes}


def _mode_reprs(results):
    """How each symbolic backend described its mode (e.g. which linker ran).

    Every distinct description is kept: a library edited during a long run
    may change linker between workloads, and the report must show it.
    """
    found = {}
    for (_, backend), phases in results.items():
        desc = phases.get("warm", {}).get("mode_repr")
        if desc and desc not in found.setdefault(backend, []):
            found[backend].append(desc)
    return {name: descs for name, descs in found.items() if descs}


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(description="lucent benchmarks against NumPy, PyTensor and JAX (see benchmarks/README.md).")
    p.add_argument("--quick", action="store_true", help="sizes shrunk 100x: a smoke test")
    p.add_argument("--only", help="workloads, e.g. a,b or c.sum (default: all)")
    p.add_argument("--backends", help="comma-separated backend names (default: all)")
    p.add_argument("--pytensor-python", help="interpreter with pytensor installed")
    p.add_argument("--jax-python", help="interpreter with jax installed")
    p.add_argument("--markdown", help="write a README-ready Markdown section here")
    p.add_argument("--json", help="write every measurement here")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per subprocess")
    return p.parse_args(argv)


def run_all(cases, backends, interpreters, args, log):
    """Measure every applicable (case, backend) pair; ``{(case, backend): phases}``."""
    results = {}
    scratch = tempfile.mkdtemp(prefix="lucent-bench-")
    try:
        for case in cases:
            for backend in backends:
                if not backend.applies_to(case.group):
                    continue
                python = interpreters[backend.interpreter][0]
                log(f"  {case.key:<10} {backend.name:<22} ...")
                phases = measure(python, case, backend, args.quick, args.timeout, scratch)
                results[(case.key, backend.name)] = phases
                log(_progress(phases))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return results


def _progress(phases):
    warm, cold = phases.get("warm", {}), phases.get("cold", {})
    if warm.get("error") or cold.get("error"):
        return f"      error: {warm.get('error') or cold.get('error')}"
    agree = {True: "agrees", False: "MISMATCH", None: ""}[warm.get("agree")]
    return (f"      median {report.fmt_time(warm.get('median_s'))}, compile cold "
            f"{report.fmt_time(cold.get('compile_s'))} / warm "
            f"{report.fmt_time(warm.get('compile_s'))}, import "
            f"{report.fmt_time(warm.get('import_s'))} {agree}")


def write_outputs(args, rows, header, results):
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(report.markdown_document(rows, header) + "\n")
    if args.json:
        raw = [{"case": c, "backend": b, **phases} for (c, b), phases in results.items()]
        with open(args.json, "w") as f:
            json.dump({"header": header, "rows": [r.as_dict() for r in rows], "raw": raw},
                      f, indent=1)


def main(argv=None):
    args = parse_args(argv)
    try:
        cases = workloads.select_cases(args.only)
    except ValueError as exc:
        raise SystemExit(str(exc))
    names = backend_names(args.backends)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    interpreters = probe_interpreters(args)
    backends, skipped = available_backends(names, interpreters)
    for name, why in skipped.items():
        print(f"note: {name} skipped: {why}")
    log(f"running {len(cases)} workload(s) on {len(backends)} backend(s)")
    results = run_all(cases, backends, interpreters, args, log)
    rows = report.rows_from_results(results, args.quick) + report.skipped_rows(skipped)
    header = header_info(args, interpreters, backends, results, skipped)
    print(f"\n{header['command']}\n" + "\n".join(header["machine"] + header["notes"]) + "\n")
    print(report.text_table(rows))
    trouble = report.problems(rows)
    if trouble:
        banner = "\n" + "!" * 72 + "\n" + "\n".join(trouble) + "\n" + "!" * 72
        print(banner)
        print(banner, file=sys.stderr)
    write_outputs(args, rows, header, results)
    return 1 if trouble else 0


if __name__ == "__main__":
    sys.exit(main())
