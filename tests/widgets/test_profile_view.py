"""Tests of lucent/widgets/profile_view.py: a profile as a sortable table.

The widgets are made without a kernel; the tests read the synced traits
(what the browser renders) and compare them with the ProfileStats.
"""

import json

import numpy as np
import pytest
import traitlets

import lucent
import lucent.tensor as lt
from lucent.compile.profiling import ProfileStats

pytest.importorskip("anywidget")

from lucent.widgets import ProfileView  # noqa: E402
from lucent.widgets.profile_view import SORT_KEYS  # noqa: E402


def _profiled(mode="FAST_COMPILE", calls=2):
    x = lt.dmatrix("x")
    out = lt.exp(x).sum() + (x * 2).T.sum()
    f = lucent.function([x], out, profile=True, name="f", mode=mode)
    for _ in range(calls):
        f(np.ones((30, 40)))
    return f


@pytest.mark.parametrize("lucent_mode", ["FAST_COMPILE", "FAST_RUN"], indirect=True)
def test_rows_and_totals_match_the_profile(lucent_mode):
    f = _profiled(lucent_mode)
    profile = f.profile
    view = ProfileView(profile)
    expected = profile.as_rows("order")
    assert len(view.rows) == len(expected)
    for row, exp in zip(view.rows, expected):
        assert row["position"] == exp["position"] and row["op"] == exp["op"]
        assert row["node"] == str(exp["node"])
        assert row["output_shapes"] == [list(s) for s in exp["output_shapes"]]
        for key in ("bytes", "live_bytes", "kind", "output_kinds", "is_peak", "runs"):
            assert row[key] == exp[key], key
        for key in ("time", "time_per_call", "time_percent"):
            assert row[key] == pytest.approx(exp[key]), key
    memory = profile.memory()
    s = view.summary
    assert s["name"] == "f" and s["how_measured"] == profile.how_measured
    assert s["calls"] == 2 and s["call_time"] == pytest.approx(profile.call_time)
    assert s["time_per_call"] == pytest.approx(profile.call_time / 2)
    assert s["node_time"] == pytest.approx(profile.node_time_total)
    assert s["compile_time"] == pytest.approx(profile.compile_time)
    assert (s["peak"], s["created"], s["held_after"]) == (memory.peak, memory.total_created, memory.held_after)
    assert s["input_bytes"] == profile.input_bytes == 30 * 40 * 8
    assert s["nodes"] == len(expected)
    assert view.title == "Profile of f"
    json.dumps([view.rows, view.summary], allow_nan=False)  # strict JSON for the browser


def test_peak_row_is_flagged():
    f = _profiled()
    view = ProfileView(f)
    peaks = [r for r in view.rows if r["is_peak"]]
    (peak,) = peaks
    memory = f.profile.memory()
    assert peak["position"] == view.summary["peak_position"]
    assert f.profile.order[peak["position"]] is memory.peak_node
    assert peak["live_bytes"] == memory.peak == max(r["live_bytes"] for r in view.rows)
    assert view.summary["peak_node"] == str(memory.peak_node)


def test_sort_orders_match_the_profile():
    f = _profiled()
    view = ProfileView(f, sort_by="bytes")
    assert view.sort_by == "bytes"
    positions = lambda rows: [r["position"] for r in rows]  # noqa: E731
    assert positions(view.sorted_rows()) == positions(f.profile.as_rows("bytes"))
    view.sort_by = "time"  # typical time: the median per call
    by_median = sorted(f.profile.as_rows("order"), key=lambda r: (-r["time_median"], r["position"]))
    assert positions(view.sorted_rows()) == positions(by_median)
    view.sort_by = "order"
    assert positions(view.sorted_rows()) == list(range(len(view.rows)))
    view.sort_reversed = True
    assert positions(view.sorted_rows()) == list(range(len(view.rows)))[::-1]
    view.sort_by, view.sort_reversed = "op", False
    ops = [r["op"] for r in view.sorted_rows()]
    assert ops == sorted(ops)
    assert view.rows == sorted(view.rows, key=lambda r: r["position"])  # the trait stays in schedule order
    assert set(SORT_KEYS) >= {"order", "time", "bytes", "op", "live_bytes", "kind"}


def test_bad_sort_key():
    f = _profiled(calls=1)
    with pytest.raises(traitlets.TraitError, match=r"sort_by must be one of 'order', .*got 'speed'"):
        ProfileView(f, sort_by="speed")
    view = ProfileView(f)
    with pytest.raises(traitlets.TraitError, match="sort_by must be one of"):
        view.sort_by = "size"
    assert view.sort_by == "time"


def test_follows_the_calls_of_a_function():
    f = _profiled(calls=1)
    view = ProfileView(f, min_interval=0)
    assert view.live and view.summary["calls"] == 1
    f(np.ones((30, 40)))
    f(np.ones((30, 40)))
    assert view.summary["calls"] == 3
    assert all(r["runs"] == 3 for r in view.rows)


