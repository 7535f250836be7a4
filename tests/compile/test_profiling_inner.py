"""Tests of lucent/compile/profiling_inner.py: profiles see inside loops and OpFromGraph nodes.

Each test runs on both paths (``[py]``: the Python linker, ``[numba]``:
the Numba linker's profiled build) unless it says otherwise. DebugMode's
linker records the outer nodes only (it checks nodes, it does not profile
inner graphs), so the [debug] variants are skipped.
"""

import io
import re

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.builders import OpFromGraph
from lucent.compile.profile_memory import schedule_memory
from lucent.compile.profiling import flatten_rows
from lucent.compile.profiling_inner import InnerProfileStats
from lucent.raise_op import Assert
from lucent.scan import scan, until
from lucent.scan.op import Scan

pytestmark = [
    pytest.mark.both_modes,
    pytest.mark.not_debugmode(reason="DebugMode's linker profiles the outer nodes only"),
]


def _node_of(fn, op_type):
    nodes = [n for n in fn.maker.fgraph.toposort() if isinstance(n.op, op_type)]
    assert len(nodes) == 1, nodes
    return nodes[0]


def _recurrence():
    """A loop over the rows of ``xs`` carrying ``h`` through a matrix product."""
    xs, W, h0 = lt.dmatrix("xs"), lt.dmatrix("W"), lt.dvector("h0")
    hs = scan(
        lambda x, h, W: lt.tanh(W @ h + x), sequences=[xs], outputs_info=[h0], non_sequences=[W],
        return_updates=False,
    )
    return [xs, W, h0], hs


def _values(n_steps, width=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n_steps, width)), rng.normal(size=(width, width)) * 0.5, rng.normal(size=width)


def test_scan_inner_nodes_are_rows_under_the_scan(lucent_mode):
    inputs, hs = _recurrence()
    f = lucent.function(inputs, hs, mode=lucent_mode, profile=True)
    g = lucent.function(inputs, hs, mode=lucent_mode)
    n_steps, calls = 7, 3
    values = _values(n_steps)
    for _ in range(calls):
        got = f(*values)
    np.testing.assert_array_equal(got, g(*values))

    profile = f.profile
    scan_node = _node_of(f, Scan)
    child = profile.inner_profiles[scan_node]
    assert isinstance(child, InnerProfileStats) and child.parent is profile
    assert child.unit == "step" and child.owner_node is scan_node
    assert child.calls == calls and child.steps_last_call == n_steps and child.steps == calls * n_steps
    assert child.step_counts == [n_steps] * calls
    assert "7 steps" in child.steps_text()
    assert "node by node under the profiler" in child.how_measured
    assert child.node_runs and all(runs == calls * n_steps for runs in child.node_runs.values())

    rows = profile.as_rows("order")
    (scan_row,) = [r for r in rows if r["node"] is scan_node]
    inner = scan_row["children"]
    assert len(inner) == len(child.order) > 0
    assert scan_row["steps"] == n_steps and scan_row["steps_total"] == calls * n_steps
    for row in inner:
        assert row["runs"] == calls * n_steps
        assert row["depth"] == 1 and row["parent"] == scan_row["path"]
        assert row["path"] == f"{scan_row['path']}.{row['position']}"
        assert row["timed_calls"] == calls  # medians over the outer calls, not over steps
        assert row["time"] > 0
    # the loop's own time holds its inner nodes' (summed over the steps of each call)
    assert sum(r["time"] for r in inner) <= scan_row["time"]
    assert sum(r["time_median"] for r in inner) <= scan_row["time_median"] * 1.0000001
    assert all(not r["children"] for r in rows if r is not scan_row)
    flat = flatten_rows(rows)
    at = flat.index(scan_row)
    assert flat[at + 1 : at + 1 + len(inner)] == inner


def test_summary_and_html_nest_the_inner_rows(lucent_mode):
    inputs, hs = _recurrence()
    f = lucent.function(inputs, hs.sum(), mode=lucent_mode, profile=True, name="loop")
    f(*_values(5))
    scan_row = [r for r in f.profile.as_rows("order") if r["children"]][0]
    path = scan_row["path"]
    text = io.StringIO()
    f.profile.summary(file=text, sort_by="order", n=None)
    out = text.getvalue()
    for child_row in scan_row["children"]:
        # indented under the scan, numbered <scan>.<inner node>
        assert f"\n      {child_row['path']} " in out
        assert f"  {child_row['op']}" in out
    assert "Inner graphs" in out and f"node {path} " in out and "5 steps" in out
    lines = out.splitlines()
    scan_line = next(i for i, line in enumerate(lines) if re.match(rf"\s*{path}\*?\s+Scan", line))
    assert lines[scan_line + 1].lstrip().startswith(f"{path}.")

    page = f.profile._repr_html_()
    assert page.count(f'data-parent="{path}"') == len(scan_row["children"])
    assert "lucent-profile-inner" in page and "5 steps" in page

    printed = io.StringIO()
    lucent.compile.profiling.print_profiles([f.profile], file=printed, sort_by="order")
    assert f"{path}.0" in printed.getvalue()


