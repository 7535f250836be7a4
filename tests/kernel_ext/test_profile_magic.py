"""``%lucent_profile NAME``: the profile of a function compiled with profiling."""

import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import lucent
import lucent.tensor as lt
from lucent.compile import ProfileStats
from lucent.kernel_ext import graph_magic
from tests.kernel_ext.test_graph_magic import graph, ip  # noqa: F401 (ip is a fixture)


@pytest.fixture
def shown(monkeypatch):
    objects = []
    monkeypatch.setattr(graph_magic, "display", objects.append)
    return objects


def _profile_view_class():
    try:
        from lucent.widgets import ProfileView
    except ImportError:
        return None
    return ProfileView


def _profiled(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE --profile", "x = dvector('x')\nexp(x).sum()\n")
    f = ip.user_ns["f"]
    f(np.ones(3))
    f(np.zeros(3))
    return f


def test_shows_the_profile_of_a_graph_cell(ip, shown):
    f = _profiled(ip)
    ip.run_line_magic("lucent_profile", "f")
    assert len(shown) == 1
    view_class = _profile_view_class()
    if view_class is None:
        assert shown[0] is f.profile
    else:
        assert isinstance(shown[0], view_class)
    assert f.profile.calls == 2


def test_shows_the_profile_of_a_function_compiled_directly(ip, shown):
    x = lt.dvector("x")
    ip.user_ns["h"] = lucent.function([x], x * 2, mode="FAST_COMPILE", profile=True)
    ip.user_ns["h"]([1.0])
    ip.run_line_magic("lucent_profile", "h")
    assert len(shown) == 1


def test_falls_back_to_the_profile_without_profile_view(ip, shown, monkeypatch):
    import lucent.widgets

    def missing(name):
        raise ImportError(f"no {name} here")

    monkeypatch.setattr(lucent.widgets, "__getattr__", missing)
    if "ProfileView" in vars(lucent.widgets):
        monkeypatch.delattr(lucent.widgets, "ProfileView")
    f = _profiled(ip)
    ip.run_line_magic("lucent_profile", "f")
    assert shown == [f.profile]
    assert isinstance(shown[0], ProfileStats)


def test_display_reaches_the_frontend(ip):
    _profiled(ip)
    with capture_output() as captured:
        result = ip.run_cell("%lucent_profile f")
    assert result.success
    assert len(captured.outputs) == 1


def _usage_error(ip, line):
    with pytest.raises(UsageError) as info:
        ip.run_line_magic("lucent_profile", line)
    return str(info.value)


def test_name_not_defined(ip):
    assert _usage_error(ip, "nope") == (
        "%lucent_profile: nope is not defined; compile it first with %%graph nope --profile"
    )


def test_name_that_is_not_a_function(ip):
    ip.user_ns["data"] = [1, 2]
    assert _usage_error(ip, "data") == (
        "%lucent_profile: data is a list, not a lucent Function (made by %%graph or lucent.function)"
    )


def test_function_compiled_without_profiling(ip):
    graph(ip, "f --no-show --mode FAST_COMPILE", "x = dvector('x')\nx + 1\n")
    assert _usage_error(ip, "f") == (
        "%lucent_profile: f was compiled without profiling; compile it with %%graph f --profile "
        "or lucent.function(..., profile=True), then call it"
    )


@pytest.mark.parametrize("line", ["", "f g"])
def test_needs_exactly_one_name(ip, line):
    assert _usage_error(ip, line).startswith(
        "%lucent_profile takes one NAME, the name of a lucent function: %lucent_profile NAME"
    )


def test_run_cell_reports_without_traceback(ip):
    with capture_output() as captured:
        result = ip.run_cell("%lucent_profile nope")
    assert isinstance(result.error_in_exec, UsageError)
    assert "Traceback" not in captured.stdout + captured.stderr