def test_refresh_shows_calls_that_waited():
    f = _profiled(calls=1)
    view = ProfileView(f, min_interval=3600)
    for _ in range(4):
        f(np.ones((30, 40)))
    assert view.summary["calls"] == 2  # the first call was shown at once, the rest waits
    view.refresh()
    assert view.summary["calls"] == 5
    assert view.summary["call_time"] == pytest.approx(f.profile.call_time)


def test_a_profile_is_read_again_on_refresh_only():
    f = _profiled(calls=1)
    view = ProfileView(f.profile)
    assert not view.live
    f(np.ones((30, 40)))
    assert view.summary["calls"] == 1
    view.refresh()
    assert view.summary["calls"] == 2


def test_no_calls_yet_is_not_an_error():
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x).sum(), profile=True, name="never", mode="FAST_COMPILE")
    view = ProfileView(f, min_interval=0)
    assert view.summary["calls"] == 0 and view.summary["call_time"] == 0.0
    assert all(r["time"] == 0.0 and r["runs"] == 0 for r in view.rows)
    f(np.ones(3))
    assert view.summary["calls"] == 1
    detached = ProfileView(ProfileStats(message="later"))
    assert detached.rows == [] and detached.summary["peak"] is None
    assert detached.summary["calls"] == 0


def test_function_without_profile():
    x = lt.dvector("x")
    f = lucent.function([x], x * 2, name="plain", mode="FAST_COMPILE", profile=False)
    with pytest.raises(ValueError, match=r"function 'plain' has no profile; compile it with .*profile=True"):
        ProfileView(f)


def test_bad_argument():
    with pytest.raises(TypeError, match=r"ProfileView needs a lucent ProfileStats or a Function compiled "
                                        r"with profile=True; got str"):
        ProfileView("profile")


def test_close_stops_following():
    f = _profiled(calls=1)
    view = ProfileView(f, min_interval=0)
    view.close()
    f(np.ones((30, 40)))
    assert view.summary["calls"] == 1 and not view._watch.active


def test_times_are_robust_to_one_slow_call():
    """One call a hundred times slower than the others moves the mean, not the median shown."""
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x).sum(), profile=True, name="steady", mode="FAST_COMPILE")
    f(np.ones(3))
    profile = f.profile
    node = next(iter(profile.node_call_times))
    view = ProfileView(profile)
    assert view.summary["calls"] == 1 and view.summary["calls"] < view.summary["few_calls"]  # the badge
    # Replace the measured samples by a controlled series: 9 calls of 1 ms, one of 100 ms.
    profile.node_call_times[node] = [1e-3] * 4 + [0.1] + [1e-3] * 4
    profile.node_time[node] = sum(profile.node_call_times[node])
    profile.call_times = list(profile.node_call_times[node])
    profile.calls = len(profile.call_times)
    profile.call_time = sum(profile.call_times)
    view.refresh()
    [row] = [r for r in view.rows if r["node"] == str(node)]
    assert row["time_median"] == pytest.approx(1e-3)
    assert row["time_per_call"] == pytest.approx((8e-3 + 0.1) / 9)  # the mean, pulled up 12x
    assert row["timed_calls"] == 9
    assert view.summary["call_time_median"] == pytest.approx(1e-3)
    assert view.summary["calls"] >= view.summary["few_calls"]


def test_profile_keeps_per_call_samples_and_bounds_them(monkeypatch):
    from lucent.compile import profiling

    monkeypatch.setattr(profiling, "SAMPLES_KEPT", 4)
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x), profile=True, mode="FAST_COMPILE")
    for _ in range(6):
        f(np.ones(3))
    profile = f.profile
    assert profile.calls == 6 and len(profile.call_times) == 4
    assert all(len(v) == 4 for v in profile.node_call_times.values())
    row = profile.as_rows()[0]
    assert row["timed_calls"] == 4 and row["time_median"] > 0 and row["median_percent"] == pytest.approx(100.0)


def test_beside_its_graph_coloured_by_time_with_linked_selection():
    from lucent.graph import dot as dotmod

    if not dotmod.layout_programs():
        pytest.skip("the GraphView draws with a Graphviz layout program")
    f = _profiled(calls=3)
    view = ProfileView(f)
    box = view.beside_graph()
    table, graph = box.children
    assert table is view and graph.color_by == "time" and graph.has_profile and view.compact
    assert graph.function is f
    # Every row knows its node's id in the drawing; the hottest node is filled darkest.
    ids = {row["node_id"] for row in view.rows}
    assert "" not in ids and ids <= set(graph.nodes)
    hottest = view.sorted_rows()[0]
    assert graph.nodes[hottest["node_id"]]["profile"]["time_text"]
    # Selecting a row selects its node in the drawing, and the reverse.
    view.selected = hottest["node_id"]
    assert graph.selected == hottest["node_id"]
    other = view.rows[-1]["node_id"] if view.rows[-1]["node_id"] != hottest["node_id"] else view.rows[0]["node_id"]
    graph.selected = other
    assert view.selected == other
    bytes_box = ProfileView(f.profile).beside_graph("bytes", hide_bookkeeping=True)
    assert bytes_box.children[1].color_by == "bytes"
    with pytest.raises(ValueError, match="color_by must be 'time' or 'bytes', got 'memory'"):
        view.beside_graph("memory")
    view.close()
    assert view._links == []