def test_nested_scans_nest_their_profiles(lucent_mode):
    xs = lt.dmatrix("xs")

    def outer_step(row):
        inner = scan(lambda v, acc: acc + v * 2.0, sequences=[row], outputs_info=[lt.constant(0.0, dtype="float64")],
                     return_updates=False)
        return inner[-1]

    totals = scan(outer_step, sequences=[xs], return_updates=False)
    f = lucent.function([xs], totals, mode=lucent_mode, profile=True)
    g = lucent.function([xs], totals, mode=lucent_mode)
    values = np.arange(12.0).reshape(4, 3)
    for _ in range(2):
        got = f(values)
    np.testing.assert_array_equal(got, g(values))
    np.testing.assert_allclose(got, 2 * values.sum(axis=1))

    outer_child = f.profile.inner_profiles[_node_of(f, Scan)]
    assert outer_child.steps_last_call == 4
    inner_scans = [n for n in outer_child.order if isinstance(n.op, Scan)]
    assert len(inner_scans) == 1
    grandchild = outer_child.inner_profiles[inner_scans[0]]
    assert grandchild.parent is outer_child
    # one outer call: 4 outer steps, each running 3 inner steps
    assert grandchild.calls == 2 and grandchild.steps_last_call == 12 and grandchild.steps == 24
    assert all(runs == 24 for runs in grandchild.node_runs.values())
    assert outer_child.node_runs[inner_scans[0]] == 8

    rows = f.profile.as_rows("order")
    scan_row = [r for r in rows if r["children"]][0]
    inner_scan_row = [r for r in scan_row["children"] if r["children"]][0]
    assert inner_scan_row["steps"] == 12
    for row in inner_scan_row["children"]:
        assert row["depth"] == 2 and row["parent"] == inner_scan_row["path"] and row["runs"] == 24
    assert sum(r["time"] for r in inner_scan_row["children"]) <= inner_scan_row["time"]
    text = io.StringIO()
    f.profile.summary(file=text, n=None)
    assert f"{inner_scan_row['path']}.0" in text.getvalue()


def test_a_while_loop_counts_the_steps_it_ran(lucent_mode):
    a = lt.dscalar("a")

    def halve(v):
        nv = v / 2
        return nv, until(nv < 1)

    w = scan(halve, outputs_info=[a], n_steps=100, return_updates=False)
    f = lucent.function([a], w, mode=lucent_mode, profile=True)
    np.testing.assert_allclose(f(20.0), [10, 5, 2.5, 1.25, 0.625])
    child = f.profile.inner_profiles[_node_of(f, Scan)]
    assert child.steps_last_call == 5
    f(3.0)  # 1.5, 0.75
    assert child.step_counts == [5, 2] and child.steps == 7
    assert all(runs == 7 for runs in child.node_runs.values())


def test_peak_memory_counts_the_stored_outputs_and_one_step(lucent_mode):
    xs, h0 = lt.dmatrix("xs"), lt.dvector("h0")
    # every step's 200-float state is stored: 500 steps (and the initial row) keep 800 kB
    ys = scan(lambda x, h: lt.exp(x) * 0.5 + h, sequences=[xs], outputs_info=[h0], return_updates=False)
    f = lucent.function([xs, h0], ys, mode=lucent_mode, profile=True)
    n_steps, width = 500, 200
    f(np.ones((n_steps, width)), np.zeros(width))
    profile = f.profile
    scan_node = _node_of(f, Scan)
    stored = (n_steps + 1) * width * 8
    memory = profile.memory()
    assert profile.output_sizes[scan_node][0] == stored
    # the buffer is the scan's own output, or the input it writes in place: alive either way
    assert memory.peak >= stored
    step_peak = profile.inner_profiles[scan_node].memory().peak
    assert step_peak >= width * 8  # one step's row
    assert memory.inner[scan_node] == step_peak
    assert memory.live[scan_node] >= stored + step_peak
    (row,) = [r for r in profile.as_rows("order") if r["node"] is scan_node]
    assert row["inner_peak"] == step_peak and row["live_bytes"] == memory.live[scan_node]
    text = io.StringIO()
    profile.summary(file=text)
    if memory.peak_node is scan_node:
        assert "that one run of its inner graph keeps alive" in text.getvalue()


