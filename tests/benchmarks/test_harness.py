"""Smoke test of the benchmark harness: it runs, fills its table and checks results.

Only the plumbing is tested (subprocess workers, cold/warm phases, the
NumPy agreement check, the Markdown output); timings are never asserted,
since they depend on the machine and its load.
"""

import importlib
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = os.path.join(REPO, "benchmarks", "run.py")


def _run_harness(tmp_path):
    out_json, out_md = tmp_path / "bench.json", tmp_path / "bench.md"
    cmd = [sys.executable, RUN, "--quick", "--only", "a,f",
           "--backends", "numpy,lucent-FAST_COMPILE",
           "--json", str(out_json), "--markdown", str(out_md)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)
    return proc, json.loads(out_json.read_text()), out_md.read_text()


def test_quick_run_fills_the_table_and_agrees_with_numpy(tmp_path):
    proc, result, markdown = _run_harness(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MISMATCH" not in proc.stdout

    rows = {(r["workload"], r["backend"]): r for r in result["rows"]}
    expected = {(w, b) for w in ("a", "f") for b in ("numpy", "lucent-FAST_COMPILE")}
    assert expected <= set(rows)
    for key in expected:
        row = rows[key]
        assert row["error"] is None, row
        assert row["median_s"] is not None and row["median_s"] > 0
    for workload in ("a", "f"):
        lucent_row = rows[(workload, "lucent-FAST_COMPILE")]
        assert lucent_row["agree"] is True
        assert lucent_row["cold_s"] is not None and lucent_row["warm_s"] is not None
        assert lucent_row["ratio"] is not None

    assert "| workload | backend | median call |" in markdown
    assert "python benchmarks/run.py" in markdown or "run.py" in markdown
    assert "lucent-FAST_COMPILE" in proc.stdout


def _import_harness_modules(*names):
    """Import modules of benchmarks/ without leaving their generic names behind."""
    before = set(sys.modules)
    environ = dict(os.environ)  # the worker pins thread counts in the environment when imported
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    try:
        modules = [importlib.import_module(n) for n in names]
    finally:
        sys.path.pop(0)
        os.environ.clear()
        os.environ.update(environ)
        for name in set(sys.modules) - before:
            if name in ("report", "worker", "workloads"):
                del sys.modules[name]
    return modules


def test_a_disagreeing_backend_is_reported_loudly():
    import numpy as np

    report, worker = _import_harness_modules("report", "worker")
    ok, details = worker.compare({"out": np.array([1.0, 2.5])}, {"out": np.array([1.0, 2.0])},
                                 rtol=1e-6, atol=1e-9)
    assert not ok and details["out"]["allclose"] is False
    row = report.Row(workload="b", group="b", backend="lucent-FAST_RUN", median_s=1.0,
                     agree=False)
    assert any("MISMATCH" in line for line in report.problems([row]))
    assert "MISMATCH" in report.markdown_table([row])


def test_multi_core_rows_are_compared_with_one_thread():
    report, workloads = _import_harness_modules("report", "workloads")
    two = workloads.BACKENDS_BY_NAME["lucent-FAST_RUN-2t"]
    assert two.threads == 2 and two.single == "lucent-FAST_RUN" and two.applies_to("b")
    assert not two.applies_to("a")
    rows = [report.Row(workload="b", group="b", backend=name, median_s=t)
            for name, t in (("numpy", 0.5), ("lucent-FAST_RUN", 0.2), ("lucent-FAST_RUN-2t", 0.1))]
    report._add_ratios(rows)
    assert rows[2].thread_ratio == 0.5 and rows[1].thread_ratio is None
    assert report.target_text(rows[2], quick=False) == "<= 0.59x 1 thread: met"
    assert "| vs 1 thread |" in report.markdown_table(rows)