def _profiled_loop(mode, n_steps=6, calls=2):
    from lucent.scan import scan

    xs, h0 = lt.dmatrix("xs"), lt.dvector("h0")
    hs = scan(lambda x, h: lt.tanh(h * 0.5 + x), sequences=[xs], outputs_info=[h0], return_updates=False)
    f = lucent.function([xs, h0], hs.sum(), profile=True, name="loop", mode=mode)
    for _ in range(calls):
        f(np.ones((n_steps, 4)), np.zeros(4))
    return f


@pytest.mark.parametrize("lucent_mode", ["FAST_COMPILE", "FAST_RUN"], indirect=True)
def test_a_loop_row_nests_its_inner_rows(lucent_mode):
    f = _profiled_loop(lucent_mode)
    view = ProfileView(f, sort_by="order")
    rows = json.loads(json.dumps(view.rows))  # what the browser gets
    top = [r for r in rows if r["parent"] is None]
    assert len(top) == len(f.profile.as_rows()) == view.summary["nodes"]
    assert view.summary["inner_graphs"] == 1
    (loop,) = [r for r in top if r["has_children"]]
    inner = [r for r in rows if r["parent"] == loop["path"]]
    child = next(iter(f.profile.inner_profiles.values()))
    assert len(inner) == len(child.order) > 0
    assert loop["steps"] == 6 and loop["steps_total"] == 12 and loop["inner_unit"] == "step"
    for r in inner:
        assert r["depth"] == 1 and r["runs"] == 12 and r["path"].startswith(loop["path"] + ".")
        assert not r["has_children"] and r["node_id"] == ""
    # rows come depth first: the loop's inner rows right after it
    at = rows.index(loop)
    assert rows[at + 1 : at + 1 + len(inner)] == inner
    assert sum(r["time"] for r in inner) <= loop["time"]

    # collapsed at first: the table shows the top-level rows only
    assert view.expanded == []
    assert [r["path"] for r in view.sorted_rows()] == [r["path"] for r in top]
    view.expand()
    assert view.expanded == [loop["path"]]
    shown = view.sorted_rows()
    at = shown.index(loop)
    assert [r["path"] for r in shown[at + 1 : at + 1 + len(inner)]] == [r["path"] for r in inner]
    # sorting orders the inner rows among themselves, under their loop
    view.sort_by = "time"
    shown = view.sorted_rows()
    at = [r["path"] for r in shown].index(loop["path"])
    under = shown[at + 1 : at + 1 + len(inner)]
    assert all(r["parent"] == loop["path"] for r in under)
    assert [r["time_median"] for r in under] == sorted((r["time_median"] for r in inner), reverse=True)
    view.collapse(loop["path"])
    assert view.expanded == [] and len(view.sorted_rows()) == len(top)
    with pytest.raises(ValueError, match="No row with inner rows at path '0'"):
        view.expand("0" if loop["path"] != "0" else "1")
    view.close()


def test_expanded_rows_survive_a_refresh_and_are_set_from_the_constructor():
    f = _profiled_loop("FAST_COMPILE", calls=1)
    loop_path = [r["path"] for r in f.profile.as_rows() if r["children"]][0]
    view = ProfileView(f, expanded=[loop_path])
    n_shown = len(view.sorted_rows())
    f(np.ones((3, 4)), np.zeros(4))
    view.refresh()
    assert view.expanded == [loop_path] and len(view.sorted_rows()) == n_shown
    assert [r["steps"] for r in view.rows if r["has_children"]] == [3]
    view.close()


def test_the_script_names_the_nesting_classes():
    """Scripts and browser tests find rows by these names (documented in profile_view.py)."""
    from lucent.widgets import profile_view

    script = (profile_view._JS / "profile_view.js").read_text()
    style = (profile_view._JS / "profile_view.css").read_text()
    for name in ("lucent-pv-row", "lucent-pv-inner", "lucent-pv-has-inner", "lucent-pv-expanded",
                 "lucent-pv-toggle", "lucent-pv-steps"):
        assert f'"{name}"' in script or f'"{name}' in script, name
        assert name in profile_view.__doc__
    for name in ("lucent-pv-inner", "lucent-pv-toggle", "lucent-pv-steps"):
        assert f".{name}" in style
    assert '"change:expanded"' in script