def test_schedule_memory_adds_an_inner_peak_while_its_node_runs():
    x = lt.dvector("x")
    y = lt.exp(x)
    z = y * 2.0
    from lucent.graph.fg import FunctionGraph

    fg = FunctionGraph([x], [z], clone=False)
    order = fg.toposort()
    first = y.owner
    sizes = {node: [80] * len(node.outputs) for node in order}
    plain = schedule_memory(fg, order, sizes)
    nested = schedule_memory(fg, order, sizes, inner_peaks={first: 1000})
    assert nested.live[first] == plain.live[first] + 1000
    for node in order:
        if node is not first:
            assert nested.live[node] == plain.live[node]  # only while its node runs
    assert nested.peak == plain.live[first] + 1000 and nested.peak_node is first
    assert nested.total_created == plain.total_created and nested.inner == {first: 1000}


def test_a_failing_step_leaves_the_profiles_unchanged(lucent_mode):
    xs = lt.dvector("xs")
    ys = scan(lambda x: Assert("too large")(x * 2.0, x < 10.0), sequences=[xs], return_updates=False)
    f = lucent.function([xs], ys, mode=lucent_mode, profile=True)
    f(np.arange(5.0))
    profile = f.profile
    child = profile.inner_profiles[_node_of(f, Scan)]

    def snapshot():
        return (
            profile.calls, dict(profile.node_runs), dict(profile.node_time), child.calls, child.steps,
            list(child.step_counts), dict(child.node_runs), dict(child.node_time),
            {n: list(s) for n, s in child.node_call_times.items()},
        )

    before = snapshot()
    with pytest.raises(Exception, match="too large"):
        f(np.array([1.0, 2.0, 30.0, 4.0]))  # fails at the third step
    assert snapshot() == before
    assert profile.failed_calls == 1 and child.failed_calls == 1
    f(np.arange(3.0))  # and the next call counts normally
    assert child.calls == 2 and child.step_counts == [5, 3]


def test_opfromgraph_inner_nodes_are_rows_under_it(lucent_mode):
    a, b = lt.dvector("a"), lt.dvector("b")
    op = OpFromGraph([a, b], [lt.exp(a) * b + a], inline=False)
    x = lt.dvector("x")
    out = op(x, x + 1.0).sum()
    f = lucent.function([x], out, mode=lucent_mode, profile=True)
    g = lucent.function([x], out, mode=lucent_mode)
    values = np.linspace(0, 1, 6)
    for _ in range(2):
        got = f(values)
    np.testing.assert_array_equal(got, g(values))
    ofg_nodes = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, OpFromGraph)]
    if not ofg_nodes:
        pytest.skip("this mode's rewrites inline the OpFromGraph")
    child = f.profile.inner_profiles[ofg_nodes[0]]
    assert child.unit == "call" and child.steps_last_call == 1 and child.calls == 2
    assert all(runs == 2 for runs in child.node_runs.values())
    (row,) = [r for r in f.profile.as_rows() if r["node"] is ofg_nodes[0]]
    assert row["children"] and sum(r["time"] for r in row["children"]) <= row["time"]


@pytest.mark.parametrize("lucent_mode", ["FAST_RUN"], indirect=True)
def test_numba_profile_compiles_each_inner_kernel_once(lucent_mode, monkeypatch):
    """The loop's own kernel is not built for a profile, and inner kernels compile on the first call only."""
    from lucent.link.numba import node_kernels

    built = []
    original = node_kernels.NodeKernel.__init__

    def recording_init(self, node):
        built.append(node.op)
        original(self, node)

    monkeypatch.setattr(node_kernels.NodeKernel, "__init__", recording_init)
    inputs, hs = _recurrence()
    f = lucent.function(inputs, hs, mode=lucent_mode, profile=True)
    assert not any(isinstance(op, Scan) for op in built)  # the native loop is never compiled here
    values = _values(6)
    f(*values)
    child = f.profile.inner_profiles[_node_of(f, Scan)]
    after_first = (f.profile.compile_time, child.compile_time)
    assert f.profile.compile_time >= child.compile_time
    n_built = len(built)
    for _ in range(4):
        f(*values)
    assert (f.profile.compile_time, child.compile_time) == after_first
    assert len(built) == n_built  # no kernel is made again during calls
    # a second profiled function of the same graph finds every inner kernel compiled
    again = lucent.function(inputs, hs, mode=lucent_mode, profile=True)
    again(*values)
    assert again.profile.inner_profiles[_node_of(again, Scan)].compile_time == 0.0
    assert "natively" in child.how_measured or "native" in child.how_measured
